/* /tests: one row per test of the window, sortable (a header's button)
 * and found by any of the filters of docs/dashboard.md "Find anything":
 * a part of the id, target, box, branch, owner, tier, signature, cluster
 * and state, each a query parameter, so that every view is a URL to share
 * (and the same filters work in /api/v1/tests). ?box= and ?branch= count
 * that box's or branch's runs only. In report --html's one file the same
 * form filters the rows in place. */
#include "buildconf.h"

#include "stats/stats.h"
#include "web_int.h"

/* One select of the form, its options the distinct values given (sorted);
 * "any" first. */
static void
select_field(struct flaky_buf *b, const char *label, const char *name,
    const char *cur, const char *const *v, size_t n)
{
	flaky_buf_printf(b, "<label>%s <select name=\"%s\"><option "
	    "value=\"\">any</option>", label, name);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && strcmp(v[i], v[i - 1]) == 0)
			continue;
		flaky_buf_adds(b, "<option value=\"");
		web_esc(b, v[i]);
		flaky_buf_printf(b, "\"%s>", strcmp(v[i], cur) == 0 ?
		    " selected" : "");
		web_esc(b, v[i]);
		flaky_buf_adds(b, "</option>");
	}
	flaky_buf_adds(b, "</select></label>\n");
}

/* A text field of the form. */
static void
text_field(struct flaky_buf *b, const char *label, const char *name,
    const char *type, const char *cur, const char *hint)
{
	flaky_buf_printf(b, "<label>%s <input name=\"%s\" type=\"%s\" "
	    "value=\"", label, name, type);
	web_esc(b, cur);
	flaky_buf_printf(b, "\" placeholder=\"%s\"></label>\n", hint);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The form: the values each filter takes, as the window has them. */
static int
filter_form(struct web_ctx *c, const struct web_tests *t,
    const struct web_filters *f)
{
	static const char *const tiers[] = { "critical", "warning", "broken",
	    "noise", "stable", "skipped" };
	const char *states[WS_COUNT];
	const char **v = calloc(t->n + t->nsigs + 1, sizeof *v);
	char	**boxes, **branches, num[16];
	size_t	 n = 0, nboxes, nbranches;

	if (v == NULL)
		return -1;
	flaky_buf_printf(c->b, "<form id=\"filters\" class=\"filters\" "
	    "method=\"get\" action=\"%s\" role=\"search\"%s>\n", c->single ?
	    "" : "/tests", c->single ? " data-live=\"1\"" : "");
	text_field(c->b, "id contains", "q", "search", f->q,
	    "test_login");
	for (size_t i = 0; i < t->n; i++)
		v[n++] = t->rows[i].target;
	qsort(v, n, sizeof *v, cmp_str);
	select_field(c->b, "target", "target", f->target, v, n);
	if (!c->single && (boxes = web_window_boxes(c, &nboxes)) != NULL) {
		select_field(c->b, "box", "box", c->q.box != NULL ? c->q.box :
		    "", (const char *const *)boxes, nboxes);
		flaky_store_names_free(boxes);
	}
	if (!c->single && (branches = web_window_branches(c,
	    &nbranches)) != NULL) {
		select_field(c->b, "branch", "branch", f->branch,
		    (const char *const *)branches, nbranches);
		flaky_store_names_free(branches);
	}
	select_field(c->b, "tier", "tier", f->tier, tiers,
	    FLAKY_ARRAY_SIZE(tiers));
	for (int k = 0; k < WS_COUNT; k++)
		states[k] = web_state_name(k);
	select_field(c->b, "state", "state", f->state >= 0 ?
	    web_state_name(f->state) : "", states, WS_COUNT);
	n = 0;
	for (size_t i = 0; i < t->nsigs; i++)
		if (t->sigs[i].signature != NULL)
			v[n++] = t->sigs[i].signature;
	qsort(v, n, sizeof *v, cmp_str);
	select_field(c->b, "signature", "signature", f->signature, v, n);
	if (!c->single) {
		text_field(c->b, "owner", "owner", "text", f->owner,
		    "@team/web");
		snprintf(num, sizeof num, "%d", f->cluster);
		text_field(c->b, "cluster", "cluster", "number", f->cluster >
		    0 ? num : "", "1");
	}
	flaky_buf_adds(c->b, "<button type=\"submit\">Find</button>");
	if (!c->single)
		flaky_buf_adds(c->b, " <a href=\"/tests\">clear</a>");
	flaky_buf_adds(c->b, "</form>\n");
	free(v);
	return 0;
}

/* One test's row; data-* for the one file's live filter. */
static void
test_row(struct web_ctx *c, const struct web_tests *t, size_t i,
    int box_col)
{
	const struct flaky_test_row *r = &t->rows[i];
	const struct flaky_history_row *h = flaky_history_find(&t->hist,
	    r->test_id);
	const char *sig = web_tests_sig(t, r->test_id);
	const char *ticket = web_tests_ticket(t, r->test_id);
	int	 t_tier = flaky_tier_skips(r->failures, r->runs, r->skips);
	const char *tier = flaky_tier_name(t_tier);
	struct flaky_buf *b = c->b;
	double	 lo, hi, rate = r->runs ? (double)r->failures / r->runs : 0;

	flaky_wilson(r->failures, r->runs, FLAKY_Z95, &lo, &hi);
	flaky_buf_adds(b, "<tr data-target=\"");
	web_esc(b, r->target);
	flaky_buf_printf(b, "\" data-tier=\"%s\" data-signature=\"", tier);
	web_esc(b, sig != NULL ? sig : "");
	flaky_buf_adds(b, "\" data-test=\"");
	web_esc(b, r->test);
	flaky_buf_adds(b, "\"><td class=\"id\"><a ");
	web_href_test(c, r->test_id);
	flaky_buf_adds(b, ">");
	web_esc_id(b, r->test);
	flaky_buf_adds(b, "</a></td><td>");
	web_esc(b, r->target);
	flaky_buf_printf(b, "</td><td data-v=\"%d\">", t->state[i]);
	web_state_badge(b, t->state[i]);
	flaky_buf_printf(b, "</td><td data-v=\"%d\">", t_tier);
	web_tier_badge(b, t_tier);
	flaky_buf_printf(b, "</td><td class=\"num\" data-v=\"%.6f\">%.1f%%"
	    "</td><td class=\"num\" data-v=\"%.6f\">%.1f&ndash;%.1f%%</td>"
	    "<td class=\"num\" data-v=\"%" PRId64 "\">%" PRId64 "/%" PRId64
	    "</td><td class=\"num\" data-v=\"%" PRId64 "\">%" PRId64 "</td>"
	    "<td>", rate, 100 * rate, hi, 100 * lo, 100 * hi, r->runs,
	    r->failures, r->runs, t->flips[i], t->flips[i]);
	web_esc(b, sig != NULL ? sig : "");
	flaky_buf_adds(b, "</td><td class=\"text\">");
	web_esc(b, t->owners[i] != NULL ? t->owners[i] : "");
	flaky_buf_printf(b, "</td><td data-v=\"%s\">%s ",
	    flaky_trend_name(h ? h->trend : FLAKY_TREND_SAME),
	    flaky_trend_name(h ? h->trend : FLAKY_TREND_SAME));
	if (h != NULL)
		svg_spark(b, t->hist.first_day, t->hist.ndays, h->day_runs,
		    h->day_failures);
	flaky_buf_printf(b, "</td><td class=\"num\" data-v=\"%.3f\">%.1f s"
	    "</td><td>%s", h ? h->budget_wall_us / 1e6 : 0.0,
	    h ? h->budget_wall_us / 1e6 : 0.0, h && h->quarantined ?
	    "quarantined" : "");
	if (ticket != NULL) {
		flaky_buf_adds(b, h && h->quarantined ? " " : "");
		flaky_buf_adds(b, "<a rel=\"noreferrer\" href=\"");
		web_esc(b, ticket);
		flaky_buf_adds(b, "\">ticket</a>");
	}
	flaky_buf_adds(b, "</td>");
	if (box_col) {
		size_t	 first, n = web_tests_boxes(t, r->test_id, &first);

		flaky_buf_adds(b, "<td class=\"boxes\">");
		web_box_words(b, t->boxes + first, n);
		flaky_buf_adds(b, "</td>");
	}
	flaky_buf_adds(b, "</tr>\n");
}

/* A sortable column's header: a button, so the keyboard sorts too. */
static void
head(struct flaky_buf *b, const char *name)
{
	flaky_buf_printf(b, "<th data-sort scope=\"col\"><button "
	    "type=\"button\">%s</button></th>", name);
}

int
web_page_tests(struct web_ctx *c, const char *query)
{
	static const char *const cols[] = { "test", "target", "state", "tier",
	    "rate", "95% interval", "failures/runs", "flips", "signature",
	    "owners", "trend", "budget", "quarantine, ticket" };
	struct web_tests t;
	struct web_filters f;
	struct flaky_buf share;
	const char *bad;
	size_t	 shown_n = 0, first;
	int	 box_col = 0, r;

	if ((r = web_filters_read(c, query, &f, &bad)) < 0)
		return web_fail(c, r == -2 ? 500 : 400, c->err);
	if ((r = web_box_param(c, query)) < 0)
		return web_fail(c, r == -2 ? 500 : 400, c->err);
	if (web_tests_load(c, &t, 0, &f) < 0) {
		web_tests_free(&t);
		return web_fail(c, 500, c->err);
	}
	for (size_t i = 0; i < t.n && !box_col; i++)
		box_col = web_tests_boxes(&t, t.rows[i].test_id, &first) > 0;
	web_page_begin(c, "tests-page", "Tests");
	if (filter_form(c, &t, &f) < 0) {
		web_tests_free(&t);
		return -1;
	}
	for (size_t i = 0; i < t.n; i++)
		shown_n += web_tests_shown(&t, i, &f);
	flaky_buf_printf(c->b, "<p><span id=\"shown\">%zu</span> of %zu "
	    "test%s seen ", shown_n, t.n, flaky_plural((long long)t.n));
	web_window_words(c, c->b);
	if (f.branch[0] != '\0') {
		flaky_buf_adds(c->b, ", runs of branch ");
		web_esc(c->b, f.branch);
	}
	flaky_buf_adds(c->b, ".");
	if (!c->single) {
		/* the same view as data: the API takes the same filters */
		flaky_buf_init(&share);
		web_filters_query(c, &f, &share);
		flaky_buf_printf(c->b, " This view as JSON: <a id=\"as-json\" "
		    "href=\"/api/v1/tests%s%s\">/api/v1/tests</a>.",
		    share.len ? "?" : "", flaky_buf_cstr(&share));
		flaky_buf_free(&share);
	}
	flaky_buf_printf(c->b, "</p>\n<p class=\"hint\">Rate: failed runs / "
	    "runs; interval: 95%% Wilson; state: docs/dashboard.md; owners: "
	    "the test's own, then CODEOWNERS; trend: against as many days "
	    "before, with the daily rate (bar height; grey: no runs); budget: "
	    "wall time of the runs in which the test failed; flips: the "
	    "revisions it failed and passed on%s. A header's "
	    "button sorts.</p>\n<div class=\"scroll\" tabindex=\"0\" "
	    "role=\"region\" aria-label=\"tests\"><table id=\"tests\"><thead>"
	    "<tr>", box_col ? "; boxes: the rate on each box the target ran "
	    "on" : "");
	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(cols); k++)
		head(c->b, cols[k]);
	if (box_col)
		head(c->b, "boxes");
	flaky_buf_adds(c->b, "</tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < t.n; i++)
		if (c->single || web_tests_shown(&t, i, &f))
			test_row(c, &t, i, box_col);
	flaky_buf_adds(c->b, "</tbody></table></div>\n");
	web_page_end(c);
	web_tests_free(&t);
	return 0;
}
