/* diagnose, order dependence both ways (a polluter, a set-up test) on
 * synthetic runs in memory, with the memory of the accumulator bounded. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classify/classify.h"
#include "diagnose/diagnose.h"
#include "parse/parse.h"
#include "store/store.h"
#include "util/util.h"
#include "diagnose_test.h"

START_TEST(order_memory)
{
	struct flaky_order_acc *a;
	struct flaky_order_evidence e;
	struct flaky_run_order o;
	int64_t	 victims[] = { 2, 4, 5, 9, 3 }, ids[12];
	int	 out[12];
	uint64_t seed = 12345;
	int64_t	 k7 = 0, n7 = 0, k8 = 0;

	ck_assert_int_eq(flaky_order_new(victims, 5, &a), 0);
	for (int run = 0; run < 40; run++) {
		synthetic_run(&seed, run, ids, out, 12);
		o.run_id = run + 1;
		o.n = 12;
		o.test_ids = ids;
		o.outcomes = out;
		for (size_t i = 0; i < 12; i++) {
			if (ids[i] == 2) {
				n7 += 1;
				k7 += out[i] == FLAKY_FAIL;
			}
			if (ids[i] == 3)
				k8 += out[i] == FLAKY_FAIL;
		}
		ck_assert_int_eq(flaky_order_add_run(a, &o), 0);
	}
	ck_assert_int_eq(n7, 40);
	/* the shuffles of seed 12345 (xorshift), fixed from here on */
	ck_assert_int_eq(k7, 18);
	ck_assert_int_eq(k8, 18);
	ck_assert_int_eq(flaky_order_result(a, 0, &e), 1);
	ck_assert_int_eq(e.polluter_id, 7);
	ck_assert_int_eq(e.provider_id, 0);
	ck_assert_int_eq(e.k_before, 18);
	ck_assert_int_eq(e.n_before, 18);
	ck_assert_int_eq(e.k_without, 0);
	ck_assert_int_eq(e.n_without, 22);
	ck_assert_uint_eq(e.candidates, 11);
	/* 18 of 18 with it before: 1 / C(40, 18) */
	ck_assert_double_eq_tol(e.p, 1.0 / 113380261800.0, 1e-22);
	ck_assert_double_lt(e.p * 2 * 11, FLAKY_ORDER_ALPHA);
	/* the other way round: 3 fails in the 18 runs where 8 did not run
	 * before it, none of the 22 where it did */
	ck_assert_int_eq(flaky_order_result(a, 4, &e), 1);
	ck_assert_int_eq(e.provider_id, 8);
	ck_assert_int_eq(e.polluter_id, 0);
	ck_assert_int_eq(e.k_without, 18);
	ck_assert_int_eq(e.n_without, 18);
	ck_assert_int_eq(e.k_before, 0);
	ck_assert_int_eq(e.n_before, 22);
	ck_assert_uint_eq(e.candidates, 11);
	ck_assert_double_eq_tol(e.p, 1.0 / 113380261800.0, 1e-22);
	/* failing on a schedule, always, never: nothing named either way */
	ck_assert_int_eq(flaky_order_result(a, 1, &e), 0);
	ck_assert_int_eq(e.polluter_id, 0);
	ck_assert_int_eq(e.provider_id, 0);
	ck_assert_uint_eq(e.candidates, 11);
	ck_assert_double_gt(e.p * 2 * 11, FLAKY_ORDER_ALPHA);
	ck_assert_int_eq(flaky_order_result(a, 2, &e), 0);
	ck_assert_int_eq(e.provider_id, 0);
	ck_assert_int_eq(flaky_order_result(a, 3, &e), 0);
	ck_assert_int_eq(e.provider_id, 0);
	ck_assert_int_eq(flaky_order_result(a, 5, &e), 0);
	flaky_order_free(a);
	flaky_order_free(NULL);
}
END_TEST

/* Two tests, 1 before 2 in the first `before` runs and after it in the
 * rest, where 2 fails: both directions count in the Bonferroni. */
static struct flaky_order_acc *
two_tests(int runs, int before)
{
	struct flaky_order_acc *a;
	struct flaky_run_order o;
	int64_t	 victim = 2, ids[2];
	int	 out[2];

	ck_assert_int_eq(flaky_order_new(&victim, 1, &a), 0);
	o.n = 2;
	o.test_ids = ids;
	o.outcomes = out;
	for (int run = 0; run < runs; run++) {
		int	 first = run < before;

		o.run_id = run + 1;
		ids[0] = first ? 1 : 2;
		ids[1] = first ? 2 : 1;
		out[0] = out[1] = FLAKY_PASS;
		if (!first)
			out[0] = FLAKY_FAIL;	/* 2 ran without 1 before */
		ck_assert_int_eq(flaky_order_add_run(a, &o), 0);
	}
	return a;
}

START_TEST(order_both_ways)
{
	struct flaky_order_acc *a;
	struct flaky_order_evidence e;

	/* 6 of 6 without 1 before, 0 of 11 with: p = 1 / C(17, 6) =
	 * 8.1e-5, under 1e-4 alone but not twice (both directions) */
	a = two_tests(17, 11);
	ck_assert_int_eq(flaky_order_result(a, 0, &e), 0);
	ck_assert_int_eq(e.provider_id, 0);
	ck_assert_uint_eq(e.candidates, 1);
	ck_assert_double_eq_tol(e.p, 1.0 / 12376.0, 1e-15);
	ck_assert_int_eq(e.k_without, 6);
	ck_assert_int_eq(e.n_without, 6);
	ck_assert_int_eq(e.k_before, 0);
	ck_assert_int_eq(e.n_before, 11);
	flaky_order_free(a);
	/* 6 of 6 against 0 of 13: 1 / C(19, 6) = 3.7e-5, twice 7.4e-5 */
	a = two_tests(19, 13);
	ck_assert_int_eq(flaky_order_result(a, 0, &e), 1);
	ck_assert_int_eq(e.provider_id, 1);
	ck_assert_int_eq(e.polluter_id, 0);
	ck_assert_double_eq_tol(e.p, 1.0 / 27132.0, 1e-15);
	flaky_order_free(a);
	/* 2 failures only, however clean: under FLAKY_ORDER_MIN_FAILS */
	a = two_tests(30, 28);
	ck_assert_int_eq(flaky_order_result(a, 0, &e), 0);
	ck_assert_int_eq(e.provider_id, 0);
	ck_assert_double_eq(e.p, 1.0);
	flaky_order_free(a);
}
END_TEST
static Suite *
suite(void)
{
	Suite	*s = suite_create("diagnose_order");
	TCase	*tc = tcase_create("diagnose_order");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, order_memory);
	tcase_add_test(tc, order_both_ways);
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
