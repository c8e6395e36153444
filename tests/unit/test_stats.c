/* stats: Wilson intervals against values computed independently (the
 * (k + z^2/2 +- z sqrt(k(n-k)/n + z^2/4)) / (n + z^2) form, in Python, 17
 * digits), the tier edges and runs_needed; Fisher's one-sided test against
 * exact hypergeometric sums, Mann-Whitney against scipy's values. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "stats/stats.h"
#include "util/util.h"

START_TEST(wilson)
{
	/* /usr/bin/python3, math.sqrt, z = 1.959963984540054 */
	static const struct { int64_t k, n; double lo, hi; } v[] = {
		{ 0, 1, 0, 0.79345068562276255 },
		{ 1, 1, 0.20654931437723742, 1 },
		{ 0, 10, 0, 0.2775327998628892 },
		{ 10, 10, 0.72246720013711074, 1 },
		{ 3, 10, 0.10779126740630103, 0.60322185253885463 },
		{ 1, 20, 0.0088814488007953971, 0.23613119344674205 },
		{ 12, 50, 0.14297391396991729, 0.37412683757942922 },
		{ 0, 1000, 0, 0.0038267584855551234 },
		{ 1000, 1000, 0.99617324151444486, 1 },
		{ 1, 1000, 0.00017654637062607795, 0.0056425585979579355 },
		{ 500, 1000, 0.46906960036810413, 0.53093039963189581 },
		{ 50, 1000, 0.038130262392748811, 0.065313820244250809 },
	};
	double	 lo, hi;

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(v); i++) {
		flaky_wilson(v[i].k, v[i].n, FLAKY_Z95, &lo, &hi);
		ck_assert_msg(fabs(lo - v[i].lo) < 1e-12 &&
		    fabs(hi - v[i].hi) < 1e-12,
		    "%lld/%lld: [%.17g, %.17g], expected [%.17g, %.17g]",
		    (long long)v[i].k, (long long)v[i].n, lo, hi, v[i].lo,
		    v[i].hi);
		/* exact at the ends, never outside [0, 1] */
		if (v[i].k == 0)
			ck_assert(lo == 0.0);
		if (v[i].k == v[i].n)
			ck_assert(hi == 1.0);
		ck_assert(lo >= 0.0 && hi <= 1.0 && lo <= hi);
	}
	flaky_wilson(0, 0, FLAKY_Z95, &lo, &hi);
	ck_assert(lo == 0.0 && hi == 1.0);
}
END_TEST

START_TEST(tiers)
{
	/* issue 28: no counted run is no evidence, never stable */
	ck_assert_int_eq(flaky_tier(0, 0), FLAKY_TIER_NONE);
	ck_assert_int_eq(flaky_tier_skips(0, 0, 0), FLAKY_TIER_NONE);
	ck_assert_int_eq(flaky_tier_skips(0, 0, 3), FLAKY_TIER_SKIPPED);
	ck_assert_int_eq(flaky_tier_skips(0, 5, 3), FLAKY_TIER_STABLE);
	ck_assert_int_eq(flaky_tier_skips(2, 5, 3), FLAKY_TIER_CRITICAL);
	ck_assert_str_eq(flaky_tier_name(FLAKY_TIER_SKIPPED), "skipped");
	ck_assert_str_eq(flaky_tier_name(FLAKY_TIER_NONE), "no evidence");
	ck_assert_int_eq(flaky_tier_from_name("no evidence"),
	    FLAKY_TIER_NONE);
	ck_assert_int_eq(flaky_tier(0, 50), FLAKY_TIER_STABLE);
	ck_assert_int_eq(flaky_tier(1, 1000), FLAKY_TIER_NOISE);
	ck_assert_int_eq(flaky_tier(499, 10000), FLAKY_TIER_NOISE);
	ck_assert_int_eq(flaky_tier(1, 20), FLAKY_TIER_WARNING);	/* 5% */
	ck_assert_int_eq(flaky_tier(5, 100), FLAKY_TIER_WARNING);
	ck_assert_int_eq(flaky_tier(50, 1000), FLAKY_TIER_WARNING);
	ck_assert_int_eq(flaky_tier(1, 5), FLAKY_TIER_WARNING);	/* 20% */
	ck_assert_int_eq(flaky_tier(20, 100), FLAKY_TIER_WARNING);
	ck_assert_int_eq(flaky_tier(200, 1000), FLAKY_TIER_WARNING);
	ck_assert_int_eq(flaky_tier(201, 1000), FLAKY_TIER_CRITICAL);
	ck_assert_int_eq(flaky_tier(99, 100), FLAKY_TIER_CRITICAL);
	ck_assert_int_eq(flaky_tier(1, 1), FLAKY_TIER_BROKEN);
	ck_assert_int_eq(flaky_tier(50, 50), FLAKY_TIER_BROKEN);
	ck_assert_str_eq(flaky_tier_name(FLAKY_TIER_CRITICAL), "critical");
	ck_assert_str_eq(flaky_tier_name(FLAKY_TIER_BROKEN), "broken");
	ck_assert_str_eq(flaky_tier_name(FLAKY_TIER_STABLE), "stable");
	ck_assert_str_eq(flaky_tier_name(99), "unknown");
	ck_assert_int_eq(flaky_tier_from_name("warning"), FLAKY_TIER_WARNING);
	ck_assert_int_eq(flaky_tier_from_name("noise"), FLAKY_TIER_NOISE);
	ck_assert_int_eq(flaky_tier_from_name("bogus"), -EINVAL);
}
END_TEST

START_TEST(runs_needed)
{
	/* Recomputed in Python by a linear search for the first n at which
	 * the interval of rate k/n lies inside k/n's band. */
	static const struct { int64_t k, n, need; } v[] = {
		{ 0, 10, 63 }, { 0, 100, 0 }, { 1, 10, 63 }, { 12, 50, 335 },
		{ 3, 10, 52 }, { 10, 10, 0 }, { 1, 100, 15 }, { 10, 100, 0 },
		{ 30, 100, 0 },
		/* on an edge (5%, 20%): the interval never fits */
		{ 1, 20, -1 }, { 1, 5, -1 }, { 50, 1000, -1 }, { 5, 100, -1 },
	};

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(v); i++)
		ck_assert_msg(flaky_runs_needed(v[i].k, v[i].n) == v[i].need,
		    "%lld/%lld: %lld, expected %lld", (long long)v[i].k,
		    (long long)v[i].n,
		    (long long)flaky_runs_needed(v[i].k, v[i].n),
		    (long long)v[i].need);
	ck_assert_int_eq(flaky_runs_needed(0, 0), -1);
}
END_TEST

START_TEST(fisher)
{
	/* 15 of 15 with it before, 0 of 15 without: 1 / C(30, 15) */
	ck_assert_double_eq_tol(flaky_fisher_greater(15, 15, 15, 30),
	    1.0 / 155117520.0, 1e-15);
	ck_assert_double_eq_tol(flaky_fisher_greater(1, 1, 1, 2), 0.5, 1e-12);
	/* P(X >= 2), X ~ Hypergeometric(N=10, K=4, n=5): 1 - (6+60)/252 */
	ck_assert_double_eq_tol(flaky_fisher_greater(2, 5, 4, 10),
	    1.0 - 66.0 / 252.0, 1e-12);
	ck_assert_double_eq(flaky_fisher_greater(0, 5, 4, 10), 1.0);
}
END_TEST

START_TEST(mann_whitney)
{
	int64_t	 a[] = { 1, 2, 3, 4, 5 }, b[] = { 6, 7, 8, 9, 10 };
	int64_t	 c[] = { 10, 20, 20, 30, 50, 50 };
	int64_t	 d[] = { 20, 30, 30, 40, 60, 70, 70 };
	int64_t	 odd[] = { 1, 3, 5, 7, 9, 11 }, even[] = { 2, 4, 6, 8, 10, 12 };
	int64_t	 same[] = { 5, 5, 5, 5, 5 }, fast[14], slow[26];
	double	 u;

	/* the values of scipy.stats.mannwhitneyu(a, b, method="asymptotic",
	 * use_continuity=True), two-sided */
	ck_assert_double_eq_tol(flaky_mann_whitney(a, 5, b, 5, &u),
	    0.012185780355344813, 1e-12);
	ck_assert_double_eq(u, 0);
	ck_assert_double_eq_tol(flaky_mann_whitney(b, 5, a, 5, &u),
	    0.012185780355344813, 1e-12);
	ck_assert_double_eq(u, 25);
	/* ties across the samples: mean ranks, corrected variance */
	ck_assert_double_eq_tol(flaky_mann_whitney(c, 6, d, 7, &u),
	    0.16876651651290842, 1e-12);
	ck_assert_double_eq(u, 11);
	ck_assert_double_eq_tol(flaky_mann_whitney(odd, 6, even, 6, &u),
	    0.6889205558044607, 1e-12);
	ck_assert_double_eq(u, 15);
	/* two values, each tied within its sample */
	for (size_t i = 0; i < 14; i++)
		fast[i] = 2000;
	for (size_t i = 0; i < 26; i++)
		slow[i] = 100000;
	ck_assert_double_eq_tol(flaky_mann_whitney(fast, 14, slow, 26, &u),
	    4.729053956741775e-10, 1e-20);
	/* every value ties, or a sample is empty: no evidence */
	ck_assert_double_eq(flaky_mann_whitney(same, 5, same, 5, &u), 1.0);
	ck_assert_double_eq(u, 12.5);
	ck_assert_double_eq(flaky_mann_whitney(a, 5, b, 0, &u), 1.0);
	ck_assert(isnan(u));
	ck_assert_double_eq(flaky_mann_whitney(NULL, 0, b, 5, NULL), 1.0);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("stats");
	TCase	*tc = tcase_create("stats");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, wilson);
	tcase_add_test(tc, tiers);
	tcase_add_test(tc, runs_needed);
	tcase_add_test(tc, fisher);
	tcase_add_test(tc, mann_whitney);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
