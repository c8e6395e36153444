/* A test as its runner names and selects it: a ticket's title names the
 * test without its file or package, and its reproduce command runs that
 * test alone (pytest's node id, unittest's module.Class.test, Jest's file
 * and -t with the full name, go's -run '^Name$'). TAP and JUnit have no
 * selector we can trust: their command is the suite's. */
#include "buildconf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diagnose.h"
#include "diagnose_int.h"
#include "run/run.h"

#define WORDS_MAX	64
#define GOMOD_MAX	(64 * 1024)

static const char jest_sep[] = " \xe2\x80\xba ";	/* " › " */

/* The runner of a test: the one its runs recorded, else the command's. */
const char *
flaky_repro_runner(const char *runner, const char *command)
{
	static const struct {
		const char	*word, *name;
	} guess[] = {
		{ "pytest", "pytest" }, { "unittest", "unittest" },
		{ "jest", "jest" }, { "cargo test", "cargo" },
		{ "go test", "gotest" }, { "prove", "tap" }, { "ctest", "gtest" },
		{ "--gtest_", "gtest" }, { "rspec", "rspec" },
		{ "phpunit", "phpunit" },
		{ "vitest", "vitest" }, { "playwright", "playwright" },
		{ "mocha", "mocha" }, { "--test", "nodetest" },
	};

	if (runner != NULL && *runner != '\0')
		return runner;
	for (size_t i = 0; command != NULL && i < FLAKY_ARRAY_SIZE(guess); i++)
		if (strstr(command, guess[i].word) != NULL)
			return guess[i].name;
	return NULL;
}

/* Is runner one of these names? */
static int
is_runner(const char *runner, const char *name)
{
	return runner != NULL && strcmp(runner, name) == 0;
}

/* The Go package and the test of "example.com/m/pkg/TestX/sub": the
 * index of the first segment that names a test (Test, Example, Fuzz or
 * Benchmark, not followed by a lowercase letter), or NULL. */
static const char *
go_test_part(const char *id)
{
	static const char *const prefix[] = {
		"Test", "Example", "Fuzz", "Benchmark"
	};

	for (const char *p = strchr(id, '/'); p != NULL;
	    p = strchr(p + 1, '/'))
		for (size_t i = 0; i < FLAKY_ARRAY_SIZE(prefix); i++) {
			size_t	 n = strlen(prefix[i]);

			if (strncmp(p + 1, prefix[i], n) == 0 &&
			    !(p[1 + n] >= 'a' && p[1 + n] <= 'z'))
				return p + 1;
		}
	return NULL;
}

/* The test without its file, module or package, as a title names it. */
const char *
flaky_repro_short_name(const char *runner, const char *id)
{
	const char *p;

	if ((p = flaky_repro_js_short(runner, id)) != NULL)
		return p;
	if (is_runner(runner, "pytest") && (p = strstr(id, "::")) != NULL)
		return p + 2;
	if (is_runner(runner, "jest") && (p = strstr(id, jest_sep)) != NULL)
		return p + strlen(jest_sep);
	if (is_runner(runner, "gotest") && (p = go_test_part(id)) != NULL)
		return p;
	if (is_runner(runner, "unittest")) {
		/* module.Class.test: the last two parts */
		const char *last = strrchr(id, '.');

		for (p = last; p != NULL && p > id && p[-1] != '.'; p--)
			;
		if (last != NULL && p != NULL && p > id)
			return p;
	}
	return id;
}

/* A ticket title: "Checkout › talks to slow API: TIMEOUT flake (js),
 * 4/15 runs, median duration 2.3 s". */
void
flaky_ticket_title(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	const char *runner = flaky_repro_runner(d->runner, d->command);
	char	 ms[32];
	double	 med = d->timing.n_fail > 0 ? d->timing.median_fail :
	    d->timing.median_pass;

	flaky_buf_printf(b, "%s: ", flaky_repro_short_name(runner, d->test));
	if (d->signature == NULL && d->runs == 0)
		flaky_buf_printf(b, "%s (%s), no counted run",
		    flaky_verdict_name(d->verdict), d->target);
	else if (d->signature == NULL)
		flaky_buf_printf(b, "no failure (%s), %lld run%s", d->target,
		    (long long)d->runs, flaky_plural(d->runs));
	else
		flaky_buf_printf(b, "%s%s %s (%s), %lld/%lld run%s",
		    d->verdict == FLAKY_VERDICT_BROKEN ? "broken, " : "",
		    d->signature, d->verdict == FLAKY_VERDICT_BROKEN ?
		    "failure" : "flake", d->target, (long long)d->failures,
		    (long long)d->runs, flaky_plural(d->runs));
	if (!isnan(med)) {
		flaky_format_ms(med, ms, sizeof ms);
		flaky_buf_printf(b, ", median duration %s", ms);
	}
}

/* Append s in single quotes for sh. */
static void
sh_quote_always(struct flaky_buf *b, const char *s)
{
	flaky_buf_addc(b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			flaky_buf_adds(b, "'\\''");
		else
			flaky_buf_addc(b, *s);
	}
	flaky_buf_addc(b, '\'');
}

/* Append s quoted for sh when it needs it. */
static void
sh_quote(struct flaky_buf *b, const char *s)
{
	if (*s != '\0' && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
	    "OPQRSTUVWXYZ0123456789_-./:=@,+%") == strlen(s)) {
		flaky_buf_adds(b, s);
		return;
	}
	sh_quote_always(b, s);
}

/* Append n bytes of s with the regular expression characters of JavaScript
 * (and Go's, a subset) escaped. */
static void
regex_escape(struct flaky_buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i] != '\0'; i++) {
		if (strchr("\\^$.*+?()[]{}|/", s[i]) != NULL)
			flaky_buf_addc(b, '\\');
		flaky_buf_addc(b, s[i]);
	}
}

/* Jest's --testNamePattern sees "describe title", not our
 * "file › describe › title": drop the file and the " #2" we give a second
 * test of one name, join with blanks, and escape. */
void
flaky_repro_jest_name(struct flaky_buf *b, const char *id)
{
	const char	*p = strstr(id, jest_sep), *end;

	if (p != NULL)
		id = p + strlen(jest_sep);
	end = id + strlen(id);
	if ((p = strrchr(id, '#')) != NULL && p > id + 1 && p[-1] == ' ' &&
	    p[1] != '\0' && strspn(p + 1, "0123456789") == strlen(p + 1))
		end = p - 1;
	while (id < end) {
		if (strncmp(id, jest_sep, strlen(jest_sep)) == 0) {
			flaky_buf_addc(b, ' ');
			id += strlen(jest_sep);
			continue;
		}
		regex_escape(b, id, 1);
		id++;
	}
}

/* The command's words split at blanks: count, or -1 when a word holds a
 * quote or a shell operator (then the prefix cannot be reused). */
static int
split_words(char *s, char **w, int max)
{
	int	 n = 0;

	for (char *t = strtok(s, " \t"); t != NULL; t = strtok(NULL, " \t")) {
		if (n == max || strpbrk(t, "'\"`;&|<>()$\\") != NULL)
			return -1;
		w[n++] = t;
	}
	return n;
}

/* The last path part of a word. */
static const char *
base(const char *w)
{
	const char *p = strrchr(w, '/');

	return p ? p + 1 : w;
}

/* The index of the word that runs runner in w, or -1. */
static int
runner_word(const char *runner, char **w, int n)
{
	for (int i = 0; i < n; i++) {
		const char *x = base(w[i]);

		if (is_runner(runner, "pytest") && (strcmp(x, "pytest") == 0 ||
		    strcmp(x, "py.test") == 0 || strcmp(x, "pytest-3") == 0))
			return i;
		if (is_runner(runner, "unittest") &&
		    strcmp(x, "unittest") == 0 && i > 0 && strcmp(w[i - 1], "-m") == 0)
			return i;
		if (is_runner(runner, "jest") && (strcmp(x, "jest") == 0 ||
		    strcmp(x, "jest.js") == 0))
			return i;
	}
	return -1;
}

/* The command up to the runner's own word (env assignments, npx, python3
 * -m ...), or dflt when the command does not show it plainly. Returns the
 * index of the runner's word in w (w and n filled), or -1. */
static int
add_prefix(struct flaky_buf *b, const char *runner, const char *command,
    const char *dflt, char *copy, char **w, int *n)
{
	int	 k = -1;

	*n = 0;
	if (command != NULL && strlen(command) < 4096) {
		strcpy(copy, command);
		if ((*n = split_words(copy, w, WORDS_MAX)) < 0)
			*n = 0;
		k = runner_word(runner, w, *n);
	}
	if (k < 0) {
		flaky_buf_adds(b, dflt);
		return -1;
	}
	for (int i = 0; i <= k; i++)
		flaky_buf_printf(b, "%s%s", i ? " " : "", w[i]);
	return k;
}

/* pytest 'file.py::Class::test[p]', with the run's random seed. */
static void
repro_pytest(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	char	 copy[4096], *w[WORDS_MAX];
	int	 n;

	(void)add_prefix(b, "pytest", d->command, "pytest", copy, w, &n);
	flaky_buf_addc(b, ' ');
	sh_quote_always(b, d->test);
	if (d->seed == NULL || d->command == NULL)
		return;
	if (strstr(d->command, "random-order") != NULL ||
	    strstr(d->command, "random_order") != NULL) {
		flaky_buf_adds(b, " --random-order-seed=");
		sh_quote(b, d->seed);
	} else if (strstr(d->command, "randomly") != NULL) {
		flaky_buf_adds(b, " -p randomly --randomly-seed=");
		sh_quote(b, d->seed);
	}
}

/* Is the unittest id a test method's (module.Class.test_x)? Anything
 * else that unittest ran came from a suite: a doctest (module.function),
 * a load_tests() addition, a module that failed to import (unittest's
 * own _FailedTest); `python -m unittest ID` cannot run those. */
static int
unittest_method(const char *id)
{
	const char *last = strrchr(id, '.');

	return last != NULL && strncmp(last + 1, "test", 4) == 0 &&
	    strncmp(id, "unittest.loader._FailedTest.", 28) != 0;
}

/* python3 -c PROGRAM [the command's unittest arguments] --flaky-ids ID:
 * the suite as the command builds it (load_tests, doctests), only ID run
 * (flaky_unittest_select_py). */
static void
repro_unittest_suite(const struct flaky_diagnosis *d, struct flaky_buf *b,
    char **w, int n, int k)
{
	if (k < 2 || strcmp(w[k - 1], "-m") != 0) {
		flaky_buf_adds(b, "python3 -c ");
		sh_quote_always(b, flaky_unittest_select_py);
	} else {
		for (int i = 0; i < k - 1; i++)
			flaky_buf_printf(b, "%s ", w[i]);
		flaky_buf_adds(b, "-c ");
		sh_quote_always(b, flaky_unittest_select_py);
		for (int i = k + 1; i < n; i++)
			flaky_buf_printf(b, " %s", w[i]);
	}
	flaky_buf_adds(b, " --flaky-ids ");
	sh_quote_always(b, d->test);
}

/* python3 -m unittest module.Class.test, from the directory discover's
 * module names are relative to (-t, else -s or its first argument); a
 * test that unittest cannot be given by name (a doctest) through the
 * suite instead. */
static void
repro_unittest(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	struct flaky_buf pre;
	char	 copy[4096], *w[WORDS_MAX];
	const char *top = NULL, *start = NULL;
	int	 n, k;

	flaky_buf_init(&pre);
	k = add_prefix(&pre, "unittest", d->command, "python3 -m unittest",
	    copy, w, &n);
	if (!unittest_method(d->test)) {
		repro_unittest_suite(d, b, w, n, k);
		flaky_buf_free(&pre);
		return;
	}
	if (k >= 0 && k + 1 < n && strcmp(w[k + 1], "discover") == 0) {
		for (int i = k + 2; i < n; i++) {
			if ((strcmp(w[i], "-t") == 0 || strcmp(w[i],
			    "--top-level-directory") == 0) && i + 1 < n)
				top = w[++i];
			else if ((strcmp(w[i], "-s") == 0 || strcmp(w[i],
			    "--start-directory") == 0) && i + 1 < n)
				start = w[++i];
			else if ((strcmp(w[i], "-p") == 0 || strcmp(w[i],
			    "--pattern") == 0 || strcmp(w[i], "-k") == 0) &&
			    i + 1 < n)
				i++;
			else if (w[i][0] != '-' && start == NULL)
				start = w[i];
		}
	}
	if (top != NULL || start != NULL) {
		flaky_buf_adds(b, "cd ");
		sh_quote(b, top ? top : start);
		flaky_buf_adds(b, " && ");
	}
	flaky_buf_adds(b, flaky_buf_cstr(&pre));
	flaky_buf_addc(b, ' ');
	sh_quote_always(b, d->test);
	flaky_buf_free(&pre);
}

/* A second test of one name (" #2", in run order): Jest selects by name,
 * so the command runs both; say so. */
static void
jest_same_name(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	const char *p = strrchr(d->test, '#');

	if (p == NULL || p < d->test + 2 || p[-1] != ' ' || p[1] == '\0' ||
	    strspn(p + 1, "0123456789") != strlen(p + 1))
		return;
	flaky_buf_printf(b, "\n# Jest selects tests by name: this also runs "
	    "the other test%s of this name in the file (flaky numbers them "
	    "in run order; this is #%s)", strcmp(p + 1, "2") == 0 ? "" : "s",
	    p + 1);
}

/* prove with the command's options and the test's file ("t/x.t > name"):
 * prove runs files, so the file's other tests run too. */
static void
repro_prove(const struct flaky_diagnosis *d, struct flaky_buf *b, char **w,
    int n, int k)
{
	const char *sep = strstr(d->test, " > ");
	char	 file[4096];

	for (int i = k; i < n && (i == k || w[i][0] == '-'); i++) {
		flaky_buf_printf(b, "%s%s", i == k ? "" : " ", w[i]);
		/* options with a value in the next word */
		if (i > k && strlen(w[i]) == 2 && strchr("IPMje", w[i][1]) &&
		    i + 1 < n)
			flaky_buf_printf(b, " %s", w[++i]);
	}
	snprintf(file, sizeof file, "%.*s", sep ? (int)(sep - d->test) :
	    (int)strlen(d->test), d->test);
	flaky_buf_addc(b, ' ');
	sh_quote(b, file);
	if (sep != NULL)
		flaky_buf_printf(b, "\n# prove runs files: the other tests of "
		    "%s run too", file);
}

/* The index of prove's word in the command, w and n filled; -1. */
static int
prove_word(const char *command, char *copy, char **w, int *n)
{
	*n = 0;
	if (command == NULL || strlen(command) >= 4096)
		return -1;
	strcpy(copy, command);
	if ((*n = split_words(copy, w, WORDS_MAX)) < 0)
		*n = 0;
	for (int i = 0; i < *n; i++)
		if (strcmp(base(w[i]), "prove") == 0)
			return i;
	return -1;
}

/* npx jest FILE -t '^describe title$' (Jest joins the names with blanks
 * and matches the pattern against that), with --config and the seed. */
static void
repro_jest(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	struct flaky_buf pat;
	char	 copy[4096], *w[WORDS_MAX];
	const char *sep = strstr(d->test, jest_sep);
	size_t	 flen = sep ? (size_t)(sep - d->test) : strlen(d->test);
	int	 n, k;

	k = add_prefix(b, "jest", d->command, "npx jest", copy, w, &n);
	for (int i = k + 1; k >= 0 && i < n; i++) {
		if ((strcmp(w[i], "--config") == 0 || strcmp(w[i], "-c") == 0)
		    && i + 1 < n) {
			flaky_buf_printf(b, " %s %s", w[i], w[i + 1]);
			i++;
		} else if (strncmp(w[i], "--config=", 9) == 0)
			flaky_buf_printf(b, " %s", w[i]);
	}
	/* the file is a pattern for Jest too: escaped when it is more than
	 * a plain path */
	flaky_buf_init(&pat);
	flaky_buf_addc(b, ' ');
	if (strspn(d->test, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRST"
	    "UVWXYZ0123456789_-./") >= flen)
		flaky_buf_add(b, d->test, flen);
	else {
		regex_escape(&pat, d->test, flen);
		sh_quote_always(b, flaky_buf_cstr(&pat));
	}
	if (sep != NULL) {
		flaky_buf_reset(&pat);
		flaky_buf_addc(&pat, '^');
		flaky_repro_jest_name(&pat, d->test);
		flaky_buf_addc(&pat, '$');
		flaky_buf_adds(b, " -t ");
		sh_quote_always(b, flaky_buf_cstr(&pat));
	}
	if (d->seed != NULL) {
		flaky_buf_adds(b, " --seed=");
		sh_quote(b, d->seed);
	}
	flaky_buf_free(&pat);
	jest_same_name(d, b);
}

/* The package as go test takes it from dir: "./sub" when go.mod there
 * declares the module it is in, else the import path. */
static void
go_package(struct flaky_buf *b, const char *dir, const char *pkg, size_t n)
{
	char	 path[4096], err[256], *data = NULL, *m;
	size_t	 len, ml;

	if (dir != NULL && snprintf(path, sizeof path, "%s/go.mod", dir) <
	    (int)sizeof path && flaky_read_file(path, GOMOD_MAX, &data, &len,
	    err, sizeof err) == 0 && (m = strstr(data, "module ")) != NULL &&
	    (m == data || m[-1] == '\n')) {
		m += 7;
		m += strspn(m, " \t\"");
		ml = strcspn(m, " \t\r\n\"");
		if (ml == n && strncmp(m, pkg, n) == 0) {
			flaky_buf_adds(b, ".");
			free(data);
			return;
		}
		if (ml < n && strncmp(m, pkg, ml) == 0 && pkg[ml] == '/') {
			flaky_buf_adds(b, ".");
			flaky_buf_add(b, pkg + ml, n - ml);
			free(data);
			return;
		}
	}
	free(data);
	flaky_buf_add(b, pkg, n);
}

/* Go's -run or -skip pattern of one test: each level of its name anchored
 * ("^TestX$/^sub$"); -1 when the id names no Go test. */
int
flaky_repro_go_pattern(struct flaky_buf *b, const char *id)
{
	const char *t = go_test_part(id);

	if (t == NULL)
		return -1;
	for (const char *p = t; *p != '\0'; ) {
		size_t	 n = strcspn(p, "/");

		flaky_buf_adds(b, p == t ? "^" : "/^");
		regex_escape(b, p, n);
		flaky_buf_addc(b, '$');
		p += n;
		if (*p == '/')
			p++;
	}
	return 0;
}

/* go test -count=1 -run '^TestX$/^sub$' ./pkg */
static void
repro_go(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	struct flaky_buf pat;
	const char *t = go_test_part(d->test);

	flaky_buf_init(&pat);
	if (flaky_repro_go_pattern(&pat, d->test) < 0) {
		flaky_buf_adds(b, d->command ? d->command : "go test ./...");
		flaky_buf_free(&pat);
		return;
	}
	flaky_buf_adds(b, "go test -count=1 -run ");
	sh_quote_always(b, flaky_buf_cstr(&pat));
	flaky_buf_addc(b, ' ');
	go_package(b, d->dir, d->test, (size_t)(t - 1 - d->test));
	flaky_buf_free(&pat);
}

/* The suite's own command, with the seed its runner printed. */
static void
repro_suite(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	/* ingested or uploaded results come with no command: a shell
	 * comment says so where a command would be pasted */
	flaky_buf_adds(b, d->command ? d->command : "# no command is known: "
	    "these results were ingested or uploaded (run the test as the "
	    "job that made them does)");
	if (d->seed != NULL && is_runner(d->runner, "pytest") &&
	    d->command != NULL &&
	    strstr(d->command, "random-order-seed") == NULL &&
	    (strstr(d->command, "random_order") != NULL ||
	    strstr(d->command, "--random-order") != NULL)) {
		flaky_buf_adds(b, " --random-order-seed=");
		sh_quote(b, d->seed);
	} else if (d->seed != NULL && is_runner(d->runner, "pytest") &&
	    d->command != NULL && strstr(d->command, "randomly") != NULL &&
	    strstr(d->command, "randomly-seed") == NULL) {
		flaky_buf_adds(b, " -p randomly --randomly-seed=");
		sh_quote(b, d->seed);
	} else if (d->seed != NULL && d->command != NULL &&
	    strstr(d->command, "jest") != NULL &&
	    strstr(d->command, "--seed") == NULL) {
		flaky_buf_adds(b, " --seed=");
		sh_quote(b, d->seed);
	}
}

/* "cd DIR && ", and the seed of a SEED test's failing run (issue 34):
 * "FLAKY_SEED=N PYTHONHASHSEED=N PYTHONPATH=HOOK... " */
static void
add_cd(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	const char *runner = flaky_repro_runner(d->runner, d->command);

	if (d->dir != NULL) {
		flaky_buf_adds(b, "cd ");
		sh_quote(b, d->dir);
		flaky_buf_adds(b, " && ");
	}
	if (d->seed_ev.sensitive && d->seed_ev.seed[0] != '\0' &&
	    runner != NULL && (strcmp(runner, "pytest") == 0 ||
	    strcmp(runner, "unittest") == 0))
		flaky_seed_env_words(d->seed_ev.seed, d->dir, runner, b);
}

/* The command that reproduces the failure: the runner's own selection of
 * the one test (or the config's isolate template), seed included. A test
 * that depends on the order needs the suite, and a wrapper script (the
 * runner not in the command) may set up what the test needs: the suite's
 * command follows then. */
void
flaky_repro(const struct flaky_diagnosis *d, const char *isolate,
    struct flaky_buf *b)
{
	const char *runner = flaky_repro_runner(d->runner, d->command);
	char	 copy[4096], *w[WORDS_MAX];
	int	 n, k;

	add_cd(d, b);
	if (isolate != NULL) {
		/* the template with {test} replaced, quoted */
		for (const char *p = isolate; *p; ) {
			if (strncmp(p, "{test}", 6) == 0) {
				sh_quote(b, d->test);
				p += 6;
			} else
				flaky_buf_addc(b, *p++);
		}
		return;
	}
	if (d->polluter != NULL || d->depends_on != NULL) {
		repro_suite(d, b);
		return;
	}
	if (flaky_repro_js(d, runner, b))
		return;
	if (is_runner(runner, "tap") &&
	    (k = prove_word(d->command, copy, w, &n)) >= 0) {
		repro_prove(d, b, w, n, k);
		return;
	}
	if (diag_repro_native(d, runner, b))
		return;
	if (is_runner(runner, "pytest") && strstr(d->test, "::") != NULL)
		repro_pytest(d, b);
	else if (is_runner(runner, "unittest"))
		repro_unittest(d, b);
	else if (is_runner(runner, "jest"))
		repro_jest(d, b);
	else if (is_runner(runner, "gotest"))
		repro_go(d, b);
	else {
		repro_suite(d, b);
		return;
	}
	if (d->command == NULL || (strcmp(runner, "gotest") == 0 &&
	    strstr(d->command, "go test") != NULL))
		return;
	if (strlen(d->command) < sizeof copy) {
		strcpy(copy, d->command);
		n = split_words(copy, w, WORDS_MAX);
		if (n > 0 && runner_word(runner, w, n) >= 0)
			return;
	}
	flaky_buf_adds(b, "\n# the suite, as flaky ran it:\n");
	add_cd(d, b);
	repro_suite(d, b);
}

/* The target's command up to its runner's word, for running tests in a
 * given order (polluter.c); dflt when the command does not show it. */
void
flaky_repro_runner_prefix(const char *runner, const char *command,
    const char *dflt, struct flaky_buf *b)
{
	char	 copy[4096], *w[WORDS_MAX];
	int	 n;

	(void)add_prefix(b, runner, command, dflt, copy, w, &n);
}

/* Append s for sh, quoted when it needs it. */
void
flaky_sh_quote(struct flaky_buf *b, const char *s)
{
	sh_quote(b, s);
}
