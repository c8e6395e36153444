/* parse: cargo test (libtest), GoogleTest and ctest, RSpec and PHPUnit,
 * against output captured from the real runners on Debian 12, from public
 * projects and our demos (tests/fixtures/capture-native.sh). */
#include "buildconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"
#include "parse_test.h"
#include "test_helper.h"
#include "util/util.h"

#define SKIPD	(-2)	/* do not check the duration */

/* A fixture's results, whole and in chunks (the same). */
static struct flaky_results
fx(const char *rel)
{
	struct flaky_results	 r;

	pt_fixture(rel, NULL, &r);
	return r;
}

/* The result of id, which must be there. */
static const struct flaky_result *
must(const struct flaky_results *r, const char *id)
{
	const struct flaky_result *x = pt_find(r, id);

	ck_assert_msg(x != NULL, "no result %s", id);
	return x;
}

START_TEST(cargo_demo)
{
	static const struct want w[] = {
		{ "cart::tests::refunds", FLAKY_SKIP, -1, NULL },
		{ "cart::tests::adds_items", FLAKY_PASS, -1, NULL },
		{ "cart::tests::talks_to_legacy_api", FLAKY_FAIL, -1,
		    "the legacy API answered 1" },
		{ "cart::tests::retries_payment", FLAKY_FAIL, -1,
		    "payment gateway timed out (run 1)" },
		{ "finds_nothing_in_an_empty_index", FLAKY_PASS, -1, NULL },
		{ "words::finds_a_word", FLAKY_PASS, -1, NULL },
		{ "src/lib.rs - (line 6)", FLAKY_PASS, -1, NULL },
		{ "src/lib.rs - cart::total (line 28)", FLAKY_PASS, -1, NULL },
	};
	struct flaky_results	 r = fx("cargo/demo-no-fail-fast.txt");

	ck_assert_str_eq(r.runner, "cargo");
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
	ck_assert_int_eq(r.summary_total, 8);
	ck_assert_ptr_null(r.incomplete);
	/* cargo's own lines, merged in, name no test */
	ck_assert_ptr_null(pt_find(&r, "result: FAILED."));
	flaky_results_free(&r);

	/* A newer Rust's panic: "panicked at FILE:LINE:COL:" then the
	 * message on a line of its own. */
	r = fx("cargo/demo-rust-1.95.txt");
	ck_assert_uint_eq(r.n, 8);
	ck_assert_ptr_nonnull(strstr(must(&r, "cart::tests::retries_payment")
	    ->message, "payment gateway timed out (run 1)"));
	ck_assert_ptr_null(r.incomplete);
	flaky_results_free(&r);
}
END_TEST

/* unittest -v prints a docstring's first line before the status: one
 * that starts with "test" is not libtest's line. */
START_TEST(cargo_not_unittest)
{
	struct flaky_results	 r;

	pt_text("test_add (calc.TestCalc.test_add)\n"
	    "test that it adds ... ok\n"
	    "test_sub (calc.TestCalc.test_sub) ... ok\n"
	    "\n----------------------------------------------------------"
	    "------------\nRan 2 tests in 0.001s\n\nOK\n", &r);
	ck_assert_str_eq(r.runner, "unittest");
	ck_assert_uint_eq(r.n, 2);
	flaky_results_free(&r);
}
END_TEST

/* --nocapture --test-threads=1: a test's own output breaks its line;
 * the status comes on a line of its own. */
START_TEST(cargo_nocapture)
{
	struct flaky_results	 r;

	pt_text("\nrunning 2 tests\n"
	    "test a ... hello from a\nok\n"
	    "test b ... thread 'b' panicked at 'boom', src/lib.rs:3:5\n"
	    "FAILED\n\nfailures:\n\nfailures:\n    b\n\n"
	    "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; "
	    "0 filtered out; finished in 0.00s\n", &r);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_str_eq(r.v[0].test, "a");
	ck_assert_int_eq(r.v[0].outcome, FLAKY_PASS);
	ck_assert_str_eq(r.v[1].test, "b");
	ck_assert_int_eq(r.v[1].outcome, FLAKY_FAIL);
	ck_assert_ptr_null(r.incomplete);
	flaky_results_free(&r);
}
END_TEST

/* A failing unit test stops cargo before the other binaries: stdout
 * alone looks whole, and cargo's stderr says it stopped; as a run reads
 * both streams (run.c merges them), the run is incomplete. */
START_TEST(cargo_fail_fast)
{
	struct flaky_results	 out = fx("cargo/demo.txt");
	struct flaky_results	 err = fx("cargo/demo.stderr.txt");

	ck_assert_uint_eq(out.n, 4);
	ck_assert_ptr_null(out.incomplete);
	ck_assert_uint_eq(err.n, 0);
	ck_assert_str_eq(err.runner, "cargo");
	ck_assert_int_eq(flaky_results_merge(&out, &err), 0);
	ck_assert_str_eq(out.incomplete, "cargo test stopped at the first "
	    "test binary that failed, so the binaries after it did not run: "
	    "add --no-fail-fast");
	flaky_results_free(&out);
	flaky_results_free(&err);
	/* a passing run's stderr is no runner's output */
	out = fx("cargo/strsim.stderr.txt");
	ck_assert_str_eq(out.runner, "");
	flaky_results_free(&out);
}
END_TEST

START_TEST(cargo_strsim)
{
	static const char *const forms[] = { "cargo/strsim.txt",
	    "cargo/strsim-merged.txt", "cargo/strsim-threads1.txt",
	    "cargo/strsim-report-time.txt", "cargo/strsim-shuffle.txt" };

	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(forms); k++) {
		struct flaky_results r = fx(forms[k]);

		ck_assert_uint_eq(r.n, 107);
		ck_assert_uint_eq(pt_count(&r, FLAKY_PASS), 107);
		ck_assert_int_eq(r.summary_total, 107);
		ck_assert_ptr_null(r.incomplete);
		must(&r, "tests::hamming_empty");
		must(&r, "jaro_winkler_works");
		must(&r, "src/lib.rs - hamming (line 77)");
		/* --report-time's "<0.000s>" is a duration */
		ck_assert(k == 3 ? r.v[0].duration_us >= 0 :
		    r.v[0].duration_us == -1);
		ck_assert(k == 4 ? r.seed != NULL && strcmp(r.seed, "42") == 0 :
		    r.seed == NULL);
		flaky_results_free(&r);
	}
	/* -q: a dot per test, no name */
	struct flaky_results r = fx("cargo/strsim-q.txt");

	ck_assert_uint_eq(r.n, 0);
	ck_assert_str_eq(r.incomplete, "libtest printed only failing tests "
	    "(107 in its summaries, 0 parsed): run it without -q or with -- "
	    "--format pretty");
	flaky_results_free(&r);
	r = fx("cargo/demo-q.txt");
	ck_assert_uint_eq(r.n, 2);
	ck_assert_int_eq(r.v[0].outcome, FLAKY_FAIL);
	ck_assert_ptr_nonnull(r.v[0].message);
	ck_assert_ptr_nonnull(r.incomplete);
	flaky_results_free(&r);
	/* selected by --exact: one test */
	r = fx("cargo/strsim-exact.txt");
	ck_assert_uint_eq(r.n, 1);
	ck_assert_str_eq(r.v[0].test, "tests::hamming_empty");
	flaky_results_free(&r);
}
END_TEST

START_TEST(gtest_demo)
{
	static const struct want w[] = {
		{ "Cart.AddsItems", FLAKY_PASS, SKIPD, NULL },
		{ "Cart.RetriesPayment", FLAKY_FAIL, SKIPD,
		    "payment gateway timed out (run 1)" },
		{ "Cart.TalksToLegacyApi", FLAKY_FAIL, SKIPD,
		    "the legacy API answered 1" },
		{ "Cart.DISABLED_Refunds", FLAKY_SKIP, -1, NULL },
		{ "Cart.SkipsWithoutNetwork", FLAKY_SKIP, SKIPD, NULL },
		{ "Amounts/0.StartAtZero", FLAKY_PASS, SKIPD, NULL },
		{ "Amounts/1.StartAtZero", FLAKY_PASS, SKIPD, NULL },
		{ "Small/Prices.ArePositive/0", FLAKY_PASS, SKIPD, NULL },
		{ "Small/Prices.ArePositive/1", FLAKY_PASS, SKIPD, NULL },
	};
	struct flaky_results	 r = fx("gtest/demo.txt");

	ck_assert_str_eq(r.runner, "gtest");
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
	/* disabled tests are not in GoogleTest's count */
	ck_assert_int_eq(r.summary_total, 8);
	ck_assert_ptr_null(r.incomplete);
	flaky_results_free(&r);

	r = fx("gtest/demo-brief.txt");
	ck_assert_uint_eq(r.n, 2);
	ck_assert_str_eq(r.v[0].test, "Cart.RetriesPayment");
	ck_assert_str_eq(r.v[1].test, "Cart.TalksToLegacyApi");
	ck_assert_ptr_null(strstr(r.v[0].message, "Running main()"));
	ck_assert_ptr_nonnull(strstr(r.v[1].message, "the legacy API"));
	ck_assert_str_eq(r.incomplete, "GoogleTest printed only failing tests "
	    "(8 in its summary, 2 parsed): run it without --gtest_brief");
	flaky_results_free(&r);
}
END_TEST

/* ctest names its tests its own way (gtest_discover_tests: typed tests
 * by their type, parameterized ones by their value, DISABLED_ dropped);
 * -V and --output-on-failure add the failed tests' output. */
START_TEST(gtest_ctest)
{
	static const char *const forms[] = { "gtest/demo-ctest.txt",
	    "gtest/demo-ctest-V.txt", "gtest/demo-ctest-oof.txt",
	    "gtest/demo-ctest-j2.txt" };

	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(forms); k++) {
		struct flaky_results r = fx(forms[k]);
		const struct flaky_result *x;

		ck_assert_uint_eq(r.n, 9);
		ck_assert_int_eq(r.summary_total, 8);
		ck_assert_ptr_null(r.incomplete);
		ck_assert_int_eq(must(&r, "Cart.Refunds")->outcome, FLAKY_SKIP);
		ck_assert_int_eq(must(&r, "Amounts.StartAtZero<long>")->outcome,
		    FLAKY_PASS);
		must(&r, "Small/Prices.ArePositive/2");
		x = must(&r, "Cart.TalksToLegacyApi");
		ck_assert_int_eq(x->outcome, FLAKY_FAIL);
		ck_assert(x->duration_us >= 0);
		if (k == 0)
			ck_assert_ptr_null(x->message);
		else {
			ck_assert_ptr_nonnull(strstr(x->message,
			    "the legacy API answered 1"));
			ck_assert_ptr_null(strstr(x->message, "[ RUN"));
			ck_assert_ptr_null(strstr(x->message, "Start "));
		}
		ck_assert_int_eq(must(&r, "Cart.RetriesPayment")->outcome,
		    FLAKY_FAIL);
		flaky_results_free(&r);
	}
}
END_TEST

/* A ctest line whose dots run into " sec", with no status between (the
 * fuzzer's, once a read far past the line): not a result. */
START_TEST(gtest_ctest_no_status)
{
	static const char out[] =
	    "Test project /tmp/gb\n"
	    "1/2 Test #1: Cart.AddsItems .......   Passed    0.00 sec\n"
	    "2/2 Test #2: Cart.Pays .. sec\n";
	struct flaky_results r;

	tu_parse_chunked(out, sizeof out - 1, sizeof out - 1, NULL, &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_str_eq(r.v[0].test, "Cart.AddsItems");
	flaky_results_free(&r);
}
END_TEST

/* ctest killed at a time limit (issue 33): the test it had started and
 * not finished is a failure, so that the run's TIMEOUT names it. */
START_TEST(gtest_ctest_killed)
{
	static const struct want w[] = {
		{ "deposit", FLAKY_PASS, SKIPD, NULL },
		{ "transfer", FLAKY_FAIL, SKIPD, "no result printed: ctest's "
		    "output ended while this test ran" },
	};
	struct flaky_results	 r;

	pt_text("Test project /src/demo/build\n"
	    "    Start 1: deposit\n"
	    "1/3 Test #1: deposit ..........................   Passed    "
	    "0.01 sec\n"
	    "    Start 2: transfer\n", &r);
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
	ck_assert_uint_eq(r.n, 2);
	flaky_results_free(&r);
}
END_TEST

START_TEST(gtest_yaml_cpp)
{
	struct flaky_results	 r = fx("gtest/yaml-cpp.txt"), s;

	/* 1054 tests ran, and 8 disabled ones are skips GoogleTest does
	 * not count */
	ck_assert_uint_eq(r.n, 1062);
	ck_assert_int_eq(r.summary_total, 1054);
	ck_assert_ptr_null(r.incomplete);
	ck_assert_uint_eq(pt_count(&r, FLAKY_PASS), 1054);
	ck_assert_uint_eq(pt_count(&r, FLAKY_SKIP), 8);
	must(&r, "NodeTest.SimpleScalar");
	/* shuffled: the same tests, the seed recorded */
	s = fx("gtest/yaml-cpp-shuffle.txt");
	ck_assert_uint_eq(s.n, r.n);
	ck_assert_str_eq(s.seed, "42");
	flaky_results_free(&s);
	/* --gtest_brief of a passing run: the summary alone */
	s = fx("gtest/yaml-cpp-brief.txt");
	ck_assert_str_eq(s.runner, "gtest");
	ck_assert_uint_eq(s.n, 0);
	ck_assert_int_eq(s.summary_total, 1054);
	ck_assert_ptr_nonnull(s.incomplete);
	flaky_results_free(&s);
	s = fx("gtest/yaml-cpp-filter.txt");
	ck_assert_uint_eq(s.n, 1);
	ck_assert_str_eq(s.v[0].test, "NodeTest.SimpleScalar");
	flaky_results_free(&s);
	/* under ctest the binary is one test (add_test) */
	s = fx("gtest/yaml-cpp-ctest.txt");
	ck_assert_uint_eq(s.n, 1);
	ck_assert_str_eq(s.v[0].test, "yaml-cpp::test");
	ck_assert_int_eq(s.v[0].outcome, FLAKY_PASS);
	flaky_results_free(&s);
	s = fx("gtest/yaml-cpp-ctest-V.txt");
	ck_assert_uint_eq(s.n, 1);
	flaky_results_free(&s);
	flaky_results_free(&r);
}
END_TEST

START_TEST(rspec_demo)
{
	static const struct expect doc[] = {
		{ "Cart adds items", FLAKY_PASS, NULL },
		{ "Cart counts 1 item", FLAKY_PASS, NULL },
		{ "Cart counts 2 item", FLAKY_PASS, NULL },
		{ "Cart checkout retries the payment", FLAKY_FAIL,
		    "payment gateway timed out (run 1)" },
		{ "Cart checkout talks to the legacy API", FLAKY_FAIL,
		    "expected: 2" },
		{ "Cart checkout refunds", FLAKY_SKIP, NULL },
		{ "Cart checkout ships abroad", FLAKY_SKIP, NULL },
		{ "search finds nothing in an empty index", FLAKY_PASS, NULL },
		{ "search finds a word", FLAKY_PASS, NULL },
	};
	struct flaky_results	 r = fx("rspec/demo-doc.txt");

	ck_assert_str_eq(r.runner, "rspec");
	pt_assert_exact(&r, doc, FLAKY_ARRAY_SIZE(doc));
	ck_assert_int_eq(r.summary_total, 9);
	ck_assert_ptr_null(r.incomplete);
	ck_assert_ptr_null(r.seed);
	flaky_results_free(&r);

	/* --order rand:3: the run's order, its seed */
	r = fx("rspec/demo-doc-rand.txt");
	ck_assert_str_eq(r.seed, "3");
	ck_assert_str_eq(r.v[0].test, "search finds nothing in an empty index");
	pt_assert_has(&r, doc, FLAKY_ARRAY_SIZE(doc));
	flaky_results_free(&r);

	/* the progress formatter: failures only, from "Failures:" */
	r = fx("rspec/demo.txt");
	ck_assert_uint_eq(r.n, 2);
	ck_assert_ptr_nonnull(strstr(must(&r, "Cart checkout talks to the "
	    "legacy API")->message, "expected: 2"));
	ck_assert_str_eq(r.incomplete, "RSpec printed only failing examples "
	    "(9 in its summary, 2 parsed): run it with --format "
	    "documentation");
	flaky_results_free(&r);

	/* a file that does not load: RSpec runs nothing else */
	r = fx("rspec/load-error.txt");
	ck_assert_uint_eq(r.n, 1);
	ck_assert_str_eq(r.v[0].test, "/tmp/x/broken_spec.rb");
	ck_assert_int_eq(r.v[0].outcome, FLAKY_ERROR);
	ck_assert_ptr_nonnull(strstr(r.v[0].message, "syntax error"));
	ck_assert_ptr_nonnull(strstr(r.incomplete, "outside of examples"));
	flaky_results_free(&r);
}
END_TEST

START_TEST(rspec_tty_color)
{
	struct flaky_results	 r = fx("rspec/tty-color-doc.txt"), d;
	const struct flaky_result *x;

	ck_assert_uint_eq(r.n, 60);
	ck_assert_int_eq(r.summary_total, 60);
	ck_assert_ptr_null(r.incomplete);
	ck_assert_str_eq(r.seed, "42");
	/* a group described by a class and a method is one title */
	must(&r, "TTY::Color::Support#support? #from_env finds ansicon "
	    "support");
	/* --profile's slowest examples give their durations */
	x = must(&r, "TTY::Color::Mode detecting mode #from_tput fails to "
	    "find tput utility");
	ck_assert_int_eq(x->duration_us, 30890);
	d = fx("rspec/tty-color-doc-defined.txt");
	ck_assert_uint_eq(d.n, 60);
	ck_assert_ptr_null(d.seed);
	for (size_t i = 0; i < d.n; i++)
		must(&r, d.v[i].test);
	flaky_results_free(&d);
	flaky_results_free(&r);
}
END_TEST

START_TEST(phpunit_demo)
{
	static const struct expect debug[] = {
		{ "Demo\\Tests\\CartTest::testAddsItems", FLAKY_PASS, NULL },
		{ "Demo\\Tests\\CartTest::testRetriesPayment", FLAKY_FAIL,
		    "payment gateway timed out (run 1)" },
		{ "Demo\\Tests\\CartTest::testTalksToLegacyApi", FLAKY_FAIL,
		    "the legacy API answered 1" },
		{ "Demo\\Tests\\CartTest::testRefunds", FLAKY_SKIP, NULL },
		{ "Demo\\Tests\\CartTest::testCounts with data set "
		    "\"one item\"", FLAKY_PASS, NULL },
		{ "Demo\\Tests\\CartTest::testCounts with data set "
		    "\"two items\"", FLAKY_PASS, NULL },
		{ "Demo\\Tests\\CartTest::testPrices with data set #0",
		    FLAKY_PASS, NULL },
		{ "Demo\\Tests\\CartTest::testPrices with data set #1",
		    FLAKY_PASS, NULL },
		{ "Demo\\Tests\\SearchTest::testFindsNothingInAnEmptyIndex",
		    FLAKY_PASS, NULL },
	};
	static const char *const whole[] = { "phpunit/demo-debug.txt",
	    "phpunit/demo-testdox-debug.txt" };
	struct flaky_results	 r;

	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(whole); k++) {
		r = fx(whole[k]);
		ck_assert_str_eq(r.runner, "phpunit");
		ck_assert_str_eq(r.version, "9.6.7");
		pt_assert_exact(&r, debug, FLAKY_ARRAY_SIZE(debug));
		ck_assert_int_eq(r.summary_total, 9);
		ck_assert_ptr_null(r.incomplete);
		flaky_results_free(&r);
	}
	/* --debug without -v: a skipped test is not named as such */
	r = fx("phpunit/demo-debug-no-v.txt");
	ck_assert_str_eq(r.incomplete, "PHPUnit skipped 1 tests without "
	    "naming them (it lists skipped and incomplete tests only with "
	    "-v): run it with -v");
	flaky_results_free(&r);
	r = fx("phpunit/demo.txt");
	ck_assert_uint_eq(r.n, 2);
	ck_assert_ptr_nonnull(strstr(r.incomplete, "run it with --debug -v"));
	flaky_results_free(&r);
	/* --testdox alone: prose, once (its summary repeats failures) */
	r = fx("phpunit/demo-testdox.txt");
	ck_assert_uint_eq(r.n, 9);
	ck_assert_str_eq(r.v[2].test,
	    "Demo\\Tests\\Cart > Talks to legacy api");
	ck_assert_int_eq(r.v[2].outcome, FLAKY_FAIL);
	ck_assert_ptr_nonnull(strstr(r.incomplete, "add --debug"));
	flaky_results_free(&r);
}
END_TEST

START_TEST(phpunit_parsedown)
{
	static const char *const forms[] = { "phpunit/parsedown-debug.txt",
	    "phpunit/parsedown-testdox-debug.txt",
	    "phpunit/parsedown-random.txt" };

	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(forms); k++) {
		struct flaky_results r = fx(forms[k]);

		ck_assert_uint_eq(r.n, 68);
		ck_assert_uint_eq(pt_count(&r, FLAKY_PASS), 68);
		ck_assert_ptr_null(r.incomplete);
		/* the data set's arguments are not part of the id */
		must(&r, "ParsedownTest::test_ with data set #0");
		must(&r, "ParsedownTest::test_ with data set #63");
		must(&r, "ParsedownTest::test_no_markup");
		ck_assert(k == 2 ? strcmp(r.seed, "42") == 0 : r.seed == NULL);
		flaky_results_free(&r);
	}
}
END_TEST

/* A duration of more digits than any run's milliseconds (the fuzzer's,
 * once an overflow): no duration, the name still clean. */
START_TEST(gtest_huge_duration)
{
	static const char out[] =
	    "[==========] Running 2 tests from 1 test suite.\n"
	    "[ RUN      ] Cart.AddsItems\n"
	    "[       OK ] Cart.AddsItems (99999999999999999999 ms)\n"
	    "[ RUN      ] Cart.Pays\n"
	    "[       OK ] Cart.Pays (12 ms)\n"
	    "[==========] 2 tests from 1 test suite ran. (12 ms total)\n"
	    "[  PASSED  ] 2 tests.\n";
	struct flaky_results r;

	tu_parse_chunked(out, sizeof out - 1, sizeof out - 1, NULL, &r);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_str_eq(must(&r, "Cart.AddsItems")->test, "Cart.AddsItems");
	ck_assert_int_eq(must(&r, "Cart.AddsItems")->duration_us, -1);
	ck_assert_int_eq(must(&r, "Cart.Pays")->duration_us, 12000);
	flaky_results_free(&r);
}
END_TEST

/* Each runner's output cut short, as when the run is killed: never
 * complete. (RSpec's documentation tree in defined order has no line of
 * its own before "Finished in": cut before it, it is not recognized.) */
START_TEST(cut_short)
{
	static const struct {
		const char	*rel;
		size_t		 lines;
	} cuts[] = {
		{ "cargo/strsim.txt", 50 },
		{ "cargo/demo-no-fail-fast.txt", 30 },
		{ "gtest/demo.txt", 20 }, { "gtest/demo-ctest.txt", 8 },
		{ "rspec/demo-doc-rand.txt", 8 },
		{ "phpunit/demo-debug.txt", 9 },
	};

	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(cuts); k++) {
		struct flaky_results r;
		size_t	 len, at = 0, lines = 0;
		char	*s = tu_slurp(cuts[k].rel, &len);

		while (at < len && lines < cuts[k].lines)
			lines += s[at++] == '\n';
		tu_parse_chunked(s, at, at, NULL, &r);
		ck_assert_msg(r.n > 0, "%s: no result", cuts[k].rel);
		ck_assert_msg(r.incomplete != NULL, "%s cut at %zu lines: "
		    "complete", cuts[k].rel, cuts[k].lines);
		flaky_results_free(&r);
		free(s);
	}
}
END_TEST

/* Add the tests. */
static void
add(TCase *tc)
{
	tcase_add_test(tc, cargo_demo);
	tcase_add_test(tc, gtest_ctest_killed);
	tcase_add_test(tc, cargo_fail_fast);
	tcase_add_test(tc, cargo_not_unittest);
	tcase_add_test(tc, cargo_nocapture);
	tcase_add_test(tc, cargo_strsim);
	tcase_add_test(tc, gtest_demo);
	tcase_add_test(tc, gtest_ctest);
	tcase_add_test(tc, gtest_yaml_cpp);
	tcase_add_test(tc, gtest_huge_duration);
	tcase_add_test(tc, gtest_ctest_no_status);
	tcase_add_test(tc, rspec_demo);
	tcase_add_test(tc, rspec_tty_color);
	tcase_add_test(tc, phpunit_demo);
	tcase_add_test(tc, phpunit_parsedown);
	tcase_add_test(tc, cut_short);
}

int
main(void)
{
	return pt_run("parse_native", add);
}
