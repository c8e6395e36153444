/* libFuzzer harness for pyscan: the tokenizer and the scan over arbitrary
 * bytes must not crash, hang, leak or trip a sanitizer, and what they
 * return must hold together (sorted findings, lines inside the file,
 * strings never NULL). Build and run: bench/fuzz-pyscan.sh. */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "util/util.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* An invariant: abort() so libFuzzer keeps the input. */
static void
check(int cond)
{
	if (!cond)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flaky_scan_result *r = NULL;
	struct flaky_buf	 b;
	char			 err[256];
	int			 rc, trc, lines = 1;

	for (size_t i = 0; i < size; i++)
		if (data[i] == '\n' || (data[i] == '\r' &&
		    (i + 1 >= size || data[i + 1] != '\n')))
			lines++;

	rc = flaky_pyscan_buffer((const char *)data, size, &r, err, sizeof err);
	check(rc == 0 || rc == -ENOMEM);
	if (rc == 0) {
		check(r != NULL);
		if (r->skipped) {
			check(r->nfindings == 0 && r->ntests == 0);
			check(strncmp(r->reason, "line ", 5) == 0);
		}
		for (size_t i = 0; i < r->nfindings; i++) {
			const struct flaky_finding *f = &r->findings[i];

			check(f->line >= 1 && f->line <= lines);
			check(flaky_finding_category_name(f->category) != NULL);
			check(f->classes && f->function && f->test &&
			    f->tolerance && f->source);
			check(strlen(f->source) <= 240);
			check(f->test_index < (int)r->ntests);
			check(i == 0 || f->line >= r->findings[i - 1].line);
		}
		for (size_t i = 0; i < r->ntests; i++)
			check(r->tests[i].line >= 1 && r->tests[i].line <= lines &&
			    strncmp(r->tests[i].name, "test", 4) == 0);
	}

	/* The token dump agrees with the scan about validity. */
	flaky_buf_init(&b);
	trc = flaky_pyscan_tokens((const char *)data, size, &b, err,
	    sizeof err);
	check(trc == 0 || trc == -EINVAL || trc == -ENOMEM);
	if (rc == 0 && trc == -EINVAL)
		check(r->skipped);
	flaky_buf_free(&b);
	flaky_scan_result_free(r);
	return 0;
}
