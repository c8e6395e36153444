/* The command of a run of only some tests (issue 18: analyze
 * --until-settled reruns the tests still open, --risky the tests with scan
 * findings): each runner selects through its own options, from the ids its
 * parser gave (docs/runners.md, "Selecting tests"). */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "command_int.h"
#include "run/run.h"
#include "util/util.h"

/* The runners flaky_command_select knows, for its refusal. */
#define FLAKY_SELECT_RUNNERS	"pytest, unittest, Jest, Vitest, Playwright, " \
	"Mocha, node:test, go test, prove, cargo test, GoogleTest, ctest, " \
	"RSpec and PHPUnit"

/* " › ": between a Jest id's file and titles, and between titles. */
#define JEST_SEP	" \xe2\x80\xba "

/* pytest's long options whose value may be the next word and is a path
 * (the value must not be taken for a test path and dropped). */
static const char *const pytest_long_valued[] = {
	"--rootdir", "--confcutdir", "--basetemp", "--junitxml",
	"--junit-xml", "--ignore", "--ignore-glob", "--deselect",
	"--log-file", "--resultlog", "--override-ini", "--config-file",
	"--pyargs", NULL
};

/* Is a is one of v? */
static int
in_list(const char *const *v, const char *a)
{
	for (size_t i = 0; v[i] != NULL; i++)
		if (strcmp(v[i], a) == 0)
			return 1;
	return 0;
}

/* Is word, a positional argument of pytest, a test path or node id? A
 * word that is not (the value of an option we do not know) is kept. */
static int
pytest_is_path(const char *dir, const char *word)
{
	char		 path[4096];
	struct stat	 st;
	size_t		 n = strlen(word);

	if (strstr(word, "::") != NULL || strchr(word, '/') != NULL ||
	    (n > 3 && strcmp(word + n - 3, ".py") == 0))
		return 1;
	if (dir != NULL && *word != '/')
		snprintf(path, sizeof path, "%s/%s", dir, word);
	else
		snprintf(path, sizeof path, "%s", word);
	return stat(path, &st) == 0;
}

/* pytest: the paths given are dropped (they would run every test below
 * them) and the node ids appended. */
static void
select_pytest(struct cmd_vec *a, char *const *argv, const char *dir,
    char *const *tests, size_t n)
{
	static const char valued[] = "kmprcoWn";
	size_t	 i = cmd_runner_args(argv);
	int	 rest = 0;

	for (size_t k = 0; k < i; k++)
		cmd_vec_add(a, argv[k]);
	for (; argv[i] != NULL; i++) {
		const char *w = argv[i], *p;

		if (!rest && strcmp(w, "--") == 0) {
			rest = 1;
			continue;
		}
		if (rest || w[0] != '-' || w[1] == '\0') {
			if (!pytest_is_path(dir, w))
				cmd_vec_add(a, w);
			continue;
		}
		cmd_vec_add(a, w);
		if (w[1] == '-') {
			if (strchr(w, '=') == NULL &&
			    in_list(pytest_long_valued, w) && argv[i + 1])
				cmd_vec_add(a, argv[++i]);
			continue;
		}
		for (p = w + 1; *p && strchr(valued, *p) == NULL; p++)
			;
		if (*p != '\0' && p[1] == '\0' && argv[i + 1] != NULL)
			cmd_vec_add(a, argv[++i]);
	}
	for (size_t k = 0; k < n; k++)
		cmd_vec_add(a, tests[k]);
}

/* The program that runs only some tests of a unittest suite (run.h):
 * unittest's own command line builds the suite (discovery or names, -k),
 * then only the tests whose id() is given run, whatever added them:
 * load_tests() and its doctests are kept by `-k`, and a doctest cannot be
 * named to `python -m unittest` at all. */
const char flaky_unittest_select_py[] =
    "import sys, unittest as u; i = sys.argv.index(\"--flaky-ids\"); "
    "ids = set(sys.argv[i + 1:])\n"
    "f = lambda s: [x for t in s for x in (f(t) if isinstance(t, "
    "u.TestSuite) else [t])]\n"
    "class P(u.TestProgram): runTests = lambda p: (setattr(p, \"test\", "
    "u.TestSuite(t for t in f(p.test) if t.id() in ids)), "
    "u.TestProgram.runTests(p))\n"
    "P(module=None, argv=[\"python -m unittest\"] + sys.argv[1:i])";

/* unittest: the interpreter and its options as given, then the program
 * above in place of `-m unittest`, unittest's arguments as given, and
 * the ids after --flaky-ids. */
static void
select_unittest(struct cmd_vec *a, char *const *argv, char *const *tests,
    size_t n)
{
	size_t	 args = cmd_runner_args(argv), m;

	/* "-m unittest" or "-munittest" ends before args */
	m = args >= 2 && strcmp(argv[args - 2], "-m") == 0 ? args - 2 :
	    args - 1;
	for (size_t i = 0; i < m; i++)
		cmd_vec_add(a, argv[i]);
	cmd_vec_add(a, "-c");
	cmd_vec_add(a, flaky_unittest_select_py);
	for (size_t i = args; argv[i] != NULL; i++)
		cmd_vec_add(a, argv[i]);
	cmd_vec_add(a, "--flaky-ids");
	for (size_t k = 0; k < n; k++)
		cmd_vec_add(a, tests[k]);
}

/* s, n bytes, with the metacharacters of JavaScript and RE2 regular
 * expressions escaped. */
static void
regex_escape(struct flaky_buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (strchr("\\^$.|?*+()[]{}", s[i]) != NULL)
			flaky_buf_addc(b, '\\');
		flaky_buf_addc(b, s[i]);
	}
}

/* Is the file (n bytes) among the first k tests' files? */
static int
jest_seen(char *const *tests, size_t k, const char *file, size_t n)
{
	for (size_t i = 0; i < k; i++) {
		const char *sep = strstr(tests[i], JEST_SEP);

		if (sep != NULL && (size_t)(sep - tests[i]) == n &&
		    strncmp(tests[i], file, n) == 0)
			return 1;
	}
	return 0;
}

/* Jest: each test's file as a path pattern (escaped, anchored at its
 * end) and -t '^(?:T1|T2)$' with the titles as Jest joins them (by a
 * space), escaped. Inserted before a "--". */
static void
select_jest(struct cmd_vec *a, char *const *argv, char *const *tests,
    size_t n)
{
	struct flaky_buf names, file;
	size_t	 at;

	flaky_buf_init(&names);
	flaky_buf_init(&file);
	for (size_t i = 0; argv[i] != NULL; i++)
		cmd_vec_add(a, argv[i]);
	for (at = cmd_runner_args(argv); at < a->n &&
	    strcmp(a->v[at], "--") != 0; at++)
		;
	flaky_buf_adds(&names, "^(?:");
	for (size_t k = 0; k < n; k++) {
		const char *t = tests[k], *sep = strstr(t, JEST_SEP), *p;

		if (sep != NULL) {
			if (!jest_seen(tests, k, t, (size_t)(sep - t))) {
				flaky_buf_reset(&file);
				regex_escape(&file, t, (size_t)(sep - t));
				flaky_buf_addc(&file, '$');
				if (file.oom)
					a->oom = 1;
				else
					cmd_vec_insert(a, at++,
					    flaky_buf_cstr(&file));
			}
			t = sep + strlen(JEST_SEP);
		}
		if (k > 0)
			flaky_buf_addc(&names, '|');
		while ((p = strstr(t, JEST_SEP)) != NULL) {
			regex_escape(&names, t, (size_t)(p - t));
			flaky_buf_addc(&names, ' ');
			t = p + strlen(JEST_SEP);
		}
		regex_escape(&names, t, strlen(t));
	}
	flaky_buf_adds(&names, ")$");
	if (names.oom)
		a->oom = 1;
	cmd_vec_insert(a, at++, "-t");
	cmd_vec_insert(a, at, names.oom ? "" : flaky_buf_cstr(&names));
	flaky_buf_free(&names);
	flaky_buf_free(&file);
}

/* The top-level test name in a go id "import/path/TestX/sub" (the first
 * element that starts like a test function); *len its length. */
static const char *
go_name(const char *id, size_t *len)
{
	static const char *const pre[] = { "Test", "Example", "Fuzz",
	    "Benchmark", NULL };
	const char *p = id, *end;

	for (;;) {
		for (size_t i = 0; pre[i] != NULL; i++)
			if (strncmp(p, pre[i], strlen(pre[i])) == 0)
				goto found;
		if ((p = strchr(p, '/')) == NULL) {
			p = id;
			goto found;
		}
		p++;
	}
found:
	end = strchr(p, '/');
	*len = end ? (size_t)(end - p) : strlen(p);
	return p;
}

/* go test: -run '^(A|B)$' with the top-level names (a subtest runs with
 * its parent), in place of a -run given, before -args. */
static void
select_go(struct cmd_vec *a, char *const *argv, char *const *tests,
    size_t n)
{
	struct flaky_buf re;
	size_t	 at;

	flaky_buf_init(&re);
	for (size_t i = 0; argv[i] != NULL; i++) {
		const char *w = argv[i];

		if (strcmp(w, "-args") == 0 || strcmp(w, "--args") == 0) {
			for (; argv[i] != NULL; i++)
				cmd_vec_add(a, argv[i]);
			break;
		}
		if (strcmp(w, "-run") == 0 || strcmp(w, "--run") == 0) {
			i += argv[i + 1] != NULL;
			continue;
		}
		if (strncmp(w, "-run=", 5) != 0 && strncmp(w, "--run=", 6))
			cmd_vec_add(a, w);
	}
	for (at = 0; at < a->n && strcmp(a->v[at], "-args") != 0 &&
	    strcmp(a->v[at], "--args") != 0; at++)
		;
	flaky_buf_adds(&re, "-run=^(");
	for (size_t k = 0; k < n; k++) {
		size_t	 len;
		const char *name = go_name(tests[k], &len);

		if (k > 0)
			flaky_buf_addc(&re, '|');
		regex_escape(&re, name, len);
	}
	flaky_buf_adds(&re, ")$");
	if (re.oom)
		a->oom = 1;
	else
		cmd_vec_insert(a, at, flaky_buf_cstr(&re));
	flaky_buf_free(&re);
}

/* prove: the command's options, then each test's file once ("t/x.t" of
 * "t/x.t > name") in place of the paths given; "::" and what follows
 * stay. prove runs files: a file's other tests run too. */
static void
select_prove(struct cmd_vec *a, char *const *argv, char *const *tests,
    size_t n)
{
	size_t	 i;

	cmd_vec_add(a, argv[0]);
	for (i = 1; argv[i] != NULL && strcmp(argv[i], "::") != 0; i++) {
		if (argv[i][0] != '-')
			continue;
		cmd_vec_add(a, argv[i]);
		if (strlen(argv[i]) == 2 && strchr("IPMje", argv[i][1]) &&
		    argv[i + 1] != NULL)
			cmd_vec_add(a, argv[++i]);
	}
	for (size_t k = 0; k < n; k++) {
		const char *sep = strstr(tests[k], " > ");
		size_t	 len = sep ? (size_t)(sep - tests[k]) : strlen(tests[k]);
		int	 seen = 0;

		for (size_t j = 0; j < k && !seen; j++)
			seen = strncmp(tests[j], tests[k], len) == 0 &&
			    (tests[j][len] == '\0' ||
			    strncmp(tests[j] + len, " > ", 3) == 0);
		if (!seen) {
			char	*f = strndup(tests[k], len);

			if (f == NULL)
				a->oom = 1;
			else
				cmd_vec_add(a, f);
			free(f);
		}
	}
	for (; argv[i] != NULL; i++)
		cmd_vec_add(a, argv[i]);
}

int
flaky_command_select(const struct flaky_command *c, const char *dir,
    char *const *tests, size_t ntests, char ***argv, char ***envp,
    char *err, size_t errlen)
{
	struct cmd_vec	 a, e;
	const char	*r = c->runner ? c->runner : "";
	size_t		 bytes = 0;
	int		 rc;

	*argv = *envp = NULL;
	memset(&a, 0, sizeof a);
	memset(&e, 0, sizeof e);
	if (strcmp(r, "pytest") && strcmp(r, "jest") && strcmp(r, "go") &&
	    strcmp(r, "unittest") && strcmp(r, "prove") && strcmp(r, "cargo")
	    && strcmp(r, "gtest") && strcmp(r, "rspec") && strcmp(r, "phpunit")
	    && strcmp(r, "vitest") && strcmp(r, "playwright") &&
	    strcmp(r, "mocha") && strcmp(r, "nodetest"))
		return flaky_error(err, errlen, ENOTSUP, "%s%s cannot be "
		    "told which tests to run (%s can)", *r ? r :
		    "the command's runner", *r ? "" : " (not recognized)",
		    FLAKY_SELECT_RUNNERS);
	if (ntests == 0)
		return flaky_error(err, errlen, EINVAL, "no tests to select");
	for (size_t i = 0; i < ntests; i++)
		bytes += strlen(tests[i]) + 8;
	if (ntests > FLAKY_SELECT_MAX_TESTS || bytes > FLAKY_SELECT_MAX_BYTES)
		return flaky_error(err, errlen, E2BIG, "%zu tests (%zu bytes) "
		    "are more than a command line selects (at most %d tests, "
		    "%d bytes)", ntests, bytes, FLAKY_SELECT_MAX_TESTS,
		    FLAKY_SELECT_MAX_BYTES);
	if (strcmp(r, "pytest") == 0)
		select_pytest(&a, c->argv, dir, tests, ntests);
	else if (strcmp(r, "unittest") == 0)
		select_unittest(&a, c->argv, tests, ntests);
	else if (strcmp(r, "jest") == 0)
		select_jest(&a, c->argv, tests, ntests);
	else if (strcmp(r, "prove") == 0)
		select_prove(&a, c->argv, tests, ntests);
	else if (cmd_js_select(c, tests, ntests, &a))
		;
	else if (strcmp(r, "go") == 0)
		select_go(&a, c->argv, tests, ntests);
	else if ((rc = cmd_native_select(c, tests, ntests, &a, err,
	    errlen)) < 0) {
		cmd_vec_free(&a);
		return rc;
	}
	for (size_t i = 0; c->envp != NULL && c->envp[i] != NULL; i++)
		cmd_vec_add(&e, c->envp[i]);
	return cmd_vec_hand(&a, &e, argv, envp, err, errlen);
}
