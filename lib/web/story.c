/* A test's whole story, read once for its page and for /api/v1/test/ID
 * (issue 32, docs/dashboard.md "A test's page"): the diagnosis of the
 * window, its state, first and last failure, owners (its note's, then
 * CODEOWNERS' of its file), ticket, quarantine, rates per branch,
 * durations passing and failing, its co-failure cluster, the command that
 * reproduces it and the actions taken on it. */
#include "buildconf.h"

#include "stats/stats.h"
#include "web_int.h"

/* Its quarantine row, if any. */
static int
story_quarantine(struct web_ctx *c, struct web_story *s)
{
	struct flaky_quarantine_row *v;
	size_t	 n;

	if (flaky_store_quarantine_list(c->st, &v, &n, c->err,
	    sizeof c->err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (v[i].test_id == s->d->test_id) {
			s->q = v[i];
			s->quarantined = 1;
			memset(&v[i], 0, sizeof v[i]);
		}
	flaky_quarantine_rows_free(v, n);
	return 0;
}

/* Its state from the window's days and the window before (state.c). */
static int
story_state(struct web_ctx *c, struct web_story *s)
{
	const struct flaky_diagnosis *d = s->d;
	int64_t	 last = (c->q.until_ms - 1) / FLAKY_DAY_MS, first, nd;
	struct web_state_in in;
	uint32_t *runs, *fails;
	int64_t	 prev = 0;
	int	 r;

	first = c->q.since_ms == INT64_MIN ? last - WEB_CHART_DAYS + 1 :
	    c->q.since_ms / FLAKY_DAY_MS;
	nd = last - first + 1;
	runs = calloc(2 * (size_t)nd, sizeof *runs);
	fails = calloc(2 * (size_t)nd, sizeof *fails);
	if (runs == NULL || fails == NULL ||
	    (r = flaky_store_test_days(c->st, d->test_id, first - nd, 2 * nd,
	    runs, fails, c->err, sizeof c->err)) < 0) {
		free(runs);
		free(fails);
		return -1;
	}
	for (int64_t k = 0; k < nd; k++)
		prev += fails[k];
	memset(&in, 0, sizeof in);
	in.runs = d->runs;
	in.failures = d->failures;
	in.skips = d->skips;
	in.day_runs = runs + nd;
	in.day_failures = fails + nd;
	in.ndays = nd;
	in.prev_failures = prev;
	in.quarantined = s->quarantined;
	in.today = last;
	in.first_fail_day = web_first_fail_day(first, fails + nd, nd);
	s->state = web_state(&in);
	free(runs);
	free(fails);
	return 0;
}

/* Its owners: its note's, then CODEOWNERS' in its target's directory. */
static int
story_owners(struct web_ctx *c, struct web_story *s)
{
	struct flaky_codeowners *co = NULL;
	char	 err[256];

	flaky_buf_init(&s->owners);
	if (s->note.owner != NULL)
		flaky_buf_adds(&s->owners, s->note.owner);
	if (flaky_codeowners_load(s->d->dir, &co, err, sizeof err) < 0 ||
	    co == NULL)
		return 0;	/* no file, or none this server can read */
	s->codeowners = strdup(flaky_codeowners_file(co));
	flaky_buf_init(&s->from_file);
	(void)flaky_codeowners_test(co, s->d->test, &s->from_file);
	if (s->from_file.len > 0) {
		if (s->owners.len > 0)
			flaky_buf_addc(&s->owners, ' ');
		flaky_buf_adds(&s->owners, flaky_buf_cstr(&s->from_file));
	}
	flaky_codeowners_free(co);
	return s->owners.oom || s->from_file.oom ? flaky_error(c->err,
	    sizeof c->err, ENOMEM, "out of memory") : 0;
}

/* Its co-failure cluster among its target's tests in the window. */
static int
story_cluster(struct web_ctx *c, struct web_story *s)
{
	struct flaky_query q = c->q;

	if (s->d->failures < FLAKY_CLUSTER_MIN_FAILS)
		return 0;	/* too few failures to be in one */
	q.target = s->d->target;
	if (flaky_clusters_from_store(c->st, &q, NULL, &s->clusters, c->err,
	    sizeof c->err) < 0)
		return -1;
	s->cluster = flaky_cluster_of(&s->clusters, s->d->test_id);
	return 0;
}

int
web_story_load(struct web_ctx *c, int64_t id, struct web_story *s)
{
	int	 r;

	memset(s, 0, sizeof *s);
	flaky_buf_init(&s->owners);
	flaky_buf_init(&s->from_file);
	flaky_buf_init(&s->repro);
	if ((r = flaky_diagnose_test(c->st, id, &c->q, &s->d, c->err,
	    sizeof c->err)) < 0)
		return r;
	if (story_quarantine(c, s) < 0 ||
	    (r = flaky_store_note(c->st, id, &s->note, c->err,
	    sizeof c->err)) < 0 ||
	    story_state(c, s) < 0 || story_owners(c, s) < 0 ||
	    flaky_store_test_failed_span(c->st, id, &s->first_fail_ms,
	    &s->last_fail_ms, c->err, sizeof c->err) < 0 ||
	    flaky_store_branch_stats(c->st, &c->q, id, &s->branches,
	    &s->nbranches, c->err, sizeof c->err) < 0 ||
	    flaky_store_test_hists(c->st, id, &c->q, s->pass, s->fail, c->err,
	    sizeof c->err) < 0 || story_cluster(c, s) < 0 ||
	    flaky_store_actions(c->st, id, WEB_ACTIONS, &s->actions,
	    &s->nactions, c->err, sizeof c->err) < 0)
		return -EIO;
	s->ticket = s->note.ticket != NULL ? s->note.ticket :
	    s->quarantined ? s->q.ticket : NULL;
	flaky_repro(s->d, NULL, &s->repro);
	return s->repro.oom ? -ENOMEM : 0;
}

void
web_story_free(struct web_story *s)
{
	flaky_diagnosis_free(s->d);
	free(s->q.target);
	free(s->q.test);
	free(s->q.reason);
	free(s->q.ticket);
	free(s->q.runner);
	flaky_note_clear(&s->note);
	flaky_buf_free(&s->owners);
	flaky_buf_free(&s->from_file);
	flaky_buf_free(&s->repro);
	free(s->codeowners);
	flaky_branch_rows_free(s->branches, s->nbranches);
	flaky_clusters_free(&s->clusters);
	flaky_actions_free(s->actions, s->nactions);
	memset(s, 0, sizeof *s);
}
