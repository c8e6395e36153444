/* The version of a runner that does not print one (lib/command.h): read
 * from the files of its installation, never by running anything, so that
 * flakyd can ask on a reload without waiting on a child. */
#include "buildconf.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "util/util.h"

/* The first line of a small file, trimmed; NULL when unreadable. */
static char *
first_line(const char *path)
{
	char	 buf[256];
	FILE	*f;
	size_t	 n;

	if ((f = fopen(path, "re")) == NULL)
		return NULL;
	if (fgets(buf, sizeof buf, f) == NULL) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	n = strcspn(buf, "\r\n");
	while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		n--;
	buf[n] = '\0';
	return n > 0 ? strdup(buf) : NULL;
}

/* "version": "29.7.0" from a package.json (the first such key: in npm's
 * package.json of an installed module it is the package's own). */
static char *
package_version(const char *path)
{
	char	 buf[16384], *p, *q;
	size_t	 n;
	FILE	*f;

	if ((f = fopen(path, "re")) == NULL)
		return NULL;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	if ((p = strstr(buf, "\"version\"")) == NULL)
		return NULL;
	p += 9;
	p += strspn(p, " \t\r\n:");
	if (*p++ != '"' || (q = strchr(p, '"')) == NULL || q - p > 64)
		return NULL;
	return flaky_strndup(p, (size_t)(q - p));
}

/* A runner from npm (Jest, Vitest, Mocha, Playwright):
 * node_modules/MODULE/package.json in dir or the nearest parent that has
 * one, as node's module resolution finds it; "NAME 1.2.3". */
static char *
npm_version(const char *dir, const char *module, const char *name)
{
	char	 path[PATH_MAX + 64], cur[PATH_MAX], *v, *slash;

	if (realpath(dir, cur) == NULL)
		return NULL;
	for (;;) {
		snprintf(path, sizeof path,
		    "%s/node_modules/%s/package.json", cur, module);
		if ((v = package_version(path)) != NULL) {
			char	*r;

			if (asprintf(&r, "%s %s", name, v) < 0)
				r = NULL;
			free(v);
			return r;
		}
		if ((slash = strrchr(cur, '/')) == NULL || slash == cur)
			return NULL;
		*slash = '\0';
	}
}

/* go: GOROOT/VERSION beside the go binary that PATH finds
 * (GOROOT/bin/go); its first line is "go1.19.8". */
static char *
go_version(const char *dir, const char *path_env)
{
	char	 err[256], real[PATH_MAX], file[PATH_MAX + 16], *go, *p;

	if (flaky_resolve_command("go", dir, path_env, &go, err,
	    sizeof err) < 0)
		return NULL;
	p = realpath(go, real);
	free(go);
	if (p == NULL)
		return NULL;
	/* .../bin/go -> ... */
	for (int i = 0; i < 2; i++) {
		if ((p = strrchr(real, '/')) == NULL)
			return NULL;
		*p = '\0';
	}
	snprintf(file, sizeof file, "%s/VERSION", real);
	return first_line(file);
}

/* unittest: the interpreter's name once links are followed
 * (/usr/bin/python3 -> python3.11): "Python 3.11". */
static char *
python_version(const char *python, const char *dir, const char *path_env)
{
	char	 err[256], real[PATH_MAX], *exe, *base, *r;

	if (flaky_resolve_command(python, dir, path_env, &exe, err,
	    sizeof err) < 0)
		return NULL;
	base = realpath(exe, real);
	free(exe);
	if (base == NULL)
		return NULL;
	base = strrchr(real, '/') + 1;
	if (strncmp(base, "python", 6) != 0 || base[6] < '0' || base[6] > '9')
		return NULL;
	if (asprintf(&r, "Python %s", base + 6) < 0)
		return NULL;
	return r;
}

char *
flaky_runner_version(const struct flaky_command *c, const char *dir)
{
	const char	*path_env = NULL;

	if (c->runner == NULL || c->argv == NULL || c->argv[0] == NULL)
		return NULL;
	for (char **e = c->envp; e != NULL && *e != NULL; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			path_env = *e + 5;
	if (c->envp == NULL)
		path_env = getenv("PATH");
	if (strcmp(c->runner, "jest") == 0 || strcmp(c->runner, "vitest") ==
	    0 || strcmp(c->runner, "mocha") == 0)
		return npm_version(dir, c->runner, c->runner);
	if (strcmp(c->runner, "playwright") == 0)
		return npm_version(dir, "@playwright/test", "playwright");
	if (strcmp(c->runner, "go") == 0)
		return go_version(dir, path_env);
	if (strcmp(c->runner, "unittest") == 0)
		return python_version(c->argv[0], dir, path_env);
	return NULL;
}
