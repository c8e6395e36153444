/* Directory mode for Python: pytest or unittest.
 *
 * Both can run most suites, but not the same tests: pytest ignores
 * unittest's load_tests protocol (a project that adds its doctests there
 * loses them: more-itertools, 901 tests under unittest, 736 under pytest),
 * and unittest does not see pytest's plain test functions. So the choice
 * follows, in this order:
 *   1. a pytest configuration (the caller found it): pytest;
 *   2. what the project itself runs: the first of its files that names
 *      one runner (tox.ini, setup.cfg, pyproject.toml, noxfile.py, a
 *      Makefile, a CI file);
 *   3. else the count each runner gives, asked of both (pytest
 *      --collect-only, unittest's discovery without running): the larger
 *      wins, pytest on a tie;
 * and the reason says which evidence chose. */
#include "buildconf.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "command_int.h"
#include "spawn_int.h"
#include "util/util.h"

#define DECL_MAX	(256 * 1024)	/* a project file read at most */
#define COUNT_MS	60000		/* each runner's count at most */
#define COUNT_OUT	(1024 * 1024)	/* pytest -qq's lines kept */

enum { R_NONE = 0, R_PYTEST = 1, R_UNITTEST = 2 };

/* Which runner one line of a project file runs: R_PYTEST, R_UNITTEST,
 * both or none. Lines that list packages (deps =, pip install,
 * requirements) name pytest without running it. */
static int
line_runner(const char *l, size_t n)
{
	static const char *const deps[] = { "deps", "require", "install",
	    "extras", "==", ">=", "~=", "packages", "dependencies" };
	char	 buf[512];
	int	 r = 0;

	while (n > 0 && (*l == ' ' || *l == '\t'))
		l++, n--;
	if (n == 0 || *l == '#' || n >= sizeof buf)
		return 0;
	memcpy(buf, l, n);
	buf[n] = '\0';
	if (strstr(buf, "-m unittest") != NULL ||
	    strstr(buf, "unittest discover") != NULL ||
	    strstr(buf, "nose2") != NULL)
		r |= R_UNITTEST;
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(deps); i++)
		if (strstr(buf, deps[i]) != NULL)
			return r;
	for (const char *p = buf; (p = strstr(p, "py")) != NULL; p++) {
		/* pytest or py.test as a word */
		size_t	 k = strncmp(p, "pytest", 6) == 0 ? 6 :
		    strncmp(p, "py.test", 7) == 0 ? 7 : 0;

		if (k > 0 && (p == buf || strchr(" \t'\"=:;&|(`/-", p[-1])) &&
		    strchr(" \t'\"\n;&|)`", p[k]) != NULL) {
			r |= R_PYTEST;
			break;
		}
	}
	return r;
}

/* Does the line (n bytes) hold word? */
static int
has(const char *l, size_t n, const char *word)
{
	size_t	 w = strlen(word);

	for (size_t i = 0; i + w <= n; i++)
		if (memcmp(l + i, word, w) == 0)
			return 1;
	return 0;
}

/* The runner the text of one project file runs, when it names one. The
 * lists of packages are skipped: an INI or TOML section about them
 * ([project.optional-dependencies], [options.extras_require]) and a
 * multi-line list that a line about them opens ("requires = ["). */
static int
text_runner(const char *text)
{
	int	 r = 0, in_deps = 0, in_list = 0;

	for (const char *l = text; l != NULL && *l; ) {
		const char *e = strchr(l, '\n');
		size_t	 n = e ? (size_t)(e - l) : strlen(l);
		int	 deps = has(l, n, "depend") || has(l, n, "require") ||
			    has(l, n, "extras") || has(l, n, "deps");

		while (n > 0 && (l[n - 1] == '\r' || l[n - 1] == ' '))
			n--;
		if (n > 0 && l[0] == '[')
			in_deps = deps;
		else if (in_list)
			in_list = !has(l, n, "]");
		else if (deps && n > 0 && l[n - 1] == '[')
			in_list = 1;
		else if (!in_deps)
			r |= line_runner(l, n);
		l = e ? e + 1 : NULL;
	}
	return r == R_PYTEST || r == R_UNITTEST ? r : R_NONE;
}

/* Does root/rel name one runner? Its name into why when it does. */
static int
file_runner(const char *root, const char *rel, struct flaky_buf *why)
{
	char	 path[4096], err[256], *text = NULL;
	size_t	 len;
	int	 r;

	if ((size_t)snprintf(path, sizeof path, "%s/%s", root, rel) >=
	    sizeof path)
		return R_NONE;
	if (flaky_read_file(path, DECL_MAX, &text, &len, err, sizeof err) < 0)
		return R_NONE;
	r = text_runner(text);
	free(text);
	if (r != R_NONE)
		flaky_buf_printf(why, "%s runs %s", rel, r == R_PYTEST ?
		    "pytest" : "unittest");
	return r;
}

/* What the project runs: the first of its files naming one runner. */
static int
declared(const char *root, struct flaky_buf *why)
{
	static const char *const files[] = { "tox.ini", "setup.cfg",
	    "pyproject.toml", "noxfile.py", "Makefile", "GNUmakefile",
	    "makefile", ".gitlab-ci.yml", ".travis.yml",
	    ".circleci/config.yml", "azure-pipelines.yml" };
	char	 dir[4096], rel[600];
	struct dirent **names = NULL;
	int	 r = R_NONE, n;

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(files); i++)
		if ((r = file_runner(root, files[i], why)) != R_NONE)
			return r;
	/* GitHub's workflows, in name order (scandir sorts) */
	if ((size_t)snprintf(dir, sizeof dir, "%s/.github/workflows", root) >=
	    sizeof dir || (n = scandir(dir, &names, NULL, alphasort)) < 0)
		return R_NONE;
	for (int i = 0; i < n; i++) {
		const char *nm = names[i]->d_name;
		size_t	 l = strlen(nm);

		if (r == R_NONE && l < 256 && ((l > 4 &&
		    strcmp(nm + l - 4, ".yml") == 0) || (l > 5 &&
		    strcmp(nm + l - 5, ".yaml") == 0))) {
			snprintf(rel, sizeof rel, ".github/workflows/%s", nm);
			r = file_runner(root, rel, why);
		}
		free(names[i]);
	}
	free(names);
	return r;
}

/* pytest's count: the sum of `pytest --collect-only -qq`'s "file: N"
 * lines; -1 when it could not tell. Its cache goes to a directory of our
 * own, removed after: counting writes nothing into the project. */
static long
count_pytest(const char *root, const char *path, char *const *envp)
{
	const char	*argv[] = { "pytest", "--collect-only", "-qq", "-o",
	    NULL, path, NULL };
	struct flaky_probe pr = { argv, envp, root, COUNT_MS, 0 };
	const char	*tmp = getenv("TMPDIR");
	char		*out, dir[PATH_MAX], opt[PATH_MAX + 16];
	size_t		 len;
	long		 total = -1;
	int		 code;

	snprintf(dir, sizeof dir, "%s/flaky-collect-XXXXXX",
	    tmp != NULL && *tmp == '/' ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(opt, sizeof opt, "cache_dir=%s", dir);
	argv[4] = opt;
	if ((out = malloc(COUNT_OUT)) == NULL) {
		remove_tree(dir);
		return -1;
	}
	/* exit 0, or 1 when some tests failed to collect (then fewer) */
	if (flaky_probe_run(&pr, out, COUNT_OUT, &len, &code) == 0 &&
	    (code == 0 || code == 1 || code == 5)) {
		total = 0;
		for (char *l = out; l != NULL && *l; ) {
			char	*e = strchr(l, '\n'), *c;
			long long v;

			if (e != NULL)
				*e = '\0';
			if ((c = strrchr(l, ':')) != NULL && c[1] == ' ' &&
			    flaky_parse_int(c + 2, 0, 100000000, &v) == 0)
				total += (long)v;
			l = e ? e + 1 : NULL;
		}
	}
	free(out);
	remove_tree(dir);
	return total;
}

/* unittest's count: its discovery as the command will run it, without
 * running a test; -1 when it could not tell. */
static long
count_unittest(const char *root, const char *python, const char *start,
    const char *top, const char *pattern, char *const *envp)
{
	static const char script[] =
	    "import sys, unittest\n"
	    "s = unittest.defaultTestLoader.discover(sys.argv[1], "
	    "sys.argv[2], sys.argv[3] or None)\n"
	    "print('flaky-count', s.countTestCases())\n";
	const char	*argv[] = { python, "-c", script, start, pattern,
	    top != NULL ? top : "", NULL };
	struct flaky_probe pr = { argv, envp, root, COUNT_MS, 0 };
	char		 out[4096], *p;
	size_t		 len;
	long long	 v;
	int		 code;

	if (flaky_probe_run(&pr, out, sizeof out, &len, &code) < 0 ||
	    code != 0 || (p = strstr(out, "flaky-count ")) == NULL)
		return -1;
	p += 12;
	p[strcspn(p, "\r\n")] = '\0';
	if (flaky_parse_int(p, 0, 100000000, &v) < 0)
		return -1;
	return (long)v;
}

/* The choice for a Python project without a pytest configuration
 * (command_int.h). */
int
cmd_python_choose(const struct cmd_python *py, struct flaky_buf *why)
{
	struct cmd_vec	 e;
	long		 np, nu;
	int		 r;

	if ((r = declared(py->root, why)) != R_NONE)
		return r == R_PYTEST ? CMD_PYTEST : CMD_UNITTEST;
	/* no __pycache__ left in the project by the counting */
	memset(&e, 0, sizeof e);
	cmd_vec_add(&e, "PYTHONDONTWRITEBYTECODE=1");
	for (size_t i = 0; py->envp != NULL && py->envp[i] != NULL; i++)
		if (strncmp(py->envp[i], "PYTHONDONTWRITEBYTECODE=", 24) != 0)
			cmd_vec_add(&e, py->envp[i]);
	np = e.oom ? -1 : count_pytest(py->root, py->path, e.v);
	nu = e.oom ? -1 : count_unittest(py->root, py->python, py->start,
	    py->top, py->pattern, e.v);
	cmd_vec_free(&e);
	if (np < 0 && nu < 0) {
		flaky_buf_adds(why, "neither runner could count the tests");
		return CMD_PYTEST;
	}
	if (nu > np) {
		if (np < 0)
			flaky_buf_printf(why, "unittest finds %ld tests, pytest "
			    "could not collect them", nu);
		else
			flaky_buf_printf(why, "unittest finds %ld tests, pytest "
			    "collects %ld (no runner declared)", nu, np);
		return CMD_UNITTEST;
	}
	if (nu < 0)
		flaky_buf_printf(why, "pytest collects %ld tests, unittest "
		    "could not discover them", np);
	else
		flaky_buf_printf(why, "pytest collects %ld tests, unittest "
		    "finds %ld (no runner declared)", np, nu);
	return CMD_PYTEST;
}
