/* analyze's seed sweep (issue 34, docs/runners.md "Seed sweeps"): which
 * seeds each test failed with while the sweep's runs come in, then the
 * replays that tell a seed that decides a failure from randomness no seed
 * controls: each test that failed with some seeds and passed with others
 * is run again with up to two of its failing seeds (the same one twice
 * when it failed with one only). Replays are evidence only: chosen
 * because they failed, they count for no rate. */
#ifndef FLAKYCTL_SEEDS_H
#define FLAKYCTL_SEEDS_H

#include <stddef.h>

#include "run/run.h"

/* Replays of at most this many tests per call (those with the most
 * failures first), each of them twice. */
#define SEEDS_REPLAY_TESTS	25
#define SEEDS_REPLAYS_PER_TEST	2

struct seeds_test;

struct seeds {
	struct seeds_test *t;		/* open addressing by name */
	size_t		   n, cap;
	/* the replays planned: run i replays seed[i] for its tests */
	struct seeds_replay *replay;
	size_t		   nreplay, next;
	int		   planned;
};

struct seeds_replay {
	char		 seed[16];
	char		**tests;
	size_t		 ntests;
};

/* A run of the sweep ended: its failing tests' seeds, every test's
 * outcome counted (replays and incomplete runs are not). */
void	 seeds_ended(struct seeds *, const struct flaky_run *);
/* Once, when every run of the sweep ended: plan the replays; returns
 * how many runs they take (0: none needed). */
size_t	 seeds_plan(struct seeds *);
/* The next replay, or NULL. */
const struct seeds_replay *seeds_next(struct seeds *);
void	 seeds_free(struct seeds *);

#endif
