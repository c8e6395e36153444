/* /: are we getting better? (issue 32, docs/dashboard.md "Overview"):
 * the window's figures at a glance, tests per tier per day over 30 or 90
 * days, flaky tests introduced and fixed per week, the time lost to
 * failed runs per day, by target, box or branch (?days=90&target=&box=
 * &branch=, a URL to share, the same parameters as /api/v1/trends); the
 * newest flips and alerts, the tests newly unstable this week, the
 * targets with their schedule, and the newest runs. */
#include "buildconf.h"

#include "config/config.h"
#include "diagnose/diagnose.h"
#include "stats/stats.h"
#include "web_int.h"

int
web_view_read(struct web_ctx *c, const char *query, struct web_view *v)
{
	char	 num[16];
	long long d = 30;
	int	 r;

	memset(v, 0, sizeof *v);
	v->days = 30;
	if ((r = web_param(query, "days", num, sizeof num)) < 0 || (r > 0 &&
	    flaky_parse_int(num, 7, 366, &d) < 0)) {
		v->bad = "days";
		snprintf(c->err, sizeof c->err, "bad request: days: expected a "
		    "number of days from 7 to 366 (30, 90)");
		return -1;
	}
	v->days = (int)d;
	if (web_param(query, "target", v->target, sizeof v->target) < 0 ||
	    web_param(query, "branch", v->branch, sizeof v->branch) < 0) {
		v->bad = "target";
		snprintf(c->err, sizeof c->err, "bad request: target or branch: "
		    "malformed or too long");
		return -1;
	}
	if ((r = web_box_param(c, query)) < 0) {
		v->bad = "box";
		return r == -2 ? -2 : -1;
	}
	if (v->target[0] != '\0') {
		if ((r = web_api_target_known(c, v->target)) < 0)
			return -2;
		if (r == 0) {
			v->bad = "target";
			snprintf(c->err, sizeof c->err, "bad request: target: "
			    "no target '%.64s' in the database", v->target);
			return -1;
		}
		c->q.target = v->target;
	}
	if (v->branch[0] != '\0') {
		if ((r = flaky_store_branch_known(c->st, v->branch, c->err,
		    sizeof c->err)) < 0)
			return -2;
		if (r == 0) {
			v->bad = "branch";
			snprintf(c->err, sizeof c->err, "bad request: branch: no "
			    "run of branch '%.64s' is stored", v->branch);
			return -1;
		}
	}
	return 0;
}

/* One select of the view's form. */
static void
choice(struct flaky_buf *b, const char *label, const char *name,
    const char *cur, char *const *v, size_t n)
{
	flaky_buf_printf(b, "<label>%s <select name=\"%s\"><option value=\"\">"
	    "all</option>", label, name);
	for (size_t i = 0; i < n; i++) {
		flaky_buf_adds(b, "<option value=\"");
		web_esc(b, v[i]);
		flaky_buf_printf(b, "\"%s>", cur != NULL && strcmp(v[i], cur) ==
		    0 ? " selected" : "");
		web_esc(b, v[i]);
		flaky_buf_adds(b, "</option>");
	}
	flaky_buf_adds(b, "</select></label>\n");
}

/* The view's form: days, target, box, branch; a GET, so a URL. */
static int
view_form(struct web_ctx *c, const struct web_view *v)
{
	char	**names = NULL, **boxes, **branches;
	size_t	 n = 0, nb, nbr;

	if (flaky_store_target_names(c->st, &names, &n, c->err,
	    sizeof c->err) < 0)
		return -1;
	flaky_buf_printf(c->b, "<form id=\"view\" class=\"filters\" "
	    "method=\"get\" action=\"/\" aria-label=\"what the overview "
	    "shows\">\n<label>days <select name=\"days\"><option value=\"30\""
	    "%s>30</option><option value=\"90\"%s>90</option></select>"
	    "</label>\n", v->days == 90 ? "" : " selected", v->days == 90 ?
	    " selected" : "");
	choice(c->b, "target", "target", v->target, names, n);
	flaky_store_names_free(names);
	if ((boxes = web_window_boxes(c, &nb)) != NULL) {
		choice(c->b, "box", "box", c->q.box, boxes, nb);
		flaky_store_names_free(boxes);
	}
	if ((branches = web_window_branches(c, &nbr)) != NULL) {
		choice(c->b, "branch", "branch", v->branch, branches, nbr);
		flaky_store_names_free(branches);
	}
	flaky_buf_adds(c->b, "<button type=\"submit\">Show</button> "
	    "<a href=\"/\">clear</a></form>\n");
	return 0;
}

/* A card of the figures at a glance. */
static void
card(struct flaky_buf *b, const char *id, const char *n, const char *label)
{
	flaky_buf_printf(b, "<div class=\"card\" id=\"%s\"><span class=\"n\">"
	    "%s</span><span class=\"l\">%s</span></div>\n", id, n, label);
}

/* The last day's unstable tests, this week's introduced and fixed, the
 * last 7 days' time lost. */
static void
cards(struct web_ctx *c, const struct flaky_trends *t, size_t nflips)
{
	int64_t	 last = t->ndays - 1, lost = 0, k = t->nweeks - 1;
	uint32_t unstable = 0;
	char	 n[32];

	for (int j = 1; j < FLAKY_TREND_TIERS; j++)
		unstable += t->tiers[last][j];
	for (int64_t d = t->ndays - 7; d < t->ndays; d++)
		lost += d >= 0 ? t->lost_us[d] : 0;
	flaky_buf_adds(c->b, "<div class=\"cards\">\n");
	snprintf(n, sizeof n, "%u", unstable);
	card(c->b, "card-unstable", n, "tests critical, warning or broken "
	    "today");
	snprintf(n, sizeof n, "%u", t->introduced[k]);
	card(c->b, "card-introduced", n, "flaky tests introduced in the last "
	    "week shown");
	snprintf(n, sizeof n, "%u", t->fixed[k]);
	card(c->b, "card-fixed", n, "flaky tests fixed in the last week shown");
	if (lost < 120000000)
		snprintf(n, sizeof n, "%.0f s", (double)lost / 1e6);
	else if (lost < 7200000000LL)
		snprintf(n, sizeof n, "%.1f min", (double)lost / 6e7);
	else
		snprintf(n, sizeof n, "%.1f h", (double)lost / 3.6e9);
	card(c->b, "card-lost", n, "lost to failed runs in 7 days");
	snprintf(n, sizeof n, "%zu", nflips);
	card(c->b, "card-flips", n, "newest flips on one revision (below)");
	flaky_buf_adds(c->b, "</div>\n");
}

/* The trends and their cards. */
static int
trends(struct web_ctx *c, const struct web_view *v, size_t nflips)
{
	struct flaky_trends t;

	if (flaky_store_trends(c->st, &c->q, v->branch[0] ? v->branch : NULL,
	    v->days, &t, c->err, sizeof c->err) < 0)
		return -1;
	cards(c, &t, nflips);
	flaky_buf_printf(c->b, "<h2>Tests by tier per day</h2>\n<p "
	    "class=\"hint\">The last %d days%s: how many tests were in each "
	    "unstable tier as a 30-day report would have ranked them.</p>\n",
	    v->days, c->q.target || c->q.box || v->branch[0] ?
	    ", of the target, box or branch chosen" : "");
	web_chart_tiers(c->b, &t);
	flaky_buf_adds(c->b, "<div class=\"grid2\"><section>\n<h2>Flaky tests "
	    "introduced and fixed per week</h2>\n<p class=\"hint\">Introduced: "
	    "a failure after 30 days without one; fixed: as many passes in a "
	    "row after its last failure as its rate asks (about 3/p). A test "
	    "that failed in every run until a pass is a break and its fix, "
	    "drawn apart.</p>\n");
	web_chart_weeks(c->b, &t);
	flaky_buf_adds(c->b, "</section><section>\n<h2>Time lost to failed "
	    "runs per day</h2>\n<p class=\"hint\">The rerun budget: what the "
	    "runs in which a test failed took.</p>\n");
	web_chart_lost(c->b, &t);
	flaky_buf_adds(c->b, "</section></div>\n");
	flaky_trends_free(&t);
	return 0;
}

/* The newest flips (a test that failed and passed on one revision), each
 * in the words flakyctl prints. */
static int
newest_flips(struct web_ctx *c, struct flaky_flip_row *v, size_t n)
{
	struct flaky_buf *b = c->b;

	flaky_buf_adds(b, "<h2>Newest flips</h2>\n<p class=\"hint\">A test that "
	    "failed and passed on the same revision (across CI jobs, attempts "
	    "and reruns) is flaky, whatever its rate. A test that failed in "
	    "every job of a revision and passed at the next is not one.</p>\n"
	    "<ul id=\"flips\" class=\"plain\">\n");
	if (n == 0)
		flaky_buf_adds(b, "<li>none</li>\n");
	for (size_t i = 0; i < n; i++) {
		struct flaky_buf w;

		flaky_buf_init(&w);
		flaky_flip_words(&v[i].f, 1, INT64_MIN, INT64_MAX, 1, &w);
		flaky_buf_adds(b, "<li><a ");
		web_href_test(c, v[i].test_id);
		flaky_buf_adds(b, ">");
		web_esc_id(b, v[i].test);
		flaky_buf_adds(b, "</a> (");
		web_esc(b, v[i].target);
		flaky_buf_adds(b, "), ");
		web_time(b, v[i].f.last_ms);
		flaky_buf_adds(b, ": ");
		/* "flipped on 1 revision since the first run: " is said */
		web_esc(b, strchr(flaky_buf_cstr(&w), ':') != NULL ?
		    strchr(flaky_buf_cstr(&w), ':') + 2 : flaky_buf_cstr(&w));
		flaky_buf_adds(b, "</li>\n");
		flaky_buf_free(&w);
	}
	flaky_buf_adds(b, "</ul>\n");
	return 0;
}

/* The newest alerts of the window (flakyd's notify:), newest first. */
static int
newest_alerts(struct web_ctx *c)
{
	struct flaky_alert *v;
	struct flaky_buf *b = c->b;
	size_t	 n, shown = 0;

	if (flaky_store_alerts_list(c->st, c->q.since_ms, &v, &n, c->err,
	    sizeof c->err) < 0)
		return -1;
	flaky_buf_adds(b, "<h2>Newest alerts</h2>\n<ul id=\"alerts\" "
	    "class=\"plain\">\n");
	for (size_t i = n; i-- > 0 && shown < WEB_NEWEST;) {
		if (c->q.target != NULL && (v[i].target == NULL ||
		    strcmp(v[i].target, c->q.target) != 0))
			continue;
		flaky_buf_adds(b, "<li>");
		web_time(b, v[i].created_ms);
		flaky_buf_printf(b, " <strong>%s</strong> <a ",
		    flaky_alert_kind_name(v[i].kind));
		web_href_test(c, v[i].test_id);
		flaky_buf_adds(b, ">");
		web_esc_id(b, v[i].test);
		flaky_buf_printf(b, "</a>: %" PRId64 " of %" PRId64 " runs "
		    "failed</li>\n", v[i].failures, v[i].runs);
		shown++;
	}
	if (shown == 0)
		flaky_buf_adds(b, "<li>none in the window (alerts come from "
		    "flakyd's notify:, docs/alerts.md)</li>\n");
	flaky_buf_adds(b, "</ul>\n");
	flaky_alerts_free(v, n);
	return 0;
}

int
web_page_overview(struct web_ctx *c, const char *query)
{
	struct flaky_flip_row *flips = NULL;
	struct web_view v;
	size_t	 nflips = 0;
	int	 r;

	if ((r = web_view_read(c, query, &v)) < 0)
		return web_fail(c, r == -2 ? 500 : 400, c->err);
	if (flaky_store_flips_recent(c->st, c->q.target, c->q.until_ms,
	    WEB_NEWEST,
	    &flips, &nflips, c->err, sizeof c->err) < 0)
		return web_fail(c, 500, c->err);
	web_page_begin(c, "overview", "Flaky tests: overview");
	if (!c->single && view_form(c, &v) < 0)
		goto fail;
	if (trends(c, &v, nflips) < 0 || newest_flips(c, flips, nflips) < 0 ||
	    newest_alerts(c) < 0 || web_overview_rest(c) < 0)
		goto fail;
	web_page_end(c);
	flaky_flip_rows_free(flips, nflips);
	c->q.target = NULL;
	return 0;
fail:
	flaky_flip_rows_free(flips, nflips);
	return web_fail(c, 500, c->err);
}
