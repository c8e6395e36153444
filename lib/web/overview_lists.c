/* The overview's lists (page_overview.c has its trends): the tests by
 * tier in the window, the tests newly unstable this week, the rerun
 * budget, the targets with their schedule and last run, and the newest
 * runs. ?box=NAME keeps all but the targets to one box's runs. */
#include "buildconf.h"

#include "stats/stats.h"
#include "web_int.h"

/* The daemon's view of a target by name, or NULL (flakyctl serve). */
static const struct flaky_web_target *
daemon_target(const struct flaky_web_opts *o, const char *name)
{
	for (size_t i = 0; o->targets != NULL && i < o->ntargets; i++)
		if (strcmp(o->targets[i].name, name) == 0)
			return &o->targets[i];
	return NULL;
}

/* The targets, their schedule, next and last trigger and last run. */
static int
targets_table(struct web_ctx *c)
{
	struct flaky_target_view *v;
	struct flaky_buf *b = c->b;
	size_t	 n;

	if (flaky_store_target_views(c->st, &v, &n, c->err,
	    sizeof c->err) < 0)
		return -1;
	flaky_buf_adds(b, "<h2>Targets</h2>\n<div class=\"scroll\" "
	    "tabindex=\"0\" role=\"region\" aria-label=\"targets\"><table "
	    "id=\"targets\"><thead><tr><th scope=\"col\">target</th>"
	    "<th scope=\"col\">schedule</th><th scope=\"col\">next run "
	    "(UTC)</th><th scope=\"col\">last trigger (UTC)</th>"
	    "<th scope=\"col\">last run</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < n; i++) {
		const struct flaky_web_target *t = daemon_target(c->o,
		    v[i].name);
		struct flaky_last_run lr;

		if (flaky_store_last_run(c->st, v[i].id, &lr, c->err,
		    sizeof c->err) < 0) {
			flaky_target_views_free(v, n);
			return -1;
		}
		flaky_buf_adds(b, "<tr><td class=\"id\">");
		web_esc(b, v[i].name);
		flaky_buf_adds(b, "</td><td>");
		web_esc(b, t != NULL && t->schedule ? t->schedule : "-");
		flaky_buf_adds(b, "</td><td>");
		web_time(b, t != NULL ? t->next_fire_ms : 0);
		flaky_buf_adds(b, "</td><td>");
		web_time(b, v[i].last_fire_ms == FLAKY_NO_FIRE ? 0 :
		    v[i].last_fire_ms);
		flaky_buf_adds(b, "</td><td>");
		if (lr.run_id > 0) {
			flaky_buf_adds(b, "<a ");
			web_href_run(c, lr.run_id);
			flaky_buf_printf(b, ">#%" PRId64 "</a> %s, ",
			    lr.run_id, flaky_run_status_name(lr.status));
			web_time(b, lr.started_ms);
			flaky_buf_printf(b, ", %" PRId64 " test%s, %" PRId64
			    " failed", lr.tests, flaky_plural(lr.tests),
			    lr.failures);
		} else
			flaky_buf_adds(b, "none");
		flaky_buf_adds(b, "</td></tr>\n");
	}
	flaky_buf_adds(b, "</tbody></table></div>\n");
	flaky_target_views_free(v, n);
	return 0;
}

/* Tiers, the newly unstable tests and the budget, from one read. */
static int
tests_summary(struct web_ctx *c)
{
	struct web_tests t;
	struct flaky_buf *b = c->b;
	size_t	 tiers[FLAKY_TIER_COUNT] = { 0 }, fresh = 0;
	int64_t	 week = c->o->now_ms / FLAKY_DAY_MS - 6, wall = 0;

	if (web_tests_load(c, &t, 0, NULL) < 0) {
		web_tests_free(&t);
		return -1;
	}
	for (size_t i = 0; i < t.n; i++) {
		const struct flaky_history_row *h = flaky_history_find(&t.hist,
		    t.rows[i].test_id);

		tiers[flaky_tier(t.rows[i].failures, t.rows[i].runs)]++;
		wall += h != NULL ? h->budget_wall_us : 0;
	}
	flaky_buf_adds(b, "<h2>Tests by tier in the window</h2>\n");
	svg_tier_bars(b, tiers);
	flaky_buf_adds(b, "<h2>Newly unstable this week</h2>\n<p>Tests whose "
	    "failures began in the last 7 days (a change point, or none "
	    "before).</p>\n<ul id=\"new-unstable\">\n");
	for (size_t i = 0; i < t.n; i++) {
		const struct flaky_test_row *r = &t.rows[i];
		const struct flaky_history_row *h = flaky_history_find(&t.hist,
		    r->test_id);

		if (h == NULL || r->failures == 0 || !(h->change_day >= week ||
		    (h->prev_failures == 0 && r->first_ms / FLAKY_DAY_MS >=
		    week)))
			continue;
		flaky_buf_adds(b, "<li><a ");
		web_href_test(c, r->test_id);
		flaky_buf_adds(b, ">");
		web_esc(b, r->test);
		flaky_buf_adds(b, "</a> (");
		web_esc(b, r->target);
		flaky_buf_printf(b, ", %" PRId64 " of %" PRId64 " failed)"
		    "</li>\n", r->failures, r->runs);
		fresh++;
	}
	if (fresh == 0)
		flaky_buf_adds(b, "<li>none</li>\n");
	flaky_buf_printf(b, "</ul>\n<h2>Rerun budget</h2>\n<p id=\"budget\">"
	    "%.1f s of wall time went to runs in which a test failed, ",
	    wall / 1e6);
	web_window_words(c, b);
	flaky_buf_adds(b, ".</p>\n");
	web_tests_free(&t);
	return 0;
}

/* The newest runs, linking to each. */
static int
recent_runs(struct web_ctx *c)
{
	struct flaky_run_view *v;
	struct flaky_buf *b = c->b;
	size_t	 n;
	int	 boxes = flaky_store_has_boxes(c->st);

	if (flaky_store_runs_recent(c->st, 0, c->q.box, 10, &v, &n, c->err,
	    sizeof c->err) < 0)
		return -1;
	flaky_buf_printf(b, "<h2>Newest runs</h2>\n<div class=\"scroll\" "
	    "tabindex=\"0\" role=\"region\" aria-label=\"newest runs\">"
	    "<table id=\"recent\"><thead><tr><th scope=\"col\">run</th>"
	    "<th scope=\"col\">target</th>%s<th scope=\"col\">started "
	    "(UTC)</th><th scope=\"col\">kind</th><th scope=\"col\">status"
	    "</th><th scope=\"col\">exit</th><th scope=\"col\">duration</th>"
	    "<th scope=\"col\">failed/tests</th></tr></thead>\n<tbody>\n",
	    boxes ? "<th scope=\"col\">box</th>" : "");
	for (size_t i = 0; i < n; i++) {
		flaky_buf_adds(b, "<tr><td>");
		if (!c->single) {
			flaky_buf_adds(b, "<a ");
			web_href_run(c, v[i].id);
			flaky_buf_printf(b, ">#%" PRId64 "</a>", v[i].id);
		} else
			flaky_buf_printf(b, "#%" PRId64, v[i].id);
		flaky_buf_adds(b, "</td><td>");
		web_esc(b, v[i].target);
		if (boxes) {
			flaky_buf_adds(b, "</td><td>");
			web_esc(b, v[i].box != NULL ? v[i].box : "-");
		}
		flaky_buf_adds(b, "</td><td>");
		web_time(b, v[i].started_ms);
		flaky_buf_adds(b, "</td><td>");
		web_esc(b, v[i].kind);
		flaky_buf_adds(b, "</td><td>");
		web_esc(b, v[i].status);
		flaky_buf_printf(b, "</td><td class=\"num\">%d</td><td "
		    "class=\"num\">", v[i].exit_code);
		web_dur_us(b, v[i].duration_us);
		flaky_buf_printf(b, "</td><td class=\"num\">%" PRId64 "/%"
		    PRId64 "</td></tr>\n", v[i].failures, v[i].tests);
	}
	flaky_buf_adds(b, "</tbody></table></div>\n");
	flaky_run_views_free(v, n);
	return 0;
}

int
web_overview_rest(struct web_ctx *c)
{
	if (tests_summary(c) < 0 || targets_table(c) < 0 ||
	    recent_runs(c) < 0)
		return -1;
	return 0;
}
