/* Directory mode: the project's root and runner from its files, and the
 * command its parser needs.
 *
 * The root is the nearest directory, from the one given upwards, holding a
 * project file: a pytest configuration (pytest's own rootdir rules), a
 * package.json that uses a JavaScript runner (detect_js.c), or a go.mod.
 * The run starts there, as the project's own tooling would, with the given
 * directory as the test path when it lies below. Without a project file, Python test files in the
 * directory make it the root of a pytest (or unittest) suite. */
#include "buildconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/run.h"
#include "command_int.h"
#include "util/util.h"

#define MAX_READ	(1 << 20)	/* a project file read at most */
#define SEARCH_DEPTH	3		/* directories below for test files */
#define SEARCH_ENTRIES	20000		/* directory entries read at most */

#define LOOKED_FOR "pytest.ini, pyproject.toml with [tool.pytest.ini_options], " \
	"tox.ini with [pytest], setup.cfg with [tool:pytest], package.json " \
	"with jest, vitest, mocha, @playwright/test or a node --test script, " \
	"go.mod, Makefile.PL, Build.PL, dist.ini or cpanfile with " \
	"t/*.t, pyproject.toml, setup.py, setup.cfg or tox.ini with Python " \
	"tests (here and in the parent directories), conftest.py, test_*.py " \
	"or *_test.py files (here and up to 3 levels below), t/*.t files"

enum project {
	P_NONE,
	P_PYTHON,	/* with a pytest configuration */
	P_PYPROJECT,	/* a Python project without one */
	P_JEST,
	P_JS,		/* Vitest, Playwright, Mocha, node:test (detect_js.c) */
	P_GO,
	P_PERL,
	P_NATIVE,	/* cargo, ctest, RSpec, PHPUnit: detect_native.c */
};

/* Where the Python test files are, from the search below a directory. */
struct pyfiles {
	char	*dir;		/* shallowest directory holding one */
	char	*file;		/* its name, for the reason */
	int	 prefix;	/* some are test_*.py */
	int	 suffix;	/* some are *_test.py */
	int	 conftest;
};

static int	 find_py_tests(const char *, struct pyfiles *);

/* The contents of dir/name (NUL-terminated, at most MAX_READ bytes) or
 * NULL when it cannot be read. */
static char *
read_small(const char *dir, const char *name)
{
	char	 path[PATH_MAX], *buf;
	ssize_t	 n;
	size_t	 len = 0;
	int	 fd;

	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >=
	    sizeof path)
		return NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	if ((buf = malloc(MAX_READ + 1)) == NULL) {
		close(fd);
		return NULL;
	}
	while (len < MAX_READ &&
	    (n = read(fd, buf + len, MAX_READ - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* Does dir/name exist as a regular file? */
static int
has_file(const char *dir, const char *name)
{
	char	 path[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >=
	    sizeof path)
		return 0;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Does text hold a line that is exactly header (blanks around allowed)? */
static int
has_section(const char *text, const char *header)
{
	size_t	 n = strlen(header);

	for (const char *l = text; l != NULL && *l; ) {
		const char *e = strchr(l, '\n');
		size_t	 len = e ? (size_t)(e - l) : strlen(l);

		while (len > 0 && (*l == ' ' || *l == '\t'))
			l++, len--;
		while (len > 0 && strchr(" \t\r", l[len - 1]) != NULL)
			len--;
		if (len == n && memcmp(l, header, n) == 0)
			return 1;
		l = e ? e + 1 : NULL;
	}
	return 0;
}

/* A pytest configuration in dir (pytest's rootdir files, in its order):
 * the reason, or NULL. */
static const char *
pytest_config(const char *dir)
{
	static const struct {
		const char *file, *section, *reason;
	} files[] = {
		{ "pytest.ini", NULL, "found pytest.ini" },
		{ ".pytest.ini", NULL, "found .pytest.ini" },
		{ "pyproject.toml", "[tool.pytest.ini_options]",
		  "found [tool.pytest.ini_options] in pyproject.toml" },
		{ "tox.ini", "[pytest]", "found [pytest] in tox.ini" },
		{ "setup.cfg", "[tool:pytest]", "found [tool:pytest] in "
		  "setup.cfg" },
	};
	char	*text;
	int	 hit;

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(files); i++) {
		if (files[i].section == NULL) {
			if (has_file(dir, files[i].file))
				return files[i].reason;
			continue;
		}
		if ((text = read_small(dir, files[i].file)) == NULL)
			continue;
		hit = has_section(text, files[i].section);
		free(text);
		if (hit)
			return files[i].reason;
	}
	return NULL;
}

/* Does dir hold Perl tests, t/ *.t as prove runs them by default? */
static int
perl_tests(const char *dir)
{
	char	 t[PATH_MAX];
	DIR	*d;
	struct dirent *de;
	int	 found = 0;

	if ((size_t)snprintf(t, sizeof t, "%s/t", dir) >= sizeof t ||
	    (d = opendir(t)) == NULL)
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		size_t	 n = strlen(de->d_name);

		found = n > 2 && strcmp(de->d_name + n - 2, ".t") == 0;
	}
	closedir(d);
	return found;
}

/* A Perl distribution's file with t/ *.t beside it: the reason, or NULL. */
static const char *
perl_project(const char *dir)
{
	static const struct {
		const char *file, *reason;
	} files[] = {
		{ "Makefile.PL", "found Makefile.PL and t/*.t" },
		{ "Build.PL", "found Build.PL and t/*.t" },
		{ "dist.ini", "found dist.ini and t/*.t" },
		{ "cpanfile", "found cpanfile and t/*.t" },
	};

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(files); i++)
		if (has_file(dir, files[i].file))
			return perl_tests(dir) ? files[i].reason : NULL;
	return NULL;
}

/* A Python project's file (no pytest configuration) with Python tests in
 * or below dir: the reason, or NULL. */
static const char *
python_project(const char *dir)
{
	static const struct {
		const char *file, *reason;
	} files[] = {
		{ "pyproject.toml", "found pyproject.toml" },
		{ "setup.py", "found setup.py" },
		{ "setup.cfg", "found setup.cfg" },
		{ "tox.ini", "found tox.ini" },
	};
	struct pyfiles	 f;
	const char	*reason = NULL;

	for (size_t i = 0; reason == NULL && i < FLAKY_ARRAY_SIZE(files); i++)
		if (has_file(dir, files[i].file))
			reason = files[i].reason;
	if (reason == NULL)
		return NULL;
	memset(&f, 0, sizeof f);
	if (find_py_tests(dir, &f) < 0 || f.dir == NULL)
		reason = NULL;
	free(f.dir);
	free(f.file);
	return reason;
}

/* The project whose file is in dir, with the reason; P_NONE if none. */
static enum project
project_in(const char *dir, const char **reason)
{
	const char	*js;

	if ((*reason = pytest_config(dir)) != NULL)
		return P_PYTHON;
	if ((*reason = cmd_js_project(dir, &js)) != NULL)
		return strcmp(js, "jest") == 0 ? P_JEST : P_JS;
	if (has_file(dir, "go.mod")) {
		*reason = "found go.mod";
		return P_GO;
	}
	if ((*reason = perl_project(dir)) != NULL)
		return P_PERL;
	if (cmd_native_project(dir, reason) != NULL)
		return P_NATIVE;
	if ((*reason = python_project(dir)) != NULL)
		return P_PYPROJECT;
	return P_NONE;
}

/* Is name a Python test file? Notes which kind in f. */
static int
py_test_file(const char *name, struct pyfiles *f)
{
	size_t	 n = strlen(name);

	if (n < 4 || strcmp(name + n - 3, ".py") != 0)
		return 0;
	if (strcmp(name, "conftest.py") == 0)
		return f->conftest = 1;
	if (strncmp(name, "test_", 5) == 0)
		return f->prefix = 1;
	if (n > 8 && strcmp(name + n - 8, "_test.py") == 0)
		return f->suffix = 1;
	return 0;
}

/* Is the entry de of dir a directory (not a link to one)? */
static int
is_subdir(const char *dir, const struct dirent *de)
{
	char	 p[PATH_MAX];
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_DIR;
	/* some file systems do not say */
	return (size_t)snprintf(p, sizeof p, "%s/%s", dir, de->d_name) <
	    sizeof p && lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Search top and up to SEARCH_DEPTH levels below, level by level, for
 * Python test files; f->dir is the shallowest holding one. Returns 0 or
 * -ENOMEM. */
static int
find_py_tests(const char *top, struct pyfiles *f)
{
	struct cmd_vec	 level, next;
	size_t		 entries = 0;
	int		 r = 0;

	memset(&level, 0, sizeof level);
	cmd_vec_add(&level, top);
	for (int depth = 0; depth <= SEARCH_DEPTH && level.n > 0 &&
	    !level.oom; depth++) {
		memset(&next, 0, sizeof next);
		for (size_t i = 0; i < level.n; i++) {
			DIR		*d = opendir(level.v[i]);
			struct dirent	*de;

			while (d != NULL && (de = readdir(d)) != NULL &&
			    entries++ < SEARCH_ENTRIES) {
				char	*sub;

				if (de->d_name[0] == '.' ||
				    strcmp(de->d_name, "node_modules") == 0 ||
				    strcmp(de->d_name, "__pycache__") == 0)
					continue;
				if (is_subdir(level.v[i], de)) {
					if (asprintf(&sub, "%s/%s", level.v[i],
					    de->d_name) == -1) {
						next.oom = 1;
						continue;
					}
					cmd_vec_add(&next, sub);
					free(sub);
				} else if (py_test_file(de->d_name, f) &&
				    f->dir == NULL) {
					f->dir = strdup(level.v[i]);
					f->file = strdup(de->d_name);
					if (f->dir == NULL || f->file == NULL)
						r = -ENOMEM;
				}
			}
			if (d != NULL)
				closedir(d);
		}
		cmd_vec_free(&level);
		level = next;
		/* the files of the shallowest level are all seen: enough */
		if (f->dir != NULL)
			break;
	}
	if (level.oom || next.oom)
		r = -ENOMEM;
	cmd_vec_free(&level);
	return r;
}

/* Is name an executable file in envp's PATH? */
static int
in_path(char *const *envp, const char *name)
{
	const char *path = cmd_env_get(envp, "PATH");
	char	 buf[PATH_MAX];

	while (path != NULL && *path) {
		const char *e = strchr(path, ':');
		size_t	 n = e ? (size_t)(e - path) : strlen(path);

		if (n > 0 && (size_t)snprintf(buf, sizeof buf, "%.*s/%s",
		    (int)n, path, name) < sizeof buf &&
		    access(buf, X_OK) == 0)
			return 1;
		path = e ? e + 1 : NULL;
	}
	return 0;
}

/* sub relative to root ("." when the same); sub lies at or below root. */
static const char *
rel_to(const char *root, const char *sub)
{
	size_t	 n = strlen(root);

	if (strcmp(root, sub) == 0)
		return ".";
	if (strcmp(root, "/") == 0)
		return sub + 1;
	return sub + n + 1;
}

/* The interpreter unittest runs in: python3, else python; NULL. */
static const char *
python_word(char *const *envp)
{
	if (in_path(envp, "python3"))
		return "python3";
	if (in_path(envp, "python"))
		return "python";
	return NULL;
}

/* pytest, or unittest (cmd_python_choose), or unittest when pytest is not
 * installed. decided: the project configures pytest. */
static int
python_command(struct cmd_vec *a, const char *root, const char *abs,
    char *const *envp, int decided, const char **runner,
    struct flaky_buf *why, char *err, size_t errlen)
{
	struct cmd_python py;
	struct pyfiles	 f;
	const char	*start, *python = python_word(envp);
	int		 r, top;

	memset(&f, 0, sizeof f);
	if ((r = find_py_tests(abs, &f)) < 0)
		goto out;
	/* discover imports from its start directory down */
	start = rel_to(root, f.dir != NULL ? f.dir : abs);
	top = strcmp(start, ".") != 0 && f.dir != NULL &&
	    has_file(f.dir, "__init__.py");
	*runner = "unittest";
	if (in_path(envp, "pytest")) {
		*runner = "pytest";
		if (!decided && python != NULL) {
			py = (struct cmd_python){ root, rel_to(root, abs),
			    envp, python, start, top ? "." : NULL,
			    f.suffix && !f.prefix ? "*_test.py" : "test*.py" };
			flaky_buf_adds(why, "; ");
			if (cmd_python_choose(&py, why) == CMD_UNITTEST)
				*runner = "unittest";
		}
	}
	if (strcmp(*runner, "pytest") == 0) {
		cmd_vec_add(a, "pytest");
		cmd_vec_add(a, "-v");
		if (strcmp(root, abs) != 0)
			cmd_vec_add(a, rel_to(root, abs));
		goto out;
	}
	if (python == NULL) {
		r = flaky_error(err, errlen, ENOENT, "%s: a Python test suite, "
		    "but neither pytest nor python3 is in PATH", abs);
		goto out;
	}
	if (!in_path(envp, "pytest"))
		flaky_buf_adds(why, ", pytest is not installed");
	cmd_vec_add(a, python);
	cmd_vec_add(a, "-m");
	cmd_vec_add(a, "unittest");
	cmd_vec_add(a, "discover");
	cmd_vec_add(a, "-v");
	if (strcmp(start, ".") != 0) {
		cmd_vec_add(a, "-s");
		cmd_vec_add(a, start);
		if (top) {
			cmd_vec_add(a, "-t");
			cmd_vec_add(a, ".");
		}
	}
	if (f.suffix && !f.prefix) {
		cmd_vec_add(a, "-p");
		cmd_vec_add(a, "*_test.py");
	}
out:
	free(f.dir);
	free(f.file);
	return r;
}

/* prove over t/ (or the directory below the root): -l puts lib/ on @INC,
 * -r goes into subdirectories, -v names every test point. */
static int
perl_command(struct cmd_vec *a, const char *root, const char *abs,
    char *const *envp, char *err, size_t errlen)
{
	if (!in_path(envp, "prove"))
		return flaky_error(err, errlen, ENOENT, "%s: Perl tests (t/*.t), "
		    "but prove is not in PATH (Debian: apt install perl)",
		    abs);
	cmd_vec_add(a, "prove");
	cmd_vec_add(a, "-lrv");
	cmd_vec_add(a, strcmp(root, abs) == 0 ? "t" : rel_to(root, abs));
	return 0;
}

/* The project's own Jest: node_modules/.bin/jest in the root or above. */
static int
jest_command(struct cmd_vec *a, const char *root, const char *abs,
    char *err, size_t errlen)
{
	char	 dir[PATH_MAX], bin[PATH_MAX + 32], *slash;

	snprintf(dir, sizeof dir, "%s", root);
	for (;;) {
		snprintf(bin, sizeof bin, "%s/node_modules/.bin/jest", dir);
		if (access(bin, X_OK) == 0)
			break;
		if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
			return flaky_error(err, errlen, ENOENT, "%s/package.json "
			    "uses jest, but jest is not installed (no "
			    "node_modules/.bin/jest): run `npm ci` in %s",
			    root, root);
		*slash = '\0';
	}
	cmd_vec_add(a, strcmp(dir, root) == 0 ? "node_modules/.bin/jest" :
	    bin);
	cmd_vec_add(a, "--verbose");
	if (strcmp(root, abs) != 0)
		cmd_js_path_pattern(a, abs);
	return 0;
}

/* go test of every package from the given directory down. */
static void
go_command(struct cmd_vec *a, const char *root, const char *abs)
{
	char	*pkgs = NULL;

	cmd_vec_add(a, "go");
	cmd_vec_add(a, "test");
	cmd_vec_add(a, "-v");
	cmd_vec_add(a, "-count=1");
	if (strcmp(root, abs) == 0)
		cmd_vec_add(a, "./...");
	else if (asprintf(&pkgs, "./%s/...", rel_to(root, abs)) == -1)
		a->oom = 1;
	else
		cmd_vec_add(a, pkgs);
	free(pkgs);
}

/* Up one directory; 0 at "/". */
static int
parent(char *dir)
{
	char	*slash;

	if (strcmp(dir, "/") == 0 || (slash = strrchr(dir, '/')) == NULL)
		return 0;
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	return 1;
}

/* The root: the nearest directory from abs upwards with a project file.
 * A Python project's file without pytest's section (pyproject.toml,
 * setup.py) gives way to a pytest configuration further up, which is
 * where pytest itself would take its rootdir from. */
static enum project
find_root(const char *abs, char *root, size_t len, const char **reason)
{
	enum project	 p;
	char		 up[PATH_MAX];
	const char	*r;

	snprintf(root, len, "%s", abs);
	do {
		if ((p = project_in(root, reason)) == P_NONE)
			continue;
		if (p != P_PYPROJECT)
			return p;
		snprintf(up, sizeof up, "%s", root);
		while (parent(up))
			if ((r = pytest_config(up)) != NULL) {
				snprintf(root, len, "%s", up);
				*reason = r;
				return P_PYTHON;
			}
		return p;
	} while (parent(root));
	snprintf(root, len, "%s", abs);
	return P_NONE;
}

/* The project of the directory abs: its root, kind and why (the reason);
 * P_NONE when no runner is recognized. 0 or -ENOMEM. */
static int
locate(const char *abs, char *root, size_t len, enum project *ret,
    struct flaky_buf *why)
{
	struct pyfiles	 f;
	const char	*reason = NULL;
	int		 r;

	if ((*ret = find_root(abs, root, len, &reason)) != P_NONE) {
		flaky_buf_adds(why, reason);
		return 0;
	}
	memset(&f, 0, sizeof f);
	if ((r = find_py_tests(abs, &f)) < 0)
		return r;
	if (f.dir != NULL) {
		*ret = P_PYPROJECT;
		if (strcmp(f.dir, abs) == 0)
			flaky_buf_printf(why, "found %s", f.file);
		else
			flaky_buf_printf(why, "found %s/%s", rel_to(abs,
			    f.dir), f.file);
	} else if (perl_tests(abs)) {
		*ret = P_PERL;
		flaky_buf_adds(why, "found t/*.t");
	}
	free(f.dir);
	free(f.file);
	return 0;
}

/* The project's root, runner and command for the directory path. */
int
flaky_command_detect(const char *path, char *const *envp,
    const struct flaky_command_opts *opts, struct flaky_command *ret,
    char *err, size_t errlen)
{
	struct cmd_vec	 a;
	struct flaky_buf why;
	struct flaky_command c;
	struct stat	 st;
	char		 abs[PATH_MAX], root[PATH_MAX];
	const char	*runner = NULL, *reason;
	enum project	 p;
	int		 r = 0;

	memset(ret, 0, sizeof *ret);
	memset(&a, 0, sizeof a);
	memset(&c, 0, sizeof c);
	flaky_buf_init(&why);
	if (realpath(path, abs) == NULL)
		return flaky_error(err, errlen, errno, "%s: %s", path,
		    strerror(errno));
	if (stat(abs, &st) == -1 || !S_ISDIR(st.st_mode))
		return flaky_error(err, errlen, ENOTDIR, "%s: not a directory",
		    path);

	if ((r = locate(abs, root, sizeof root, &p, &why)) < 0) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	switch (p) {
	case P_PYTHON:
	case P_PYPROJECT:
		r = python_command(&a, root, abs, envp, p == P_PYTHON,
		    &runner, &why, err, errlen);
		break;
	case P_JEST:
		runner = "jest";
		r = jest_command(&a, root, abs, err, errlen);
		break;
	case P_JS:
		r = cmd_js_command(&a, root, abs, &runner, err, errlen);
		break;
	case P_GO:
		runner = "go";
		go_command(&a, root, abs);
		break;
	case P_PERL:
		runner = "prove";
		r = perl_command(&a, root, abs, envp, err, errlen);
		break;
	case P_NATIVE:
		runner = cmd_native_project(root, &reason);
		r = cmd_native_command(runner, &a, root, abs, envp, err, errlen);
		break;
	case P_NONE:
		r = flaky_error(err, errlen, ENOENT, "%s: no test runner "
		    "recognized; looked for " LOOKED_FOR ", "
		    CMD_NATIVE_LOOKED_FOR, path);
		break;
	}
	if (r < 0)
		goto out;
	if (a.oom || why.oom) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	/* What completion adds to a command built complete: Jest's cache. */
	if ((r = flaky_command_complete(a.v, envp, opts, &c, err, errlen)) < 0)
		goto out;
	if (c.note != NULL)
		flaky_buf_printf(&why, "; %s", c.note);
	free(c.runner);
	free(c.note);
	c.runner = strdup(runner);
	c.note = flaky_buf_steal(&why);
	c.dir = strdup(root);
	c.root = strdup(root);
	if (c.runner == NULL || c.note == NULL || c.dir == NULL ||
	    c.root == NULL) {
		flaky_command_clear(&c);
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	*ret = c;
out:
	cmd_vec_free(&a);
	flaky_buf_free(&why);
	return r;
}

/* The nearest directory from abs upwards with a .git (a checkout's top),
 * into root; 0 when there is none. */
static int
git_top(const char *abs, char *root, size_t len)
{
	char		 p[PATH_MAX];
	struct stat	 st;

	snprintf(root, len, "%s", abs);
	do {
		if ((size_t)snprintf(p, sizeof p, "%s/.git", root) < sizeof p &&
		    stat(p, &st) == 0)
			return 1;
	} while (parent(root));
	return 0;
}

/* The project a directory belongs to (run.h), for default target names. */
int
flaky_command_project(const char *dir, char *const *envp, char **ret_root,
    const char **ret_runner)
{
	struct flaky_buf why;
	char		 abs[PATH_MAX], root[PATH_MAX];
	enum project	 p = P_NONE;
	const char	*reason;
	int		 r;

	*ret_root = NULL;
	*ret_runner = NULL;
	if (realpath(dir, abs) == NULL)
		snprintf(abs, sizeof abs, "%s", dir);
	flaky_buf_init(&why);
	r = locate(abs, root, sizeof root, &p, &why);
	flaky_buf_free(&why);
	if (r < 0)
		return r;
	if (p == P_NONE && !git_top(abs, root, sizeof root))
		snprintf(root, sizeof root, "%s", abs);
	switch (p) {
	case P_PYTHON:
	case P_PYPROJECT:
		*ret_runner = in_path(envp, "pytest") ? "pytest" : "unittest";
		break;
	case P_JEST:
		*ret_runner = "jest";
		break;
	case P_JS:
		(void)cmd_js_project(root, ret_runner);
		break;
	case P_GO:
		*ret_runner = "go";
		break;
	case P_PERL:
		*ret_runner = "prove";
		break;
	case P_NATIVE:
		*ret_runner = cmd_native_project(root, &reason);
		break;
	case P_NONE:
		break;
	}
	if ((*ret_root = strdup(root)) == NULL)
		return -ENOMEM;
	return 0;
}
