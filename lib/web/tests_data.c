/* What the tests page and the API read for a window: every test's row,
 * the history (trend, budget, quarantine, days) and the signatures of the
 * tests that failed, in the report's order. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"
#include "web_int.h"

/* Signatures for the tests that failed above noise; order evidence for
 * the critical and warning ones (as report reads them). */
static int
load_sigs(struct web_ctx *c, struct web_tests *t)
{
	int64_t	*ids = calloc(t->n + 1, sizeof *ids);
	int64_t	*vic = calloc(t->n + 1, sizeof *vic);
	size_t	 ni = 0, nv = 0;
	int	 r = 0;

	if (ids == NULL || vic == NULL) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct flaky_test_row *w = &t->rows[i];
		int	 tier = flaky_tier(w->failures, w->runs);

		if (w->failures == 0 || tier == FLAKY_TIER_NOISE)
			continue;
		ids[ni++] = w->test_id;
		if (tier == FLAKY_TIER_CRITICAL || tier == FLAKY_TIER_WARNING)
			vic[nv++] = w->test_id;
	}
	if (ni > 0)
		r = flaky_test_signatures(c->st, &c->q, ids, ni, vic, nv,
		    &t->sigs, &t->nsigs, c->err, sizeof c->err);
out:
	free(ids);
	free(vic);
	return r;
}

int
web_tests_load(struct web_ctx *c, struct web_tests *t, int full)
{
	int	 r;

	memset(t, 0, sizeof *t);
	if (full)
		r = flaky_store_test_stats(c->st, &c->q, &t->rows, &t->n,
		    c->err, sizeof c->err);
	else
		r = flaky_store_test_counts(c->st, &c->q, &t->rows, &t->n,
		    c->err, sizeof c->err);
	if (r < 0 || (r = flaky_store_history(c->st, &c->q,
	    &t->hist, c->err, sizeof c->err)) < 0)
		return r;
	flaky_test_rows_sort(t->rows, t->n);
	return load_sigs(c, t);
}

void
web_tests_free(struct web_tests *t)
{
	flaky_test_rows_free(t->rows, t->n);
	flaky_history_free(&t->hist);
	flaky_test_sigs_free(t->sigs, t->nsigs);
	memset(t, 0, sizeof *t);
}

const char *
web_tests_sig(const struct web_tests *t, int64_t test_id)
{
	const struct flaky_test_sig *s;

	if (t->sigs == NULL)
		return NULL;
	s = flaky_test_sig_find(t->sigs, t->nsigs, test_id);
	return s != NULL ? s->signature : NULL;
}
