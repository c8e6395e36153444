/* parse: the Vitest parser, against output captured from the real runner
 * (tests/fixtures/capture-js.sh: flaky's demo under Vitest 3.2.7 and 4.0.17,
 * unjs/ufo under 4.0.17). */
#include "buildconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"
#include "parse_test.h"
#include "test_helper.h"
#include "util/util.h"

#define C "test/cart.test.js > cart > "
#define S "test/search.test.js > "

/* --reporter=verbose: every test with its file, duration and short
 * message; the version from the RUN line. */
START_TEST(vitest_verbose)
{
	static const struct want w[] = {
		{ C "adds items", FLAKY_PASS, 25000, NULL },
		{ C "checkout > retries the payment", FLAKY_FAIL, 16000,
		    "expected true to be false // Object.is equality" },
		{ C "checkout > talks to the legacy API", FLAKY_FAIL, 8000,
		    "expected { v: 1 } to deeply equal { v: 2 }" },
		{ C "refunds", FLAKY_SKIP, -1, NULL },
		{ S "search > finds a word", FLAKY_PASS, 1000, NULL },
		{ S "search > matches (a+b) * c literally", FLAKY_PASS, 0,
		    NULL },
		{ S "top level", FLAKY_PASS, 0, NULL },
	};
	struct flaky_results	 r;

	pt_fixture("vitest/demo-verbose.txt", NULL, &r);
	ck_assert_str_eq(r.runner, "vitest");
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
	ck_assert_int_eq(r.summary_total, 7);
	ck_assert_str_eq(r.version, "3.2.7");
	ck_assert_ptr_null(r.incomplete);
	ck_assert_uint_eq(r.nattempts, 0);
	flaky_results_free(&r);
}
END_TEST

/* stdout and stderr merged: the failures' details (stderr) replace the
 * short message, up to where the test failed. Alone, stderr is no
 * runner's (not Jest's either, whose "FAIL path" it resembles). */
START_TEST(vitest_details)
{
	struct flaky_results	 r;
	const struct flaky_result *t;

	pt_fixture("vitest/demo-merged.txt", NULL, &r);
	ck_assert_uint_eq(r.n, 7);
	ck_assert_ptr_null(r.incomplete);
	t = pt_find(&r, C "checkout > talks to the legacy API");
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(strstr(t->message, "AssertionError: expected "
	    "{ v: 1 } to deeply equal { v: 2 }"));
	ck_assert_ptr_nonnull(strstr(t->message, "test/cart.test.js:18:24"));
	/* the code frame after the location is not kept */
	ck_assert_ptr_null(strstr(t->message, "| "));
	flaky_results_free(&r);

	pt_fixture("vitest/demo-stderr.txt", NULL, &r);
	ck_assert_str_eq(r.runner, "");
	ck_assert_uint_eq(r.n, 0);
	flaky_results_free(&r);
}
END_TEST

/* The default reporter names the tests of failing files only: those are
 * kept, the run is incomplete. */
START_TEST(vitest_default_reporter)
{
	struct flaky_results	 r;

	pt_fixture("vitest/demo-plain.txt", NULL, &r);
	ck_assert_uint_eq(r.n, 4);
	ck_assert_str_eq(r.v[1].test, C "checkout > retries the payment");
	ck_assert_int_eq(r.v[1].outcome, FLAKY_FAIL);
	ck_assert_int_eq(r.v[1].duration_us, 74000);
	ck_assert_str_eq(r.incomplete, "Vitest printed only the tests of "
	    "failing files (7 in its summary, 4 parsed): run it with "
	    "--reporter=verbose");
	flaky_results_free(&r);

	/* unjs/ufo: no file fails, no test is named */
	pt_fixture("vitest/ufo-plain.txt", NULL, &r);
	ck_assert_uint_eq(r.n, 0);
	ck_assert_int_eq(r.summary_total, 485);
	ck_assert_ptr_nonnull(strstr(r.incomplete, "(485 in its summary, 0 "
	    "parsed)"));
	flaky_results_free(&r);
}
END_TEST

/* A file that fails to load is named on stderr only: verbose stdout
 * alone is incomplete (Vitest counts a failed file no test explains);
 * merged, the file is an error result and the run complete. */
START_TEST(vitest_broken_file)
{
	struct flaky_results	 r;
	const struct flaky_result *t;

	pt_fixture("vitest/broken-verbose.txt", NULL, &r);
	ck_assert_uint_eq(r.n, 7);
	ck_assert_str_eq(r.incomplete, "Vitest counts 2 failed test files, 1 "
	    "had a failing test: a file failed to load or a hook failed "
	    "outside its tests, and the tests it holds have no outcome (its "
	    "error is under \"Failed Suites\" on Vitest's stderr)");
	flaky_results_free(&r);

	pt_fixture("vitest/broken-merged.txt", NULL, &r);
	ck_assert_uint_eq(r.n, 8);
	ck_assert_int_eq(r.summary_total, 7);
	ck_assert_ptr_null(r.incomplete);
	t = pt_find(&r, "test/broken.test.js");
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->outcome, FLAKY_ERROR);
	ck_assert_ptr_nonnull(strstr(t->message, "Error: cannot load"));
	flaky_results_free(&r);
}
END_TEST

/* Vitest 4's "(retry x1)": the test failed first, then passed; it keeps
 * its first attempt's outcome, and every attempt is recorded. */
START_TEST(vitest_retries)
{
	struct flaky_results	 r;
	const struct flaky_result *pay, *legacy;

	pt_fixture("vitest/v4-retry.txt", NULL, &r);
	ck_assert_str_eq(r.version, "4.0.17");
	ck_assert_uint_eq(r.n, 7);
	ck_assert_ptr_null(r.incomplete);
	pay = &r.v[1];
	legacy = &r.v[2];
	ck_assert_str_eq(pay->test, C "checkout > retries the payment");
	ck_assert_int_eq(pay->outcome, FLAKY_FAIL);
	ck_assert_int_eq(pay->duration_us, 13000);
	ck_assert_str_eq(pay->message, "failed, then passed on retry 1 "
	    "(Vitest's retry)");
	ck_assert_int_eq(legacy->outcome, FLAKY_FAIL);
	/* one "→" line per attempt */
	ck_assert_ptr_nonnull(strstr(legacy->message, "{ v: 2 }\nexpected "
	    "{ v: 1 } to deeply equal { v: 2 }\nexpected"));
	/* 2 attempts of the first, 3 of the second */
	ck_assert_uint_eq(r.nattempts, 5);
	ck_assert_uint_eq(r.attempts[0].result, 1);
	ck_assert_int_eq(r.attempts[0].attempt, 0);
	ck_assert_int_eq(r.attempts[0].outcome, FLAKY_FAIL);
	ck_assert_int_eq(r.attempts[1].attempt, 1);
	ck_assert_int_eq(r.attempts[1].outcome, FLAKY_PASS);
	for (size_t i = 2; i < 5; i++) {
		ck_assert_uint_eq(r.attempts[i].result, 2);
		ck_assert_int_eq(r.attempts[i].attempt, (int)i - 2);
		ck_assert_int_eq(r.attempts[i].outcome, FLAKY_FAIL);
	}
	flaky_results_free(&r);
}
END_TEST

/* unjs/ufo under Vitest 4.0.17: 485 tests in 13 files, complete; a test
 * titled "" keeps its empty name. The shuffled demo's seed. */
START_TEST(vitest_ufo_and_seed)
{
	struct flaky_results	 r;

	pt_fixture("vitest/ufo-verbose.txt", NULL, &r);
	ck_assert_uint_eq(r.n, 485);
	ck_assert_int_eq(r.summary_total, 485);
	ck_assert_ptr_null(r.incomplete);
	ck_assert_uint_eq(pt_count(&r, FLAKY_PASS), 485);
	ck_assert_ptr_nonnull(pt_find(&r, "test/encoding.test.ts > "
	    "encodeHash > "));
	ck_assert_ptr_nonnull(pt_find(&r, "test/encoding.test.ts > encode > "
	    "https://www.example.com/path/to/file.html"));
	flaky_results_free(&r);

	pt_fixture("vitest/demo-shuffle.txt", NULL, &r);
	ck_assert_str_eq(r.seed, "7");
	ck_assert_uint_eq(r.n, 7);
	ck_assert_ptr_null(r.incomplete);
	flaky_results_free(&r);
}
END_TEST

/* What Vitest 4's verbose reporter adds when configured (its code): a
 * project's "|name| ", the location of includeTaskLocation, the heap of
 * --logHeapUsage, a skip's note. */
START_TEST(vitest_labels)
{
	struct flaky_results	 r;

	pt_text(" RUN  v4.0.17 /app\n"
	    " \xe2\x9c\x93 |unit| test/a.test.ts:3:5 > s > t 5ms 12 MB heap "
	    "used\n"
	    " \xe2\x86\x93 test/a.test.ts > s > later [not now]\n"
	    " \xc3\x97 |unit| test/b.test.ts > u 7ms (retry x1)\n"
	    "   \xe2\x86\x92 boom\n"
	    " Test Files  1 failed | 1 passed (2)\n"
	    "      Tests  1 failed | 1 passed | 1 skipped (3)\n", &r);
	ck_assert_uint_eq(r.n, 3);
	ck_assert_str_eq(r.v[0].test, "|unit| test/a.test.ts > s > t");
	ck_assert_int_eq(r.v[0].duration_us, 5000);
	ck_assert_str_eq(r.v[1].test, "test/a.test.ts > s > later");
	ck_assert_int_eq(r.v[1].outcome, FLAKY_SKIP);
	ck_assert_str_eq(r.v[2].test, "|unit| test/b.test.ts > u");
	ck_assert_str_eq(r.v[2].message, "boom");
	ck_assert_uint_eq(r.nattempts, 2);
	ck_assert_ptr_null(r.incomplete);
	flaky_results_free(&r);
}
END_TEST

/* A run cut short: no summary, incomplete. */
START_TEST(vitest_killed)
{
	struct flaky_results	 r;

	pt_text(" RUN  v3.2.7 /app\n"
	    " \xe2\x9c\x93 test/a.test.js > one 1ms\n", &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_str_eq(r.incomplete, "the run ended without Vitest's "
	    "summary (Tests  N): it was killed or stopped early");
	flaky_results_free(&r);
}
END_TEST

static void
add_tests(TCase *tc)
{
	tcase_add_test(tc, vitest_verbose);
	tcase_add_test(tc, vitest_details);
	tcase_add_test(tc, vitest_default_reporter);
	tcase_add_test(tc, vitest_broken_file);
	tcase_add_test(tc, vitest_retries);
	tcase_add_test(tc, vitest_ufo_and_seed);
	tcase_add_test(tc, vitest_labels);
	tcase_add_test(tc, vitest_killed);
}

int
main(void)
{
	return pt_run("parse_vitest", add_tests);
}
