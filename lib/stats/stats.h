/* Failure rates with honest uncertainty: Wilson score intervals, the
 * severity tiers and how many more runs would settle a test's tier; and
 * the two tests diagnosis and confirm rest on: Fisher's one-sided test
 * (order dependence, passing alone) and Mann-Whitney's (RACE from timing). */
#ifndef FLAKY_STATS_H
#define FLAKY_STATS_H

#include <stddef.h>
#include <stdint.h>

#define FLAKY_Z95	1.959963984540054

/* A test's tier, or (the last two) why it has none: a test with no
 * counted run is not stable, it is unknown (docs/statistics.md). */
enum flaky_tier {
	FLAKY_TIER_STABLE = 0,	/* never failed in one or more runs */
	FLAKY_TIER_NOISE,	/* < 5% */
	FLAKY_TIER_WARNING,	/* 5% - 20% */
	FLAKY_TIER_CRITICAL,	/* > 20% */
	FLAKY_TIER_BROKEN,	/* failed every run */
	FLAKY_TIER_SKIPPED,	/* no counted run: skipped every time */
	FLAKY_TIER_NONE,	/* no counted run at all: no evidence */
};
#define FLAKY_TIER_COUNT	(FLAKY_TIER_NONE + 1)

#define FLAKY_TIER_WARNING_AT	0.05
#define FLAKY_TIER_CRITICAL_ABOVE 0.20

/* The Wilson score interval of k failures in n runs; [0, 1] when n = 0. */
void	 flaky_wilson(int64_t k, int64_t n, double z, double *lo, double *hi);
/* The tier of failures in runs; FLAKY_TIER_NONE when runs is 0. */
int	 flaky_tier(int64_t failures, int64_t runs);
/* The same, FLAKY_TIER_SKIPPED when runs is 0 and skips is not: what a
 * test is called wherever its skips are known. */
int	 flaky_tier_skips(int64_t failures, int64_t runs, int64_t skips);
/* "critical", ..., "skipped", "no evidence" */
const char *flaky_tier_name(int);
int	 flaky_tier_from_name(const char *);
/* More runs until the 95% interval lies inside one rate band (noise,
 * warning, critical), assuming the current rate stays; 0 when settled,
 * -1 when it cannot settle (a rate on a band's edge) within 10^7. */
int64_t	 flaky_runs_needed(int64_t failures, int64_t runs);
/* Consecutive passing runs that a test still failing at rate p passes
 * all with a chance of at most alpha: ceil(ln alpha / ln(1 - p)), about
 * 3/p at alpha 0.05. 1 for p >= 1; -1 for p <= 0 or alpha outside (0, 1)
 * (no rate: no number of passes tells). The rule of bisect, verify and
 * quarantine's release (docs/triage.md). */
#define FLAKY_PROOF_ALPHA	0.05
int64_t	 flaky_passes_needed(double p, double alpha);

/* One-sided p-value of k or more failures among n runs with the candidate
 * before, when K of N runs failed (hypergeometric tail). */
double	 flaky_fisher_greater(int64_t k, int64_t n, int64_t K, int64_t N);
/* Two-sided p-value of the Mann-Whitney U test that a and b (each sorted
 * ascending) come from one distribution: the normal approximation with
 * tie and continuity correction. 1 when either is empty or every value
 * ties. *u (may be NULL) gets U of a: the pairs in which a's value is the
 * greater, ties counting one half. */
double	 flaky_mann_whitney(const int64_t *a, size_t na, const int64_t *b,
	    size_t nb, double *u);

/* Sequential settling (sequential.c, docs/statistics.md): a confidence
 * sequence for a failure rate, valid at every n at once, so that a caller
 * may look after each run and stop when a test's tier settles. */
#define FLAKY_CS_ALPHA	0.05
/* The interval of k failures in n runs that holds, with probability at
 * least 1 - alpha, at every n together (Robbins' beta-binomial mixture
 * with Jeffreys' prior); [0, 1] when n = 0. */
void	 flaky_cs_interval(int64_t k, int64_t n, double alpha, double *lo,
	    double *hi);
/* The rate band of k in n: FLAKY_TIER_NOISE (k = 0 too), WARNING or
 * CRITICAL (a test failing every run too). */
int	 flaky_cs_band(int64_t k, int64_t n);
/* Is the band settled: the confidence sequence's interval inside the
 * band of k/n? lo and hi (may be NULL) get the interval. */
int	 flaky_cs_settled(int64_t k, int64_t n, double alpha, double *lo,
	    double *hi);

/* Tolerance headroom (issue 34, gev.c, docs/triage.md): the generalized
 * extreme value distribution fitted by maximum likelihood to the margin
 * an assertion used in each run, G(z) = exp(-(1 + xi (z - mu) /
 * sigma)^(-1/xi)). Under FLAKY_GEV_MIN_RUNS margins no fit is made. */
#define FLAKY_GEV_MIN_RUNS	20
struct flaky_gev {
	double		 mu, sigma, xi;
	double		 nll;		/* -log likelihood at the fit */
	double		 shift, scale;	/* the data's mean and sd */
	double		 censor;	/* the share censored */
	double		 xi_min, xi_max;	/* the shapes allowed */
	size_t		 n;
};
/* Fit x[n], its lowest censor * n values (0 <= censor < 1) known only to
 * lie at or below the highest of them: 0; -EINVAL under 3 values or for
 * a bad censor, -EDOM when they are all equal or no fit is found,
 * -ENOMEM. */
#define FLAKY_GEV_CENSOR	0.5	/* what headroom censors */
int	 flaky_gev_fit(const double *x, size_t n, double censor,
	    struct flaky_gev *);
/* The same with the shape at xi_min or above (0: no finite end to the
 * tail, Gumbel's or heavier), -EINVAL for xi_min under -0.95. */
int	 flaky_gev_fit_min(const double *x, size_t n, double censor,
	    double xi_min, struct flaky_gev *);
/* The same with the shape fixed at 0: Gumbel's. */
int	 flaky_gumbel_fit(const double *x, size_t n, double censor,
	    struct flaky_gev *);
double	 flaky_gev_cdf(const struct flaky_gev *, double z);
/* 1 - G(z), exact for rates as small as 1e-300. */
double	 flaky_gev_exceed(const struct flaky_gev *, double z);
/* The z that is exceeded with probability exceed. */
double	 flaky_gev_quantile(const struct flaky_gev *, double exceed);
/* The 95% profile likelihood interval of 1 - G(bound) for the fit g of
 * x[n] (Coles 2001, 2.6.6): lo 0 below 1e-16, hi 1 when nothing bounds
 * it. 0, -EINVAL, -ENOMEM. */
int	 flaky_gev_exceed_interval(const double *x, size_t n,
	    const struct flaky_gev *, double bound, double *lo, double *hi);

#endif
