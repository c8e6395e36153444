/* /tests: one row per test of the window, sortable (a click on a column's
 * header) and filterable by target, tier, signature and a part of the id;
 * the filters are query parameters too, so they work without JavaScript.
 * ?box=NAME counts one box's runs only (the server counts: choosing a box
 * loads the page again); where a target ran on more than one box, a
 * column gives each test's rate per box. */
#include "buildconf.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"
#include "web_int.h"

struct filters {
	char	 target[WEB_PARAM_MAX], tier[32], signature[64];
	char	 q[WEB_PARAM_MAX];
};

/* The filters of a query; -1 when one is malformed. */
static int
read_filters(const char *query, struct filters *f)
{
	memset(f, 0, sizeof *f);
	if (web_param(query, "target", f->target, sizeof f->target) < 0 ||
	    web_param(query, "tier", f->tier, sizeof f->tier) < 0 ||
	    web_param(query, "signature", f->signature,
	    sizeof f->signature) < 0 ||
	    web_param(query, "q", f->q, sizeof f->q) < 0)
		return -1;
	if (f->tier[0] != '\0' && flaky_tier_from_name(f->tier) < 0)
		return -1;
	return 0;
}

/* Does a row pass the filters? */
static int
shown(const struct web_tests *t, const struct flaky_test_row *r,
    const struct filters *f)
{
	const char *sig;

	if (f->target[0] && strcmp(f->target, r->target) != 0)
		return 0;
	if (f->tier[0] && strcmp(f->tier, flaky_tier_name(flaky_tier_skips(
	    r->failures, r->runs, r->skips))) != 0)
		return 0;
	sig = web_tests_sig(t, r->test_id);
	if (f->signature[0] && (sig == NULL || strcmp(sig, f->signature)))
		return 0;
	return f->q[0] == '\0' || strstr(r->test, f->q) != NULL;
}

/* One select of the form, its options the distinct values given. */
static void
select_field(struct flaky_buf *b, const char *name, const char *cur,
    const char *const *v, size_t n)
{
	flaky_buf_printf(b, "<label>%s <select name=\"%s\"><option "
	    "value=\"\">all</option>", name, name);
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

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The form: targets and signatures as they occur, the tiers (and
 * skipped: a test without a counted run is not stable). */
static int
filter_form(struct web_ctx *c, const struct web_tests *t,
    const struct filters *f, char **boxes, size_t nboxes)
{
	static const char *const tiers[] = { "broken", "critical", "noise",
	    "skipped", "stable", "warning" };
	const char **v = calloc(t->n + t->nsigs + 1, sizeof *v);
	size_t	 n = 0;

	if (v == NULL)
		return -1;
	flaky_buf_printf(c->b, "<form id=\"filters\" class=\"filters\" "
	    "method=\"get\" action=\"%s\"%s>\n", c->single ? "" : "/tests",
	    c->single ? " data-live=\"1\"" : "");
	for (size_t i = 0; i < t->n; i++)
		v[n++] = t->rows[i].target;
	qsort(v, n, sizeof *v, cmp_str);
	select_field(c->b, "target", f->target, v, n);
	select_field(c->b, "tier", f->tier, tiers, FLAKY_ARRAY_SIZE(tiers));
	n = 0;
	for (size_t i = 0; i < t->nsigs; i++)
		if (t->sigs[i].signature != NULL)
			v[n++] = t->sigs[i].signature;
	qsort(v, n, sizeof *v, cmp_str);
	select_field(c->b, "signature", f->signature, v, n);
	if (boxes != NULL)
		select_field(c->b, "box", c->q.box != NULL ? c->q.box : "",
		    (const char *const *)boxes, nboxes);
	flaky_buf_adds(c->b, "<label>id contains <input name=\"q\" "
	    "type=\"search\" value=\"");
	web_esc(c->b, f->q);
	flaky_buf_adds(c->b, "\"></label> <button type=\"submit\">filter"
	    "</button></form>\n");
	free(v);
	return 0;
}

/* One test's row; data-* for the script's filters. */
static void
test_row(struct web_ctx *c, const struct web_tests *t,
    const struct flaky_test_row *r, int box_col)
{
	const struct flaky_history_row *h = flaky_history_find(&t->hist,
	    r->test_id);
	const char *sig = web_tests_sig(t, r->test_id);
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
	flaky_buf_printf(b, "</td><td class=\"%s\" data-v=\"%d\">%s</td>"
	    "<td class=\"num\" data-v=\"%.6f\">%.1f%%</td><td class=\"num\" "
	    "data-v=\"%.6f\">%.1f&ndash;%.1f%%</td><td class=\"num\" "
	    "data-v=\"%" PRId64 "\">%" PRId64 "/%" PRId64 "</td><td>", tier,
	    t_tier, tier, rate, 100 * rate, hi,
	    100 * lo, 100 * hi, r->runs, r->failures, r->runs);
	web_esc(b, sig != NULL ? sig : "");
	flaky_buf_printf(b, "</td><td data-v=\"%s\">%s ",
	    flaky_trend_name(h ? h->trend : FLAKY_TREND_SAME),
	    flaky_trend_name(h ? h->trend : FLAKY_TREND_SAME));
	if (h != NULL)
		svg_spark(b, t->hist.first_day, t->hist.ndays, h->day_runs,
		    h->day_failures);
	flaky_buf_printf(b, "</td><td class=\"num\" data-v=\"%.3f\">%.1f s"
	    "</td><td>%s</td>", h ? h->budget_wall_us / 1e6 : 0.0,
	    h ? h->budget_wall_us / 1e6 : 0.0, h && h->quarantined ?
	    "quarantined" : "");
	if (box_col) {
		size_t	 first, n = web_tests_boxes(t, r->test_id, &first);

		flaky_buf_adds(b, "<td class=\"boxes\">");
		web_box_words(b, t->boxes + first, n);
		flaky_buf_adds(b, "</td>");
	}
	flaky_buf_adds(b, "</tr>\n");
}

int
web_page_tests(struct web_ctx *c, const char *query)
{
	struct web_tests t;
	struct filters f;
	char	**boxes;
	size_t	 shown_n = 0, nboxes, first;
	int	 box_col = 0, r;

	if (read_filters(query, &f) < 0)
		return web_fail(c, 400, "bad request: a filter (target, tier "
		    "critical|warning|broken|noise|stable, signature, q) is "
		    "malformed or too long");
	if ((r = web_box_param(c, query)) < 0)
		return web_fail(c, r == -2 ? 500 : 400, c->err);
	if (web_tests_load(c, &t, 0) < 0) {
		web_tests_free(&t);
		return web_fail(c, 500, c->err);
	}
	for (size_t i = 0; i < t.n && !box_col; i++)
		box_col = web_tests_boxes(&t, t.rows[i].test_id, &first) > 0;
	boxes = web_window_boxes(c, &nboxes);
	web_page_begin(c, "tests-page", "Tests");
	r = filter_form(c, &t, &f, boxes, nboxes);
	flaky_store_names_free(boxes);
	if (r < 0) {
		web_tests_free(&t);
		return -1;
	}
	for (size_t i = 0; i < t.n; i++)
		shown_n += shown(&t, &t.rows[i], &f);
	flaky_buf_printf(c->b, "<p><span id=\"shown\">%zu</span> of %zu "
	    "test%s seen ", shown_n, t.n, flaky_plural((long long)t.n));
	web_window_words(c, c->b);
	flaky_buf_printf(c->b, ". Rate: failed runs / runs; interval: 95%% "
	    "Wilson; trend: against as many days before, with the daily rate "
	    "(bar height; grey: no runs); budget: wall time of the runs in "
	    "which the test failed%s. Click a header to sort.</p>\n"
	    "<div class=\"scroll\"><table id=\"tests\"><thead><tr>"
	    "<th data-sort>test</th><th data-sort>target</th>"
	    "<th data-sort>tier</th><th data-sort>rate</th>"
	    "<th data-sort>95%% interval</th><th data-sort>failures/runs</th>"
	    "<th data-sort>signature</th><th data-sort>trend</th>"
	    "<th data-sort>budget</th><th data-sort>quarantine</th>%s</tr>"
	    "</thead>\n<tbody>\n", box_col ? "; boxes: the rate on each box "
	    "the target ran on" : "", box_col ? "<th data-sort>boxes</th>" :
	    "");
	for (size_t i = 0; i < t.n; i++)
		if (shown(&t, &t.rows[i], &f))
			test_row(c, &t, &t.rows[i], box_col);
	flaky_buf_adds(c->b, "</tbody></table></div>\n");
	web_page_end(c);
	web_tests_free(&t);
	return 0;
}
