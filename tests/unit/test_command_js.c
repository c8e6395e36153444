/* The commands of Vitest, Playwright Test, Mocha and node:test
 * (lib/run/command_js.c, detect_js.c, select_js.c, lib/diagnose/repro_js.c):
 * completion, directory mode, shuffling, selection and reproduce commands,
 * one test per rule of docs/runners.md. No runner is started here; the
 * integration tests (tests/integration/runners_js/) run them. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diagnose/diagnose.h"
#include "run/run.h"

static char	 got[4096];		/* a new argv joined by spaces */
static char	 note[1024];		/* completion's note */
static char	 runner[32];

/* words split at '|' when there is one, else at spaces, into argv. */
static size_t
split(char *copy, const char *words, char **argv, size_t max)
{
	const char *sep = strchr(words, '|') ? "|" : " ";
	char	*save = NULL, *w;
	size_t	 n = 0;

	for (w = strtok_r(copy, sep, &save); w != NULL && n + 1 < max;
	    w = strtok_r(NULL, sep, &save))
		argv[n++] = w;
	argv[n] = NULL;
	return n;
}

/* got = v joined by spaces. */
static void
join(char *const *v)
{
	got[0] = '\0';
	for (size_t i = 0; v[i] != NULL; i++) {
		if (i > 0)
			strcat(got, " ");
		strcat(got, v[i]);
	}
}

/* Complete a command: got, note and runner ("-" when none). */
static int
complete(const char *words)
{
	struct flaky_command c;
	char	*copy = strdup(words), *argv[64], err[256];
	char	*envp[] = { (char *)"PATH=/usr/bin", NULL };
	int	 r;

	split(copy, words, argv, 64);
	got[0] = note[0] = '\0';
	r = flaky_command_complete(argv, envp, NULL, &c, err, sizeof err);
	if (r == 0) {
		join(c.argv);
		snprintf(note, sizeof note, "%s", c.note ? c.note : "");
		snprintf(runner, sizeof runner, "%s", c.runner ? c.runner :
		    "-");
		flaky_command_clear(&c);
	}
	free(copy);
	return r;
}

/* Each runner's forms, and what makes it name every test. */
START_TEST(js_complete)
{
	static const struct {
		const char	*cmd, *want, *runner;
	} c[] = {
		{ "vitest", "vitest --reporter=verbose", "vitest" },
		{ "npx vitest run test/", "npx vitest run test/ "
		    "--reporter=verbose", "vitest" },
		{ "node node_modules/vitest/vitest.mjs run", "node "
		    "node_modules/vitest/vitest.mjs run --reporter=verbose",
		    "vitest" },
		{ "pnpm exec vitest run", "pnpm exec vitest run "
		    "--reporter=verbose", "vitest" },
		{ "npx playwright test", "npx playwright test "
		    "--reporter=list", "playwright" },
		{ "node_modules/.bin/playwright test --project=chromium",
		    "node_modules/.bin/playwright test --project=chromium "
		    "--reporter=list", "playwright" },
		{ "node node_modules/@playwright/test/cli.js test", "node "
		    "node_modules/@playwright/test/cli.js test "
		    "--reporter=list", "playwright" },
		{ "mocha test/", "mocha test/ --reporter=spec", "mocha" },
		{ "npx mocha -- x", "npx mocha --reporter=spec -- x", "mocha" },
		{ "node_modules/.bin/_mocha", "node_modules/.bin/_mocha "
		    "--reporter=spec", "mocha" },
		/* node --test prints TAP into a pipe: every test */
		{ "node --test", "node --test", "nodetest" },
		{ "node --require ./setup.js --test test/", "node --require "
		    "./setup.js --test test/", "nodetest" },
		{ "nodejs --test-reporter=spec --test", "nodejs "
		    "--test-reporter=spec --test", "nodetest" },
	};

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(c); i++) {
		ck_assert_int_eq(complete(c[i].cmd), 0);
		ck_assert_str_eq(got, c[i].want);
		ck_assert_str_eq(runner, c[i].runner);
	}
	ck_assert_int_eq(complete("npx vitest"), 0);
	ck_assert_str_eq(note, "added --reporter=verbose (without it Vitest "
	    "names only the tests of failing files)");
	ck_assert_int_eq(complete("npx playwright test"), 0);
	ck_assert_str_eq(note, "added --reporter=list (Playwright's dot, line "
	    "and html reporters name only failing tests)");
	ck_assert_int_eq(complete("node --test"), 0);
	ck_assert_str_eq(note, "");
	/* a script given to node is not node --test */
	ck_assert_int_eq(complete("node test.js --test"), 0);
	ck_assert_str_eq(runner, "-");
}
END_TEST

/* A reporter given is the user's choice: left alone (the parser says
 * when the output is incomplete). */
START_TEST(js_complete_left_alone)
{
	static const char *const same[] = {
		"vitest run --reporter=junit", "vitest --reporter verbose",
		"npx playwright test --reporter=line",
		"npx playwright test --reporter list,html",
		"mocha --reporter dot", "mocha -R tap", "mocha --reporter=spec",
		"node --test --test-reporter=dot",
	};

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(same); i++) {
		ck_assert_int_eq(complete(same[i]), 0);
		ck_assert_str_eq(got, same[i]);
		ck_assert_str_eq(note, "");
	}
}
END_TEST

/* --shuffle: Vitest's sequence, Playwright's --shuffle; Mocha and Node
 * 20's runner have no random order. */
START_TEST(js_shuffle)
{
	struct flaky_command c;
	char	*argv[8], **na, **ne, err[256], copy[128];
	char	*envp[] = { (char *)"PATH=/usr/bin", NULL };

	memset(&c, 0, sizeof c);
	c.argv = argv;
	c.envp = envp;
	snprintf(copy, sizeof copy, "npx vitest run --reporter=verbose");
	split(copy, "x", argv, 8);
	c.runner = (char *)"vitest";
	ck_assert_int_eq(flaky_command_shuffle(&c, "42", &na, &ne, err,
	    sizeof err), 0);
	join(na);
	ck_assert_str_eq(got, "npx vitest run --reporter=verbose "
	    "--sequence.shuffle --sequence.seed=42");
	flaky_command_free_vec(na);
	flaky_command_free_vec(ne);
	snprintf(copy, sizeof copy, "npx playwright test --reporter=list");
	split(copy, "x", argv, 8);
	c.runner = (char *)"playwright";
	ck_assert_int_eq(flaky_command_shuffle(&c, "42", &na, &ne, err,
	    sizeof err), 0);
	join(na);
	ck_assert_str_eq(got, "npx playwright test --reporter=list "
	    "--shuffle=42");
	flaky_command_free_vec(na);
	flaky_command_free_vec(ne);
	snprintf(copy, sizeof copy, "mocha");
	split(copy, "x", argv, 8);
	c.runner = (char *)"mocha";
	ck_assert_int_eq(flaky_command_shuffle(&c, "42", &na, &ne, err,
	    sizeof err), -ENOTSUP);
	ck_assert_str_eq(err, "--shuffle: mocha cannot shuffle its tests' "
	    "order (pytest with pytest-random-order, Jest, Vitest, Playwright "
	    "and go test can)");
	c.runner = (char *)"nodetest";
	ck_assert_int_eq(flaky_command_shuffle(&c, "42", &na, &ne, err,
	    sizeof err), -ENOTSUP);
}
END_TEST

/* Select tests (split at '\n': Vitest's project label has '|') from a
 * command of runner into got. */
static int
sel(const char *r, const char *words, const char *tests)
{
	struct flaky_command c;
	char	*wcopy = strdup(words), *tcopy = strdup(tests), *argv[64];
	char	*tv[64], *save = NULL, *w, **na, **ne, err[256];
	char	*envp[] = { (char *)"PATH=/usr/bin", NULL };
	size_t	 nt = 0;
	int	 e;

	split(wcopy, " ", argv, 64);
	for (w = strtok_r(tcopy, "\n", &save); w != NULL && nt < 63;
	    w = strtok_r(NULL, "\n", &save))
		tv[nt++] = w;
	memset(&c, 0, sizeof c);
	c.argv = argv;
	c.envp = envp;
	c.runner = (char *)r;
	e = flaky_command_select(&c, NULL, tv, nt, &na, &ne, err, sizeof err);
	if (e == 0) {
		join(na);
		flaky_command_free_vec(na);
		flaky_command_free_vec(ne);
	} else
		snprintf(got, sizeof got, "%s", err);
	free(wcopy);
	free(tcopy);
	return e;
}

#define PSEP	" \xe2\x80\xba "

/* Each runner's own selection, from the ids its parser gives. */
START_TEST(js_select)
{
	/* Vitest: the files, -t with the full names (blanks between
	 * titles, escaped), the project of "|name| " ids */
	ck_assert_int_eq(sel("vitest", "npx vitest run --reporter=verbose",
	    "test/cart.test.js > cart > checkout > pays\n"
	    "|unit| test/search.test.js > matches (a+b) * c #2\n"
	    "test/broken.test.js"), 0);
	ck_assert_str_eq(got, "npx vitest run --reporter=verbose "
	    "test/cart.test.js --project=unit test/search.test.js "
	    "test/broken.test.js -t ^(?:cart checkout pays|"
	    "matches \\(a\\+b\\) \\* c)$");
	/* Playwright: FILE:LINE (escaped), the project, the titles */
	ck_assert_int_eq(sel("playwright", "npx playwright test "
	    "--reporter=list", "tests/shop.spec.js:20" PSEP "[chromium]"
	    PSEP "shop" PSEP "talks to the legacy API\ntests/a.spec.js:3"
	    PSEP "one #2"), 0);
	ck_assert_str_eq(got, "npx playwright test --reporter=list "
	    "tests\\/shop\\.spec\\.js:20 --project=chromium "
	    "tests\\/a\\.spec\\.js:3 --grep=(?:^| )(?:shop talks to the legacy "
	    "API|one)(?: @|$)");
	/* Mocha: --grep on the full titles, anchored; the command's own
	 * --grep, --fgrep and --invert go */
	ck_assert_int_eq(sel("mocha", "mocha --require x.js --fgrep a -i "
	    "test/ --grep=b", "cart checkout pays\na.b"), 0);
	ck_assert_str_eq(got, "mocha --require x.js test/ "
	    "--grep=^(?:cart checkout pays|a\\.b)$");
	ck_assert_int_eq(sel("mocha", "npx mocha -- extra", "t"), 0);
	ck_assert_str_eq(got, "npx mocha --grep=^(?:t)$ -- extra");
	/* node:test: each test's own name, right after node */
	ck_assert_int_eq(sel("nodetest", "node --test --test-name-pattern "
	    "old test/", "cart > checkout > pays\ntop level\ncart"), 0);
	ck_assert_str_eq(got, "node --test-name-pattern=^(?:pays|top level|"
	    "cart)$ --test test/");
}
END_TEST

/* Directory mode: a scratch tree. */
static char	 tree[64];

/* Write tree/rel (its directories made), executable if exec. */
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
	snprintf(tree, sizeof tree, "/tmp/flaky-command-js-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tree));
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
static char	 dc_err[1024];

/* Directory mode on tree/rel: 0 (got the command) or the error. */
static int
detect(const char *rel)
{
	char	 p[512];
	char	*envp[] = { (char *)"PATH=/usr/bin:/bin", NULL };
	int	 r;

	flaky_command_clear(&dc);
	snprintf(p, sizeof p, "%s/%s", tree, rel);
	got[0] = dc_err[0] = '\0';
	r = flaky_command_detect(p, envp, NULL, &dc, dc_err, sizeof dc_err);
	if (r == 0)
		join(dc.argv);
	return r;
}

/* The runner from package.json: its test script among what it lists, else
 * the first listed of Jest, Vitest, Mocha and Playwright; node:test from
 * its script alone. The script's own arguments when it is one plain
 * command. */
START_TEST(js_detect)
{
	char	 want[512];

	put("v/package.json", "{\"scripts\": {\"test\": \"vitest run "
	    "--typecheck\"}, \"devDependencies\": {\"@playwright/test\": "
	    "\"1\", \"vitest\": \"3\"}}", 0);
	put("v/node_modules/.bin/vitest", "#!/bin/sh\n", 1);
	ck_assert_int_eq(detect("v"), 0);
	ck_assert_str_eq(got, "node_modules/.bin/vitest run --typecheck "
	    "--reporter=verbose");
	ck_assert_str_eq(dc.runner, "vitest");
	ck_assert_str_eq(dc.note, "package.json's test script runs vitest; "
	    "added --reporter=verbose (without it Vitest names only the tests "
	    "of failing files)");
	put("v/src/a/x.test.ts", "", 0);
	ck_assert_int_eq(detect("v/src/a"), 0);
	ck_assert_str_eq(got, "node_modules/.bin/vitest run --dir src/a "
	    "--reporter=verbose");

	/* Playwright beside Jest: Jest first, unless the script says */
	put("p/package.json", "{\"scripts\": {\"test\": \"playwright test\"}, "
	    "\"devDependencies\": {\"jest\": \"29\", \"@playwright/test\": "
	    "\"1.65.2\"}}", 0);
	put("p/node_modules/.bin/playwright", "#!/bin/sh\n", 1);
	put("p/e2e/a.spec.ts", "", 0);
	ck_assert_int_eq(detect("p/e2e"), 0);
	snprintf(want, sizeof want, "node_modules/.bin/playwright test "
	    "%s/p/e2e/ --reporter=list", tree);
	ck_assert_str_eq(got, want);
	ck_assert_str_eq(dc.runner, "playwright");
	put("p/package.json", "{\"scripts\": {\"test\": \"npm run e2e\"}, "
	    "\"devDependencies\": {\"jest\": \"29\", \"@playwright/test\": "
	    "\"1.65.2\"}}", 0);
	ck_assert_int_eq(detect("p"), -ENOENT);
	ck_assert_ptr_nonnull(strstr(dc_err, "jest is not installed"));

	/* Mocha: the script's arguments; below the root --recursive DIR */
	put("m/package.json", "{\"scripts\": {\"test\": \"mocha --require "
	    "test/env --check-leaks test/ test/acceptance/\"}, "
	    "\"devDependencies\": {\"mocha\": \"11\"}}", 0);
	put("m/node_modules/.bin/mocha", "#!/bin/sh\n", 1);
	put("m/test/x.js", "", 0);
	ck_assert_int_eq(detect("m"), 0);
	ck_assert_str_eq(got, "node_modules/.bin/mocha --require test/env "
	    "--check-leaks test/ test/acceptance/ --reporter=spec");
	ck_assert_str_eq(dc.note, "package.json's test script runs mocha; "
	    "added --reporter=spec (the reporter that names every test; a "
	    ".mocharc may choose another)");
	ck_assert_int_eq(detect("m/test"), 0);
	ck_assert_str_eq(got, "node_modules/.bin/mocha --recursive test "
	    "--reporter=spec");
	/* a script with shell operators: not reused */
	put("m/package.json", "{\"scripts\": {\"test\": \"mocha && echo ok\"}, "
	    "\"devDependencies\": {\"mocha\": \"11\"}}", 0);
	ck_assert_int_eq(detect("m"), 0);
	ck_assert_str_eq(got, "node_modules/.bin/mocha --reporter=spec");

	/* node:test needs nothing installed */
	put("n/package.json", "{\"scripts\": {\"test\": \"node --test "
	    "test/\"}}", 0);
	put("n/test/a.test.js", "", 0);
	ck_assert_int_eq(detect("n"), 0);
	ck_assert_str_eq(got, "node --test test/");
	ck_assert_str_eq(dc.runner, "nodetest");
	ck_assert_str_eq(dc.note, "package.json's test script runs node "
	    "--test");
	ck_assert_int_eq(detect("n/test"), 0);
	ck_assert_str_eq(got, "node --test test");

	/* listed but not installed */
	put("x/package.json", "{\"devDependencies\": {\"vitest\": \"3\"}}",
	    0);
	ck_assert_int_eq(detect("x"), -ENOENT);
	snprintf(want, sizeof want, "%s/x/package.json uses vitest, but it "
	    "is not installed (no node_modules/.bin/vitest): run `npm ci` in "
	    "%s/x", tree, tree);
	ck_assert_str_eq(dc_err, want);
	/* a test script that names a runner nothing lists is no reason */
	put("y/package.json", "{\"scripts\": {\"test\": \"mocha\"}}", 0);
	ck_assert_int_eq(detect("y"), -ENOENT);
	ck_assert_ptr_nonnull(strstr(dc_err, "no test runner recognized"));
	flaky_command_clear(&dc);
}
END_TEST

/* One project, one target: the runner of flaky_command_project. */
START_TEST(js_project)
{
	char	*envp[] = { (char *)"PATH=/usr/bin", NULL }, p[512], *root;
	const char *r;

	put("q/package.json", "{\"devDependencies\": {\"mocha\": \"11\", "
	    "\"@playwright/test\": \"1\"}}", 0);
	put("q/test/deep/x.js", "", 0);
	snprintf(p, sizeof p, "%s/q/test/deep", tree);
	ck_assert_int_eq(flaky_command_project(p, envp, &root, &r), 0);
	ck_assert_str_eq(r, "mocha");
	free(root);
}
END_TEST

/* The reproduce command of a test, from its target's command. */
static void
repro(const char *r, const char *command, const char *test,
    const char *message, const char *want)
{
	struct flaky_diagnosis d;
	struct flaky_result_row row;
	struct flaky_buf b;

	memset(&d, 0, sizeof d);
	memset(&row, 0, sizeof row);
	d.runner = (char *)r;
	d.command = (char *)command;
	d.test = (char *)test;
	row.message = (char *)message;
	d.failed = &row;
	d.nfailed = message != NULL;
	flaky_buf_init(&b);
	flaky_repro(&d, NULL, &b);
	ck_assert_str_eq(flaky_buf_cstr(&b), want);
	flaky_buf_free(&b);
}

START_TEST(js_repro)
{
	repro("vitest", "npx vitest run --reporter=verbose -c vite.config.ts",
	    "test/cart.test.js > cart > checkout > pays (1)", NULL,
	    "npx vitest run -c vite.config.ts test/cart.test.js "
	    "-t '^cart checkout pays \\(1\\)$'");
	repro("vitest", NULL, "|unit| test/a.test.ts > top", NULL,
	    "npx vitest run --project=unit test/a.test.ts -t '^top$'");
	repro("playwright", "npx playwright test --reporter=list",
	    "tests/shop.spec.js:20" PSEP "[chromium]" PSEP "shop" PSEP
	    "talks to the legacy API", NULL,
	    "npx playwright test tests/shop.spec.js:20 --project=chromium "
	    "--grep='(?:^| )shop talks to the legacy API(?: @|$)'");
	repro("mocha", "node_modules/.bin/mocha --require test/env --grep x "
	    "test/", "cart checkout pays", NULL,
	    "node_modules/.bin/mocha --require test/env test/ "
	    "--grep='^cart checkout pays$'");
	/* node:test: the file a failure named, else the command's */
	repro("nodetest", "node --test test/", "cart > checkout > pays",
	    "AssertionError\ntest at test/cart.test.js:13:5",
	    "node --test-name-pattern='^pays$' --test test/cart.test.js");
	repro("nodetest", "node --test test/", "cart > checkout > pays",
	    NULL, "node --test-name-pattern='^pays$' --test test/");
	/* node --test into a pipe: TAP's results, node's selection */
	repro("tap", "node --test", "cart > refunds #2", NULL,
	    "node --test-name-pattern='^refunds$' --test");
	ck_assert_str_eq(flaky_repro_short_name("vitest", "test/a.test.ts > "
	    "s > t"), "s > t");
	ck_assert_str_eq(flaky_repro_short_name("playwright", "a.spec.js:3"
	    PSEP "[chromium]" PSEP "s" PSEP "t"), "s" PSEP "t");
	ck_assert_str_eq(flaky_repro_short_name("playwright", "a.spec.js:3"
	    PSEP "t"), "t");
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("command_js");
	TCase	*tc = tcase_create("core");
	TCase	*td = tcase_create("detect");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, js_complete);
	tcase_add_test(tc, js_complete_left_alone);
	tcase_add_test(tc, js_shuffle);
	tcase_add_test(tc, js_select);
	tcase_add_test(tc, js_repro);
	suite_add_tcase(s, tc);
	tcase_set_timeout(td, 60);
	tcase_add_checked_fixture(td, tree_setup, tree_teardown);
	tcase_add_test(td, js_detect);
	tcase_add_test(td, js_project);
	suite_add_tcase(s, td);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
