/* lib/pipeline/bisect.c and flaky_passes_needed: the passes that tell a
 * revision from the bad rate, and the search for the first flaky one. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "pipeline/pipeline.h"
#include "stats/stats.h"

START_TEST(passes_needed)
{
	/* (1 - p)^n <= 0.05 */
	ck_assert_int_eq(flaky_passes_needed(0.2, 0.05), 14);
	ck_assert_int_eq(flaky_passes_needed(0.1, 0.05), 29);
	ck_assert_int_eq(flaky_passes_needed(0.05, 0.05), 59);
	ck_assert_int_eq(flaky_passes_needed(0.01, 0.05), 299);
	ck_assert_int_eq(flaky_passes_needed(0.5, 0.25), 2);
	ck_assert_int_eq(flaky_passes_needed(1, 0.05), 1);
	ck_assert_int_eq(flaky_passes_needed(0, 0.05), -1);
	ck_assert_int_eq(flaky_passes_needed(0.2, 0), -1);
	ck_assert_int_eq(flaky_passes_needed(0.2, 1), -1);
}
END_TEST

/* n revisions named r0..; the test fails one run in period from first
 * on (counted over all runs, as a counter file would). Returns the
 * result and fills the bisect for the caller to check and free. */
static long
simulate(struct flaky_bisect *b, size_t n, long first, int period,
    int *counter)
{
	char	*revs[64];
	char	 buf[64][24];
	long	 i;

	for (size_t k = 0; k < n; k++) {
		snprintf(buf[k], sizeof buf[k], "r%zu", k);
		revs[k] = buf[k];
	}
	ck_assert_int_eq(flaky_bisect_init(b, revs, n, 100), 0);
	while ((i = flaky_bisect_next(b)) >= 0) {
		int	 fail = 0;

		(*counter)++;
		if (period > 0 && i >= first)
			fail = *counter % period == 0;
		flaky_bisect_count(b, (size_t)i, fail);
		ck_assert_int_lt(flaky_bisect_runs(b), 10000);
	}
	return flaky_bisect_result(b);
}

START_TEST(finds_first)
{
	struct flaky_bisect b;
	int	 counter = 0;

	/* 32 commits, good the first: 31 candidates, commit 19 is the
	 * 18th (index 17). */
	ck_assert_int_eq(simulate(&b, 31, 17, 5, &counter), 17);
	ck_assert_int_eq(b.bad_failures, 3);
	ck_assert_int_eq(b.bad_runs, 15);
	ck_assert_int_eq(b.need, 14);
	ck_assert_int_eq(b.v[30].verdict, FLAKY_BISECT_FLAKY);
	ck_assert_int_eq(b.v[17].verdict, FLAKY_BISECT_FLAKY);
	ck_assert_int_eq(b.v[16].verdict, FLAKY_BISECT_CLEAN);
	ck_assert_int_eq(b.v[16].runs, 14);
	/* a fraction of a fixed 100 runs per revision tested */
	ck_assert_int_lt(flaky_bisect_runs(&b) * 3,
	    flaky_bisect_fixed_runs(&b, 100));
	flaky_bisect_free(&b);
}
END_TEST

START_TEST(every_position)
{
	struct flaky_bisect b;
	int	 counter = 0;

	for (long first = 0; first < 20; first++) {
		ck_assert_int_eq(simulate(&b, 20, first, 4, &counter), first);
		flaky_bisect_free(&b);
	}
}
END_TEST

START_TEST(never_fails_at_bad)
{
	struct flaky_bisect b;
	int	 counter = 0;

	ck_assert_int_eq(simulate(&b, 10, 0, 0, &counter), -1);
	ck_assert_int_eq(b.v[9].runs, 100);
	ck_assert_int_eq(flaky_bisect_runs(&b), 100);
	flaky_bisect_free(&b);
}
END_TEST

START_TEST(absent)
{
	struct flaky_bisect b;
	char	*revs[] = { "a", "b", "c", "d" };
	long	 i;

	/* Not reported at bad: nothing to bisect. */
	ck_assert_int_eq(flaky_bisect_init(&b, revs, 4, 0), 0);
	ck_assert_int_eq(flaky_bisect_next(&b), 3);
	flaky_bisect_count(&b, 3, -1);
	ck_assert_int_eq(flaky_bisect_next(&b), -1);
	ck_assert_int_eq(flaky_bisect_result(&b), -2);
	flaky_bisect_free(&b);

	/* Absent before it was added: the search goes later. */
	ck_assert_int_eq(flaky_bisect_init(&b, revs, 4, 0), 0);
	ck_assert_int_eq(flaky_bisect_set_rate(&b, 1, 2), 0);
	ck_assert_int_eq(b.need, 5);
	ck_assert_int_eq((i = flaky_bisect_next(&b)), 1);
	flaky_bisect_count(&b, 1, -1);
	ck_assert_int_eq((i = flaky_bisect_next(&b)), 2);
	flaky_bisect_count(&b, 2, 1);
	ck_assert_int_eq(flaky_bisect_next(&b), -1);
	ck_assert_int_eq(flaky_bisect_result(&b), 2);
	ck_assert_int_eq(b.v[1].verdict, FLAKY_BISECT_ABSENT);
	flaky_bisect_free(&b);

	ck_assert_int_eq(flaky_bisect_init(&b, revs, 0, 0), -EINVAL);
	ck_assert_int_eq(flaky_bisect_init(&b, revs, 4, 0), 0);
	ck_assert_int_eq(flaky_bisect_set_rate(&b, 0, 10), -EINVAL);
	flaky_bisect_free(&b);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("bisect");
	TCase	*tc = tcase_create("core");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, passes_needed);
	tcase_add_test(tc, finds_first);
	tcase_add_test(tc, every_position);
	tcase_add_test(tc, never_fails_at_bad);
	tcase_add_test(tc, absent);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
