/* /test/N: a test's whole story (issue 32, docs/dashboard.md "A test's
 * page"): its state, tier and rate, first and last failure, flips,
 * owners, ticket, quarantine, rates per box and branch, polluter and
 * cluster; the actions a team takes on it and who took them
 * (test_story.c); its rate over time, its durations passing and failing,
 * its failures by message, the command that reproduces it, its newest
 * runs, and flakyctl ticket's ticket to copy. */
#include "buildconf.h"

#include "diagnose/diagnose.h"
#include "stats/stats.h"
#include "web_int.h"

/* A fact of the list: a label and escaped text. */
static void
fact(struct flaky_buf *b, const char *id, const char *label, const char *text)
{
	flaky_buf_printf(b, "<dt>%s</dt><dd id=\"%s\">", label, id);
	web_esc(b, text != NULL ? text : "-");
	flaky_buf_adds(b, "</dd>\n");
}

/* The daily series from the first day with data in the window to today:
 * one day of data is a chart of one day, not an empty one. */
static int
rate_over_time(struct web_ctx *c, const struct flaky_diagnosis *d)
{
	int64_t	 last = (c->q.until_ms - 1) / FLAKY_DAY_MS;
	int64_t	 first = c->q.since_ms / FLAKY_DAY_MS, nd;
	uint32_t *runs, *fails;
	int	 r;

	if (d->first_ms > 0 && d->first_ms / FLAKY_DAY_MS > first)
		first = d->first_ms / FLAKY_DAY_MS;
	if (first > last)
		first = last;
	if (last - first >= WEB_CHART_DAYS)	/* --since all: the last year */
		first = last - WEB_CHART_DAYS + 1;
	nd = last - first + 1;
	runs = calloc((size_t)nd, sizeof *runs);
	fails = calloc((size_t)nd, sizeof *fails);
	if (runs == NULL || fails == NULL)
		r = -ENOMEM;
	else
		r = flaky_store_test_days(c->st, d->test_id, first, nd, runs,
		    fails, c->err, sizeof c->err);
	if (r == 0) {
		flaky_buf_adds(c->b, "<h2>Failure rate over time</h2>\n"
		    "<div class=\"scroll\">");
		svg_rate_chart(c->b, first, nd, runs, fails);
		flaky_buf_adds(c->b, "</div>\n");
	}
	free(runs);
	free(fails);
	return r;
}

/* Its seed sweep and the headroom of its approximate assertions
 * (issue 34). */
static void
seed_facts(struct flaky_buf *b, const struct flaky_diagnosis *d)
{
	struct flaky_buf w;

	if (d->seed_ev.runs == 0 && d->nheadroom == 0)
		return;
	flaky_buf_init(&w);
	if (d->seed_ev.runs > 0) {
		if (d->seed_ev.failures > 0)
			flaky_seed_words(&d->seed_ev, &w);
		else
			flaky_buf_printf(&w, "passes for all %" PRId64
			    " seeds", d->seed_ev.runs);
		flaky_buf_adds(b, "<dt>seeds</dt><dd id=\"seeds\">");
		web_esc(b, flaky_buf_cstr(&w));
		if (d->seed_ev.sensitive && d->seed_ev.seed[0] != '\0') {
			flaky_buf_reset(&w);
			flaky_repro(d, NULL, &w);
			flaky_buf_adds(b, "<br>the failing seed again: <code>");
			web_esc(b, flaky_buf_cstr(&w));
			flaky_buf_adds(b, "</code>");
		}
		flaky_buf_adds(b, "</dd>\n");
	}
	if (d->nheadroom > 0) {
		flaky_buf_adds(b, "<dt>headroom</dt><dd id=\"headroom\"><ul>");
		for (size_t i = 0; i < d->nheadroom; i++) {
			flaky_buf_reset(&w);
			flaky_headroom_words(&d->headroom[i], &w);
			flaky_buf_printf(b, "<li%s>", d->headroom[i].at_risk ?
			    " class=\"risk\"" : "");
			web_esc(b, flaky_buf_cstr(&w));
			flaky_buf_adds(b, "</li>");
		}
		flaky_buf_adds(b, "</ul></dd>\n");
	}
	flaky_buf_free(&w);
}

/* The rate, its interval, tier and state. */
static void
fact_rate(struct web_ctx *c, const struct web_story *s)
{
	const struct flaky_diagnosis *d = s->d;
	struct flaky_buf *b = c->b;
	double	 lo, hi;

	flaky_wilson(d->failures, d->runs, FLAKY_Z95, &lo, &hi);
	flaky_buf_adds(b, "<dt>state</dt><dd id=\"state\">");
	web_state_badge(b, s->state);
	flaky_buf_adds(b, "</dd>\n<dt>tier</dt><dd id=\"tier\">");
	web_tier_badge(b, flaky_tier_skips(d->failures, d->runs, d->skips));
	flaky_buf_printf(b, "</dd>\n<dt>rate</dt><dd id=\"rate\">%" PRId64
	    " of %" PRId64 " run%s failed (%.1f%%, 95%% interval "
	    "%.1f&ndash;%.1f%%), ", d->failures, d->runs, flaky_plural(d->runs),
	    d->runs ? 100.0 * d->failures / d->runs : 0.0, 100 * lo, 100 * hi);
	web_window_words(c, b);
	flaky_buf_adds(b, "</dd>\n<dt>first, last failure</dt><dd "
	    "id=\"failed-span\">");
	if (s->first_fail_ms == 0)
		flaky_buf_adds(b, "never failed");
	else {
		web_time(b, s->first_fail_ms);
		flaky_buf_adds(b, " &ndash; ");
		web_time(b, s->last_fail_ms);
		flaky_buf_adds(b, " (UTC)");
	}
	flaky_buf_adds(b, "</dd>\n");
}

/* Signature, evidence, polluter, runs alone. */
static void
fact_evidence(struct web_ctx *c, const struct flaky_diagnosis *d)
{
	struct flaky_buf *b = c->b;

	fact(b, "verdict", "verdict", flaky_verdict_name(d->verdict));
	fact(b, "signature", "signature", d->signature);
	flaky_buf_adds(b, "<dt>evidence</dt><dd id=\"evidence\">");
	for (size_t i = 0; i < d->nsigs; i++) {
		web_esc(b, d->sigs[i].name);
		flaky_buf_printf(b, " &times;%" PRId64 "%s", d->sigs[i].count,
		    i + 1 < d->nsigs ? ", " : "");
	}
	if (d->race_timing)
		flaky_buf_adds(b, "; outcome goes with duration (RACE)");
	if (d->stress_race)
		flaky_buf_adds(b, "; fails more under stress (RACE)");
	if (d->seed_sig)
		flaky_buf_adds(b, "; fails for some seeds, passes for others "
		    "(SEED)");
	flaky_buf_adds(b, "</dd>\n");
	seed_facts(b, d);
	if (d->npolluters > 0) {
		/* confirmed by flakyctl polluter; the orders only suspect */
		flaky_buf_adds(b, "<dt>polluters</dt><dd id=\"polluters\">");
		for (size_t i = 0; i < d->npolluters; i++) {
			flaky_buf_adds(b, i ? ", " : "");
			web_esc(b, d->polluters[i]);
		}
		flaky_buf_adds(b, " (confirmed by flakyctl polluter)</dd>\n");
	} else
		fact(b, "polluter", "suspected polluter", d->polluter);
	if (d->depends_on != NULL)
		fact(b, "depends-on", "depends on", d->depends_on);
	flaky_buf_printf(b, "<dt>runs alone</dt><dd id=\"alone\">");
	if (d->alone_runs == 0)
		flaky_buf_adds(b, "none");
	else
		flaky_buf_printf(b, "%" PRId64 " of %" PRId64 " run%s failed "
		    "alone; %s", d->alone_failures, d->alone_runs,
		    flaky_plural(d->alone_runs), d->passes_alone ?
		    "passes alone: order dependent" : d->fails_alone ?
		    "fails alone, passes in the suite: order dependent" :
		    "no verdict of order dependence");
	flaky_buf_adds(b, "</dd>\n");
}

/* Failure messages by fingerprint, most first, an example each. */
static void
modes_table(struct web_ctx *c, const struct flaky_diagnosis *d)
{
	struct flaky_buf *b = c->b;

	flaky_buf_adds(b, "<h2>Failure modes</h2>\n");
	if (d->nmodes == 0) {
		flaky_buf_adds(b, "<p>No failure in the window.</p>\n");
		return;
	}
	flaky_buf_adds(b, "<div class=\"scroll\" tabindex=\"0\" role=\"region\" "
	    "aria-label=\"failure modes\"><table id=\"modes\"><thead><tr><th "
	    "scope=\"col\">count</th><th scope=\"col\">signature</th><th "
	    "scope=\"col\">message (newest example)</th></tr></thead>\n"
	    "<tbody>\n");
	for (size_t i = 0; i < d->nmodes; i++) {
		const struct flaky_failure_mode *m = &d->modes[i];

		flaky_buf_printf(b, "<tr><td class=\"num\">%" PRId64
		    "</td><td>", m->count);
		web_esc(b, m->signature != NULL ? m->signature : "-");
		flaky_buf_adds(b, "</td><td class=\"text\"><pre>");
		web_esc(b, m->example != NULL ? m->example : m->normalized);
		flaky_buf_adds(b, "</pre></td></tr>\n");
	}
	flaky_buf_adds(b, "</tbody></table></div>\n");
}

/* The command that reproduces it, and the ticket flakyctl ticket prints
 * (without a config: no isolate: template), each with a copy button. */
static int
repro_and_ticket(struct web_ctx *c, const struct web_story *s)
{
	const struct flaky_diagnosis *d = s->d;
	struct flaky_buf t, *b = c->b;
	int	 r;

	flaky_buf_printf(b, "<h2>Reproduce</h2>\n<button type=\"button\" "
	    "data-copy=\"repro-%" PRId64 "\">copy</button>\n<pre id=\"repro-%"
	    PRId64 "\">", d->test_id, d->test_id);
	web_esc(b, flaky_buf_cstr((struct flaky_buf *)&s->repro));
	flaky_buf_adds(b, "</pre>\n");
	flaky_buf_init(&t);
	if ((r = flaky_ticket_markdown(c->st, d, NULL, &t)) == 0) {
		flaky_buf_printf(b, "<h2>Ticket</h2>\n<p>What <code>flakyctl "
		    "ticket</code> prints, to paste into a tracker.</p>\n"
		    "<button type=\"button\" data-copy=\"ticket-%" PRId64
		    "\">copy</button>\n<pre id=\"ticket-%" PRId64 "\" "
		    "class=\"ticket\">", d->test_id, d->test_id);
		web_escn(b, t.data, t.len);
		flaky_buf_adds(b, "</pre>\n");
	} else
		snprintf(c->err, sizeof c->err, "the ticket: out of memory");
	flaky_buf_free(&t);
	return r;
}

int
web_page_test(struct web_ctx *c, int64_t id)
{
	struct web_story s;
	char	 sid[40];
	int	 r;

	if ((r = web_story_load(c, id, &s)) < 0) {
		web_story_free(&s);
		return web_fail(c, r == -ENOENT ? 404 : 500, c->err);
	}
	snprintf(sid, sizeof sid, "test-%" PRId64, id);
	web_page_begin(c, sid, s.d->test);
	flaky_buf_adds(c->b, "<dl class=\"facts\">\n");
	fact(c->b, "target", "target", s.d->target);
	fact_rate(c, &s);
	web_story_facts(c, &s);
	fact_evidence(c, s.d);
	flaky_buf_adds(c->b, "</dl>\n");
	if (!c->single)
		web_story_actions(c, &s);
	if ((r = rate_over_time(c, s.d)) == 0) {
		flaky_buf_adds(c->b, "<h2>Durations, passing and failing</h2>\n");
		web_chart_durations(c->b, s.pass, s.fail);
		modes_table(c, s.d);
		web_test_hangs(c, &s.d->hangs);
		web_story_flips(c, &s);
		if ((r = web_story_runs(c, s.d)) == 0 &&
		    (r = repro_and_ticket(c, &s)) == 0)
			web_page_end(c);
	}
	web_story_free(&s);
	if (r < 0)
		return web_fail(c, 500, c->err);
	return 0;
}
