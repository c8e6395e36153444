/* diagnose, the smallest polluter: ddmin against fake oracles whose
 * victim fails when certain tests all ran before it. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diagnose.h"

/* A victim that fails when every one of need[] ran before it (any: when
 * one of them did), asked about subsets in the stored order. */
struct fake {
	size_t		 need[4];
	size_t		 nneed;
	int		 any;
	int		 error_at;	/* the call that fails (0: none) */
	size_t		 calls;
};

static int
fake_oracle(const size_t *idx, size_t n, void *arg)
{
	struct fake	*f = arg;
	size_t		 have = 0;

	f->calls++;
	if (f->error_at != 0 && f->calls == (size_t)f->error_at)
		return -EIO;
	for (size_t i = 1; i < n; i++)
		ck_assert_msg(idx[i - 1] < idx[i], "a subset out of order");
	for (size_t j = 0; j < f->nneed; j++)
		for (size_t i = 0; i < n; i++)
			if (idx[i] == f->need[j]) {
				have++;
				break;
			}
	return f->any ? have > 0 : have == f->nneed;
}

/* ddmin finds exactly need[] among ncand within max_calls calls. */
static size_t
check_finds(size_t ncand, const size_t *need, size_t nneed, size_t bound)
{
	struct fake	 f = { .nneed = nneed };
	struct flaky_minimize m;

	memcpy(f.need, need, nneed * sizeof *need);
	ck_assert_int_eq(flaky_minimize(ncand, 100, fake_oracle, &f, &m), 0);
	ck_assert_uint_eq(m.n, nneed);
	for (size_t i = 0; i < nneed; i++)
		ck_assert_uint_eq(m.set[i], need[i]);
	ck_assert_int_eq(m.minimal, 1);
	ck_assert_uint_eq(m.calls, f.calls);
	ck_assert_msg(m.calls <= bound, "%zu calls for %zu of %zu (bound %zu)",
	    m.calls, nneed, ncand, bound);
	flaky_minimize_free(&m);
	return f.calls;
}

START_TEST(minimize_sets)
{
	static const size_t one[] = { 17 }, two[] = { 3, 31 },
	    three[] = { 0, 20, 39 }, first[] = { 0 }, last[] = { 39 };
	size_t	 c1, c2, c3;

	/* one polluter among 40: about 2 log2(40) calls (9 to 13 measured) */
	c1 = check_finds(40, one, 1, 14);
	check_finds(40, first, 1, 14);
	check_finds(40, last, 1, 14);
	/* two tests both needed, far apart (36); three spread out (64) */
	c2 = check_finds(40, two, 2, 40);
	c3 = check_finds(40, three, 3, 70);
	printf("ddmin over 40: %zu calls for 1, %zu for 2, %zu for 3\n",
	    c1, c2, c3);
	/* one candidate: only the whole set is asked */
	ck_assert_uint_eq(check_finds(1, first, 1, 1), 1);
}
END_TEST

START_TEST(minimize_either)
{
	/* Either of two pollutes: one of them is 1-minimal. */
	struct fake	 f = { .need = { 5, 30 }, .nneed = 2, .any = 1 };
	struct flaky_minimize m;

	ck_assert_int_eq(flaky_minimize(40, 100, fake_oracle, &f, &m), 0);
	ck_assert_uint_eq(m.n, 1);
	ck_assert(m.set[0] == 5 || m.set[0] == 30);
	flaky_minimize_free(&m);
}
END_TEST

START_TEST(minimize_errors)
{
	struct fake	 f = { .need = { 40 }, .nneed = 1 };	/* never */
	struct fake	 g = { .need = { 3, 31 }, .nneed = 2 };
	struct fake	 h = { .need = { 7 }, .nneed = 1, .error_at = 3 };
	struct flaky_minimize m;

	/* the whole prefix passes: nothing to narrow, one call */
	ck_assert_int_eq(flaky_minimize(40, 100, fake_oracle, &f, &m),
	    -ENOENT);
	ck_assert_uint_eq(m.calls, 1);
	ck_assert_ptr_null(m.set);
	ck_assert_int_eq(flaky_minimize(0, 100, fake_oracle, &f, &m),
	    -ENOENT);
	/* a spent budget leaves a failing superset, not minimal */
	ck_assert_int_eq(flaky_minimize(40, 12, fake_oracle, &g, &m), -E2BIG);
	ck_assert_uint_eq(m.calls, 12);
	ck_assert_int_eq(m.minimal, 0);
	ck_assert_uint_ge(m.n, 2);
	ck_assert_uint_lt(m.n, 40);
	{
		int	 has3 = 0, has31 = 0;

		for (size_t i = 0; i < m.n; i++) {
			has3 |= m.set[i] == 3;
			has31 |= m.set[i] == 31;
		}
		ck_assert(has3 && has31);
	}
	flaky_minimize_free(&m);
	/* no budget at all: nothing known */
	ck_assert_int_eq(flaky_minimize(40, 0, fake_oracle, &g, &m), -E2BIG);
	ck_assert_ptr_null(m.set);
	/* the oracle's error ends it */
	ck_assert_int_eq(flaky_minimize(40, 100, fake_oracle, &h, &m), -EIO);
	ck_assert_ptr_null(m.set);
	flaky_minimize_free(&m);
}
END_TEST

static Suite *
suite(void)
{
	Suite	*s = suite_create("diagnose_minimize");
	TCase	*tc = tcase_create("diagnose_minimize");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, minimize_sets);
	tcase_add_test(tc, minimize_either);
	tcase_add_test(tc, minimize_errors);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
