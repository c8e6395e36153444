/* settled_sim: does --until-settled keep its 95%? 10,000 simulated tests
 * at known failure rates across the tier boundaries, each rerun until the
 * confidence sequence settles its tier (or the maximum), against a fixed
 * 50-run analysis and against stopping on the plain 95% Wilson interval
 * checked after every run (the peeking that inflates errors). Seeded:
 * the same table every time (docs/statistics.md).
 *
 *   settled_sim [TESTS [MAX_RUNS [SEED]]]
 */
#include "buildconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pipeline/pipeline.h"
#include "stats/stats.h"

static const double rates[] = {
	0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.10, 0.12, 0.15, 0.18,
	0.25, 0.30, 0.40, 0.50, 0.75, 1.00,
};
#define NRATES	(sizeof rates / sizeof rates[0])
#define FIXED	50

/* One method's tally for one rate. */
struct tally {
	int64_t	 tests, settled, wrong, outside, runs;
};

static uint64_t rng_state;

/* splitmix64: small, seeded, good enough for Bernoulli draws. */
static double
uniform(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (double)(z >> 11) / 9007199254740992.0;
}

/* The true tier band of a rate, as flaky_cs_band names them. */
static int
true_band(double p)
{
	if (p > FLAKY_TIER_CRITICAL_ABOVE)
		return FLAKY_TIER_CRITICAL;
	if (p >= FLAKY_TIER_WARNING_AT)
		return FLAKY_TIER_WARNING;
	return FLAKY_TIER_NOISE;
}

/* Is the plain 95% Wilson interval inside k/n's band (flaky_runs_needed
 * says 0)? */
static int
wilson_settled(int64_t k, int64_t n, double *lo, double *hi)
{
	flaky_wilson(k, n, FLAKY_Z95, lo, hi);
	return k > 0 && flaky_runs_needed(k, n) == 0;
}

/* Rerun one test at rate p until its tier settles (sequential when cs,
 * else by peeking at Wilson) or max runs. */
static void
until_settled(double p, int max, int cs, struct tally *t)
{
	int64_t	 k = 0, n = 0;
	double	 lo = 0, hi = 1;
	int	 done = 0;

	while (n < max && !done) {
		n++;
		k += uniform() < p;
		if (k == 0 || n < FLAKY_SETTLE_MIN_RUNS)
			continue;
		done = cs ? flaky_cs_settled(k, n, FLAKY_CS_ALPHA, &lo, &hi) :
		    wilson_settled(k, n, &lo, &hi);
	}
	if (!done && cs)
		flaky_cs_interval(k, n, FLAKY_CS_ALPHA, &lo, &hi);
	else if (!done)
		flaky_wilson(k, n, FLAKY_Z95, &lo, &hi);
	t->tests++;
	t->runs += n;
	t->settled += done;
	t->outside += p < lo || p > hi;
	if (done && flaky_cs_band(k, n) != true_band(p))
		t->wrong++;
}

/* The fixed analysis: FIXED runs, the tier of the observed rate. */
static void
fixed(double p, struct tally *t)
{
	int64_t	 k = 0;
	double	 lo, hi;

	for (int i = 0; i < FIXED; i++)
		k += uniform() < p;
	flaky_wilson(k, FIXED, FLAKY_Z95, &lo, &hi);
	t->tests++;
	t->runs += FIXED;
	t->settled += k > 0 && flaky_runs_needed(k, FIXED) == 0;
	t->outside += p < lo || p > hi;
	/* a test never seen failing is reported stable: wrong too */
	if (k == 0 || flaky_cs_band(k, FIXED) != true_band(p))
		t->wrong++;
}

/* percent */
static double
pc(int64_t a, int64_t b)
{
	return b > 0 ? 100.0 * (double)a / (double)b : 0;
}

/* One markdown row. */
static void
row(const char *label, const struct tally *s, const struct tally *w,
    const struct tally *f)
{
	printf("| %s | %lld | %.1f | %.1f%% | %.2f%% | %.2f%% | %.1f | "
	    "%.2f%% | %.2f%% | %.1f%% | %.2f |\n", label,
	    (long long)s->tests, (double)s->runs / (double)s->tests,
	    pc(s->settled, s->tests), pc(s->outside, s->tests),
	    pc(s->wrong, s->settled), (double)w->runs / (double)w->tests,
	    pc(w->wrong, w->settled), pc(w->outside, w->tests),
	    pc(f->wrong, f->tests), (double)s->runs / (double)f->runs);
}

/* Sum b into a. */
static void
add(struct tally *a, const struct tally *b)
{
	a->tests += b->tests;
	a->settled += b->settled;
	a->wrong += b->wrong;
	a->outside += b->outside;
	a->runs += b->runs;
}

int
main(int argc, char **argv)
{
	struct tally	 s[NRATES] = { { 0 } }, w[NRATES] = { { 0 } };
	struct tally	 f[NRATES] = { { 0 } }, st = { 0 }, wt = { 0 };
	struct tally	 ft = { 0 };
	long		 tests = argc > 1 ? atol(argv[1]) : 10000;
	int		 max = argc > 2 ? atoi(argv[2]) : FLAKY_SETTLE_MAX_RUNS;
	char		 label[32];

	rng_state = argc > 3 ? strtoull(argv[3], NULL, 0) : 18;
	if (tests <= 0 || max < FLAKY_SETTLE_MIN_RUNS) {
		fprintf(stderr, "usage: settled_sim [TESTS [MAX_RUNS [SEED]]]"
		    "\n");
		return 2;
	}
	for (long i = 0; i < tests; i++) {
		size_t	 r = (size_t)i % NRATES;

		until_settled(rates[r], max, 1, &s[r]);
		until_settled(rates[r], max, 0, &w[r]);
		fixed(rates[r], &f[r]);
	}
	printf("%ld tests, at most %d runs each, seed %llu, alpha %.2f\n\n",
	    tests, max, (unsigned long long)(argc > 3 ?
	    strtoull(argv[3], NULL, 0) : 18), FLAKY_CS_ALPHA);
	printf("| true rate | tests | CS runs | CS settled | CS outside | "
	    "CS wrong tier | peek runs | peek wrong tier | peek outside | "
	    "fixed-50 wrong tier | runs / fixed-50 |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t r = 0; r < NRATES; r++) {
		snprintf(label, sizeof label, "%.0f%%", rates[r] * 100);
		row(label, &s[r], &w[r], &f[r]);
		add(&st, &s[r]);
		add(&wt, &w[r]);
		add(&ft, &f[r]);
	}
	row("all", &st, &wt, &ft);
	return pc(st.outside, st.tests) <= 100 * FLAKY_CS_ALPHA ? 0 : 1;
}
