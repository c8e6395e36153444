/* A confidence sequence for a failure rate: an interval that holds at every
 * number of runs at once, so that looking after every run and stopping when
 * it settles does not raise the error rate (docs/statistics.md).
 *
 * Robbins' beta-binomial mixture (Robbins 1970; Howard, Ramdas, McAuliffe
 * and Sekhon 2021, section 3): with a Beta(a, b) prior the mixture
 *
 *   M_n(p) = B(a + k, b + n - k) / B(a, b) / (p^k (1 - p)^(n - k))
 *
 * is a nonnegative martingale with M_0 = 1 when p is the true rate, so by
 * Ville's inequality P(M_n(p) >= 1/alpha for some n) <= alpha. The
 * interval at n is every p with M_n(p) < 1/alpha. */
#include "buildconf.h"

#include <math.h>

#include "stats/stats.h"

/* Jeffreys' prior: half a failure and half a pass. */
#define PRIOR_A		0.5
#define PRIOR_B		0.5
#define BISECT_STEPS	60

/* log B(x, y) */
static double
lbeta(double x, double y)
{
	return lgamma(x) + lgamma(y) - lgamma(x + y);
}

/* The log likelihood of rate p for k failures in n runs. */
static double
loglik(double k, double n, double p)
{
	double	 v = 0;

	if (k > 0)
		v += k * log(p);
	if (n - k > 0)
		v += (n - k) * log1p(-p);
	return v;
}

/* The p between in (inside the interval) and out (outside) where the
 * log likelihood crosses t. */
static double
crossing(double k, double n, double t, double in, double out)
{
	for (int i = 0; i < BISECT_STEPS; i++) {
		double	 mid = (in + out) / 2;

		if (loglik(k, n, mid) > t)
			in = mid;
		else
			out = mid;
	}
	return in;
}

void
flaky_cs_interval(int64_t k, int64_t n, double alpha, double *lo, double *hi)
{
	double	 dk = (double)k, dn = (double)n, phat, t;

	if (n <= 0 || k < 0 || k > n || !(alpha > 0 && alpha < 1)) {
		*lo = 0;
		*hi = 1;
		return;
	}
	phat = dk / dn;
	/* log M_n(p) < log(1/alpha) <=> loglik(p) > t; the likelihood is
	 * concave with its top at phat, which is always inside (the mixture
	 * is at most the maximum). */
	t = lbeta(PRIOR_A + dk, PRIOR_B + dn - dk) - lbeta(PRIOR_A, PRIOR_B) +
	    log(alpha);
	*lo = k == 0 ? 0 : crossing(dk, dn, t, phat, 0);
	*hi = k == n ? 1 : crossing(dk, dn, t, phat, 1);
}

int
flaky_cs_band(int64_t k, int64_t n)
{
	double	 p;

	if (n <= 0 || k <= 0)
		return FLAKY_TIER_NOISE;
	p = (double)k / (double)n;
	if (p > FLAKY_TIER_CRITICAL_ABOVE)
		return FLAKY_TIER_CRITICAL;
	if (p >= FLAKY_TIER_WARNING_AT)
		return FLAKY_TIER_WARNING;
	return FLAKY_TIER_NOISE;
}

int
flaky_cs_settled(int64_t k, int64_t n, double alpha, double *ret_lo,
    double *ret_hi)
{
	double	 lo, hi;
	int	 r;

	flaky_cs_interval(k, n, alpha, &lo, &hi);
	switch (flaky_cs_band(k, n)) {
	case FLAKY_TIER_NOISE:
		r = hi < FLAKY_TIER_WARNING_AT;
		break;
	case FLAKY_TIER_WARNING:
		r = lo >= FLAKY_TIER_WARNING_AT &&
		    hi <= FLAKY_TIER_CRITICAL_ABOVE;
		break;
	default:
		r = lo > FLAKY_TIER_CRITICAL_ABOVE;
		break;
	}
	if (ret_lo != NULL)
		*ret_lo = lo;
	if (ret_hi != NULL)
		*ret_hi = hi;
	return r;
}
