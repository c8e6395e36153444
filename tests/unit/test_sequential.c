/* lib/stats/sequential.c and lib/pipeline/settle.c: the confidence
 * sequence's bounds, the runs the demo's known rates settle at, its error
 * under continuous monitoring (seeded, so the same every time), and the
 * per-test counting of analyze --until-settled. */
#include "buildconf.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/pipeline.h"
#include "stats/stats.h"

static uint64_t rng;

/* splitmix64 as a uniform in [0, 1): seeded, deterministic. */
static double
uniform(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

START_TEST(interval)
{
	double	 lo, hi, wlo, whi, lo2, hi2;

	flaky_cs_interval(0, 0, FLAKY_CS_ALPHA, &lo, &hi);
	ck_assert(lo == 0 && hi == 1);
	flaky_cs_interval(0, 50, FLAKY_CS_ALPHA, &lo, &hi);
	ck_assert(lo == 0 && hi > 0 && hi < 0.2);
	flaky_cs_interval(50, 50, FLAKY_CS_ALPHA, &lo, &hi);
	ck_assert(hi == 1 && lo > 0.8 && lo < 1);
	/* the estimate is always inside; wider than Wilson's 95% at one n
	 * (it holds at all n), and narrower with more runs */
	flaky_cs_interval(10, 40, FLAKY_CS_ALPHA, &lo, &hi);
	flaky_wilson(10, 40, FLAKY_Z95, &wlo, &whi);
	ck_assert(lo < 0.25 && hi > 0.25);
	ck_assert(lo < wlo && hi > whi);
	flaky_cs_interval(100, 400, FLAKY_CS_ALPHA, &lo2, &hi2);
	ck_assert(hi2 - lo2 < hi - lo);
	/* bad input: the whole range, nothing claimed */
	flaky_cs_interval(5, 3, FLAKY_CS_ALPHA, &lo, &hi);
	ck_assert(lo == 0 && hi == 1);
	flaky_cs_interval(1, 3, 0, &lo, &hi);
	ck_assert(lo == 0 && hi == 1);
}
END_TEST

START_TEST(settles)
{
	/* the demo's tests (examples/demo-settled): the run at which each
	 * settles, and not one run before */
	ck_assert(flaky_cs_settled(11, 22, FLAKY_CS_ALPHA, NULL, NULL));
	ck_assert(!flaky_cs_settled(10, 21, FLAKY_CS_ALPHA, NULL, NULL));
	ck_assert(flaky_cs_settled(3, 3, FLAKY_CS_ALPHA, NULL, NULL));
	ck_assert(!flaky_cs_settled(2, 2, FLAKY_CS_ALPHA, NULL, NULL));
	ck_assert(flaky_cs_settled(30, 300, FLAKY_CS_ALPHA, NULL, NULL));
	ck_assert(!flaky_cs_settled(29, 290, FLAKY_CS_ALPHA, NULL, NULL));
	ck_assert_int_eq(flaky_cs_band(30, 300), FLAKY_TIER_WARNING);
	ck_assert_int_eq(flaky_cs_band(3, 3), FLAKY_TIER_CRITICAL);
	ck_assert_int_eq(flaky_cs_band(1, 100), FLAKY_TIER_NOISE);
	/* a rate on a band's edge never settles */
	ck_assert(!flaky_cs_settled(1000, 20000, FLAKY_CS_ALPHA, NULL, NULL));
}
END_TEST

/* Of tests sequences at rate p watched for n runs each, the share whose
 * rate ever left the interval (cs) or Wilson's 95% interval after run 10. */
static double
ever_outside(double p, int tests, int n, int cs)
{
	int	 out = 0;

	for (int t = 0; t < tests; t++) {
		int64_t	 k = 0;

		for (int i = 1; i <= n; i++) {
			double	 lo, hi;

			k += uniform() < p;
			if (i < 10)
				continue;
			if (cs)
				flaky_cs_interval(k, i, FLAKY_CS_ALPHA, &lo,
				    &hi);
			else
				flaky_wilson(k, i, FLAKY_Z95, &lo, &hi);
			if (p < lo || p > hi) {
				out++;
				break;
			}
		}
	}
	return (double)out / tests;
}

START_TEST(monitoring)
{
	/* Looking after every run: the confidence sequence keeps its 5%
	 * (seeded; about 1% here), a fixed-n 95% interval does not (the
	 * reason for the sequence). */
	rng = 18;
	ck_assert_double_le(ever_outside(0.1, 1000, 300, 1), FLAKY_CS_ALPHA);
	rng = 18;
	ck_assert_double_gt(ever_outside(0.1, 1000, 300, 0), 0.15);
}
END_TEST

/* A run of these tests with these outcomes. */
static void
one_run(struct flaky_settle *s, const char **names, const int *outcome,
    size_t n)
{
	struct flaky_result	 v[8];
	struct flaky_results	 r;

	memset(&r, 0, sizeof r);
	memset(v, 0, sizeof v);
	for (size_t i = 0; i < n; i++) {
		v[i].test = (char *)names[i];
		v[i].outcome = outcome[i];
		v[i].duration_us = -1;
	}
	r.v = v;
	r.n = n;
	ck_assert_int_eq(flaky_settle_count(s, &r), 0);
}

START_TEST(settle_counts)
{
	struct flaky_settle s;
	const char *names[] = { "steady", "half", "always", "skipped" };
	int	 out[4];
	int	 n;

	flaky_settle_init(&s, 0);
	ck_assert_double_eq(s.alpha, FLAKY_CS_ALPHA);
	ck_assert(!flaky_settle_done(&s, 1));
	for (n = 1; n <= 40 && !flaky_settle_done(&s,
	    FLAKY_SETTLE_MIN_RUNS); n++) {
		out[0] = FLAKY_PASS;
		out[1] = n % 2 == 0 ? FLAKY_FAIL : FLAKY_PASS;
		out[2] = FLAKY_ERROR;
		out[3] = FLAKY_SKIP;
		one_run(&s, names, out, 4);
		if (n == 5) {
			/* half open, always settled, steady not failing */
			ck_assert_uint_eq(s.open, 1);
			ck_assert(flaky_settle_is_open(&s.t[1]));
			ck_assert(!flaky_settle_is_open(&s.t[2]));
			ck_assert(!flaky_settle_is_open(&s.t[0]));
		}
	}
	/* stopped by "half" at 22 runs (flaky_cs_settled above) */
	ck_assert_int_eq(s.runs, 22);
	ck_assert_uint_eq(s.nt, 3);	/* a skip is no outcome */
	ck_assert_int_eq(s.t[1].failures, 11);
	ck_assert(s.t[1].settled && s.t[1].lo > FLAKY_TIER_CRITICAL_ABOVE);
	flaky_settle_free(&s);
	flaky_settle_free(NULL);
}
END_TEST

START_TEST(settle_many)
{
	struct flaky_settle s;
	char	 name[32];
	const char *names[1] = { name }, *p[1] = { "p" };
	int	 fail[1] = { FLAKY_FAIL }, pass[1] = { FLAKY_PASS };

	/* the table grows past its first sizes and finds every test again */
	flaky_settle_init(&s, 0.01);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 1000; i++) {
			snprintf(name, sizeof name, "t%d", i);
			one_run(&s, names, fail, 1);
		}
	ck_assert_uint_eq(s.nt, 1000);
	for (size_t i = 0; i < s.nt; i++)
		ck_assert_int_eq(s.t[i].runs, 2);
	ck_assert_uint_eq(s.open, 1000);
	/* the minimum holds even when nothing is open */
	flaky_settle_free(&s);
	flaky_settle_init(&s, 0);
	/* runs without a recognized test settle nothing */
	for (int i = 0; i < FLAKY_SETTLE_MIN_RUNS; i++)
		ck_assert_int_eq(flaky_settle_count(&s, NULL), 0);
	ck_assert(!flaky_settle_done(&s, FLAKY_SETTLE_MIN_RUNS));
	flaky_settle_free(&s);
	flaky_settle_init(&s, 0);
	one_run(&s, p, pass, 1);
	ck_assert(!flaky_settle_done(&s, FLAKY_SETTLE_MIN_RUNS));
	ck_assert(flaky_settle_done(&s, 1));
	flaky_settle_free(&s);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("sequential");
	TCase	*tc = tcase_create("sequential");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, interval);
	tcase_add_test(tc, settles);
	tcase_add_test(tc, monitoring);
	tcase_add_test(tc, settle_counts);
	tcase_add_test(tc, settle_many);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
