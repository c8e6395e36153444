/* flakyctl ci in JUnit XML: each attempt as the file that is uploaded
 * (flakyctl ingest reads every id back as it is), and --format junit, the
 * report CI systems display, where a retried test carries Maven
 * Surefire's elements: <flakyFailure> for each failed attempt of a test
 * that passed on a retry, <rerunFailure> for each retry of one that
 * failed every attempt (docs/ci.md, "--format junit"). */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ci.h"
#include "format.h"
#include "util/util.h"

/* The element of a failed outcome. */
static const char *
fail_element(int outcome)
{
	return outcome == FLAKY_ERROR ? "error" : "failure";
}

/* A duration as JUnit's seconds, or nothing when unknown. */
static void
time_attr(FILE *f, int64_t us)
{
	if (us >= 0)
		fprintf(f, " time=\"%.3f\"", us / 1e6);
}

/* The message attribute: the first line of a failure message. */
static void
message_attr(FILE *f, const char *m)
{
	char	*line;

	if (m == NULL)
		return;
	m += strspn(m, " \n");
	line = flaky_strndup(m, strcspn(m, "\n"));
	fputs(" message=\"", f);
	junit_escape(f, line ? line : "", 1);
	fputc('"', f);
	free(line);
}

/* The rest of a testcase that is not a retried one, from ">" on: its
 * failure (message and text), its skip, or nothing. */
static void
plain_case(FILE *f, const struct flaky_result *v)
{
	if (FLAKY_FAILED(v->outcome)) {
		fprintf(f, "><%s", fail_element(v->outcome));
		message_attr(f, v->message);
		fputc('>', f);
		junit_escape(f, v->message, 0);
		fprintf(f, "</%s></testcase>\n", fail_element(v->outcome));
	} else if (v->outcome == FLAKY_SKIP)
		fputs("><skipped/></testcase>\n", f);
	else if (v->outcome == FLAKY_XFAIL)
		fputs("><skipped type=\"pytest.xfail\"/></testcase>\n", f);
	else
		fputs("/>\n", f);
}

int
ci_junit_attempt(const struct ci *c, const struct ci_run *r,
    const char *path, char *err, size_t errlen)
{
	FILE	*f;
	size_t	 fails = 0, errors = 0, skips = 0;
	char	 t[32];

	if ((f = fopen(path, "we")) == NULL)
		return flaky_error(err, errlen, errno, "%s: %s", path,
		    strerror(errno));
	for (size_t i = 0; i < r->res.n; i++) {
		int	 o = r->res.v[i].outcome;

		fails += o == FLAKY_FAIL;
		errors += o == FLAKY_ERROR;
		skips += o == FLAKY_SKIP || o == FLAKY_XFAIL;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
	    "<testsuite name=\"flaky ci attempt %d\" tests=\"%zu\" "
	    "failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" timestamp=\"%s\"",
	    r->round + 1, r->res.n, fails, errors, skips, flaky_format_time(
	    r->started_ms, t, sizeof t));
	time_attr(f, r->wall_us);
	fputs(">\n", f);
	for (size_t i = 0; i < r->res.n; i++) {
		const struct flaky_result *v = &r->res.v[i];

		fputs("<testcase classname=\"\" name=\"", f);
		junit_escape(f, v->test, 1);
		fputc('"', f);
		time_attr(f, v->duration_us);
		plain_case(f, v);
	}
	fputs("</testsuite>\n</testsuites>\n", f);
	if (ferror(f) | fclose(f))
		return flaky_error(err, errlen, EIO, "%s: cannot write it",
		    path);
	(void)c;
	return 0;
}

/* The result of test in run r, or NULL when it did not report it. */
static const struct flaky_result *
result_in(const struct ci_run *r, const char *test)
{
	for (size_t i = 0; i < r->res.n; i++)
		if (strcmp(r->res.v[i].test, test) == 0)
			return &r->res.v[i];
	return NULL;
}

/* One <property>. */
static void
prop(FILE *f, const char *name, const char *value)
{
	fprintf(f, "      <property name=\"flaky.%s\" value=\"", name);
	junit_escape(f, value, 1);
	fputs("\"/>\n", f);
}

/* A number <property>. */
static void
prop_int(FILE *f, const char *name, long long v)
{
	char	 buf[32];

	snprintf(buf, sizeof buf, "%lld", v);
	prop(f, name, buf);
}

/* Each retry's failure of t as <ELEMENT> (flakyFailure, rerunFailure):
 * the message, the stack trace its text. */
static void
retry_elements(const struct ci *c, FILE *f, const char *element,
    const char *test, int skip_first)
{
	for (int i = skip_first ? 1 : 0; i < c->nruns; i++) {
		const struct flaky_result *v = result_in(&c->runs[i], test);

		if (v == NULL || !FLAKY_FAILED(v->outcome))
			continue;
		fprintf(f, "    <%s", element);
		message_attr(f, v->message);
		fprintf(f, " type=\"%s\"><stackTrace>",
		    flaky_outcome_name(v->outcome));
		junit_escape(f, v->message, 0);
		fprintf(f, "</stackTrace></%s>\n", element);
	}
}

/* The testcase of a test that failed or is new. */
static void
retried_case(const struct ci *c, FILE *f, const struct flaky_retry_test *t,
    const struct flaky_result *first)
{
	int	 v = flaky_retry_verdict(&c->retry, t);
	const struct ci_known *k = ci_known_of(c, t->name);
	const char *msg = ci_first_message(c, t->name);
	struct flaky_buf w;

	flaky_buf_init(&w);
	ci_verdict_words(c, t, v, &w);
	fputs(">\n    <properties>\n", f);
	prop(f, "verdict", flaky_retry_verdict_name(v));
	prop_int(f, "attempts", t->runs);
	prop_int(f, "failures", t->failures);
	if (t->passed_on > 0)
		prop_int(f, "passed_on_retry", t->passed_on);
	if (k != NULL) {
		prop_int(f, "known_runs", k->runs);
		prop_int(f, "known_failures", k->failures);
		prop_int(f, "flips", k->flips);
		if (k->ticket != NULL)
			prop(f, "ticket", k->ticket);
	}
	fputs("    </properties>\n", f);
	switch (v) {
	case FLAKY_RETRY_FLAKY:
		retry_elements(c, f, first->outcome == FLAKY_ERROR ?
		    "flakyError" : "flakyFailure", t->name, 0);
		break;
	case FLAKY_RETRY_QUARANTINED:
		fputs("    <skipped message=\"", f);
		junit_escape(f, flaky_buf_cstr(&w), 1);
		fputs("\"/>\n    <system-out>", f);
		junit_escape(f, msg, 0);
		fputs("</system-out>\n", f);
		break;
	case FLAKY_RETRY_NEW_PASSED:
	case FLAKY_RETRY_NEW_UNCHECKED:
		break;
	default:
		fprintf(f, "    <%s message=\"", fail_element(first->outcome));
		junit_escape(f, flaky_buf_cstr(&w), 1);
		fprintf(f, "\" type=\"flaky.%s\">",
		    v == FLAKY_RETRY_NEW_FAILED ? "new" : "broken");
		junit_escape(f, msg, 0);
		fprintf(f, "</%s>\n", fail_element(first->outcome));
		if (v == FLAKY_RETRY_BROKEN)
			retry_elements(c, f, first->outcome == FLAKY_ERROR ?
			    "rerunError" : "rerunFailure", t->name, 1);
	}
	fputs("  </testcase>\n", f);
	flaky_buf_free(&w);
}

/* The retried or new test of that name, or NULL. */
static const struct flaky_retry_test *
retried(const struct ci *c, const char *test)
{
	for (size_t k = 0; k < c->retry.nt; k++)
		if (strcmp(c->retry.t[k].name, test) == 0)
			return &c->retry.t[k];
	return NULL;
}

/* How many testcases fail in the report, and how many are skipped. */
static void
report_counts(const struct ci *c, size_t *fails, size_t *skips)
{
	const struct ci_run *r = &c->runs[0];

	*fails = *skips = 0;
	for (size_t i = 0; c->nruns > 0 && i < r->res.n; i++) {
		const struct flaky_retry_test *t = retried(c, r->res.v[i].test);
		int	 o = r->res.v[i].outcome, v;

		if (t == NULL) {
			*fails += FLAKY_FAILED(o);
			*skips += o == FLAKY_SKIP || o == FLAKY_XFAIL;
			continue;
		}
		v = flaky_retry_verdict(&c->retry, t);
		*fails += flaky_retry_fails_step(v);
		*skips += v == FLAKY_RETRY_QUARANTINED;
	}
	*fails += c->incomplete != NULL;
}

void
ci_junit_report(const struct ci *c, FILE *f)
{
	const struct ci_run *r = c->nruns > 0 ? &c->runs[0] : NULL;
	size_t	 n = r != NULL ? r->res.n : 0, fails, skips;
	char	 t[32];

	report_counts(c, &fails, &skips);
	n += c->incomplete != NULL;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<testsuites name=\"flaky ci\" tests=\"%zu\" failures=\"%zu\" "
	    "errors=\"0\" skipped=\"%zu\">\n<testsuite name=\"", n, fails,
	    skips);
	junit_escape(f, c->target, 1);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
	    "skipped=\"%zu\" timestamp=\"%s\"", n, fails, skips,
	    flaky_format_time(r ? r->started_ms : flaky_now_ms(), t, sizeof t));
	time_attr(f, c->first_wall_us + c->retry_wall_us);
	fputs(">\n  <properties>\n", f);
	prop_int(f, "exit", c->exit);
	if (c->revision != NULL)
		prop(f, "revision", c->revision);
	if (c->m.branch != NULL)
		prop(f, "branch", c->m.branch);
	prop_int(f, "retry_rounds", c->retry.rounds);
	if (c->incomplete != NULL)
		prop(f, "incomplete", c->incomplete);
	fputs("  </properties>\n", f);
	for (size_t i = 0; i < (r ? r->res.n : 0); i++) {
		const struct flaky_result *v = &r->res.v[i];
		const struct flaky_retry_test *rt = retried(c, v->test);

		fputs("  <testcase classname=\"", f);
		junit_escape(f, c->target, 1);
		fputs("\" name=\"", f);
		junit_escape(f, v->test, 1);
		fputc('"', f);
		time_attr(f, v->duration_us);
		if (rt != NULL)
			retried_case(c, f, rt, v);
		else
			plain_case(f, v);
	}
	if (c->incomplete != NULL) {
		fputs("  <testcase classname=\"", f);
		junit_escape(f, c->target, 1);
		fputs("\" name=\"flaky ci\"><error message=\"", f);
		junit_escape(f, c->incomplete, 1);
		fputs("\" type=\"flaky.incomplete\">the evidence is "
		    "incomplete: exit 2</error></testcase>\n", f);
	}
	fputs("</testsuite>\n</testsuites>\n", f);
}
