/* What flakyctl ci decided, in words (a line per failed or new test and a
 * last line), as JSON (docs/json.md) or as GitHub's annotations and step
 * summary (docs/ci.md). */
#include "buildconf.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ci.h"
#include "flakyctl.h"
#include "format.h"
#include "util/util.h"

const char *
ci_first_message(const struct ci *c, const char *test)
{
	for (int i = 0; i < c->nruns; i++)
		for (size_t k = 0; k < c->runs[i].res.n; k++) {
			const struct flaky_result *v = &c->runs[i].res.v[k];

			if (FLAKY_FAILED(v->outcome) && v->message != NULL &&
			    strcmp(v->test, test) == 0)
				return v->message;
		}
	return NULL;
}

/* " (known: 12% of 30 runs in 30 days, flipped on 2 revisions)" */
static void
known_words(const struct ci *c, const char *test, struct flaky_buf *b)
{
	const struct ci_known *k = ci_known_of(c, test);

	if (k == NULL || k->runs <= 0)
		return;
	flaky_buf_printf(b, " (known: %.0f%% of %" PRId64 " run%s in %d days",
	    100.0 * (double)k->failures / (double)k->runs, k->runs,
	    k->runs == 1 ? "" : "s", CI_WINDOW_DAYS);
	if (k->flips > 0)
		flaky_buf_printf(b, ", flipped on %" PRId64 " revision%s",
		    k->flips, k->flips == 1 ? "" : "s");
	flaky_buf_addc(b, ')');
}

void
ci_verdict_words(const struct ci *c, const struct flaky_retry_test *t,
    int v, struct flaky_buf *b)
{
	const struct ci_known *k = ci_known_of(c, t->name);

	switch (v) {
	case FLAKY_RETRY_FLAKY:
		flaky_buf_printf(b, "failed, then passed on retry %d of %d",
		    t->passed_on, c->retries);
		known_words(c, t->name, b);
		break;
	case FLAKY_RETRY_BROKEN:
		flaky_buf_printf(b, "failed %d of %d", t->failures, t->runs);
		known_words(c, t->name, b);
		break;
	case FLAKY_RETRY_NOT_RETRIED:
		flaky_buf_printf(b, "failed 1 of 1, not retried: %s",
		    t->skips ? "skipped on its retry" : c->no_retry_why ?
		    c->no_retry_why : "no retry ran");
		known_words(c, t->name, b);
		break;
	case FLAKY_RETRY_QUARANTINED:
		flaky_buf_printf(b, "failed, not counted");
		if (k != NULL && k->ticket != NULL)
			flaky_buf_printf(b, " (%s)", k->ticket);
		break;
	case FLAKY_RETRY_NEW_FAILED:
		flaky_buf_printf(b, "new test failed %d of %d run%s: %s before "
		    "it merged", t->failures, t->runs, t->runs == 1 ? "" : "s",
		    t->failures < t->runs ? "flaky" : "failing");
		break;
	case FLAKY_RETRY_NEW_PASSED:
		flaky_buf_printf(b, "new test passed %d of %d runs", t->runs,
		    t->runs);
		break;
	default:
		flaky_buf_printf(b, "new test passed %d of %d run%s, %d wanted "
		    "(%s)", t->runs, t->runs, t->runs == 1 ? "" : "s",
		    c->new_runs, t->skips ? "skipped on a rerun" : c->stopped ?
		    c->stopped : "not rerun");
	}
}

/* The label a verdict's line starts with. */
static const char *
label(int v)
{
	switch (v) {
	case FLAKY_RETRY_FLAKY:		return "flaky";
	case FLAKY_RETRY_BROKEN:	return "broken";
	case FLAKY_RETRY_NOT_RETRIED:	return "failed";
	case FLAKY_RETRY_QUARANTINED:	return "quarantined";
	case FLAKY_RETRY_NEW_FAILED:	return "new, failed";
	default:			return "new";
	}
}

/* Counts of the verdicts, and the first run's passes and skips. */
struct counts {
	int	 v[FLAKY_RETRY_NEW_UNCHECKED + 1];
	size_t	 passed, skipped;
};

static void
count(const struct ci *c, struct counts *n)
{
	size_t	 listed = 0;

	memset(n, 0, sizeof *n);
	for (size_t i = 0; i < c->retry.nt; i++) {
		const struct flaky_retry_test *t = &c->retry.t[i];

		n->v[flaky_retry_verdict(&c->retry, t)]++;
		/* the new tests that passed the first run are told apart */
		listed += t->first == FLAKY_PASS || t->first == FLAKY_XPASS;
	}
	for (size_t i = 0; c->nruns > 0 && i < c->runs[0].res.n; i++) {
		int	 o = c->runs[0].res.v[i].outcome;

		n->passed += o == FLAKY_PASS || o == FLAKY_XPASS;
		n->skipped += o == FLAKY_SKIP || o == FLAKY_XFAIL;
	}
	n->passed -= listed < n->passed ? listed : n->passed;
}

/* "1 broken, 1 flaky, ..." of the verdicts that are there. */
static void
count_words(const struct counts *n, struct flaky_buf *b)
{
	static const int order[] = { FLAKY_RETRY_BROKEN,
		FLAKY_RETRY_NOT_RETRIED, FLAKY_RETRY_NEW_FAILED,
		FLAKY_RETRY_FLAKY, FLAKY_RETRY_QUARANTINED,
		FLAKY_RETRY_NEW_PASSED, FLAKY_RETRY_NEW_UNCHECKED };

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(order); i++)
		if (n->v[order[i]] > 0)
			flaky_buf_printf(b, "%d %s, ", n->v[order[i]],
			    flaky_retry_verdict_name(order[i]));
	flaky_buf_printf(b, "%zu passed", n->passed);
	if (n->skipped > 0)
		flaky_buf_printf(b, ", %zu skipped", n->skipped);
}

/* The retries' cost against rerunning the whole suite once a round. */
static double
cost_ratio(const struct ci *c)
{
	if (c->retry.rounds == 0 || c->first_wall_us <= 0)
		return 0;
	return (double)c->retry_wall_us / ((double)c->first_wall_us *
	    c->retry.rounds);
}

/* Where the attempts went. */
static void
where_words(const struct ci *c, struct flaky_buf *b)
{
	int64_t	 lo = 0, hi = 0;

	for (int i = 0; i < c->nruns; i++)
		if (c->runs[i].id > 0) {
			lo = lo ? lo : c->runs[i].id;
			hi = c->runs[i].id;
		}
	if (c->http && c->upload_id > 0)
		flaky_buf_printf(b, "uploaded as upload %" PRId64 " to %s",
		    c->upload_id, c->server);
	else if (c->http)
		flaky_buf_printf(b, "not uploaded");
	else if (lo > 0 && lo == hi)
		flaky_buf_printf(b, "run %" PRId64 " stored in %s", lo,
		    flaky_store_name(c->store));
	else if (lo > 0)
		flaky_buf_printf(b, "runs %" PRId64 "-%" PRId64 " stored in %s",
		    lo, hi, flaky_store_name(c->store));
}

/* The table form: a line per failed or new test, and the last lines. */
static void
print_table(const struct ci *c, FILE *out)
{
	struct flaky_buf b;
	struct counts	 n;

	flaky_buf_init(&b);
	for (size_t i = 0; i < c->retry.nt; i++) {
		const struct flaky_retry_test *t = &c->retry.t[i];
		int	 v = flaky_retry_verdict(&c->retry, t);

		flaky_buf_reset(&b);
		ci_verdict_words(c, t, v, &b);
		fprintf(out, "%s: %s: %s\n", label(v), t->name,
		    flaky_buf_cstr(&b));
	}
	count(c, &n);
	flaky_buf_reset(&b);
	count_words(&n, &b);
	if (c->exit == EXIT_ERROR)
		fprintf(out, "flaky ci: exit 2, the evidence is incomplete: "
		    "%s\n", c->incomplete ? c->incomplete : "?");
	else
		fprintf(out, "flaky ci: exit %d: %s\n", c->exit,
		    flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	where_words(c, &b);
	fprintf(out, "flaky ci: the suite once (%.1f s)", c->first_wall_us /
	    1e6);
	if (c->retry.rounds > 0)
		fprintf(out, " and %d round%s of retries (%.1f s, %.2f of "
		    "rerunning the whole suite as often)", c->retry.rounds,
		    c->retry.rounds == 1 ? "" : "s", c->retry_wall_us / 1e6,
		    cost_ratio(c));
	if (c->stopped != NULL)
		fprintf(out, ", stopped: %s", c->stopped);
	fprintf(out, "%s%s\n", b.len ? "; " : "", flaky_buf_cstr(&b));
	flaky_buf_free(&b);
}

/* The JSON form (docs/json.md, "flakyctl ci"). */
static void
print_json(const struct ci *c, FILE *out)
{
	struct flaky_buf b;
	struct counts	 n;
	int		 first = 1;

	count(c, &n);
	flaky_buf_init(&b);
	fprintf(out, "{\"target\": ");
	json_string(out, c->target);
	fprintf(out, ", \"revision\": ");
	json_string(out, c->revision);
	fprintf(out, ", \"branch\": ");
	json_string(out, c->m.branch);
	fprintf(out, ", \"exit\": %d, \"incomplete\": ", c->exit);
	json_string(out, c->incomplete);
	fprintf(out, ",\n \"retries\": %d, \"new_tests\": %d, \"budget_s\": ",
	    c->retries, c->new_runs);
	json_double(out, c->budget_used_ms / 1e3);
	fprintf(out, ", \"rounds\": %d, \"stopped\": ", c->retry.rounds);
	json_string(out, c->stopped);
	fprintf(out, ",\n \"first_run_s\": ");
	json_double(out, c->first_wall_us / 1e6);
	fprintf(out, ", \"retries_s\": ");
	json_double(out, c->retry_wall_us / 1e6);
	fprintf(out, ", \"cost_ratio\": ");
	json_double(out, cost_ratio(c));
	fprintf(out, ",\n \"passed\": %zu, \"skipped\": %zu, \"runs\": [",
	    n.passed, n.skipped);
	for (int i = 0; i < c->nruns; i++)
		if (c->runs[i].id > 0) {
			fprintf(out, "%s%" PRId64, first ? "" : ", ",
			    c->runs[i].id);
			first = 0;
		}
	fprintf(out, "], \"upload\": ");
	if (c->upload_id > 0)
		fprintf(out, "%" PRId64, c->upload_id);
	else
		fprintf(out, "null");
	fprintf(out, ",\n \"tests\": [");
	for (size_t i = 0; i < c->retry.nt; i++) {
		const struct flaky_retry_test *t = &c->retry.t[i];
		const struct ci_known *k = ci_known_of(c, t->name);
		int	 v = flaky_retry_verdict(&c->retry, t);

		flaky_buf_reset(&b);
		ci_verdict_words(c, t, v, &b);
		fprintf(out, "%s\n  {\"test\": ", i ? "," : "");
		json_string(out, t->name);
		fprintf(out, ", \"verdict\": \"%s\", \"fails_step\": %s, "
		    "\"new\": %s, \"attempts\": %d, \"failures\": %d, "
		    "\"passed_on_retry\": ", flaky_retry_verdict_name(v),
		    flaky_retry_fails_step(v) ? "true" : "false",
		    t->is_new ? "true" : "false", t->runs, t->failures);
		if (t->passed_on > 0)
			fprintf(out, "%d", t->passed_on);
		else
			fprintf(out, "null");
		fprintf(out, ", \"words\": ");
		json_string(out, flaky_buf_cstr(&b));
		fprintf(out, ", \"message\": ");
		json_string(out, ci_first_message(c, t->name));
		fprintf(out, ", \"known\": ");
		if (k == NULL)
			fprintf(out, "null");
		else {
			fprintf(out, "{\"runs\": %" PRId64 ", \"failures\": %"
			    PRId64 ", \"flips\": %" PRId64 ", \"quarantined\": "
			    "%s, \"ticket\": ", k->runs, k->failures, k->flips,
			    k->quarantined ? "true" : "false");
			json_string(out, k->ticket);
			fprintf(out, "}");
		}
		fprintf(out, "}");
	}
	fprintf(out, "%s]}\n", c->retry.nt ? "\n " : "");
	flaky_buf_free(&b);
}

/* The level and title of a verdict's annotation. */
static const char *
gh_level(int v)
{
	if (flaky_retry_fails_step(v))
		return "error";
	return v == FLAKY_RETRY_FLAKY ? "warning" : "notice";
}

/* GitHub: an annotation per failed or new test at its file and line,
 * the lines of the table, and the step summary. */
static void
ci_github(const struct ci *c, FILE *out)
{
	static const char *const titles[] = {
		[FLAKY_RETRY_FLAKY] = "Flaky test (passed on a retry)",
		[FLAKY_RETRY_BROKEN] = "Broken test (failed every attempt)",
		[FLAKY_RETRY_NOT_RETRIED] = "Failed test (not retried)",
		[FLAKY_RETRY_QUARANTINED] = "Quarantined test (not counted)",
		[FLAKY_RETRY_NEW_FAILED] = "New test failed before it merged",
		[FLAKY_RETRY_NEW_PASSED] = "New test passed its reruns",
		[FLAKY_RETRY_NEW_UNCHECKED] = "New test not rerun enough",
	};
	struct flaky_buf b;
	struct counts	 n;
	FILE		*sum;
	char		 file[1024];
	int		 line;

	flaky_buf_init(&b);
	for (size_t i = 0; i < c->retry.nt; i++) {
		const struct flaky_retry_test *t = &c->retry.t[i];
		const char *m = ci_first_message(c, t->name);
		int	 v = flaky_retry_verdict(&c->retry, t);

		flaky_buf_reset(&b);
		flaky_buf_printf(&b, "%s: ", t->name);
		ci_verdict_words(c, t, v, &b);
		flaky_buf_printf(&b, " (target %s)", c->target);
		if (m != NULL)
			flaky_buf_printf(&b, "\n%.*s", (int)strcspn(m +
			    strspn(m, " \n"), "\n"), m + strspn(m, " \n"));
		fprintf(out, "::%s ", gh_level(v));
		if (github_locate_id(t->name, file, sizeof file, &line) == 0) {
			fputs("file=", out);
			github_escape(out, file, 1);
			if (line > 0)
				fprintf(out, ",line=%d", line);
			fputc(',', out);
		}
		fputs("title=", out);
		github_escape(out, titles[v], 1);
		fputs("::", out);
		github_escape(out, flaky_buf_cstr(&b), 0);
		fputc('\n', out);
	}
	if (c->exit == EXIT_ERROR)
		github_command(out, "error", "flaky ci: the evidence is "
		    "incomplete", c->incomplete ? c->incomplete : "?");
	print_table(c, out);
	if ((sum = github_summary_open()) == NULL) {
		flaky_buf_free(&b);
		return;
	}
	count(c, &n);
	fprintf(sum, "### flaky ci: %s (exit %d)\n\n", c->exit == 0 ?
	    "passed" : c->exit == 1 ? "failed" : "incomplete evidence",
	    c->exit);
	if (c->exit == EXIT_ERROR) {
		fputs("The evidence is incomplete: ", sum);
		github_md_cell(sum, c->incomplete);
		fputs("\n\n", sum);
	}
	if (c->retry.nt > 0) {
		fputs("| verdict | test | attempts | what happened |\n"
		    "|---|---|---|---|\n", sum);
		for (size_t i = 0; i < c->retry.nt; i++) {
			const struct flaky_retry_test *t = &c->retry.t[i];
			int	 v = flaky_retry_verdict(&c->retry, t);

			flaky_buf_reset(&b);
			ci_verdict_words(c, t, v, &b);
			fprintf(sum, "| %s | `", flaky_retry_verdict_name(v));
			github_md_cell(sum, t->name);
			fprintf(sum, "` | %d | ", t->runs);
			github_md_cell(sum, flaky_buf_cstr(&b));
			fputs(" |\n", sum);
		}
		fputc('\n', sum);
	}
	flaky_buf_reset(&b);
	count_words(&n, &b);
	fprintf(sum, "%s; target %s, the suite once (%.1f s), %d round%s of "
	    "retries (%.1f s).\n", flaky_buf_cstr(&b), c->target,
	    c->first_wall_us / 1e6, c->retry.rounds, c->retry.rounds == 1 ?
	    "" : "s", c->retry_wall_us / 1e6);
	fclose(sum);
	flaky_buf_free(&b);
}

void
ci_print(const struct ci *c, FILE *out)
{
	switch (c->ctl->format) {
	case FORMAT_JSON:
		print_json(c, out);
		break;
	case FORMAT_GITHUB:
		ci_github(c, out);
		break;
	case FORMAT_JUNIT:
		/* the report on stdout, the words where people read */
		ci_junit_report(c, out);
		print_table(c, stderr);
		break;
	default:
		print_table(c, out);
	}
}
