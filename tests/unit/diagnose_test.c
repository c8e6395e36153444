/* Helpers of the diagnose suites: see diagnose_test.h. */
#include "buildconf.h"

#include <stddef.h>
#include <stdint.h>

#include "parse/parse.h"
#include "diagnose_test.h"

/* Deterministic shuffles: xorshift. */
uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A run of tests 1..n in a shuffled order: test 2 fails when test 7 ran
 * before it; test 3 fails unless test 8 ran before it (it needs 8's
 * set-up); test 4 fails every third run whatever the order; test 5 fails
 * always. */
void
synthetic_run(uint64_t *seed, int run, int64_t *ids, int *out, size_t n)
{
	size_t	 pos7 = 0, pos2 = 0, pos8 = 0, pos3 = 0;

	for (size_t i = 0; i < n; i++)
		ids[i] = (int64_t)i + 1;
	for (size_t i = n - 1; i > 0; i--) {
		size_t	 j = rnd(seed) % (i + 1);
		int64_t	 t = ids[i];

		ids[i] = ids[j];
		ids[j] = t;
	}
	for (size_t i = 0; i < n; i++) {
		if (ids[i] == 7)
			pos7 = i;
		if (ids[i] == 2)
			pos2 = i;
		if (ids[i] == 8)
			pos8 = i;
		if (ids[i] == 3)
			pos3 = i;
	}
	for (size_t i = 0; i < n; i++) {
		out[i] = FLAKY_PASS;
		if (ids[i] == 2 && pos7 < pos2)
			out[i] = FLAKY_FAIL;
		if (ids[i] == 3 && pos8 > pos3)
			out[i] = FLAKY_FAIL;
		if (ids[i] == 4 && run % 3 == 0)
			out[i] = FLAKY_FAIL;
		if (ids[i] == 5)
			out[i] = FLAKY_ERROR;
	}
}
