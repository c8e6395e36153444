/* The words of a diagnosis that flakyctl's show, triage and ticket and the
 * dashboard's ticket share: the triage table (DESIGN.md), the evidence
 * behind a signature, the timing and the latest revision in a phrase. */
#include "buildconf.h"

#include <stdio.h>
#include <string.h>

#include "diagnose/diagnose.h"
#include "stats/stats.h"

/* The triage table, from DESIGN.md "Failure signatures". */
static const struct {
	const char	*sig, *cause, *patch;
} table[] = {
	{ "TIMEOUT", "too little wall-clock allowance, slow I/O",
	  "raise the limit with a justified bound, or wait on the event "
	  "instead of the clock" },
	{ "RACE", "shared mutable state between threads or async tasks",
	  "serialize the shared resource for the test" },
	{ "ORDER_DEPENDENT", "a test leaks state into another",
	  "reset state at test start, not end; name the polluter" },
	{ "INFRA", "network or service flake",
	  "mock the external service in this test" },
	{ "UNKNOWN", "nondeterministic algorithm or unseeded randomness",
	  "capture the seed and reproduce offline" },
	{ "SEED", "the bound is tighter than the algorithm's spread over "
	  "seeds", "widen the bound to what its headroom says holds, or fix "
	  "the seed and say why" },
};

/* Most likely cause of a signature (the triage table). */
const char *
flaky_sig_cause(const char *sig)
{
	for (size_t i = 0; sig && i < FLAKY_ARRAY_SIZE(table); i++)
		if (strcmp(sig, table[i].sig) == 0)
			return table[i].cause;
	return "what your signature describes";
}

/* First patch to try for a signature (the triage table). */
const char *
flaky_sig_patch(const char *sig)
{
	for (size_t i = 0; sig && i < FLAKY_ARRAY_SIZE(table); i++)
		if (strcmp(sig, table[i].sig) == 0)
			return table[i].patch;
	return "the fix your team wrote down for this signature";
}

/* Why a test has no counted run in the window, in one phrase. */
void
flaky_unrun_words(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	if (d->skips > 0) {
		if (d->skips == 1)
			flaky_buf_adds(b, "its one result was a skip (skip or "
			    "xfail)");
		else
			flaky_buf_printf(b, "all %lld of its results were "
			    "skips (skip or xfail)", (long long)d->skips);
		return;
	}
	if (d->target_runs <= 0)
		flaky_buf_adds(b, "its target has no run in the window");
	else if (d->target_incomplete == d->target_runs)
		flaky_buf_printf(b, "all %lld run%s of its target in the "
		    "window %s incomplete (some outcomes missing), and an "
		    "incomplete run counts for no test", (long long)
		    d->target_runs, d->target_runs == 1 ? "" : "s",
		    d->target_runs == 1 ? "was" : "were");
	else if (d->target_incomplete > 0)
		flaky_buf_printf(b, "no complete run of its target in the "
		    "window reported it (%lld of its %lld runs there were "
		    "incomplete, counted for no test)",
		    (long long)d->target_incomplete,
		    (long long)d->target_runs);
	else
		flaky_buf_printf(b, "none of the %lld run%s of its target in "
		    "the window reported it", (long long)d->target_runs,
		    d->target_runs == 1 ? "" : "s");
	if (d->incomplete_why != NULL)
		flaky_buf_printf(b, "; the newest incomplete one: %s",
		    d->incomplete_why);
}

/* Most likely cause for one test (triage, ticket, JSON). */
const char *
flaky_test_cause(const struct flaky_diagnosis *d)
{
	if (d->verdict == FLAKY_VERDICT_BROKEN)
		return "the test or the code under test is broken, not flaky";
	/* never failed: nothing to explain, or nothing known */
	if (d->verdict == FLAKY_VERDICT_SKIPPED)
		return "it never ran: a skip mark or condition holds in every "
		    "run";
	if (d->verdict == FLAKY_VERDICT_NONE)
		return "no evidence: no complete run counted it";
	if (d->signature == NULL)
		return "nothing to explain: it did not fail in this window";
	if (d->depends_on != NULL || d->fails_alone)
		return "the test relies on state another test creates";
	if (d->box_infra)
		return "something of that one box: its image, packages, "
		    "network or hardware";
	if (d->signature != NULL && strcmp(d->signature, "TIMEOUT") == 0 &&
	    flaky_hang_cause(&d->hangs) != NULL)
		return flaky_hang_cause(&d->hangs);
	return flaky_sig_cause(d->signature);
}

/* The patch of a test's signature: where its timeouts hung when their
 * stacks say (issue 33), else the triage table's, and the polluter. */
void
flaky_sig_test_patch(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	if (d->signature != NULL && strcmp(d->signature, "TIMEOUT") == 0 &&
	    d->hangs.n > 0) {
		flaky_hang_patch(&d->hangs, b);
		return;
	}
	flaky_buf_adds(b, flaky_sig_patch(d->signature));
	flaky_polluter_patch(d, b);
}

/* First patch to try for one test, naming the test the order points at. */
void
flaky_test_patch(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	if (d->verdict == FLAKY_VERDICT_BROKEN)
		flaky_buf_adds(b, "fix it like any failing test; rerunning "
		    "will not help");
	else if (d->verdict == FLAKY_VERDICT_SKIPPED)
		flaky_buf_adds(b, "none to its code; check that the skip is "
		    "still meant, since a test that never runs proves nothing");
	else if (d->verdict == FLAKY_VERDICT_NONE && d->target_incomplete > 0)
		flaky_buf_adds(b, "none yet; make its target's runs complete "
		    "(the runner must name every test it runs and print its "
		    "summary; the evidence says what the newest run lacked), "
		    "then rerun them");
	else if (d->verdict == FLAKY_VERDICT_NONE)
		flaky_buf_adds(b, "none yet; rerun its target (flakyctl "
		    "analyze) to gather evidence");
	else if (d->signature == NULL)
		flaky_buf_adds(b, "none needed; more runs would bound its "
		    "failure rate lower");
	else if (d->depends_on != NULL)
		flaky_buf_printf(b, "make the test create its own state (a "
		    "fixture) instead of relying on %s running first",
		    d->depends_on);
	else if (d->fails_alone)
		flaky_buf_adds(b, "make the test create its own state (a "
		    "fixture) instead of relying on a test that runs before "
		    "it");
	else if (d->box_infra)
		flaky_buf_printf(b, "compare %s with the boxes where it "
		    "passes (image, packages, network, disk), and take it out "
		    "of the pool until they agree", d->box.box);
	else if (d->seed_sig)
		flaky_seed_patch(d, b);
	else
		flaky_sig_test_patch(d, b);
}

/* The polluter in a patch: the set flakyctl polluter confirmed, else
 * the one the stored orders suggest, said to be suspected, with the
 * command that would confirm it. */
void
flaky_polluter_patch(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	if (d->npolluters > 0) {
		flaky_buf_printf(b, "; the polluter%s ", d->npolluters == 1 ?
		    " is" : "s are");
		for (size_t i = 0; i < d->npolluters; i++)
			flaky_buf_printf(b, "%s%s", i == 0 ? "" :
			    i + 1 == d->npolluters ? " and " : ", ",
			    d->polluters[i]);
		flaky_buf_printf(b, "%s (confirmed by flakyctl polluter%s)",
		    d->npolluters > 1 ? ", together" : "",
		    d->polluters_minimal ? "" : "; maybe not the smallest set: "
		    "its rerun budget ran out");
		return;
	}
	if (d->polluter == NULL && (d->signature == NULL || strcmp(
	    d->signature, "ORDER_DEPENDENT") != 0 || d->fails_alone))
		return;
	if (d->polluter != NULL)
		flaky_buf_printf(b, "; suspected polluter %s (from the stored "
		    "run orders, not confirmed): confirm with `flakyctl "
		    "polluter ", d->polluter);
	else
		flaky_buf_adds(b, "; find the polluter with `flakyctl "
		    "polluter ");
	flaky_sh_quote(b, d->test);
	flaky_buf_adds(b, "`");
}

/* The first line of s, at most max bytes (not splitting a character). */
static void
add_first_line(struct flaky_buf *b, const char *s, size_t max)
{
	size_t	 n;

	if (s == NULL)
		return;
	/* the first line with something on it, without its indent */
	s += strspn(s, " \t\r\n");
	n = strcspn(s, "\n");
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
		flaky_buf_add(b, s, n);
		flaky_buf_adds(b, "...");
		return;
	}
	flaky_buf_add(b, s, n);
}

/* The timing of failures against passes in one phrase. */
void
flaky_timing_words(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	const struct flaky_timing *t = &d->timing;
	char	 f[32], p[32];

	if (t->n_fail == 0)
		return;
	flaky_format_ms(t->p90_fail, f, sizeof f);
	flaky_format_ms(t->median_pass, p, sizeof p);
	if (t->early)
		flaky_buf_printf(b, "fails early: within %s (p90 of %lld "
		    "failures), while passing takes ~%s", f,
		    (long long)t->n_fail, p);
	else if (t->near_limit) {
		flaky_format_ms(t->median_fail, f, sizeof f);
		flaky_buf_printf(b, "failures cluster at one duration, ~%s "
		    "(a time limit?)", f);
		if (t->n_pass > 0) {
			flaky_format_ms(t->p90_pass, p, sizeof p);
			flaky_buf_printf(b, ", while 90%% of passes take at "
			    "most %s", p);
		}
	} else {
		flaky_format_ms(t->median_fail, f, sizeof f);
		flaky_buf_printf(b, "failing runs take ~%s (median)", f);
		if (t->n_pass > 0)
			flaky_buf_printf(b, ", passing runs ~%s", p);
	}
}

/* The newest revision with runs, or NULL. */
static const struct flaky_rev_stat *
latest_rev(const struct flaky_diagnosis *d)
{
	return d->nrevs > 0 ? &d->revs[d->nrevs - 1] : NULL;
}

/* The latest revision's evidence in one phrase. */
void
flaky_revision_words(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	const struct flaky_rev_stat *r = latest_rev(d);

	if (r == NULL)
		return;
	flaky_buf_printf(b, "%lld/%lld at %s", (long long)r->failures,
	    (long long)r->runs, r->revision ? r->revision :
	    "an unrecorded revision");
	if (r->failures == 0)
		flaky_buf_printf(b, ", at most %.0f%% at 95%%",
		    100 * r->ci_high);
	else if (r->failures == r->runs)
		flaky_buf_printf(b, ": fails every run (broken, not flaky)");
	else
		flaky_buf_printf(b, " (%.0f%%-%.0f%% at 95%%)",
		    100 * r->ci_low, 100 * r->ci_high);
	if (r->transition != FLAKY_TRANS_NONE)
		flaky_buf_printf(b, ", %s since %s",
		    flaky_transition_name(r->transition),
		    d->nrevs > 1 && d->revs[d->nrevs - 2].revision ?
		    d->revs[d->nrevs - 2].revision : "the revision before");
}

/* RACE from timing in words, p as a p-value is usually written. */
void
flaky_race_words(const struct flaky_timing *t, struct flaky_buf *b)
{
	char	 f[32], p[32];

	flaky_format_ms(t->median_fail, f, sizeof f);
	flaky_format_ms(t->median_pass, p, sizeof p);
	flaky_buf_printf(b, "outcome varies with timing: fails in a median "
	    "of %s, passes in a median of %s, Mann-Whitney p=%.1g (%lld "
	    "failure%s, %lld pass%s)", f, p, t->mw_p, (long long)t->n_fail,
	    flaky_plural(t->n_fail), (long long)t->n_pass,
	    flaky_plural_es(t->n_pass));
}

/* The evidence behind the signature in one sentence. */
void
flaky_evidence_words(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	const char *sig = d->signature;
	int64_t	 n = 0;

	if (sig == NULL && d->runs == 0) {
		flaky_buf_adds(b, "no counted run: ");
		flaky_unrun_words(d, b);
		return;
	}
	if (sig == NULL) {
		flaky_buf_printf(b, "no failure in %lld run%s",
		    (long long)d->runs, d->runs == 1 ? "" : "s");
		return;
	}
	if (d->passes_alone && d->polluter == NULL) {
		flaky_buf_printf(b, "passes alone (0 of %lld run%s), fails in "
		    "the suite (%lld of %lld)", (long long)d->alone_runs,
		    flaky_plural(d->alone_runs), (long long)d->suite_failures,
		    (long long)d->suite_runs);
		return;
	}
	if (d->fails_alone && d->depends_on == NULL) {
		flaky_buf_printf(b, "fails alone (%lld of %lld run%s), passes in "
		    "the suite (%lld of %lld): relies on a test that runs "
		    "before it", (long long)d->alone_failures,
		    (long long)d->alone_runs, flaky_plural(d->alone_runs),
		    (long long)(d->suite_runs -
		    d->suite_failures), (long long)d->suite_runs);
		return;
	}
	if (d->polluter != NULL) {
		flaky_buf_printf(b, "fails in %lld of %lld run%s where %s ran "
		    "before it, %lld of %lld where it did not",
		    (long long)d->order.k_before, (long long)d->order.n_before,
		    flaky_plural(d->order.n_before), d->polluter, (long long)d->order.k_without,
		    (long long)d->order.n_without);
		return;
	}
	if (d->box_infra) {
		flaky_box_evidence_words(d, b);
		return;
	}
	if (d->seed_sig) {
		flaky_seed_words(&d->seed_ev, b);
		return;
	}
	if (d->stress_race) {
		flaky_buf_printf(b, "fails in %lld of %lld run%s under %s "
		    "stress, %lld of %lld calm (Fisher p = %.2g)",
		    (long long)d->stress.failures, (long long)d->stress.runs,
		    flaky_plural(d->stress.runs), d->stress.perturbation, (long long)d->stress.calm_failures,
		    (long long)d->stress.calm_runs, d->stress.p);
		return;
	}
	if (d->depends_on != NULL) {
		flaky_buf_printf(b, "fails in %lld of %lld run%s where %s did "
		    "not run before it, %lld of %lld where it did",
		    (long long)d->order.k_without,
		    (long long)d->order.n_without,
		    flaky_plural(d->order.n_without), d->depends_on,
		    (long long)d->order.k_before,
		    (long long)d->order.n_before);
		return;
	}
	if (d->race_timing) {
		flaky_race_words(&d->timing, b);
		return;
	}
	for (size_t i = 0; i < d->nsigs; i++)
		if (strcmp(d->sigs[i].name, sig) == 0)
			n = d->sigs[i].count;
	if (strcmp(sig, "UNKNOWN") == 0) {
		flaky_buf_printf(b, "no known pattern in %lld failure%s "
		    "(%zu distinct message%s)", (long long)d->failures,
		    d->failures == 1 ? "" : "s", d->nmodes,
		    d->nmodes == 1 ? "" : "s");
		return;
	}
	flaky_buf_printf(b, "%lld of %lld failure%s read%s as %s",
	    (long long)n, (long long)d->failures, flaky_plural(d->failures),
	    n == 1 ? "s" : "", sig);
	for (size_t i = 0; i < d->nmodes; i++)
		if (d->modes[i].signature != NULL &&
		    strcmp(d->modes[i].signature, sig) == 0) {
			flaky_buf_adds(b, ": \"");
			add_first_line(b, d->modes[i].example ?
			    d->modes[i].example : d->modes[i].normalized, 120);
			flaky_buf_adds(b, "\"");
			break;
		}
}

/* "fails on box-3 in 4 of 9 runs, never on the other boxes ..." */
void
flaky_box_evidence_words(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	const struct flaky_box_evidence *e = &d->box;

	flaky_buf_printf(b, "fails on %s in %lld of %lld run%s, never on the "
	    "other box%s (0 of %lld run%s; Fisher p = %.2g)", e->box,
	    (long long)e->failures, (long long)e->runs, flaky_plural(e->runs),
	    flaky_plural_es(e->other_boxes), (long long)e->other_runs,
	    flaky_plural(e->other_runs), e->p);
}

/* SEED's first patch: "the bound is tighter than the algorithm's spread:
 * widen it to rtol=2.1e-06 (t.py:27), or fix the seed and say why", with
 * the bound of its worst site whose headroom was fitted. */
void
flaky_seed_patch(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	const struct flaky_headroom_site *w = NULL;

	for (size_t i = 0; i < d->nheadroom; i++) {
		const struct flaky_headroom_site *h = &d->headroom[i];

		if (h->fitted && h->suggest_text[0] != '\0' &&
		    (w == NULL || h->rate > w->rate))
			w = h;
	}
	if (w == NULL) {
		flaky_buf_adds(b, flaky_sig_patch("SEED"));
		return;
	}
	flaky_buf_printf(b, "the bound is tighter than the algorithm's "
	    "spread: widen it to %s (%s:%d fails 1 in 10^6 runs so), or fix "
	    "the seed and say why", w->suggest_text, w->path, w->line);
}
