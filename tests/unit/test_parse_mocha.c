/* parse: the Mocha parser (spec reporter), against output captured from
 * the real runner (tests/fixtures/capture-js.sh: flaky's demo and
 * expressjs/express under Mocha 11). */
#include "buildconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"
#include "parse_test.h"
#include "test_helper.h"
#include "util/util.h"

/* Full titles, in run order (a root suite's own tests first); durations
 * where Mocha printed them; failure details matched by their number. */
START_TEST(mocha_spec)
{
	static const struct want w[] = {
		{ "top level", FLAKY_PASS, -1, NULL },
		{ "cart adds items", FLAKY_PASS, 46000, NULL },
		{ "cart refunds", FLAKY_SKIP, -1, NULL },
		{ "cart checkout retries the payment", FLAKY_FAIL, -1,
		    "true !== false" },
		{ "cart checkout talks to the legacy API", FLAKY_FAIL, -1,
		    "Expected values to be strictly deep-equal" },
		{ "search finds a word", FLAKY_PASS, -1, NULL },
		{ "search matches (a+b) * c literally", FLAKY_PASS, -1, NULL },
	};
	struct flaky_results	 r;

	pt_fixture("mocha/demo-spec.txt", NULL, &r);
	ck_assert_str_eq(r.runner, "mocha");
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
	ck_assert_int_eq(r.summary_total, 7);
	ck_assert_ptr_null(r.incomplete);
	/* the error and its first "at" line, not the rest of the stack */
	ck_assert_ptr_nonnull(strstr(r.v[4].message,
	    "at Context.<anonymous> (test/cart.test.js:18:14)"));
	ck_assert_ptr_null(strstr(r.v[4].message, "processImmediate"));
	flaky_results_free(&r);
}
END_TEST

/* A failing hook is an error result of its own (Mocha counts it among
 * the failing); the tests it kept from running are in no count. */
START_TEST(mocha_hook)
{
	struct flaky_results	 r;
	const struct flaky_result *h;

	pt_fixture("mocha/hook.txt", NULL, &r);
	ck_assert_uint_eq(r.n, 9);
	ck_assert_int_eq(r.summary_total, 9);
	ck_assert_ptr_null(r.incomplete);
	h = pt_find(&r, "with a hook \"before each\" hook for \"never runs\"");
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(h->outcome, FLAKY_ERROR);
	ck_assert_ptr_nonnull(strstr(h->message, "Error: set-up failed"));
	ck_assert_ptr_nonnull(pt_find(&r, "without runs"));
	ck_assert_ptr_null(pt_find(&r, "with a hook never runs either"));
	flaky_results_free(&r);
}
END_TEST

/* expressjs/express: 1256 passing and 4 pending, by its test script, the
 * same without --reporter, and --parallel; its TAP reporter gives the
 * same ids to the TAP parser. dot names no test: incomplete. */
START_TEST(mocha_express)
{
	static const char *const forms[] = { "mocha/express-spec.txt",
	    "mocha/express-plain.txt", "mocha/express-parallel.txt" };
	struct flaky_results	 r, tap;

	pt_fixture("mocha/express-tap.txt", NULL, &tap);
	ck_assert_str_eq(tap.runner, "tap");
	ck_assert_uint_eq(tap.n, 1260);
	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(forms); k++) {
		pt_fixture(forms[k], NULL, &r);
		ck_assert_str_eq(r.runner, "mocha");
		ck_assert_uint_eq(r.n, 1260);
		ck_assert_int_eq(r.summary_total, 1260);
		ck_assert_ptr_null(r.incomplete);
		ck_assert_uint_eq(pt_count(&r, FLAKY_PASS), 1256);
		ck_assert_uint_eq(pt_count(&r, FLAKY_SKIP), 4);
		ck_assert_ptr_nonnull(pt_find(&r, "web-service when requesting "
		    "an invalid route should respond with 404 json"));
		/* every id is one the TAP reporter gives (which drops
		 * trailing blanks), but for a title with " # ", which TAP
		 * reads as a directive ("the # of octets") */
		for (size_t i = 0; i < r.n; i++)
			ck_assert_msg(pt_find_trimmed(&tap, r.v[i].test) !=
			    NULL || strstr(r.v[i].test, " # ") != NULL,
			    "%s: not in TAP", r.v[i].test);
		flaky_results_free(&r);
	}
	flaky_results_free(&tap);

	pt_fixture("mocha/express-dot.txt", NULL, &r);
	ck_assert_uint_eq(r.n, 0);
	ck_assert_str_eq(r.incomplete, "Mocha named no test (1260 in its "
	    "summary): its reporter is not spec; run it with --reporter spec");
	flaky_results_free(&r);
}
END_TEST

/* A test's own output at the margin is not a suite; a run cut short has
 * no summary. */
START_TEST(mocha_console_and_killed)
{
	struct flaky_results	 r;

	pt_text("\n  suite\nprinted by a test\n    \xe2\x9c\x94 one\n"
	    "    \xe2\x9c\x94 two (80ms)\n\n  1 passing (90ms)\n", &r);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_str_eq(r.v[0].test, "suite one");
	ck_assert_int_eq(r.v[1].duration_us, 80000);
	ck_assert_str_eq(r.incomplete, "Mocha's summary counts 1 tests, 2 "
	    "were parsed: more than it ran (output of another process mixed "
	    "in, or a test printed lines that look like Mocha's); report the "
	    "output to flaky");
	flaky_results_free(&r);

	pt_text("\n  suite\n    \xe2\x9c\x94 one\n", &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_str_eq(r.incomplete, "the run ended without Mocha's summary "
	    "(N passing): it was killed or stopped early");
	flaky_results_free(&r);
}
END_TEST

static void
add_tests(TCase *tc)
{
	tcase_add_test(tc, mocha_spec);
	tcase_add_test(tc, mocha_hook);
	tcase_add_test(tc, mocha_express);
	tcase_add_test(tc, mocha_console_and_killed);
}

int
main(void)
{
	return pt_run("parse_mocha", add_tests);
}
