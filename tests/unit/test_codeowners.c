/* CODEOWNERS (lib/diagnose/owners.c): the owners of a path and of a test
 * id, in GitHub's syntax (the last matching line wins) and GitLab's
 * (sections, each with its last match and its default owners), with the
 * examples of both providers' documentation. */
#include "buildconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diagnose/diagnose.h"
#include "util/util.h"

static const char github[] =
    "# the examples of GitHub's documentation\n"
    "*       @global-owner1 @global-owner2\n"
    "*.js    @js-owner #This is an inline comment.\n"
    "*.go docs@example.com\n"
    "/build/logs/ @doctocat\n"
    "docs/*  docs@example.com\n"
    "apps/ @octocat\n"
    "/docs/ @doctocat\n"
    "/scripts/ @doctocat @octocat\n"
    "**/logs @octocat\n"
    "/apps/ @octocat\n"
    "/apps/github\n"
    "test_shop.py   @acme/shop @alice\r\n";

static const char gitlab[] =
    "* @default\n"
    "[Docs] @docs-team\n"
    "docs/\n"
    "*.md @writers\n"
    "^[Optional][2] @opt\n"
    "/lib/\n";

/* The owners of path under text ("" when none). */
static char *
owners(const char *text, const char *path, int test)
{
	struct flaky_codeowners *c;
	struct flaky_buf b;
	char	*s;
	int	 r;

	ck_assert_int_eq(flaky_codeowners_parse(text, strlen(text), &c), 0);
	flaky_buf_init(&b);
	r = test ? flaky_codeowners_test(c, path, &b) :
	    flaky_codeowners_match(c, path, &b);
	ck_assert_int_eq(r, b.len > 0);
	s = strdup(flaky_buf_cstr(&b));
	flaky_buf_free(&b);
	flaky_codeowners_free(c);
	return s;
}

#define OWNS(text, path, want, test) do {				\
	char *got_ = owners(text, path, test);				\
	ck_assert_msg(strcmp(got_, want) == 0, "%s: '%s', expected '%s'",	\
	    path, got_, want);						\
	free(got_);							\
} while (0)

START_TEST(github_syntax)
{
	OWNS(github, "src/main.c", "@global-owner1 @global-owner2", 0);
	OWNS(github, "web/app.js", "@js-owner", 0);
	OWNS(github, "cmd/x.go", "docs@example.com", 0);
	OWNS(github, "build/logs/today.txt", "@octocat", 0);	/* the later "**" pattern */
	OWNS(github, "deep/build/logs/x", "@octocat", 0);
	OWNS(github, "docs/getting-started.md", "@doctocat", 0);
	/* "docs/" then a star owns docs' own files, not deeper ones; a
	 * pattern with an inner '/' is anchored at the top (gitignore) */
	OWNS("* @all\ndocs/* @d\n", "docs/a.md", "@d", 0);
	OWNS("* @all\ndocs/* @d\n", "docs/build-app/t.md", "@all", 0);
	OWNS("* @all\ndocs/* @d\n", "x/docs/a.md", "@all", 0);
	OWNS(github, "x/apps/y.py", "@octocat", 0);
	OWNS(github, "scripts/deploy.sh", "@doctocat @octocat", 0);
	/* a line without owners: nobody owns what it matches */
	OWNS(github, "apps/github/x.py", "", 0);
	OWNS(github, "tests/test_shop.py", "@acme/shop @alice", 0);
	/* test ids: pytest's, Jest's, RSpec's, Go's, unittest's */
	OWNS(github, "tests/test_shop.py::TestCart::test_total",
	    "@acme/shop @alice", 1);
	OWNS(github, "web/app.test.js \xe2\x80\xba cart \xe2\x80\xba adds",
	    "@js-owner", 1);
	OWNS(github, "scripts/deploy_spec.rb[1:2]", "@doctocat @octocat", 1);
	OWNS(github, "cmd/TestServe/sub", "@global-owner1 @global-owner2", 1);
}
END_TEST

/* path/name made with text. */
static void
put(const char *dir, const char *name, const char *text)
{
	char	 p[512];
	FILE	*f;

	snprintf(p, sizeof p, "%s/%s", dir, name);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
}

/* A checkout: the rules from .github/CODEOWNERS, a target in a directory
 * under the top, and a unittest id matched on the module that is there
 * (the first guess, tests/test_shop/TestCart.py, matched "*" before). */
START_TEST(in_a_checkout)
{
	char	 top[] = "/tmp/flaky-codeowners-XXXXXX", d[512], err[256];
	struct flaky_codeowners *c;
	struct flaky_buf b;

	ck_assert_ptr_nonnull(mkdtemp(top));
	snprintf(d, sizeof d, "%s/.git", top);
	ck_assert_int_eq(mkdir(d, 0700), 0);
	snprintf(d, sizeof d, "%s/.github", top);
	ck_assert_int_eq(mkdir(d, 0700), 0);
	put(top, ".github/CODEOWNERS", "* @all\nsvc/tests/test_shop.py @shop\n"
	    "/svc/web/ @web\n");
	snprintf(d, sizeof d, "%s/svc", top);
	ck_assert_int_eq(mkdir(d, 0700), 0);
	snprintf(d, sizeof d, "%s/svc/tests", top);
	ck_assert_int_eq(mkdir(d, 0700), 0);
	put(d, "test_shop.py", "");
	snprintf(d, sizeof d, "%s/svc", top);
	ck_assert_int_eq(flaky_codeowners_load(d, &c, err, sizeof err), 0);
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_nonnull(strstr(flaky_codeowners_file(c),
	    ".github/CODEOWNERS"));
	flaky_buf_init(&b);
	ck_assert_int_eq(flaky_codeowners_test(c,
	    "tests.test_shop.TestCart.test_total", &b), 1);
	ck_assert_str_eq(flaky_buf_cstr(&b), "@shop");
	b.len = 0;
	ck_assert_int_eq(flaky_codeowners_test(c,
	    "web/app.test.js \xe2\x80\xba adds", &b), 1);
	ck_assert_str_eq(flaky_buf_cstr(&b), "@web");
	b.len = 0;
	ck_assert_int_eq(flaky_codeowners_test(c, "tests.test_gone.T.t", &b),
	    1);
	ck_assert_str_eq(flaky_buf_cstr(&b), "@all");
	flaky_buf_free(&b);
	flaky_codeowners_free(c);
	/* no CODEOWNERS: no rules, no error */
	snprintf(d, sizeof d, "%s/.github/CODEOWNERS", top);
	ck_assert_int_eq(unlink(d), 0);
	snprintf(d, sizeof d, "%s/svc", top);
	ck_assert_int_eq(flaky_codeowners_load(d, &c, err, sizeof err), 0);
	ck_assert_ptr_null(c);
	snprintf(d, sizeof d, "rm -rf '%s'", top);
	ck_assert_int_eq(system(d), 0);
}
END_TEST

START_TEST(gitlab_sections)
{
	/* every section's last match adds up */
	OWNS(gitlab, "README.md", "@default @writers", 0);
	/* a pattern without owners takes its section's */
	OWNS(gitlab, "docs/x.txt", "@default @docs-team", 0);
	OWNS(gitlab, "docs/a.md", "@default @writers", 0);
	OWNS(gitlab, "lib/x.c", "@default @opt", 0);
	OWNS(gitlab, "src/x.c", "@default", 0);
}
END_TEST

START_TEST(none)
{
	OWNS("", "a.py", "", 0);
	OWNS("# only a comment\n\n   \n", "a.py", "", 0);
	OWNS("*.py\n", "a.py", "", 0);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("codeowners");
	TCase	*tc = tcase_create("core");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, github_syntax);
	tcase_add_test(tc, gitlab_sections);
	tcase_add_test(tc, none);
	tcase_add_test(tc, in_a_checkout);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
