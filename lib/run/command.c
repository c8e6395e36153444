/* Completing a command: the runner is asked for every test's outcome.
 *
 * Without it the evidence is wrong, not just thin: plain pytest names only
 * its failures, so the passing runs of a flaky test are never counted and
 * it looks broken. Each rule adds the least that makes the output whole,
 * and a command that already prints every outcome is left alone. */
#include "buildconf.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "command_int.h"
#include "util/util.h"

enum kind {
	K_NONE,
	K_PYTEST,
	K_JEST,
	K_UNITTEST,
	K_GO,
	K_PROVE,
	K_SHELL,
	K_JS,		/* Vitest, Playwright, Mocha, node --test */
};

/* Where a command's runner and its arguments are. */
struct ident {
	enum kind	 kind;
	size_t		 args;		/* index of the runner's first arg */
	int		 js;		/* CMD_JS_* of K_JS */
};

/* pytest's verbosity and report characters, as its options leave them. */
struct pyopts {
	int		 verbosity;	/* -v counts up, -q down */
	int		 absolute;	/* --verbosity=N was given */
	char		 rchars[64];	/* the last -r */
};

/* Insert a copy of s at index at (at the end when past it). */
void
cmd_vec_insert(struct cmd_vec *v, size_t at, const char *s)
{
	char	*copy;

	if (v->oom)
		return;
	if (v->n + 2 > v->cap) {
		size_t	 cap = v->cap ? v->cap * 2 : 16;
		char	**nv = realloc(v->v, cap * sizeof *nv);

		if (nv == NULL) {
			v->oom = 1;
			return;
		}
		v->v = nv;
		v->cap = cap;
	}
	if ((copy = strdup(s)) == NULL) {
		v->oom = 1;
		return;
	}
	if (at > v->n)
		at = v->n;
	memmove(v->v + at + 1, v->v + at, (v->n - at) * sizeof *v->v);
	v->v[at] = copy;
	v->n++;
	v->v[v->n] = NULL;
}

/* Append a copy of s. */
void
cmd_vec_add(struct cmd_vec *v, const char *s)
{
	cmd_vec_insert(v, v->n, s);
}

/* Free the strings and the vector; it is empty afterwards. */
void
cmd_vec_free(struct cmd_vec *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i]);
	free(v->v);
	memset(v, 0, sizeof *v);
}

/* The vector for the caller to own; NULL after an allocation failure. */
char **
cmd_vec_steal(struct cmd_vec *v)
{
	char	**r;

	if (v->oom) {
		cmd_vec_free(v);
		return NULL;
	}
	if (v->v == NULL && (v->v = calloc(1, sizeof *v->v)) == NULL)
		return NULL;
	r = v->v;
	memset(v, 0, sizeof *v);
	return r;
}

/* The last path component, as basename(3) without changing s. */
const char *
cmd_base(const char *s)
{
	const char *p = strrchr(s, '/');

	return p != NULL ? p + 1 : s;
}

/* getenv(3) over an environment array. */
const char *
cmd_env_get(char *const *envp, const char *name)
{
	size_t	 n = strlen(name);

	for (size_t i = 0; envp != NULL && envp[i] != NULL; i++)
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

/* "python", "python3", "python3.11": an interpreter whose -m we follow. */
static int
is_python(const char *base)
{
	if (strncmp(base, "python", 6) != 0)
		return 0;
	return strspn(base + 6, "0123456789.") == strlen(base + 6);
}

/* pytest's own entry points, as Debian and pip install them. */
static int
is_pytest(const char *base)
{
	return strcmp(base, "pytest") == 0 || strcmp(base, "py.test") == 0 ||
	    strcmp(base, "pytest-3") == 0 || strcmp(base, "pytest3") == 0;
}

/* The module of `python [options] -m MODULE`, its args after it. */
static enum kind
python_module(char *const *argv, size_t *args)
{
	const char *mod = NULL;
	size_t	 i;

	for (i = 1; argv[i] != NULL; i++) {
		if (strcmp(argv[i], "-m") == 0) {
			if ((mod = argv[i + 1]) == NULL)
				return K_NONE;
			i += 2;
			break;
		}
		if (strncmp(argv[i], "-m", 2) == 0) {
			mod = argv[i] + 2;
			i++;
			break;
		}
		/* -c CODE or a script: not a module we know */
		if (argv[i][0] != '-' || strcmp(argv[i], "-c") == 0 ||
		    strcmp(argv[i], "-") == 0)
			return K_NONE;
		if ((strcmp(argv[i], "-W") == 0 || strcmp(argv[i], "-X") == 0) &&
		    argv[++i] == NULL)
			return K_NONE;
	}
	if (mod == NULL)
		return K_NONE;
	*args = i;
	if (strcmp(mod, "pytest") == 0 || strcmp(mod, "py.test") == 0)
		return K_PYTEST;
	if (strcmp(mod, "unittest") == 0)
		return K_UNITTEST;
	return K_NONE;
}

/* `node [options] SCRIPT`: Jest when the script is jest's own. */
static enum kind
node_script(char *const *argv, size_t *args)
{
	static const char *const valued[] = { "-r", "--require", "--import",
	    "--loader", "--experimental-loader", "--conditions", "-C" };
	size_t	 i;
	const char *b;

	for (i = 1; argv[i] != NULL && argv[i][0] == '-'; i++) {
		for (size_t k = 0; k < FLAKY_ARRAY_SIZE(valued); k++)
			if (strcmp(argv[i], valued[k]) == 0 &&
			    argv[i + 1] != NULL) {
				i++;
				break;
			}
	}
	if (argv[i] == NULL)
		return K_NONE;
	b = cmd_base(argv[i]);
	if (strcmp(b, "jest") != 0 && strcmp(b, "jest.js") != 0)
		return K_NONE;
	*args = i + 1;
	return K_JEST;
}

/* `npx jest`, `yarn jest`, `pnpm exec jest`. */
static enum kind
package_runner(char *const *argv, size_t *args)
{
	size_t	 i;

	for (i = 1; argv[i] != NULL; i++) {
		if (strcmp(argv[i], "-p") == 0 ||
		    strcmp(argv[i], "--package") == 0) {
			if (argv[++i] == NULL)
				return K_NONE;
			continue;
		}
		if (argv[i][0] == '-' || strcmp(argv[i], "exec") == 0)
			continue;
		break;
	}
	if (argv[i] == NULL || strcmp(argv[i], "jest") != 0)
		return K_NONE;
	*args = i + 1;
	return K_JEST;
}

/* `sh -c SCRIPT` (also -ec, -xc): the script's index. */
static enum kind
shell_script(char *const *argv, size_t *args)
{
	for (size_t i = 1; argv[i] != NULL && (argv[i][0] == '-' ||
	    argv[i][0] == '+'); i++) {
		/* -o pipefail, +O extglob: the option's name follows */
		if ((strcmp(argv[i] + 1, "o") == 0 ||
		    strcmp(argv[i] + 1, "O") == 0) && argv[++i] == NULL)
			return K_NONE;
		else if (argv[i][0] == '-' && argv[i][1] != '-' &&
		    strchr(argv[i], 'c') != NULL) {
			if (argv[i + 1] == NULL)
				return K_NONE;
			*args = i + 1;
			return K_SHELL;
		}
	}
	return K_NONE;
}

/* Which runner argv starts, and where its arguments begin. */
static struct ident
identify(char *const *argv)
{
	struct ident	 id = { K_NONE, 1, 0 };
	const char	*b = cmd_base(argv[0]);

	if ((id.js = cmd_js_identify(argv, &id.args)) != 0)
		id.kind = K_JS;
	else if (is_pytest(b))
		id.kind = K_PYTEST;
	else if (strcmp(b, "jest") == 0)
		id.kind = K_JEST;
	else if (is_python(b))
		id.kind = python_module(argv, &id.args);
	else if (strcmp(b, "node") == 0 || strcmp(b, "nodejs") == 0)
		id.kind = node_script(argv, &id.args);
	else if (strcmp(b, "npx") == 0 || strcmp(b, "yarn") == 0 ||
	    strcmp(b, "pnpm") == 0 || strcmp(b, "bunx") == 0)
		id.kind = package_runner(argv, &id.args);
	else if (strcmp(b, "prove") == 0)
		id.kind = K_PROVE;
	else if (strcmp(b, "go") == 0 && argv[1] != NULL &&
	    strcmp(argv[1], "test") == 0) {
		id.kind = K_GO;
		id.args = 2;
	} else if (strcmp(b, "sh") == 0 || strcmp(b, "bash") == 0 ||
	    strcmp(b, "dash") == 0 || strcmp(b, "zsh") == 0 ||
	    strcmp(b, "ksh") == 0)
		id.kind = shell_script(argv, &id.args);
	return id;
}

/* One pytest argument (and maybe the next, its value) into o; returns how
 * many were used. */
static int
pytest_arg(struct pyopts *o, const char *a, const char *next)
{
	/* short options that take a value (pytest's and xdist's -n) */
	static const char valued[] = "kmprcoWn";

	if (strcmp(a, "--verbose") == 0)
		o->verbosity++;
	else if (strcmp(a, "--quiet") == 0)
		o->verbosity--;
	else if (strncmp(a, "--verbosity", 11) == 0) {
		const char *v = a[11] == '=' ? a + 12 : next;

		if (v != NULL) {
			o->verbosity = atoi(v);
			o->absolute = 1;
		}
		return a[11] == '=' || next == NULL ? 1 : 2;
	} else if (a[0] == '-' && a[1] != '-' && a[1] != '\0') {
		for (const char *p = a + 1; *p; p++) {
			if (*p == 'v')
				o->verbosity++;
			else if (*p == 'q')
				o->verbosity--;
			else if (strchr(valued, *p) != NULL) {
				const char *v = p[1] ? p + 1 : next;

				if (*p == 'r' && v != NULL)
					snprintf(o->rchars, sizeof o->rchars,
					    "%s", v);
				return p[1] || next == NULL ? 1 : 2;
			}
		}
	}
	return 1;
}

/* Do pytest's options print every outcome? -v names each test where it
 * runs; -rA (or -r with a and p) lists every outcome in the summary. */
static int
pytest_complete(const struct pyopts *o)
{
	const char *r = o->rchars;

	if (o->verbosity >= 1 || strchr(r, 'A') != NULL)
		return 1;
	return (strchr(r, 'p') || strchr(r, 'P')) && strchr(r, 'a');
}

/* Read pytest's options from PYTEST_ADDOPTS (words split at blanks) and
 * then from args, until n of them or a shell operator. */
static void
pytest_scan(struct pyopts *o, const char *addopts, char *const *args,
    size_t n)
{
	char	*copy, *save = NULL, *w, *next;

	memset(o, 0, sizeof *o);
	if (addopts != NULL && (copy = strdup(addopts)) != NULL) {
		w = strtok_r(copy, " \t\n", &save);
		while (w != NULL) {
			next = strtok_r(NULL, " \t\n", &save);
			if (pytest_arg(o, w, next) == 2 && next != NULL)
				next = strtok_r(NULL, " \t\n", &save);
			w = next;
		}
		free(copy);
	}
	for (size_t i = 0; i < n && args[i] != NULL; i++) {
		if (strcmp(args[i], "--") == 0)
			break;
		i += (size_t)pytest_arg(o, args[i], i + 1 < n ? args[i + 1] :
		    NULL) - 1;
	}
}

/* Where flakyctl's own arguments go: before a "--", else at the end. */
static size_t
insert_at(const struct cmd_vec *v, size_t from)
{
	for (size_t i = from; i < v->n; i++)
		if (strcmp(v->v[i], "--") == 0)
			return i;
	return v->n;
}

/* Is an argument from args on present (exactly, or as NAME=...)? */
static int
has_arg(const struct cmd_vec *v, size_t from, const char *name)
{
	size_t	 n = strlen(name);

	for (size_t i = from; i < v->n; i++) {
		if (strcmp(v->v[i], "--") == 0)
			break;
		if (strncmp(v->v[i], name, n) == 0 &&
		    (v->v[i][n] == '\0' || v->v[i][n] == '='))
			return 1;
	}
	return 0;
}

/* The pytest options that make its output whole, or NULL when it is. */
static char *
pytest_additions(const struct pyopts *o)
{
	struct flaky_buf b;

	if (pytest_complete(o))
		return NULL;
	flaky_buf_init(&b);
	/* --verbosity=N set after ours would win over any -v: ask for the
	 * summary of every outcome instead (a, and p for the passes). */
	if (o->absolute)
		flaky_buf_adds(&b, "-rap");
	else
		for (int v = o->verbosity; v < 1; v++)
			flaky_buf_adds(&b, v == o->verbosity ? "-v" : " -v");
	if (b.oom) {
		flaky_buf_free(&b);
		return NULL;
	}
	return flaky_buf_steal(&b);
}

/* PYTEST_ADDOPTS with more appended: envp changed in e. */
static void
env_addopts(struct cmd_vec *e, const char *more)
{
	const char *old = NULL;
	char	*s = NULL;

	for (size_t i = 0; i < e->n; i++)
		if (strncmp(e->v[i], "PYTEST_ADDOPTS=", 15) == 0) {
			old = e->v[i] + 15;
			break;
		}
	if (asprintf(&s, "%s%s%s", old ? old : "", old && *old ? " " : "",
	    more) == -1) {
		e->oom = 1;
		return;
	}
	cmd_env_set(e, "PYTEST_ADDOPTS", s);
	free(s);
}

/* The pytest inside `sh -c "... pytest args ..."`: words split at blanks,
 * read up to the end of that simple command. Returns the additions. */
static char *
shell_pytest(const char *script, const char *addopts)
{
	struct pyopts	 o;
	char		*copy, *save = NULL, *w, *words[257], *r = NULL;
	size_t		 n = 0, at = SIZE_MAX;

	if ((copy = strdup(script)) == NULL)
		return NULL;
	for (w = strtok_r(copy, " \t\n", &save); w != NULL && n < 256;
	    w = strtok_r(NULL, " \t\n", &save)) {
		size_t	 len = strlen(w);

		if (at != SIZE_MAX && (strcmp(w, "&&") == 0 ||
		    strcmp(w, "||") == 0 || strcmp(w, "|") == 0 ||
		    strcmp(w, "&") == 0 || strcmp(w, ";") == 0))
			break;
		words[n++] = w;
		if (at == SIZE_MAX && (is_pytest(cmd_base(w)) ||
		    (strcmp(w, "pytest") == 0 && n >= 2 &&
		    strcmp(words[n - 2], "-m") == 0)))
			at = n;
		if (at != SIZE_MAX && len > 0 && w[len - 1] == ';')
			break;
	}
	if (at != SIZE_MAX) {
		words[n] = NULL;
		pytest_scan(&o, addopts, words + at, n - at);
		r = pytest_additions(&o);
	}
	free(copy);
	return r;
}

/* Jest's cache kept between runs: under $XDG_CACHE_HOME (or ~/.cache),
 * not in the run's private TMPDIR. NULL when there is no such place. */
static char *
jest_cache_dir(char *const *envp)
{
	const char *x = cmd_env_get(envp, "XDG_CACHE_HOME");
	const char *h = cmd_env_get(envp, "HOME");
	char	*s = NULL;

	if (x != NULL && x[0] == '/')
		return asprintf(&s, "%s/flaky/jest", x) == -1 ? NULL : s;
	if (h != NULL && h[0] == '/')
		return asprintf(&s, "%s/.cache/flaky/jest", h) == -1 ? NULL :
		    s;
	return NULL;
}

/* Jest: --verbose names every test; the cache goes where it is kept. */
static void
complete_jest(struct cmd_vec *a, size_t args, char *const *envp,
    const struct flaky_command_opts *opts, struct flaky_buf *note)
{
	char	*dir, *arg;

	if (!has_arg(a, args, "--verbose")) {
		cmd_vec_insert(a, insert_at(a, args), "--verbose");
		flaky_buf_adds(note, "added --verbose (without it Jest names "
		    "only failing tests)");
	}
	if (opts == NULL || !opts->keep_jest_cache ||
	    has_arg(a, args, "--cacheDirectory") ||
	    has_arg(a, args, "--cache-directory") ||
	    has_arg(a, args, "--no-cache") || has_arg(a, args, "--cache") ||
	    (dir = jest_cache_dir(envp)) == NULL)
		return;
	if (asprintf(&arg, "--cacheDirectory=%s", dir) == -1) {
		note->oom = 1;
		free(dir);
		return;
	}
	cmd_vec_insert(a, insert_at(a, args), arg);
	flaky_buf_printf(note, "%sadded %s (Jest's transform cache, kept "
	    "between runs instead of in each run's private TMPDIR)",
	    note->len ? "; " : "", arg);
	free(arg);
	free(dir);
}

/* unittest: -v names every test with its outcome. */
static void
complete_unittest(struct cmd_vec *a, size_t args, struct flaky_buf *note)
{
	for (size_t i = args; i < a->n && strcmp(a->v[i], "--") != 0; i++) {
		const char *s = a->v[i];

		if (strcmp(s, "--verbose") == 0)
			return;
		/* -v, -bv; but -k's value ends the cluster */
		if (s[0] == '-' && s[1] != '-')
			for (const char *p = s + 1; *p && !strchr("kspt", *p);
			    p++)
				if (*p == 'v')
					return;
	}
	cmd_vec_insert(a, insert_at(a, args), "-v");
	flaky_buf_adds(note, "added -v (without it unittest names only "
	    "failing tests)");
}

/* prove: -v, without which it prints a verdict per file and names no
 * test. Its options up to "::" (what follows goes to the tests); in a
 * cluster (-lv, -lrv) an option with a value (-I, -P, -M, -j, -e) ends
 * it. */
static void
complete_prove(struct cmd_vec *a, struct flaky_buf *note)
{
	for (size_t i = 1; i < a->n && strcmp(a->v[i], "::") != 0; i++) {
		const char *s = a->v[i];

		if (strcmp(s, "--verbose") == 0)
			return;
		if (s[0] == '-' && s[1] != '-')
			for (const char *p = s + 1; *p && !strchr("IPMje", *p);
			    p++)
				if (*p == 'v')
					return;
	}
	cmd_vec_insert(a, 1, "-v");
	flaky_buf_adds(note, "added -v (without it prove names no test, "
	    "only a verdict per file)");
}

/* go test: -count=1 so that no run is served from the test cache, -v so
 * that passing tests are named. */
static void
complete_go(struct cmd_vec *a, struct flaky_buf *note)
{
	int	 count = 0, verbose = 0;

	for (size_t i = 2; i < a->n && strcmp(a->v[i], "-args") != 0; i++) {
		const char *s = a->v[i];

		if (s[0] == '-' && s[1] == '-')
			s++;
		if (strncmp(s, "-count", 6) == 0 &&
		    (s[6] == '\0' || s[6] == '='))
			count = 1;
		if (strcmp(s, "-v") == 0 || strcmp(s, "-v=true") == 0 ||
		    strcmp(s, "-json") == 0)
			verbose = 1;
	}
	if (!verbose)
		cmd_vec_insert(a, 2, "-v");
	if (!count)
		cmd_vec_insert(a, 2, "-count=1");
	if (!count && !verbose)
		flaky_buf_adds(note, "added -count=1 -v (without them go test "
		    "serves cached results and names only failing tests)");
	else if (!count)
		flaky_buf_adds(note, "added -count=1 (without it go test "
		    "serves cached results instead of running the tests)");
	else if (!verbose)
		flaky_buf_adds(note, "added -v (without it go test names only "
		    "failing tests)");
}

/* The command with what its runner needs to print every outcome. */
int
flaky_command_complete(char *const *argv, char *const *envp,
    const struct flaky_command_opts *opts, struct flaky_command *ret,
    char *err, size_t errlen)
{
	struct cmd_vec	 a, e;
	struct flaky_buf note;
	struct ident	 id;
	struct pyopts	 o;
	char		*add = NULL;
	const char	*runner = NULL;
	int		 want_note, nk;

	memset(ret, 0, sizeof *ret);
	if (argv == NULL || argv[0] == NULL || argv[0][0] == '\0')
		return flaky_error(err, errlen, EINVAL, "no command");
	memset(&a, 0, sizeof a);
	memset(&e, 0, sizeof e);
	flaky_buf_init(&note);
	for (size_t i = 0; argv[i] != NULL; i++)
		cmd_vec_add(&a, argv[i]);
	for (size_t i = 0; envp != NULL && envp[i] != NULL; i++)
		cmd_vec_add(&e, envp[i]);

	id = identify(argv);
	switch (id.kind) {
	case K_PYTEST:
		runner = "pytest";
		pytest_scan(&o, cmd_env_get(envp, "PYTEST_ADDOPTS"),
		    argv + id.args, SIZE_MAX);
		add = pytest_additions(&o);
		break;
	case K_SHELL:
		/* The YAML's string commands: pytest inside still reads
		 * PYTEST_ADDOPTS; other runners there are left alone. */
		add = shell_pytest(argv[id.args],
		    cmd_env_get(envp, "PYTEST_ADDOPTS"));
		break;
	case K_JEST:
		runner = "jest";
		complete_jest(&a, id.args, envp, opts, &note);
		break;
	case K_UNITTEST:
		runner = "unittest";
		complete_unittest(&a, id.args, &note);
		break;
	case K_GO:
		runner = "go";
		complete_go(&a, &note);
		break;
	case K_PROVE:
		runner = "prove";
		complete_prove(&a, &note);
		break;
	case K_JS:
		runner = cmd_js_complete(id.js, &a, id.args, &note);
		break;
	case K_NONE:
		if ((nk = cmd_native_identify(argv, &id.args)) != 0)
			runner = cmd_native_complete(&a, nk, id.args, &note);
		break;
	}
	if (add != NULL) {
		env_addopts(&e, add);
		for (size_t i = 0; i < e.n; i++)
			if (strncmp(e.v[i], "PYTEST_ADDOPTS=", 15) == 0 &&
			    (ret->env_set = strdup(e.v[i])) == NULL)
				e.oom = 1;
		if (cmd_env_get(envp, "PYTEST_ADDOPTS") != NULL &&
		    *cmd_env_get(envp, "PYTEST_ADDOPTS") != '\0')
			flaky_buf_printf(&note, "added %s to PYTEST_ADDOPTS "
			    "(without it pytest names only failing tests)",
			    add);
		else
			flaky_buf_printf(&note, "added PYTEST_ADDOPTS=%s "
			    "(without it pytest names only failing tests)",
			    add);
		free(add);
	}
	ret->argv = cmd_vec_steal(&a);
	ret->envp = cmd_vec_steal(&e);
	if (runner != NULL)
		ret->runner = strdup(runner);
	want_note = note.len > 0 || note.oom;
	if (note.len > 0 && !note.oom)
		ret->note = flaky_buf_steal(&note);
	flaky_buf_free(&note);
	if (ret->argv == NULL || ret->envp == NULL ||
	    (runner != NULL && ret->runner == NULL) ||
	    (want_note && ret->note == NULL)) {
		flaky_command_clear(ret);
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	}
	return 0;
}

/* The runner's shuffling with seed (run.h): pytest through
 * PYTEST_ADDOPTS (a `sh -c` pytest reads it too), Jest and go in argv,
 * before a "--" or go's -args. */
int
flaky_command_shuffle(const struct flaky_command *c, const char *seed,
    char ***argv, char ***envp, char *err, size_t errlen)
{
	struct cmd_vec	 a, e;
	char		 opt[96];
	const char	*r = c->runner ? c->runner : "";
	size_t		 at;

	*argv = *envp = NULL;
	memset(&a, 0, sizeof a);
	memset(&e, 0, sizeof e);
	if (!strcmp(r, "cargo") || !strcmp(r, "gtest") || !strcmp(r, "rspec") ||
	    !strcmp(r, "phpunit"))
		return cmd_native_shuffle(c, seed, argv, envp, err, errlen);
	if (cmd_js_shuffles(r))
		return cmd_js_shuffle(c, seed, argv, envp, err, errlen);
	if (strcmp(r, "pytest") && strcmp(r, "jest") && strcmp(r, "go"))
		return flaky_error(err, errlen, ENOTSUP, "--shuffle: %s%s "
		    "cannot shuffle its tests' order (pytest with "
		    "pytest-random-order, Jest, Vitest, Playwright and go test "
		    "can)", *r ? r : "the command's runner", *r ? "" :
		    " (not recognized)");
	for (size_t i = 0; c->argv[i] != NULL; i++)
		cmd_vec_add(&a, c->argv[i]);
	for (size_t i = 0; c->envp != NULL && c->envp[i] != NULL; i++)
		cmd_vec_add(&e, c->envp[i]);
	if (strcmp(r, "pytest") == 0) {
		snprintf(opt, sizeof opt, "-p random_order "
		    "--random-order-seed=%s", seed);
		env_addopts(&e, opt);
	} else if (strcmp(r, "jest") == 0) {
		snprintf(opt, sizeof opt, "--seed=%s", seed);
		at = insert_at(&a, 1);
		cmd_vec_insert(&a, at, opt);
		cmd_vec_insert(&a, at, "--randomize");
	} else {
		snprintf(opt, sizeof opt, "-shuffle=%s", seed);
		for (at = 1; at < a.n && strcmp(a.v[at], "-args"); at++)
			;
		cmd_vec_insert(&a, at, opt);
	}
	return cmd_vec_hand(&a, &e, argv, envp, err, errlen);
}

/* Hand a new command's vectors over (command_int.h). */
int
cmd_vec_hand(struct cmd_vec *a, struct cmd_vec *e, char ***argv,
    char ***envp, char *err, size_t errlen)
{
	if ((*argv = cmd_vec_steal(a)) == NULL ||
	    (*envp = cmd_vec_steal(e)) == NULL) {
		flaky_command_free_vec(*argv);
		cmd_vec_free(e);
		*argv = NULL;
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	}
	return 0;
}

/* Where the runner's own arguments begin in argv (command_int.h). */
size_t
cmd_runner_args(char *const *argv)
{
	return identify(argv).args;
}

/* Frees a NULL-terminated vector. */
void
flaky_command_free_vec(char **v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* Free what the command holds; the struct is zeroed for reuse. */
void
flaky_command_clear(struct flaky_command *c)
{
	if (c == NULL)
		return;
	flaky_command_free_vec(c->argv);
	flaky_command_free_vec(c->envp);
	free(c->dir);
	free(c->runner);
	free(c->note);
	free(c->root);
	free(c->env_set);
	memset(c, 0, sizeof *c);
}
