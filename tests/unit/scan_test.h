/* Helpers of the scan suites (scan_test.c). */
#ifndef FLAKY_TEST_SCAN_TEST_H
#define FLAKY_TEST_SCAN_TEST_H

#include <stddef.h>

#include "scan/scan.h"

char		*tokens(const char *src);
const char	*invalid(const char *src, size_t len);
struct flaky_scan_result *scan(const char *src);
char		*rows(const char *src);
int		 seeded(const struct flaky_scan_result *r, const char *name);

/* For literals, NUL bytes included. */
#define INVALID(lit)	invalid((lit), sizeof(lit) - 1)

#define ck_rows(src, want) do {						\
	char *got_ = rows(src);						\
	ck_assert_str_eq(got_, want);					\
	free(got_);							\
} while (0)

#define ck_tokens(src, want) do {					\
	char *got_ = tokens(src);					\
	ck_assert_str_eq(got_, want);					\
	free(got_);							\
} while (0)

#endif
