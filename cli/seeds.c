/* analyze's seed sweep: failing seeds per test, and their replays
 * (seeds.h). */
#include "buildconf.h"
/* its own header first: it must stand alone */
#include "seeds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flakyctl.h"
#include "log.h"

struct seeds_test {
	char	*name;
	int	 runs, fails;
	char	 seed[SEEDS_REPLAYS_PER_TEST][16];	/* failing, distinct */
	int	 nseeds;
};

/* The entry of name, added on first sight (open addressing). */
static struct seeds_test *
entry(struct seeds *s, const char *name)
{
	uint64_t h;
	size_t	 i, mask;

	if ((s->n + 1) * 2 > s->cap) {
		struct seeds_test *old = s->t;
		size_t	 oldcap = s->cap;

		s->cap = s->cap ? s->cap * 2 : 256;
		s->t = xcalloc(s->cap, sizeof *s->t);
		mask = s->cap - 1;
		for (size_t k = 0; k < oldcap; k++) {
			if (old[k].name == NULL)
				continue;
			h = flaky_hash64(old[k].name, strlen(old[k].name),
			    FLAKY_HASH_SEED);
			for (i = h & mask; s->t[i].name; i = (i + 1) & mask)
				;
			s->t[i] = old[k];
		}
		free(old);
	}
	mask = s->cap - 1;
	h = flaky_hash64(name, strlen(name), FLAKY_HASH_SEED);
	for (i = h & mask; s->t[i].name != NULL; i = (i + 1) & mask)
		if (strcmp(s->t[i].name, name) == 0)
			return &s->t[i];
	s->t[i].name = xstrdup(name);
	s->n++;
	return &s->t[i];
}

void
seeds_ended(struct seeds *s, const struct flaky_run *run)
{
	const struct flaky_results *r = &run->results;
	const char *seed = run->rec.seed;

	if (run->rec.perturbation == NULL || seed == NULL ||
	    strcmp(run->rec.perturbation, FLAKY_PERTURB_SEED) != 0 ||
	    run->rec.incomplete != NULL)
		return;
	for (size_t i = 0; i < r->n; i++) {
		int	 o = r->v[i].outcome, dup = 0;
		struct seeds_test *t;

		if (o != FLAKY_PASS && o != FLAKY_XPASS && !FLAKY_FAILED(o))
			continue;
		t = entry(s, r->v[i].test);
		t->runs++;
		if (!FLAKY_FAILED(o))
			continue;
		t->fails++;
		for (int k = 0; k < t->nseeds; k++)
			dup |= strcmp(t->seed[k], seed) == 0;
		if (!dup && t->nseeds < SEEDS_REPLAYS_PER_TEST)
			snprintf(t->seed[t->nseeds++], sizeof t->seed[0], "%s",
			    seed);
	}
}

/* Most failures first, then by name: which tests get replays. */
static int
by_fails(const void *a, const void *b)
{
	const struct seeds_test *x = *(struct seeds_test *const *)a;
	const struct seeds_test *y = *(struct seeds_test *const *)b;

	if (x->fails != y->fails)
		return x->fails > y->fails ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The replay of seed in round (0, 1), added on first use. */
static struct seeds_replay *
replay_of(struct seeds *s, const char *seed, size_t first)
{
	for (size_t i = first; i < s->nreplay; i++)
		if (strcmp(s->replay[i].seed, seed) == 0)
			return &s->replay[i];
	s->replay = xreallocarray(s->replay, s->nreplay + 1,
	    sizeof *s->replay);
	memset(&s->replay[s->nreplay], 0, sizeof s->replay[0]);
	snprintf(s->replay[s->nreplay].seed, sizeof s->replay[0].seed, "%s",
	    seed);
	return &s->replay[s->nreplay++];
}

size_t
seeds_plan(struct seeds *s)
{
	struct seeds_test **mixed;
	size_t	 n = 0, first;

	if (s->planned)
		return 0;
	s->planned = 1;
	mixed = xcalloc(s->n ? s->n : 1, sizeof *mixed);
	for (size_t i = 0; i < s->cap; i++)
		if (s->t[i].name != NULL && s->t[i].fails > 0 &&
		    s->t[i].fails < s->t[i].runs && s->t[i].nseeds > 0)
			mixed[n++] = &s->t[i];
	qsort(mixed, n, sizeof *mixed, by_fails);
	if (n > SEEDS_REPLAY_TESTS)
		n = SEEDS_REPLAY_TESTS;
	/* a round per replay of each test: its first failing seed, then
	 * its second (or the first again); tests sharing a seed in a
	 * round share its run */
	for (int round = 0; round < SEEDS_REPLAYS_PER_TEST; round++) {
		first = s->nreplay;
		for (size_t i = 0; i < n; i++) {
			struct seeds_test *t = mixed[i];
			struct seeds_replay *rp = replay_of(s,
			    t->seed[round < t->nseeds ? round : 0], first);

			rp->tests = xreallocarray(rp->tests, rp->ntests + 1,
			    sizeof *rp->tests);
			rp->tests[rp->ntests++] = t->name;
		}
	}
	free(mixed);
	return s->nreplay;
}

const struct seeds_replay *
seeds_next(struct seeds *s)
{
	return s->next < s->nreplay ? &s->replay[s->next++] : NULL;
}

void
seeds_free(struct seeds *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->t[i].name);
	free(s->t);
	for (size_t i = 0; i < s->nreplay; i++)
		free(s->replay[i].tests);
	free(s->replay);
	memset(s, 0, sizeof *s);
}
