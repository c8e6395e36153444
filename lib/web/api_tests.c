/* /api/v1/tests with the filters of the tests page, /api/v1/test/ID as a
 * test's whole story (its page's facts), its actions, the newest actions
 * and flips, and the overview's trends (docs/api.md). */
#include "buildconf.h"

#include "diagnose/diagnose.h"
#include "json/json.h"
#include "stats/stats.h"
#include "web_int.h"

static const char *const tests_params[] = { "target", "tier", "box", "q",
	"branch", "owner", "signature", "cluster", "state", NULL };
static const char *const limit_params[] = { "limit", NULL };
static const char *const trends_params[] = { "days", "target", "box",
	"branch", NULL };

/* What a filter of /api/v1/tests takes, for a 400's "expected". */
static const char *
filter_expected(const char *param)
{
	static const struct {
		const char	*p, *e;
	} v[] = {
		{ "tier", "critical, warning, broken, noise, stable or skipped" },
		{ "state", "new, flaky, fixed, quarantined, broken, stable, "
		  "skipped or no evidence" },
		{ "cluster", "a cluster's number (flakyctl clusters)" },
		{ "branch", "a branch of the runs' CI metadata" },
	};

	for (size_t i = 0; param != NULL && i < FLAKY_ARRAY_SIZE(v); i++)
		if (strcmp(param, v[i].p) == 0)
			return v[i].e;
	return "a value of at most 255 bytes";
}

/* "owners": the words of list, [] when none. */
static void
jw_owners(struct flaky_jw *w, const char *list)
{
	flaky_jw_key(w, "owners");
	flaky_jw_array_begin(w);
	for (const char *p = list; p != NULL && *p != '\0';) {
		size_t	 n = strcspn(p, " ");
		char	*o = strndup(p, n);

		flaky_jw_string(w, o);
		free(o);
		p += n;
		while (*p == ' ')
			p++;
	}
	flaky_jw_array_end(w);
}

/* One test as report --format json gives it, with its id, state, owners
 * and ticket. */
static void
test_row(struct flaky_jw *w, const struct web_tests *t, size_t i)
{
	const struct flaky_test_row *r = &t->rows[i];
	const struct flaky_history_row *h = flaky_history_find(&t->hist,
	    r->test_id);
	char	 day[16];
	size_t	 first, n;

	flaky_jw_object_begin(w);
	web_jw_int(w, "id", r->test_id);
	web_jw_str(w, "target", r->target);
	web_jw_str(w, "test", r->test);
	web_jw_rate(w, r->failures, r->runs, r->skips);
	web_jw_int(w, "skips", r->skips);
	web_jw_str(w, "state", web_state_name(t->state[i]));
	web_jw_str(w, "signature", web_tests_sig(t, r->test_id));
	web_jw_num(w, "median_ms_pass", r->median_ms_pass);
	web_jw_num(w, "median_ms_fail", r->median_ms_fail);
	web_jw_str(w, "top_message", r->top_message);
	web_jw_int(w, "top_message_count", r->top_message_count);
	web_jw_time(w, "first_seen", r->first_ms);
	web_jw_time(w, "last_seen", r->last_ms);
	web_jw_str(w, "trend", flaky_trend_name(h ? h->trend :
	    FLAKY_TREND_SAME));
	web_jw_str(w, "since", h && h->change_day >= 0 ? flaky_format_day(
	    h->change_day * FLAKY_DAY_MS, day, sizeof day) : NULL);
	web_jw_num(w, "budget_s", h ? h->budget_wall_us / 1e6 : 0);
	web_jw_num(w, "budget_cpu_s", h ? h->budget_cpu_us / 1e6 : 0);
	web_jw_int(w, "budget_runs", h ? h->budget_runs : 0);
	flaky_jw_key(w, "quarantined");
	flaky_jw_bool(w, h && h->quarantined);
	web_jw_int(w, "flips", t->flips[i]);
	jw_owners(w, t->owners[i]);
	web_jw_str(w, "ticket", web_tests_ticket(t, r->test_id));
	n = web_tests_boxes(t, r->test_id, &first);
	web_jw_boxes(w, t->boxes, n, first);
	flaky_jw_object_end(w);
}

int
web_api_tests(struct web_ctx *c, struct flaky_jw *w, const char *query)
{
	struct web_tests t;
	struct web_filters f;
	const char *bad;
	int	 r;

	if (web_api_params(c, query, tests_params))
		return 1;
	if ((r = web_filters_read(c, query, &f, &bad)) == -2)
		return -1;
	if (r < 0)
		return web_api_fail(c, 400, bad, filter_expected(bad), c->err),
		    1;
	if (web_api_box(c, query))
		return 1;
	if (f.target[0] != '\0') {
		if ((r = web_api_target_known(c, f.target)) < 0)
			return -1;
		if (r == 0)
			return web_api_bad(c, "target", "a target of the "
			    "database (/api/v1/targets)", f.target);
		c->q.target = f.target;
	}
	if (web_tests_load(c, &t, 1, &f) < 0) {
		web_tests_free(&t);
		return -1;
	}
	flaky_jw_object_begin(w);
	web_jw_time(w, "since", c->q.since_ms);
	web_jw_time(w, "until", c->q.until_ms);
	web_jw_str(w, "box", c->q.box);
	web_jw_str(w, "branch", f.branch[0] ? f.branch : NULL);
	flaky_jw_key(w, "tests");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < t.n; i++)
		if (web_tests_shown(&t, i, &f))
			test_row(w, &t, i);
	flaky_jw_array_end(w);
	flaky_jw_object_end(w);
	web_tests_free(&t);
	c->q.target = NULL;
	return 0;
}

/* One flip, as flakyctl show --format json's flip_revisions. */
static void
jw_flip(struct flaky_jw *w, const struct flaky_flip *f)
{
	web_jw_str(w, "revision", f->revision);
	web_jw_int(w, "fails", f->fails);
	web_jw_int(w, "passes", f->passes);
	web_jw_time(w, "first_run", f->first_ms);
	web_jw_time(w, "last_run", f->last_ms);
	web_jw_int(w, "failed_run_id", f->fail_run);
	web_jw_str(w, "failed_job", f->fail_job);
	flaky_jw_key(w, "failed_attempt");
	if (f->fail_attempt > 0)
		flaky_jw_int(w, f->fail_attempt);
	else
		flaky_jw_null(w);
	web_jw_int(w, "passed_run_id", f->pass_run);
	web_jw_str(w, "passed_job", f->pass_job);
	flaky_jw_key(w, "passed_attempt");
	if (f->pass_attempt > 0)
		flaky_jw_int(w, f->pass_attempt);
	else
		flaky_jw_null(w);
}

/* An action, as flakyctl actions --format json gives it. */
static void
jw_action(struct flaky_jw *w, const struct flaky_action *a)
{
	flaky_jw_object_begin(w);
	web_jw_int(w, "test_id", a->test_id);
	web_jw_str(w, "target", a->target);
	web_jw_str(w, "test", a->test);
	web_jw_str(w, "action", flaky_action_name(a->kind));
	web_jw_str(w, "value", a->value);
	web_jw_str(w, "who", a->who);
	web_jw_str(w, "via", a->via);
	web_jw_time(w, "at", a->at_ms);
	flaky_jw_object_end(w);
}

/* The story's own members (past what show --format json has). */
static void
story_json(struct web_ctx *c, struct flaky_jw *w, const struct web_story *s)
{
	struct flaky_buf b;

	web_jw_str(w, "state", web_state_name(s->state));
	web_jw_time(w, "first_failure", s->first_fail_ms);
	web_jw_time(w, "last_failure", s->last_fail_ms);
	jw_owners(w, flaky_buf_cstr((struct flaky_buf *)&s->owners));
	web_jw_str(w, "codeowners", s->codeowners);
	web_jw_str(w, "ticket", s->ticket);
	flaky_jw_key(w, "quarantine");
	if (!s->quarantined)
		flaky_jw_null(w);
	else {
		flaky_jw_object_begin(w);
		web_jw_str(w, "reason", s->q.reason);
		web_jw_str(w, "ticket", s->q.ticket);
		web_jw_time(w, "added", s->q.added_ms);
		web_jw_int(w, "passes_in_a_row", s->q.passes);
		flaky_jw_object_end(w);
	}
	flaky_jw_key(w, "branches");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < s->nbranches; i++) {
		flaky_jw_object_begin(w);
		web_jw_str(w, "branch", s->branches[i].branch);
		web_jw_int(w, "runs", s->branches[i].runs);
		web_jw_int(w, "failures", s->branches[i].failures);
		web_jw_num(w, "rate", s->branches[i].runs ? (double)
		    s->branches[i].failures / (double)s->branches[i].runs : 0);
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
	web_jw_durations(w, s->pass, s->fail);
	flaky_jw_key(w, "cluster");
	if (s->cluster == NULL)
		flaky_jw_null(w);
	else
		flaky_jw_int(w, s->cluster->id);
	web_jw_str(w, "reproduce", flaky_buf_cstr((struct flaky_buf *)
	    &s->repro));
	web_jw_int(w, "flips", (long long)s->d->nflips);
	flaky_jw_key(w, "flip_revisions");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < s->d->nflips; i++) {
		flaky_jw_object_begin(w);
		jw_flip(w, &s->d->flips[i]);
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
	flaky_buf_init(&b);
	flaky_flip_words(s->d->flips, s->d->nflips, s->d->since_ms,
	    s->d->until_ms, FLAKY_FLIP_DETAILS, &b);
	web_jw_str(w, "flip_summary", b.len ? flaky_buf_cstr(&b) : NULL);
	flaky_buf_free(&b);
	flaky_jw_key(w, "actions");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < s->nactions; i++)
		jw_action(w, &s->actions[i]);
	flaky_jw_array_end(w);
	(void)c;
}

/* A test's diagnosis: the fields of show --format json that a page
 * shows, and its newest runs. */
static void
api_diagnosis(struct flaky_jw *w, const struct flaky_diagnosis *d)
{
	web_jw_int(w, "id", d->test_id);
	web_jw_str(w, "target", d->target);
	web_jw_str(w, "test", d->test);
	web_jw_rate(w, d->failures, d->runs, d->skips);
	web_jw_str(w, "verdict", flaky_verdict_name(d->verdict));
	web_jw_str(w, "signature", d->signature);
	web_jw_str(w, "polluter", d->polluter);
	/* the set flakyctl polluter confirmed, null before (docs/api.md) */
	flaky_jw_key(w, "polluters");
	if (d->npolluters == 0)
		flaky_jw_null(w);
	else {
		flaky_jw_array_begin(w);
		for (size_t i = 0; i < d->npolluters; i++)
			flaky_jw_string(w, d->polluters[i]);
		flaky_jw_array_end(w);
	}
	flaky_jw_key(w, "polluters_minimal");
	if (d->npolluters == 0)
		flaky_jw_null(w);
	else
		flaky_jw_bool(w, d->polluters_minimal);
	web_jw_str(w, "depends_on", d->depends_on);
	flaky_jw_key(w, "alone");
	if (d->alone_runs == 0)
		flaky_jw_null(w);
	else {
		flaky_jw_object_begin(w);
		web_jw_int(w, "runs", d->alone_runs);
		web_jw_int(w, "failures", d->alone_failures);
		flaky_jw_key(w, "passes_alone");
		flaky_jw_bool(w, d->passes_alone);
		flaky_jw_object_end(w);
	}
	web_jw_boxes(w, d->boxes, d->nboxes > 1 ? d->nboxes : 0, 0);
	web_api_hangs(w, &d->hangs);
	flaky_jw_key(w, "failure_modes");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < d->nmodes; i++) {
		flaky_jw_object_begin(w);
		web_jw_int(w, "count", d->modes[i].count);
		web_jw_str(w, "signature", d->modes[i].signature);
		web_jw_str(w, "normalized", d->modes[i].normalized);
		web_jw_str(w, "example", d->modes[i].example);
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
}

int
web_api_test(struct web_ctx *c, struct flaky_jw *w, int64_t id)
{
	struct web_story s;
	struct flaky_result_row *v = NULL;
	size_t	 n = 0;
	int	 r;

	if ((r = web_story_load(c, id, &s)) < 0) {
		web_story_free(&s);
		return r == -ENOENT ? web_api_fail(c, 404, NULL, NULL,
		    c->err), 1 : -1;
	}
	if (flaky_store_test_results(c->st, id, WEB_TEST_RUNS, &v, &n,
	    c->err, sizeof c->err) < 0) {
		web_story_free(&s);
		return -1;
	}
	flaky_jw_object_begin(w);
	api_diagnosis(w, s.d);
	story_json(c, w, &s);
	flaky_jw_key(w, "runs_newest");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		flaky_jw_object_begin(w);
		web_jw_int(w, "run_id", v[i].run_id);
		web_jw_time(w, "started", v[i].started_ms);
		web_jw_str(w, "kind", flaky_run_kind_name(v[i].kind));
		web_jw_str(w, "revision", v[i].revision);
		web_jw_str(w, "box", v[i].box);
		web_jw_str(w, "outcome", flaky_outcome_name(v[i].outcome));
		web_jw_us_ms(w, "duration_ms", v[i].duration_us);
		web_jw_int(w, "position", v[i].position + 1);
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
	flaky_jw_object_end(w);
	flaky_result_rows_free(v, n);
	web_story_free(&s);
	return 0;
}

/* ?limit=N of 1 to 1000 (default def): 0, or 1 after a 400. */
static int
limit_param(struct web_ctx *c, const char *query, long long def,
    long long *ret)
{
	char	 lim[32];
	int	 r;

	*ret = def;
	if (web_api_params(c, query, limit_params))
		return 1;
	if ((r = web_param(query, "limit", lim, sizeof lim)) < 0 ||
	    (r > 0 && flaky_parse_int(lim, 1, 1000, ret) < 0))
		return web_api_bad(c, "limit", "a number from 1 to 1000", r > 0 ?
		    lim : "(malformed)");
	return 0;
}

int
web_api_actions(struct web_ctx *c, struct flaky_jw *w, int64_t id,
    const char *query)
{
	struct flaky_action *v;
	long long limit;
	size_t	 n;
	int64_t	 found = 1;

	if (limit_param(c, query, WEB_ACTIONS * 5, &limit))
		return 1;
	if (id > 0 && flaky_store_test_exists(c->st, id, &found, c->err,
	    sizeof c->err) < 0)
		return -1;
	if (!found)
		return web_api_fail(c, 404, NULL, NULL, "not found: no such "
		    "test"), 1;
	if (flaky_store_actions(c->st, id, (size_t)limit, &v, &n, c->err,
	    sizeof c->err) < 0)
		return -1;
	flaky_jw_object_begin(w);
	flaky_jw_key(w, "actions");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < n; i++)
		jw_action(w, &v[i]);
	flaky_jw_array_end(w);
	flaky_jw_object_end(w);
	flaky_actions_free(v, n);
	return 0;
}

int
web_api_flips(struct web_ctx *c, struct flaky_jw *w, const char *query)
{
	struct flaky_flip_row *v;
	long long limit;
	size_t	 n;

	if (limit_param(c, query, WEB_NEWEST * 5, &limit))
		return 1;
	if (flaky_store_flips_recent(c->st, NULL, c->q.until_ms, (size_t)limit,
	    &v, &n, c->err, sizeof c->err) < 0)
		return -1;
	flaky_jw_object_begin(w);
	flaky_jw_key(w, "flips");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		flaky_jw_object_begin(w);
		web_jw_int(w, "test_id", v[i].test_id);
		web_jw_str(w, "target", v[i].target);
		web_jw_str(w, "test", v[i].test);
		jw_flip(w, &v[i].f);
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
	flaky_jw_object_end(w);
	flaky_flip_rows_free(v, n);
	return 0;
}

int
web_api_trends(struct web_ctx *c, struct flaky_jw *w, const char *query)
{
	struct flaky_trends t;
	struct web_view v;
	char	 day[16];
	int	 r;

	if (web_api_params(c, query, trends_params))
		return 1;
	if ((r = web_view_read(c, query, &v)) == -2)
		return -1;
	if (r < 0)
		return web_api_fail(c, 400, v.bad, NULL, c->err), 1;
	if (flaky_store_trends(c->st, &c->q, v.branch[0] ? v.branch : NULL,
	    v.days, &t, c->err, sizeof c->err) < 0)
		return -1;
	flaky_jw_object_begin(w);
	web_jw_str(w, "target", c->q.target);
	web_jw_str(w, "box", c->q.box);
	web_jw_str(w, "branch", v.branch[0] ? v.branch : NULL);
	web_jw_int(w, "days", v.days);
	flaky_jw_key(w, "daily");
	flaky_jw_array_begin(w);
	for (int64_t d = 0; d < t.ndays; d++) {
		flaky_jw_object_begin(w);
		web_jw_str(w, "day", flaky_format_day((t.first_day + d) *
		    FLAKY_DAY_MS, day, sizeof day));
		web_jw_int(w, "noise", t.tiers[d][0]);
		web_jw_int(w, "warning", t.tiers[d][1]);
		web_jw_int(w, "critical", t.tiers[d][2]);
		web_jw_int(w, "broken", t.tiers[d][3]);
		web_jw_num(w, "lost_s", t.lost_us[d] / 1e6);
		web_jw_int(w, "failed_runs", t.lost_runs[d]);
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
	flaky_jw_key(w, "weekly");
	flaky_jw_array_begin(w);
	for (int64_t k = 0; k < t.nweeks; k++) {
		flaky_jw_object_begin(w);
		web_jw_str(w, "start", flaky_format_day((t.first_day + 7 * k) *
		    FLAKY_DAY_MS, day, sizeof day));
		web_jw_int(w, "introduced", t.introduced[k]);
		web_jw_int(w, "fixed", t.fixed[k]);
		web_jw_int(w, "breaks", t.breaks[k]);
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
	flaky_jw_object_end(w);
	flaky_trends_free(&t);
	c->q.target = NULL;
	return 0;
}
