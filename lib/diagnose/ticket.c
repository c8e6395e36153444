/* The Markdown ticket of one test, as flakyctl ticket prints it and the
 * dashboard's test page shows it: title, failure rate with its interval,
 * signature and evidence, the distinct failure modes, timing, revisions,
 * the suspected polluter, a command that reproduces it, and what the
 * store holds of flakyctl polluter's and the static scan's findings. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diagnose.h"
#include "stats/stats.h"

/* Lines of an example message kept in a ticket. */
#define EXAMPLE_LINES	25

/* A fenced block that no line of s can close. */
static void
md_code(struct flaky_buf *b, const char *lang, const char *s, int max)
{
	const char *fence = strstr(s, "```") ? "~~~~" : "```";
	int	 lines = 0;

	flaky_buf_printf(b, "%s%s\n", fence, lang);
	while (*s != '\0' && lines < max) {
		size_t	 n = strcspn(s, "\n");

		flaky_buf_add(b, s, n);
		flaky_buf_addc(b, '\n');
		lines++;
		s += n;
		if (*s == '\n')
			s++;
	}
	if (*s != '\0')
		flaky_buf_adds(b, "...\n");
	flaky_buf_printf(b, "%s\n", fence);
}

/* Inline code with backticks that the text cannot end. */
static void
md_inline(struct flaky_buf *b, const char *s)
{
	int	 dbl = strchr(s, '`') != NULL;

	flaky_buf_adds(b, dbl ? "`` " : "`");
	for (; *s; s++)
		flaky_buf_addc(b, *s == '\n' ? ' ' : *s);
	flaky_buf_adds(b, dbl ? " ``" : "`");
}

/* The timing table, with a row for passes and one for failures where
 * durations are known: none at all (unittest prints none) leaves the
 * section out. */
static void
ticket_timing(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	const struct flaky_timing *t = &d->timing;
	char	 a[32], c[32];

	if (t->n_pass == 0 && t->n_fail == 0)
		return;
	flaky_buf_adds(b, "### Timing\n\n| | runs | median | p90 |\n"
	    "|---|---:|---:|---:|\n");
	if (t->n_pass > 0) {
		flaky_format_ms(t->median_pass, a, sizeof a);
		flaky_format_ms(t->p90_pass, c, sizeof c);
		flaky_buf_printf(b, "| passing | %lld | %s | %s |\n",
		    (long long)t->n_pass, a, c);
	}
	if (t->n_fail > 0) {
		flaky_format_ms(t->median_fail, a, sizeof a);
		flaky_format_ms(t->p90_fail, c, sizeof c);
		flaky_buf_printf(b, "| failing | %lld | %s | %s |\n",
		    (long long)t->n_fail, a, c);
	}
	flaky_buf_adds(b, "\n");
}

/* A seed sweep's section (issue 34): the share of seeds it fails for,
 * its replays, and the headroom of each approximate assertion. */
static void
ticket_seeds(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	struct flaky_buf w;

	if (d->seed_ev.runs == 0 && d->nheadroom == 0)
		return;
	flaky_buf_init(&w);
	flaky_buf_adds(b, "### Seeds\n\n");
	if (d->seed_ev.failures > 0) {
		flaky_seed_words(&d->seed_ev, &w);
		flaky_buf_printf(b, "It %s.\n\n", flaky_buf_cstr(&w));
	} else if (d->seed_ev.runs > 0)
		flaky_buf_printf(b, "It passed for all %lld seeds of the "
		    "sweep.\n\n", (long long)d->seed_ev.runs);
	for (size_t i = 0; i < d->nheadroom; i++) {
		flaky_buf_reset(&w);
		flaky_headroom_words(&d->headroom[i], &w);
		flaky_buf_printf(b, "- %s\n", flaky_buf_cstr(&w));
	}
	if (d->nheadroom > 0)
		flaky_buf_adds(b, "\n");
	flaky_buf_free(&w);
}

/* The Markdown body of a ticket from the diagnosis alone. */
static void
ticket_diagnosis(const struct flaky_diagnosis *d, const char *isolate,
    struct flaky_buf *b)
{
	struct flaky_buf w;
	double	 lo, hi;
	char	 t1[32], t2[32];
	int	 broken = d->verdict == FLAKY_VERDICT_BROKEN;

	flaky_buf_init(&w);
	flaky_wilson(d->failures, d->runs, FLAKY_Z95, &lo, &hi);
	flaky_buf_adds(b, "**Test:** ");
	md_inline(b, d->test);
	flaky_buf_adds(b, " (target ");
	md_inline(b, d->target);
	if (d->runs == 0) {
		/* no rate, no window of runs: say why instead */
		flaky_unrun_words(d, &w);
		flaky_buf_printf(b, ")\n\n**Evidence:** no counted run in "
		    "the window: %s", flaky_buf_cstr(&w));
		if (d->skips > 0)
			flaky_buf_printf(b, ", from %s to %s",
			    flaky_format_time(d->first_ms, t1, sizeof t1),
			    flaky_format_time(d->last_ms, t2, sizeof t2));
		flaky_buf_printf(b, "\n\n**Verdict:** %s\n\n",
		    flaky_verdict_name(d->verdict));
		goto repro;
	}
	flaky_buf_printf(b, ")\n\n**Failure rate:** %lld of %lld run%s "
	    "(%.1f%%; 95%% interval %.1f%%-%.1f%%) between %s and %s\n\n",
	    (long long)d->failures, (long long)d->runs, flaky_plural(d->runs),
	    d->runs ? 100.0 * (double)d->failures / (double)d->runs : 0.0,
	    100 * lo, 100 * hi, flaky_format_time(d->first_ms, t1, sizeof t1),
	    flaky_format_time(d->last_ms, t2, sizeof t2));
	flaky_evidence_words(d, &w);
	flaky_buf_printf(b, "**Signature:** %s (%s)\n\n**Verdict:** %s",
	    d->signature ? d->signature : "none", flaky_buf_cstr(&w),
	    flaky_verdict_name(d->verdict));
	flaky_buf_reset(&w);
	flaky_revision_words(d, &w);
	if (w.len > 0)
		flaky_buf_printf(b, ": %s", flaky_buf_cstr(&w));
	flaky_buf_adds(b, "\n\n");

	if (d->nmodes > 0)
		flaky_buf_printf(b, "### Failure modes (%zu)\n\n", d->nmodes);
	for (size_t i = 0; i < d->nmodes; i++) {
		const struct flaky_failure_mode *m = &d->modes[i];

		flaky_buf_printf(b, "%zu. %lld time%s, %s, fingerprint "
		    "`%016llx`: ", i + 1, (long long)m->count,
		    m->count == 1 ? "" : "s", m->signature ? m->signature :
		    "UNKNOWN", (unsigned long long)m->fingerprint);
		md_inline(b, m->normalized ? m->normalized : "(no message)");
		flaky_buf_adds(b, "\n\n");
		if (m->example != NULL)
			md_code(b, "", m->example, EXAMPLE_LINES);
		flaky_buf_adds(b, "\n");
	}

	ticket_timing(d, b);
	flaky_buf_reset(&w);
	flaky_timing_words(d, &w);
	if (w.len > 0)
		flaky_buf_printf(b, "%s.\n\n", flaky_buf_cstr(&w));

	/* the transition, when there is one, in the state's cell: a column
	 * of its own would be empty in most tickets */
	if (d->nrevs > 0)
		flaky_buf_adds(b, "### Revisions\n\n| revision | runs | "
		    "failures | 95% interval | state |\n"
		    "|---|---:|---:|---|---|\n");
	for (size_t i = 0; i < d->nrevs; i++) {
		const struct flaky_rev_stat *r = &d->revs[i];
		const char *tr = flaky_transition_name(r->transition);

		flaky_buf_adds(b, "| ");
		md_inline(b, r->revision ? r->revision : "(none)");
		flaky_buf_printf(b, " | %lld | %lld | %.0f%%-%.0f%% | %s%s%s%s "
		    "|\n", (long long)r->runs, (long long)r->failures,
		    100 * r->ci_low, 100 * r->ci_high,
		    flaky_rev_state_name(r->state), tr ? " (" : "",
		    tr ? tr : "", tr ? ")" : "");
	}
	if (d->nrevs > 0)
		flaky_buf_adds(b, "\n");

	/* a confirmed set (flakyctl polluter's) is its own section below */
	if (d->polluter != NULL && d->npolluters == 0) {
		flaky_buf_adds(b, "### Suspected polluter\n\n");
		md_inline(b, d->polluter);
		flaky_buf_printf(b, ": this test failed in %lld of %lld run%s "
		    "where it ran before, and %lld of %lld where it did not "
		    "(p = %.2g over %zu candidate%s).\n\n",
		    (long long)d->order.k_before, (long long)d->order.n_before,
		    flaky_plural(d->order.n_before),
		    (long long)d->order.k_without,
		    (long long)d->order.n_without, d->order.p,
		    d->order.candidates, flaky_plural((long long)
		    d->order.candidates));
		flaky_buf_reset(&w);
		flaky_sh_quote(&w, d->test);
		flaky_buf_printf(b, "Suspected from the stored run orders, not "
		    "confirmed: it may need other tests before it too, or be "
		    "a neighbour of the real one. `flakyctl polluter %s` "
		    "reruns the tests that ran before this one to find the "
		    "smallest set that makes it fail.\n\n",
		    flaky_buf_cstr(&w));
	}

	if (d->depends_on != NULL) {
		flaky_buf_adds(b, "### Relies on a set-up test\n\n");
		md_inline(b, d->depends_on);
		flaky_buf_printf(b, ": this test failed in %lld of %lld run%s "
		    "where it did not run before, and %lld of %lld where it "
		    "did (p = %.2g over %zu candidate%s, each both ways).\n\n",
		    (long long)d->order.k_without,
		    (long long)d->order.n_without,
		    flaky_plural(d->order.n_without),
		    (long long)d->order.k_before, (long long)d->order.n_before,
		    d->order.p, d->order.candidates, flaky_plural((long long)
		    d->order.candidates));
	}
	if (d->race_timing) {
		flaky_buf_reset(&w);
		flaky_race_words(&d->timing, &w);
		flaky_buf_printf(b, "### Timing points at a race\n\nThe "
		    "failure messages match no known pattern; %s. The "
		    "failures do not cluster at one long duration, so this "
		    "is not a timeout.\n\n", flaky_buf_cstr(&w));
	}
	if (d->hangs.n > 0) {
		flaky_buf_reset(&w);
		flaky_hang_words(&d->hangs, &w);
		flaky_buf_printf(b, "### Where it hung\n\nFrom the stacks "
		    "taken before the time limit killed the run: %s.\n\n",
		    flaky_buf_cstr(&w));
		flaky_buf_reset(&w);
		flaky_hang_stack(d->hangs.frames, 12, &w);
		if (w.len > 0) {
			flaky_buf_printf(b, "The hung thread of run %lld, "
			    "innermost first (`>` the test's own code):\n\n",
			    (long long)d->hangs.newest_run);
			md_code(b, "", flaky_buf_cstr(&w), 14);
			flaky_buf_adds(b, "\n");
		}
	}

	ticket_seeds(d, b);

repro:
	flaky_buf_adds(b, "### Reproduce\n\n");
	flaky_buf_reset(&w);
	flaky_repro(d, NULL, &w);
	md_code(b, "sh", flaky_buf_cstr(&w), 5);
	if (d->seed_sig && d->seed_ev.seed[0] != '\0')
		flaky_buf_printf(b, "\nThe command sets seed %s, with which "
		    "it failed, through flaky's seed hook (docs/runners.md, "
		    "\"Seed sweeps\").\n", d->seed_ev.seed);
	else if (d->seed != NULL)
		flaky_buf_printf(b, "\nThe newest failing run printed the "
		    "random-order seed %s.\n", d->seed);
	if (isolate != NULL) {
		flaky_buf_reset(&w);
		flaky_repro(d, isolate, &w);
		flaky_buf_adds(b, "\nAlone:\n\n");
		md_code(b, "sh", flaky_buf_cstr(&w), 5);
	}
	flaky_buf_reset(&w);
	if (broken || d->depends_on != NULL || d->signature == NULL ||
	    d->seed_sig)
		flaky_test_patch(d, &w);
	else
		flaky_sig_test_patch(d, &w);
	flaky_buf_printf(b, "\n### Likely cause and first patch to try\n\n"
	    "- cause: %s\n- first patch: %s\n", broken ? "the test or the "
	    "code under test is broken (it fails every run), not flaky" :
	    flaky_test_cause(d), flaky_buf_cstr(&w));
	flaky_buf_free(&w);
}


/* The body, then what the store holds of flakyctl polluter's and the
 * static scan's findings for the test. */
int
flaky_ticket_body(struct flaky_store *st, const struct flaky_diagnosis *d,
    const char *isolate, struct flaky_buf *b)
{
	struct flaky_buf rb;

	flaky_buf_init(&rb);
	ticket_diagnosis(d, isolate, b);
	flaky_polluter_words(st, d, 1, b);
	if (flaky_risks_lines(st, d->target, d->test, "- ", &rb) > 0)
		flaky_buf_printf(b, "\n### Static risk\n\n%s",
		    flaky_buf_cstr(&rb));
	flaky_buf_free(&rb);
	return b->oom ? -ENOMEM : 0;
}

/* The title as a heading, then the body. */
int
flaky_ticket_markdown(struct flaky_store *st,
    const struct flaky_diagnosis *d, const char *isolate,
    struct flaky_buf *b)
{
	flaky_buf_adds(b, "## ");
	flaky_ticket_title(d, b);
	flaky_buf_adds(b, "\n\n");
	return flaky_ticket_body(st, d, isolate, b);
}

/* What flakyctl polluter stored for a test, for triage (markdown 0) and
 * ticket (1); nothing when none was stored. */
void
flaky_polluter_words(struct flaky_store *s, const struct flaky_diagnosis *d,
    int markdown, struct flaky_buf *b)
{
	struct flaky_polluter_row row;
	const char	*fence;
	char		 err[1024];
	size_t		 n = 1;

	if (flaky_store_polluter_get(s, d->test_id, &row, err,
	    sizeof err) != 1)
		return;
	for (const char *c = row.members; *c; c++)
		n += *c == '\n';
	if (!markdown) {
		flaky_buf_printf(b, "  polluters:   ");
		for (const char *c = row.members; *c; c++) {
			if (*c == '\n')
				flaky_buf_adds(b, ", ");
			else
				flaky_buf_addc(b, *c);
		}
		flaky_buf_printf(b, " (%s%zu of %lld before it, %lld rerun%s: "
		    "flakyctl polluter)\n  reproduce:   cd ", row.minimal ?
		    "smallest set, " : "", n, (long long)row.candidates,
		    (long long)row.reruns, flaky_plural(row.reruns));
		flaky_sh_quote(b, d->dir ? d->dir : ".");
		flaky_buf_printf(b, " && %s\n", row.command);
		flaky_polluter_row_clear(&row);
		return;
	}
	flaky_buf_printf(b, "\n### Smallest polluter\n\nRun before it, %s "
	    "make%s it fail (%s, found by `flakyctl polluter` in %lld rerun%s "
	    "over the %lld test%s that ran before it in run %lld):\n\n",
	    n == 1 ? "this test" : "these tests", n == 1 ? "s" : "",
	    row.minimal ? "none of them can be left out" : "the rerun budget "
	    "ran out: maybe not the smallest set", (long long)row.reruns,
	    flaky_plural(row.reruns), (long long)row.candidates,
	    flaky_plural(row.candidates), (long long)row.from_run_id);
	for (char *c = row.members, *e; c != NULL && *c; c = e) {
		if ((e = strchr(c, '\n')) != NULL)
			*e++ = '\0';
		flaky_buf_printf(b, "- %s\n", c);
	}
	fence = strstr(row.command, "```") ? "~~~~" : "```";
	flaky_buf_printf(b, "\n%ssh\ncd ", fence);
	flaky_sh_quote(b, d->dir ? d->dir : ".");
	flaky_buf_printf(b, "\n%s\n%s\n", row.command, fence);
	flaky_polluter_row_clear(&row);
}

/* "approximate assertion at FILE:LINE (tol), unseeded" */
void
flaky_risk_words(const struct flaky_risk *k, struct flaky_buf *b)
{
	flaky_buf_printf(b, "approximate assertion at %s:%d%s%s%s, %s",
	    k->path, k->line, k->tolerance ? " (" : "",
	    k->tolerance ? k->tolerance : "", k->tolerance ? ")" : "",
	    k->seeded ? "seeded" : "unseeded");
}

/* A test's static scan findings, one line each after prefix: how many,
 * or -1 when the store cannot say. */
int
flaky_risks_lines(struct flaky_store *st, const char *target, const char *test,
    const char *prefix, struct flaky_buf *out)
{
	struct flaky_risk *v = NULL;
	size_t	 n = 0, first, k;
	char	 err[256];

	if (flaky_store_risks(st, target, &v, &n, err, sizeof err) < 0)
		return -1;
	k = flaky_risks_find(v, n, target, test, &first);
	for (size_t i = first; i < first + k; i++) {
		flaky_buf_adds(out, prefix);
		flaky_risk_words(&v[i], out);
		flaky_buf_addc(out, '\n');
	}
	flaky_risks_free(v, n);
	return (int)k;
}
