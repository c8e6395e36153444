/* parse: complete evidence or none. Every captured fixture is either
 * complete (it holds every test's outcome) or says why not, with the fix;
 * real runs that stop early (killed, --bail, process.exit, go's cache,
 * prove's verdict lines) give the tests they ran and no more. All from the
 * real runners' output (tests/fixtures, capture.sh and capture-js.sh). */
#include "buildconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"
#include "util/util.h"
#include "test_helper.h"

#define SEP	" \xe2\x80\xba "	/* Jest's " › " */
#define TURBO_TESTS	481	/* playwright/turbo-list.txt */

/* A fixture, whole and a byte at a time: the same verdict. */
static void
parse_fixture(const char *rel, struct flaky_results *r)
{
	struct flaky_results	 c;
	size_t			 len;
	char			*s = tu_slurp(rel, &len);

	tu_parse_chunked(s, len, len ? len : 1, "/work/x", r);
	tu_parse_chunked(s, len, 1, "/work/x", &c);
	ck_assert_uint_eq(r->n, c.n);
	ck_assert_msg((r->incomplete == NULL) == (c.incomplete == NULL) &&
	    (r->incomplete == NULL || strcmp(r->incomplete, c.incomplete) == 0),
	    "%s: chunking changed the verdict", rel);
	flaky_results_free(&c);
	free(s);
}

struct verdict {
	const char	*rel;
	const char	*runner;
	size_t		 n;		/* results */
	long		 total;		/* the runner's own count */
	const char	*why;		/* in incomplete; NULL: complete */
};

/* Every captured run output in tests/fixtures. */
static const struct verdict verdicts[] = {
	/* -v and -rA name every test: complete. pytest counts
	 * test_teardown_error twice (passed, then an error); -rA names the
	 * two skips by place. */
	{ "pytest/v.txt", "pytest", 30, 31, NULL },
	{ "pytest/rA.txt", "pytest", 28, 31, NULL },
	{ "pytest/v_s_rA.txt", "pytest", 30, 31, NULL },
	{ "pytest/xdist.txt", "pytest", 30, 31, NULL },
	{ "pytest/random_order.txt", "pytest", 30, 31, NULL },
	{ "pytest/unicode.txt", "pytest", 30, 31, NULL },
	{ "pytest/durations.txt", "pytest", 30, 31, NULL },
	{ "pytest/tb_native.txt", "pytest", 30, 31, NULL },
	{ "pytest/collect_error.txt", "pytest", 1, 1, NULL },
	{ "pytest/big_v.txt", "pytest", 1000, 1000, NULL },
	/* scikit-learn 1.2.1's sklearn/mixture/tests, all green, -v: the
	 * warnings summary's bare ids are not tests that started */
	{ "pytest/sklearn_warnings.txt", "pytest", 69, 69, NULL },
	/* Plain and -q name failures only. */
	{ "pytest/plain.txt", "pytest", 9, 31, "pytest printed only failing "
	    "tests (31 in its summary, 9 parsed): run it with -rA or -v" },
	{ "pytest/q.txt", "pytest", 9, 31, "run it with -rA or -v" },
	{ "pytest/big_plain.txt", "pytest", 14, 1000,
	    "(1000 in its summary, 14 parsed)" },
	/* pytest-timeout's thread method ended the process. */
	{ "pytest/hang.txt", "pytest", 2, -1, "the run ended without "
	    "pytest's summary line" },

	/* "Ran 15 tests" does not count the class whose setUpClass
	 * failed, which is a result here. */
	{ "unittest/v.txt", "unittest", 16, 15, NULL },
	{ "unittest/v_merged.txt", "unittest", 16, 15, NULL },
	{ "unittest/quiet.txt", "unittest", 8, 15, "unittest printed only "
	    "failing tests (15 in its summary, 7 parsed): run it with -v" },
	{ "unittest/crash.txt", "unittest", 2, -1, "the run ended without "
	    "unittest's summary line (Ran N tests)" },

	{ "jest/verbose-multi.txt", "jest", 13, 13, NULL },
	{ "jest/heap-verbose.txt", "jest", 13, 13, NULL },
	{ "jest/single.txt", "jest", 3, 3, NULL },
	{ "jest/large-verbose-w2.txt", "jest", 288, 288, NULL },
	{ "jest/console-merged.txt", "jest", 3, 3, NULL },
	{ "jest/console-stderr.txt", "jest", 3, 3, NULL },
	/* -t: the files whose tests were all filtered out are not listed,
	 * their tests are counted as skipped ("1 of 3 total" files ran,
	 * "2 skipped"): nothing that has an outcome is missing. */
	/* Jest 22 and 25: skipped tests without titles ("○ skipped 3
	 * tests") are in Jest's count, not in the results. */
	/* doctests added by load_tests, counted by unittest */
	{ "unittest/doctests.txt", "unittest", 6, 6, NULL },
	{ "unittest/more-itertools.txt", "unittest", 901, 901, NULL },
	{ "tap/overplan.txt", "tap", 3, 2, "announced 2 tests, 3 were "
	  "reported: more than planned" },
	{ "jest/jest22/old-verbose.txt", "jest", 3, 6, NULL },
	{ "jest/jest22/old-verbose-25.txt", "jest", 6, 6, NULL },
	{ "jest/jest22/old-expand.txt", "jest", 6, 6, NULL },
	{ "jest/jest22/prop-types-verbose.txt", "jest", 326, 329, NULL },
	{ "jest/jest22/prop-types-expand.txt", "jest", 329, 329, NULL },
	{ "jest/jest22/prop-types-plain.txt", "jest", 1, 329, "Jest printed "
	  "only failing tests (329 in its summary, 1 parsed)" },
	{ "jest/filtered-verbose.txt", "jest", 5, 13, NULL },
	{ "jest/default-multi.txt", "jest", 3, 13, "Jest printed only "
	    "failing tests (13 in its summary, 3 parsed): run it with "
	    "--verbose" },
	{ "jest/large-default-w3.txt", "jest", 21, 288,
	    "run it with --verbose" },
	/* Two files, not verbose: the file that failed to run is a result,
	 * the passing test of the other is not named. */
	{ "jest/broken.txt", "jest", 1, 1, "(1 in its summary, 0 parsed)" },
	{ "jest/abort-inband.txt", "jest", 6, -1, "a test in "
	    "abort/b_exit.test.js ended Jest's process (process.exit called "
	    "with \"1\")" },
	{ "jest/abort-workers.txt", "jest", 9, 8, "a test in "
	    "abort/b_exit.test.js ended Jest's process (process.exit called "
	    "with \"1\")" },
	{ "jest/bail.txt", "jest", 2, 2, "Jest ran 1 of 4 test files: it "
	    "stopped early (--bail" },

	{ "gotest/verbose.txt", "gotest", 18, -1, NULL },
	{ "gotest/uncached.txt", "gotest", 6, -1, NULL },
	/* A panic and go's own -timeout end the package; go still prints
	 * its FAIL line, and the test that panicked fails. */
	{ "gotest/panic.txt", "gotest", 2, -1, NULL },
	{ "gotest/timeout.txt", "gotest", 4, -1, NULL },
	/* A package that does not build: one error, nothing missing. */
	{ "gotest/build-failed.txt", "gotest", 1, -1, NULL },
	{ "gotest/cached.txt", "gotest", 6, -1, "go test served these "
	    "results from its cache ((cached)): add -count=1" },
	{ "gotest/plain.txt", "gotest", 4, -1, "go test printed only "
	    "failing tests (not -v): run it with -v" },

	/* Totals count top-level points; subtests are results too. */
	{ "tap/node.txt", "tap", 6, 5, NULL },
	{ "tap/perl.txt", "tap", 9, 7, NULL },
	{ "tap/perl-merged.txt", "tap", 9, 7, NULL },
	{ "tap/prove.txt", "tap", 9, 7, NULL },
	{ "tap/prove3.txt", "tap", 11, 9, NULL },
	{ "tap/prove3-merged.txt", "tap", 11, 9, NULL },
	/* Without -v prove prints its verdicts only. */
	{ "tap/prove3-quiet.txt", "tap", 0, 9, "prove counts 9 tests "
	    "(Tests=), 0 were parsed: run it with -v" },

	/* cargo test: the summaries of each test binary add up (strsim-rs:
	 * 88 unit tests, 8 integration tests, 11 doctests). Ignored tests
	 * are counted; -q names only failures. */
	{ "cargo/strsim.txt", "cargo", 107, 107, NULL },
	{ "cargo/strsim-merged.txt", "cargo", 107, 107, NULL },
	{ "cargo/strsim-threads1.txt", "cargo", 107, 107, NULL },
	{ "cargo/strsim-report-time.txt", "cargo", 107, 107, NULL },
	{ "cargo/strsim-shuffle.txt", "cargo", 107, 107, NULL },
	{ "cargo/strsim-exact.txt", "cargo", 1, 1, NULL },
	{ "cargo/demo-no-fail-fast.txt", "cargo", 8, 8, NULL },
	{ "cargo/demo-nocapture.txt", "cargo", 8, 8, NULL },
	{ "cargo/demo-rust-1.95.txt", "cargo", 8, 8, NULL },
	{ "cargo/strsim-q.txt", "cargo", 0, 107, "libtest printed only "
	    "failing tests (107 in its summaries, 0 parsed)" },
	{ "cargo/demo-q.txt", "cargo", 2, 8, "run it without -q or with -- "
	    "--format pretty" },
	/* cargo's stderr after a failing binary without --no-fail-fast */
	{ "cargo/demo.stderr.txt", "cargo", 0, -1, "add --no-fail-fast" },

	/* GoogleTest counts what ran, not its disabled tests (which are
	 * skips here); ctest counts them neither. */
	{ "gtest/demo.txt", "gtest", 9, 8, NULL },
	{ "gtest/demo-ctest.txt", "gtest", 9, 8, NULL },
	{ "gtest/demo-ctest-V.txt", "gtest", 9, 8, NULL },
	{ "gtest/demo-ctest-oof.txt", "gtest", 9, 8, NULL },
	{ "gtest/demo-ctest-j2.txt", "gtest", 9, 8, NULL },
	{ "gtest/demo-brief.txt", "gtest", 2, 8, "run it without "
	    "--gtest_brief" },
	/* jbeder/yaml-cpp: 1054 tests and 8 disabled; under ctest the
	 * binary is one test (add_test) */
	{ "gtest/yaml-cpp.txt", "gtest", 1062, 1054, NULL },
	{ "gtest/yaml-cpp-shuffle.txt", "gtest", 1062, 1054, NULL },
	{ "gtest/yaml-cpp-filter.txt", "gtest", 1, 1, NULL },
	{ "gtest/yaml-cpp-ctest.txt", "gtest", 1, 1, NULL },
	{ "gtest/yaml-cpp-ctest-V.txt", "gtest", 1, 1, NULL },
	{ "gtest/yaml-cpp-brief.txt", "gtest", 0, 1054, "GoogleTest printed "
	    "only failing tests (1054 in its summary, 0 parsed)" },

	/* RSpec counts pending examples; a file that does not load stops
	 * every example. */
	{ "rspec/demo-doc.txt", "rspec", 9, 9, NULL },
	{ "rspec/demo-doc-rand.txt", "rspec", 9, 9, NULL },
	{ "rspec/demo-line.txt", "rspec", 1, 1, NULL },
	{ "rspec/tty-color-doc.txt", "rspec", 60, 60, NULL },
	{ "rspec/tty-color-doc-defined.txt", "rspec", 60, 60, NULL },
	{ "rspec/demo.txt", "rspec", 2, 9, "RSpec printed only failing "
	    "examples (9 in its summary, 2 parsed)" },
	{ "rspec/tty-color.txt", "rspec", 0, 60, "run it with --format "
	    "documentation" },
	{ "rspec/load-error.txt", "rspec", 1, 0, "outside of examples" },

	/* PHPUnit counts skipped tests and every data set. */
	{ "phpunit/demo-debug.txt", "phpunit", 9, 9, NULL },
	{ "phpunit/demo-testdox-debug.txt", "phpunit", 9, 9, NULL },
	{ "phpunit/parsedown-debug.txt", "phpunit", 68, 68, NULL },
	{ "phpunit/parsedown-testdox-debug.txt", "phpunit", 68, 68, NULL },
	{ "phpunit/parsedown-random.txt", "phpunit", 68, 68, NULL },
	{ "phpunit/demo.txt", "phpunit", 2, 9, "PHPUnit printed only the "
	    "tests that did not pass (9 in its summary, 2 parsed)" },
	{ "phpunit/parsedown.txt", "phpunit", 0, 68, "run it with --debug "
	    "-v" },
	{ "phpunit/demo-debug-no-v.txt", "phpunit", 9, 9, "run it with -v" },
	{ "phpunit/demo-testdox.txt", "phpunit", 9, 9, "add --debug" },
	{ "phpunit/parsedown-testdox.txt", "phpunit", 68, 68, "add --debug" },
	/* Vitest: verbose names every test; the default reporter the tests
	 * of failing files; a file that fails to load shows only on stderr
	 * (merged: an error result, which Vitest does not count). */
	{ "vitest/demo-verbose.txt", "vitest", 7, 7, NULL },
	{ "vitest/demo-merged.txt", "vitest", 7, 7, NULL },
	{ "vitest/demo-shuffle.txt", "vitest", 7, 7, NULL },
	{ "vitest/v4-retry.txt", "vitest", 7, 7, NULL },
	{ "vitest/ufo-verbose.txt", "vitest", 485, 485, NULL },
	{ "vitest/broken-merged.txt", "vitest", 8, 7, NULL },
	{ "vitest/demo-plain.txt", "vitest", 4, 7, "Vitest printed only the "
	    "tests of failing files (7 in its summary, 4 parsed): run it with "
	    "--reporter=verbose" },
	{ "vitest/ufo-plain.txt", "vitest", 0, 485, "run it with "
	    "--reporter=verbose" },
	{ "vitest/broken-verbose.txt", "vitest", 7, 7, "Vitest counts 2 "
	    "failed test files, 1 had a failing test" },

	/* Playwright: the list reporter (its own retries are attempts, not
	 * results); dot and line name no test; --max-failures. */
	{ "playwright/demo-list.txt", "playwright", 6, 6, NULL },
	{ "playwright/demo-retries.txt", "playwright", 12, 12, NULL },
	{ "playwright/demo-shuffle.txt", "playwright", 6, 6, NULL },
	{ "playwright/demo-xfail.txt", "playwright", 7, 7, NULL },
	{ "playwright/turbo-list.txt", "playwright", TURBO_TESTS,
	    TURBO_TESTS, NULL },
	{ "playwright/demo-dot.txt", "playwright", 0, 6, "Playwright printed "
	    "only failing tests (6 tests ran, its reporter is not list)" },
	{ "playwright/demo-line.txt", "playwright", 0, 6, "its reporter is "
	    "not list" },
	{ "playwright/demo-maxfail.txt", "playwright", 4, 6, "Playwright did "
	    "not run 2 of its 6 tests" },
	{ "playwright/turbo-dot.txt", "playwright", 0, 58, "(58 tests ran, "
	    "its reporter is not list)" },

	/* Mocha: spec (its default) with passing, pending and failing, and
	 * hooks among the failing; dot names no test; its TAP reporter goes
	 * to the TAP parser. */
	{ "mocha/demo-spec.txt", "mocha", 7, 7, NULL },
	{ "mocha/hook.txt", "mocha", 9, 9, NULL },
	{ "mocha/express-spec.txt", "mocha", 1260, 1260, NULL },
	{ "mocha/express-plain.txt", "mocha", 1260, 1260, NULL },
	{ "mocha/express-parallel.txt", "mocha", 1260, 1260, NULL },
	{ "mocha/express-tap.txt", "tap", 1260, 1260, NULL },
	{ "mocha/express-dot.txt", "mocha", 0, 1260, "Mocha named no test "
	    "(1260 in its summary): its reporter is not spec; run it with "
	    "--reporter spec" },

	/* node:test: spec gives node's tests (its suites are no results;
	 * edge's test with subtests is no result either, beside a suite);
	 * TAP, node's reporter into a pipe, counts top-level points. */
	{ "nodetest/demo-spec.txt", "nodetest", 7, 7, NULL },
	{ "nodetest/edge-spec.txt", "nodetest", 7, 8, NULL },
	{ "nodetest/marked-unit-spec.txt", "nodetest", 190, 190, NULL },
	{ "nodetest/marked-specs-spec.txt", "nodetest", 1779, 1779, NULL },
	{ "nodetest/fastify-cors-spec.txt", "nodetest", 71, 71, NULL },
	{ "nodetest/demo-tap.txt", "tap", 7, 3, NULL },
	{ "nodetest/edge-tap.txt", "tap", 8, 4, NULL },
	{ "nodetest/marked-unit-tap.txt", "tap", 190, 7, NULL },
	{ "nodetest/fastify-cors-tap.txt", "tap", 71, 71, NULL },
};

START_TEST(every_fixture)
{
	const struct verdict	*v = &verdicts[_i];
	struct flaky_results	 r;

	parse_fixture(v->rel, &r);
	/* Only the build failure of go stays without -v's warning. */
	if (strcmp(v->rel, "gotest/build-failed.txt") == 0) {
		ck_assert_ptr_null(r.warning);
		ck_assert_int_eq(r.v[0].outcome, FLAKY_ERROR);
		ck_assert_str_eq(r.v[0].test, "example.com/flakybroken/bad");
	}
	ck_assert_msg(strcmp(r.runner, v->runner) == 0, "%s: runner %s",
	    v->rel, r.runner);
	ck_assert_msg(r.n == v->n, "%s: %zu results", v->rel, r.n);
	ck_assert_msg(r.summary_total == v->total, "%s: total %ld", v->rel,
	    r.summary_total);
	if (v->why == NULL)
		ck_assert_msg(r.incomplete == NULL, "%s: incomplete: %s",
		    v->rel, r.incomplete);
	else {
		ck_assert_msg(r.incomplete != NULL, "%s: complete", v->rel);
		ck_assert_msg(strstr(r.incomplete, v->why) != NULL,
		    "%s: \"%s\" lacks \"%s\"", v->rel, r.incomplete, v->why);
		/* One line, for a user. */
		ck_assert_ptr_null(strchr(r.incomplete, '\n'));
	}
	flaky_results_free(&r);
}
END_TEST

/* The output of a complete run cut off after `keep` lines, as when the run
 * is killed: never complete, whatever it holds. */
static void
check_cut(const char *rel, size_t keep)
{
	struct flaky_results	 r;
	size_t			 len, lines = 0, at = 0;
	char			*s = tu_slurp(rel, &len);

	while (at < len && lines < keep)
		if (s[at++] == '\n')
			lines++;
	ck_assert_uint_eq(lines, keep);
	tu_parse_chunked(s, at, at, "/work/x", &r);
	ck_assert_msg(r.n > 0, "%s cut at %zu: no result", rel, keep);
	ck_assert_msg(r.incomplete != NULL, "%s cut at %zu lines: complete",
	    rel, keep);
	flaky_results_free(&r);
	free(s);
}

START_TEST(killed_midway)
{
	/* After a few tests, and just before the summary line. */
	check_cut("pytest/v.txt", 20);
	check_cut("pytest/v.txt", 155);
	check_cut("pytest/rA.txt", 160);
	check_cut("unittest/v.txt", 10);
	check_cut("jest/verbose-multi.txt", 12);
	check_cut("jest/large-verbose-w2.txt", 200);
	/* In the middle of a package (go has no overall summary). */
	check_cut("gotest/verbose.txt", 20);
	check_cut("tap/node.txt", 20);
	check_cut("tap/prove3.txt", 9);
	check_cut("tap/perl.txt", 5);
	check_cut("vitest/ufo-verbose.txt", 300);
	check_cut("playwright/turbo-list.txt", 200);
	check_cut("mocha/express-spec.txt", 1000);
	check_cut("nodetest/marked-unit-spec.txt", 150);
}
END_TEST

/* prove -v: its own per-file verdicts ("ok", "Failed 1/3 subtests",
 * "Files=3, Tests=9") are not tests; each file's points are, named after
 * the file; Tests= is the total. With stderr merged, Test::More's
 * diagnostics (which prove lets through unbuffered, before the stream)
 * make no test either. */
START_TEST(prove_verdicts)
{
	static const struct {
		const char	*test;
		int		 outcome;
	} want[] = {
		{ "t/fail.t > starts", FLAKY_PASS },
		{ "t/fail.t > adds wrong", FLAKY_FAIL },
		{ "t/fail.t > ends", FLAKY_PASS },
		{ "t/pass.t > adds", FLAKY_PASS },
		{ "t/pass.t > multiplies", FLAKY_PASS },
		{ "t/pass.t > matches", FLAKY_PASS },
		{ "t/skip.t > #1", FLAKY_SKIP },
		{ "t/skip.t > group > inner one", FLAKY_PASS },
		{ "t/skip.t > group > inner two", FLAKY_PASS },
		{ "t/skip.t > group", FLAKY_PASS },
		{ "t/skip.t > last", FLAKY_PASS },
	};
	static const char *const rel[] = {
		"tap/prove3.txt", "tap/prove3-merged.txt",
	};
	struct flaky_results	 r;

	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(rel); k++) {
		parse_fixture(rel[k], &r);
		ck_assert_str_eq(r.runner, "tap");
		ck_assert_int_eq(r.summary_total, 9);
		ck_assert_uint_eq(r.n, FLAKY_ARRAY_SIZE(want));
		for (size_t i = 0; i < r.n; i++) {
			ck_assert_str_eq(r.v[i].test, want[i].test);
			ck_assert_int_eq(r.v[i].outcome, want[i].outcome);
			ck_assert_uint_eq(r.v[i].position, i);
		}
		ck_assert_ptr_null(r.incomplete);
		ck_assert_ptr_null(r.version);
		flaky_results_free(&r);
	}
}
END_TEST

/* go test -v ./... run twice: the same tests, the second time served from
 * go's cache, which reran nothing. */
START_TEST(go_cached)
{
	static const char *const ids[] = {
		"example.com/flakycache/mathx/TestAdd",
		"example.com/flakycache/mathx/TestTable",
		"example.com/flakycache/mathx/TestTable/zero",
		"example.com/flakycache/mathx/TestTable/neg",
		"example.com/flakycache/textx/TestUpper",
		"example.com/flakycache/textx/TestSkipped",
	};
	struct flaky_results	 a, b;

	parse_fixture("gotest/uncached.txt", &a);
	parse_fixture("gotest/cached.txt", &b);
	ck_assert_uint_eq(a.n, FLAKY_ARRAY_SIZE(ids));
	ck_assert_uint_eq(b.n, FLAKY_ARRAY_SIZE(ids));
	for (size_t i = 0; i < a.n; i++) {
		ck_assert_str_eq(a.v[i].test, ids[i]);
		ck_assert_str_eq(b.v[i].test, ids[i]);
		ck_assert_int_eq(a.v[i].outcome, i == 5 ? FLAKY_SKIP :
		    FLAKY_PASS);
		ck_assert_int_eq(b.v[i].outcome, a.v[i].outcome);
	}
	ck_assert_ptr_null(a.incomplete);
	ck_assert_str_eq(b.incomplete, "go test served these results from "
	    "its cache ((cached)): add -count=1");
	flaky_results_free(&a);
	flaky_results_free(&b);
}
END_TEST

/* A test calling process.exit. In band, Jest ends after the first file,
 * with no summary; with workers it retries the file, reports it as failed
 * to run and counts only the others. Either way the files that ran keep
 * their results, Jest's "●  process.exit called" block is no test, and
 * the run is incomplete. --bail: one file of four ran. */
START_TEST(jest_stopped)
{
	struct flaky_results	 r;

	parse_fixture("jest/abort-inband.txt", &r);
	ck_assert_str_eq(r.runner, "jest");
	ck_assert_uint_eq(r.n, 6);
	ck_assert_str_eq(r.v[0].test, "abort/a.test.js" SEP "first" SEP "one");
	ck_assert_str_eq(r.v[5].test, "abort/a.test.js" SEP "first" SEP "six");
	for (size_t i = 0; i < r.n; i++) {
		ck_assert_int_eq(r.v[i].outcome, FLAKY_PASS);
		ck_assert_ptr_null(r.v[i].message);
	}
	ck_assert_int_eq(r.summary_total, -1);
	/* It names the file, and what to try when flakyctl's flags are
	 * what made the test exit. */
	ck_assert_str_eq(r.incomplete, "a test in abort/b_exit.test.js ended "
	    "Jest's process (process.exit called with \"1\"): the tests "
	    "after it have no outcome. The test must not exit; if the file "
	    "passes when you run Jest yourself, a test may read process.argv, "
	    "which holds the flags flakyctl added (--verbose, "
	    "--cacheDirectory: --no-runner-cache leaves the second out)");
	flaky_results_free(&r);

	parse_fixture("jest/abort-workers.txt", &r);
	ck_assert_uint_eq(r.n, 9);
	ck_assert_int_eq(r.summary_total, 8);
	for (size_t i = 0; i < r.n; i++) {
		ck_assert_ptr_null(strstr(r.v[i].test, "process.exit"));
		if (strcmp(r.v[i].test, "abort/b_exit.test.js") == 0) {
			ck_assert_int_eq(r.v[i].outcome, FLAKY_ERROR);
			ck_assert_ptr_nonnull(strstr(r.v[i].message,
			    "child process exceptions"));
		} else
			ck_assert_int_eq(r.v[i].outcome, FLAKY_PASS);
	}
	ck_assert_ptr_nonnull(strstr(r.incomplete, "process.exit"));
	flaky_results_free(&r);

	parse_fixture("jest/bail.txt", &r);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_str_eq(r.v[0].test, "bail/a_fails.test.js" SEP "bail" SEP
	    "passes");
	ck_assert_str_eq(r.v[1].test, "bail/a_fails.test.js" SEP "bail" SEP
	    "fails");
	ck_assert_int_eq(r.v[1].outcome, FLAKY_FAIL);
	ck_assert_ptr_nonnull(strstr(r.v[1].message, "Expected: 2"));
	ck_assert_str_eq(r.incomplete, "Jest ran 1 of 4 test files: it "
	    "stopped early (--bail, or it was interrupted), so the files it "
	    "did not run have no outcome; run it without --bail");
	flaky_results_free(&r);
}
END_TEST

/* Two runs in one output ("pytest a; pytest b") add up; so do two
 * unittest runs. */
START_TEST(runs_add_up)
{
	static const char *const rel[] = { "pytest/v.txt", "unittest/v.txt" };
	static const long each[] = { 31, 15 };
	struct flaky_results	 r;
	struct flaky_buf	 b;

	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(rel); k++) {
		size_t	 len;
		char	*s = tu_slurp(rel[k], &len);

		flaky_buf_init(&b);
		flaky_buf_add(&b, s, len);
		flaky_buf_add(&b, s, len);
		ck_assert(!b.oom);
		tu_parse_chunked(b.data, b.len, b.len, "/work/x", &r);
		ck_assert_int_eq(r.summary_total, 2 * each[k]);
		ck_assert_ptr_null(r.incomplete);
		flaky_results_free(&r);
		flaky_buf_free(&b);
		free(s);
	}
}
END_TEST

static Suite *
parse_complete_suite(void)
{
	Suite	*s = suite_create("parse_complete");
	TCase	*tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, every_fixture, 0,
	    (int)FLAKY_ARRAY_SIZE(verdicts));
	tcase_add_test(tc, killed_midway);
	tcase_add_test(tc, prove_verdicts);
	tcase_add_test(tc, go_cached);
	tcase_add_test(tc, jest_stopped);
	tcase_add_test(tc, runs_add_up);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(parse_complete_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
