/* The stacks of hung runs on the dashboard (issue 33): where a test's
 * timeouts hung on its page and in /api/v1/test/ID, and each process's
 * stacks on a run's page and in /api/v1/run/ID. */
#include "buildconf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "json/json.h"
#include "web_int.h"

/* The test page's section: nothing when its timeouts left no stacks. */
void
web_test_hangs(struct web_ctx *c, const struct flaky_hangs *h)
{
	struct flaky_buf *b = c->b, w;

	if (h->n == 0)
		return;
	flaky_buf_init(&w);
	flaky_hang_words(h, &w);
	flaky_buf_adds(b, "<h2>Where it hung</h2>\n<p id=\"hangs\">");
	web_esc(b, flaky_buf_cstr(&w));
	flaky_buf_printf(b, " (from the stacks taken before the time limit; "
	    "%" PRId64 " ms median, %" PRId64 " ms at most to take them)."
	    "</p>\n<p>First patch: ", h->capture_ms_median, h->capture_ms_max);
	flaky_buf_reset(&w);
	flaky_hang_patch(h, &w);
	web_esc(b, flaky_buf_cstr(&w));
	flaky_buf_adds(b, ".</p>\n");
	flaky_buf_reset(&w);
	flaky_hang_stack(h->frames, 16, &w);
	if (w.len > 0) {
		flaky_buf_adds(b, "<p>The hung thread of <a ");
		web_href_run(c, h->newest_run);
		flaky_buf_printf(b, ">run %" PRId64 "</a>, innermost first "
		    "(&gt; the test's own code):</p>\n<pre id=\"hang-stack\">",
		    h->newest_run);
		web_esc(b, flaky_buf_cstr(&w));
		flaky_buf_adds(b, "</pre>\n");
	}
	flaky_buf_free(&w);
}

/* The member hangs of /api/v1/test/ID. */
void
web_api_hangs(struct flaky_jw *w, const struct flaky_hangs *h)
{
	struct flaky_buf b;

	flaky_jw_key(w, "hangs");
	if (h->n == 0) {
		flaky_jw_null(w);
		return;
	}
	flaky_buf_init(&b);
	flaky_jw_object_begin(w);
	jw_int(w, "timeouts", h->runs);
	jw_int(w, "capture_ms_median", h->capture_ms_median);
	jw_int(w, "capture_ms_max", h->capture_ms_max);
	jw_int(w, "newest_run", h->newest_run);
	flaky_hang_words(h, &b);
	jw_str(w, "summary", flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	flaky_hang_patch(h, &b);
	jw_str(w, "patch", flaky_buf_cstr(&b));
	jw_str(w, "stack", h->frames);
	flaky_jw_key(w, "places");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < h->n; i++) {
		const struct flaky_hang_site *s = &h->v[i];

		flaky_jw_object_begin(w);
		jw_int(w, "count", s->count);
		jw_int(w, "run", s->run_id);
		jw_str(w, "kind", s->kind);
		jw_str(w, "function", s->func);
		jw_str(w, "file", s->file);
		flaky_jw_key(w, "line");
		if (s->line > 0)
			flaky_jw_int(w, s->line);
		else
			flaky_jw_null(w);
		jw_str(w, "call", s->call);
		jw_str(w, "code", s->code);
		jw_str(w, "deadlock", s->deadlock);
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
	flaky_jw_object_end(w);
	flaky_buf_free(&b);
}

/* The fold of a run's stacks in one sentence: "blocked in `f` (file:7),
 * `code`", the deadlock named. */
static void
hang_line(struct flaky_buf *b, const struct flaky_hang *h)
{
	flaky_buf_printf(b, "%s in ", h->kind != NULL ? h->kind : "stuck");
	if (h->func != NULL) {
		flaky_buf_printf(b, "`%s`", h->func);
		if (h->file != NULL)
			flaky_buf_printf(b, h->line > 0 ? " (%s:%d)" : " (%s)",
			    h->file, h->line);
		if (h->code != NULL)
			flaky_buf_printf(b, ", `%s`", h->code);
	} else
		flaky_buf_printf(b, "`%s`", h->call != NULL ? h->call :
		    "an unknown place");
	if (h->thread != NULL)
		flaky_buf_printf(b, ", thread %s", h->thread);
	if (h->deadlock != NULL)
		flaky_buf_printf(b, ": %s", h->deadlock);
}

/* The run page's section: the fold, then each process's stacks. */
int
web_run_stacks(struct web_ctx *c, int64_t run_id)
{
	struct flaky_stacks *k;
	struct flaky_buf *b = c->b, w;

	if (flaky_store_run_stacks(c->st, run_id, &k, c->err,
	    sizeof c->err) < 0)
		return -1;
	if (k == NULL)
		return 0;
	flaky_buf_init(&w);
	hang_line(&w, &k->hang);
	flaky_buf_adds(b, "<h2>Stacks at the time limit</h2>\n<p id=\"stacks\">");
	web_esc(b, flaky_buf_cstr(&w));
	flaky_buf_printf(b, ". Taken from %zu of %d process%s in %" PRId64
	    " ms (bound %" PRId64 " ms)", k->n, k->procs, k->procs == 1 ?
	    "" : "es", k->ms, k->bound_ms);
	if (k->test_name != NULL) {
		flaky_buf_adds(b, "; the test running: ");
		web_esc(b, k->test_name);
	}
	if (k->note != NULL) {
		flaky_buf_adds(b, "; ");
		web_esc(b, k->note);
	}
	flaky_buf_adds(b, ".</p>\n");
	for (size_t i = 0; i < k->n; i++) {
		const struct flaky_stack_dump *d = &k->v[i];

		flaky_buf_printf(b, "<details%s><summary>pid %d (%s, %s, %"
		    PRId64 " ms)", i == 0 ? " open" : "", d->pid, d->runtime,
		    d->tool[0] ? d->tool : "none", d->ms);
		if (d->command != NULL) {
			flaky_buf_adds(b, ": ");
			web_esc(b, d->command);
		}
		if (d->note != NULL) {
			flaky_buf_adds(b, " &mdash; ");
			web_esc(b, d->note);
		}
		flaky_buf_adds(b, "</summary>\n<pre class=\"output\">");
		web_esc(b, d->text != NULL ? d->text : "(none)");
		flaky_buf_adds(b, "</pre></details>\n");
	}
	flaky_buf_free(&w);
	flaky_stacks_free(k);
	return 0;
}

/* The member stacks of /api/v1/run/ID: null for a run without. */
int
web_api_run_stacks(struct web_ctx *c, struct flaky_jw *w, int64_t run_id)
{
	struct flaky_stacks *k;
	const struct flaky_hang *h;

	if (flaky_store_run_stacks(c->st, run_id, &k, c->err,
	    sizeof c->err) < 0)
		return -1;
	flaky_jw_key(w, "stacks");
	if (k == NULL) {
		flaky_jw_null(w);
		return 0;
	}
	h = &k->hang;
	flaky_jw_object_begin(w);
	jw_int(w, "capture_ms", k->ms);
	jw_int(w, "bound_ms", k->bound_ms);
	jw_int(w, "processes", k->procs);
	jw_str(w, "test", k->test_name);
	jw_str(w, "note", k->note);
	jw_str(w, "kind", h->kind);
	jw_str(w, "function", h->func);
	jw_str(w, "file", h->file);
	flaky_jw_key(w, "line");
	if (h->line > 0)
		flaky_jw_int(w, h->line);
	else
		flaky_jw_null(w);
	jw_str(w, "call", h->call);
	jw_str(w, "code", h->code);
	jw_str(w, "deadlock", h->deadlock);
	jw_str(w, "thread", h->thread);
	jw_str(w, "frames", h->frames);
	flaky_jw_key(w, "dumps");
	flaky_jw_array_begin(w);
	for (size_t i = 0; i < k->n; i++) {
		const struct flaky_stack_dump *d = &k->v[i];

		flaky_jw_object_begin(w);
		jw_int(w, "pid", d->pid);
		jw_int(w, "ppid", d->ppid);
		jw_str(w, "runtime", d->runtime);
		jw_str(w, "tool", d->tool[0] ? d->tool : NULL);
		jw_str(w, "command", d->command);
		jw_int(w, "ms", d->ms);
		jw_str(w, "note", d->note);
		jw_str(w, "text", d->text);
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
	flaky_jw_object_end(w);
	flaky_stacks_free(k);
	return 0;
}
