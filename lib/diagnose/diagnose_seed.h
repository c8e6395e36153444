/* Part of diagnose.h (include that, not this): seed sweeps and tolerance
 * headroom (issue 34; seeds.c, headroom.c; docs/triage.md "SEED" and
 * "Tolerance headroom"). */
#ifndef FLAKY_DIAGNOSE_SEED_H
#define FLAKY_DIAGNOSE_SEED_H

#include <stddef.h>
#include <stdint.h>

#include "stats/stats.h"
#include "store/store.h"

struct flaky_buf;
struct flaky_test_sig;

/* A test in the window's seed sweeps: SEED when it failed with some seeds
 * and passed with others, and no replay of a failing seed passed (a
 * replay that passes shows randomness no seed controls). */
struct flaky_seed_evidence {
	int64_t		 runs, failures;	/* the sweep's counted runs */
	double		 lo, hi;		/* 95% Wilson of the share */
	char		 seed[24];	/* a failing seed (replayed ones
					 * first); "" when none known */
	int64_t		 replays, replays_failed;
	int		 sensitive;	/* SEED */
	int		 not_seed;	/* a replay of a failing seed passed */
};
/* The evidence from a test's rows per perturbation (its "seed" row) and
 * its replays (rp: the test's only, any order). 1 when the test is SEED;
 * 0 otherwise (ev filled whenever it had sweep runs). */
int	 flaky_seed_evidence(const struct flaky_perturb_row *, size_t,
	    const struct flaky_replay_row *rp, size_t nrp,
	    struct flaky_seed_evidence *);
/* The signature with that evidence: UNKNOWN (or none) becomes SEED,
 * anything else stays. */
const char *flaky_seed_signature(const char *signature);
/* Make the UNKNOWN signatures of SEED tests SEED in a report's
 * signatures (sorted by test id), from its rows per perturbation and the
 * window's replays (sorted by test id). */
void	 flaky_seed_sigs(struct flaky_test_sig *, size_t,
	    const struct flaky_perturb_row *, size_t,
	    const struct flaky_replay_row *, size_t);
/* "fails for 5 of 40 seeds (12%, 95% 5.5-26%); seed 17 fails again when
 * replayed (2 of 2)" */
void	 flaky_seed_words(const struct flaky_seed_evidence *,
	    struct flaky_buf *);

/* SEED's first patch, with the bound its worst fitted site suggests. */
struct flaky_diagnosis;
void	 flaky_seed_patch(const struct flaky_diagnosis *, struct flaky_buf *);

/* Tolerance headroom: for each call site of a test's approximate
 * assertions, the margins of its runs (one per run of the sweep), their
 * median and 99th percentile, and a generalized extreme value fit of the
 * margin towards failure, z (the share of the tolerance used; x - bound
 * for x < bound; bound - x for x > bound), failing past B (1, or 0): its
 * rate of failure with the profile likelihood interval, and the bound
 * that would fail once in 1 / FLAKY_HEADROOM_TARGET runs. */
#define FLAKY_HEADROOM_TARGET	1e-6
/* A site is at risk when it failed in a run, or the fit puts its rate
 * of failure at FLAKY_HEADROOM_RISK or above. */
#define FLAKY_HEADROOM_RISK	1e-6
/* A margin of fewer distinct values is not fitted (a counter, a step has
 * no tail); failures seen this often are counted, not extrapolated. */
#define FLAKY_HEADROOM_MIN_VALUES	10
/* The fit's shape is 0 or above: tens of runs cannot tell a finite end
 * of the tail (a negative shape) from chance, and one fitted by chance
 * says "never" of a bound that fails, and suggests a bound tighter than
 * the one that does (docs/triage.md, "Tolerance headroom"). */
#define FLAKY_HEADROOM_XI_MIN	0.0
#define FLAKY_HEADROOM_COUNTED		5
struct flaky_headroom_site {
	char		*path;
	int		 line;
	char		 kind[4];	/* tol, lt, le, gt, ge */
	char		*tolerance;	/* as the hook saw it, or NULL */
	char		*assertion;	/* assert_allclose, compare, ... */
	double		 bound;		/* of its newest run */
	size_t		 n;		/* runs measured */
	size_t		 fails;		/* runs that crossed the bound */
	/* the share of the bound used (tol: of the tolerance; x < b: x /
	 * b; x > b: b / x), NAN where not defined (signs) */
	double		 used_median, used_p99;
	/* the quantity at the median and at the worst 1% (x > 0.9: the
	 * 1st percentile; tol: the share used at the 99th) */
	double		 median, worst1;
	int		 constant;	/* the same margin in every run */
	size_t		 distinct;	/* values the margin took */
	int		 fitted;	/* n >= FLAKY_GEV_MIN_RUNS, a fit */
	int		 counted;	/* rate from the failures seen */
	struct flaky_gev gev;
	double		 rate, rate_lo, rate_hi;	/* NAN: neither */
	double		 suggest;	/* the bound failing once in 1e6 */
	char		 suggest_text[96];	/* "rtol=2.1e-06"; "" */
	int		 at_risk;
};
/* The sites of a test's rows (flaky_store_headroom: sorted by site, then
 * run). 0 or -ENOMEM. */
int	 flaky_headroom_sites(const struct flaky_headroom_row *, size_t,
	    struct flaky_headroom_site **ret, size_t *ret_n);
void	 flaky_headroom_sites_free(struct flaky_headroom_site *, size_t);
/* "tests/t.py:12 assert_allclose (rtol=1e-06): uses 41% of its
 * tolerance at the median, 93% at the 99th percentile; estimated to fail
 * 1 run in ~2,000 (GEV fit, 95% 1 in 300 to 1 in 90,000); a bound of
 * rtol=2.1e-06 would fail 1 in 10^6" */
void	 flaky_headroom_words(const struct flaky_headroom_site *,
	    struct flaky_buf *);
/* "1 in ~2,000" of a rate (NAN: "?", 0: "never"). */
void	 flaky_rate_words(double rate, struct flaky_buf *);

#endif
