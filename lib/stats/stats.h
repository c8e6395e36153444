/* Failure rates with honest uncertainty: Wilson score intervals, the
 * severity tiers and how many more runs would settle a test's tier. */
#ifndef FLAKY_STATS_H
#define FLAKY_STATS_H

#include <stdint.h>

#define FLAKY_Z95	1.959963984540054

enum flaky_tier {
	FLAKY_TIER_STABLE = 0,	/* never failed */
	FLAKY_TIER_NOISE,	/* < 5% */
	FLAKY_TIER_WARNING,	/* 5% - 20% */
	FLAKY_TIER_CRITICAL,	/* > 20% */
	FLAKY_TIER_BROKEN,	/* failed every run */
};

#define FLAKY_TIER_WARNING_AT	0.05
#define FLAKY_TIER_CRITICAL_ABOVE 0.20

/* The Wilson score interval of k failures in n runs; [0, 1] when n = 0. */
void	 flaky_wilson(int64_t k, int64_t n, double z, double *lo, double *hi);
int	 flaky_tier(int64_t failures, int64_t runs);
const char *flaky_tier_name(int);		/* "critical", ... */
int	 flaky_tier_from_name(const char *);
/* More runs until the 95% interval lies inside one rate band (noise,
 * warning, critical), assuming the current rate stays; 0 when settled,
 * -1 when it cannot settle (a rate on a band's edge) within 10^7. */
int64_t	 flaky_runs_needed(int64_t failures, int64_t runs);

#endif
