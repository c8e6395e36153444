/* What the tests page and the API read for a window: every test's row,
 * the history (trend, budget, quarantine, days) and the signatures of the
 * tests that failed, in the report's order; each test's state, owners
 * (its note's, then CODEOWNERS') and ticket; and the filters both take
 * (docs/dashboard.md "Find anything"), read from the same parameters. */
#include "buildconf.h"

#include <strings.h>

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

/* Each row's state, from its counts and history (state.c). */
static void
load_states(struct web_ctx *c, struct web_tests *t)
{
	int64_t	 today = (c->q.until_ms - 1) / FLAKY_DAY_MS;

	for (size_t i = 0; i < t->n; i++) {
		const struct flaky_test_row *r = &t->rows[i];
		const struct flaky_history_row *h = flaky_history_find(&t->hist,
		    r->test_id);
		struct web_state_in in = {
			.runs = r->runs, .failures = r->failures,
			.skips = r->skips, .ndays = t->hist.ndays,
			.today = today, .first_fail_day = -1,
		};

		if (h != NULL) {
			in.day_runs = h->day_runs;
			in.day_failures = h->day_failures;
			in.prev_failures = h->prev_failures;
			in.quarantined = h->quarantined;
			in.first_fail_day = web_first_fail_day(
			    t->hist.first_day, h->day_failures, t->hist.ndays);
		}
		t->state[i] = web_state(&in);
	}
}

/* Each row's flips: the revisions it failed and passed on in the window
 * (issue 29), from one grouped read. */
static int
load_flips(struct web_ctx *c, struct web_tests *t)
{
	struct flaky_flip_count *v;
	size_t	 n;

	if (flaky_store_flip_counts(c->st, 0, c->q.since_ms, c->q.until_ms, &v,
	    &n, c->err, sizeof c->err) < 0)
		return -1;
	for (size_t i = 0; n > 0 && i < t->n; i++) {
		size_t	 lo = 0, hi = n;

		while (lo < hi) {
			size_t	 mid = lo + (hi - lo) / 2;

			if (v[mid].test_id < t->rows[i].test_id)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && v[lo].test_id == t->rows[i].test_id)
			t->flips[i] = v[lo].revisions;
	}
	free(v);
	return 0;
}

/* CODEOWNERS of each target with a directory, loaded once. */
struct owners_of {
	char			*target;
	struct flaky_codeowners	*co;
};

/* Each row's owners: its note's owner, then what CODEOWNERS says of its
 * file in its target's directory. */
static int
load_owners(struct web_ctx *c, struct web_tests *t)
{
	struct flaky_target_view *v = NULL;
	struct owners_of *oo = NULL;
	struct flaky_buf b;
	size_t	 nv = 0;
	char	 err[256];
	int	 r;

	if ((r = flaky_store_target_views(c->st, &v, &nv, c->err,
	    sizeof c->err)) < 0)
		return r;
	oo = calloc(nv + 1, sizeof *oo);
	for (size_t k = 0; oo != NULL && k < nv; k++) {
		char	*cmd = NULL, *dir = NULL;

		oo[k].target = v[k].name;
		/* a directory this server cannot read has no owners here */
		if (flaky_store_target_info(c->st, v[k].id, &cmd,
		    &dir, err, sizeof err) == 0)
			(void)flaky_codeowners_load(dir, &oo[k].co, err,
			    sizeof err);
		free(cmd);
		free(dir);
	}
	flaky_buf_init(&b);
	for (size_t i = 0; oo != NULL && i < t->n; i++) {
		const struct flaky_note *note = flaky_note_find(t->notes,
		    t->nnotes, t->rows[i].test_id);
		size_t	 k;

		flaky_buf_reset(&b);
		if (note != NULL && note->owner != NULL)
			flaky_buf_adds(&b, note->owner);
		for (k = 0; k < nv && strcmp(oo[k].target, t->rows[i].target);
		    k++)
			;
		if (k < nv && oo[k].co != NULL) {
			if (b.len > 0)
				flaky_buf_addc(&b, ' ');
			(void)flaky_codeowners_test(oo[k].co, t->rows[i].test,
			    &b);
		}
		if (b.len > 0 && (t->owners[i] = strdup(flaky_buf_cstr(
		    &b))) == NULL)
			r = -ENOMEM;
	}
	flaky_buf_free(&b);
	for (size_t k = 0; oo != NULL && k < nv; k++)
		flaky_codeowners_free(oo[k].co);
	free(oo);
	flaky_target_views_free(v, nv);
	if (oo == NULL || r < 0)
		return flaky_error(c->err, sizeof c->err, ENOMEM,
		    "out of memory");
	return 0;
}

int
web_tests_load(struct web_ctx *c, struct web_tests *t, int full,
    const struct web_filters *f)
{
	int	 r;

	memset(t, 0, sizeof *t);
	if (f != NULL && f->branch[0] != '\0')
		r = flaky_store_branch_counts(c->st, &c->q, f->branch,
		    &t->rows, &t->n, c->err, sizeof c->err);
	else if (full)
		r = flaky_store_test_stats(c->st, &c->q, &t->rows, &t->n,
		    c->err, sizeof c->err);
	else
		r = flaky_store_test_counts(c->st, &c->q, &t->rows, &t->n,
		    c->err, sizeof c->err);
	if (r < 0 || (r = flaky_store_history(c->st, &c->q,
	    &t->hist, c->err, sizeof c->err)) < 0)
		return r;
	flaky_test_rows_sort(t->rows, t->n);
	if ((r = load_sigs(c, t)) < 0)
		return r;
	if ((t->state = calloc(t->n + 1, sizeof *t->state)) == NULL ||
	    (t->flips = calloc(t->n + 1, sizeof *t->flips)) == NULL ||
	    (t->owners = calloc(t->n + 1, sizeof *t->owners)) == NULL)
		return flaky_error(c->err, sizeof c->err, ENOMEM,
		    "out of memory");
	load_states(c, t);
	if ((r = load_flips(c, t)) < 0)
		return r;
	if ((r = flaky_store_notes(c->st, &t->notes, &t->nnotes, c->err,
	    sizeof c->err)) < 0 || (r = load_owners(c, t)) < 0)
		return r;
	/* clusters cost a read of the window's newest runs: only asked */
	if (f != NULL && f->cluster > 0 && (r = flaky_clusters_from_store(
	    c->st, &c->q, NULL, &t->clusters, c->err, sizeof c->err)) < 0)
		return r;
	return 0;
}

void
web_tests_free(struct web_tests *t)
{
	flaky_test_rows_free(t->rows, t->n);
	flaky_history_free(&t->hist);
	flaky_test_sigs_free(t->sigs, t->nsigs);
	free(t->boxes);
	for (size_t i = 0; t->owners != NULL && i < t->n; i++)
		free(t->owners[i]);
	free(t->owners);
	free(t->state);
	free(t->flips);
	flaky_notes_free(t->notes, t->nnotes);
	flaky_clusters_free(&t->clusters);
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

const char *
web_tests_ticket(const struct web_tests *t, int64_t test_id)
{
	const struct flaky_note *n = flaky_note_find(t->notes, t->nnotes,
	    test_id);

	return n != NULL ? n->ticket : NULL;
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

/* Is owner one of the words of list (case aside)? */
static int
owner_in(const char *list, const char *owner)
{
	size_t	 n = strlen(owner);

	for (const char *p = list; p != NULL && *p != '\0';) {
		size_t	 w = strcspn(p, " ");

		if (w == n && strncasecmp(p, owner, n) == 0)
			return 1;
		p += w;
		while (*p == ' ')
			p++;
	}
	return 0;
}

int
web_tests_shown(const struct web_tests *t, size_t i,
    const struct web_filters *f)
{
	const struct flaky_test_row *r = &t->rows[i];
	const struct flaky_cluster *cl;
	const char *sig;

	if (f->target[0] && strcmp(f->target, r->target) != 0)
		return 0;
	if (f->tier[0] && strcmp(f->tier, flaky_tier_name(flaky_tier_skips(
	    r->failures, r->runs, r->skips))) != 0)
		return 0;
	sig = web_tests_sig(t, r->test_id);
	if (f->signature[0] && (sig == NULL || strcmp(sig, f->signature)))
		return 0;
	if (f->state >= 0 && t->state[i] != f->state)
		return 0;
	if (f->owner[0] && !owner_in(t->owners[i], f->owner))
		return 0;
	if (f->cluster > 0 && ((cl = flaky_cluster_of(&t->clusters,
	    r->test_id)) == NULL || cl->id != f->cluster))
		return 0;
	return f->q[0] == '\0' || strcasestr(r->test, f->q) != NULL;
}

/* A parameter into buf: 0, or -1 with c->err and *bad naming it. */
static int
param(struct web_ctx *c, const char *query, const char *key, char *buf,
    size_t len, const char **bad)
{
	if (web_param(query, key, buf, len) >= 0)
		return 0;
	*bad = key;
	snprintf(c->err, sizeof c->err, "bad request: %s: malformed or longer "
	    "than %zu bytes", key, len - 1);
	return -1;
}

int
web_filters_read(struct web_ctx *c, const char *query, struct web_filters *f,
    const char **bad)
{
	char	 num[24], st[24];
	long long v;
	int	 r;

	memset(f, 0, sizeof *f);
	f->state = -1;
	*bad = NULL;
	num[0] = st[0] = '\0';
	if (param(c, query, "target", f->target, sizeof f->target, bad) < 0 ||
	    param(c, query, "tier", f->tier, sizeof f->tier, bad) < 0 ||
	    param(c, query, "signature", f->signature, sizeof f->signature,
	    bad) < 0 || param(c, query, "q", f->q, sizeof f->q, bad) < 0 ||
	    param(c, query, "branch", f->branch, sizeof f->branch, bad) < 0 ||
	    param(c, query, "owner", f->owner, sizeof f->owner, bad) < 0 ||
	    param(c, query, "cluster", num, sizeof num, bad) < 0 ||
	    param(c, query, "state", st, sizeof st, bad) < 0)
		return -1;
	if (f->tier[0] != '\0' && flaky_tier_from_name(f->tier) < 0) {
		*bad = "tier";
		snprintf(c->err, sizeof c->err, "bad request: tier: expected "
		    "critical, warning, broken, noise, stable or skipped, got "
		    "'%.32s'", f->tier);
		return -1;
	}
	if (st[0] != '\0' && (f->state = web_state_parse(st)) < 0) {
		*bad = "state";
		snprintf(c->err, sizeof c->err, "bad request: state: expected "
		    "new, flaky, fixed, quarantined, broken, stable, skipped or "
		    "no evidence, got '%.32s'", st);
		return -1;
	}
	if (num[0] != '\0') {
		if (flaky_parse_int(num, 1, 100000, &v) < 0) {
			*bad = "cluster";
			snprintf(c->err, sizeof c->err, "bad request: cluster: "
			    "expected a cluster's number (flakyctl clusters), "
			    "got '%.16s'", num);
			return -1;
		}
		f->cluster = (int)v;
	}
	if (f->branch[0] != '\0') {
		if ((r = flaky_store_branch_known(c->st, f->branch, c->err,
		    sizeof c->err)) < 0)
			return -2;
		if (r == 0) {
			*bad = "branch";
			snprintf(c->err, sizeof c->err, "bad request: branch: no "
			    "run of branch '%.64s' is stored: expected one of "
			    "the runs' branches", f->branch);
			return -1;
		}
	}
	return 0;
}

/* k=v& of a filter that is set, for a URL that keeps the others. */
static void
keep(struct flaky_buf *b, const char *k, const char *v)
{
	if (v == NULL || *v == '\0')
		return;
	flaky_buf_printf(b, "%s%s=", b->len > 0 ? "&amp;" : "", k);
	web_urlenc(b, v);
}

void
web_filters_query(const struct web_ctx *c, const struct web_filters *f,
    struct flaky_buf *b)
{
	char	 num[16];

	keep(b, "q", f->q);
	keep(b, "target", f->target);
	keep(b, "box", c->q.box);
	keep(b, "branch", f->branch);
	keep(b, "owner", f->owner);
	keep(b, "tier", f->tier);
	keep(b, "signature", f->signature);
	if (f->cluster > 0) {
		snprintf(num, sizeof num, "%d", f->cluster);
		keep(b, "cluster", num);
	}
	if (f->state >= 0)
		keep(b, "state", web_state_name(f->state));
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

char **
web_window_branches(struct web_ctx *c, size_t *n)
{
	char	**v = NULL, err[256];

	*n = 0;
	if (c->single || flaky_store_branch_names(c->st, c->q.since_ms, &v, n,
	    err, sizeof err) < 0)
		return NULL;
	if (*n == 0) {
		flaky_store_names_free(v);
		return NULL;
	}
	return v;
}
