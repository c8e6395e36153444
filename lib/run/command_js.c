/* The commands of the JavaScript runners besides Jest (command.c): which of
 * Vitest, Playwright Test, Mocha or node --test a command starts, what
 * makes it print every test's outcome, and how each shuffles its order.
 * The rules are in docs/runners.md ("What flakyctl adds to your
 * command"). */
#include "buildconf.h"

#include <stdio.h>
#include <string.h>

#include "run/run.h"
#include "command_int.h"

static const char *const js_names[] = {
	[CMD_JS_VITEST] = "vitest",
	[CMD_JS_PLAYWRIGHT] = "playwright",
	[CMD_JS_MOCHA] = "mocha",
	[CMD_JS_NODETEST] = "nodetest",
};

/* node's options whose value is the next word. */
static const char *const node_valued[] = {
	"-r", "--require", "--import", "--loader", "--experimental-loader",
	"--conditions", "-C", "--test-reporter", "--test-reporter-destination",
	"--test-name-pattern", "--test-concurrency", "--test-timeout",
	"--test-shard", "--env-file", "--title", "--input-type",
	"--stack-size", "--max-old-space-size", NULL
};

/* Is s one of v (NULL-terminated)? */
static int
one_of(const char *const *v, const char *s)
{
	for (; *v != NULL; v++)
		if (strcmp(*v, s) == 0)
			return 1;
	return 0;
}

/* The runner's name of a CMD_JS_* (command_int.h). */
const char *
cmd_js_name(int js)
{
	return js > 0 && js < (int)FLAKY_ARRAY_SIZE(js_names) ?
	    js_names[js] : NULL;
}

/* The runner that argv[i] names (its bin or script), *args after it. */
static int
js_word(char *const *argv, size_t i, size_t *args)
{
	static const char *const vitest[] = { "vitest", "vitest.mjs", NULL };
	static const char *const mocha[] = { "mocha", "_mocha", "mocha.js",
	    NULL };
	const char *b = cmd_base(argv[i]);

	if (one_of(vitest, b)) {
		*args = i + 1;
		return CMD_JS_VITEST;
	}
	if (one_of(mocha, b)) {
		*args = i + 1;
		return CMD_JS_MOCHA;
	}
	/* playwright test, node .../@playwright/test/cli.js test */
	if ((strcmp(b, "playwright") == 0 || (strcmp(b, "cli.js") == 0 &&
	    strstr(argv[i], "playwright") != NULL)) && argv[i + 1] != NULL &&
	    strcmp(argv[i + 1], "test") == 0) {
		*args = i + 2;
		return CMD_JS_PLAYWRIGHT;
	}
	return 0;
}

/* Which JavaScript runner argv starts (command_int.h). */
int
cmd_js_identify(char *const *argv, size_t *args)
{
	static const char *const npx[] = { "npx", "yarn", "pnpm", "bunx",
	    NULL };
	const char	*b = cmd_base(argv[0]);
	size_t		 i;
	int		 js;

	if ((js = js_word(argv, 0, args)) != 0)
		return js;
	if (strcmp(b, "node") == 0 || strcmp(b, "nodejs") == 0) {
		/* node [options] --test [files]: our options go after node,
		 * before any file (after one, they would be the tests') */
		for (i = 1; argv[i] != NULL && argv[i][0] == '-'; i++) {
			if (strcmp(argv[i], "--test") == 0) {
				*args = 1;
				return CMD_JS_NODETEST;
			}
			if (one_of(node_valued, argv[i]) && argv[i + 1] != NULL)
				i++;
		}
		return argv[i] != NULL ? js_word(argv, i, args) : 0;
	}
	if (!one_of(npx, b))
		return 0;
	for (i = 1; argv[i] != NULL; i++) {
		if ((strcmp(argv[i], "-p") == 0 ||
		    strcmp(argv[i], "--package") == 0) && argv[++i] == NULL)
			return 0;
		if (argv[i][0] != '-' && strcmp(argv[i], "exec") != 0 &&
		    strcmp(argv[i], "dlx") != 0)
			return js_word(argv, i, args);
	}
	return 0;
}

/* Where our options go: before a "--" from args on, else at the end. */
static size_t
js_insert_at(const struct cmd_vec *a, size_t args)
{
	size_t	 i = args;

	while (i < a->n && strcmp(a->v[i], "--") != 0)
		i++;
	return i;
}

/* Is option name (or name=VALUE) among the runner's arguments? */
static int
js_given(const struct cmd_vec *a, size_t args, const char *name)
{
	size_t	 l = strlen(name);

	for (size_t i = args; i < js_insert_at(a, args); i++)
		if (strncmp(a->v[i], name, l) == 0 && (a->v[i][l] == '\0' ||
		    a->v[i][l] == '='))
			return 1;
	return 0;
}

/* The reporter that names every test, added (command_int.h). */
const char *
cmd_js_complete(int js, struct cmd_vec *a, size_t args,
    struct flaky_buf *note)
{
	static const struct {
		const char	*given, *given2, *add, *why;
	} rule[] = {
		[CMD_JS_VITEST] = { "--reporter", NULL, "--reporter=verbose",
		    "without it Vitest names only the tests of failing files" },
		[CMD_JS_PLAYWRIGHT] = { "--reporter", NULL, "--reporter=list",
		    "Playwright's dot, line and html reporters name only "
		    "failing tests" },
		[CMD_JS_MOCHA] = { "--reporter", "-R", "--reporter=spec",
		    "the reporter that names every test; a .mocharc may "
		    "choose another" },
	};

	/* node --test prints TAP into a pipe: every test, as it is */
	if (js != CMD_JS_NODETEST && !js_given(a, args, rule[js].given) &&
	    (rule[js].given2 == NULL || !js_given(a, args, rule[js].given2))) {
		cmd_vec_insert(a, js_insert_at(a, args), rule[js].add);
		flaky_buf_printf(note, "added %s (%s)", rule[js].add,
		    rule[js].why);
	}
	return cmd_js_name(js);
}

/* Whether the runner has a random order (command_int.h). */
int
cmd_js_shuffles(const char *runner)
{
	return strcmp(runner, "vitest") == 0 ||
	    strcmp(runner, "playwright") == 0;
}

/* The command of a run in the order of seed (command_int.h). */
int
cmd_js_shuffle(const struct flaky_command *c, const char *seed,
    char ***argv, char ***envp, char *err, size_t errlen)
{
	struct cmd_vec	 a, e;
	char		 opt[64];
	size_t		 at;

	memset(&a, 0, sizeof a);
	memset(&e, 0, sizeof e);
	for (size_t i = 0; c->argv[i] != NULL; i++)
		cmd_vec_add(&a, c->argv[i]);
	for (size_t i = 0; c->envp != NULL && c->envp[i] != NULL; i++)
		cmd_vec_add(&e, c->envp[i]);
	at = js_insert_at(&a, cmd_runner_args(c->argv));
	if (strcmp(c->runner, "vitest") == 0) {
		/* files and the tests in them, in an order from the seed */
		snprintf(opt, sizeof opt, "--sequence.seed=%s", seed);
		cmd_vec_insert(&a, at, opt);
		cmd_vec_insert(&a, at, "--sequence.shuffle");
	} else {
		/* Playwright 1.5x's --shuffle: files, and the tests of
		 * fullyParallel projects */
		snprintf(opt, sizeof opt, "--shuffle=%s", seed);
		cmd_vec_insert(&a, at, opt);
	}
	return cmd_vec_hand(&a, &e, argv, envp, err, errlen);
}
