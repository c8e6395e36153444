/* /test/N: one test's rate over time with its band, its newest runs, its
 * failures by fingerprint, its signature and the evidence for it, the
 * verdict of its runs alone, its quarantine and flakyctl ticket's ticket
 * to copy. */
#include "buildconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diagnose.h"
#include "stats/stats.h"
#include "web_int.h"

/* A fact of the list: a label and escaped text. */
static void
fact(struct flaky_buf *b, const char *label, const char *text)
{
	flaky_buf_printf(b, "<dt>%s</dt><dd>", label);
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

/* The facts: rate, signature and its evidence, polluter, runs alone,
 * quarantine. */
static void
facts(struct web_ctx *c, const struct flaky_diagnosis *d,
    const struct flaky_quarantine_row *qr)
{
	struct flaky_buf *b = c->b;
	double	 lo, hi;

	flaky_wilson(d->failures, d->runs, FLAKY_Z95, &lo, &hi);
	flaky_buf_adds(b, "<dl class=\"facts\">\n");
	fact(b, "target", d->target);
	flaky_buf_printf(b, "<dt>rate</dt><dd id=\"rate\">%" PRId64 " of %"
	    PRId64 " run%s failed (%.1f%%, 95%% interval %.1f&ndash;%.1f%%), "
	    "tier %s, ", d->failures, d->runs, flaky_plural(d->runs), d->runs ?
	    100.0 * d->failures / d->runs : 0.0, 100 * lo, 100 * hi,
	    flaky_tier_name(flaky_tier_skips(d->failures, d->runs,
	    d->skips)));
	web_window_words(c, b);
	flaky_buf_adds(b, "</dd>\n");
	fact(b, "verdict", flaky_verdict_name(d->verdict));
	fact(b, "signature", d->signature);
	flaky_buf_adds(b, "<dt>evidence</dt><dd>");
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
	if (d->nboxes > 1) {
		/* where its target ran on more than one box */
		flaky_buf_adds(b, "<dt>boxes</dt><dd id=\"boxes\">");
		web_box_words(b, d->boxes, d->nboxes);
		flaky_buf_adds(b, "</dd>\n");
	}
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
		fact(b, "suspected polluter", d->polluter);
	if (d->depends_on != NULL)
		fact(b, "depends on", d->depends_on);
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
	flaky_buf_adds(b, "</dd>\n<dt>quarantine</dt><dd id=\"quarantine\">");
	if (qr == NULL)
		flaky_buf_adds(b, "not quarantined");
	else {
		flaky_buf_adds(b, "quarantined since ");
		web_time(b, qr->added_ms);
		flaky_buf_printf(b, ", %" PRId64 " pass%s in a row since; "
		    "reason: ", qr->passes, flaky_plural_es(qr->passes));
		web_esc(b, qr->reason != NULL ? qr->reason : "-");
	}
	flaky_buf_adds(b, "</dd>\n</dl>\n");
}

/* Its newest runs, each linking to its page. */
static int
runs_table(struct web_ctx *c, const struct flaky_diagnosis *d)
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
	    "</p>\n<div class=\"scroll\"><table id=\"runs\"><thead><tr>"
	    "<th>time (UTC)</th><th>run</th>%s<th>kind</th><th>revision</th>"
	    "<th>outcome</th><th>duration</th><th>position</th></tr></thead>"
	    "\n<tbody>\n", n, boxes ? "<th>box</th>" : "");
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

/* Failure messages by fingerprint, most first. */
static void
modes_table(struct web_ctx *c, const struct flaky_diagnosis *d)
{
	struct flaky_buf *b = c->b;

	flaky_buf_adds(b, "<h2>Failures by message</h2>\n");
	if (d->nmodes == 0) {
		flaky_buf_adds(b, "<p>No failure in the window.</p>\n");
		return;
	}
	flaky_buf_adds(b, "<div class=\"scroll\"><table id=\"modes\"><thead>"
	    "<tr><th>count</th><th>signature</th><th>message (newest)</th>"
	    "</tr></thead>\n<tbody>\n");
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

/* The ticket flakyctl ticket prints (without a config: no isolate:
 * template), in a pre with a copy button. */
static int
ticket(struct web_ctx *c, const struct flaky_diagnosis *d)
{
	struct flaky_buf t, *b = c->b;
	int	 r;

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

/* The quarantine row of a test, if any (rows is the caller's). */
static const struct flaky_quarantine_row *
quarantine_of(const struct flaky_quarantine_row *v, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].test_id == id)
			return &v[i];
	return NULL;
}

int
web_page_test(struct web_ctx *c, int64_t id)
{
	struct flaky_diagnosis *d = NULL;
	struct flaky_quarantine_row *qv = NULL;
	size_t	 nq = 0;
	char	 sid[40];
	int	 r;

	if ((r = flaky_diagnose_test(c->st, id, &c->q, &d, c->err,
	    sizeof c->err)) < 0)
		return web_fail(c, r == -ENOENT ? 404 : 500, c->err);
	if (flaky_store_quarantine_list(c->st, &qv, &nq, c->err,
	    sizeof c->err) < 0) {
		flaky_diagnosis_free(d);
		return web_fail(c, 500, c->err);
	}
	snprintf(sid, sizeof sid, "test-%" PRId64, id);
	web_page_begin(c, sid, d->test);
	facts(c, d, quarantine_of(qv, nq, id));
	if ((r = rate_over_time(c, d)) == 0 && (r = runs_table(c, d)) == 0) {
		modes_table(c, d);
		web_test_hangs(c, &d->hangs);
		if ((r = ticket(c, d)) == 0)
			web_page_end(c);
	}
	flaky_quarantine_rows_free(qv, nq);
	flaky_diagnosis_free(d);
	if (r < 0)
		return web_fail(c, 500, c->err);
	return 0;
}
