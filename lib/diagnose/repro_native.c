/* The reproduce command of a cargo test, GoogleTest (binary or ctest),
 * RSpec or PHPUnit test: the runner's own selection of the one test, with
 * the command's runner word and options (repro.c hands these runners
 * over here; docs/runners.md, "Selecting tests"). */
#include "buildconf.h"

#include <stdio.h>
#include <string.h>

#include "diagnose/diagnose.h"
#include "diagnose_int.h"

#define WORDS	64

/* The command's words, split at blanks, into w (copy holds them): their
 * count, or 0 when a word needs the shell (quotes, operators). */
static int
words(const char *command, char *copy, size_t len, char **w)
{
	int	 n = 0;
	char	*save = NULL;

	if (command == NULL || strlen(command) >= len ||
	    strpbrk(command, "'\"`;&|<>()$\\") != NULL)
		return 0;
	strcpy(copy, command);
	for (char *t = strtok_r(copy, " \t", &save); t != NULL && n < WORDS;
	    t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	return n;
}

/* The last path part of a word. */
static const char *
tail(const char *s)
{
	const char *p = strrchr(s, '/');

	return p != NULL ? p + 1 : s;
}

/* The index of the first word whose last part is name, or -1. */
static int
find_word(char **w, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(tail(w[i]), name) == 0)
			return i;
	return -1;
}

/* Append words[from..to) separated by blanks. */
static void
add_words(struct flaky_buf *b, char **w, int from, int to)
{
	for (int i = from; i < to; i++)
		flaky_buf_printf(b, "%s%s", b->len && b->data[b->len - 1] !=
		    ' ' ? " " : "", w[i]);
}

/* s escaped for an extended regular expression or PCRE, anchored. */
static void
anchored(struct flaky_buf *b, const char *pre, const char *s,
    const char *post)
{
	flaky_buf_adds(b, pre);
	for (; *s; s++) {
		if (strchr("\\^$.|?*+()[]{}/", *s) != NULL)
			flaky_buf_addc(b, '\\');
		flaky_buf_addc(b, *s);
	}
	flaky_buf_adds(b, post);
}

/* cargo test [its options] -- --exact NAME. A doctest ("src/lib.rs -
 * item (line 7)") cannot be named whole (rustdoc splits filters at
 * blanks): --doc with its item, which runs every doctest of that name. */
static void
repro_cargo(const struct flaky_diagnosis *d, char **w, int n,
    struct flaky_buf *b)
{
	int	 k = find_word(w, n, "cargo"), t = -1;
	const char *doc, *line = NULL;

	for (int i = k + 1; k >= 0 && i < n && t < 0; i++)
		if (strcmp(w[i], "test") == 0 || strcmp(w[i], "t") == 0)
			t = i;
	if (t < 0)
		flaky_buf_adds(b, "cargo test");
	else
		add_words(b, w, 0, t + 1);
	if ((doc = strstr(d->test, " - ")) != NULL &&
	    (line = strstr(doc, " (line ")) != NULL)
		flaky_buf_adds(b, " --doc");
	for (int i = t + 1; t >= 0 && i < n && strcmp(w[i], "--") != 0; i++) {
		/* its options (-p NAME and the like), not its filters */
		int	 v = strchr("pFjZ", w[i][1]) != NULL && w[i][2] == '\0';

		if (w[i][0] != '-' || strcmp(w[i], "--no-fail-fast") == 0)
			continue;
		v |= strcmp(w[i], "--package") == 0 ||
		    strcmp(w[i], "--manifest-path") == 0 ||
		    strcmp(w[i], "--features") == 0 ||
		    strcmp(w[i], "--target") == 0 ||
		    strcmp(w[i], "--test") == 0;
		add_words(b, w, i, i + 1 + (v && i + 1 < n));
		i += v;
	}
	if (doc != NULL && line != NULL) {
		flaky_buf_printf(b, " -- %.*s\n# rustdoc splits a filter at "
		    "blanks: this runs every doctest whose name holds %.*s",
		    (int)(line - doc - 3), doc + 3, (int)(line - doc - 3),
		    doc + 3);
		return;
	}
	flaky_buf_adds(b, " -- --exact ");
	flaky_sh_quote(b, d->test);
}

/* ctest -R '^NAME$' (its --test-dir or -C kept), or the GoogleTest
 * binary --gtest_filter=NAME. */
static void
repro_gtest(const struct flaky_diagnosis *d, char **w, int n,
    struct flaky_buf *b)
{
	struct flaky_buf re;
	int	 k = find_word(w, n, "ctest");

	flaky_buf_init(&re);
	if (k >= 0) {
		add_words(b, w, 0, k + 1);
		for (int i = k + 1; i + 1 < n; i++)
			if (strcmp(w[i], "--test-dir") == 0 ||
			    strcmp(w[i], "-C") == 0 ||
			    strcmp(w[i], "--build-config") == 0)
				add_words(b, w, i, i + 2);
		anchored(&re, "^", d->test, "$");
		flaky_buf_adds(b, " --output-on-failure -R ");
		flaky_sh_quote(b, flaky_buf_cstr(&re));
	} else {
		flaky_buf_adds(b, n > 0 ? w[0] : "./TEST_BINARY");
		flaky_buf_printf(&re, "--gtest_filter=%s", d->test);
		flaky_buf_addc(b, ' ');
		flaky_sh_quote(b, flaky_buf_cstr(&re));
	}
	flaky_buf_free(&re);
}

/* rspec -e 'full description' (the words up to rspec: bundle exec), and
 * the random order's seed when the run had one. */
static void
repro_rspec(const struct flaky_diagnosis *d, char **w, int n,
    struct flaky_buf *b)
{
	int	 k = find_word(w, n, "rspec");

	if (k < 0)
		flaky_buf_adds(b, "rspec");
	else
		add_words(b, w, 0, k + 1);
	flaky_buf_adds(b, " -e ");
	flaky_sh_quote(b, d->test);
	if (d->seed != NULL) {
		flaky_buf_adds(b, " --order rand:");
		flaky_sh_quote(b, d->seed);
	}
}

/* phpunit --filter '/^Class::method$/' (the words up to phpunit: php,
 * vendor/bin/), and the random order's seed when the run had one. */
static void
repro_phpunit(const struct flaky_diagnosis *d, char **w, int n,
    struct flaky_buf *b)
{
	struct flaky_buf re;
	int	 k = find_word(w, n, "phpunit");

	if (k < 0)
		k = find_word(w, n, "phpunit.phar");
	if (k < 0)
		flaky_buf_adds(b, "phpunit");
	else
		add_words(b, w, 0, k + 1);
	flaky_buf_init(&re);
	anchored(&re, "/^", d->test, "$/");
	flaky_buf_adds(b, " --filter ");
	flaky_sh_quote(b, flaky_buf_cstr(&re));
	flaky_buf_free(&re);
	if (d->seed != NULL) {
		flaky_buf_adds(b, " --order-by=random --random-order-seed=");
		flaky_sh_quote(b, d->seed);
	}
}

/* The reproduce command of a native runner's test (diagnose_int.h). */
int
diag_repro_native(const struct flaky_diagnosis *d, const char *runner,
    struct flaky_buf *b)
{
	char	 copy[4096], *w[WORDS];
	int	 n = words(d->command, copy, sizeof copy, w);

	if (runner == NULL)
		return 0;
	if (strcmp(runner, "cargo") == 0)
		repro_cargo(d, w, n, b);
	else if (strcmp(runner, "gtest") == 0)
		repro_gtest(d, w, n, b);
	else if (strcmp(runner, "rspec") == 0)
		repro_rspec(d, w, n, b);
	else if (strcmp(runner, "phpunit") == 0)
		repro_phpunit(d, w, n, b);
	else
		return 0;
	return 1;
}
