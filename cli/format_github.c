/* --format github: GitHub Actions workflow commands, one annotation per
 * test that needs attention, placed at its file and line where the id or
 * the static scan tells them, and a Markdown step summary. Escaping is
 * GitHub's (actions/toolkit, core/src/command.ts): % \r \n in the message,
 * and : , as well in properties. */
#include "buildconf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "stats/stats.h"
#include "util/util.h"

/* Test files read to find a test's line: no test file is larger. */
#define SOURCE_MAX	(4 * 1024 * 1024)

static const char jest_sep[] = " \xe2\x80\xba ";	/* " › " */

static void	md_cell(FILE *, const char *);

/* s escaped for a workflow command's message or (prop) a property. */
static void
gh_escape(FILE *f, const char *s, int prop)
{
	for (; s != NULL && *s != '\0'; s++) {
		switch (*s) {
		case '%': fputs("%25", f); break;
		case '\r': fputs("%0D", f); break;
		case '\n': fputs("%0A", f); break;
		case ':': fputs(prop ? "%3A" : ":", f); break;
		case ',': fputs(prop ? "%2C" : ",", f); break;
		default: fputc(*s, f);
		}
	}
}

void
github_command(FILE *f, const char *level, const char *title,
    const char *message)
{
	fprintf(f, "::%s title=", level);
	gh_escape(f, title, 1);
	fputs("::", f);
	gh_escape(f, message, 0);
	fputc('\n', f);
}

/* The test file of an id, relative to where flakyctl runs: pytest's and
 * Jest's ids start with it; a unittest id's module is tried as a path. */
static int
test_file(const char *id, char *buf, size_t len)
{
	const char *p;
	size_t	 n;

	if ((p = strstr(id, "::")) != NULL && p - id > 3 &&
	    strncmp(p - 3, ".py", 3) == 0)
		n = (size_t)(p - id);
	else if ((p = strstr(id, jest_sep)) != NULL && memchr(id, '.',
	    (size_t)(p - id)) != NULL)
		n = (size_t)(p - id);
	else {
		/* module.Class.test: the module as a file, if it is one */
		const char *last = strrchr(id, '.'), *cls = NULL;

		for (p = id; last != NULL && p < last; p++)
			if (*p == '.')
				cls = p;
		if (cls == NULL || (size_t)(cls - id) + 4 > len ||
		    strpbrk(id, " /") != NULL)
			return -1;
		n = (size_t)(cls - id);
		for (size_t i = 0; i < n; i++)
			buf[i] = id[i] == '.' ? '/' : id[i];
		memcpy(buf + n, ".py", 4);
		return access(buf, R_OK) == 0 ? 0 : -1;
	}
	if (n + 1 > len)
		return -1;
	memcpy(buf, id, n);
	buf[n] = '\0';
	return 0;
}

/* The test's own name as its source spells it: the function of pytest
 * and unittest ids (parameters dropped), the title of a Jest test. */
static void
source_name(const char *id, struct flaky_buf *b)
{
	const char *p, *s = id;
	size_t	 n;

	if (strstr(id, jest_sep) != NULL) {
		while ((p = strstr(s, jest_sep)) != NULL)
			s = p + strlen(jest_sep);
		n = strlen(s);
		/* " #2": flaky's, for a second test of one name */
		if ((p = strrchr(s, '#')) != NULL && p > s + 1 && p[-1] == ' ')
			n = (size_t)(p - 1 - s);
		flaky_buf_add(b, s, n);
		return;
	}
	if ((p = strstr(id, "::")) != NULL) {
		while ((p = strstr(s, "::")) != NULL)
			s = p + 2;
	} else if ((p = strrchr(id, '.')) != NULL)
		s = p + 1;
	flaky_buf_add(b, s, strcspn(s, "["));
}

/* The line of the test in file: "def NAME(" for Python, a quoted title
 * for Jest; 0 when not found. */
static int
source_line(const char *file, const char *id)
{
	struct flaky_buf name, needle;
	char	*data = NULL, err[128];
	size_t	 len;
	int	 line = 0, py = strstr(file, ".py") != NULL;
	const char *hit = NULL;

	if (flaky_read_file(file, SOURCE_MAX, &data, &len, err,
	    sizeof err) < 0)
		return 0;
	flaky_buf_init(&name);
	flaky_buf_init(&needle);
	source_name(id, &name);
	for (int q = 0; q < (py ? 1 : 3) && hit == NULL && name.len > 0; q++) {
		static const char quotes[] = "'\"`";

		flaky_buf_reset(&needle);
		if (py)
			flaky_buf_printf(&needle, "def %s(",
			    flaky_buf_cstr(&name));
		else
			flaky_buf_printf(&needle, "%c%s%c", quotes[q],
			    flaky_buf_cstr(&name), quotes[q]);
		if (!needle.oom)
			hit = strstr(data, flaky_buf_cstr(&needle));
	}
	if (hit != NULL) {
		line = 1;
		for (const char *p = data; p < hit; p++)
			line += *p == '\n';
	}
	flaky_buf_free(&name);
	flaky_buf_free(&needle);
	free(data);
	return line;
}

/* Where a test is: its file, and the line the static scan found in it or
 * else its definition's. */
static int
locate(const struct flaky_test_row *r, const struct report_evidence *ev,
    char *file, size_t len, int *line)
{
	size_t	 first, n;

	*line = 0;
	if (test_file(r->test, file, len) < 0)
		return -1;
	if (ev != NULL && (n = evidence_risks(ev, r, &first)) > 0)
		for (size_t i = first; i < first + n; i++)
			if (strcmp(ev->risks[i].path, file) == 0) {
				*line = ev->risks[i].line;
				return 0;
			}
	*line = source_line(file, r->test);
	return 0;
}

int
github_locate_id(const char *id, char *file, size_t len, int *line)
{
	*line = 0;
	if (test_file(id, file, len) < 0)
		return -1;
	*line = source_line(file, id);
	return 0;
}

void
github_md_cell(FILE *f, const char *s)
{
	md_cell(f, s);
}

void
github_escape(FILE *f, const char *s, int prop)
{
	gh_escape(f, s, prop);
}

/* "3 of 12 runs failed (25.0%, 95% interval 9%-53%)" */
static void
rate_words(const struct flaky_test_row *r, struct flaky_buf *b)
{
	double	 lo, hi;

	flaky_wilson(r->failures, r->runs, FLAKY_Z95, &lo, &hi);
	flaky_buf_printf(b, "%lld of %lld run%s failed (%.1f%%, 95%% "
	    "interval %.0f%%-%.0f%%)", (long long)r->failures,
	    (long long)r->runs, r->runs == 1 ? "" : "s", r->runs ? 100.0 *
	    (double)r->failures / (double)r->runs : 0.0, 100 * lo, 100 * hi);
}

void
github_annotate(FILE *f, const char *level, const char *what,
    const struct flaky_test_row *r, const struct report_evidence *ev)
{
	const struct flaky_test_sig *sig = ev ? evidence_sig(ev,
	    r->test_id) : NULL;
	struct flaky_buf m;
	char	 file[1024];
	int	 line;

	flaky_buf_init(&m);
	flaky_buf_printf(&m, "%s: ", r->test);
	rate_words(r, &m);
	if (sig != NULL && sig->signature != NULL)
		flaky_buf_printf(&m, ", signature %s", sig->signature);
	if (sig != NULL && sig->polluter != NULL)
		flaky_buf_printf(&m, ", fails after %s ran", sig->polluter);
	flaky_buf_printf(&m, " (target %s)", r->target);
	if (r->top_message != NULL)
		flaky_buf_printf(&m, "\n%.*s", (int)strcspn(r->top_message,
		    "\n"), r->top_message + strspn(r->top_message, " \n"));
	fprintf(f, "::%s ", level);
	if (locate(r, ev, file, sizeof file, &line) == 0) {
		fputs("file=", f);
		gh_escape(f, file, 1);
		if (line > 0)
			fprintf(f, ",line=%d", line);
		fputc(',', f);
	}
	fputs("title=", f);
	gh_escape(f, what, 1);
	fputs("::", f);
	gh_escape(f, flaky_buf_cstr(&m), 0);
	fputc('\n', f);
	flaky_buf_free(&m);
}

FILE *
github_summary_open(void)
{
	const char *path = getenv("GITHUB_STEP_SUMMARY");
	FILE	*f;

	if (path == NULL || *path == '\0')
		return NULL;
	if ((f = fopen(path, "a")) == NULL)
		fprintf(stderr, "flakyctl: GITHUB_STEP_SUMMARY %s: cannot "
		    "open\n", path);
	return f;
}

/* A Markdown table cell: pipes escaped, one line. */
static void
md_cell(FILE *f, const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		if (*s == '|' || *s == '`' || *s == '<')
			fputc('\\', f);
		fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
	}
}

void
github_summary_rows(FILE *f, const struct flaky_test_row *v, size_t n,
    const struct flaky_history *hist)
{
	size_t	 shown = 0, noise = 0, stable = 0, skipped = 0, none = 0;

	for (size_t i = 0; i < n; i++) {
		const struct flaky_test_row *r = &v[i];
		const struct flaky_history_row *h = hist ?
		    flaky_history_find(hist, r->test_id) : NULL;
		struct flaky_buf w;
		int	 t = flaky_tier_skips(r->failures, r->runs, r->skips);

		if (t == FLAKY_TIER_NOISE || t == FLAKY_TIER_STABLE) {
			*(t == FLAKY_TIER_NOISE ? &noise : &stable) += 1;
			continue;
		}
		/* no counted run: not stable, and not a row to act on */
		if (t == FLAKY_TIER_SKIPPED || t == FLAKY_TIER_NONE) {
			*(t == FLAKY_TIER_SKIPPED ? &skipped : &none) += 1;
			continue;
		}
		if (shown++ == 0)
			fputs("| tier | test | target | failed | |\n"
			    "|---|---|---|---|---|\n", f);
		flaky_buf_init(&w);
		rate_words(r, &w);
		fprintf(f, "| %s | ", flaky_tier_name(t));
		md_cell(f, r->test);
		fputs(" | ", f);
		md_cell(f, r->target);
		fputs(" | ", f);
		md_cell(f, flaky_buf_cstr(&w));
		fprintf(f, " | %s |\n", h && h->quarantined ? "quarantined" :
		    "");
		flaky_buf_free(&w);
	}
	fprintf(f, "%s%zu test%s above noise, %zu noise (under 5%%), %zu "
	    "stable", shown ? "\n" : "", shown, shown == 1 ? "" : "s",
	    noise, stable);
	if (skipped > 0)
		fprintf(f, ", %zu skipped in every run", skipped);
	if (none > 0)
		fprintf(f, ", %zu with no evidence (no complete run)", none);
	fputs(".\n\n", f);
}

/* The level of a row's annotation, or NULL for none. */
static const char *
row_level(const struct flaky_test_row *r, const char **what)
{
	switch (flaky_tier(r->failures, r->runs)) {
	case FLAKY_TIER_CRITICAL:
		*what = "Flaky test (critical)";
		return "error";
	case FLAKY_TIER_BROKEN:
		*what = "Broken test (fails every run)";
		return "error";
	case FLAKY_TIER_WARNING:
		*what = "Flaky test (warning)";
		return "warning";
	}
	return NULL;
}

int
print_github(const struct report_head *h, const struct report_evidence *ev,
    const struct flaky_test_row *v, size_t n)
{
	const struct flaky_history_row *hr;
	const char *level, *what;
	size_t	 k[FLAKY_TIER_COUNT] = { 0 };
	FILE	*sum;
	char	 a[32], b[32];

	for (size_t i = 0; i < n; i++) {
		int	 t = flaky_tier_skips(v[i].failures, v[i].runs,
		    v[i].skips);

		if (t >= 0 && t < FLAKY_TIER_COUNT)
			k[t]++;
		if ((level = row_level(&v[i], &what)) == NULL)
			continue;
		/* quarantined tests are known and deselected: a notice */
		hr = h->hist ? flaky_history_find(h->hist, v[i].test_id) :
		    NULL;
		github_annotate(stdout, hr && hr->quarantined ? "notice" :
		    level, what, &v[i], ev);
	}
	printf("flaky: %lld run%s, %zu critical, %zu warning, %zu broken, "
	    "%zu noise, %zu stable", (long long)h->runs.runs,
	    h->runs.runs == 1 ? "" : "s", k[FLAKY_TIER_CRITICAL],
	    k[FLAKY_TIER_WARNING], k[FLAKY_TIER_BROKEN], k[FLAKY_TIER_NOISE],
	    k[FLAKY_TIER_STABLE]);
	/* no counted run: said apart, never as stable */
	if (k[FLAKY_TIER_SKIPPED] > 0)
		printf(", %zu skipped", k[FLAKY_TIER_SKIPPED]);
	if (k[FLAKY_TIER_NONE] > 0)
		printf(", %zu no evidence", k[FLAKY_TIER_NONE]);
	putchar('\n');
	if ((sum = github_summary_open()) == NULL)
		return 0;
	fprintf(sum, "### flaky: %lld run%s", (long long)h->runs.runs,
	    h->runs.runs == 1 ? "" : "s");
	if (h->command != NULL) {
		fputs(" of `", sum);
		md_cell(sum, h->command);
		fputs("`", sum);
	}
	if (h->target != NULL) {
		fputs(" (target ", sum);
		md_cell(sum, h->target);
		fputs(")", sum);
	}
	if (h->runs.runs > 0)
		fprintf(sum, ", %s to %s", flaky_format_time(h->runs.first_ms,
		    a, sizeof a), flaky_format_time(h->runs.last_ms, b,
		    sizeof b));
	fputs("\n\n", sum);
	github_summary_rows(sum, v, n, h->hist);
	fclose(sum);
	return 0;
}
