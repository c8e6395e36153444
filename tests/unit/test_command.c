/* lib/command.c and command_detect.c: one test per rule of docs/runners.md
 * ("What flakyctl adds to your command", "Directory mode"). */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/run.h"

/* What one completion gave, as strings easy to compare. */
static char	 got_argv[4096];	/* argv joined by spaces */
static char	 got_addopts[512];	/* PYTEST_ADDOPTS, or "-" */
static char	 got_note[1024];	/* the note, or "" */
static int	 got_env_same;		/* envp unchanged */
static char	 got_env_set[512];	/* env_set, or "-" */

/* Complete words (split at '|' when there is one, else at spaces) with
 * HOME and PATH and maybe one more variable in the environment. */
static int
complete_env(const char *words, const char *extra, int keep_cache)
{
	struct flaky_command_opts opts = { keep_cache };
	struct flaky_command c;
	char	*copy = strdup(words), *argv[64], *save = NULL, *w, err[256];
	char	*envp[4] = { (char *)"HOME=/home/u", (char *)"PATH=/usr/bin",
	    (char *)extra, NULL };
	const char *sep = strchr(words, '|') ? "|" : " ";
	size_t	 n = 0;
	int	 r;

	for (w = strtok_r(copy, sep, &save); w != NULL && n < 63;
	    w = strtok_r(NULL, sep, &save))
		argv[n++] = w;
	argv[n] = NULL;
	r = flaky_command_complete(argv, envp, &opts, &c, err, sizeof err);
	got_argv[0] = '\0';
	snprintf(got_addopts, sizeof got_addopts, "-");
	got_note[0] = '\0';
	got_env_same = 1;
	snprintf(got_env_set, sizeof got_env_set, "-");
	if (r == 0) {
		if (c.env_set != NULL)
			snprintf(got_env_set, sizeof got_env_set, "%s",
			    c.env_set);
		size_t	 ne = 0;

		for (size_t i = 0; c.argv[i] != NULL; i++) {
			if (i > 0)
				strcat(got_argv, " ");
			strcat(got_argv, c.argv[i]);
		}
		for (; c.envp[ne] != NULL; ne++) {
			if (strncmp(c.envp[ne], "PYTEST_ADDOPTS=", 15) == 0)
				snprintf(got_addopts, sizeof got_addopts,
				    "%s", c.envp[ne] + 15);
			if (ne >= 3 || envp[ne] == NULL ||
			    strcmp(envp[ne], c.envp[ne]) != 0)
				got_env_same = 0;
		}
		if (ne != (extra ? 3u : 2u))
			got_env_same = 0;
		if (c.note != NULL)
			snprintf(got_note, sizeof got_note, "%s", c.note);
		flaky_command_clear(&c);
	}
	free(copy);
	return r;
}

static int
complete(const char *words)
{
	return complete_env(words, NULL, 0);
}

/* The command is left exactly as it was. */
static void
unchanged(const char *words)
{
	char	 want[1024];
	size_t	 i;

	ck_assert_int_eq(complete(words), 0);
	snprintf(want, sizeof want, "%s", words);
	for (i = 0; want[i]; i++)
		if (want[i] == '|')
			want[i] = ' ';
	ck_assert_str_eq(got_argv, want);
	ck_assert_int_eq(got_env_same, 1);
	ck_assert_str_eq(got_env_set, "-");
	ck_assert_str_eq(got_note, "");
}

START_TEST(pytest_plain)
{
	static const char *const forms[] = { "pytest tests/",
	    "/usr/bin/pytest", "py.test", "pytest-3", "python3 -m pytest",
	    "python -mpytest", "python3.11 -X dev -m pytest -x",
	    "/usr/bin/python3 -u -m pytest tests" };

	for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
		ck_assert_int_eq(complete(forms[i]), 0);
		/* the command line itself is not touched */
		ck_assert_str_eq(got_argv, forms[i]);
		ck_assert_str_eq(got_addopts, "-v");
		ck_assert_str_eq(got_env_set, "PYTEST_ADDOPTS=-v");
		ck_assert_ptr_nonnull(strstr(got_note,
		    "PYTEST_ADDOPTS=-v"));
	}
}
END_TEST

START_TEST(pytest_complete_left_alone)
{
	unchanged("pytest -v");
	unchanged("pytest -vv tests");
	unchanged("pytest --verbose");
	unchanged("pytest -xv");
	unchanged("pytest -rA");
	unchanged("pytest -r A");
	unchanged("pytest -rap");
	unchanged("pytest --verbosity=2");
	unchanged("pytest --verbosity 1");
	unchanged("python3 -m pytest -v -p no:randomly");
	/* -v and -q cancel out in pytest, -q -v -v does not */
	unchanged("pytest -q -v -v");
}
END_TEST

START_TEST(pytest_quiet_and_partial)
{
	ck_assert_int_eq(complete("pytest -q"), 0);
	ck_assert_str_eq(got_addopts, "-v -v");
	ck_assert_int_eq(complete("pytest -qq tests"), 0);
	ck_assert_str_eq(got_addopts, "-v -v -v");
	ck_assert_int_eq(complete("pytest -q -v"), 0);
	ck_assert_str_eq(got_addopts, "-v");
	/* -ra names every outcome except the passes */
	ck_assert_int_eq(complete("pytest -ra"), 0);
	ck_assert_str_eq(got_addopts, "-v");
	/* an option's value is not a flag: -p qq, -k v */
	ck_assert_int_eq(complete("pytest -p qq -k v"), 0);
	ck_assert_str_eq(got_addopts, "-v");
	/* after "--" come no options */
	ck_assert_int_eq(complete("pytest -- -v"), 0);
	ck_assert_str_eq(got_addopts, "-v");
	/* --verbosity=0 after ours would win: the summary instead */
	ck_assert_int_eq(complete("pytest --verbosity=0"), 0);
	ck_assert_str_eq(got_addopts, "-rap");
}
END_TEST

START_TEST(pytest_addopts_appended)
{
	ck_assert_int_eq(complete_env("pytest", "PYTEST_ADDOPTS=--tb=short",
	    0), 0);
	ck_assert_str_eq(got_addopts, "--tb=short -v");
	ck_assert_str_eq(got_env_set, "PYTEST_ADDOPTS=--tb=short -v");
	ck_assert_ptr_nonnull(strstr(got_note, "added -v to PYTEST_ADDOPTS"));
	ck_assert_int_eq(complete_env("pytest", "PYTEST_ADDOPTS=", 0), 0);
	ck_assert_str_eq(got_addopts, "-v");
	/* already verbose through the environment */
	ck_assert_int_eq(complete_env("pytest", "PYTEST_ADDOPTS=-v", 0), 0);
	ck_assert_int_eq(got_env_same, 1);
	ck_assert_str_eq(got_note, "");
	ck_assert_int_eq(complete_env("pytest -q", "PYTEST_ADDOPTS=-p x -v",
	    0), 0);
	ck_assert_str_eq(got_addopts, "-p x -v -v");
}
END_TEST

START_TEST(shell_commands)
{
	ck_assert_int_eq(complete("/bin/sh|-c|pytest tests/"), 0);
	ck_assert_str_eq(got_argv, "/bin/sh -c pytest tests/");
	ck_assert_str_eq(got_addopts, "-v");
	ck_assert_int_eq(complete("bash|-ec|cd x && python3 -m pytest -q"),
	    0);
	ck_assert_str_eq(got_addopts, "-v -v");
	ck_assert_int_eq(complete("bash|-o|pipefail|-c|pytest | tee log"), 0);
	ck_assert_str_eq(got_addopts, "-v");
	/* the -v of another command in the script does not count */
	ck_assert_int_eq(complete("sh|-c|pytest tests && ls -v"), 0);
	ck_assert_str_eq(got_addopts, "-v");
	unchanged("sh|-c|cd x && pytest -v tests");
	unchanged("sh|-c|pytest -rA; echo done");
	/* other runners behind a shell, or npm, are left alone */
	unchanged("sh|-c|npx jest");
	unchanged("sh|-c|python3 -m unittest");
	unchanged("sh|-c|go test ./...");
	unchanged("npm test");
	unchanged("make check");
	unchanged("sh ./run-tests.sh");
}
END_TEST

START_TEST(jest_verbose)
{
	ck_assert_int_eq(complete("jest"), 0);
	ck_assert_str_eq(got_argv, "jest --verbose");
	ck_assert_ptr_nonnull(strstr(got_note, "--verbose"));
	ck_assert_int_eq(got_env_same, 1);
	ck_assert_int_eq(complete("npx jest tests"), 0);
	ck_assert_str_eq(got_argv, "npx jest tests --verbose");
	ck_assert_int_eq(complete("npx --yes jest"), 0);
	ck_assert_str_eq(got_argv, "npx --yes jest --verbose");
	ck_assert_int_eq(complete("node_modules/.bin/jest -i"), 0);
	ck_assert_str_eq(got_argv, "node_modules/.bin/jest -i --verbose");
	ck_assert_int_eq(complete("node node_modules/jest/bin/jest.js"), 0);
	ck_assert_str_eq(got_argv,
	    "node node_modules/jest/bin/jest.js --verbose");
	ck_assert_int_eq(complete("node --expose-gc -r ./setup.js "
	    "node_modules/.bin/jest"), 0);
	ck_assert_str_eq(got_argv, "node --expose-gc -r ./setup.js "
	    "node_modules/.bin/jest --verbose");
	ck_assert_int_eq(complete("jest -- a"), 0);
	ck_assert_str_eq(got_argv, "jest --verbose -- a");
	unchanged("jest --verbose");
	unchanged("npx jest --verbose=true");
	/* node running something else */
	unchanged("node server.js");
	unchanged("npx eslint .");
}
END_TEST

START_TEST(jest_cache)
{
	ck_assert_int_eq(complete_env("jest --verbose", NULL, 1), 0);
	ck_assert_str_eq(got_argv, "jest --verbose "
	    "--cacheDirectory=/home/u/.cache/flaky/jest");
	ck_assert_ptr_nonnull(strstr(got_note, "--cacheDirectory"));
	ck_assert_int_eq(complete_env("npx jest", "XDG_CACHE_HOME=/c", 1), 0);
	ck_assert_str_eq(got_argv, "npx jest --verbose "
	    "--cacheDirectory=/c/flaky/jest");
	/* the user's own cache choice stays */
	ck_assert_int_eq(complete_env("jest --verbose --no-cache", NULL, 1), 0);
	ck_assert_str_eq(got_argv, "jest --verbose --no-cache");
	ck_assert_int_eq(complete_env("jest --verbose --cache=false", NULL, 1),
	    0);
	ck_assert_str_eq(got_argv, "jest --verbose --cache=false");
	ck_assert_int_eq(complete_env("jest --verbose --cacheDirectory /x",
	    NULL, 1), 0);
	ck_assert_str_eq(got_argv, "jest --verbose --cacheDirectory /x");
	ck_assert_int_eq(complete_env("jest --verbose --cacheDirectory=/x",
	    NULL, 1), 0);
	ck_assert_str_eq(got_argv, "jest --verbose --cacheDirectory=/x");
	/* turned off */
	ck_assert_int_eq(complete_env("jest --verbose", NULL, 0), 0);
	ck_assert_str_eq(got_argv, "jest --verbose");
	/* not for other runners */
	ck_assert_int_eq(complete_env("pytest -v", NULL, 1), 0);
	ck_assert_str_eq(got_argv, "pytest -v");
}
END_TEST

START_TEST(unittest_verbose)
{
	ck_assert_int_eq(complete("python3 -m unittest"), 0);
	ck_assert_str_eq(got_argv, "python3 -m unittest -v");
	ck_assert_ptr_nonnull(strstr(got_note, "-v"));
	ck_assert_int_eq(complete("/usr/bin/python3 -m unittest discover -s "
	    "tests"), 0);
	ck_assert_str_eq(got_argv, "/usr/bin/python3 -m unittest discover -s "
	    "tests -v");
	ck_assert_int_eq(complete("python3 -m unittest test_x.T"), 0);
	ck_assert_str_eq(got_argv, "python3 -m unittest test_x.T -v");
	/* -k's value is not -v */
	ck_assert_int_eq(complete("python3 -m unittest -kv"), 0);
	ck_assert_str_eq(got_argv, "python3 -m unittest -kv -v");
	unchanged("python3 -m unittest -v");
	unchanged("python3 -m unittest discover -bv");
	unchanged("python -m unittest --verbose test_x");
	/* a script, or -c, is not unittest */
	unchanged("python3 run_tests.py");
	unchanged("python3|-c|import unittest");
}
END_TEST

/* prove: -v right after it, unless a cluster has one (-lv); -I's value
 * is no cluster; what follows "::" is the tests'. */
START_TEST(prove_verbose)
{
	ck_assert_int_eq(complete("prove -l t"), 0);
	ck_assert_str_eq(got_argv, "prove -v -l t");
	ck_assert_ptr_nonnull(strstr(got_note, "prove names no test"));
	ck_assert_int_eq(complete("/usr/bin/prove -Iv t :: -v"), 0);
	ck_assert_str_eq(got_argv, "/usr/bin/prove -v -Iv t :: -v");
	unchanged("prove -lv t");
	unchanged("prove -rlv t");
	unchanged("prove --verbose t");
}
END_TEST

START_TEST(go_count)
{
	ck_assert_int_eq(complete("go test ./..."), 0);
	ck_assert_str_eq(got_argv, "go test -count=1 -v ./...");
	ck_assert_ptr_nonnull(strstr(got_note, "-count=1"));
	ck_assert_int_eq(complete("go test -v ./..."), 0);
	ck_assert_str_eq(got_argv, "go test -count=1 -v ./...");
	ck_assert_int_eq(complete("go test -count=5 ./..."), 0);
	ck_assert_str_eq(got_argv, "go test -v -count=5 ./...");
	ck_assert_int_eq(complete("go test -json ./..."), 0);
	ck_assert_str_eq(got_argv, "go test -count=1 -json ./...");
	/* -args: what follows is the test binary's */
	ck_assert_int_eq(complete("go test . -args -count=3"), 0);
	ck_assert_str_eq(got_argv, "go test -count=1 -v . -args -count=3");
	unchanged("go test -count=1 -v ./...");
	unchanged("go test -v -count 2 ./...");
	unchanged("go build ./...");
	unchanged("go vet");
}
END_TEST

START_TEST(complete_errors)
{
	char		*argv[] = { NULL }, *empty[] = { (char *)"", NULL };
	struct flaky_command c;
	char		 err[128];

	ck_assert_int_eq(flaky_command_complete(argv, NULL, NULL, &c, err,
	    sizeof err), -EINVAL);
	ck_assert_int_eq(flaky_command_complete(empty, NULL, NULL, &c, err,
	    sizeof err), -EINVAL);
	flaky_command_clear(&c);
	flaky_command_clear(NULL);
}
END_TEST

/* Directory mode: a scratch tree and a PATH of our own. */
static char	 tree[64];
static char	 bin_pytest[128], bin_python[128];
static char	 path_pytest[160], path_python[160];

/* Write a file under tree (its directories made), mode 0755 if exec. */
static void
put(const char *rel, const char *text, int exec)
{
	char	 p[512], *s;
	FILE	*f;

	snprintf(p, sizeof p, "%s/%s", tree, rel);
	for (s = p + strlen(tree) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
	if (exec)
		chmod(p, 0755);
}

static void
tree_setup(void)
{
	snprintf(tree, sizeof tree, "/tmp/flaky-command-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tree));
	/* Stand-ins for the runners' counts (pytest --collect-only -qq and
	 * unittest's discovery), read from files of the project. */
	put("bin1/pytest", "#!/bin/sh\n[ -f .pytest-count ] && while read "
	    "-r l; do echo \"$l\"; done <.pytest-count\nexit 0\n", 1);
	put("bin1/python3", "#!/bin/sh\n[ -f .unittest-count ] && read -r n "
	    "<.unittest-count && echo \"flaky-count $n\"\nexit 0\n", 1);
	put("bin2/python3", "#!/bin/sh\n", 1);
	put("bin2/prove", "#!/bin/sh\n", 1);
	snprintf(bin_pytest, sizeof bin_pytest, "%s/bin1", tree);
	snprintf(bin_python, sizeof bin_python, "%s/bin2", tree);
	snprintf(path_pytest, sizeof path_pytest, "PATH=%s", bin_pytest);
	snprintf(path_python, sizeof path_python, "PATH=%s", bin_python);
}

static void
tree_teardown(void)
{
	char	 cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tree);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tree);
}

static struct flaky_command dc;
static char	 dc_argv[2048], dc_err[1024];

/* Detect tree/rel with pytest installed or not; 0 or the error. */
static int
detect(const char *rel, int with_pytest, int keep_cache)
{
	struct flaky_command_opts opts = { keep_cache };
	char	 p[512];
	char	*envp[] = { with_pytest ? path_pytest : path_python,
	    (char *)"HOME=/home/u", NULL };
	int	 r;

	flaky_command_clear(&dc);
	snprintf(p, sizeof p, "%s/%s", tree, rel);
	dc_argv[0] = dc_err[0] = '\0';
	r = flaky_command_detect(p, envp, &opts, &dc, dc_err, sizeof dc_err);
	if (r == 0)
		for (size_t i = 0; dc.argv[i] != NULL; i++) {
			if (i > 0)
				strcat(dc_argv, " ");
			strcat(dc_argv, dc.argv[i]);
		}
	return r;
}

/* dc.dir is tree/rel. */
static void
dir_is(const char *rel)
{
	char	 p[512];

	snprintf(p, sizeof p, "%s/%s", tree, rel);
	ck_assert_str_eq(dc.dir, p);
	ck_assert_str_eq(dc.root, p);
}

START_TEST(detect_pytest_configs)
{
	put("p/pytest.ini", "", 0);
	put("p/tests/unit/test_a.py", "", 0);
	ck_assert_int_eq(detect("p/tests/unit", 1, 0), 0);
	ck_assert_str_eq(dc_argv, "pytest -v tests/unit");
	dir_is("p");
	ck_assert_str_eq(dc.runner, "pytest");
	ck_assert_str_eq(dc.note, "found pytest.ini");
	ck_assert_int_eq(detect("p", 1, 0), 0);
	ck_assert_str_eq(dc_argv, "pytest -v");

	put("q/pyproject.toml", "[project]\nname='q'\n", 0);
	put("q/sub/pyproject.toml", "[tool.black]\n", 0);
	put("q/sub/test_b.py", "", 0);
	/* a pyproject.toml without pytest's section: a Python project whose
	 * runner is chosen by the counts */
	ck_assert_int_eq(detect("q/sub", 1, 0), 0);
	dir_is("q/sub");
	ck_assert_str_eq(dc.note, "found pyproject.toml; pytest collects 0 "
	    "tests, unittest could not discover them");
	put("q/pyproject.toml", "[tool.pytest.ini_options]\naddopts=''\n",
	    0);
	ck_assert_int_eq(detect("q/sub", 1, 0), 0);
	dir_is("q");
	ck_assert_str_eq(dc_argv, "pytest -v sub");
	ck_assert_ptr_nonnull(strstr(dc.note, "pyproject.toml"));

	put("r/tox.ini", "[tox]\n[pytest]\n", 0);
	put("r/t/x", "", 0);
	ck_assert_int_eq(detect("r/t", 1, 0), 0);
	dir_is("r");
	ck_assert_str_eq(dc.note, "found [pytest] in tox.ini");
	put("s/setup.cfg", "[metadata]\n  [tool:pytest]  \n", 0);
	ck_assert_int_eq(detect("s", 1, 0), 0);
	ck_assert_str_eq(dc.note, "found [tool:pytest] in setup.cfg");
	/* setup.cfg without the section */
	put("u/setup.cfg", "[metadata]\n", 0);
	ck_assert_int_eq(detect("u", 1, 0), -ENOENT);
}
END_TEST

START_TEST(detect_python_files)
{
	put("p/tests/conftest.py", "", 0);
	ck_assert_int_eq(detect("p", 1, 0), 0);
	ck_assert_str_eq(dc_argv, "pytest -v");
	dir_is("p");
	ck_assert_str_eq(dc.note, "found tests/conftest.py; pytest collects "
	    "0 tests, unittest could not discover them");
	put("v/pkg/x_test.py", "", 0);
	ck_assert_int_eq(detect("v", 1, 0), 0);
	ck_assert_str_eq(dc.runner, "pytest");
	/* too deep to be looked for */
	put("w/a/b/c/d/test_deep.py", "", 0);
	ck_assert_int_eq(detect("w", 1, 0), -ENOENT);
	/* hidden directories and node_modules are not searched */
	put("x/.venv/test_a.py", "", 0);
	put("x/node_modules/test_b.py", "", 0);
	ck_assert_int_eq(detect("x", 1, 0), -ENOENT);
}
END_TEST

/* Without a pytest configuration: what the project runs (its tox.ini,
 * Makefile, CI files), else the larger count (more-itertools: unittest
 * finds 901, its load_tests adds doctests that pytest does not run). */
START_TEST(detect_python_choice)
{
	put("a/tox.ini", "[tox]\n[testenv]\ndeps = pytest\ncommands = "
	    "{envpython} -m unittest -v {posargs}\n", 0);
	put("a/tests/test_a.py", "", 0);
	ck_assert_int_eq(detect("a", 1, 0), 0);
	ck_assert_str_eq(dc.runner, "unittest");
	ck_assert_str_eq(dc_argv, "python3 -m unittest discover -v -s tests");
	ck_assert_str_eq(dc.note, "found tox.ini; tox.ini runs unittest");
	/* a Makefile that runs pytest; a package list naming it is no
	 * declaration */
	put("b/setup.py", "", 0);
	put("b/pyproject.toml", "[project.optional-dependencies]\ntest = "
	    "[\"pytest\"]\n[project]\ndependencies = [\n  \"pytest\",\n]\n",
	    0);
	put("b/Makefile", "test:\n\tpython3 -m pytest tests\n", 0);
	put("b/tests/test_a.py", "", 0);
	ck_assert_int_eq(detect("b/tests", 1, 0), 0);
	dir_is("b");
	ck_assert_str_eq(dc_argv, "pytest -v tests");
	ck_assert_str_eq(dc.note, "found pyproject.toml; Makefile runs pytest");
	/* a CI workflow */
	put("c/setup.cfg", "[metadata]\n", 0);
	put("c/.github/workflows/test.yml", "jobs:\n  t:\n    steps:\n"
	    "      - run: pip install pytest\n      - run: python -m "
	    "unittest discover -s tests\n", 0);
	put("c/tests/test_a.py", "", 0);
	ck_assert_int_eq(detect("c", 1, 0), 0);
	ck_assert_str_eq(dc.runner, "unittest");
	ck_assert_ptr_nonnull(strstr(dc.note,
	    ".github/workflows/test.yml runs unittest"));
	/* nothing declared: the counts */
	put("d/pyproject.toml", "[project]\nname = \"d\"\n", 0);
	put("d/tests/test_more.py", "", 0);
	put("d/.pytest-count", "tests/test_more.py: 591\n"
	    "tests/test_recipes.py: 145\n", 0);
	put("d/.unittest-count", "901\n", 0);
	ck_assert_int_eq(detect("d", 1, 0), 0);
	ck_assert_str_eq(dc.runner, "unittest");
	ck_assert_str_eq(dc.note, "found pyproject.toml; unittest finds 901 "
	    "tests, pytest collects 736 (no runner declared)");
	put("d/.unittest-count", "736\n", 0);
	ck_assert_int_eq(detect("d", 1, 0), 0);
	ck_assert_str_eq(dc.runner, "pytest");
	ck_assert_str_eq(dc.note, "found pyproject.toml; pytest collects 736 "
	    "tests, unittest finds 736 (no runner declared)");
}
END_TEST

/* Perl: t/ *.t beside a distribution's file, or alone: prove -lrv. */
START_TEST(detect_perl)
{
	put("p/Makefile.PL", "", 0);
	put("p/t/basic.t", "", 0);
	put("p/t/sub/deep.t", "", 0);
	ck_assert_int_eq(detect("p", 0, 0), 0);
	ck_assert_str_eq(dc.runner, "prove");
	ck_assert_str_eq(dc_argv, "prove -lrv t");
	ck_assert_str_eq(dc.note, "found Makefile.PL and t/*.t");
	ck_assert_int_eq(detect("p/t/sub", 0, 0), 0);
	dir_is("p");
	ck_assert_str_eq(dc_argv, "prove -lrv t/sub");
	put("q/t/a.t", "", 0);
	ck_assert_int_eq(detect("q", 0, 0), 0);
	ck_assert_str_eq(dc_argv, "prove -lrv t");
	ck_assert_str_eq(dc.note, "found t/*.t");
	/* no prove in PATH */
	ck_assert_int_eq(detect("q", 1, 0), -ENOENT);
	ck_assert_ptr_nonnull(strstr(dc_err, "prove"));
}
END_TEST

/* One project, one target: the root and runner whichever form ran it. */
START_TEST(project_of_dir)
{
	char	*envp[] = { path_pytest, NULL }, p[512], want[512], *root;
	const char *runner;

	put("j/package.json", "{\"devDependencies\": {\"jest\": \"*\"}}", 0);
	put("j/src/deep/x.test.js", "", 0);
	snprintf(p, sizeof p, "%s/j/src/deep", tree);
	ck_assert_int_eq(flaky_command_project(p, envp, &root, &runner), 0);
	snprintf(want, sizeof want, "%s/j", tree);
	ck_assert_str_eq(root, want);
	ck_assert_str_eq(runner, "jest");
	free(root);
	/* no project file: the top of the git checkout */
	put("g/.git/HEAD", "ref: refs/heads/main\n", 0);
	put("g/scripts/run.sh", "", 0);
	snprintf(p, sizeof p, "%s/g/scripts", tree);
	ck_assert_int_eq(flaky_command_project(p, envp, &root, &runner), 0);
	snprintf(want, sizeof want, "%s/g", tree);
	ck_assert_str_eq(root, want);
	ck_assert_ptr_null(runner);
	free(root);
}
END_TEST

START_TEST(detect_unittest)
{
	put("p/test_a.py", "", 0);
	ck_assert_int_eq(detect("p", 0, 0), 0);
	ck_assert_str_eq(dc.runner, "unittest");
	ck_assert_str_eq(dc_argv, "python3 -m unittest discover -v");
	ck_assert_str_eq(dc.note, "found test_a.py, pytest is not installed");
	put("q/tests/test_a.py", "", 0);
	ck_assert_int_eq(detect("q", 0, 0), 0);
	ck_assert_str_eq(dc_argv, "python3 -m unittest discover -v -s tests");
	dir_is("q");
	put("r/tests/__init__.py", "", 0);
	put("r/tests/test_a.py", "", 0);
	ck_assert_int_eq(detect("r", 0, 0), 0);
	ck_assert_str_eq(dc_argv,
	    "python3 -m unittest discover -v -s tests -t .");
	put("s/a_test.py", "", 0);
	ck_assert_int_eq(detect("s", 0, 0), 0);
	ck_assert_str_eq(dc_argv,
	    "python3 -m unittest discover -v -p *_test.py");
	/* a pytest configuration but no pytest */
	put("t/pytest.ini", "", 0);
	put("t/tests/test_a.py", "", 0);
	ck_assert_int_eq(detect("t/tests", 0, 0), 0);
	dir_is("t");
	ck_assert_str_eq(dc_argv, "python3 -m unittest discover -v -s tests");
}
END_TEST

START_TEST(detect_jest)
{
	char	 want[512];

	put("p/package.json", "{\"name\": \"p\", \"scripts\": {\"test\": "
	    "\"jest\"}, \"devDependencies\": {\"eslint\": \"9\", \"jest\": "
	    "\"29.7.0\"}}", 0);
	put("p/node_modules/.bin/jest", "#!/bin/sh\n", 1);
	put("p/src/__tests__/a.test.js", "", 0);
	ck_assert_int_eq(detect("p/src", 1, 0), 0);
	/* Jest matches its pattern against absolute paths */
	snprintf(want, sizeof want, "node_modules/.bin/jest --verbose "
	    "%s/p/src/", tree);
	ck_assert_str_eq(dc_argv, want);
	dir_is("p");
	put("p/a.b+c/x.test.js", "", 0);
	ck_assert_int_eq(detect("p/a.b+c", 1, 0), 0);
	snprintf(want, sizeof want, "node_modules/.bin/jest --verbose "
	    "%s/p/a\\.b\\+c/", tree);
	ck_assert_str_eq(dc_argv, want);
	ck_assert_str_eq(dc.runner, "jest");
	ck_assert_str_eq(dc.note, "package.json lists jest in "
	    "devDependencies");
	ck_assert_int_eq(detect("p", 1, 1), 0);
	ck_assert_str_eq(dc_argv, "node_modules/.bin/jest --verbose "
	    "--cacheDirectory=/home/u/.cache/flaky/jest");
	ck_assert_ptr_nonnull(strstr(dc.note, "--cacheDirectory"));

	/* a "jest" key is a configuration */
	put("q/package.json", "{\"jest\": {\"testEnvironment\": \"node\"}}",
	    0);
	put("q/node_modules/.bin/jest", "#!/bin/sh\n", 1);
	ck_assert_int_eq(detect("q", 1, 0), 0);
	ck_assert_str_eq(dc.note, "package.json has a jest configuration");

	/* jest only in a script, or a string: not a Jest project */
	put("r/package.json", "{\"scripts\": {\"test\": \"jest\"}, "
	    "\"description\": \"\\\"jest\\\"\", \"dependencies\": {}}", 0);
	ck_assert_int_eq(detect("r", 1, 0), -ENOENT);

	/* listed but not installed */
	put("s/package.json", "{\"dependencies\": {\"jest\": \"*\"}}", 0);
	ck_assert_int_eq(detect("s", 1, 0), -ENOENT);
	ck_assert_ptr_nonnull(strstr(dc_err, "npm ci"));
	/* installed in a parent's node_modules (a workspace) */
	put("t/node_modules/.bin/jest", "#!/bin/sh\n", 1);
	put("t/pkg/package.json", "{\"devDependencies\": {\"jest\": \"*\"}}",
	    0);
	ck_assert_int_eq(detect("t/pkg", 1, 0), 0);
	ck_assert_ptr_nonnull(strstr(dc_argv, "/t/node_modules/.bin/jest "
	    "--verbose"));
	/* malformed JSON is no project */
	put("u/package.json", "{\"devDependencies\": {\"jest\" \"*\"}}", 0);
	ck_assert_int_eq(detect("u", 1, 0), -ENOENT);
	/* an escaped key is the key it spells */
	put("v/package.json", "{\"devDependencies\": {\"je\\u0073t\": "
	    "\"*\"}}", 0);
	put("v/node_modules/.bin/jest", "#!/bin/sh\n", 1);
	ck_assert_int_eq(detect("v", 1, 0), 0);
	ck_assert_str_eq(dc.runner, "jest");
}
END_TEST

START_TEST(detect_go)
{
	put("p/go.mod", "module example.com/p\n", 0);
	put("p/internal/x/x_test.go", "", 0);
	ck_assert_int_eq(detect("p", 1, 0), 0);
	ck_assert_str_eq(dc_argv, "go test -v -count=1 ./...");
	ck_assert_str_eq(dc.runner, "go");
	ck_assert_str_eq(dc.note, "found go.mod");
	ck_assert_int_eq(detect("p/internal", 1, 0), 0);
	ck_assert_str_eq(dc_argv, "go test -v -count=1 ./internal/...");
	dir_is("p");
	/* the nearest project file wins */
	put("p/tools/pytest.ini", "", 0);
	ck_assert_int_eq(detect("p/tools", 1, 0), 0);
	ck_assert_str_eq(dc.runner, "pytest");
	dir_is("p/tools");
}
END_TEST

START_TEST(detect_errors)
{
	put("p/README", "", 0);
	ck_assert_int_eq(detect("p", 1, 0), -ENOENT);
	ck_assert_ptr_nonnull(strstr(dc_err, "no test runner recognized"));
	ck_assert_ptr_nonnull(strstr(dc_err, "pytest.ini"));
	ck_assert_ptr_nonnull(strstr(dc_err, "package.json"));
	ck_assert_ptr_nonnull(strstr(dc_err, "go.mod"));
	ck_assert_ptr_nonnull(strstr(dc_err, "test_*.py"));
	ck_assert_int_eq(detect("p/README", 1, 0), -ENOTDIR);
	ck_assert_int_eq(detect("nonexistent", 1, 0), -ENOENT);
	/* no python at all */
	put("q/test_a.py", "", 0);
	path_python[5] = '\0';
	ck_assert_int_eq(detect("q", 0, 0), -ENOENT);
	ck_assert_ptr_nonnull(strstr(dc_err, "python3"));
	flaky_command_clear(&dc);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("command");
	TCase	*tc = tcase_create("complete");
	TCase	*td = tcase_create("detect");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, pytest_plain);
	tcase_add_test(tc, pytest_complete_left_alone);
	tcase_add_test(tc, pytest_quiet_and_partial);
	tcase_add_test(tc, pytest_addopts_appended);
	tcase_add_test(tc, shell_commands);
	tcase_add_test(tc, jest_verbose);
	tcase_add_test(tc, jest_cache);
	tcase_add_test(tc, unittest_verbose);
	tcase_add_test(tc, go_count);
	tcase_add_test(tc, prove_verbose);
	tcase_add_test(tc, complete_errors);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(td, tree_setup, tree_teardown);
	tcase_add_test(td, detect_pytest_configs);
	tcase_add_test(td, detect_python_files);
	tcase_add_test(td, detect_unittest);
	tcase_add_test(td, detect_python_choice);
	tcase_add_test(td, detect_perl);
	tcase_add_test(td, project_of_dir);
	tcase_add_test(td, detect_jest);
	tcase_add_test(td, detect_go);
	tcase_add_test(td, detect_errors);
	tcase_set_timeout(td, 30);
	suite_add_tcase(s, td);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
