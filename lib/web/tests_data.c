/* What the tests page and the API read for a window: every test's row,
 * the history (trend, budget, quarantine, days) and the signatures of the
 * tests that failed, in the report's order. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
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
	if (ni > 0 && (r = flaky_test_signatures(c->st, &c->q, ids, ni,
	    vic, nv, &t->sigs, &t->nsigs, c->err, sizeof c->err)) == 0 &&
	    (r = flaky_store_box_stats(c->st, &c->q, ids, ni, FLAKY_BOX_ROWS,
	    &t->boxes, &t->nboxes, c->err, sizeof c->err)) == 0)
		/* INFRA from one box, as report decides it */
		flaky_box_sigs(t->sigs, t->nsigs, t->boxes, t->nboxes);
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
	free(t->boxes);
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

size_t
web_tests_boxes(const struct web_tests *t, int64_t test_id, size_t *first)
{
	size_t	 i = 0, n = 0;

	while (i < t->nboxes && t->boxes[i].test_id < test_id)
		i++;
	while (i + n < t->nboxes && t->boxes[i + n].test_id == test_id)
		n++;
	*first = i;
	return n > 1 ? n : 0;
}

void
web_box_words(struct flaky_buf *b, const struct flaky_box_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		flaky_buf_printf(b, "%s%.0f%% on %s (%lld/%lld)", i ? ", " : "",
		    v[i].runs ? 100.0 * (double)v[i].failures /
		    (double)v[i].runs : 0.0, v[i].box,
		    (long long)v[i].failures, (long long)v[i].runs);
}

int
web_box_param(struct web_ctx *c, const char *query)
{
	char	 why[160];
	int	 r;

	if ((r = web_param(query, "box", c->box, sizeof c->box)) == 0)
		return 0;
	if (r < 0 || flaky_box_check(c->box, why, sizeof why) < 0) {
		snprintf(c->err, sizeof c->err, "box: expected a box name (1 "
		    "to %d letters, digits, '.', '-' or '_')", FLAKY_BOX_MAX);
		return -1;
	}
	if ((r = flaky_store_box_known(c->st, c->box, c->err,
	    sizeof c->err)) < 0)
		return -2;
	if (r == 0) {
		snprintf(c->err, sizeof c->err, "box: no run of box '%s' is "
		    "stored: expected one of the runs' boxes", c->box);
		return -1;
	}
	c->q.box = c->box;
	return 1;
}

char **
web_window_boxes(struct web_ctx *c, size_t *n)
{
	char	**v = NULL, err[256];

	*n = 0;
	if (c->single || flaky_store_box_names(c->st, c->q.since_ms, &v, n,
	    err, sizeof err) < 0)
		return NULL;
	if (*n < 2 && c->q.box == NULL) {
		flaky_store_names_free(v);
		*n = 0;
		return NULL;
	}
	return v;
}
