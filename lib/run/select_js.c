/* Running only some tests of a JavaScript runner besides Jest (select.c
 * has the others): each through its own options, from the ids its parser
 * gave (docs/runners.md, "Selecting tests").
 *
 *	Vitest		the files as filters, -t '^(?:full name|...)$' (the
 *			titles joined by blanks, as Vitest matches them),
 *			--project for "|name| " ids
 *	Playwright	FILE:LINE of each test, --project=NAME, and
 *			--grep for the titles (tests made in a loop share
 *			their line)
 *	Mocha		--grep '^(?:full title|...)$' (the id is the full
 *			title); a --grep, --fgrep or --invert given is
 *			dropped
 *	node:test	--test-name-pattern '^(?:name|...)$' with each
 *			test's own name: Node 20 matches no more than that,
 *			so a test of the same name in another suite runs
 *			too; a pattern given is dropped */
#include "buildconf.h"

#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "command_int.h"

#define VITEST_SEP	" > "
#define PW_SEP		" \xe2\x80\xba "	/* " › " */
#define NODE_SEP	" > "

/* s (n bytes) with the metacharacters of a JavaScript regular expression
 * escaped. */
static void
js_escape(struct flaky_buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (strchr("\\^$.|?*+()[]{}/", s[i]) != NULL)
			flaky_buf_addc(b, '\\');
		flaky_buf_addc(b, s[i]);
	}
}

/* The id's length without the " #2" flaky gives a second test of one
 * name (the runner knows no such suffix). */
static size_t
id_len(const char *t)
{
	size_t	 n = strlen(t), d = n;

	while (d > 0 && t[d - 1] >= '0' && t[d - 1] <= '9')
		d--;
	if (d < n && d >= 2 && t[d - 1] == '#' && t[d - 2] == ' ')
		return d - 2;
	return n;
}

/* Add word at a's index *at (then after it), unless it is there. */
static void
add_once(struct cmd_vec *a, size_t from, size_t *at, const char *word)
{
	for (size_t i = from; i < *at; i++)
		if (strcmp(a->v[i], word) == 0)
			return;
	cmd_vec_insert(a, (*at)++, word);
}

/* The command's words, without those options (and their values). */
static size_t
copy_without(struct cmd_vec *a, char *const *argv, size_t args,
    const char *const *drop)
{
	size_t	 at;

	for (size_t i = 0; argv[i] != NULL; i++) {
		size_t	 k, l = 0;

		for (k = 0; i >= args && drop[k] != NULL; k++) {
			l = strlen(drop[k]);
			if (strncmp(argv[i], drop[k], l) == 0 &&
			    (argv[i][l] == '\0' || argv[i][l] == '='))
				break;
		}
		if (i < args || drop[k] == NULL) {
			cmd_vec_add(a, argv[i]);
			continue;
		}
		/* --grep PATTERN; --invert has no value */
		if (argv[i][l] == '\0' && strcmp(drop[k], "--invert") &&
		    strcmp(drop[k], "-i") && argv[i + 1] != NULL)
			i++;
	}
	for (at = args; at < a->n && strcmp(a->v[at], "--") != 0; at++)
		;
	return at;
}

/* Vitest: "[|project| ]file > describe > test". */
static void
select_vitest(struct cmd_vec *a, char *const *argv, size_t args,
    char *const *tests, size_t n)
{
	struct flaky_buf names, w;
	size_t	 at = copy_without(a, argv, args, (const char *[]){ NULL });
	int	 any = 0;

	flaky_buf_init(&names);
	flaky_buf_init(&w);
	flaky_buf_adds(&names, "^(?:");
	for (size_t k = 0; k < n; k++) {
		const char *t = tests[k], *bar, *sep;
		size_t	 len = id_len(t);

		if (t[0] == '|' && (bar = memchr(t + 1, '|', len - 1)) !=
		    NULL && bar[1] == ' ') {
			flaky_buf_reset(&w);
			flaky_buf_printf(&w, "--project=%.*s",
			    (int)(bar - t - 1), t + 1);
			add_once(a, args, &at, flaky_buf_cstr(&w));
			len -= (size_t)(bar + 2 - t);
			t = bar + 2;
		}
		sep = memmem(t, len, VITEST_SEP, 3);
		flaky_buf_reset(&w);
		flaky_buf_add(&w, t, sep ? (size_t)(sep - t) : len);
		add_once(a, args, &at, flaky_buf_cstr(&w));
		if (sep == NULL)
			continue;	/* a file that failed: all of it */
		if (any++)
			flaky_buf_addc(&names, '|');
		for (const char *p = sep + 3, *e = t + len; p < e; ) {
			const char *q = memmem(p, (size_t)(e - p), VITEST_SEP,
			    3);

			js_escape(&names, p, q ? (size_t)(q - p) : (size_t)(e -
			    p));
			if (q == NULL)
				break;
			flaky_buf_addc(&names, ' ');
			p = q + 3;
		}
	}
	flaky_buf_adds(&names, ")$");
	if (any) {
		cmd_vec_insert(a, at++, "-t");
		cmd_vec_insert(a, at, flaky_buf_cstr(&names));
	}
	if (names.oom || w.oom)
		a->oom = 1;
	flaky_buf_free(&names);
	flaky_buf_free(&w);
}

/* Playwright: "file:line › [project] › titles". */
static void
select_playwright(struct cmd_vec *a, char *const *argv, size_t args,
    char *const *tests, size_t n)
{
	struct flaky_buf grep, w;
	size_t	 at = copy_without(a, argv, args, (const char *[]){ NULL });
	int	 any = 0;

	flaky_buf_init(&grep);
	flaky_buf_init(&w);
	flaky_buf_adds(&grep, "--grep=(?:^| )(?:");
	for (size_t k = 0; k < n; k++) {
		const char *t = tests[k], *e = t + id_len(t), *sep, *colon;

		if ((sep = memmem(t, (size_t)(e - t), PW_SEP, 5)) == NULL)
			continue;
		/* FILE:LINE, the file escaped (a filter is a regex) */
		for (colon = sep; colon > t && colon[-1] != ':'; colon--)
			;
		flaky_buf_reset(&w);
		js_escape(&w, t, colon > t ? (size_t)(colon - 1 - t) :
		    (size_t)(sep - t));
		flaky_buf_add(&w, colon > t ? colon - 1 : sep, colon > t ?
		    (size_t)(sep - colon + 1) : 0);
		add_once(a, args, &at, flaky_buf_cstr(&w));
		t = sep + 5;
		if (t < e && *t == '[' && (sep = memmem(t, (size_t)(e - t),
		    "]" PW_SEP, 6)) != NULL) {
			flaky_buf_reset(&w);
			flaky_buf_printf(&w, "--project=%.*s",
			    (int)(sep - t - 1), t + 1);
			add_once(a, args, &at, flaky_buf_cstr(&w));
			t = sep + 6;
		}
		if (any++)
			flaky_buf_addc(&grep, '|');
		while (t < e) {
			const char *q = memmem(t, (size_t)(e - t), PW_SEP, 5);

			js_escape(&grep, t, q ? (size_t)(q - t) : (size_t)(e -
			    t));
			if (q == NULL)
				break;
			flaky_buf_addc(&grep, ' ');
			t = q + 5;
		}
	}
	/* tags (" @slow") may follow the title */
	flaky_buf_adds(&grep, ")(?: @|$)");
	cmd_vec_insert(a, at, flaky_buf_cstr(&grep));
	if (grep.oom || w.oom)
		a->oom = 1;
	flaky_buf_free(&grep);
	flaky_buf_free(&w);
}

/* Mocha and node:test: one anchored pattern of names, in place of the
 * command's own. node:test's options go before its files (argv[1]). */
static void
select_pattern(struct cmd_vec *a, char *const *argv, size_t args,
    char *const *tests, size_t n, int node)
{
	static const char *const mocha_drop[] = { "--grep", "-g", "--fgrep",
	    "-f", "--invert", "-i", NULL };
	static const char *const node_drop[] = { "--test-name-pattern",
	    NULL };
	struct flaky_buf pat;
	size_t	 at = copy_without(a, argv, args, node ? node_drop :
	    mocha_drop);

	flaky_buf_init(&pat);
	flaky_buf_adds(&pat, node ? "--test-name-pattern=^(?:" :
	    "--grep=^(?:");
	for (size_t k = 0; k < n; k++) {
		const char *t = tests[k], *leaf = t, *p;
		size_t	 len = id_len(t);

		/* node: the name after the last " > " */
		for (p = t; node && (p = memmem(p, len - (size_t)(p - t),
		    NODE_SEP, 3)) != NULL; p += 3)
			leaf = p + 3;
		if (k > 0)
			flaky_buf_addc(&pat, '|');
		js_escape(&pat, leaf, len - (size_t)(leaf - t));
	}
	flaky_buf_adds(&pat, ")$");
	if (pat.oom)
		a->oom = 1;
	else
		cmd_vec_insert(a, node ? 1 : at, flaky_buf_cstr(&pat));
	flaky_buf_free(&pat);
}

/* A run of only the given tests (command_int.h). */
int
cmd_js_select(const struct flaky_command *c, char *const *tests, size_t n,
    struct cmd_vec *a)
{
	const char	*r = c->runner != NULL ? c->runner : "";
	size_t		 args = cmd_runner_args(c->argv);

	if (strcmp(r, "vitest") == 0)
		select_vitest(a, c->argv, args, tests, n);
	else if (strcmp(r, "playwright") == 0)
		select_playwright(a, c->argv, args, tests, n);
	else if (strcmp(r, "mocha") == 0)
		select_pattern(a, c->argv, args, tests, n, 0);
	else if (strcmp(r, "nodetest") == 0)
		select_pattern(a, c->argv, args, tests, n, 1);
	else
		return 0;
	return 1;
}
