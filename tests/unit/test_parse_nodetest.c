/* parse: the node:test parser (Node 20's spec reporter), against output
 * captured from the real runner (tests/fixtures/capture-js.sh: flaky's
 * demo and suite, markedjs/marked, fastify/fastify-cors); its TAP
 * reporter goes through the TAP parser, with the same ids. */
#include "buildconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"
#include "parse_test.h"
#include "test_helper.h"
#include "util/util.h"

#define SUITE	"/work/wt-js/tests/fixtures/nodetest/suite"

/* Names from the outermost suite down; node counts suites apart, and so
 * does flaky: they are no results. Messages with the first "at" line and
 * the failing list's "test at". */
START_TEST(nodetest_spec)
{
	static const struct want w[] = {
		{ "cart > adds items", FLAKY_PASS, 21513, NULL },
		{ "cart > checkout > retries the payment", FLAKY_FAIL, 2587,
		    "true !== false" },
		{ "cart > checkout > talks to the legacy API", FLAKY_FAIL, 9806,
		    "test at test/cart.test.js:17:5" },
		{ "cart > refunds", FLAKY_SKIP, 135, NULL },
		{ "search > finds a word", FLAKY_PASS, -2, NULL },
		{ "search > matches (a+b) * c literally", FLAKY_PASS, -2,
		    NULL },
		{ "top level", FLAKY_PASS, -2, NULL },
	};
	struct flaky_results	 r;

	pt_fixture("nodetest/demo-spec.txt", NULL, &r);
	ck_assert_str_eq(r.runner, "nodetest");
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
	/* ℹ tests 7 (ℹ suites 3) */
	ck_assert_int_eq(r.summary_total, 7);
	ck_assert_ptr_null(r.incomplete);
	ck_assert_ptr_nonnull(strstr(r.v[1].message, "at TestContext."
	    "<anonymous> (/work/wt-js/examples/demo-nodetest/test/cart.test.js"
	    ":14:14)\ntest at test/cart.test.js:13:5"));
	ck_assert_ptr_null(strstr(r.v[1].message, "runInAsyncScope"));
	flaky_results_free(&r);
}
END_TEST

/* A todo (xpass: it passed), a skip with a reason, a message of two
 * lines, a file that does not load (relative to the run's directory).
 * Beside a suite, the test with subtests is no result (the spec reporter
 * prints both alike); a suite alone in a run with none would be. */
START_TEST(nodetest_edge)
{
	static const struct expect e[] = {
		{ "broken.test.js", FLAKY_FAIL, "'test failed'" },
		{ "parent > child one", FLAKY_PASS, NULL },
		{ "parent > child two", FLAKY_PASS, NULL },
		{ "suite > leaf", FLAKY_PASS, NULL },
		{ "suite > later", FLAKY_XPASS, NULL },
		{ "suite > not here", FLAKY_SKIP, NULL },
		{ "bad", FLAKY_FAIL, "Error: boom\nsecond line\nat " },
	};
	struct flaky_results	 r;

	pt_fixture("nodetest/edge-spec.txt", SUITE, &r);
	ck_assert_uint_eq(r.n, FLAKY_ARRAY_SIZE(e));
	for (size_t i = 0; i < r.n; i++) {
		ck_assert_str_eq(r.v[i].test, e[i].test);
		ck_assert_uint_eq(r.v[i].position, i);
	}
	pt_assert_has(&r, e, FLAKY_ARRAY_SIZE(e));
	ck_assert_int_eq(r.summary_total, 8);
	ck_assert_ptr_null(r.incomplete);
	flaky_results_free(&r);

	/* no suite counted: a test with subtests is a result, and one that
	 * failed on its own (an assertion after its subtests) too */
	pt_text("\xe2\x96\xb6 p\n  \xe2\x9c\x94 c (1ms)\n"
	    "\xe2\x9c\x96 p (2ms)\n  Error: after\n"
	    "\xe2\x84\xb9 tests 2\n\xe2\x84\xb9 suites 0\n", &r);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_str_eq(r.v[1].test, "p");
	ck_assert_int_eq(r.v[1].outcome, FLAKY_FAIL);
	ck_assert_str_eq(r.v[1].message, "Error: after");
	flaky_results_free(&r);
	/* a suite whose hook failed, none of its tests: an error */
	pt_text("\xe2\x96\xb6 s\n  \xe2\x9c\x94 c (1ms)\n"
	    "\xe2\x9c\x96 s (2ms)\n  Error: hook\n"
	    "\xe2\x84\xb9 tests 1\n\xe2\x84\xb9 suites 1\n", &r);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_str_eq(r.v[1].test, "s");
	ck_assert_int_eq(r.v[1].outcome, FLAKY_ERROR);
	ck_assert_ptr_null(r.incomplete);
	flaky_results_free(&r);
}
END_TEST

/* The spec and TAP reporters of one suite give the same tests under the
 * same ids. */
static void
same_ids(const char *spec, const char *tap, size_t n)
{
	struct flaky_results	 s, t;

	pt_fixture(spec, NULL, &s);
	pt_fixture(tap, NULL, &t);
	ck_assert_str_eq(s.runner, "nodetest");
	ck_assert_str_eq(t.runner, "tap");
	ck_assert_uint_eq(s.n, n);
	ck_assert_uint_eq(t.n, n);
	ck_assert_ptr_null(s.incomplete);
	ck_assert_ptr_null(t.incomplete);
	for (size_t i = 0; i < n; i++) {
		const struct flaky_result *o = pt_find_trimmed(&t,
		    s.v[i].test);

		ck_assert_msg(o != NULL, "%s: %s not in TAP", spec,
		    s.v[i].test);
		ck_assert_int_eq(o->outcome, s.v[i].outcome);
	}
	flaky_results_free(&s);
	flaky_results_free(&t);
}

START_TEST(nodetest_spec_and_tap)
{
	same_ids("nodetest/demo-spec.txt", "nodetest/demo-tap.txt", 7);
	/* markedjs/marked's test:unit: 190 tests in 37 suites */
	same_ids("nodetest/marked-unit-spec.txt",
	    "nodetest/marked-unit-tap.txt", 190);
	/* fastify/fastify-cors: 71 tests, no suite */
	same_ids("nodetest/fastify-cors-spec.txt",
	    "nodetest/fastify-cors-tap.txt", 71);
}
END_TEST

/* markedjs/marked's test:specs: 1779 tests, no suite (each section a test
 * with subtests, a result as node counts it); its ReDoS tests time
 * themselves and failed under load. Two sections of one name
 * (CommonMark's and GFM's) give " #2" ids. */
START_TEST(nodetest_marked_specs)
{
	struct flaky_results	 r;
	const struct flaky_result *t;

	pt_fixture("nodetest/marked-specs-spec.txt", NULL, &r);
	ck_assert_uint_eq(r.n, 1779);
	ck_assert_int_eq(r.summary_total, 1779);
	ck_assert_ptr_null(r.incomplete);
	ck_assert_uint_eq(pt_count(&r, FLAKY_FAIL), 2);
	t = pt_find(&r, "quadratic_inline_masking[2] > "
	    "quadratic_inline_masking[2] should pass");
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->outcome, FLAKY_FAIL);
	ck_assert_ptr_nonnull(strstr(t->message, "took too long"));
	ck_assert_ptr_nonnull(pt_find(&r, "Entity and numeric character "
	    "references > Entity and numeric character references should "
	    "pass example 31 #2"));
	flaky_results_free(&r);
}
END_TEST

/* A run cut short has no summary; a count that disagrees. */
START_TEST(nodetest_incomplete)
{
	struct flaky_results	 r;

	pt_text("\xe2\x96\xb6 s\n  \xe2\x9c\x94 a (1.5ms)\n", &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_str_eq(r.v[0].test, "s > a");
	ck_assert_int_eq(r.v[0].duration_us, 1500);
	ck_assert_str_eq(r.incomplete, "the run ended without node:test's "
	    "summary (\xe2\x84\xb9 tests N): it was killed or stopped early");
	flaky_results_free(&r);

	pt_text("\xe2\x9c\x94 a (1.5ms)\n\xe2\x84\xb9 tests 2\n"
	    "\xe2\x84\xb9 suites 0\n", &r);
	ck_assert_str_eq(r.incomplete, "node:test counts 2 tests and suites, "
	    "1 were parsed: the run stopped early");
	flaky_results_free(&r);
}
END_TEST

static void
add_tests(TCase *tc)
{
	tcase_add_test(tc, nodetest_spec);
	tcase_add_test(tc, nodetest_edge);
	tcase_add_test(tc, nodetest_spec_and_tap);
	tcase_add_test(tc, nodetest_marked_specs);
	tcase_add_test(tc, nodetest_incomplete);
}

int
main(void)
{
	return pt_run("parse_nodetest", add_tests);
}
