/* Part of store.h (include that, not this): seed sweeps and tolerance
 * headroom (issue 34, seed.c; docs/runners.md "Seed sweeps", docs/schema.md
 * "headroom"). */
#ifndef FLAKY_STORE_SEED_H
#define FLAKY_STORE_SEED_H

#include <stddef.h>
#include <stdint.h>

struct flaky_store;
struct flaky_query;

/* runs.perturbation of a run of a seed sweep (its seed in runs.seed), and
 * of a replay of a seed that failed: evidence only (runs.incomplete says
 * why), never counted in a rate. */
#define FLAKY_PERTURB_SEED	"seed"
#define FLAKY_PERTURB_REPLAY	"seed:replay"
/* Either of them? */
int	 flaky_perturb_is_seed(const char *perturbation);

/* The margins of a test's approximate assertions in the window's
 * complete runs of a seed sweep (replays left out: chosen for failing),
 * sorted by path, line, kind and run. */
struct flaky_headroom_row {
	int64_t		 run_id;
	char		*path;
	int		 line;
	char		 kind[4];	/* tol, lt, le, gt, ge */
	double		 quantity, bound;
	double		 abs_err, rel_err;	/* NAN: none */
	char		*tolerance, *assertion;	/* NULL: none */
};
/* 0, or a negative errno with err. */
int	 flaky_store_headroom(struct flaky_store *, const struct flaky_query *,
	    int64_t test_id, struct flaky_headroom_row **ret, size_t *ret_n,
	    char *err, size_t errlen);
void	 flaky_headroom_rows_free(struct flaky_headroom_row *, size_t);
/* Has the window a run of a seed sweep? 1, 0, or a negative errno. */
int	 flaky_store_seeded(struct flaky_store *, const struct flaky_query *,
	    char *err, size_t errlen);

/* The outcomes of tests in the window's replays of failing seeds
 * (test_id 0: every test), by test id then run. */
struct flaky_replay_row {
	int64_t		 test_id, run_id;
	char		*seed;
	int		 failed;
};
int	 flaky_store_seed_replays(struct flaky_store *,
	    const struct flaky_query *, int64_t test_id,
	    struct flaky_replay_row **ret, size_t *ret_n, char *err,
	    size_t errlen);
void	 flaky_replay_rows_free(struct flaky_replay_row *, size_t);

#endif
