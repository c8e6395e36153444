/* parse: the Jest, go test, TAP and JUnit XML parsers, against output
 * captured from the real runners (tests/fixtures/capture-js.sh). */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "parse/parse.h"
#include "util/util.h"
#include "test_helper.h"

#define SEP " \xe2\x80\xba "	/* Jest's " › " */

struct want {
	const char	*test;
	int		 outcome;
	int64_t		 duration_us;	/* -2: do not check */
	const char	*msg;		/* substring; NULL: no message */
};

static void
same(const struct flaky_results *a, const struct flaky_results *b)
{
	ck_assert_str_eq(a->runner, b->runner);
	ck_assert_int_eq(a->n, b->n);
	ck_assert_int_eq(a->summary_total, b->summary_total);
	ck_assert_int_eq(a->seed == NULL, b->seed == NULL);
	if (a->seed != NULL)
		ck_assert_str_eq(a->seed, b->seed);
	ck_assert_int_eq(a->warning == NULL, b->warning == NULL);
	for (size_t i = 0; i < a->n; i++) {
		ck_assert_str_eq(a->v[i].test, b->v[i].test);
		ck_assert_int_eq(a->v[i].outcome, b->v[i].outcome);
		ck_assert_int_eq(a->v[i].duration_us, b->v[i].duration_us);
		ck_assert_int_eq(a->v[i].position, b->v[i].position);
		ck_assert_int_eq(a->v[i].message == NULL,
		    b->v[i].message == NULL);
		if (a->v[i].message != NULL)
			ck_assert_str_eq(a->v[i].message, b->v[i].message);
	}
}

/* Parse a fixture whole, then 1 and 7 bytes at a time: all the same. */
static void
parse_fixture(const char *rel, const char *rundir, struct flaky_results *out)
{
	static const size_t	 chunks[] = { 1, 7 };
	struct flaky_results	 other;
	size_t			 len;
	char			*buf = tu_slurp(rel, &len);

	tu_parse_chunked(buf, len, 0, rundir, out);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(chunks); i++) {
		tu_parse_chunked(buf, len, chunks[i], rundir, &other);
		same(out, &other);
		flaky_results_free(&other);
	}
	free(buf);
}

static void
check(const struct flaky_results *r, const struct want *w, size_t n)
{
	ck_assert_int_eq(r->n, n);
	for (size_t i = 0; i < n; i++) {
		const struct flaky_result *v = &r->v[i];

		ck_assert_str_eq(v->test, w[i].test);
		ck_assert_msg(v->outcome == w[i].outcome, "%s: outcome %s",
		    v->test, flaky_outcome_name(v->outcome));
		ck_assert_uint_eq(v->position, i);
		if (w[i].duration_us != -2)
			ck_assert_msg(v->duration_us == w[i].duration_us,
			    "%s: duration %lld", v->test,
			    (long long)v->duration_us);
		if (w[i].msg == NULL)
			ck_assert_msg(v->message == NULL, "%s: message %s",
			    v->test, v->message);
		else {
			ck_assert_msg(v->message != NULL, "%s: no message",
			    v->test);
			ck_assert_msg(strstr(v->message, w[i].msg) != NULL,
			    "%s: message %s", v->test, v->message);
		}
	}
}

static size_t
count(const struct flaky_results *r, int outcome)
{
	size_t	 n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += r->v[i].outcome == outcome;
	return n;
}

#define F "small/tests/fail.test.js" SEP
#define M "small/tests/math.test.js" SEP
#define O "small/tests/ok.test.js" SEP

START_TEST(jest_verbose)
{
	static const struct want w[] = {
		{ F "same title", FLAKY_PASS, -1, NULL },
		{ F "same title #2", FLAKY_FAIL, 1000, "Expected: 2" },
		{ F "slow pass", FLAKY_PASS, 31000, NULL },
		{ F "payments" SEP "retries once", FLAKY_FAIL, 4000,
		    "toEqual(expected) // deep equality" },
		{ F "payments" SEP "nested" SEP "throws", FLAKY_FAIL, -1,
		    "connection refused: 127.0.0.1:5432" },
		{ M "top level \xc3\xbcn\xc3\xaf" "code \xe2\x9c\x93 title",
		    FLAKY_PASS, -1, NULL },
		{ M "math" SEP "skipped one", FLAKY_SKIP, -1, NULL },
		{ M "math" SEP "write division", FLAKY_SKIP, -1, NULL },
		{ M "math" SEP "add" SEP "adds small numbers", FLAKY_PASS, 1000,
		    NULL },
		{ M "math" SEP "add" SEP "adds negatives", FLAKY_PASS, -1,
		    NULL },
		{ M "math" SEP "mul" SEP "odd" SEP
		    "multiplies [1, 2] \"quoted\"",
		    FLAKY_PASS, 1000, NULL },
		{ O "first", FLAKY_PASS, -1, NULL },
		{ O "second", FLAKY_PASS, 1000, NULL },
	};
	struct flaky_results	 r;

	parse_fixture("jest/verbose-multi.txt", NULL, &r);
	ck_assert_str_eq(r.runner, "jest");
	check(&r, w, FLAKY_ARRAY_SIZE(w));
	ck_assert_int_eq(r.summary_total, 13);
	ck_assert_ptr_null(r.version);
	ck_assert_ptr_null(r.seed);
	ck_assert_ptr_null(r.warning);
	/* The message is Jest's, without the code frame; the location stays. */
	ck_assert_ptr_null(strstr(r.v[3].message, " | "));
	ck_assert_ptr_nonnull(strstr(r.v[3].message,
	    "at Object.toEqual (small/tests/fail.test.js:4:28)"));
	flaky_results_free(&r);
}
END_TEST

START_TEST(jest_default)
{
	static const struct want w[] = {
		{ F "payments" SEP "retries once", FLAKY_FAIL, -1,
		    "\"retries\": 1" },
		{ F "payments" SEP "nested" SEP "throws", FLAKY_FAIL, -1,
		    "connection refused" },
		{ F "same title", FLAKY_FAIL, -1, "Received: 1" },
	};
	struct flaky_results	 r;

	parse_fixture("jest/default-multi.txt", NULL, &r);
	check(&r, w, FLAKY_ARRAY_SIZE(w));
	ck_assert_int_eq(r.summary_total, 13);
	ck_assert_ptr_nonnull(r.warning);
	ck_assert_ptr_nonnull(strstr(r.warning, "--verbose"));
	ck_assert_ptr_nonnull(strstr(r.warning,
	    "passing tests are not listed"));
	flaky_results_free(&r);
}
END_TEST

START_TEST(jest_single_and_broken)
{
	static const struct want single[] = {
		{ "single/only.test.js" SEP "only" SEP "passes", FLAKY_PASS,
		    1000, NULL },
		{ "single/only.test.js" SEP "only" SEP "inner" SEP "fails",
		    FLAKY_FAIL, 4000, "-   3," },
		{ "single/only.test.js" SEP "only" SEP "inner" SEP "skipped",
		    FLAKY_SKIP, -1, NULL },
	};
	static const struct want broken[] = {
		{ "broken/broken.test.js", FLAKY_ERROR, -1,
		    "Cannot find module './does-not-exist'" },
	};
	struct flaky_results	 r;

	parse_fixture("jest/single.txt", NULL, &r);
	check(&r, single, FLAKY_ARRAY_SIZE(single));
	ck_assert_int_eq(r.summary_total, 3);
	ck_assert_ptr_null(r.warning);
	flaky_results_free(&r);

	/* A file that fails to load is one error; the passing file is not
	 * listed without --verbose, so the warning says so. */
	parse_fixture("jest/broken.txt", NULL, &r);
	check(&r, broken, FLAKY_ARRAY_SIZE(broken));
	ck_assert_int_eq(r.summary_total, 1);
	ck_assert_ptr_nonnull(r.warning);
	flaky_results_free(&r);
}
END_TEST

/* 24 files, 288 tests, two workers, --randomize --seed: every test Jest
 * counted is there. */
START_TEST(jest_large)
{
	struct flaky_results	 r;
	char			*both, *second;
	size_t			 len, len2;

	parse_fixture("jest/large-verbose-w2.txt", NULL, &r);
	ck_assert_int_eq(r.summary_total, 288);
	ck_assert_int_eq(r.n, 288);
	ck_assert_int_eq(count(&r, FLAKY_FAIL), 21);
	ck_assert_int_eq(count(&r, FLAKY_SKIP), 17);
	ck_assert_int_eq(count(&r, FLAKY_PASS), 250);
	ck_assert_str_eq(r.seed, "12345");
	ck_assert_ptr_null(r.warning);
	ck_assert_str_eq(r.v[0].test, "large/omicron.test.js" SEP
	    "omicron block 0" SEP "case 0");
	ck_assert_int_eq(r.v[0].duration_us, 8000);
	/* Every failure got its own block's message. */
	for (size_t i = 0; i < r.n; i++)
		if (r.v[i].outcome == FLAKY_FAIL)
			ck_assert_ptr_nonnull(strstr(r.v[i].message,
			    "Expected: -1"));
	/* No " #2": every id is unique in this run. */
	for (size_t i = 0; i < r.n; i++)
		ck_assert_ptr_null(strstr(r.v[i].test, " #"));
	flaky_results_free(&r);

	/* Three workers without --verbose: the failures only (the repeat
	 * under "Summary of all failing tests" is not counted twice). */
	parse_fixture("jest/large-default-w3.txt", NULL, &r);
	ck_assert_int_eq(r.summary_total, 288);
	ck_assert_int_eq(r.n, 21);
	ck_assert_int_eq(count(&r, FLAKY_FAIL), 21);
	ck_assert_ptr_nonnull(r.warning);
	flaky_results_free(&r);

	/* Two runs in one stream ("jest a && jest b"): both are counted. */
	both = tu_slurp("jest/large-verbose-w2.txt", &len);
	second = tu_slurp("jest/verbose-multi.txt", &len2);
	both = realloc(both, len + len2);
	ck_assert_ptr_nonnull(both);
	memcpy(both + len, second, len2);
	tu_parse_chunked(both, len + len2, 4096, NULL, &r);
	ck_assert_int_eq(r.n, 288 + 13);
	ck_assert_int_eq(r.summary_total, 288 + 13);
	ck_assert_str_eq(r.v[r.n - 1].test, O "second");
	flaky_results_free(&r);
	free(both);
	free(second);
}
END_TEST

/* Absolute paths are made relative to the run's directory; colours are
 * ignored. */
START_TEST(jest_rundir_colour)
{
	static const char out[] =
	    "\033[0m\033[7m\033[1m\033[32m PASS "
	    "\033[39m\033[22m\033[27m\033[0m "
	    "\033[2m/srv/app/\033[22m\033[1mx.test.js\033[22m\n"
	    "  \033[32m\xe2\x9c\x93\033[39m \033[2mworks (12 ms)\033[22m\n"
	    "\033[1mTests:       \033[22m\033[1m\033[32m1 passed\033[39m"
	    "\033[22m, 1 total\n";
	struct flaky_results	 r;

	ck_assert_int_eq(flaky_parse_buffer(out, sizeof out - 1, "/srv/app",
	    &r), 0);
	ck_assert_str_eq(r.runner, "jest");
	ck_assert_int_eq(r.n, 1);
	ck_assert_str_eq(r.v[0].test, "x.test.js" SEP "works");
	ck_assert_int_eq(r.v[0].duration_us, 12000);
	ck_assert_int_eq(r.summary_total, 1);
	flaky_results_free(&r);
}
END_TEST

/* The file header may carry a displayName before the path and a slow or
 * heap-size note after it: the note is not part of the id. */
START_TEST(jest_header_extras)
{
	static const char slow[] =
	    "PASS tests/slow.test.js (5.123 s)\n"
	    "  \xe2\x9c\x93 waits (5002 ms)\n"
	    "\n"
	    "PASS client tests/my file.test.js (5.2 s, 40 MB heap size)\n"
	    "  \xe2\x9c\x93 renders\n";
	struct flaky_results	 r;

	parse_fixture("jest/heap-verbose.txt", NULL, &r);
	ck_assert_int_eq(r.n, 13);
	ck_assert_int_eq(r.summary_total, 13);
	for (size_t i = 0; i < r.n; i++) {
		ck_assert_ptr_null(strstr(r.v[i].test, "heap"));
		ck_assert_int_eq(strncmp(r.v[i].test, "small/tests/", 12), 0);
	}
	flaky_results_free(&r);

	ck_assert_int_eq(flaky_parse_buffer(slow, sizeof slow - 1, NULL, &r),
	    0);
	ck_assert_int_eq(r.n, 2);
	ck_assert_str_eq(r.v[0].test, "tests/slow.test.js" SEP "waits");
	ck_assert_int_eq(r.v[0].duration_us, 5002000);
	ck_assert_str_eq(r.v[1].test,
	    "client tests/my file.test.js" SEP "renders");
	flaky_results_free(&r);
}
END_TEST

/* Console output (stdout, here merged with 2>&1) comes between files. Jest
 * indents it by four, so a "✓" or "●" in it looks like Jest's own lines;
 * after a finished tree or a failure block it must not become a test or
 * extend a message. The real capture, then its lines in the order that
 * would fool a parser that trusted indentation alone. */
START_TEST(jest_console)
{
	static const char reordered[] =
	    "PASS console/quiet.test.js\n"
	    "  \xe2\x9c\x93 quiet pass (19 ms)\n"
	    "\n"
	    "  console.error\n"
	    "      \xe2\x9c\x93 fake line (3 ms)\n"
	    "\n"
	    "      at Object.error (console/loud.test.js:6:13)\n"
	    "\n"
	    "FAIL console/loud.test.js\n"
	    "  logs\n"
	    "    \xe2\x9c\x93 prints (93 ms)\n"
	    "    \xe2\x9c\x95 fails after printing (11 ms)\n"
	    "\n"
	    "  \xe2\x97\x8f logs \xe2\x80\xba fails after printing\n"
	    "\n"
	    "    Expected: 2\n"
	    "\n"
	    "  console.warn\n"
	    "      \xe2\x97\x8f fake block\n"
	    "    Received: 9\n"
	    "\n"
	    "Tests:       1 failed, 2 passed, 3 total\n";
	struct flaky_results	 r;

	parse_fixture("jest/console-merged.txt", NULL, &r);
	ck_assert_int_eq(r.n, 3);
	ck_assert_int_eq(r.summary_total, 3);
	ck_assert_int_eq(count(&r, FLAKY_PASS), 2);
	ck_assert_int_eq(count(&r, FLAKY_FAIL), 1);
	for (size_t i = 0; i < r.n; i++)
		ck_assert_ptr_null(strstr(r.v[i].test, "fake"));
	flaky_results_free(&r);

	parse_fixture("jest/console-stderr.txt", NULL, &r);
	ck_assert_int_eq(r.n, 3);
	ck_assert_int_eq(r.summary_total, 3);
	flaky_results_free(&r);

	ck_assert_int_eq(flaky_parse_buffer(reordered, sizeof reordered - 1,
	    NULL, &r), 0);
	ck_assert_int_eq(r.n, 3);
	ck_assert_str_eq(r.v[0].test, "console/quiet.test.js" SEP "quiet pass");
	ck_assert_str_eq(r.v[2].test,
	    "console/loud.test.js" SEP "logs" SEP "fails after printing");
	ck_assert_str_eq(r.v[2].message, "Expected: 2");
	flaky_results_free(&r);
}
END_TEST

#define G "example.com/flakyfix/"

START_TEST(gotest_verbose)
{
	static const struct want w[] = {
		{ G "calc/TestAdd", FLAKY_PASS, 0, NULL },
		{ G "calc/TestAddFails", FLAKY_FAIL, 0,
		    "calc_test.go:18: want 3, got 2" },
		{ G "calc/TestTable", FLAKY_FAIL, 0, NULL },
		{ G "calc/TestTable/zero_case", FLAKY_PASS, 0, NULL },
		{ G "calc/TestTable/one", FLAKY_FAIL, 0,
		    "calc_test.go:41: Add(1, 0) = 1, want 2" },
		{ G "calc/TestTable/nested", FLAKY_PASS, 0, NULL },
		{ G "calc/TestTable/nested/deeper", FLAKY_SKIP, 0, NULL },
		{ G "calc/TestSkipped", FLAKY_SKIP, 0, NULL },
		{ G "calc/TestParallelA", FLAKY_PASS, 20000, NULL },
		{ G "calc/TestParallelB", FLAKY_FAIL, 10000,
		    "connection refused" },
		{ G "crash/TestQuick", FLAKY_PASS, 0, NULL },
		{ G "crash/TestPanic", FLAKY_PASS, 0, NULL },
		{ G "crash/TestHang", FLAKY_PASS, 0, NULL },
		{ G "crash/TestHang/inner", FLAKY_PASS, 0, NULL },
		{ G "strs/TestUpper", FLAKY_PASS, 0, NULL },
		{ G "strs/TestSub", FLAKY_PASS, 0, NULL },
		{ G "strs/TestSub/a/b", FLAKY_PASS, 0, NULL },
		{ G "strs/TestSub/\xc3\xbcn\xc3\xaf", FLAKY_PASS, 0, NULL },
	};
	struct flaky_results	 r;

	parse_fixture("gotest/verbose.txt", NULL, &r);
	ck_assert_str_eq(r.runner, "gotest");
	check(&r, w, FLAKY_ARRAY_SIZE(w));
	ck_assert_ptr_null(r.version);
	ck_assert_ptr_null(r.warning);
	ck_assert_int_eq(r.summary_total, -1);
	/* The earlier t.Log line is part of the message too. */
	ck_assert_ptr_nonnull(strstr(r.v[1].message, "about to compare"));
	flaky_results_free(&r);
}
END_TEST

START_TEST(gotest_plain_panic_timeout)
{
	static const struct want plain[] = {
		{ G "calc/TestAddFails", FLAKY_FAIL, 0, "want 3, got 2" },
		{ G "calc/TestTable", FLAKY_FAIL, 0, NULL },
		{ G "calc/TestTable/one", FLAKY_FAIL, 0, "want 2" },
		{ G "calc/TestParallelB", FLAKY_FAIL, 10000,
		    "connection refused" },
	};
	static const struct want panic[] = {
		{ G "crash/TestQuick", FLAKY_PASS, 0, NULL },
		{ G "crash/TestPanic", FLAKY_FAIL, 0,
		    "panic: assignment to entry in nil map" },
	};
	static const struct want timeout[] = {
		{ G "crash/TestQuick", FLAKY_PASS, 0, NULL },
		{ G "crash/TestPanic", FLAKY_PASS, 0, NULL },
		{ G "crash/TestHang", FLAKY_FAIL, -1,
		    "panic: test timed out after 1s" },
		{ G "crash/TestHang/inner", FLAKY_FAIL, -1,
		    "panic: test timed out after 1s" },
	};
	struct flaky_results	 r;

	parse_fixture("gotest/plain.txt", NULL, &r);
	check(&r, plain, FLAKY_ARRAY_SIZE(plain));
	ck_assert_ptr_nonnull(r.warning);
	ck_assert_ptr_nonnull(strstr(r.warning, "-v"));
	flaky_results_free(&r);

	parse_fixture("gotest/panic.txt", NULL, &r);
	check(&r, panic, FLAKY_ARRAY_SIZE(panic));
	/* The goroutine dump is not the message. */
	ck_assert_ptr_null(strstr(r.v[1].message, "goroutine"));
	flaky_results_free(&r);

	parse_fixture("gotest/timeout.txt", NULL, &r);
	check(&r, timeout, FLAKY_ARRAY_SIZE(timeout));
	flaky_results_free(&r);
}
END_TEST

START_TEST(tap_node)
{
	static const struct want w[] = {
		{ "adds", FLAKY_PASS, -2, NULL },
		{ "compares objects", FLAKY_FAIL, -2,
		    "Expected values to be strictly deep-equal:" },
		{ "skipped", FLAKY_SKIP, -2, NULL },
		{ "todo thing", FLAKY_XPASS, -2, NULL },
		{ "suite > inner passes", FLAKY_PASS, -2, NULL },
		{ "suite > deeper > inner fails", FLAKY_FAIL, -2,
		    "connection refused" },
		{ "suite > deeper", FLAKY_FAIL, -2, "1 subtest failed" },
		{ "suite", FLAKY_FAIL, -2, "1 subtest failed" },
	};
	struct flaky_results	 r;

	parse_fixture("tap/node.txt", NULL, &r);
	ck_assert_str_eq(r.runner, "tap");
	check(&r, w, FLAKY_ARRAY_SIZE(w));
	/* duration_ms from the YAML blocks, in microseconds. */
	for (size_t i = 0; i < r.n; i++)
		ck_assert_int_gt(r.v[i].duration_us, 0);
	ck_assert_int_eq(r.summary_total, 5);	/* the top-level plan */
	ck_assert_ptr_null(strstr(r.v[1].message, "Test.runInAsyncScope"));
	flaky_results_free(&r);
}
END_TEST

START_TEST(tap_perl)
{
	static const struct want bare[] = {
		{ "first passes", FLAKY_PASS, -1, NULL },
		{ "adds wrong", FLAKY_FAIL, -1, NULL },
		{ "#3", FLAKY_PASS, -1, NULL },
		{ "#4", FLAKY_SKIP, -1, NULL },
		{ "future feature", FLAKY_XFAIL, -1, "Failed (TODO) test" },
		{ "group > inner one", FLAKY_PASS, -1, NULL },
		{ "group > inner two", FLAKY_FAIL, -1, NULL },
		{ "group", FLAKY_FAIL, -1, NULL },
		{ "matches", FLAKY_FAIL, -1, NULL },
	};
	static const struct want merged[] = {
		{ "first passes", FLAKY_PASS, -1, NULL },
		{ "adds wrong", FLAKY_FAIL, -1, "expected: '3'" },
		{ "#3", FLAKY_PASS, -1, NULL },
		{ "#4", FLAKY_SKIP, -1, NULL },
		{ "future feature", FLAKY_XFAIL, -1, "Failed (TODO) test" },
		{ "group > inner one", FLAKY_PASS, -1, NULL },
		{ "group > inner two", FLAKY_FAIL, -1, "line 21" },
		{ "group", FLAKY_FAIL, -1, "Failed test 'group'" },
		{ "matches", FLAKY_FAIL, -1, "doesn't match" },
	};
	static const struct want prove[] = {
		{ "perl/t/basic.t > first passes", FLAKY_PASS, -1, NULL },
		{ "perl/t/basic.t > adds wrong", FLAKY_FAIL, -1, NULL },
		{ "perl/t/basic.t > #3", FLAKY_PASS, -1, NULL },
		{ "perl/t/basic.t > #4", FLAKY_SKIP, -1, NULL },
		{ "perl/t/basic.t > future feature", FLAKY_XFAIL, -1,
		    "Failed (TODO) test" },
		{ "perl/t/basic.t > group > inner one", FLAKY_PASS, -1, NULL },
		{ "perl/t/basic.t > group > inner two", FLAKY_FAIL, -1, NULL },
		{ "perl/t/basic.t > group", FLAKY_FAIL, -1, NULL },
		{ "perl/t/basic.t > matches", FLAKY_FAIL, -1, NULL },
	};
	struct flaky_results	 r;

	parse_fixture("tap/perl.txt", NULL, &r);
	check(&r, bare, FLAKY_ARRAY_SIZE(bare));
	ck_assert_int_eq(r.summary_total, 7);
	flaky_results_free(&r);

	parse_fixture("tap/perl-merged.txt", NULL, &r);
	check(&r, merged, FLAKY_ARRAY_SIZE(merged));
	/* Test::More's closing count is not a test's message. */
	ck_assert_ptr_null(strstr(r.v[8].message, "Looks like"));
	flaky_results_free(&r);

	parse_fixture("tap/prove.txt", NULL, &r);
	check(&r, prove, FLAKY_ARRAY_SIZE(prove));
	ck_assert_int_eq(r.summary_total, 7);	/* "Files=1, Tests=7" */
	flaky_results_free(&r);
}
END_TEST

START_TEST(junit_pytest)
{
	static const struct want w[] = {
		{ "tests/test_calc.py::test_plain", FLAKY_PASS, 0, NULL },
		{ "tests/test_calc.py::test_fails", FLAKY_FAIL, 0,
		    "AssertionError: assert {'retries': 2} == {'retries': 1}" },
		{ "tests/test_calc.py::test_param[1]", FLAKY_FAIL, 0,
		    "tests/test_calc.py:15: AssertionError" },
		{ "tests/test_calc.py::test_param[a b]", FLAKY_PASS, 0, NULL },
		{ "tests/test_calc.py::test_param[x[y]]", FLAKY_PASS, 0, NULL },
		{ "tests/test_calc.py::TestGroup::test_inside", FLAKY_PASS, 0,
		    NULL },
		{ "tests/test_calc.py::TestGroup::test_skipped", FLAKY_SKIP, 0,
		    NULL },
		{ "tests/test_calc.py::TestGroup::test_xfail", FLAKY_XFAIL, 0,
		    "known bug" },
		{ "tests/test_calc.py::TestGroup::TestNested::test_deep",
		    FLAKY_PASS, 0, NULL },
		{ "tests/test_calc.py::test_error", FLAKY_ERROR, 0,
		    "RuntimeError: fixture exploded" },
		{ "tests/sub/test_mod.py::test_sub_ok", FLAKY_PASS, 0, NULL },
	};
	struct flaky_results	 r;
	char			 err[512] = "";

	ck_assert_int_eq(flaky_parse_junit(FIXTURES "/junit/pytest.xml", &r,
	    err, sizeof err), 0);
	ck_assert_str_eq(r.runner, "pytest");
	check(&r, w, FLAKY_ARRAY_SIZE(w));
	ck_assert_int_eq(r.summary_total, 11);
	/* Entities in attributes and text are decoded. */
	ck_assert_ptr_nonnull(strstr(r.v[1].message,
	    ">       assert {\"retries\": 2}"));
	flaky_results_free(&r);

	/* xunit1 names the file: the same node ids. */
	ck_assert_int_eq(flaky_parse_junit(FIXTURES "/junit/pytest-xunit1.xml",
	    &r, err, sizeof err), 0);
	ck_assert_int_eq(r.n, FLAKY_ARRAY_SIZE(w));
	for (size_t i = 0; i < r.n; i++) {
		ck_assert_str_eq(r.v[i].test, w[i].test);
		ck_assert_int_eq(r.v[i].outcome, w[i].outcome);
	}
	flaky_results_free(&r);
}
END_TEST

START_TEST(junit_jest_surefire)
{
	static const struct want sure[] = {
		{ "com.example.PaymentTest.retriesOnce", FLAKY_FAIL, 412000,
		    "failed, then passed on retry: expected:<1> but was:<2>" },
		{ "com.example.PaymentTest.alwaysBroken", FLAKY_FAIL, 101000,
		    "Connection refused" },
		{ "com.example.PaymentTest.plain", FLAKY_PASS, 2000, NULL },
		{ "com.example.PaymentTest.ignored", FLAKY_SKIP, 0, NULL },
	};
	struct flaky_results	 r;
	char			 err[512] = "";

	ck_assert_int_eq(flaky_parse_junit(FIXTURES "/junit/surefire-flaky.xml",
	    &r, err, sizeof err), 0);
	ck_assert_str_eq(r.runner, "junit");
	check(&r, sure, FLAKY_ARRAY_SIZE(sure));
	ck_assert_int_eq(r.summary_total, 4);
	flaky_results_free(&r);

	/* jest-junit 16 with its default templates: classname == name, so
	 * the id is the name. It writes the todo test as a testcase but
	 * leaves it out of tests="12". */
	ck_assert_int_eq(flaky_parse_junit(FIXTURES "/junit/jest-junit.xml",
	    &r, err, sizeof err), 0);
	ck_assert_int_eq(r.n, 13);
	ck_assert_int_eq(r.summary_total, 12);
	ck_assert_str_eq(r.v[0].test, "payments retries once");
	ck_assert_int_eq(r.v[0].outcome, FLAKY_FAIL);
	ck_assert_int_eq(r.v[0].duration_us, 4000);
	ck_assert_ptr_nonnull(strstr(r.v[0].message, "deep equality"));
	ck_assert_str_eq(r.v[2].test, "same title");
	ck_assert_str_eq(r.v[3].test, "same title #2");
	ck_assert_int_eq(r.v[3].outcome, FLAKY_FAIL);
	ck_assert_str_eq(r.v[10].test, "math skipped one");
	ck_assert_int_eq(r.v[10].outcome, FLAKY_SKIP);
	ck_assert_int_eq(count(&r, FLAKY_FAIL), 3);
	flaky_results_free(&r);
}
END_TEST

/* Hostile and broken files: an error naming FILE:LINE:COL, no results. */
START_TEST(junit_refused)
{
	static const struct {
		const char	*file;
		const char	*where;
		const char	*what;
	} bad[] = {
		{ "billion-laughs.xml", ":3:16: ", "entity" },
		{ "external-entity.xml", ":3:", "entity" },
		{ "param-entity.xml", ":3:", "entity" },
		{ "truncated.xml", ":15:", "expected well-formed XML" },
		{ "not-junit.xml", ":2:1: ", "<testsuite" },
		{ "deep.xml", ":1:", "at most 64 nested elements (the depth "
		    "limit)" },
	};
	struct flaky_results	 r;
	char			 path[1024], err[512];
	int			 fd;

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(bad); i++) {
		snprintf(path, sizeof path, "%s/junit/%s", FIXTURES,
		    bad[i].file);
		err[0] = '\0';
		ck_assert_int_eq(flaky_parse_junit(path, &r, err, sizeof err),
		    -EINVAL);
		ck_assert_int_eq(r.n, 0);
		ck_assert_ptr_null(r.v);
		ck_assert_msg(strncmp(err, path, strlen(path)) == 0 &&
		    strstr(err, bad[i].where) == err + strlen(path) &&
		    strstr(err, bad[i].what) != NULL, "%s: %s", bad[i].file,
		    err);
	}
	/* An external DTD is never fetched: the document parses offline. */
	ck_assert_int_eq(flaky_parse_junit(FIXTURES "/junit/external-dtd.xml",
	    &r, err, sizeof err), 0);
	ck_assert_int_eq(r.n, 1);
	ck_assert_str_eq(r.v[0].test, "a.b");
	flaky_results_free(&r);
	/* Missing file, and a buffer with garbage. */
	ck_assert_int_eq(flaky_parse_junit(FIXTURES "/junit/none.xml", &r, err,
	    sizeof err), -ENOENT);
	ck_assert_int_eq(flaky_parse_junit_buffer("junk", "\x01\xff<<", 4, &r,
	    err, sizeof err), -EINVAL);
	ck_assert_int_eq(strncmp(err, "junk:1:", 7), 0);
	ck_assert_int_eq(r.n, 0);

	/* Gigantic: refused before reading (a sparse file, 257 MiB). */
	ck_assert_int_eq(flaky_parse_junit_buffer("big", "", (size_t)257 << 20,
	    &r, err, sizeof err), -EFBIG);
	snprintf(path, sizeof path, "/tmp/flaky-junit-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)257 << 20), 0);
	close(fd);
	ck_assert_int_eq(flaky_parse_junit(path, &r, err, sizeof err), -EFBIG);
	ck_assert_ptr_nonnull(strstr(err, "256 MiB"));
	ck_assert_int_eq(r.n, 0);
	unlink(path);
}
END_TEST

/* The cap on the address space of a child that reads hostile JUnit; not
 * set under AddressSanitizer or valgrind, which size it themselves. */
#define JUNIT_AS_LIMIT	(256UL * 1024 * 1024)
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN	1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN	0
#endif

/* Parse path (or buf when not NULL) in a child under RLIMIT_AS: it exits
 * 0 when refused with want, 2 otherwise. Returns the seconds it took
 * (0 under valgrind). */
static double
junit_refused_in_child(const char *path, const char *buf, size_t len,
    const char *want)
{
	struct timespec	 t0, t1;
	pid_t		 pid;
	int		 status;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit	 rl = { JUNIT_AS_LIMIT, JUNIT_AS_LIMIT };
		struct flaky_results r;
		char		 err[512] = "";
		int		 e;

		if (!UNDER_ASAN && getenv("FLAKY_VALGRIND") == NULL &&
		    setrlimit(RLIMIT_AS, &rl) < 0)
			_exit(4);
		e = path != NULL ? flaky_parse_junit(path, &r, err, sizeof err) :
		    flaky_parse_junit_buffer("mem.xml", buf, len, &r, err,
		    sizeof err);
		if (e != -EINVAL || r.n != 0 || strcmp(err, want) != 0) {
			fprintf(stderr, "%d: got  %s\nwant %s\n", e, err, want);
			_exit(2);
		}
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_msg(WIFEXITED(status), "the parse died (signal %d)",
	    WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	/* Under valgrind time means nothing: only the refusal counts. */
	if (getenv("FLAKY_VALGRIND") != NULL)
		return 0.0;
	return (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

/* One huge attribute, comment or nesting: refused early, in little
 * memory, whether read from a file or a buffer. */
START_TEST(junit_limits)
{
	static const char head[] = "<testsuite>\n  <testcase name=\"";
	static const char markup[] = "mem.xml:2:3: expected tags, comments "
	    "and processing instructions of at most 1048576 bytes (the markup "
	    "size limit), got more";
	char	 path[64], want[256], *buf;
	size_t	 n = 2u << 20;
	int	 fd;

	/* 2 MiB of attribute value in memory. */
	buf = malloc(n);
	ck_assert_ptr_nonnull(buf);
	memcpy(buf, head, sizeof head - 1);
	memset(buf + sizeof head - 1, 'x', n - (sizeof head - 1));
	junit_refused_in_child(NULL, buf, n, markup);

	/* 200 MiB of it in a file: expat never holds more than the bound. */
	snprintf(path, sizeof path, "/tmp/flaky-junit-XXXXXX");
	ck_assert_int_ge(fd = mkstemp(path), 0);
	ck_assert_int_eq(write(fd, head, sizeof head - 1),
	    (ssize_t)sizeof head - 1);
	memset(buf, 'x', n);
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(write(fd, buf, n), (ssize_t)n);
	close(fd);
	snprintf(want, sizeof want, "%s%s", path, markup + 7);
	ck_assert_msg(junit_refused_in_child(path, NULL, 0, want) < 2.0,
	    "slow refusal");
	unlink(path);

	/* A comment that never ends. */
	memcpy(buf, "<testsuite><!--", 15);
	junit_refused_in_child(NULL, buf, n, "mem.xml:1:12: expected tags, "
	    "comments and processing instructions of at most 1048576 bytes "
	    "(the markup size limit), got more");

	/* 100,000 nested elements: the 65th is refused. */
	memcpy(buf, "<testsuite>", 11);
	for (size_t i = 0; i < 100000; i++)
		memcpy(buf + 11 + 3 * i, "<a>", 3);
	ck_assert_msg(junit_refused_in_child(NULL, buf, 11 + 300000,
	    "mem.xml:1:201: expected at most 64 nested elements (the depth "
	    "limit), got more") < 2.0, "slow refusal");
	free(buf);
}
END_TEST

/* Output nobody can parse gives a warning, never a crash; broken runner
 * output still parses what it can. */
START_TEST(garbage)
{
	static const char binary[] = "\xff\xfe\x00\x01 binary \x80\x81\n\n\n";
	static const char *const junk[] = {
		"PASS \nFAIL \n  \xe2\x97\x8f \n  \xe2\x97\x8f\n",
		"=== RUN   \n--- FAIL: \n--- PASS:  (\n--- SKIP: x (s)\n"
		"ok  \t\n",
		"TAP version 13\nnot ok\nok 99999999999999999999 -\n  ---\n"
		"  error: |\n",
		"1..\nok 1 - a # SKIP\n    ok 1\n        ok 1\n            "
		"not ok 1 - deep\n# Subtest\n",
	};
	struct flaky_results	 r;
	char			*big;
	size_t			 n = 3 * FLAKY_LINE_MAX;

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(junk); i++) {
		tu_parse_chunked(junk[i], strlen(junk[i]), 3, NULL, &r);
		flaky_results_free(&r);
	}
	tu_parse_chunked(binary, sizeof binary - 1, 0, NULL, &r);
	ck_assert_ptr_nonnull(r.warning);
	ck_assert_int_eq(r.n, 0);
	flaky_results_free(&r);
	/* A huge Jest title is cut (ids are bounded at 8 KiB). */
	big = malloc(n + 64);
	ck_assert_ptr_nonnull(big);
	memcpy(big, "PASS a.test.js\n  \xe2\x9c\x93 ", 22);
	memset(big + 22, 'x', n);
	memcpy(big + 22 + n, " (1 ms)\n", 8);
	tu_parse_chunked(big, n + 30, 4096, NULL, &r);
	ck_assert_int_eq(r.n, 1);
	ck_assert_int_le(strlen(r.v[0].test), 8 * 1024);
	flaky_results_free(&r);
	free(big);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("parse_js");
	TCase	*tc = tcase_create("parse_js");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, jest_verbose);
	tcase_add_test(tc, jest_default);
	tcase_add_test(tc, jest_single_and_broken);
	tcase_add_test(tc, jest_large);
	tcase_add_test(tc, jest_rundir_colour);
	tcase_add_test(tc, jest_console);
	tcase_add_test(tc, jest_header_extras);
	tcase_add_test(tc, gotest_verbose);
	tcase_add_test(tc, gotest_plain_panic_timeout);
	tcase_add_test(tc, tap_node);
	tcase_add_test(tc, tap_perl);
	tcase_add_test(tc, junit_pytest);
	tcase_add_test(tc, junit_jest_surefire);
	tcase_add_test(tc, junit_refused);
	tcase_add_test(tc, junit_limits);
	tcase_add_test(tc, garbage);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
