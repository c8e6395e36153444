/* Reproduce commands of the JavaScript runners besides Jest (repro.c has
 * the others): the runner's selection of one test, from the command the
 * target ran.
 *
 *	Vitest		npx vitest run FILE -t '^describe test$'
 *	Playwright	npx playwright test FILE:LINE --project=P --grep ...
 *	Mocha		the command, with --grep '^full title$'
 *	node:test	node --test-name-pattern='^name$' --test [FILE]
 *			(the file from "test at FILE:L:C" when a failure
 *			printed it; TAP runs of node --test alike) */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diagnose.h"
#include "diagnose_int.h"

#define WORDS_MAX	64
#define CMD_MAX		4096

static const char pw_sep[] = " \xe2\x80\xba ";		/* " › " */

/* The command in words (copy holds them): -1 when a word has a quote, a
 * variable or a shell operator (then it cannot be taken apart). */
static int
words(const char *command, char *copy, char **w)
{
	int	 n = 0;

	if (command == NULL || strlen(command) >= CMD_MAX)
		return -1;
	strcpy(copy, command);
	for (char *t = strtok(copy, " \t"); t != NULL; t = strtok(NULL,
	    " \t")) {
		if (n == WORDS_MAX || strpbrk(t, "'\"`;&|<>()$\\") != NULL)
			return -1;
		w[n++] = t;
	}
	return n;
}

/* The last path part of a word. */
static const char *
base(const char *s)
{
	const char *p = strrchr(s, '/');

	return p ? p + 1 : s;
}

/* n bytes of s, regex-escaped (JavaScript's metacharacters). */
static void
escape(struct flaky_buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i] != '\0'; i++) {
		if (strchr("\\^$.|?*+()[]{}/", s[i]) != NULL)
			flaky_buf_addc(b, '\\');
		flaky_buf_addc(b, s[i]);
	}
}

/* The id without flaky's " #2". */
static size_t
id_len(const char *t)
{
	size_t	 n = strlen(t), d = n;

	while (d > 0 && t[d - 1] >= '0' && t[d - 1] <= '9')
		d--;
	return d < n && d >= 2 && t[d - 1] == '#' && t[d - 2] == ' ' ?
	    d - 2 : n;
}

/* pat quoted for sh after " opt". */
static void
quoted(struct flaky_buf *b, const char *opt, struct flaky_buf *pat)
{
	flaky_buf_printf(b, " %s", opt);
	flaky_sh_quote(b, flaky_buf_cstr(pat));
}

/* The command's words up to the runner's word (and "test" after
 * playwright, "run" after vitest), or dflt: returns the index after
 * them, or -1. */
static int
prefix(struct flaky_buf *b, char **w, int n, const char *runner,
    const char *dflt)
{
	for (int i = 0; i < n; i++) {
		const char *x = base(w[i]);
		int	 k = i + 1;

		if (strcmp(runner, "vitest") == 0 && (strcmp(x, "vitest") ==
		    0 || strcmp(x, "vitest.mjs") == 0))
			k += k < n && strcmp(w[k], "run") == 0;
		else if (strcmp(runner, "playwright") == 0 && strcmp(x,
		    "playwright") == 0 && k < n && strcmp(w[k], "test") == 0)
			k++;
		else
			continue;
		for (int j = 0; j < k; j++)
			flaky_buf_printf(b, "%s%s", j ? " " : "", w[j]);
		if (strcmp(runner, "vitest") == 0 && strcmp(w[k - 1], "run"))
			flaky_buf_adds(b, " run");
		return k;
	}
	flaky_buf_adds(b, dflt);
	return -1;
}

/* --config FILE (or -c FILE, --config=FILE) of the command, which the
 * selection needs to find the tests. */
static void
config(struct flaky_buf *b, char **w, int n, int from)
{
	for (int i = from; from >= 0 && i < n; i++) {
		if ((strcmp(w[i], "--config") == 0 || strcmp(w[i], "-c") ==
		    0) && i + 1 < n) {
			flaky_buf_printf(b, " %s %s", w[i], w[i + 1]);
			i++;
		} else if (strncmp(w[i], "--config=", 9) == 0)
			flaky_buf_printf(b, " %s", w[i]);
	}
}

/* Vitest: the file as a filter and -t with the full name. */
static void
repro_vitest(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	char	 copy[CMD_MAX], *w[WORDS_MAX];
	const char *t = d->test, *bar, *sep;
	size_t	 len = id_len(t);
	struct flaky_buf pat;
	int	 n = words(d->command, copy, w);

	config(b, w, n, prefix(b, w, n, "vitest", "npx vitest run"));
	flaky_buf_init(&pat);
	if (t[0] == '|' && (bar = strchr(t + 1, '|')) != NULL && bar[1] ==
	    ' ') {
		flaky_buf_printf(b, " --project=%.*s", (int)(bar - t - 1),
		    t + 1);
		len -= (size_t)(bar + 2 - t);
		t = bar + 2;
	}
	sep = memmem(t, len, " > ", 3);
	flaky_buf_add(&pat, t, sep ? (size_t)(sep - t) : len);
	flaky_buf_addc(b, ' ');
	flaky_sh_quote(b, flaky_buf_cstr(&pat));
	if (sep != NULL) {
		flaky_buf_reset(&pat);
		flaky_buf_addc(&pat, '^');
		for (const char *p = sep + 3, *e = t + len; p < e; ) {
			const char *q = memmem(p, (size_t)(e - p), " > ", 3);

			escape(&pat, p, q ? (size_t)(q - p) : (size_t)(e - p));
			if (q == NULL)
				break;
			flaky_buf_addc(&pat, ' ');
			p = q + 3;
		}
		flaky_buf_addc(&pat, '$');
		quoted(b, "-t ", &pat);
	}
	if (d->seed != NULL) {
		flaky_buf_adds(b, " --sequence.shuffle --sequence.seed=");
		flaky_sh_quote(b, d->seed);
	}
	flaky_buf_free(&pat);
}

/* Playwright: FILE:LINE, the project, and the titles as a grep. */
static void
repro_playwright(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	char	 copy[CMD_MAX], *w[WORDS_MAX];
	const char *t = d->test, *e = t + id_len(t), *sep, *p;
	struct flaky_buf pat;
	int	 n = words(d->command, copy, w);

	config(b, w, n, prefix(b, w, n, "playwright",
	    "npx playwright test"));
	if ((sep = memmem(t, (size_t)(e - t), pw_sep, 5)) == NULL) {
		flaky_buf_addc(b, ' ');
		flaky_sh_quote(b, d->test);
		return;
	}
	flaky_buf_init(&pat);
	flaky_buf_add(&pat, t, (size_t)(sep - t));
	flaky_buf_addc(b, ' ');
	flaky_sh_quote(b, flaky_buf_cstr(&pat));
	t = sep + 5;
	if (*t == '[' && (p = memchr(t, ']', (size_t)(e - t))) != NULL &&
	    e - p >= 6 && memcmp(p + 1, pw_sep, 5) == 0) {
		flaky_buf_reset(&pat);
		flaky_buf_add(&pat, t + 1, (size_t)(p - t - 1));
		flaky_buf_adds(b, " --project=");
		flaky_sh_quote(b, flaky_buf_cstr(&pat));
		t = p + 1 + 5;
	}
	flaky_buf_reset(&pat);
	flaky_buf_adds(&pat, "(?:^| )");
	while (t < e) {
		const char *q = memmem(t, (size_t)(e - t), pw_sep, 5);

		escape(&pat, t, q ? (size_t)(q - t) : (size_t)(e - t));
		if (q == NULL)
			break;
		flaky_buf_addc(&pat, ' ');
		t = q + 5;
	}
	flaky_buf_adds(&pat, "(?: @|$)");
	quoted(b, "--grep=", &pat);
	flaky_buf_free(&pat);
}

/* The command's words with pattern opt added (after node, or at the end)
 * and the words of drop (with their values) left out; the command's
 * words as they are when it cannot be taken apart. */
static void
with_pattern(struct flaky_buf *b, const struct flaky_diagnosis *d,
    const char *dflt, const char *opt, struct flaky_buf *pat,
    const char *const *drop, int after_node)
{
	char	 copy[CMD_MAX], *w[WORDS_MAX];
	int	 n = words(d->command, copy, w), done = 0;

	if (n <= 0) {
		flaky_buf_adds(b, d->command != NULL && n < 0 ? d->command :
		    dflt);
		quoted(b, opt, pat);
		return;
	}
	for (int i = 0; i < n; i++) {
		size_t	 k, l = 0;

		for (k = 0; drop[k] != NULL; k++) {
			l = strlen(drop[k]);
			if (strncmp(w[i], drop[k], l) == 0 &&
			    (w[i][l] == '\0' || w[i][l] == '='))
				break;
		}
		if (drop[k] != NULL) {
			i += w[i][l] == '\0' && strcmp(drop[k], "--invert") &&
			    strcmp(drop[k], "-i") && i + 1 < n;
			continue;
		}
		flaky_buf_printf(b, "%s%s", i ? " " : "", w[i]);
		if (after_node && !done && (strcmp(base(w[i]), "node") == 0 ||
		    strcmp(base(w[i]), "nodejs") == 0)) {
			quoted(b, opt, pat);
			done = 1;
		}
	}
	if (!done)
		quoted(b, opt, pat);
}

/* Mocha: the command (its files, --require, .mocharc) with --grep on the
 * full title; a --grep, --fgrep or --invert of its own is left out. */
static void
repro_mocha(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	static const char *const drop[] = { "--grep", "-g", "--fgrep", "-f",
	    "--invert", "-i", NULL };
	struct flaky_buf pat;

	flaky_buf_init(&pat);
	flaky_buf_addc(&pat, '^');
	escape(&pat, d->test, id_len(d->test));
	flaky_buf_addc(&pat, '$');
	with_pattern(b, d, "npx mocha", "--grep=", &pat, drop, 0);
	flaky_buf_free(&pat);
}

/* The file of "test at FILE:LINE:COL" in a failure's message, or NULL. */
static char *
failing_file(const struct flaky_diagnosis *d)
{
	for (size_t i = d->nfailed; i-- > 0; ) {
		const char *m = d->failed[i].message, *at, *e;

		if (m == NULL || (at = strstr(m, "test at ")) == NULL)
			continue;
		at += 8;
		e = at + strcspn(at, "\n");
		/* FILE:LINE:COL: the file before the last two colons */
		for (int k = 0; k < 2 && e > at; k++)
			while (--e > at && *e != ':')
				;
		if (e > at)
			return flaky_strndup(at, (size_t)(e - at));
	}
	return NULL;
}

/* node:test: --test-name-pattern with the test's own name (what Node 20
 * matches), after node; the failing test's file when a failure named it,
 * else the command's files. */
static void
repro_nodetest(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	static const char *const drop[] = { "--test-name-pattern", NULL };
	const char *leaf = d->test, *p;
	size_t	 len = id_len(d->test);
	struct flaky_buf pat;
	char	*file = failing_file(d);

	for (p = d->test; (p = strstr(p, " > ")) != NULL &&
	    p < d->test + len; p += 3)
		leaf = p + 3;
	flaky_buf_init(&pat);
	flaky_buf_addc(&pat, '^');
	escape(&pat, leaf, len - (size_t)(leaf - d->test));
	flaky_buf_addc(&pat, '$');
	if (file != NULL) {
		flaky_buf_adds(b, "node");
		quoted(b, "--test-name-pattern=", &pat);
		flaky_buf_adds(b, " --test ");
		flaky_sh_quote(b, file);
	} else
		with_pattern(b, d, "node --test", "--test-name-pattern=", &pat,
		    drop, 1);
	free(file);
	flaky_buf_free(&pat);
}

/* The reproduce command of a JavaScript runner's test (diagnose_int.h). */
int
flaky_repro_js(const struct flaky_diagnosis *d, const char *runner,
    struct flaky_buf *b)
{
	if (runner == NULL)
		return 0;
	/* node --test prints TAP into a pipe */
	if (strcmp(runner, "tap") == 0 && d->command != NULL &&
	    strstr(d->command, "node") != NULL &&
	    strstr(d->command, "--test") != NULL)
		runner = "nodetest";
	if (strcmp(runner, "vitest") == 0)
		repro_vitest(d, b);
	else if (strcmp(runner, "playwright") == 0)
		repro_playwright(d, b);
	else if (strcmp(runner, "mocha") == 0)
		repro_mocha(d, b);
	else if (strcmp(runner, "nodetest") == 0)
		repro_nodetest(d, b);
	else
		return 0;
	return 1;
}

/* The test's name without its file (diagnose_int.h). */
const char *
flaky_repro_js_short(const char *runner, const char *id)
{
	const char *p;

	if (runner == NULL)
		return NULL;
	/* Vitest: without the file; Playwright: without file and project */
	if (strcmp(runner, "vitest") == 0 && (p = strstr(id, " > ")) != NULL)
		return p + 3;
	if (strcmp(runner, "playwright") == 0 && (p = strstr(id, pw_sep)) !=
	    NULL) {
		p += 5;
		if (*p == '[' && (id = strstr(p, "]" " \xe2\x80\xba ")) != NULL)
			p = id + 6;
		return p;
	}
	return NULL;
}
