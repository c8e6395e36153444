/* Directory mode: the project's root and runner from its files, and the
 * command its parser needs.
 *
 * The root is the nearest directory, from the one given upwards, holding a
 * project file: a pytest configuration (pytest's own rootdir rules), a
 * package.json that uses Jest, or a go.mod. The run starts there, as the
 * project's own tooling would, with the given directory as the test path
 * when it lies below. Without a project file, Python test files in the
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
#include "json/json.h"
#include "util/util.h"

#define MAX_READ	(1 << 20)	/* a project file read at most */
#define SEARCH_DEPTH	3		/* directories below for test files */
#define SEARCH_ENTRIES	20000		/* directory entries read at most */

#define LOOKED_FOR "pytest.ini, pyproject.toml with [tool.pytest.ini_options], " \
	"tox.ini with [pytest], setup.cfg with [tool:pytest], package.json " \
	"with jest, go.mod (here and in the parent directories), conftest.py, " \
	"test_*.py or *_test.py files (here and up to 3 levels below)"

enum project {
	P_NONE,
	P_PYTHON,
	P_JEST,
	P_GO,
};

/* Where the Python test files are, from the search below a directory. */
struct pyfiles {
	char	*dir;		/* shallowest directory holding one */
	char	*file;		/* its name, for the reason */
	int	 prefix;	/* some are test_*.py */
	int	 suffix;	/* some are *_test.py */
	int	 conftest;
};

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

/* Does dir/package.json use Jest? The reason, or NULL. Malformed JSON is
 * no project: npm would refuse it too. */
static const char *
jest_project(const char *dir)
{
	static const char *const lists[] = { "dependencies",
	    "devDependencies" };
	/* package.json nests little, but its values are many. */
	const struct flaky_json_limits lim = { MAX_READ, 64, MAX_READ };
	const char	*reason = NULL;
	struct flaky_json *pkg;
	char		*text;
	int		 rc;

	if ((text = read_small(dir, "package.json")) == NULL)
		return NULL;
	rc = flaky_json_parse(text, strlen(text), &lim, &pkg, NULL, 0);
	free(text);
	if (rc < 0)
		return NULL;
	if (flaky_json_get(pkg, "jest") != NULL)
		reason = "package.json has a jest configuration";
	for (size_t i = 0; reason == NULL && i < FLAKY_ARRAY_SIZE(lists);
	    i++)
		if (flaky_json_get(flaky_json_get(pkg, lists[i]), "jest") !=
		    NULL)
			reason = i == 0 ? "package.json lists jest in "
			    "dependencies" : "package.json lists jest in "
			    "devDependencies";
	flaky_json_free(pkg);
	return reason;
}

/* The project whose file is in dir, with the reason; P_NONE if none. */
static enum project
project_in(const char *dir, const char **reason)
{
	if ((*reason = pytest_config(dir)) != NULL)
		return P_PYTHON;
	if ((*reason = jest_project(dir)) != NULL)
		return P_JEST;
	if (has_file(dir, "go.mod")) {
		*reason = "found go.mod";
		return P_GO;
	}
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

/* pytest, or unittest when pytest is not installed. */
static int
python_command(struct cmd_vec *a, const char *root, const char *abs,
    char *const *envp, const char **runner, struct flaky_buf *why,
    char *err, size_t errlen)
{
	struct pyfiles	 f;
	const char	*start;
	int		 r;

	if (in_path(envp, "pytest")) {
		*runner = "pytest";
		cmd_vec_add(a, "pytest");
		cmd_vec_add(a, "-v");
		if (strcmp(root, abs) != 0)
			cmd_vec_add(a, rel_to(root, abs));
		return 0;
	}
	*runner = "unittest";
	memset(&f, 0, sizeof f);
	if ((r = find_py_tests(abs, &f)) < 0)
		goto out;
	if (in_path(envp, "python3"))
		cmd_vec_add(a, "python3");
	else if (in_path(envp, "python"))
		cmd_vec_add(a, "python");
	else {
		r = flaky_error(err, errlen, ENOENT, "%s: a Python test suite, "
		    "but neither pytest nor python3 is in PATH", abs);
		goto out;
	}
	flaky_buf_adds(why, ", pytest is not installed");
	cmd_vec_add(a, "-m");
	cmd_vec_add(a, "unittest");
	cmd_vec_add(a, "discover");
	cmd_vec_add(a, "-v");
	/* discover imports from its start directory down */
	start = rel_to(root, f.dir != NULL ? f.dir : abs);
	if (strcmp(start, ".") != 0) {
		cmd_vec_add(a, "-s");
		cmd_vec_add(a, start);
		if (f.dir != NULL && has_file(f.dir, "__init__.py")) {
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

/* Jest's test path is a regular expression matched against absolute
 * paths: "src" would match every file of a project under ~/src. So the
 * directory's absolute path, its metacharacters escaped, and a slash. */
static int
jest_pattern(struct cmd_vec *a, const char *abs)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	for (const char *p = abs; *p; p++) {
		if (strchr("\\^$.|?*+()[]{}", *p) != NULL)
			flaky_buf_addc(&b, '\\');
		flaky_buf_addc(&b, *p);
	}
	flaky_buf_addc(&b, '/');
	if (b.oom)
		a->oom = 1;
	else
		cmd_vec_add(a, flaky_buf_cstr(&b));
	flaky_buf_free(&b);
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
		return jest_pattern(a, abs);
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

/* The root: the nearest directory from abs upwards with a project file. */
static enum project
find_root(const char *abs, char *root, size_t len, const char **reason)
{
	enum project	 p;
	char		*slash;

	snprintf(root, len, "%s", abs);
	for (;;) {
		if ((p = project_in(root, reason)) != P_NONE)
			return p;
		if (strcmp(root, "/") == 0)
			break;
		slash = strrchr(root, '/');
		if (slash == root)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	snprintf(root, len, "%s", abs);
	return P_NONE;
}

/* The project's root, runner and command for the directory path. */
int
flaky_command_detect(const char *path, char *const *envp,
    const struct flaky_command_opts *opts, struct flaky_command *ret,
    char *err, size_t errlen)
{
	struct cmd_vec	 a;
	struct flaky_buf why;
	struct pyfiles	 f;
	struct flaky_command c;
	struct stat	 st;
	char		 abs[PATH_MAX], root[PATH_MAX];
	const char	*reason = NULL, *runner = NULL;
	enum project	 p;
	int		 r = 0;

	memset(ret, 0, sizeof *ret);
	memset(&a, 0, sizeof a);
	memset(&c, 0, sizeof c);
	memset(&f, 0, sizeof f);
	flaky_buf_init(&why);
	if (realpath(path, abs) == NULL)
		return flaky_error(err, errlen, errno, "%s: %s", path,
		    strerror(errno));
	if (stat(abs, &st) == -1 || !S_ISDIR(st.st_mode))
		return flaky_error(err, errlen, ENOTDIR, "%s: not a directory",
		    path);

	if ((p = find_root(abs, root, sizeof root, &reason)) == P_NONE) {
		if ((r = find_py_tests(abs, &f)) < 0)
			goto out;
		if (f.dir == NULL) {
			r = flaky_error(err, errlen, ENOENT, "%s: no test runner "
			    "recognized; looked for " LOOKED_FOR, path);
			goto out;
		}
		p = P_PYTHON;
		if (strcmp(f.dir, abs) == 0)
			flaky_buf_printf(&why, "found %s", f.file);
		else
			flaky_buf_printf(&why, "found %s/%s", rel_to(abs,
			    f.dir), f.file);
	} else
		flaky_buf_adds(&why, reason);

	switch (p) {
	case P_PYTHON:
		r = python_command(&a, root, abs, envp, &runner, &why, err,
		    errlen);
		break;
	case P_JEST:
		runner = "jest";
		r = jest_command(&a, root, abs, err, errlen);
		break;
	case P_GO:
		runner = "go";
		go_command(&a, root, abs);
		break;
	case P_NONE:
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
	free(f.dir);
	free(f.file);
	return r;
}
