/* Seed sweeps (issue 34, docs/runners.md "Seed sweeps"): the command of a
 * run whose Python tests are seeded with the run's own seed by the hook
 * flaky ships (python/flaky_seed, installed under DATADIR/flaky/python),
 * put on PYTHONPATH for these runs only; and the words that set the same
 * seed again for a reproduce command. */
#include "buildconf.h"
/* its own header first: it must stand alone */
#include "run/run.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "command_int.h"

/* Projects with a seed variable of their own: it is set (to the seed
 * modulo its range) instead of leaving the project's default, and the
 * parameter of the fixture it feeds keeps the id it has by default, so a
 * test keeps one id across seeds. A project is recognized by a file:
 * marker below the run's directory or one of its parents, or the run's
 * directory being the package itself (a directory named like the
 * marker's first component, holding the rest). To add a project: one
 * line here, and its row in docs/runners.md. */
static const struct seed_var {
	const char	*name;		/* the project's variable */
	unsigned	 range;		/* it takes 0 to range - 1 */
	const char	*fixture;	/* the pytest fixture it parametrizes */
	const char	*id;		/* that fixture's id by default */
	const char	*marker;	/* the file that shows the project */
} seed_vars[] = {
	/* scikit-learn's tests promise to pass for every seed 0-99 */
	{ "SKLEARN_TESTS_GLOBAL_RANDOM_SEED", 100, "global_random_seed",
	  "42", "sklearn/tests/random_seed.py" },
};

#define HOOK_FILE	"flaky_seed/__init__.py"

/* Does dir hold the hook? */
static int
hook_in(const char *dir)
{
	char	 p[PATH_MAX];
	struct stat st;

	return snprintf(p, sizeof p, "%s/%s", dir, HOOK_FILE) <
	    (int)sizeof p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int
flaky_seed_hook_dir(char *buf, size_t len, char *err, size_t errlen)
{
	char	 exe[PATH_MAX], rel[PATH_MAX], *slash;
	const char *env = getenv("FLAKY_SEED_HOOK_DIR");
	ssize_t	 n;
	size_t	 broot = strlen(FLAKY_BUILD_ROOT);

	if (env != NULL && *env != '\0') {
		if (!hook_in(env))
			return flaky_error(err, errlen, ENOENT, "--perturb "
			    "seed: $FLAKY_SEED_HOOK_DIR %s has no %s", env,
			    HOOK_FILE);
		snprintf(buf, len, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	/* a program of the build tree: the source tree's python/ */
	if (n > 0 && strncmp(exe, FLAKY_BUILD_ROOT, broot) == 0 &&
	    exe[broot] == '/' && hook_in(FLAKY_SOURCE_PYTHON_DIR)) {
		snprintf(buf, len, "%s", FLAKY_SOURCE_PYTHON_DIR);
		return 0;
	}
	if (hook_in(FLAKY_PYTHON_DIR)) {
		snprintf(buf, len, "%s", FLAKY_PYTHON_DIR);
		return 0;
	}
	/* an installation moved elsewhere: PREFIX/bin/flakyctl and
	 * PREFIX/share/flaky/python */
	rel[0] = '\0';
	if (n > 0 && (slash = strrchr(exe, '/')) != NULL) {
		*slash = '\0';
		if (snprintf(rel, sizeof rel, "%s/../share/flaky/python",
		    exe) < (int)sizeof rel && hook_in(rel)) {
			snprintf(buf, len, "%s", rel);
			return 0;
		}
	}
	return flaky_error(err, errlen, ENOENT, "--perturb seed: flaky's "
	    "seed hook is not installed: no %s in %s%s%s (set "
	    "$FLAKY_SEED_HOOK_DIR to the directory that holds it)", HOOK_FILE,
	    FLAKY_PYTHON_DIR, rel[0] ? " nor " : "", rel);
}

/* Is the project of dir the one v names (see seed_vars)? */
static int
project_has(const struct seed_var *v, const char *dir)
{
	char	 d[PATH_MAX], p[PATH_MAX + 64], *slash;
	const char *sub = strchr(v->marker, '/');
	size_t	 first = sub ? (size_t)(sub - v->marker) : 0;
	struct stat st;

	if (dir == NULL || realpath(dir, d) == NULL)
		return 0;
	for (int depth = 0; depth < 16; depth++) {
		if (snprintf(p, sizeof p, "%s/%s", d, v->marker) <
		    (int)sizeof p && stat(p, &st) == 0)
			return 1;
		slash = strrchr(d, '/');
		/* dir is the package itself: sklearn/ holding tests/... */
		if (sub != NULL && slash != NULL &&
		    strlen(slash + 1) == first &&
		    strncmp(slash + 1, v->marker, first) == 0 &&
		    snprintf(p, sizeof p, "%s%s", d, sub) < (int)sizeof p &&
		    stat(p, &st) == 0)
			return 1;
		if (slash == NULL || slash == d)
			break;
		*slash = '\0';
	}
	return 0;
}

/* The seed as a number (1 to 2^32-1), or 0. */
static unsigned long
seed_value(const char *seed)
{
	char	*end;
	unsigned long v;

	errno = 0;
	v = strtoul(seed, &end, 10);
	if (errno != 0 || *seed == '\0' || *end != '\0' || v > 0xffffffffUL)
		return 0;
	return v;
}

/* Set NAME=VALUE in e, replacing NAME's value. */
void
cmd_env_set(struct cmd_vec *e, const char *name, const char *value)
{
	size_t	 n = strlen(name), i;
	char	*s;

	if (asprintf(&s, "%s=%s", name, value) == -1) {
		e->oom = 1;
		return;
	}
	for (i = 0; i < e->n; i++)
		if (strncmp(e->v[i], name, n) == 0 && e->v[i][n] == '=')
			break;
	if (i < e->n) {
		free(e->v[i]);
		e->v[i] = s;
	} else {
		cmd_vec_add(e, s);
		free(s);
	}
}

/* NAME=FIRST, or NAME=FIRST SEP OLD when NAME had a value. */
static void
env_join(struct cmd_vec *e, char *const *envp, const char *name,
    const char *first, const char *sep, int first_first)
{
	const char *old = cmd_env_get(envp, name);
	char	*s;

	if (old == NULL || *old == '\0') {
		cmd_env_set(e, name, first);
		return;
	}
	if (asprintf(&s, "%s%s%s", first_first ? first : old, sep,
	    first_first ? old : first) == -1) {
		e->oom = 1;
		return;
	}
	cmd_env_set(e, name, s);
	free(s);
}

int
flaky_command_seed(const struct flaky_command *c, const char *seed,
    const char *dir, int headroom, char ***argv, char ***envp, char *err,
    size_t errlen)
{
	struct cmd_vec	 a, e;
	struct flaky_buf ids;
	char		 hook[PATH_MAX], num[32];
	const char	*r = c->runner ? c->runner : "";
	unsigned long	 v = seed_value(seed);
	int		 rc;

	*argv = *envp = NULL;
	if (strcmp(r, "pytest") != 0 && strcmp(r, "unittest") != 0)
		return flaky_error(err, errlen, ENOTSUP, "--perturb seed: "
		    "%s%s is not a Python runner: the seed hook seeds pytest's "
		    "and unittest's tests", *r ? r : "the command's runner",
		    *r ? "" : " (not recognized)");
	if (v == 0)
		return flaky_error(err, errlen, EINVAL, "--perturb seed: "
		    "expected a seed from 1 to 4294967295, got '%s'", seed);
	if ((rc = flaky_seed_hook_dir(hook, sizeof hook, err, errlen)) < 0)
		return rc;
	memset(&a, 0, sizeof a);
	memset(&e, 0, sizeof e);
	flaky_buf_init(&ids);
	for (size_t i = 0; c->argv[i] != NULL; i++)
		cmd_vec_add(&a, c->argv[i]);
	for (size_t i = 0; c->envp != NULL && c->envp[i] != NULL; i++)
		cmd_vec_add(&e, c->envp[i]);
	snprintf(num, sizeof num, "%lu", v);
	cmd_env_set(&e, "FLAKY_SEED", num);
	cmd_env_set(&e, "PYTHONHASHSEED", num);
	env_join(&e, c->envp, "PYTHONPATH", hook, ":", 1);
	if (strcmp(r, "pytest") == 0)
		env_join(&e, c->envp, "PYTEST_PLUGINS",
		    FLAKY_SEED_PYTEST_PLUGIN, ",", 0);
	if (headroom)
		cmd_env_set(&e, "FLAKY_HEADROOM", FLAKY_HEADROOM_FILE);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(seed_vars); i++) {
		const struct seed_var *sv = &seed_vars[i];

		if (!project_has(sv, dir))
			continue;
		snprintf(num, sizeof num, "%lu", v % sv->range);
		cmd_env_set(&e, sv->name, num);
		flaky_buf_printf(&ids, "%s%s=%s", ids.len ? "," : "",
		    sv->fixture, sv->id);
	}
	if (ids.len > 0)
		cmd_env_set(&e, "FLAKY_SEED_IDS", flaky_buf_cstr(&ids));
	if (ids.oom)
		e.oom = 1;
	flaky_buf_free(&ids);
	return cmd_vec_hand(&a, &e, argv, envp, err, errlen);
}

void
flaky_seed_env_words(const char *seed, const char *dir, const char *runner,
    struct flaky_buf *b)
{
	char		 hook[PATH_MAX], e[256], ids[256];
	unsigned long	 v = seed_value(seed);

	if (flaky_seed_hook_dir(hook, sizeof hook, e, sizeof e) < 0)
		snprintf(hook, sizeof hook, "%s", FLAKY_PYTHON_DIR);
	flaky_buf_printf(b, "FLAKY_SEED=%lu PYTHONHASHSEED=%lu "
	    "PYTHONPATH=", v, v);
	/* the hook first, the user's path after it, as the runs had */
	if (strspn(hook, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789/._-+") == strlen(hook))
		flaky_buf_adds(b, hook);
	else {
		flaky_buf_addc(b, '\'');
		for (const char *p = hook; *p; p++)
			flaky_buf_adds(b, *p == '\'' ? "'\\''" :
			    (char[2]){ *p, '\0' });
		flaky_buf_addc(b, '\'');
	}
	flaky_buf_adds(b, "${PYTHONPATH:+:$PYTHONPATH} ");
	if (runner != NULL && strcmp(runner, "pytest") == 0)
		flaky_buf_adds(b, "PYTEST_PLUGINS=" FLAKY_SEED_PYTEST_PLUGIN
		    "${PYTEST_PLUGINS:+,$PYTEST_PLUGINS} ");
	ids[0] = '\0';
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(seed_vars); i++) {
		const struct seed_var *sv = &seed_vars[i];
		size_t	 k = strlen(ids);

		if (!project_has(sv, dir))
			continue;
		flaky_buf_printf(b, "%s=%lu ", sv->name, v % sv->range);
		snprintf(ids + k, sizeof ids - k, "%s%s=%s", k ? "," : "",
		    sv->fixture, sv->id);
	}
	if (ids[0] != '\0')
		flaky_buf_printf(b, "FLAKY_SEED_IDS=%s ", ids);
}
