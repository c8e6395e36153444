/* What the unit tests share: fixtures, feeding parsers, temporary
 * directories, and reading a database back as text. Each function fails
 * the running check test (ck_assert) instead of returning an error. */
#ifndef FLAKY_TEST_HELPER_H
#define FLAKY_TEST_HELPER_H

#include <stddef.h>
#include <stdint.h>

#include "parse/parse.h"

/* The bytes of tests/fixtures/REL, NUL-terminated; the caller frees. */
char	*tu_slurp(const char *rel, size_t *len);
/* Parse len bytes of s fed in chunks of `chunk` bytes (0: all at once). */
void	 tu_parse_chunked(const char *s, size_t len, size_t chunk,
	    const char *rundir, struct flaky_results *out);
/* Equal strings, NULL equal only to NULL. */
int	 tu_str_eq(const char *, const char *);

/* A new directory /tmp/flaky-NAME-XXXXXX into dir (at least 64 bytes),
 * and its removal with everything in it. */
void	 tu_tmpdir(char *dir, size_t len, const char *name);
void	 tu_rmdir(const char *dir);

#endif
