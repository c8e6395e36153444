/* lib/run/select.c: the command of a run of only some tests, per runner,
 * from fake commands (no runner is started). */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/run.h"

static char	 dir[64];
static char	 got[4096];

static void
setup(void)
{
	char	 p[128];

	snprintf(dir, sizeof dir, "/tmp/flaky-select-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof p, "%s/tests", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
}

static void
teardown(void)
{
	char	 p[128];

	snprintf(p, sizeof p, "%s/tests", dir);
	rmdir(p);
	rmdir(dir);
}

/* Select tests (split at '|') from a command (split at spaces) of runner;
 * got is the new argv joined by spaces. Returns what the call returned. */
static int
sel(const char *runner, const char *words, const char *tests)
{
	struct flaky_command c;
	char	*wcopy = strdup(words), *tcopy = strdup(tests), *argv[64];
	char	*tv[64], *save = NULL, *w, **na, **ne, err[256];
	char	*envp[] = { (char *)"PATH=/usr/bin", NULL };
	size_t	 n = 0, nt = 0;
	int	 r;

	for (w = strtok_r(wcopy, " ", &save); w != NULL && n < 63;
	    w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n] = NULL;
	for (w = strtok_r(tcopy, "|", &save); w != NULL && nt < 63;
	    w = strtok_r(NULL, "|", &save))
		tv[nt++] = w;
	memset(&c, 0, sizeof c);
	c.argv = argv;
	c.envp = envp;
	c.runner = (char *)runner;
	got[0] = '\0';
	r = flaky_command_select(&c, dir, tv, nt, &na, &ne, err, sizeof err);
	if (r == 0) {
		for (size_t i = 0; na[i] != NULL; i++) {
			if (i > 0)
				strcat(got, " ");
			strcat(got, na[i]);
		}
		ck_assert_str_eq(ne[0], "PATH=/usr/bin");
		ck_assert_ptr_null(ne[1]);
		flaky_command_free_vec(na);
		flaky_command_free_vec(ne);
	} else
		snprintf(got, sizeof got, "%s", err);
	free(wcopy);
	free(tcopy);
	return r;
}

/* pytest: the paths go (a directory that exists, a file, a node id), the
 * options and their values stay, the node ids come last as given. */
START_TEST(select_pytest)
{
	ck_assert_int_eq(sel("pytest", "pytest -v tests -k slow --tb short "
	    "-p no:cacheprovider a/test_x.py",
	    "tests/test_a.py::test_x[a-b]|tests/sub/test_b.py::TestC::test_m"),
	    0);
	ck_assert_str_eq(got, "pytest -v -k slow --tb short -p "
	    "no:cacheprovider tests/test_a.py::test_x[a-b] "
	    "tests/sub/test_b.py::TestC::test_m");
	ck_assert_int_eq(sel("pytest", "python3 -m pytest --rootdir /r "
	    "-ra test_y.py -- x::y", "test_y.py::test_q"), 0);
	ck_assert_str_eq(got, "python3 -m pytest --rootdir /r -ra "
	    "test_y.py::test_q");
	/* -k's value is a value, though it looks like nothing else */
	ck_assert_int_eq(sel("pytest", "pytest -ktests tests/", "t.py::u"), 0);
	ck_assert_str_eq(got, "pytest -ktests t.py::u");
}
END_TEST

/* unittest: the suite as the command builds it, then only the ids
 * (flaky_unittest_select_py), interpreter options kept. */
START_TEST(select_unittest)
{
	char	 want[4096];

	ck_assert_int_eq(sel("unittest", "python3 -W error -m unittest "
	    "discover -v -s tests", "test_m.C.test_a|pkg.mod.func"), 0);
	snprintf(want, sizeof want, "python3 -W error -c %s discover -v -s "
	    "tests --flaky-ids test_m.C.test_a pkg.mod.func",
	    flaky_unittest_select_py);
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(sel("unittest", "python3 -munittest -v",
	    "a.B.test_c"), 0);
	snprintf(want, sizeof want, "python3 -c %s -v --flaky-ids a.B.test_c",
	    flaky_unittest_select_py);
	ck_assert_str_eq(got, want);
}
END_TEST

/* prove: its options, each test's file once in place of the paths;
 * what follows "::" is the tests' own. */
START_TEST(select_prove)
{
	ck_assert_int_eq(sel("prove", "prove -v -l -I inc t :: --x",
	    "t/a.t > one|t/b.t > two|t/a.t > three|t/a.tt > four"), 0);
	ck_assert_str_eq(got, "prove -v -l -I inc t/a.t t/b.t t/a.tt :: --x");
}
END_TEST

/* Jest: each file once, escaped and anchored; the titles joined by a
 * space as Jest does, escaped, anchored; before a "--". */
START_TEST(select_jest)
{
	ck_assert_int_eq(sel("jest", "node_modules/.bin/jest --verbose -- x",
	    "src/a.test.js \xe2\x80\xba sum \xe2\x80\xba adds (1+1)|"
	    "src/a.test.js \xe2\x80\xba top|b.test.js \xe2\x80\xba x.y$"), 0);
	ck_assert_str_eq(got, "node_modules/.bin/jest --verbose "
	    "src/a\\.test\\.js$ b\\.test\\.js$ -t "
	    "^(?:sum adds \\(1\\+1\\)|top|x\\.y\\$)$ -- x");
}
END_TEST

/* go: -run with the top-level names, in place of the -run given, before
 * -args. */
START_TEST(select_go)
{
	ck_assert_int_eq(sel("go", "go test -v -count=1 -run Old ./... "
	    "-args -run x", "example.com/m/pkg/TestA/sub|example.com/m/TestB|"
	    "TestC"), 0);
	ck_assert_str_eq(got, "go test -v -count=1 ./... "
	    "-run=^(TestA|TestB|TestC)$ -args -run x");
	ck_assert_int_eq(sel("go", "go test -run=Old ./...", "p/TestD"), 0);
	ck_assert_str_eq(got, "go test ./... -run=^(TestD)$");
}
END_TEST

/* A runner that cannot select is told, as is a selection too big for a
 * command line. */
START_TEST(select_refused)
{
	struct flaky_command c = { 0 };
	char	*argv[] = { (char *)"pytest", NULL }, **tv, **na, **ne;
	char	 err[256];

	ck_assert_int_eq(sel(NULL, "sh -c make", "x"), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(got, "not recognized"));
	ck_assert_int_eq(sel("tap", "prove -v", "x"), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(got, "tap cannot be told"));
	tv = calloc(FLAKY_SELECT_MAX_TESTS + 1, sizeof *tv);
	for (size_t i = 0; i <= FLAKY_SELECT_MAX_TESTS; i++)
		tv[i] = (char *)"t.py::t";
	c.argv = argv;
	c.runner = (char *)"pytest";
	ck_assert_int_eq(flaky_command_select(&c, NULL, tv,
	    FLAKY_SELECT_MAX_TESTS + 1, &na, &ne, err, sizeof err), -E2BIG);
	ck_assert_int_eq(flaky_command_select(&c, NULL, tv, 0, &na, &ne, err,
	    sizeof err), -EINVAL);
	ck_assert_int_eq(flaky_command_select(&c, NULL, tv, 2, &na, &ne, err,
	    sizeof err), 0);
	ck_assert_str_eq(na[2], "t.py::t");
	flaky_command_free_vec(na);
	flaky_command_free_vec(ne);
	free(tv);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("select");
	TCase	*tc = tcase_create("select");
	SRunner	*sr;
	int	 failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, select_pytest);
	tcase_add_test(tc, select_unittest);
	tcase_add_test(tc, select_jest);
	tcase_add_test(tc, select_prove);
	tcase_add_test(tc, select_go);
	tcase_add_test(tc, select_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
