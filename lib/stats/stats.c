/* Interval arithmetic for failure rates, and the Fisher and Mann-Whitney
 * tests (docs/triage.md explains the choices). */
#include "buildconf.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "stats/stats.h"

void
flaky_wilson(int64_t k, int64_t n, double z, double *lo, double *hi)
{
	double	 p, z2, den, mid, half;

	if (n <= 0) {
		*lo = 0;
		*hi = 1;
		return;
	}
	p = (double)k / (double)n;
	z2 = z * z;
	den = 1 + z2 / (double)n;
	mid = (p + z2 / (2 * (double)n)) / den;
	half = z * sqrt(p * (1 - p) / (double)n + z2 /
	    (4 * (double)n * (double)n)) / den;
	*lo = mid - half;
	*hi = mid + half;
	/* Exact at the ends (rounding otherwise leaves 1e-17). */
	if (k == 0 || *lo < 0)
		*lo = 0;
	if (k == n || *hi > 1)
		*hi = 1;
}

int
flaky_tier(int64_t failures, int64_t runs)
{
	double	 p;

	if (runs <= 0)
		return FLAKY_TIER_NONE;
	if (failures <= 0)
		return FLAKY_TIER_STABLE;
	if (failures >= runs)
		return FLAKY_TIER_BROKEN;
	p = (double)failures / (double)runs;
	if (p > FLAKY_TIER_CRITICAL_ABOVE)
		return FLAKY_TIER_CRITICAL;
	if (p >= FLAKY_TIER_WARNING_AT)
		return FLAKY_TIER_WARNING;
	return FLAKY_TIER_NOISE;
}

int
flaky_tier_skips(int64_t failures, int64_t runs, int64_t skips)
{
	if (runs <= 0 && skips > 0)
		return FLAKY_TIER_SKIPPED;
	return flaky_tier(failures, runs);
}

static const char *const tier_names[FLAKY_TIER_COUNT] = {
	"stable", "noise", "warning", "critical", "broken", "skipped",
	"no evidence"
};

const char *
flaky_tier_name(int t)
{
	if (t < 0 || t >= FLAKY_TIER_COUNT)
		return "unknown";
	return tier_names[t];
}

int
flaky_tier_from_name(const char *s)
{
	for (int i = 0; i < FLAKY_TIER_COUNT; i++)
		if (strcmp(s, tier_names[i]) == 0)
			return i;
	return -EINVAL;
}

/* The band of a rate: 0 noise, 1 warning, 2 critical. */
static int
band(double p)
{
	if (p > FLAKY_TIER_CRITICAL_ABOVE)
		return 2;
	if (p >= FLAKY_TIER_WARNING_AT)
		return 1;
	return 0;
}

/* Does the interval at n runs with rate p lie inside p's band? */
static int
settled(double p, double n)
{
	double	 lo, hi, k = p * n;
	int	 b = band(p);

	/* flaky_wilson with a real-valued k */
	{
		double z = FLAKY_Z95, z2 = z * z, den = 1 + z2 / n;
		double mid = (p + z2 / (2 * n)) / den;
		double half = z * sqrt(p * (1 - p) / n + z2 / (4 * n * n)) /
		    den;

		lo = mid - half;
		hi = mid + half;
		(void)k;
	}
	switch (b) {
	case 0:
		return hi < FLAKY_TIER_WARNING_AT;
	case 1:
		return lo >= FLAKY_TIER_WARNING_AT &&
		    hi <= FLAKY_TIER_CRITICAL_ABOVE;
	default:
		return lo > FLAKY_TIER_CRITICAL_ABOVE;
	}
}

int64_t
flaky_runs_needed(int64_t failures, int64_t runs)
{
	const double	 limit = 1e7;
	double		 p, lo, hi, mid;

	if (runs <= 0)
		return -1;
	p = (double)failures / (double)runs;
	if (settled(p, (double)runs))
		return 0;
	/* The interval narrows as n grows: find the first n by doubling,
	 * then bisect. */
	hi = (double)runs;
	do {
		hi *= 2;
		if (hi > limit)
			return -1;
	} while (!settled(p, hi));
	lo = hi / 2;
	while (hi - lo > 0.5) {
		mid = floor((lo + hi) / 2);
		if (mid <= lo)
			break;
		if (settled(p, mid))
			hi = mid;
		else
			lo = mid;
	}
	return (int64_t)ceil(hi) - runs;
}

/* log of n choose k */
static double
lchoose(int64_t n, int64_t k)
{
	return lgamma((double)n + 1) - lgamma((double)k + 1) -
	    lgamma((double)(n - k) + 1);
}

/* Chance of k or more of K failures among n of N runs (hypergeometric). */
double
flaky_fisher_greater(int64_t k, int64_t n, int64_t K, int64_t N)
{
	double	 p = 0, den;
	int64_t	 hi = n < K ? n : K;

	if (N <= 0 || n <= 0 || n > N || K > N || k <= 0)
		return 1.0;
	den = lchoose(N, n);
	for (int64_t i = k; i <= hi; i++) {
		if (n - i > N - K)
			continue;
		p += exp(lchoose(K, i) + lchoose(N - K, n - i) - den);
	}
	return p > 1.0 ? 1.0 : p;
}

/* Mann-Whitney over two sorted samples, merged: ranks need no copy. */
double
flaky_mann_whitney(const int64_t *a, size_t na, const int64_t *b, size_t nb,
    double *u)
{
	double	 ra = 0, ties = 0, n, ua, mu, var, z, p;
	size_t	 i = 0, j = 0, rank = 0;

	if (u != NULL)
		*u = NAN;
	if (na == 0 || nb == 0)
		return 1.0;
	/* Rank sum of a: a group of equal values shares the mean of its
	 * ranks; t^3 - t per group corrects the variance for the ties. */
	while (i < na || j < nb) {
		int64_t	 v;
		size_t	 ta = 0, tb = 0;
		double	 t;

		if (j >= nb || (i < na && a[i] <= b[j]))
			v = a[i];
		else
			v = b[j];
		while (i < na && a[i] == v) {
			i++;
			ta++;
		}
		while (j < nb && b[j] == v) {
			j++;
			tb++;
		}
		t = (double)(ta + tb);
		ra += (double)ta * ((double)rank + (t + 1) / 2);
		ties += t * t * t - t;
		rank += ta + tb;
	}
	n = (double)(na + nb);
	ua = ra - (double)na * ((double)na + 1) / 2;
	if (u != NULL)
		*u = ua;
	mu = (double)na * (double)nb / 2;
	var = (double)na * (double)nb / 12 * ((n + 1) - ties / (n * (n - 1)));
	if (!(var > 0))
		return 1.0;	/* every value ties */
	z = (fabs(ua - mu) - 0.5) / sqrt(var);
	if (z < 0)
		z = 0;
	p = erfc(z / sqrt(2.0));
	return p > 1.0 ? 1.0 : p;
}

int64_t
flaky_passes_needed(double p, double alpha)
{
	double	 n;

	if (!(p > 0) || !(alpha > 0) || !(alpha < 1))
		return -1;
	if (p >= 1)
		return 1;
	/* (1 - p)^n <= alpha; log1p keeps small rates exact, and a
	 * quotient a rounding error above an integer (p = 0.5, alpha =
	 * 0.25: 2) is that integer. */
	n = log(alpha) / log1p(-p);
	if (n - floor(n) < 1e-9)
		return (int64_t)floor(n) > 0 ? (int64_t)floor(n) : 1;
	return (int64_t)ceil(n);
}
