/* /api/v1/: targets, tests, test/ID, runs, run/ID and trend as JSON, in
 * the field names of flakyctl's --format json (docs/api.md). Every string
 * goes through the tree's one JSON escaper (lib/json). A parameter the
 * path does not take, one given twice, or a value it does not accept is
 * a 400 whose JSON names the parameter and what was expected. */
#include "buildconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diagnose.h"
#include "json/json.h"
#include "stats/stats.h"
#include "web_int.h"

int
web_api_fail(struct web_ctx *c, int status, const char *param,
    const char *expected, const char *msg)
{
	struct flaky_jw	 w;
	char		 line[sizeof c->err];

	/* msg may be c->err, which the reply does not overwrite; a failure
	 * names the database, which is none of an HTTP client's business
	 * (a server's address: the text replies are scrubbed so too) */
	if (status >= 500 && c->st != NULL) {
		const char *name = flaky_store_name(c->st);
		size_t	 n = strlen(name);

		if (strncmp(msg, name, n) == 0 && strncmp(msg + n, ": ", 2) == 0)
			msg += n + 2;
	}
	snprintf(line, sizeof line, "%s", msg);
	c->status = status;
	c->json_err = 1;
	flaky_buf_reset(c->b);
	flaky_jw_init(&w, c->b);
	flaky_jw_object_begin(&w);
	flaky_jw_key(&w, "error");
	flaky_jw_string(&w, line);
	flaky_jw_key(&w, "status");
	flaky_jw_int(&w, status);
	flaky_jw_key(&w, "parameter");
	flaky_jw_string(&w, param);
	flaky_jw_key(&w, "expected");
	flaky_jw_string(&w, expected);
	flaky_jw_object_end(&w);
	(void)flaky_jw_finish(&w);
	flaky_buf_addc(c->b, '\n');
	return 0;
}

/* A 400 about one parameter: "bad request: tier: expected critical, ...,
 * got 'bogus'" with the parameter and what it takes as fields. 1, what
 * the handlers return for a reply already made. */
static int
bad_param(struct web_ctx *c, const char *param, const char *expected,
    const char *got)
{
	char	 msg[sizeof c->err];

	if (got != NULL)
		snprintf(msg, sizeof msg, "bad request: %s: expected %s, got "
		    "'%.64s'", param, expected, got);
	else
		snprintf(msg, sizeof msg, "bad request: %s: expected %s",
		    param, expected);
	web_api_fail(c, 400, param, expected, msg);
	return 1;
}

/* The parameters a path takes, NULL-terminated. */
static const char *const no_params[] = { NULL };
static const char *const tests_params[] = { "target", "tier", "box", NULL };
static const char *const runs_params[] = { "limit", "target_id", "box",
	NULL };
static const char *const trend_params[] = { "id", "weeks", NULL };

/* Every parameter of query is one of known, given once with a value: 0,
 * else 1 after a 400 naming the first that is not. */
static int
check_params(struct web_ctx *c, const char *query, const char *const *known)
{
	char	 key[65], expected[128];
	const char *p = query, *q;
	size_t	 n, kl;

	expected[0] = '\0';
	for (size_t i = 0; known[i] != NULL; i++)
		snprintf(expected + strlen(expected), sizeof expected -
		    strlen(expected), "%s%s", i == 0 ? "" : known[i + 1] ?
		    ", " : " or ", known[i]);
	for (; p != NULL && *p != '\0'; p += n + (p[n] != '\0')) {
		int	 k, seen = 0;

		n = strcspn(p, "&;");
		if (n == 0)
			continue;
		kl = strcspn(p, "=&;");
		snprintf(key, sizeof key, "%.*s", (int)(kl < 64 ? kl : 64), p);
		for (k = 0; known[k] != NULL && strcmp(known[k], key) != 0; k++)
			;
		if (known[k] == NULL)
			return bad_param(c, key, known[0] == NULL ? "no "
			    "parameters" : expected, NULL);
		if (kl == n)
			return bad_param(c, key, "a value (KEY=VALUE)", NULL);
		/* the same key again further on */
		for (q = query; q != NULL && *q != '\0'; q += strcspn(q,
		    "&;") + (q[strcspn(q, "&;")] != '\0'))
			seen += strncmp(q, key, kl) == 0 && (q[kl] == '=' ||
			    q[kl] == '&' || q[kl] == ';' || q[kl] == '\0');
		if (seen > 1)
			return bad_param(c, key, "it once", NULL);
	}
	return 0;
}

int
web_api_params(struct web_ctx *c, const char *query,
    const char *const *known)
{
	return check_params(c, query, known);
}

int
web_api_bad(struct web_ctx *c, const char *param, const char *expected,
    const char *got)
{
	return bad_param(c, param, expected, got);
}

/* A key and a time as report --format json writes it, null when none. */
static void
jw_time(struct flaky_jw *w, const char *key, int64_t ms)
{
	char	 t[32];

	flaky_jw_key(w, key);
	if (ms == 0 || ms == INT64_MIN || ms == INT64_MAX)
		flaky_jw_null(w);
	else
		flaky_jw_string(w, flaky_format_time(ms, t, sizeof t));
}

void
jw_str(struct flaky_jw *w, const char *key, const char *v)
{
	flaky_jw_key(w, key);
	flaky_jw_string(w, v);
}

void
jw_int(struct flaky_jw *w, const char *key, long long v)
{
	flaky_jw_key(w, key);
	flaky_jw_int(w, v);
}

static void
jw_num(struct flaky_jw *w, const char *key, double v)
{
	flaky_jw_key(w, key);
	flaky_jw_double(w, v);
}

/* Microseconds as milliseconds, null when unknown. */
static void
jw_us_ms(struct flaky_jw *w, const char *key, int64_t us)
{
	flaky_jw_key(w, key);
	if (us < 0)
		flaky_jw_null(w);
	else
		flaky_jw_double(w, us / 1e3);
}

/* runs, failures, fail_rate, ci_low, ci_high and tier of k in n (and
 * skips: a test with no counted run is skipped or has no evidence). */
static void
jw_rate(struct flaky_jw *w, int64_t k, int64_t n, int64_t skips)
{
	double	 lo, hi;

	flaky_wilson(k, n, FLAKY_Z95, &lo, &hi);
	jw_int(w, "runs", n);
	jw_int(w, "failures", k);
	jw_num(w, "fail_rate", n ? (double)k / n : 0);
	jw_num(w, "ci_low", lo);
	jw_num(w, "ci_high", hi);
	jw_str(w, "tier", flaky_tier_name(flaky_tier_skips(k, n, skips)));
}

static int
api_targets(struct web_ctx *c, struct flaky_jw *w)
{
	struct flaky_target_view *v;
	size_t	 n;

	if (flaky_store_target_views(c->st, &v, &n, c->err,
	    sizeof c->err) < 0)
		return -1;
	flaky_jw_object_begin(w);
	flaky_jw_key(w, "targets");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		const struct flaky_web_target *t = NULL;
		struct flaky_last_run lr;

		for (size_t j = 0; c->o->targets && j < c->o->ntargets; j++)
			if (strcmp(c->o->targets[j].name, v[i].name) == 0)
				t = &c->o->targets[j];
		if (flaky_store_last_run(c->st, v[i].id, &lr, c->err,
		    sizeof c->err) < 0)
			break;
		flaky_jw_object_begin(w);
		jw_int(w, "id", v[i].id);
		jw_str(w, "target", v[i].name);
		jw_str(w, "command", v[i].command);
		jw_str(w, "schedule", t ? t->schedule : NULL);
		jw_time(w, "next_fire", t ? t->next_fire_ms : 0);
		jw_time(w, "last_fire", v[i].last_fire_ms == FLAKY_NO_FIRE ?
		    0 : v[i].last_fire_ms);
		flaky_jw_key(w, "last_run");
		if (lr.run_id == 0)
			flaky_jw_null(w);
		else {
			flaky_jw_object_begin(w);
			jw_int(w, "id", lr.run_id);
			jw_str(w, "status", flaky_run_status_name(lr.status));
			jw_time(w, "started", lr.started_ms);
			jw_int(w, "tests", lr.tests);
			jw_int(w, "failures", lr.failures);
			flaky_jw_object_end(w);
		}
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
	flaky_jw_object_end(w);
	flaky_target_views_free(v, n);
	return c->err[0] ? -1 : 0;
}

/* "boxes": the rates per box of v[first..first + n), as report's JSON
 * gives them ([] for a test of one box). */
static void
jw_boxes(struct flaky_jw *w, const struct flaky_box_row *v, size_t n,
    size_t first)
{
	flaky_jw_key(w, "boxes");
	flaky_jw_array_begin(w);
	for (size_t i = first; i < first + n; i++) {
		flaky_jw_object_begin(w);
		jw_str(w, "box", v[i].box);
		jw_int(w, "runs", v[i].runs);
		jw_int(w, "failures", v[i].failures);
		jw_num(w, "rate", v[i].runs ? (double)v[i].failures /
		    (double)v[i].runs : 0);
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
}

/* One test as report --format json gives it, with its id. */
static void
api_test_row(struct flaky_jw *w, const struct web_tests *t,
    const struct flaky_test_row *r)
{
	const struct flaky_history_row *h = flaky_history_find(&t->hist,
	    r->test_id);
	char	 day[16];
	size_t	 first, n;

	flaky_jw_object_begin(w);
	jw_int(w, "id", r->test_id);
	jw_str(w, "target", r->target);
	jw_str(w, "test", r->test);
	jw_rate(w, r->failures, r->runs, r->skips);
	jw_int(w, "skips", r->skips);
	jw_str(w, "signature", web_tests_sig(t, r->test_id));
	jw_num(w, "median_ms_pass", r->median_ms_pass);
	jw_num(w, "median_ms_fail", r->median_ms_fail);
	jw_str(w, "top_message", r->top_message);
	jw_int(w, "top_message_count", r->top_message_count);
	jw_time(w, "first_seen", r->first_ms);
	jw_time(w, "last_seen", r->last_ms);
	jw_str(w, "trend", flaky_trend_name(h ? h->trend : FLAKY_TREND_SAME));
	jw_str(w, "since", h && h->change_day >= 0 ? flaky_format_day(
	    h->change_day * FLAKY_DAY_MS, day, sizeof day) : NULL);
	jw_num(w, "budget_s", h ? h->budget_wall_us / 1e6 : 0);
	jw_num(w, "budget_cpu_s", h ? h->budget_cpu_us / 1e6 : 0);
	jw_int(w, "budget_runs", h ? h->budget_runs : 0);
	flaky_jw_key(w, "quarantined");
	flaky_jw_bool(w, h && h->quarantined);
	n = web_tests_boxes(t, r->test_id, &first);
	jw_boxes(w, t->boxes, n, first);
	flaky_jw_object_end(w);
}

/* Is name a target of the database? 1, 0, or -1 with c->err. */
static int
target_known(struct web_ctx *c, const char *name)
{
	char	**names;
	size_t	 n;
	int	 found = 0;

	if (flaky_store_target_names(c->st, &names, &n, c->err,
	    sizeof c->err) < 0)
		return -1;
	for (size_t i = 0; i < n && !found; i++)
		found = strcmp(names[i], name) == 0;
	flaky_store_names_free(names);
	return found;
}

/* ?box=: 0, or 1 after the reply (400 or 500). */
static int
box_filter(struct web_ctx *c, const char *query)
{
	char	 got[WEB_PARAM_MAX];
	int	 r = web_box_param(c, query);

	if (r >= 0)
		return 0;
	if (r == -2)
		return web_api_fail(c, 500, NULL, NULL, c->err), 1;
	if (web_param(query, "box", got, sizeof got) < 0)
		snprintf(got, sizeof got, "(malformed)");
	return bad_param(c, "box", "one of the runs' boxes (a name of 1 to 64 "
	    "letters, digits, '.', '-' or '_')", got);
}

static int
api_tests(struct web_ctx *c, struct flaky_jw *w, const char *query)
{
	static const char tiers[] = "critical, warning, broken, noise or "
	    "stable";
	struct web_tests t;
	char	 target[WEB_PARAM_MAX], tier[32];
	int	 r;

	target[0] = tier[0] = '\0';
	if (check_params(c, query, tests_params))
		return 1;
	if (web_param(query, "target", target, sizeof target) < 0)
		return bad_param(c, "target", "a target's name", NULL);
	if (web_param(query, "tier", tier, sizeof tier) < 0 ||
	    (tier[0] != '\0' && flaky_tier_from_name(tier) < 0))
		return bad_param(c, "tier", tiers, tier[0] ? tier :
		    "(malformed)");
	if (box_filter(c, query))
		return 1;
	if (target[0] != '\0') {
		if ((r = target_known(c, target)) < 0)
			return -1;
		if (r == 0)
			return bad_param(c, "target", "a target of the "
			    "database (/api/v1/targets)", target);
		c->q.target = target;
	}
	if (web_tests_load(c, &t, 1) < 0) {
		web_tests_free(&t);
		return -1;
	}
	flaky_jw_object_begin(w);
	jw_time(w, "since", c->q.since_ms);
	jw_time(w, "until", c->q.until_ms);
	jw_str(w, "box", c->q.box);
	flaky_jw_key(w, "tests");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < t.n; i++)
		if (tier[0] == '\0' || strcmp(tier, flaky_tier_name(
		    flaky_tier_skips(t.rows[i].failures, t.rows[i].runs,
		    t.rows[i].skips))) == 0)
			api_test_row(w, &t, &t.rows[i]);
	flaky_jw_array_end(w);
	flaky_jw_object_end(w);
	web_tests_free(&t);
	c->q.target = NULL;
	return 0;
}

/* A run's fields, without its output and results. */
static void
api_run_fields(struct flaky_jw *w, const struct flaky_run_view *v)
{
	jw_int(w, "id", v->id);
	jw_str(w, "target", v->target);
	jw_str(w, "status", v->status);
	jw_str(w, "kind", v->kind);
	jw_str(w, "trigger", v->trigger);
	jw_time(w, "started", v->started_ms);
	jw_time(w, "ended", v->ended_ms);
	jw_us_ms(w, "duration_ms", v->duration_us);
	flaky_jw_key(w, "exit_code");
	if (v->exit_code < 0)
		flaky_jw_null(w);
	else
		flaky_jw_int(w, v->exit_code);
	jw_int(w, "signal", v->signal);
	jw_str(w, "revision", v->revision);
	jw_str(w, "runner", v->runner);
	jw_str(w, "seed", v->seed);
	jw_str(w, "perturbation", v->perturbation);
	jw_str(w, "box", v->box);
	jw_int(w, "tests", v->tests);
	jw_int(w, "failures", v->failures);
	jw_str(w, "incomplete", v->incomplete);
	jw_str(w, "error", v->error);
}

/* Is id a target's id? 1, 0, or -1 with c->err. */
static int
target_id_known(struct web_ctx *c, int64_t id)
{
	struct flaky_target_view *v;
	size_t	 n;
	int	 found = 0;

	if (flaky_store_target_views(c->st, &v, &n, c->err,
	    sizeof c->err) < 0)
		return -1;
	for (size_t i = 0; i < n && !found; i++)
		found = v[i].id == id;
	flaky_target_views_free(v, n);
	return found;
}

static int
api_runs(struct web_ctx *c, struct flaky_jw *w, const char *query)
{
	struct flaky_run_view *v;
	char	 lim[32];
	long long max = WEB_RUNS, tid = 0;
	size_t	 n;
	int	 r;

	if (check_params(c, query, runs_params))
		return 1;
	if ((r = web_param(query, "limit", lim, sizeof lim)) < 0 ||
	    (r > 0 && flaky_parse_int(lim, 1, 1000, &max) < 0))
		return bad_param(c, "limit", "a number from 1 to 1000", r > 0 ?
		    lim : "(malformed)");
	if ((r = web_param(query, "target_id", lim, sizeof lim)) < 0 ||
	    (r > 0 && flaky_parse_int(lim, 1, INT64_MAX, &tid) < 0))
		return bad_param(c, "target_id", "a target's id (the id of "
		    "/api/v1/targets)", r > 0 ? lim : "(malformed)");
	if (tid > 0 && (r = target_id_known(c, tid)) <= 0) {
		if (r < 0)
			return -1;
		return bad_param(c, "target_id", "a target's id (the id of "
		    "/api/v1/targets)", lim);
	}
	if (box_filter(c, query))
		return 1;
	if (flaky_store_runs_recent(c->st, tid, c->q.box, (size_t)max, &v, &n,
	    c->err, sizeof c->err) < 0)
		return -1;
	flaky_jw_object_begin(w);
	flaky_jw_key(w, "runs");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		flaky_jw_object_begin(w);
		api_run_fields(w, &v[i]);
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
	flaky_jw_object_end(w);
	flaky_run_views_free(v, n);
	return 0;
}

static int
api_run(struct web_ctx *c, struct flaky_jw *w, int64_t id)
{
	struct flaky_run_view v;
	struct flaky_run_result *res;
	size_t	 n;
	int	 r;

	if ((r = flaky_store_run_view(c->st, id, &v, c->err,
	    sizeof c->err)) < 0)
		return r == -ENOENT ? web_api_fail(c, 404, NULL, NULL,
		    c->err), 1 : -1;
	if (flaky_store_run_results(c->st, id, &res, &n, c->err,
	    sizeof c->err) < 0) {
		flaky_run_view_clear(&v);
		return -1;
	}
	flaky_jw_object_begin(w);
	api_run_fields(w, &v);
	jw_str(w, "stdout", v.out);
	jw_str(w, "stderr", v.err);
	flaky_jw_key(w, "results");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		flaky_jw_object_begin(w);
		/* counted from 1, as the pages and show count (the
		 * database's results.position is 0-based) */
		jw_int(w, "position", res[i].position + 1);
		jw_int(w, "test_id", res[i].test_id);
		jw_str(w, "test", res[i].test);
		jw_str(w, "outcome", flaky_outcome_name(res[i].outcome));
		jw_us_ms(w, "duration_ms", res[i].duration_us);
		jw_str(w, "signature", res[i].signature);
		jw_str(w, "message", res[i].message);
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
	r = web_api_run_stacks(c, w, id);
	flaky_jw_object_end(w);
	flaky_run_results_free(res, n);
	flaky_run_view_clear(&v);
	return r;
}

/* A test's diagnosis: the fields of show --format json that a page
 * shows, and its newest runs. */
static void
api_diagnosis(struct flaky_jw *w, const struct flaky_diagnosis *d)
{
	jw_int(w, "id", d->test_id);
	jw_str(w, "target", d->target);
	jw_str(w, "test", d->test);
	jw_rate(w, d->failures, d->runs, d->skips);
	jw_str(w, "verdict", flaky_verdict_name(d->verdict));
	jw_str(w, "signature", d->signature);
	jw_str(w, "polluter", d->polluter);
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
	jw_str(w, "depends_on", d->depends_on);
	flaky_jw_key(w, "alone");
	if (d->alone_runs == 0)
		flaky_jw_null(w);
	else {
		flaky_jw_object_begin(w);
		jw_int(w, "runs", d->alone_runs);
		jw_int(w, "failures", d->alone_failures);
		flaky_jw_key(w, "passes_alone");
		flaky_jw_bool(w, d->passes_alone);
		flaky_jw_object_end(w);
	}
	jw_boxes(w, d->boxes, d->nboxes > 1 ? d->nboxes : 0, 0);
	web_api_hangs(w, &d->hangs);
	flaky_jw_key(w, "failure_modes");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < d->nmodes; i++) {
		flaky_jw_object_begin(w);
		jw_int(w, "count", d->modes[i].count);
		jw_str(w, "signature", d->modes[i].signature);
		jw_str(w, "normalized", d->modes[i].normalized);
		jw_str(w, "example", d->modes[i].example);
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
}

static int
api_test(struct web_ctx *c, struct flaky_jw *w, int64_t id)
{
	struct flaky_diagnosis *d;
	struct flaky_result_row *v;
	size_t	 n;
	int	 r;

	if ((r = flaky_diagnose_test(c->st, id, &c->q, &d, c->err,
	    sizeof c->err)) < 0)
		return r == -ENOENT ? web_api_fail(c, 404, NULL, NULL,
		    c->err), 1 : -1;
	if (flaky_store_test_results(c->st, id, WEB_TEST_RUNS, &v, &n,
	    c->err, sizeof c->err) < 0) {
		flaky_diagnosis_free(d);
		return -1;
	}
	flaky_jw_object_begin(w);
	api_diagnosis(w, d);
	flaky_jw_key(w, "runs_newest");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		flaky_jw_object_begin(w);
		jw_int(w, "run_id", v[i].run_id);
		jw_time(w, "started", v[i].started_ms);
		jw_str(w, "kind", flaky_run_kind_name(v[i].kind));
		jw_str(w, "revision", v[i].revision);
		jw_str(w, "box", v[i].box);
		jw_str(w, "outcome", flaky_outcome_name(v[i].outcome));
		jw_us_ms(w, "duration_ms", v[i].duration_us);
		jw_int(w, "position", v[i].position + 1);
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
	flaky_jw_object_end(w);
	flaky_result_rows_free(v, n);
	flaky_diagnosis_free(d);
	return 0;
}

/* flakyctl trend --format json for a test id: weekly rates. */
static int
api_trend(struct web_ctx *c, struct flaky_jw *w, const char *query)
{
	struct flaky_test_ref *refs = NULL;
	uint32_t runs[52 * 7], fails[52 * 7];
	char	 buf[32], day[16];
	long long id = 0, weeks = 8;
	int64_t	 first;
	size_t	 n = 0, k;
	int	 r;

	if (check_params(c, query, trend_params))
		return 1;
	if ((r = web_param(query, "id", buf, sizeof buf)) != 1 ||
	    flaky_parse_int(buf, 1, INT64_MAX, &id) < 0)
		return bad_param(c, "id", "a test's id (the id of "
		    "/api/v1/tests)", r > 0 ? buf : r == 0 ? "nothing" :
		    "(malformed)");
	if ((r = web_param(query, "weeks", buf, sizeof buf)) < 0 ||
	    (r > 0 && flaky_parse_int(buf, 1, 52, &weeks) < 0))
		return bad_param(c, "weeks", "a number from 1 to 52", r > 0 ?
		    buf : "(malformed)");
	first = (c->o->now_ms - 1) / FLAKY_DAY_MS + 1 - 7 * weeks;
	if (flaky_store_tests(c->st, NULL, &refs, &n, c->err,
	    sizeof c->err) < 0)
		return -1;
	for (k = 0; k < n && refs[k].id != id; k++)
		;
	if (k == n) {
		flaky_test_refs_free(refs, n);
		return web_api_fail(c, 404, NULL, NULL, "not found: no such "
		    "test"), 1;
	}
	if (flaky_store_test_days(c->st, id, first, weeks * 7, runs, fails,
	    c->err, sizeof c->err) < 0) {
		flaky_test_refs_free(refs, n);
		return -1;
	}
	flaky_jw_object_begin(w);
	jw_int(w, "id", id);
	jw_str(w, "test", refs[k].name);
	jw_str(w, "target", refs[k].target);
	flaky_jw_key(w, "weeks");
	flaky_jw_array_begin(w);
	for (long long wk = 0; wk < weeks; wk++) {
		uint32_t wr = 0, wf = 0;

		for (int d = 0; d < 7; d++) {
			wr += runs[wk * 7 + d];
			wf += fails[wk * 7 + d];
		}
		flaky_jw_object_begin(w);
		jw_str(w, "start", flaky_format_day((first + wk * 7) *
		    FLAKY_DAY_MS, day, sizeof day));
		if (wr > 0)
			jw_rate(w, wf, wr, 0);
		else {	/* as trend --format json: no rate without runs */
			jw_int(w, "runs", 0);
			jw_int(w, "failures", 0);
			flaky_jw_key(w, "fail_rate");
			flaky_jw_null(w);
			flaky_jw_key(w, "ci_low");
			flaky_jw_null(w);
			flaky_jw_key(w, "ci_high");
			flaky_jw_null(w);
		}
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
	flaky_jw_object_end(w);
	flaky_test_refs_free(refs, n);
	return 0;
}

/* The id at the end of "test/ID" or "run/ID"; -1 when not a number. */
static int64_t
path_id(const char *s)
{
	long long v;

	if (flaky_parse_int(s, 1, INT64_MAX, &v) < 0)
		return -1;
	return v;
}

int
web_api_known(const char *path)
{
	return strcmp(path, "targets") == 0 || strcmp(path, "tests") == 0 ||
	    strcmp(path, "runs") == 0 || strcmp(path, "trend") == 0 ||
	    strncmp(path, "test/", 5) == 0 || strncmp(path, "run/", 4) == 0 ||
	    web_api_ci_known(path);
}

int
web_api(struct web_ctx *c, const char *path, const char *query,
    const char **content_type)
{
	struct flaky_jw w;
	int64_t	 id = 0;
	int	 test = strncmp(path, "test/", 5) == 0, r;

	flaky_jw_init(&w, c->b);
	if (test || strncmp(path, "run/", 4) == 0) {
		id = path_id(path + (test ? 5 : 4));
		if (id < 0)
			return web_api_fail(c, 400, NULL, "a positive number",
			    "bad request: an id is a positive number");
	}
	if (strcmp(path, "targets") == 0)
		r = check_params(c, query, no_params) ? 1 :
		    api_targets(c, &w);
	else if (strcmp(path, "tests") == 0)
		r = api_tests(c, &w, query);
	else if (strcmp(path, "runs") == 0)
		r = api_runs(c, &w, query);
	else if (strcmp(path, "trend") == 0)
		r = api_trend(c, &w, query);
	else if (id > 0 && test)
		r = check_params(c, query, no_params) ? 1 :
		    api_test(c, &w, id);
	else if (id > 0)
		r = check_params(c, query, no_params) ? 1 :
		    api_run(c, &w, id);
	else if (web_api_ci_known(path))
		r = web_api_ci(c, &w, path, query);
	else
		return web_api_fail(c, 404, NULL, NULL, "not found: the API's "
		    "paths are targets, tests, test/ID, runs, run/ID, trend, "
		    "quarantine and known-tests");
	if (r > 0)
		return 0;	/* a 400 or 404 already in the reply */
	if (r < 0 || flaky_jw_finish(&w) < 0)
		return web_api_fail(c, 500, NULL, NULL, c->err[0] ? c->err :
		    "out of memory");
	flaky_buf_addc(c->b, '\n');
	*content_type = "application/json";
	return 0;
}
