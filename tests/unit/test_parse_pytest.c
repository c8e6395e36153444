/* parse: the pytest parser, against output captured from the real runner
 * (tests/fixtures/pytest, see capture.sh) and a few hand-written lines for
 * what this machine's plugins cannot print; and garbage. */
#include "buildconf.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"
#include "parse_test.h"
#include "test_helper.h"
#include "util/util.h"

#define D	"src/test_demo.py::"
static char long_id[512];

/* test_demo.py's tests in the order a plain -v run prints them. */
static const struct expect demo[] = {
	{ D "test_pass", FLAKY_PASS, NULL },
	{ D "test_fail", FLAKY_FAIL, "AssertionError: value of a was wrong\n"
	    "assert 1 == 2\nsrc/test_demo.py:15: AssertionError" },
	{ D "test_raises", FLAKY_FAIL, "ValueError: bad value 42" },
	{ D "test_fixture_error", FLAKY_ERROR,
	    "RuntimeError: fixture exploded\nsrc/test_demo.py:24" },
	{ D "test_skip", FLAKY_SKIP, NULL },
	{ D "test_skip_inside", FLAKY_SKIP, NULL },
	{ D "test_xfail", FLAKY_XFAIL, NULL },
	{ D "test_xpass", FLAKY_XPASS, NULL },
	{ D "test_ids[plain]", FLAKY_PASS, NULL },
	{ D "test_ids[with space]", FLAKY_PASS, NULL },
	{ D "test_ids[[brackets]]", FLAKY_PASS, NULL },
	{ D "test_ids[quote'single]", FLAKY_PASS, NULL },
	{ D "test_ids[quote\"double]", FLAKY_PASS, NULL },
	{ D "test_ids[back\\\\slash]", FLAKY_PASS, NULL },
	{ D "test_ids[tab\\there]", FLAKY_PASS, NULL },
	{ D "test_ids[caf\\xe9 \\u65e5\\u672c]", FLAKY_PASS, NULL },
	{ long_id, FLAKY_PASS, NULL },
	{ D "test_ids[::colons::]", FLAKY_FAIL,
	    "assert '::colons::' not in ('::colons::', ' - dash - ')" },
	{ D "test_ids[ - dash - ]", FLAKY_FAIL,
	    "assert ' - dash - ' not in" },
	{ D "test_pairs[one-two]", FLAKY_PASS, NULL },
	{ D "test_pairs[three four]", FLAKY_PASS, NULL },
	{ D "TestThing::test_method_ok", FLAKY_PASS, NULL },
	{ D "TestThing::test_method_fail", FLAKY_FAIL,
	    "assert [1, 2, 3] == [1, 2, 4]\n  At index 2 diff: 3 != 4" },
	{ D "TestThing::test_method_param[1]", FLAKY_PASS, NULL },
	{ D "TestThing::test_method_param[2]", FLAKY_FAIL,
	    "assert 2 == 1\nsrc/test_demo.py:81: AssertionError" },
	{ D "test_warns", FLAKY_PASS, NULL },
	{ D "test_prints", FLAKY_PASS, NULL },
	{ D "test_prints_no_newline", FLAKY_PASS, NULL },
	{ D "test_teardown_error", FLAKY_ERROR, "OSError: teardown failed" },
	{ D "test_timeout", FLAKY_FAIL, "Failed: Timeout >0.5s" },
};
#define NDEMO	FLAKY_ARRAY_SIZE(demo)

static void
setup_ids(void)
{
	size_t	 n = strlen(D "test_ids[");

	memcpy(long_id, D "test_ids[", n);
	memset(long_id + n, 'x', 300);
	memcpy(long_id + n + 300, "]", 2);
}

/* The runner's own total: 7 failed, 18 passed, 2 skipped, 1 xfailed,
 * 1 xpassed, 2 errors. test_teardown_error is in both "passed" and
 * "errors", so it is one more than the tests. */
#define DEMO_TOTAL	31

static void
assert_demo_meta(const struct flaky_results *r, int version)
{
	ck_assert_str_eq(r->runner, "pytest");
	if (version)
		ck_assert_str_eq(r->version, "7.2.1");
	else
		ck_assert_ptr_null(r->version);
	ck_assert_int_eq(r->summary_total, DEMO_TOTAL);
	ck_assert_ptr_null(r->warning);
}

START_TEST(pytest_verbose)
{
	struct flaky_results	 r;

	pt_fixture("pytest/v.txt", NULL, &r);
	assert_demo_meta(&r, 1);
	ck_assert_ptr_null(r.seed);
	pt_assert_exact(&r, demo, NDEMO);
	flaky_results_free(&r);
}
END_TEST

/* -v -s -rA: output around the status words, every test also named by the
 * summary, and still each test once, in run order. */
START_TEST(pytest_verbose_s_rA)
{
	struct flaky_results	 r;

	pt_fixture("pytest/v_s_rA.txt", NULL, &r);
	assert_demo_meta(&r, 1);
	pt_assert_exact(&r, demo, NDEMO);
	flaky_results_free(&r);
}
END_TEST

/* -rA without -v: the summary names everything but skips (they are named
 * by place, "SKIPPED [1] src/test_demo.py:30: ..."), in its own order. */
START_TEST(pytest_rA)
{
	struct flaky_results	 r;
	struct expect		 e[NDEMO];
	size_t			 n = 0;

	pt_fixture("pytest/rA.txt", NULL, &r);
	assert_demo_meta(&r, 1);
	for (size_t i = 0; i < NDEMO; i++)
		if (demo[i].outcome != FLAKY_SKIP)
			e[n++] = demo[i];
	ck_assert_uint_eq(r.n, n);
	pt_assert_has(&r, e, n);
	/* PASSED lines come first, then XFAIL, XPASS, ERROR, FAILED. */
	ck_assert_str_eq(r.v[0].test, D "test_pass");
	ck_assert_str_eq(r.v[r.n - 1].test, D "test_timeout");
	ck_assert_str_eq(pt_find(&r, D "test_teardown_error")->message,
	    "OSError: teardown failed\nsrc/test_demo.py:100: OSError");
	flaky_results_free(&r);
}
END_TEST

/* The default -r fE: only failures and errors are known, the total is the
 * runner's. */
static void
check_failures_only(const char *rel, int version)
{
	struct flaky_results	 r;
	struct expect		 e[NDEMO];
	size_t			 n = 0;

	pt_fixture(rel, NULL, &r);
	assert_demo_meta(&r, version);
	for (size_t i = 0; i < NDEMO; i++)
		if (FLAKY_FAILED(demo[i].outcome))
			e[n++] = demo[i];
	ck_assert_uint_eq(r.n, n);
	pt_assert_has(&r, e, n);
	ck_assert_str_eq(r.v[0].test, D "test_fail");
	ck_assert_uint_eq(r.v[0].position, 0);
	ck_assert_str_eq(r.v[8].test, D "test_teardown_error");
	for (size_t i = 0; i < r.n; i++)
		ck_assert_uint_eq(r.v[i].position, i);
	flaky_results_free(&r);
}

START_TEST(pytest_plain)
{
	check_failures_only("pytest/plain.txt", 1);
	check_failures_only("pytest/q.txt", 0);
}
END_TEST

/* pytest-xdist: positions are the order of the [gwN] lines; a teardown
 * error far from its PASSED line is the same test; a crashed worker's
 * block gives the message. */
START_TEST(pytest_xdist)
{
	struct flaky_results	 r;
	const struct flaky_result *v;
	char			*text, *line, *save;
	size_t			 len, pos = 0;

	pt_fixture("pytest/xdist.txt", NULL, &r);
	assert_demo_meta(&r, 1);
	ck_assert_uint_eq(r.n, NDEMO);
	pt_assert_has(&r, demo, NDEMO - 1);
	/* The order of the "[gwN] [ 10%] WORD id" lines (a test named twice,
	 * for its teardown error, counts once), read here the simple way. */
	text = tu_slurp("pytest/xdist.txt", &len);
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char	*id;
		size_t	 k;

		if (strncmp(line, "[gw", 3) != 0 ||
		    (id = strstr(line, "%] ")) == NULL ||
		    (id = strchr(id + 3, ' ')) == NULL)
			continue;
		id++;
		k = strlen(id);
		while (k > 0 && id[k - 1] == ' ')
			id[--k] = '\0';
		if (pt_find(&r, id) == NULL)
			ck_abort_msg("%s not parsed", id);
		if (pt_find(&r, id)->position < pos)
			continue;
		ck_assert_str_eq(r.v[pos].test, id);
		pos++;
	}
	ck_assert_uint_eq(pos, NDEMO);
	free(text);
	/* pytest-timeout fails the test or kills its worker (the committed
	 * capture); a re-capture may show either. */
	text = tu_slurp("pytest/xdist.txt", &len);
	v = pt_find(&r, D "test_timeout");
	ck_assert_int_eq(v->outcome, FLAKY_FAIL);
	if (strstr(text, "crashed while running") != NULL)
		ck_assert_str_eq(v->message, "worker 'gw1' crashed while "
		    "running 'src/test_demo.py::test_timeout'");
	else
		ck_assert_str_eq(v->message, "Failed: Timeout >0.5s\n"
		    "src/test_demo.py:109: Failed");
	free(text);
	flaky_results_free(&r);
}
END_TEST

START_TEST(pytest_random_order)
{
	struct flaky_results	 r;

	pt_fixture("pytest/random_order.txt", NULL, &r);
	assert_demo_meta(&r, 1);
	ck_assert_str_eq(r.seed, "4242");
	ck_assert_uint_eq(r.n, NDEMO);
	pt_assert_has(&r, demo, NDEMO);
	ck_assert_str_eq(r.v[0].test, D "test_prints_no_newline");
	ck_assert_str_eq(r.v[1].test, D "test_ids[ - dash - ]");
	ck_assert_str_eq(r.v[2].test, D "test_prints");
	flaky_results_free(&r);
}
END_TEST

/* Ids as they are: UTF-8 straight through. */
START_TEST(pytest_unicode)
{
	struct flaky_results	 r;
	struct expect		 e[NDEMO];

	memcpy(e, demo, sizeof e);
	e[15].test = D "test_ids[caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac]";
	e[13].test = D "test_ids[back\\slash]";
	e[14].test = D "test_ids[tab\there]";
	pt_fixture("pytest/unicode.txt", NULL, &r);
	assert_demo_meta(&r, 1);
	pt_assert_exact(&r, e, NDEMO);
	flaky_results_free(&r);
}
END_TEST

/* --durations=0 -vv: each test's phases add up; 10 ms resolution. The
 * warnings summary lists a bare id that is not a new test. */
START_TEST(pytest_durations)
{
	struct flaky_results	 r;
	const struct flaky_result *t;

	pt_fixture("pytest/durations.txt", NULL, &r);
	assert_demo_meta(&r, 1);
	ck_assert_uint_eq(r.n, NDEMO);
	for (size_t i = 0; i < r.n; i++) {
		ck_assert_str_eq(r.v[i].test, demo[i].test);
		ck_assert_int_ge(r.v[i].duration_us, 0);
	}
	t = pt_find(&r, D "test_timeout");
	ck_assert_int_ge(t->duration_us, 500000);
	ck_assert_int_lt(t->duration_us, 5000000);
	ck_assert_int_eq(t->duration_us % 10000, 0);
	flaky_results_free(&r);

	pt_text("======= test session starts =======\n"
	    "t.py::a PASSED\nt.py::b FAILED\n"
	    "======= slowest 3 durations =======\n"
	    "1.25s call     t.py::a\n0.01s setup    t.py::a\n"
	    "12.5s teardown t.py::b\n0.50s call     t.py::nonesuch\n"
	    "===== 1 failed, 1 passed in 14.01s =====\n", &r);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_int_eq(r.v[0].duration_us, 1260000);
	ck_assert_int_eq(r.v[1].duration_us, 12500000);
	flaky_results_free(&r);
}
END_TEST

/* --tb=native: Python's traceback; its exception lines are the message. */
START_TEST(pytest_tb_native)
{
	struct flaky_results	 r;
	struct expect		 e[NDEMO];

	memcpy(e, demo, sizeof e);
	e[1].msg = "AssertionError: value of a was wrong\nassert 1 == 2";
	e[3].msg = "RuntimeError: fixture exploded";
	e[22].msg = "AssertionError: assert [1, 2, 3] == [1, 2, 4]";
	e[24].msg = "AssertionError: assert 2 == 1";
	e[28].msg = "OSError: teardown failed";
	pt_fixture("pytest/tb_native.txt", NULL, &r);
	assert_demo_meta(&r, 1);
	pt_assert_exact(&r, e, NDEMO);
	ck_assert_str_eq(r.v[1].message,
	    "AssertionError: value of a was wrong\nassert 1 == 2");
	ck_assert_str_eq(r.v[2].message, "ValueError: bad value 42");
	flaky_results_free(&r);
}
END_TEST

START_TEST(pytest_collect_error)
{
	struct flaky_results	 r;

	pt_fixture("pytest/collect_error.txt", NULL, &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_int_eq(r.summary_total, 1);
	ck_assert_str_eq(r.v[0].test, "src/collect/test_broken.py");
	ck_assert_int_eq(r.v[0].outcome, FLAKY_ERROR);
	ck_assert_str_eq(r.v[0].message, "ModuleNotFoundError: No module "
	    "named 'no_such_module_for_flaky'");
	flaky_results_free(&r);
}
END_TEST

/* A plugin that fails to load stops pytest before any test: its
 * exception is the reason given, not "no test result was found". */
START_TEST(pytest_internal_error)
{
	struct flaky_results	 r;

	pt_fixture("pytest/internal_error.txt", NULL, &r);
	ck_assert_uint_eq(r.n, 0);
	ck_assert_ptr_nonnull(r.warning);
	ck_assert_str_eq(r.warning, "stopped with an internal error: "
	    "pluggy._manager.PluginValidationError: unknown hook "
	    "'pytest_configure_node' in plugin <module 'pytest_rerunfailures' "
	    "from '/usr/lib/python3/dist-packages/pytest_rerunfailures.py'>");
	flaky_results_free(&r);
}
END_TEST

/* pytest stopped before any test, as pytest 7.2.1 prints it (exit 4):
 * the reason is said, and a usage error or a conftest's ImportError,
 * which print no header, are still known as pytest's. */
START_TEST(pytest_stopped_early)
{
	static const struct {
		const char	*rel, *why;
	} c[] = {
		{ "pytest/conftest_import_error.txt", "could not import "
		    "conftest '/tmp/nu/cf/conftest.py': ModuleNotFoundError: "
		    "No module named 'no_such_module_for_flaky_conftest'" },
		{ "pytest/usage_error.txt",
		    "stopped: unrecognized arguments: --bogus" },
		{ "pytest/not_found.txt",
		    "stopped: file or directory not found: nonexist" },
	};

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(c); i++) {
		struct flaky_results	 r;

		pt_fixture(c[i].rel, NULL, &r);
		ck_assert_msg(r.runner != NULL && strcmp(r.runner, "pytest")
		    == 0, "%s: runner %s", c[i].rel, r.runner ? r.runner :
		    "none");
		ck_assert_uint_eq(r.n, 0);
		ck_assert_ptr_nonnull(r.warning);
		ck_assert_str_eq(r.warning, c[i].why);
		flaky_results_free(&r);
	}
}
END_TEST

/* The run died inside a test (pytest-timeout's thread method ends the
 * process): that test is the one to blame, not lost. */
START_TEST(pytest_killed)
{
	struct flaky_results	 r;

	pt_fixture("pytest/hang.txt", NULL, &r);
	ck_assert_int_eq(r.summary_total, -1);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_str_eq(r.v[0].test, "src/hang/test_hang.py::test_before");
	ck_assert_int_eq(r.v[0].outcome, FLAKY_PASS);
	ck_assert_str_eq(r.v[1].test, "src/hang/test_hang.py::test_hangs");
	ck_assert_int_eq(r.v[1].outcome, FLAKY_ERROR);
	ck_assert_ptr_nonnull(strstr(r.v[1].message, "output ended"));
	flaky_results_free(&r);

	/* When its "+++ Timeout +++" line made it to stdout. */
	pt_text("=========== test session starts ===========\n"
	    "t.py::test_hangs \n"
	    "+++++++++++++++++++++ Timeout +++++++++++++++++++++\n", &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_int_eq(r.v[0].outcome, FLAKY_FAIL);
	ck_assert_ptr_nonnull(strstr(r.v[0].message, "Timeout"));
	flaky_results_free(&r);
}
END_TEST

/* 1,000 tests: every one accounted for, as the runner counts them. */
START_TEST(pytest_big)
{
	struct flaky_results	 r;
	size_t			 failed = 0;
	char			 id[128];

	pt_fixture("pytest/big_v.txt", NULL, &r);
	ck_assert_int_eq(r.summary_total, 1000);
	ck_assert_uint_eq(r.n, (size_t)r.summary_total);
	for (size_t i = 0; i < r.n; i++) {
		ck_assert_uint_eq(r.v[i].position, i);
		if (i < 900)
			snprintf(id, sizeof id,
			    "src/test_big.py::test_param[%zu]", i);
		else
			snprintf(id, sizeof id,
			    "src/test_big.py::test_plain_%03zu", i - 900);
		ck_assert_str_eq(r.v[i].test, id);
		if (r.v[i].outcome == FLAKY_FAIL) {
			failed++;
			ck_assert_ptr_nonnull(strstr(r.v[i].message,
			    i < 900 ? "is unlucky" : "failed"));
		} else
			ck_assert_int_eq(r.v[i].outcome, FLAKY_PASS);
	}
	ck_assert_uint_eq(failed, 14);
	ck_assert_int_eq(pt_find(&r, "src/test_big.py::test_param[5]")->outcome,
	    FLAKY_FAIL);
	ck_assert_str_eq(pt_find(&r,
	    "src/test_big.py::test_param[102]")->message,
	    "AssertionError: case 102 is unlucky\nassert (102 % 97) != 5\n"
	    "src/test_big.py:8: AssertionError");
	flaky_results_free(&r);

	pt_fixture("pytest/big_plain.txt", NULL, &r);
	ck_assert_int_eq(r.summary_total, 1000);
	ck_assert_uint_eq(r.n, 14);
	flaky_results_free(&r);
}
END_TEST

/* What this machine's plugins do not print, and -s corner cases. */
START_TEST(pytest_handwritten)
{
	struct flaky_results	 r;

	pt_text("platform linux -- Python 3.12.1, pytest-8.0.0, "
	    "pluggy-1.4.0\nUsing --randomly-seed=1234567\nrootdir: /x\n"
	    "collected 2 items\n\n"
	    "t/a.py::test_a PASSED\n"
	    "t/a.py::TestB::test_b <- t/base.py FAILED  [100%]\n"
	    "\x1b[32mt/a.py::test_c \x1b[32mPASSED\x1b[0m   [ 50%]\n"
	    "t/a.py::test_d \n"
	    "------------------------ live log call -------------------------\n"
	    "INFO     root:a.py:5 hello\n"
	    "SKIPPED (no network)                                     [ 75%]\n"
	    "t/a.py::test_e out that ends in PASSED\n"
	    "FAILED\n"
	    "t/a.py::test_f[a PASSED (x)] XFAIL (why (really))\n"
	    "t/data.yaml::my check PASSED\n"
	    "t/a.py::test_g[5%] PASSED [ 8/10]\n"
	    "t/a.py::test_h[50%] \nPASSED\n"
	    "========= 1 failed, 4 passed, 1 skipped, 1 xfailed, 3 warnings, "
	    "2 deselected in 75.10s (0:01:15) =========\n", &r);
	ck_assert_str_eq(r.runner, "pytest");
	ck_assert_str_eq(r.version, "8.0.0");
	ck_assert_str_eq(r.seed, "1234567");
	ck_assert_int_eq(r.summary_total, 7);
	ck_assert_uint_eq(r.n, 9);
	ck_assert_str_eq(r.v[0].test, "t/a.py::test_a");
	ck_assert_str_eq(r.v[1].test, "t/a.py::TestB::test_b");
	ck_assert_int_eq(r.v[1].outcome, FLAKY_FAIL);
	ck_assert_str_eq(r.v[2].test, "t/a.py::test_c");
	ck_assert_str_eq(r.v[3].test, "t/a.py::test_d");
	ck_assert_int_eq(r.v[3].outcome, FLAKY_SKIP);
	/* A status word at the end of the output is corrected by the real
	 * one on the next line. */
	ck_assert_str_eq(r.v[4].test, "t/a.py::test_e");
	ck_assert_int_eq(r.v[4].outcome, FLAKY_FAIL);
	ck_assert_str_eq(r.v[5].test, "t/a.py::test_f[a PASSED (x)]");
	ck_assert_int_eq(r.v[5].outcome, FLAKY_XFAIL);
	ck_assert_str_eq(r.v[6].test, "t/data.yaml::my check");
	ck_assert_str_eq(r.v[7].test, "t/a.py::test_g[5%]");
	ck_assert_str_eq(r.v[8].test, "t/a.py::test_h[50%]");
	ck_assert_int_eq(r.v[8].outcome, FLAKY_PASS);
	flaky_results_free(&r);

	/* XPASS names its reason without " - "; a summary after -v lines
	 * adds no test. */
	pt_text("============ test session starts ============\n"
	    "t.py::test_x[a b] XPASS (fixed?)\n"
	    "t.py::test_y FAILED\n"
	    "t.py::test_y ERROR\n"
	    "====== short test summary info ======\n"
	    "XPASS t.py::test_x[a b] fixed?\n"
	    "FAILED t.py::test_y - ValueError: boom\n"
	    "ERROR t.py::test_y - OSError: teardown\n"
	    "FAILED t.py::test_z - only in the summary\n"
	    "==== 2 failed, 1 xpassed, 1 error in 0.01s ====\n", &r);
	ck_assert_uint_eq(r.n, 3);
	ck_assert_str_eq(r.v[0].test, "t.py::test_x[a b]");
	ck_assert_int_eq(r.v[0].outcome, FLAKY_XPASS);
	ck_assert_int_eq(r.v[1].outcome, FLAKY_FAIL);
	ck_assert_str_eq(r.v[1].message, "ValueError: boom");
	ck_assert_str_eq(r.v[2].test, "t.py::test_z");
	ck_assert_str_eq(r.v[2].message, "only in the summary");
	ck_assert_int_eq(r.summary_total, 4);
	flaky_results_free(&r);
}
END_TEST

/* Garbage, binary and half lines: a warning, never a crash. */
START_TEST(garbage)
{
	struct flaky_results	 r;
	char			*buf;
	uint64_t		 x = 88172645463325252ULL;
	static const char *const texts[] = {
		"",
		"\n\n\n",
		"hello world\nthis is not a test runner\n",
		"================\n____ x ____\n::\n[gw\n[gw0] \n",
		"a (b.c) ... \n  a (b.c) (x) ... FAIL\n",
		"=== FAILURES ===\n____ t ____\nE\n=== short test summary "
		"info ===\nFAILED\nFAILED \nXPASS x",
	};

	static const char nul[] = "===== test session starts =====\n"
	    "t.py::a\0b PASSED\nt.py::a PASSED\n";

	ck_assert_ptr_nonnull(buf = malloc(256 * 1024));
	for (size_t i = 0; i < 256 * 1024; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (char)(x & 0xff);
	}
	tu_parse_chunked(buf, 256 * 1024, 0, NULL, &r);
	ck_assert_ptr_nonnull(r.warning);
	ck_assert_uint_eq(r.n, 0);
	flaky_results_free(&r);
	tu_parse_chunked(buf, 256 * 1024, 7, NULL, &r);
	ck_assert_ptr_nonnull(r.warning);
	flaky_results_free(&r);
	/* Binary in the middle of real output keeps what is real. */
	memcpy(buf, "===== test session starts =====\n", 32);
	memcpy(buf + 1000, "\nt.py::test_a PASSED\n", 21);
	tu_parse_chunked(buf, 64 * 1024, 0, NULL, &r);
	ck_assert_str_eq(r.runner, "pytest");
	ck_assert_ptr_nonnull(pt_find(&r, "t.py::test_a"));
	flaky_results_free(&r);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(texts); i++) {
		tu_parse_chunked(texts[i], strlen(texts[i]), 0, NULL, &r);
		flaky_results_free(&r);
	}
	/* A NUL inside an id does not make two ids one. */
	tu_parse_chunked(nul, sizeof nul - 1, 0, NULL, &r);
	ck_assert_uint_eq(r.n, 2);
	flaky_results_free(&r);
	free(buf);
}
END_TEST

static void
add_tests(TCase *tc)
{
	setup_ids();	/* before the tests fork */
	tcase_add_test(tc, pytest_verbose);
	tcase_add_test(tc, pytest_verbose_s_rA);
	tcase_add_test(tc, pytest_rA);
	tcase_add_test(tc, pytest_plain);
	tcase_add_test(tc, pytest_xdist);
	tcase_add_test(tc, pytest_random_order);
	tcase_add_test(tc, pytest_unicode);
	tcase_add_test(tc, pytest_durations);
	tcase_add_test(tc, pytest_tb_native);
	tcase_add_test(tc, pytest_collect_error);
	tcase_add_test(tc, pytest_internal_error);
	tcase_add_test(tc, pytest_stopped_early);
	tcase_add_test(tc, pytest_killed);
	tcase_add_test(tc, pytest_big);
	tcase_add_test(tc, pytest_handwritten);
	tcase_add_test(tc, garbage);
}

int
main(void)
{
	return pt_run("parse_pytest", add_tests);
}
