/* Reruns until settled: each test's failures and runs as a call's runs
 * come in, and whether every test that failed has its tier settled by the
 * confidence sequence (stats/sequential.c). flakyctl analyze
 * --until-settled and flakyd's until_settled: true stop their runs here. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipeline.h"
#include "stats/stats.h"
#include "util/util.h"

void
flaky_settle_init(struct flaky_settle *s, double alpha)
{
	memset(s, 0, sizeof *s);
	s->alpha = alpha > 0 && alpha < 1 ? alpha : FLAKY_CS_ALPHA;
}

void
flaky_settle_free(struct flaky_settle *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nt; i++)
		free(s->t[i].name);
	free(s->t);
	free(s->slot);
	memset(s, 0, sizeof *s);
}

/* Where name is or would go in the slots (1-based indices into t). */
static size_t
settle_slot(const struct flaky_settle *s, const char *name)
{
	size_t	 mask = s->nslot - 1, i;

	i = flaky_hash64(name, strlen(name), FLAKY_HASH_SEED) & mask;
	while (s->slot[i] != 0 && strcmp(s->t[s->slot[i] - 1].name, name) != 0)
		i = (i + 1) & mask;
	return i;
}

/* Room for one more test: the array and the slots (kept at most half
 * full) grow by doubling. */
static int
settle_grow(struct flaky_settle *s)
{
	struct flaky_settle_test *t;
	size_t	*slot, n;

	if (s->nt == s->cap) {
		n = s->cap ? s->cap * 2 : 64;
		if ((t = reallocarray(s->t, n, sizeof *t)) == NULL)
			return -ENOMEM;
		s->t = t;
		s->cap = n;
	}
	if ((s->nt + 1) * 2 <= s->nslot)
		return 0;
	n = s->nslot ? s->nslot * 2 : 128;
	if ((slot = calloc(n, sizeof *slot)) == NULL)
		return -ENOMEM;
	free(s->slot);
	s->slot = slot;
	s->nslot = n;
	for (size_t k = 0; k < s->nt; k++)
		s->slot[settle_slot(s, s->t[k].name)] = k + 1;
	return 0;
}

/* The test called name, added on first sight; NULL when out of memory. */
static struct flaky_settle_test *
settle_get(struct flaky_settle *s, const char *name)
{
	struct flaky_settle_test *t;
	size_t	 i;

	if (s->nslot > 0 && s->slot[i = settle_slot(s, name)] != 0)
		return &s->t[s->slot[i] - 1];
	if (settle_grow(s) < 0)
		return NULL;
	t = &s->t[s->nt];
	memset(t, 0, sizeof *t);
	if ((t->name = strdup(name)) == NULL)
		return NULL;
	t->lo = 0;
	t->hi = 1;
	s->slot[settle_slot(s, name)] = ++s->nt;
	return t;
}

int
flaky_settle_count(struct flaky_settle *s, const struct flaky_results *r)
{
	s->runs++;
	for (size_t i = 0; r != NULL && i < r->n; i++) {
		int	 o = r->v[i].outcome, was;
		struct flaky_settle_test *t;

		if (o != FLAKY_PASS && o != FLAKY_XPASS && !FLAKY_FAILED(o))
			continue;
		if ((t = settle_get(s, r->v[i].test)) == NULL)
			return -ENOMEM;
		was = t->failures > 0 && !t->settled;
		t->runs++;
		t->failures += FLAKY_FAILED(o);
		t->settled = flaky_cs_settled(t->failures, t->runs, s->alpha,
		    &t->lo, &t->hi);
		s->open += (t->failures > 0 && !t->settled) - was;
	}
	return 0;
}

int
flaky_settle_done(const struct flaky_settle *s, int min_runs)
{
	/* Runs in which no test was recognized settle nothing. */
	return s->runs >= min_runs && s->runs > 0 && s->nt > 0 &&
	    s->open == 0;
}

int
flaky_settle_is_open(const struct flaky_settle_test *t)
{
	return t->failures > 0 && !t->settled;
}

size_t
flaky_settle_open_tests(const struct flaky_settle *s, const char **v,
    size_t cap)
{
	size_t	 n = 0;

	for (size_t i = 0; i < s->nt && n < cap; i++)
		if (flaky_settle_is_open(&s->t[i]))
			v[n++] = s->t[i].name;
	return n;
}
