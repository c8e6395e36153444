/* Helpers of the scan suites (test_scan_*.c): the token dump, why a source
 * is invalid, a scan that must succeed, its findings as rows, a test's
 * seeded flag. They fail the running test on an unexpected error. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "scan_test.h"
#include "util/util.h"

/* The token dump of src, as a string the test frees. */
char *
tokens(const char *src)
{
	struct flaky_buf b;
	char		 err[256];

	flaky_buf_init(&b);
	ck_assert_msg(flaky_pyscan_tokens(src, strlen(src), &b, err,
	    sizeof err) == 0, "tokens failed: %s", err);
	flaky_buf_cstr(&b);
	return flaky_buf_steal(&b);
}

/* Why src is not valid Python, or "" when it is. */
const char *
invalid(const char *src, size_t len)
{
	static char	 err[256];
	struct flaky_buf b;
	int		 rc;

	flaky_buf_init(&b);
	err[0] = '\0';
	rc = flaky_pyscan_tokens(src, len, &b, err, sizeof err);
	flaky_buf_free(&b);
	if (rc == 0) {
		struct flaky_scan_result *r;

		/* The tokens may be fine and the structure not. */
		ck_assert_int_eq(flaky_pyscan_buffer(src, len, &r, err,
		    sizeof err), 0);
		snprintf(err, sizeof err, "%s", r->skipped ? r->reason : "");
		flaky_scan_result_free(r);
		return err;
	}
	ck_assert_int_eq(rc, -EINVAL);
	return err;
}

/* The scan of src, which must be valid Python. */
struct flaky_scan_result *
scan(const char *src)
{
	struct flaky_scan_result *r;
	char		 err[256];

	ck_assert_int_eq(flaky_pyscan_buffer(src, strlen(src), &r, err,
	    sizeof err), 0);
	ck_assert_msg(!r->skipped, "skipped: %s", r->reason);
	return r;
}

/* The findings as "line category class function test" lines. */
char *
rows(const char *src)
{
	struct flaky_scan_result *r = scan(src);
	struct flaky_buf b;

	flaky_buf_init(&b);
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct flaky_finding *f = &r->findings[i];

		flaky_buf_printf(&b, "%d %s %s %s %s\n", f->line,
		    flaky_finding_category_name(f->category),
		    *f->classes ? f->classes : "-",
		    *f->function ? f->function : "-",
		    *f->test ? f->test : "-");
	}
	flaky_scan_result_free(r);
	flaky_buf_cstr(&b);
	return flaky_buf_steal(&b);
}

/* The seeded flag of the test named name. */
int
seeded(const struct flaky_scan_result *r, const char *name)
{
	for (size_t i = 0; i < r->ntests; i++)
		if (strcmp(r->tests[i].name, name) == 0)
			return r->tests[i].seeded;
	ck_abort_msg("no test %s", name);
	return -1;
}
