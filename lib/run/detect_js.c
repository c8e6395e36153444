/* Directory mode for the JavaScript runners: which runner a package.json
 * uses, and the command of those besides Jest.
 *
 * The runner is the one package.json's test script runs, among those its
 * dependencies list (Jest, Vitest, Mocha, @playwright/test) and node:test
 * (which needs none: `node --test` in the script); without a script that
 * names one, the first listed of Jest (or a "jest" configuration), Vitest,
 * Mocha and Playwright (an end-to-end suite beside a unit runner is the
 * second choice). Jest's command is command_detect.c's. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "command_int.h"
#include "json/json.h"

#define PKG_MAX		(1 << 20)
#define JS_JEST		100		/* Jest's: command_detect.c */

/* What package.json says, read once. */
struct js_pkg {
	int		 runner;	/* CMD_JS_*, JS_JEST or 0 */
	int		 how;		/* H_*: what chose it */
	char		*script;	/* scripts.test, or NULL */
};
#define H_DEPS		0		/* "dependencies" */
#define H_DEVDEPS	1		/* "devDependencies" */
#define H_CONFIG	2		/* Jest's "jest" key */
#define H_SCRIPT	3		/* scripts.test */

/* The runners' dependency names, in the order of preference, and the
 * reasons given for each way it was found (H_*). */
static const struct {
	const char	*dep;
	int		 runner;
	const char	*why[4];
} deps[] = {
	{ "jest", JS_JEST, { "package.json lists jest in dependencies",
	    "package.json lists jest in devDependencies",
	    "package.json has a jest configuration", NULL } },
	{ "vitest", CMD_JS_VITEST, { "package.json lists vitest in "
	    "dependencies", "package.json lists vitest in devDependencies",
	    NULL, "package.json's test script runs vitest" } },
	{ "mocha", CMD_JS_MOCHA, { "package.json lists mocha in dependencies",
	    "package.json lists mocha in devDependencies", NULL,
	    "package.json's test script runs mocha" } },
	{ "@playwright/test", CMD_JS_PLAYWRIGHT, { "package.json lists "
	    "@playwright/test in dependencies", "package.json lists "
	    "@playwright/test in devDependencies", NULL, "package.json's "
	    "test script runs playwright test" } },
	{ NULL, CMD_JS_NODETEST, { NULL, NULL, NULL,
	    "package.json's test script runs node --test" } },
};

/* Is the word at w (n bytes) in s a whole word? */
static int
whole(const char *s, const char *w, size_t n)
{
	return (w == s || strchr(" \t;&|(", w[-1]) != NULL) &&
	    (w[n] == '\0' || strchr(" \t;&|)", w[n]) != NULL);
}

/* The runner the test script runs (the first it names), or 0. */
static int
script_runner(const char *script)
{
	static const struct {
		const char	*word;
		int		 runner;
	} words[] = {
		{ "jest", JS_JEST }, { "vitest", CMD_JS_VITEST },
		{ "mocha", CMD_JS_MOCHA }, { "_mocha", CMD_JS_MOCHA },
		{ "playwright test", CMD_JS_PLAYWRIGHT },
		{ "--test", CMD_JS_NODETEST },
	};
	const char	*best = NULL;
	int		 runner = 0;

	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(words); k++) {
		size_t	 n = strlen(words[k].word);

		for (const char *p = script; (p = strstr(p, words[k].word)) !=
		    NULL; p += n) {
			if (!whole(script, p, n))
				continue;
			/* --test belongs to node */
			if (words[k].runner == CMD_JS_NODETEST &&
			    strstr(script, "node ") == NULL)
				break;
			if (best == NULL || p < best) {
				best = p;
				runner = words[k].runner;
			}
			break;
		}
	}
	return runner;
}

/* Read dir/package.json into p; -1 when there is none or it is not JSON
 * (npm would refuse it too). */
static int
read_pkg(const char *dir, struct js_pkg *p)
{
	/* package.json nests little, but its values are many */
	const struct flaky_json_limits lim = { PKG_MAX, 64, PKG_MAX };
	struct flaky_json *pkg;
	char		 err[256], *path = NULL, *text = NULL;
	const char	*script;
	size_t		 len;
	int		 how[FLAKY_ARRAY_SIZE(deps)], s;

	memset(p, 0, sizeof *p);
	if (asprintf(&path, "%s/package.json", dir) == -1)
		return -1;
	s = flaky_read_file(path, PKG_MAX, &text, &len, err, sizeof err);
	free(path);
	if (s < 0)
		return -1;
	s = flaky_json_parse(text, len, &lim, &pkg, NULL, 0);
	free(text);
	if (s < 0)
		return -1;
	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(deps); k++) {
		how[k] = -1;
		if (deps[k].dep == NULL)
			continue;
		if (flaky_json_get(flaky_json_get(pkg, "dependencies"),
		    deps[k].dep) != NULL)
			how[k] = H_DEPS;
		else if (flaky_json_get(flaky_json_get(pkg,
		    "devDependencies"), deps[k].dep) != NULL)
			how[k] = H_DEVDEPS;
	}
	if (flaky_json_get(pkg, "jest") != NULL)
		how[0] = H_CONFIG;
	script = flaky_json_get_str(flaky_json_get(pkg, "scripts"), "test");
	if (script != NULL && (p->script = strdup(script)) == NULL) {
		flaky_json_free(pkg);
		return -1;
	}
	flaky_json_free(pkg);
	/* the script's runner, when it is installed (node:test is) */
	s = p->script != NULL ? script_runner(p->script) : 0;
	for (size_t k = 0; s != 0 && k < FLAKY_ARRAY_SIZE(deps); k++)
		if (deps[k].runner == s && (how[k] >= 0 ||
		    s == CMD_JS_NODETEST)) {
			/* Jest keeps the reasons it always gave */
			p->runner = s;
			p->how = s == JS_JEST ? how[k] : H_SCRIPT;
			return 0;
		}
	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(deps); k++)
		if (how[k] >= 0) {
			p->runner = deps[k].runner;
			p->how = how[k];
			break;
		}
	return 0;
}

/* The JavaScript runner of dir's package.json (command_int.h). */
const char *
cmd_js_project(const char *dir, const char **runner)
{
	struct js_pkg	 p;

	if (read_pkg(dir, &p) < 0)
		return NULL;
	free(p.script);
	for (size_t k = 0; p.runner != 0 && k < FLAKY_ARRAY_SIZE(deps); k++)
		if (deps[k].runner == p.runner) {
			if (runner != NULL)
				*runner = p.runner == JS_JEST ? "jest" :
				    cmd_js_name(p.runner);
			return deps[k].why[p.how];
		}
	return NULL;
}

/* The runner's bin, node_modules/.bin/NAME in root or the nearest parent
 * that has one (a workspace), relative when it is root's, in *ret
 * (malloc'd); -ENOENT with err filled, or -ENOMEM. */
static int
find_bin(const char *root, const char *name, char **ret, char *err,
    size_t errlen)
{
	char	*dir = strdup(root), *slash;
	int	 r = 0;

	for (*ret = NULL; dir != NULL; *slash = '\0') {
		free(*ret);
		if (asprintf(ret, "%s/node_modules/.bin/%s", dir, name) == -1) {
			*ret = NULL;
			break;
		}
		if (access(*ret, X_OK) == 0)
			break;
		if ((slash = strrchr(dir, '/')) == NULL || slash == dir) {
			r = flaky_error(err, errlen, ENOENT, "%s/package.json "
			    "uses %s, but it is not installed (no node_modules/"
			    ".bin/%s): run `npm ci` in %s", root, name, name,
			    root);
			break;
		}
	}
	if (r == 0 && *ret != NULL && strcmp(dir, root) == 0) {
		free(*ret);
		if (asprintf(ret, "node_modules/.bin/%s", name) == -1)
			*ret = NULL;
	}
	if (r == 0 && *ret == NULL)
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
	if (r < 0) {
		free(*ret);
		*ret = NULL;
	}
	free(dir);
	return r;
}

/* The test script's arguments after its runner's words, when it is one
 * plain command of that runner (no shell operators, quotes or variables):
 * `vitest run --typecheck`, `mocha --require x test/`, `node --test
 * test/`. Added to a; 0 when the script is no such command. */
static int
script_args(struct cmd_vec *a, const char *script, int runner)
{
	char	*copy, *save = NULL, *w;
	int	 at = 0, ok = 0;

	if (script == NULL || strpbrk(script, "&|;<>$`'\"()\\") != NULL ||
	    (copy = strdup(script)) == NULL)
		return 0;
	for (w = strtok_r(copy, " \t", &save); w != NULL;
	    w = strtok_r(NULL, " \t", &save)) {
		if (!at) {
			/* NAME=VALUE before the command: not ours to run */
			if (strchr(w, '=') != NULL)
				break;
			/* npx vitest; node [options] --test */
			if (strcmp(w, "npx") == 0 || (runner ==
			    CMD_JS_NODETEST && strcmp(w, "node") == 0))
				continue;
			if (runner == CMD_JS_NODETEST ?
			    strcmp(w, "--test") != 0 :
			    strcmp(w, cmd_js_name(runner)) != 0 &&
			    strcmp(w, "_mocha") != 0)
				break;
			at = 1;
			ok = 1;
			/* "playwright test" */
			if (runner == CMD_JS_PLAYWRIGHT &&
			    ((w = strtok_r(NULL, " \t", &save)) == NULL ||
			    strcmp(w, "test") != 0))
				ok = 0;
			continue;
		}
		/* vitest's subcommand is ours: run, once */
		if (runner == CMD_JS_VITEST && at == 1 && (strcmp(w, "run") ==
		    0 || strcmp(w, "watch") == 0 || strcmp(w, "dev") == 0))
			continue;
		at = 2;
		if (ok)
			cmd_vec_add(a, w);
	}
	free(copy);
	return ok;
}

/* DIR as a path pattern of Jest's and Playwright's (command_int.h). */
void
cmd_js_path_pattern(struct cmd_vec *a, const char *abs)
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
}

/* Directory mode's command of the runner (command_int.h). */
int
cmd_js_command(struct cmd_vec *a, const char *root, const char *abs,
    const char **runner, char *err, size_t errlen)
{
	struct js_pkg	 p;
	char		*bin = NULL;
	const char	*sub = strcmp(root, abs) == 0 ? NULL :
	    abs + strlen(root) + (strcmp(root, "/") != 0);
	int		 r = 0;

	if (read_pkg(root, &p) < 0 || p.runner == 0 || p.runner == JS_JEST) {
		free(p.script);
		return flaky_error(err, errlen, ENOENT, "%s: no package.json "
		    "that uses Vitest, Mocha, Playwright or node --test", root);
	}
	*runner = cmd_js_name(p.runner);
	if (p.runner == CMD_JS_NODETEST)
		cmd_vec_add(a, "node");
	else if ((r = find_bin(root, p.runner == CMD_JS_MOCHA ? "mocha" :
	    *runner, &bin, err, errlen)) < 0)
		goto out;
	else
		cmd_vec_add(a, bin);
	/* the reporter is completion's (flaky_command_complete) */
	if (p.runner == CMD_JS_VITEST)
		cmd_vec_add(a, "run");
	else if (p.runner == CMD_JS_PLAYWRIGHT)
		cmd_vec_add(a, "test");
	else if (p.runner == CMD_JS_NODETEST)
		cmd_vec_add(a, "--test");
	/* the script's own arguments, for the whole project only: below
	 * the root they may name other directories */
	if (sub == NULL)
		(void)script_args(a, p.script, p.runner);
	if (sub != NULL && p.runner == CMD_JS_VITEST) {
		cmd_vec_add(a, "--dir");
		cmd_vec_add(a, sub);
	} else if (sub != NULL && p.runner == CMD_JS_PLAYWRIGHT)
		cmd_js_path_pattern(a, abs);
	else if (sub != NULL && p.runner == CMD_JS_MOCHA) {
		cmd_vec_add(a, "--recursive");
		cmd_vec_add(a, sub);
	} else if (sub != NULL)
		cmd_vec_add(a, sub);
out:
	free(bin);
	free(p.script);
	return r;
}
