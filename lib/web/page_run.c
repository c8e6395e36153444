/* /run/N: a run's exit, duration and timing, its kept output (redacted as
 * it was stored) and its tests in the order they ran. */
#include "buildconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "web_int.h"

/* One line of the facts: label, then what the caller writes. */
static void
dt(struct flaky_buf *b, const char *label)
{
	flaky_buf_printf(b, "</dd>\n<dt>%s</dt><dd>", label);
}

static void
run_facts(struct web_ctx *c, const struct flaky_run_view *v)
{
	struct flaky_buf *b = c->b;

	flaky_buf_adds(b, "<dl class=\"facts\" id=\"run-facts\">\n"
	    "<dt>target</dt><dd>");
	web_esc(b, v->target);
	dt(b, "status");
	web_esc(b, v->status);
	dt(b, "exit code");
	if (v->exit_code >= 0)
		flaky_buf_printf(b, "%d", v->exit_code);
	else
		flaky_buf_printf(b, "killed by signal %d", v->signal);
	dt(b, "kind");
	web_esc(b, v->kind);
	flaky_buf_adds(b, ", trigger ");
	web_esc(b, v->trigger);
	dt(b, "started (UTC)");
	web_time(b, v->started_ms);
	dt(b, "ended (UTC)");
	web_time(b, v->ended_ms);
	dt(b, "duration");
	web_dur_us(b, v->duration_us);
	dt(b, "cpu");
	flaky_buf_adds(b, "user ");
	web_dur_us(b, v->user_us);
	flaky_buf_adds(b, ", system ");
	web_dur_us(b, v->sys_us);
	if (v->maxrss_kb >= 0)
		flaky_buf_printf(b, ", max RSS %" PRId64 " kB", v->maxrss_kb);
	if (v->loadavg >= 0)
		flaky_buf_printf(b, ", load %.2f", v->loadavg);
	if (v->box != NULL) {
		dt(b, "box");
		web_esc(b, v->box);
	}
	dt(b, "revision");
	web_esc(b, v->revision != NULL ? v->revision : "-");
	dt(b, "runner");
	web_esc(b, v->runner != NULL ? v->runner : "-");
	dt(b, "seed");
	web_esc(b, v->seed != NULL ? v->seed : "-");
	dt(b, "stress");
	web_esc(b, v->perturbation != NULL ? v->perturbation : "calm");
	dt(b, "tests");
	flaky_buf_printf(b, "%" PRId64 " result%s, %" PRId64 " failed",
	    v->tests, flaky_plural(v->tests), v->failures);
	if (v->incomplete != NULL) {
		dt(b, "incomplete");
		web_esc(b, v->incomplete);
	}
	if (v->error != NULL) {
		dt(b, "error");
		web_esc(b, v->error);
	}
	flaky_buf_adds(b, "</dd>\n</dl>\n");
}

/* The kept output of one stream. */
static void
output(struct flaky_buf *b, const char *name, const char *text)
{
	flaky_buf_printf(b, "<h2>%s</h2>\n", name);
	if (text == NULL || *text == '\0') {
		flaky_buf_adds(b, "<p>None kept.</p>\n");
		return;
	}
	flaky_buf_printf(b, "<pre class=\"output\" id=\"%s\">", name);
	web_esc(b, text);
	flaky_buf_adds(b, "</pre>\n");
}

static int
run_tests(struct web_ctx *c, int64_t id)
{
	struct flaky_run_result *v;
	struct flaky_buf *b = c->b;
	size_t	 n;

	if (flaky_store_run_results(c->st, id, &v, &n, c->err,
	    sizeof c->err) < 0)
		return -1;
	flaky_buf_printf(b, "<h2>Tests in their order</h2>\n<p>A failure's "
	    "message is on the line under its test.</p>\n<div "
	    "class=\"scroll\"><table id=\"order\"><thead><tr><th>#</th>"
	    "<th>test</th><th>outcome</th><th>duration</th><th>signature</th>"
	    "</tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < n; i++) {
		const char *o = flaky_outcome_name(v[i].outcome);

		flaky_buf_printf(b, "<tr><td class=\"num\">%" PRId64 "</td>"
		    "<td class=\"id\"><a ", v[i].position + 1);
		web_href_test(c, v[i].test_id);
		flaky_buf_adds(b, ">");
		web_esc_id(b, v[i].test);
		flaky_buf_printf(b, "</a></td><td class=\"%s\">%s</td><td "
		    "class=\"num\">", o, o);
		web_dur_us(b, v[i].duration_us);
		flaky_buf_adds(b, "</td><td>");
		web_esc(b, v[i].signature);
		flaky_buf_adds(b, "</td></tr>\n");
		/* the message as wide as the table, at any screen's width */
		if (v[i].message != NULL) {
			flaky_buf_adds(b, "<tr class=\"msg\"><td></td><td "
			    "class=\"msg\" colspan=\"4\"><pre>");
			web_esc(b, v[i].message);
			flaky_buf_adds(b, "</pre></td></tr>\n");
		}
	}
	flaky_buf_adds(b, "</tbody></table></div>\n");
	flaky_run_results_free(v, n);
	return 0;
}

int
web_page_run(struct web_ctx *c, int64_t id)
{
	struct flaky_run_view v;
	char	 sid[40], title[64];
	int	 r;

	if ((r = flaky_store_run_view(c->st, id, &v, c->err,
	    sizeof c->err)) < 0)
		return web_fail(c, r == -ENOENT ? 404 : 500, c->err);
	snprintf(sid, sizeof sid, "run-%" PRId64, id);
	snprintf(title, sizeof title, "Run %" PRId64, id);
	web_page_begin(c, sid, title);
	run_facts(c, &v);
	output(c->b, "stdout", v.out);
	output(c->b, "stderr", v.err);
	if ((r = web_run_stacks(c, id)) == 0)
		r = run_tests(c, id);
	flaky_run_view_clear(&v);
	if (r < 0)
		return web_fail(c, 500, c->err);
	web_page_end(c);
	return 0;
}
