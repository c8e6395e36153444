/* The unit tests' shared helpers (test_helper.h). */
#include "buildconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_helper.h"

char *
tu_slurp(const char *rel, size_t *len)
{
	char	 path[1024];
	FILE	*f;
	char	*buf;
	long	 n;

	snprintf(path, sizeof path, "%s/%s", FIXTURES, rel);
	ck_assert_msg((f = fopen(path, "rb")) != NULL, "open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	ck_assert_ptr_nonnull(buf = malloc((size_t)n + 1));
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

void
tu_parse_chunked(const char *s, size_t len, size_t chunk, const char *rundir,
    struct flaky_results *out)
{
	struct flaky_parser	*p;

	ck_assert_int_eq(flaky_parser_new(&p, rundir), 0);
	if (chunk == 0)
		chunk = len ? len : 1;
	for (size_t i = 0; i < len; i += chunk)
		ck_assert_int_eq(flaky_parser_feed(p, s + i,
		    len - i < chunk ? len - i : chunk), 0);
	ck_assert_int_eq(flaky_parser_finish(p, out), 0);
	flaky_parser_free(p);
}

int
tu_str_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

void
tu_tmpdir(char *dir, size_t len, const char *name)
{
	snprintf(dir, len, "/tmp/flaky-%s-XXXXXX", name);
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

void
tu_rmdir(const char *dir)
{
	char	 cmd[256];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}
