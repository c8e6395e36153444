/* The parts of a test's page past its rate (page_test.c): its flips,
 * owners, ticket, quarantine, rates per box and branch and cluster as
 * facts; the actions a team takes from the page (a token of scope write
 * kept in the tab's session storage, sent as Authorization: Bearer; the
 * forms work through the page's script only) and who took each; the
 * revisions it flipped on; its newest runs. */
#include "buildconf.h"

#include "diagnose/diagnose.h"
#include "stats/stats.h"
#include "web_int.h"

/* A link to a ticket: http(s) only (flaky_action_check refused the
 * rest), no referrer; anything else as text. */
static void
ticket_link(struct flaky_buf *b, const char *url)
{
	if (strncmp(url, "https://", 8) != 0 &&
	    strncmp(url, "http://", 7) != 0) {
		web_esc(b, url);
		return;
	}
	flaky_buf_adds(b, "<a rel=\"noreferrer noopener\" href=\"");
	web_esc(b, url);
	flaky_buf_adds(b, "\">");
	web_esc_id(b, url);
	flaky_buf_adds(b, "</a>");
}

/* Rates per branch: "20% on main (2/10), 0% on dev (0/8)". */
static void
branch_words(struct flaky_buf *b, const struct flaky_branch_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		flaky_buf_printf(b, "%s%.0f%% on ", i ? ", " : "", v[i].runs ?
		    100.0 * (double)v[i].failures / (double)v[i].runs : 0.0);
		web_esc(b, v[i].branch);
		flaky_buf_printf(b, " (%" PRId64 "/%" PRId64 ")", v[i].failures,
		    v[i].runs);
	}
}

void
web_story_facts(struct web_ctx *c, const struct web_story *s)
{
	const struct flaky_diagnosis *d = s->d;
	struct flaky_buf *b = c->b, w;

	flaky_buf_init(&w);
	flaky_flip_words(d->flips, d->nflips, d->since_ms, d->until_ms,
	    FLAKY_FLIP_DETAILS, &w);
	flaky_buf_adds(b, "<dt>flips</dt><dd id=\"flips\">");
	web_esc(b, w.len > 0 ? flaky_buf_cstr(&w) : "none: it never failed "
	    "and passed on one revision in the window");
	flaky_buf_adds(b, "</dd>\n<dt>owners</dt><dd id=\"owners\">");
	web_esc(b, s->owners.len > 0 ? flaky_buf_cstr((struct flaky_buf *)
	    &s->owners) : "none known");
	if (s->codeowners != NULL) {
		flaky_buf_adds(b, " <span class=\"hint\">(CODEOWNERS: <code>");
		web_esc_id(b, s->codeowners);
		flaky_buf_adds(b, "</code>)</span>");
	} else
		flaky_buf_adds(b, " <span class=\"hint\">(no CODEOWNERS in "
		    "its target's repository here)</span>");
	flaky_buf_adds(b, "</dd>\n<dt>ticket</dt><dd id=\"ticket-link\">");
	if (s->ticket != NULL)
		ticket_link(b, s->ticket);
	else
		flaky_buf_adds(b, "none linked");
	flaky_buf_adds(b, "</dd>\n<dt>quarantine</dt><dd id=\"quarantine\">");
	if (!s->quarantined)
		flaky_buf_adds(b, "not quarantined");
	else {
		flaky_buf_adds(b, "quarantined since ");
		web_time(b, s->q.added_ms);
		flaky_buf_printf(b, ", %" PRId64 " pass%s in a row since; "
		    "reason: ", s->q.passes, flaky_plural_es(s->q.passes));
		web_esc(b, s->q.reason != NULL ? s->q.reason : "-");
	}
	flaky_buf_adds(b, "</dd>\n");
	if (d->nboxes > 1) {
		flaky_buf_adds(b, "<dt>boxes</dt><dd id=\"boxes\">");
		web_box_words(b, d->boxes, d->nboxes);
		flaky_buf_adds(b, "</dd>\n");
	}
	flaky_buf_adds(b, "<dt>branches</dt><dd id=\"branches\">");
	if (s->nbranches == 0)
		flaky_buf_adds(b, "none recorded (runs without CI metadata)");
	else
		branch_words(b, s->branches, s->nbranches);
	flaky_buf_adds(b, "</dd>\n<dt>cluster</dt><dd id=\"cluster\">");
	if (s->cluster == NULL)
		flaky_buf_adds(b, "none: it does not fail with other tests "
		    "more than chance allows");
	else {
		flaky_buf_printf(b, "<a href=\"/tests?cluster=%d\">cluster %d"
		    "</a>: fails with %zu other test%s (flakyctl ticket "
		    "--cluster %d)", s->cluster->id, s->cluster->id,
		    s->cluster->n - 1, flaky_plural((long long)s->cluster->n -
		    1), s->cluster->id);
	}
	flaky_buf_adds(b, "</dd>\n");
	flaky_buf_free(&w);
}

/* One action's form: its fields, its button. */
static void
act_form(struct flaky_buf *b, int64_t id, const char *verb,
    const char *fields, const char *button)
{
	flaky_buf_printf(b, "<form class=\"act\" method=\"post\" "
	    "action=\"/api/v1/test/%" PRId64 "/%s\">%s<button "
	    "type=\"submit\">%s</button></form>\n", id, verb, fields, button);
}

void
web_story_actions(struct web_ctx *c, const struct web_story *s)
{
	struct flaky_buf *b = c->b;
	int64_t	 id = s->d->test_id;
	char	 t[32];

	flaky_buf_adds(b, "<section id=\"actions\" class=\"actions\" "
	    "aria-labelledby=\"actions-h\">\n<h2 id=\"actions-h\">Actions"
	    "</h2>\n<p class=\"hint\">Each action is recorded with the "
	    "token's name and the time, and is also <code>flakyctl quarantine"
	    "</code>, <code>flakyctl mark</code> and a POST to "
	    "/api/v1/test/ID/&hellip; (docs/api.md). The token (scope write: "
	    "<code>flakyctl token create --scope write</code>) is kept in "
	    "this tab only.</p>\n<form id=\"token-form\" class=\"act\">"
	    "<label>token <input name=\"token\" type=\"password\" "
	    "autocomplete=\"off\" placeholder=\"flaky_...\"></label>"
	    "<button type=\"submit\">Use</button> <button type=\"button\" "
	    "id=\"token-forget\">Forget</button></form>\n<p id=\"token-state\" "
	    "class=\"hint\" role=\"status\"></p>\n");
	if (s->quarantined)
		act_form(b, id, "release", "", "Release from quarantine");
	else
		act_form(b, id, "quarantine", "<label>reason <input "
		    "name=\"reason\" required maxlength=\"1024\" placeholder=\""
		    "RACE, tracked\"></label><label>ticket (optional) <input "
		    "name=\"ticket\" type=\"url\" maxlength=\"2048\" "
		    "placeholder=\"its URL\"></label>", "Quarantine");
	act_form(b, id, "ticket", "<label>ticket URL <input name=\"url\" "
	    "type=\"url\" maxlength=\"2048\" placeholder=\"empty: unlink\">"
	    "</label>", "Link ticket");
	act_form(b, id, "owner", "<label>owner <input name=\"owner\" "
	    "maxlength=\"256\" placeholder=\"@team/web (empty: clear)\">"
	    "</label>", "Set owner");
	flaky_buf_adds(b, "<p id=\"act-status\" role=\"status\" "
	    "aria-live=\"polite\"></p>\n<h3>Taken</h3>\n<ul id=\"action-log\" "
	    "class=\"plain\">\n");
	if (s->nactions == 0)
		flaky_buf_adds(b, "<li>none yet</li>\n");
	for (size_t i = 0; i < s->nactions; i++) {
		const struct flaky_action *a = &s->actions[i];

		flaky_buf_printf(b, "<li>%s <strong>%s</strong>",
		    flaky_format_time(a->at_ms, t, sizeof t),
		    flaky_action_name(a->kind));
		if (a->value != NULL) {
			flaky_buf_adds(b, ": ");
			web_esc(b, a->value);
		}
		flaky_buf_adds(b, " by ");
		web_esc(b, a->who);
		flaky_buf_adds(b, " via ");
		web_esc(b, a->via);
		flaky_buf_adds(b, "</li>\n");
	}
	flaky_buf_adds(b, "</ul>\n</section>\n");
}

/* The name of where an outcome was seen: "job unit#2" or "run 12". */
static void
where(struct web_ctx *c, const char *job, int attempt, int64_t run)
{
	if (job != NULL) {
		flaky_buf_adds(c->b, "job ");
		web_esc(c->b, job);
		if (attempt > 0)
			flaky_buf_printf(c->b, "#%d", attempt);
		flaky_buf_adds(c->b, ", ");
	}
	if (c->single)
		flaky_buf_printf(c->b, "run %" PRId64, run);
	else {
		flaky_buf_adds(c->b, "<a ");
		web_href_run(c, run);
		flaky_buf_printf(c->b, ">run %" PRId64 "</a>", run);
	}
}

void
web_story_flips(struct web_ctx *c, const struct web_story *s)
{
	const struct flaky_diagnosis *d = s->d;
	struct flaky_buf *b = c->b;

	if (d->nflips == 0)
		return;
	flaky_buf_adds(b, "<h2>Revisions it flipped on</h2>\n<div "
	    "class=\"scroll\" tabindex=\"0\" role=\"region\" aria-label=\""
	    "flips\"><table id=\"flip-table\"><thead><tr><th scope=\"col\">"
	    "revision</th><th scope=\"col\">failed / passed runs</th><th "
	    "scope=\"col\">failed in</th><th scope=\"col\">passed in</th><th "
	    "scope=\"col\">last run (UTC)</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < d->nflips; i++) {
		const struct flaky_flip *f = &d->flips[i];

		flaky_buf_adds(b, "<tr><td>");
		web_esc(b, f->revision);
		flaky_buf_printf(b, "</td><td class=\"num\">%" PRId64 " / %"
		    PRId64 "</td><td>", f->fails, f->passes);
		where(c, f->fail_job, f->fail_attempt, f->fail_run);
		flaky_buf_adds(b, "</td><td>");
		where(c, f->pass_job, f->pass_attempt, f->pass_run);
		flaky_buf_adds(b, "</td><td>");
		web_time(b, f->last_ms);
		flaky_buf_adds(b, "</td></tr>\n");
	}
	flaky_buf_adds(b, "</tbody></table></div>\n");
}

int
web_story_runs(struct web_ctx *c, const struct flaky_diagnosis *d)
{
	struct flaky_result_row *v;
	struct flaky_buf *b = c->b;
	size_t	 n;
	int	 boxes = flaky_store_has_boxes(c->st);

	/* one file holds many tests: fewer runs each */
	if (flaky_store_test_results(c->st, d->test_id, c->single ?
	    WEB_TEST_RUNS / 4 : WEB_TEST_RUNS, &v, &n, c->err,
	    sizeof c->err) < 0)
		return -1;
	flaky_buf_printf(b, "<h2>Runs</h2>\n<p>The newest %zu, newest first; "
	    "position: the test's place in its run's order, counted from 1."
	    "</p>\n<div class=\"scroll\" tabindex=\"0\" role=\"region\" "
	    "aria-label=\"runs\"><table id=\"runs\"><thead><tr>"
	    "<th scope=\"col\">time (UTC)</th><th scope=\"col\">run</th>%s"
	    "<th scope=\"col\">kind</th><th scope=\"col\">revision</th>"
	    "<th scope=\"col\">outcome</th><th scope=\"col\">duration</th>"
	    "<th scope=\"col\">position</th></tr></thead>\n<tbody>\n", n,
	    boxes ? "<th scope=\"col\">box</th>" : "");
	for (size_t i = 0; i < n; i++) {
		const char *o = flaky_outcome_name(v[i].outcome);

		flaky_buf_adds(b, "<tr><td>");
		web_time(b, v[i].started_ms);
		flaky_buf_adds(b, "</td><td>");
		if (!c->single) {
			flaky_buf_adds(b, "<a ");
			web_href_run(c, v[i].run_id);
			flaky_buf_printf(b, ">#%" PRId64 "</a>", v[i].run_id);
		} else
			flaky_buf_printf(b, "#%" PRId64, v[i].run_id);
		if (boxes) {
			flaky_buf_adds(b, "</td><td>");
			web_esc(b, v[i].box != NULL ? v[i].box : "-");
		}
		flaky_buf_printf(b, "</td><td>%s</td><td>",
		    flaky_run_kind_name(v[i].kind));
		web_esc(b, v[i].revision != NULL ? v[i].revision : "-");
		flaky_buf_printf(b, "</td><td class=\"%s\">%s</td><td "
		    "class=\"num\">", o, o);
		web_dur_us(b, v[i].duration_us);
		flaky_buf_printf(b, "</td><td class=\"num\">%" PRId64
		    "</td></tr>\n", v[i].position + 1);
	}
	flaky_buf_adds(b, "</tbody></table></div>\n");
	flaky_result_rows_free(v, n);
	return 0;
}
