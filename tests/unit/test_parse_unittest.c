/* parse: the unittest parser, against output captured from the real runner
 * (tests/fixtures/unittest, see capture.sh) and hand-written lines for
 * older Pythons. */
#include "buildconf.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "parse/parse.h"
#include "parse_test.h"
#include "test_helper.h"
#include "util/util.h"

#define U	"pkg.test_mod."

static const struct expect unit_v[] = {
	{ U "TestA.test_doc", FLAKY_PASS, NULL },
	{ U "TestA.test_doc_fail", FLAKY_FAIL,
	    "AssertionError: 'x' not found in 'abc'\nFile \"" },
	{ U "TestA.test_error", FLAKY_ERROR, "KeyError: 'missing key'" },
	{ U "TestA.test_fail", FLAKY_FAIL,
	    "AssertionError: Lists differ: [1, 2, 3] != [1, 2, 4]\n\n"
	    "First differing element 2:" },
	{ U "TestA.test_ok", FLAKY_PASS, NULL },
	{ U "TestA.test_prints", FLAKY_PASS, NULL },
	{ U "TestA.test_prints_stderr", FLAKY_PASS, NULL },
	{ U "TestA.test_skip", FLAKY_SKIP, NULL },
	{ U "TestA.test_subtests", FLAKY_FAIL,
	    "(i=1): AssertionError: 1 == 1\nFile \"" },
	{ U "TestA.test_subtests_ok", FLAKY_PASS, NULL },
	{ U "TestA.test_unicode_caf\xc3\xa9", FLAKY_FAIL,
	    "AssertionError: 'caf\xc3\xa9' != 'cafe'" },
	{ U "TestA.test_xfail", FLAKY_XFAIL, NULL },
	{ U "TestA.test_xpass", FLAKY_XPASS, NULL },
	{ U "TestSetUpError.test_with_setup", FLAKY_ERROR,
	    "OSError: set-up broke" },
	{ U "TestZ.test_last", FLAKY_PASS, NULL },
	/* setUpClass failed: its tests never ran; unittest counts none. */
	{ U "TestSetUpClassError.setUpClass", FLAKY_ERROR,
	    "RuntimeError: class set-up broke" },
};

START_TEST(unittest_verbose)
{
	static const char *const rel[] = {
		"unittest/v.txt", "unittest/v_merged.txt",
	};
	struct flaky_results	 r;

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(rel); i++) {
		pt_fixture(rel[i], NULL, &r);
		ck_assert_str_eq(r.runner, "unittest");
		ck_assert_ptr_null(r.version);
		ck_assert_ptr_null(r.seed);
		ck_assert_int_eq(r.summary_total, 15);
		pt_assert_exact(&r, unit_v, FLAKY_ARRAY_SIZE(unit_v));
		ck_assert_ptr_nonnull(strstr(r.v[8].message,
		    "\n(i=3): AssertionError: 1 == 1"));
		ck_assert_ptr_nonnull(strstr(r.v[1].message,
		    "test_mod.py\", line 39, in test_doc_fail"));
		flaky_results_free(&r);
	}
}
END_TEST

/* A test that ended its own process is the one to blame. */
START_TEST(unittest_killed)
{
	struct flaky_results	 r;

	pt_fixture("unittest/crash.txt", NULL, &r);
	ck_assert_str_eq(r.runner, "unittest");
	ck_assert_int_eq(r.summary_total, -1);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_str_eq(r.v[0].test, "crash.test_crash.TestCrash.test_a_fine");
	ck_assert_int_eq(r.v[0].outcome, FLAKY_PASS);
	ck_assert_str_eq(r.v[1].test, "crash.test_crash.TestCrash.test_b_dies");
	ck_assert_int_eq(r.v[1].outcome, FLAKY_ERROR);
	ck_assert_ptr_nonnull(strstr(r.v[1].message, "output ended"));
	flaky_results_free(&r);
}
END_TEST

/* Not verbose: the blocks name the tests that did not pass. */
START_TEST(unittest_quiet)
{
	struct flaky_results	 r;

	pt_fixture("unittest/quiet.txt", NULL, &r);
	ck_assert_str_eq(r.runner, "unittest");
	ck_assert_int_eq(r.summary_total, 15);
	ck_assert_uint_eq(r.n, 8);
	ck_assert_str_eq(r.v[0].test, U "TestA.test_error");
	ck_assert_int_eq(r.v[0].outcome, FLAKY_ERROR);
	ck_assert_str_eq(r.v[5].test, U "TestA.test_subtests");
	ck_assert_int_eq(r.v[5].outcome, FLAKY_FAIL);
	ck_assert_str_eq(r.v[7].test, U "TestA.test_xpass");
	ck_assert_int_eq(r.v[7].outcome, FLAKY_XPASS);
	flaky_results_free(&r);
}
END_TEST

/* Python < 3.11 names only the class; output breaks lines; ERROR in a
 * subtest is worse than FAIL. */
#define SEP	70	/* unittest's rules */

/* Doctests added by load_tests: "add (calc)" then "Doctest: calc.add ...
 * ok" (a top-level module: no dot in the parentheses), and those of a
 * real project (more-itertools, 165 of its 901). A "word (word)" line not
 * followed by "Doctest:" is no test. */
START_TEST(unittest_doctests)
{
	static const struct want w[] = {
		{ "tests.test_calc.CalcTest.test_add", FLAKY_PASS, -1, NULL },
		{ "tests.test_calc.CalcTest.test_both", FLAKY_PASS, -1, NULL },
		{ "tests.test_calc.CalcTest.test_mul", FLAKY_PASS, -1, NULL },
		{ "calc.add", FLAKY_PASS, -1, NULL },
		{ "calc.checked", FLAKY_PASS, -1, NULL },
		{ "calc.mul", FLAKY_PASS, -1, NULL },
	};
	static const char stray[] =
	    "test_a (m.T.test_a) ... ok\n"
	    "hello (world)\n"
	    "test_b (m.T.test_b) ... ok\n"
	    "\n"
	    "Ran 2 tests in 0.001s\n"
	    "hello (again)\n";
	struct flaky_results	 r;
	size_t			 doc = 0;

	pt_fixture("unittest/doctests.txt", NULL, &r);
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
	ck_assert_ptr_null(r.incomplete);
	flaky_results_free(&r);

	/* a failing doctest: its block gives the message */
	pt_fixture("unittest/doctests-fail.txt", NULL, &r);
	ck_assert_int_eq(r.n, 6);
	ck_assert_ptr_null(r.incomplete);
	ck_assert_int_eq(pt_find(&r, "calc.checked")->outcome, FLAKY_FAIL);
	ck_assert_ptr_nonnull(strstr(pt_find(&r, "calc.checked")->message,
	    "Failed doctest test for calc.checked"));
	flaky_results_free(&r);

	pt_fixture("unittest/more-itertools.txt", NULL, &r);
	ck_assert_int_eq(r.n, 901);
	ck_assert_int_eq(r.summary_total, 901);
	for (size_t i = 0; i < r.n; i++)
		doc += strncmp(r.v[i].test, "more_itertools.", 15) == 0;
	ck_assert_int_eq(doc, 165);
	ck_assert_ptr_nonnull(pt_find(&r, "more_itertools.more.adjacent"));
	ck_assert_ptr_nonnull(pt_find(&r,
	    "tests.test_more.AdjacentTests.test_typical"));
	flaky_results_free(&r);

	pt_text(stray, &r);
	ck_assert_int_eq(r.n, 2);
	ck_assert_str_eq(r.v[1].test, "m.T.test_b");
	ck_assert_ptr_null(r.incomplete);
	flaky_results_free(&r);
}
END_TEST

/* Doctest files (doctest.DocFileSuite): unittest prints the file's path,
 * then "Doctest: NAME ... ok"; the test is its id(), NAME with "_" for
 * ".", which is what --flaky-ids selects. Ours (bad.txt fails: the
 * example, what was expected and what came are its message, from past
 * the report's own rule) and Debian's python3-wadllib, whose index.rst
 * prints a warning between " ... " and its status. */
START_TEST(unittest_docfiles)
{
	static const struct want w[] = {
		{ "test_docs.Plain.test_one", FLAKY_PASS, -1, NULL },
		{ "good_rst", FLAKY_PASS, -1, NULL },
		{ "bad_txt", FLAKY_FAIL, -1, "Failed doctest test for bad.txt" },
	};
	static const struct want wl[] = {
		{ "NEWS_rst", FLAKY_PASS, -1, NULL },
		{ "index_rst", FLAKY_PASS, -1, NULL },
	};
	struct flaky_results	 r;
	const char		*m;

	pt_fixture("unittest/docfile.txt", NULL, &r);
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
	ck_assert_int_eq(r.summary_total, 3);
	ck_assert_ptr_null(r.incomplete);
	m = pt_find(&r, "bad_txt")->message;
	ck_assert_ptr_nonnull(strstr(m, "Expected:\n    5\nGot:\n    4"));
	flaky_results_free(&r);

	pt_fixture("unittest/wadllib_docfiles.txt", NULL, &r);
	pt_check(&r, wl, FLAKY_ARRAY_SIZE(wl));
	ck_assert_ptr_null(r.incomplete);
	flaky_results_free(&r);
}
END_TEST

/* A module that fails to import is a test of unittest's own: "pkg.test_x
 * (unittest.loader._FailedTest.pkg.test_x) ... ERROR", its id the part
 * in parentheses (Debian's python3-lazr.restfulclient without
 * wsgi_intercept and fixtures: 41 tests, 2 errors). */
START_TEST(unittest_failed_import)
{
	struct flaky_results	 r;
	const struct flaky_result *x;

	pt_fixture("unittest/lazr_restfulclient.txt", NULL, &r);
	ck_assert_int_eq(r.n, 41);
	ck_assert_int_eq(r.summary_total, 41);
	ck_assert_ptr_null(r.incomplete);
	ck_assert_int_eq(pt_count(&r, FLAKY_ERROR), 2);
	x = pt_find(&r, "unittest.loader._FailedTest.lazr.restfulclient."
	    "tests.test_oauth");
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(x->outcome, FLAKY_ERROR);
	ck_assert_ptr_nonnull(strstr(x->message, "No module named 'fixtures'"));
	flaky_results_free(&r);
}
END_TEST

START_TEST(unittest_handwritten)
{
	struct flaky_results	 r;
	static char		 text[2048];
	char			 eq[SEP + 1], dash[SEP + 1];

	memset(eq, '=', SEP);
	memset(dash, '-', SEP);
	eq[SEP] = dash[SEP] = '\0';
	ck_assert_int_lt(snprintf(text, sizeof text, "test_a (m.T) ... ok\n"
	    "test_b (m.T) ... hello ok\n"
	    "FAIL\n"
	    "test_c (m.T)\nDoc ... with dots ... ok\n"
	    "test_d (m.T) ... skipped \"it's off\"\n"
	    "test_e (m.T) ... \n"
	    "  test_e (m.T) [lbl] (i=1) ... FAIL\n"
	    "  test_e (m.T) (i=2) ... ERROR\n"
	    "test_f (m.T) ... printing\nmore\nunexpected success\n"
	    "\n%s\n"
	    "ERROR: test_e (m.T) (i=2)\n"
	    "%s\n"
	    "Traceback (most recent call last):\n"
	    "  File \"m.py\", line 3, in test_e\n"
	    "    x()\n"
	    "ValueError: no\n"
	    "\n"
	    "%s\n"
	    "Ran 6 tests in 0.001s\n\nFAILED (failures=1, errors=1)\n",
	    eq, dash, dash), (int)sizeof text);
	pt_text(text, &r);
	ck_assert_str_eq(r.runner, "unittest");
	ck_assert_int_eq(r.summary_total, 6);
	ck_assert_uint_eq(r.n, 6);
	ck_assert_str_eq(r.v[0].test, "m.T.test_a");
	ck_assert_str_eq(r.v[1].test, "m.T.test_b");
	ck_assert_int_eq(r.v[1].outcome, FLAKY_FAIL);
	ck_assert_str_eq(r.v[2].test, "m.T.test_c");
	ck_assert_int_eq(r.v[2].outcome, FLAKY_PASS);
	ck_assert_int_eq(r.v[3].outcome, FLAKY_SKIP);
	ck_assert_str_eq(r.v[4].test, "m.T.test_e");
	ck_assert_int_eq(r.v[4].outcome, FLAKY_ERROR);
	ck_assert_str_eq(r.v[4].message, "(i=2): ValueError: no\n"
	    "File \"m.py\", line 3, in test_e");
	ck_assert_int_eq(r.v[5].outcome, FLAKY_XPASS);
	flaky_results_free(&r);
}
END_TEST

static void
add_tests(TCase *tc)
{
	tcase_add_test(tc, unittest_verbose);
	tcase_add_test(tc, unittest_killed);
	tcase_add_test(tc, unittest_quiet);
	tcase_add_test(tc, unittest_docfiles);
	tcase_add_test(tc, unittest_failed_import);
	tcase_add_test(tc, unittest_handwritten);
	tcase_add_test(tc, unittest_doctests);
}

int
main(void)
{
	return pt_run("parse_unittest", add_tests);
}
