/* parse: the go test parser, against output captured from the real
 * runner (tests/fixtures/capture-js.sh). */
#include "buildconf.h"

#include <check.h>
#include <string.h>

#include "parse/parse.h"
#include "parse_test.h"
#include "test_helper.h"
#include "util/util.h"

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

	pt_fixture("gotest/verbose.txt", NULL, &r);
	ck_assert_str_eq(r.runner, "gotest");
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
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

	pt_fixture("gotest/plain.txt", NULL, &r);
	pt_check(&r, plain, FLAKY_ARRAY_SIZE(plain));
	ck_assert_ptr_nonnull(r.warning);
	ck_assert_ptr_nonnull(strstr(r.warning, "-v"));
	flaky_results_free(&r);

	pt_fixture("gotest/panic.txt", NULL, &r);
	pt_check(&r, panic, FLAKY_ARRAY_SIZE(panic));
	/* The goroutine dump is not the message. */
	ck_assert_ptr_null(strstr(r.v[1].message, "goroutine"));
	flaky_results_free(&r);

	pt_fixture("gotest/timeout.txt", NULL, &r);
	pt_check(&r, timeout, FLAKY_ARRAY_SIZE(timeout));
	flaky_results_free(&r);
}
END_TEST

/* flaky's SIGQUIT before a hung run's kill (issue 33): the goroutine dump
 * is the test's stacks, not its message, so every timeout has the same
 * failure mode. */
START_TEST(gotest_sigquit)
{
	static const struct want w[] = {
		{ "example.com/hangs/TestPing", FLAKY_PASS, 0, NULL },
		{ "example.com/hangs/TestReply", FLAKY_FAIL, -2, "SIGQUIT: quit" },
	};
	struct flaky_results	 r;

	pt_fixture("gotest/sigquit-hung.txt", NULL, &r);
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
	ck_assert_str_eq(r.v[1].message, "SIGQUIT: quit");
	flaky_results_free(&r);
}
END_TEST

static void
add_tests(TCase *tc)
{
	tcase_add_test(tc, gotest_verbose);
	tcase_add_test(tc, gotest_plain_panic_timeout);
	tcase_add_test(tc, gotest_sigquit);
}

int
main(void)
{
	return pt_run("parse_gotest", add_tests);
}
