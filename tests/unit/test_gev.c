/* stats/gev.c: the generalized extreme value fit and the profile
 * likelihood interval of a rate, against scipy 1.10.1 (Debian 12):
 * genextreme with c = -xi, its fit refined by Nelder-Mead to the same
 * optimum, the interval by brentq on the profile deviance (the script is
 * in docs/triage.md, "Tolerance headroom"). The data are the GEV's own
 * quantiles at (i + 0.5) / n, so that the test needs no random numbers. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "stats/stats.h"
#include "util/util.h"

/* The quantile of GEV(mu, sigma, xi) at probability u. */
static double
quantile(double mu, double sigma, double xi, double u)
{
	if (xi == 0)
		return mu - sigma * log(-log(u));
	return mu + sigma * (pow(-log(u), -xi) - 1) / xi;
}

/* |a - b| within rel of b. */
#define CLOSE(a, b, rel) ck_assert_msg(fabs((a) - (b)) <= (rel) * \
	fabs(b), "%s = %.10g, expected %.10g", #a, (double)(a), (double)(b))

START_TEST(fit_matches_scipy)
{
	static const struct {
		double	 mu, sigma, xi;	/* of the data */
		size_t	 n;
		double	 bound;
		/* scipy's fit, rate, interval, 99th percentile, bound at
		 * 1e-6 */
		double	 fmu, fsigma, fxi, p, lo, hi, q99, q6;
	} v[] = {
		{ 2, 0.5, -0.1, 50, 3.8, 2.003448638, 0.4948000208,
		  -0.1093078122, 0.00974747, 0.000402604, 0.0524334, 3.79232,
		  5.53027 },
		{ 0.2, 0.2, 0.4, 60, 4, 0.1992787297, 0.1972162019,
		  0.4044609898, 0.00461824, 0.000311891, 0.0237887, 2.84573,
		  129.978 },
		{ 0, 1, 0, 25, 6, 0.008802486417, 0.9768746534,
		  -0.01150974959, 0.00172744, 0, 0.0488636, 4.38568,
		  12.4865 },
	};

	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(v); k++) {
		double	 x[64], lo, hi;
		struct flaky_gev g;

		for (size_t i = 0; i < v[k].n; i++)
			x[i] = quantile(v[k].mu, v[k].sigma, v[k].xi,
			    ((double)i + 0.5) / (double)v[k].n);
		ck_assert_int_eq(flaky_gev_fit(x, v[k].n, 0, &g), 0);
		/* mu is compared on the scale of sigma (it may be 0) */
		ck_assert_msg(fabs(g.mu - v[k].fmu) < 1e-5 * v[k].fsigma,
		    "mu %.10g, expected %.10g", g.mu, v[k].fmu);
		CLOSE(g.sigma, v[k].fsigma, 1e-5);
		ck_assert_msg(fabs(g.xi - v[k].fxi) < 1e-5, "xi %.10g, "
		    "expected %.10g", g.xi, v[k].fxi);
		CLOSE(flaky_gev_exceed(&g, v[k].bound), v[k].p, 1e-4);
		CLOSE(flaky_gev_quantile(&g, 0.01), v[k].q99, 1e-5);
		CLOSE(flaky_gev_quantile(&g, 1e-6), v[k].q6, 1e-4);
		CLOSE(flaky_gev_cdf(&g, v[k].bound), 1 - v[k].p, 1e-6);
		ck_assert_int_eq(flaky_gev_exceed_interval(x, v[k].n, &g,
		    v[k].bound, &lo, &hi), 0);
		/* the search stops within 1e-3 of log10 of each end */
		if (v[k].lo == 0)
			ck_assert_double_eq(lo, 0);
		else
			CLOSE(lo, v[k].lo, 0.01);
		CLOSE(hi, v[k].hi, 0.01);
		ck_assert(lo <= v[k].p && v[k].p <= hi);
	}
}
END_TEST

/* A rate far below any bound the data reach: the fit says so, the
 * interval starts at 0, and a bound below the data is crossed often. */
START_TEST(tails)
{
	double	 x[40], lo, hi;
	struct flaky_gev g;

	for (size_t i = 0; i < 40; i++)
		x[i] = quantile(0.5, 0.01, -0.3, ((double)i + 0.5) / 40);
	ck_assert_int_eq(flaky_gev_fit(x, 40, 0, &g), 0);
	ck_assert(g.xi < 0);
	/* beyond the fitted upper end point: never */
	ck_assert_double_eq(flaky_gev_exceed(&g, 1.0), 0);
	ck_assert_int_eq(flaky_gev_exceed_interval(x, 40, &g, 1.0, &lo,
	    &hi), 0);
	ck_assert_double_eq(lo, 0);
	ck_assert(hi < 0.1);
	/* the median: half of the runs */
	CLOSE(flaky_gev_exceed(&g, flaky_gev_quantile(&g, 0.5)), 0.5, 1e-9);
	ck_assert_int_eq(flaky_gev_exceed_interval(x, 40, &g,
	    flaky_gev_quantile(&g, 0.5), &lo, &hi), 0);
	ck_assert(lo > 0.3 && hi < 0.7);
}
END_TEST

/* The same data with the shape held at 0 or above (what headroom fits):
 * no finite end, so a bound beyond the data is crossed now and then, and
 * the bound suggested for 1e-6 lies beyond the one the free fit calls
 * never crossed. */
START_TEST(shape_floor)
{
	double	 x[40], lo, hi;
	struct flaky_gev g, free_fit;

	for (size_t i = 0; i < 40; i++)
		x[i] = quantile(0.5, 0.01, -0.3, ((double)i + 0.5) / 40);
	ck_assert_int_eq(flaky_gev_fit(x, 40, 0.5, &free_fit), 0);
	ck_assert(free_fit.xi < 0);
	ck_assert_int_eq(flaky_gev_fit_min(x, 40, 0.5, 0, &g), 0);
	ck_assert(g.xi >= 0);
	ck_assert(flaky_gev_exceed(&g, 0.56) > 0);
	ck_assert(flaky_gev_exceed(&g, 0.56) >
	    flaky_gev_exceed(&free_fit, 0.56));
	ck_assert(flaky_gev_quantile(&g, 1e-6) >
	    flaky_gev_quantile(&free_fit, 1e-6));
	ck_assert_int_eq(flaky_gev_exceed_interval(x, 40, &g, 0.56, &lo,
	    &hi), 0);
	ck_assert(lo <= flaky_gev_exceed(&g, 0.56));
	ck_assert(hi >= flaky_gev_exceed(&g, 0.56));
	ck_assert_int_eq(flaky_gev_fit_min(x, 40, 0.5, -2, &g), -EINVAL);
}
END_TEST

/* Gumbel's fit: the shape stays 0, its interval holds the estimate, and
 * it fits the GEV's own Gumbel data about as well as a free shape. */
START_TEST(gumbel)
{
	double	 x[40], lo, hi, p;
	struct flaky_gev g, free_fit;

	for (size_t i = 0; i < 40; i++)
		x[i] = quantile(1, 2, 0, ((double)i + 0.5) / 40);
	ck_assert_int_eq(flaky_gumbel_fit(x, 40, 0.5, &g), 0);
	ck_assert_double_eq(g.xi, 0);
	ck_assert(fabs(g.mu - 1) < 0.3 && fabs(g.sigma - 2) < 0.4);
	ck_assert_int_eq(flaky_gev_fit_min(x, 40, 0.5, 0, &free_fit), 0);
	ck_assert(2 * (g.nll - free_fit.nll) < 3.84);
	p = flaky_gev_exceed(&g, 12);
	ck_assert(p > 0 && p < 0.01);
	ck_assert_int_eq(flaky_gev_exceed_interval(x, 40, &g, 12, &lo, &hi),
	    0);
	ck_assert(lo < p && p < hi);
	ck_assert_double_eq(g.xi, 0);
}
END_TEST

START_TEST(degenerate)
{
	double	 same[30], x[2] = { 1, 2 };
	struct flaky_gev g;

	for (size_t i = 0; i < 30; i++)
		same[i] = 0.25;
	ck_assert_int_eq(flaky_gev_fit(same, 30, 0, &g), -EDOM);
	ck_assert_int_eq(flaky_gev_fit(x, 2, 0, &g), -EINVAL);
	ck_assert_int_eq(flaky_gev_fit(x, 0, 0, &g), -EINVAL);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("gev");
	TCase	*tc = tcase_create("gev");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, fit_matches_scipy);
	tcase_add_test(tc, tails);
	tcase_add_test(tc, shape_floor);
	tcase_add_test(tc, gumbel);
	tcase_add_test(tc, degenerate);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
