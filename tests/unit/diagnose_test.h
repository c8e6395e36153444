/* Helpers of the diagnose suites (diagnose_test.c). */
#ifndef FLAKY_TEST_DIAGNOSE_TEST_H
#define FLAKY_TEST_DIAGNOSE_TEST_H

#include <stddef.h>
#include <stdint.h>

/* Deterministic shuffles: xorshift. */
uint64_t	 rnd(uint64_t *s);
/* A run of tests 1..n in a shuffled order: test 2 fails when test 7 ran
 * before it; test 3 fails unless test 8 ran before it (it needs 8's
 * set-up); test 4 fails every third run whatever the order; test 5 fails
 * always. */
void		 synthetic_run(uint64_t *seed, int run, int64_t *ids, int *out,
		    size_t n);

#endif
