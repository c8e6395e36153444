/* parse: the Jest parser, against output captured from the real runner
 * (tests/fixtures/capture-js.sh), and output nobody can parse. */
#include "buildconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"
#include "parse_test.h"
#include "test_helper.h"
#include "util/util.h"

#define SEP " \xe2\x80\xba "	/* Jest's " › " */

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

	pt_fixture("jest/verbose-multi.txt", NULL, &r);
	ck_assert_str_eq(r.runner, "jest");
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
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

	pt_fixture("jest/default-multi.txt", NULL, &r);
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
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

	pt_fixture("jest/single.txt", NULL, &r);
	pt_check(&r, single, FLAKY_ARRAY_SIZE(single));
	ck_assert_int_eq(r.summary_total, 3);
	ck_assert_ptr_null(r.warning);
	flaky_results_free(&r);

	/* A file that fails to load is one error; the passing file is not
	 * listed without --verbose, so the warning says so. */
	pt_fixture("jest/broken.txt", NULL, &r);
	pt_check(&r, broken, FLAKY_ARRAY_SIZE(broken));
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

	pt_fixture("jest/large-verbose-w2.txt", NULL, &r);
	ck_assert_int_eq(r.summary_total, 288);
	ck_assert_int_eq(r.n, 288);
	ck_assert_int_eq(pt_count(&r, FLAKY_FAIL), 21);
	ck_assert_int_eq(pt_count(&r, FLAKY_SKIP), 17);
	ck_assert_int_eq(pt_count(&r, FLAKY_PASS), 250);
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
	pt_fixture("jest/large-default-w3.txt", NULL, &r);
	ck_assert_int_eq(r.summary_total, 288);
	ck_assert_int_eq(r.n, 21);
	ck_assert_int_eq(pt_count(&r, FLAKY_FAIL), 21);
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

	pt_fixture("jest/heap-verbose.txt", NULL, &r);
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

	pt_fixture("jest/console-merged.txt", NULL, &r);
	ck_assert_int_eq(r.n, 3);
	ck_assert_int_eq(r.summary_total, 3);
	ck_assert_int_eq(pt_count(&r, FLAKY_PASS), 2);
	ck_assert_int_eq(pt_count(&r, FLAKY_FAIL), 1);
	for (size_t i = 0; i < r.n; i++)
		ck_assert_ptr_null(strstr(r.v[i].test, "fake"));
	flaky_results_free(&r);

	pt_fixture("jest/console-stderr.txt", NULL, &r);
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

/* Jest 22 to 25 (tests/fixtures/jest/jest22, capture-js.sh): durations
 * without a space, "(31ms)" and a slow file's "(5.217s)", stay out of the
 * ids; skipped tests are "○ skipped 2 tests" for a block up to Jest 23
 * (no ids: Jest's own count covers them), "○ skipped title" in 24 and 25,
 * "○ title" with --expand. */
#define OS "old/skip.test.js" SEP
#define OW "old/slow.test.js" SEP
START_TEST(jest_old_forms)
{
	static const struct want v22[] = {
		{ OS "grp" SEP "a", FLAKY_PASS, 1000, NULL },
		{ OS "grp" SEP "busy 30 ms", FLAKY_PASS, 31000, NULL },
		{ OW "busy 5.2 s", FLAKY_PASS, 5200000, NULL },
	};
	static const struct want v25[] = {
		{ OS "lone", FLAKY_SKIP, -1, NULL },
		{ OS "grp" SEP "a", FLAKY_PASS, -1, NULL },
		{ OS "grp" SEP "busy 30 ms", FLAKY_PASS, 31000, NULL },
		{ OS "grp" SEP "b", FLAKY_SKIP, -1, NULL },
		{ OS "grp" SEP "c", FLAKY_SKIP, -1, NULL },
		{ OW "busy 5.2 s", FLAKY_PASS, 5200000, NULL },
	};
	static const struct want expand[] = {
		{ OW "busy 5.2 s", FLAKY_PASS, 5200000, NULL },
		{ OS "lone", FLAKY_SKIP, -1, NULL },
		{ OS "grp" SEP "a", FLAKY_PASS, -1, NULL },
		{ OS "grp" SEP "b", FLAKY_SKIP, -1, NULL },
		{ OS "grp" SEP "c", FLAKY_SKIP, -1, NULL },
		{ OS "grp" SEP "busy 30 ms", FLAKY_PASS, 30000, NULL },
	};
	struct flaky_results	 r;

	pt_fixture("jest/jest22/old-verbose.txt", NULL, &r);
	pt_check(&r, v22, FLAKY_ARRAY_SIZE(v22));
	ck_assert_int_eq(r.summary_total, 6);
	ck_assert_ptr_null(r.incomplete);
	ck_assert_ptr_null(r.warning);
	flaky_results_free(&r);

	pt_fixture("jest/jest22/old-verbose-25.txt", NULL, &r);
	pt_check(&r, v25, FLAKY_ARRAY_SIZE(v25));
	ck_assert_ptr_null(r.incomplete);
	flaky_results_free(&r);

	pt_fixture("jest/jest22/old-expand.txt", NULL, &r);
	pt_check(&r, expand, FLAKY_ARRAY_SIZE(expand));
	ck_assert_ptr_null(r.incomplete);
	flaky_results_free(&r);
}
END_TEST

/* A real Jest 22 era project: prop-types (329 tests, 3 skipped, 1 failing
 * under Jest 22). Every id is a test's, once, with no duration in it. */
START_TEST(jest22_prop_types)
{
	struct flaky_results	 r;
	const struct flaky_result *f;

	pt_fixture("jest/jest22/prop-types-verbose.txt", NULL, &r);
	ck_assert_str_eq(r.runner, "jest");
	ck_assert_int_eq(r.summary_total, 329);
	ck_assert_int_eq(r.n, 326);
	ck_assert_int_eq(pt_count(&r, FLAKY_PASS), 325);
	ck_assert_int_eq(pt_count(&r, FLAKY_FAIL), 1);
	ck_assert_ptr_null(r.incomplete);
	for (size_t i = 0; i < r.n; i++) {
		ck_assert_msg(strstr(r.v[i].test, "ms)") == NULL &&
		    strstr(r.v[i].test, " #") == NULL, "%s", r.v[i].test);
		ck_assert_int_eq(strncmp(r.v[i].test, "__tests__/PropTypes",
		    19), 0);
	}
	ck_assert_str_eq(r.v[0].test,
	    "__tests__/PropTypesDevelopmentStandalone-test.js" SEP
	    "PropTypesDevelopmentStandalone" SEP "checkPropTypes" SEP
	    "should warn for invalid validators");
	ck_assert_int_eq(r.v[0].duration_us, 5000);
	f = pt_find(&r, "__tests__/PropTypesDevelopmentStandalone-test.js" SEP
	    "PropTypesDevelopmentStandalone" SEP "ElementType Types" SEP
	    "should warn for invalid types");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->outcome, FLAKY_FAIL);
	ck_assert_int_eq(f->duration_us, 39000);
	ck_assert_ptr_nonnull(strstr(f->message, "Tests cannot be nested"));
	flaky_results_free(&r);

	/* --expand names the three skipped tests: all 329. */
	pt_fixture("jest/jest22/prop-types-expand.txt", NULL, &r);
	ck_assert_int_eq(r.n, 329);
	ck_assert_int_eq(pt_count(&r, FLAKY_SKIP), 3);
	ck_assert_ptr_nonnull(pt_find(&r,
	    "__tests__/PropTypesDevelopmentStandalone-test.js" SEP
	    "PropTypesDevelopmentStandalone" SEP "ElementType Types" SEP
	    "should support forwardRef component"));
	ck_assert_ptr_null(r.incomplete);
	flaky_results_free(&r);

	/* Without --verbose Jest 22 names the failure only. */
	pt_fixture("jest/jest22/prop-types-plain.txt", NULL, &r);
	ck_assert_int_eq(r.n, 1);
	ck_assert_ptr_nonnull(r.incomplete);
	ck_assert_ptr_nonnull(strstr(r.incomplete, "--verbose"));
	flaky_results_free(&r);
}
END_TEST

/* More results than Jest's count is not a run that stopped early: the
 * reason says what it is. (A tree of two tests under a total of one.) */
START_TEST(jest_more_than_summary)
{
	static const char out[] =
	    "PASS a.test.js\n"
	    "  \xe2\x9c\x93 one (1 ms)\n"
	    "  \xe2\x9c\x93 two (1 ms)\n"
	    "\n"
	    "Tests:       1 passed, 1 total\n";
	struct flaky_results	 r;

	pt_text(out, &r);
	ck_assert_int_eq(r.n, 2);
	ck_assert_ptr_nonnull(r.incomplete);
	ck_assert_ptr_nonnull(strstr(r.incomplete, "more than it ran"));
	ck_assert_ptr_null(strstr(r.incomplete, "stopped early"));
	flaky_results_free(&r);
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

static void
add_tests(TCase *tc)
{
	tcase_add_test(tc, jest_verbose);
	tcase_add_test(tc, jest_default);
	tcase_add_test(tc, jest_single_and_broken);
	tcase_add_test(tc, jest_large);
	tcase_add_test(tc, jest_rundir_colour);
	tcase_add_test(tc, jest_header_extras);
	tcase_add_test(tc, jest_old_forms);
	tcase_add_test(tc, jest22_prop_types);
	tcase_add_test(tc, jest_more_than_summary);
	tcase_add_test(tc, jest_console);
	tcase_add_test(tc, garbage);
}

int
main(void)
{
	return pt_run("parse_jest", add_tests);
}
