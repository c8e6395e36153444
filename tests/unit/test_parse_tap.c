/* parse: the TAP parser, against output captured from node --test and
 * prove (tests/fixtures/capture-js.sh). */
#include "buildconf.h"

#include <check.h>
#include <string.h>

#include "parse/parse.h"
#include "parse_test.h"
#include "test_helper.h"
#include "util/util.h"

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
		/* "suite" and "suite > deeper" are describe blocks ("type:
		 * 'suite'"): node counts them as suites, not tests */
	};
	struct flaky_results	 r;

	pt_fixture("tap/node.txt", NULL, &r);
	ck_assert_str_eq(r.runner, "tap");
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
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

	pt_fixture("tap/perl.txt", NULL, &r);
	pt_check(&r, bare, FLAKY_ARRAY_SIZE(bare));
	ck_assert_int_eq(r.summary_total, 7);
	flaky_results_free(&r);

	pt_fixture("tap/perl-merged.txt", NULL, &r);
	pt_check(&r, merged, FLAKY_ARRAY_SIZE(merged));
	/* Test::More's closing count is not a test's message. */
	ck_assert_ptr_null(strstr(r.v[8].message, "Looks like"));
	flaky_results_free(&r);

	pt_fixture("tap/prove.txt", NULL, &r);
	pt_check(&r, prove, FLAKY_ARRAY_SIZE(prove));
	ck_assert_int_eq(r.summary_total, 7);	/* "Files=1, Tests=7" */
	flaky_results_free(&r);
}
END_TEST

/* A Perl reference in a description prints its address, which changes
 * from run to run: two runs give the same ids ("CODE(0x...)"), and other
 * parentheses stay. */
START_TEST(tap_perl_references)
{
	static const struct want w[] = {
		{ "encountered CODE(0x...), but JSON can only represent "
		    "references", FLAKY_PASS, -1, NULL },
		{ "a hash HASH(0x...) and an object Foo=HASH(0x...)",
		    FLAKY_PASS, -1, NULL },
		{ "no reference (0xff) here", FLAKY_PASS, -1, NULL },
	};
	struct flaky_results	 r;

	pt_fixture("tap/refs-1.txt", NULL, &r);
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
	flaky_results_free(&r);
	pt_fixture("tap/refs-2.txt", NULL, &r);
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
	flaky_results_free(&r);
}
END_TEST

static void
add_tests(TCase *tc)
{
	tcase_add_test(tc, tap_node);
	tcase_add_test(tc, tap_perl);
	tcase_add_test(tc, tap_perl_references);
}

int
main(void)
{
	return pt_run("parse_tap", add_tests);
}
