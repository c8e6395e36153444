/* parse: the Playwright Test parser (list reporter), against output
 * captured from the real runner (tests/fixtures/capture-js.sh: flaky's
 * demo under @playwright/test 1.65.2 and hotwired/turbo's end-to-end
 * suite under 1.51.1, both on Debian's chromium). */
#include "buildconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"
#include "parse_test.h"
#include "test_helper.h"
#include "util/util.h"

#define SEP	" \xe2\x80\xba "	/* " › " */
#define CH	SEP "[chromium]" SEP
#define SHOP	"tests/shop.spec.js:"
#define SEARCH	"tests/search.spec.js:"
/* hotwired/turbo's run (turbo-list.txt): its own summary */
#define TURBO_TESTS	481
#define TURBO_PASSED	461
#define TURBO_FLAKY	6
#define TURBO_FAILED	14

/* "file:line › [project] › titles" in the order tests ended (two
 * workers), durations as Playwright rounds them, messages from the
 * failures' blocks without code frames. */
START_TEST(playwright_list)
{
	static const struct want w[] = {
		{ SEARCH "4" CH "has a title", FLAKY_PASS, 1800000, NULL },
		{ SHOP "6" CH "shop" SEP "adds items", FLAKY_PASS, 2200000,
		    NULL },
		{ SEARCH "9" CH "matches (a+b) * c literally", FLAKY_PASS,
		    84000, NULL },
		{ SHOP "13" CH "shop" SEP "retries the payment", FLAKY_FAIL,
		    794000, "Expected: false\nReceived: true\nat " },
		{ SHOP "20" CH "shop" SEP "talks to the legacy API",
		    FLAKY_FAIL, 49000, "Expected: 200\nReceived: 410" },
		{ SHOP "25" CH "shop" SEP "refunds", FLAKY_SKIP, -1, NULL },
	};
	struct flaky_results	 r;

	pt_fixture("playwright/demo-list.txt", NULL, &r);
	ck_assert_str_eq(r.runner, "playwright");
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
	ck_assert_int_eq(r.summary_total, 6);
	ck_assert_ptr_null(r.incomplete);
	ck_assert_uint_eq(r.nattempts, 0);
	ck_assert_ptr_null(strstr(r.v[4].message, "| "));
	ck_assert_ptr_null(strstr(r.v[4].message, "Error Context"));
	flaky_results_free(&r);
}
END_TEST

/* --retries=2 --repeat-each=2: each repeat is a result (" #2"); a retry
 * is an attempt of its result, which keeps the first attempt's outcome,
 * with each attempt's own error. */
START_TEST(playwright_retries)
{
	struct flaky_results	 r;
	const struct flaky_result *pay, *legacy;
	size_t			 ipay, ilegacy, n0 = 0, n1 = 0, n2 = 0;

	pt_fixture("playwright/demo-retries.txt", NULL, &r);
	ck_assert_uint_eq(r.n, 12);
	ck_assert_int_eq(r.summary_total, 12);
	ck_assert_ptr_null(r.incomplete);
	pay = pt_find(&r, SHOP "13" CH "shop" SEP "retries the payment");
	legacy = pt_find(&r, SHOP "20" CH "shop" SEP "talks to the legacy "
	    "API #2");
	ck_assert_ptr_nonnull(pay);
	ck_assert_ptr_nonnull(legacy);
	ck_assert_int_eq(pay->outcome, FLAKY_FAIL);
	ck_assert_ptr_nonnull(strstr(pay->message, "Received: true\nat "));
	ck_assert_ptr_nonnull(strstr(pay->message, "\npassed on retry #1"));
	ck_assert_int_eq(pt_find(&r, SHOP "13" CH "shop" SEP "retries the "
	    "payment #2")->outcome, FLAKY_PASS);
	ipay = (size_t)(pay - r.v);
	ilegacy = (size_t)(legacy - r.v);
	/* the payment: failed, passed; each legacy repeat: 3 failures */
	ck_assert_uint_eq(r.nattempts, 2 + 3 + 3);
	for (size_t i = 0; i < r.nattempts; i++) {
		const struct flaky_attempt *a = &r.attempts[i];

		ck_assert(strstr(r.v[a->result].test, "retries") != NULL ||
		    strstr(r.v[a->result].test, "legacy") != NULL);
		if (a->result == ipay)
			ck_assert_int_eq(a->outcome, a->attempt == 0 ?
			    FLAKY_FAIL : FLAKY_PASS);
		else
			ck_assert_int_eq(a->outcome, FLAKY_FAIL);
		if (a->outcome == FLAKY_FAIL)
			ck_assert_ptr_nonnull(strstr(a->message, "Error: "
			    "expect(received)"));
		if (a->result == ilegacy) {
			n0 += a->attempt == 0;
			n1 += a->attempt == 1;
			n2 += a->attempt == 2;
		}
	}
	ck_assert(n0 == 1 && n1 == 1 && n2 == 1);
	flaky_results_free(&r);
}
END_TEST

/* test.fail(): a "✘" the summary does not list as failing is an expected
 * failure. --shuffle's seed is the run's. */
START_TEST(playwright_xfail_seed)
{
	struct flaky_results	 r;

	pt_fixture("playwright/demo-xfail.txt", NULL, &r);
	ck_assert_uint_eq(r.n, 7);
	ck_assert_ptr_null(r.incomplete);
	ck_assert_int_eq(pt_find(&r, "tests/xfail.spec.js:5" CH
	    "known bug")->outcome, FLAKY_XFAIL);
	ck_assert_uint_eq(pt_count(&r, FLAKY_FAIL), 2);
	flaky_results_free(&r);

	pt_fixture("playwright/demo-shuffle.txt", NULL, &r);
	ck_assert_str_eq(r.seed, "7");
	ck_assert_uint_eq(r.n, 6);
	flaky_results_free(&r);
}
END_TEST

/* The dot and line reporters name no test; --max-failures leaves tests
 * that did not run: all incomplete. */
START_TEST(playwright_incomplete)
{
	static const char *const quiet[] = { "playwright/demo-dot.txt",
	    "playwright/demo-line.txt" };
	struct flaky_results	 r;

	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(quiet); k++) {
		pt_fixture(quiet[k], NULL, &r);
		ck_assert_str_eq(r.runner, "playwright");
		ck_assert_uint_eq(r.n, 0);
		ck_assert_str_eq(r.incomplete, "Playwright printed only "
		    "failing tests (6 tests ran, its reporter is not list): "
		    "run it with --reporter=list");
		flaky_results_free(&r);
	}
	pt_fixture("playwright/demo-maxfail.txt", NULL, &r);
	ck_assert_uint_eq(r.n, 4);
	ck_assert_str_eq(r.incomplete, "Playwright did not run 2 of its 6 "
	    "tests (--max-failures or -x stopped it, or an error outside the "
	    "tests): they have no outcome");
	flaky_results_free(&r);

	pt_text("\nRunning 2 tests using 1 worker\n\n  \xe2\x9c\x93  1 "
	    "a.spec.js:3:5" SEP "one (5ms)\n", &r);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_str_eq(r.v[0].test, "a.spec.js:3" SEP "one");
	ck_assert_str_eq(r.incomplete, "the run ended without Playwright's "
	    "summary (N passed): it was killed or stopped early");
	flaky_results_free(&r);
}
END_TEST

/* hotwired/turbo's end-to-end tests against its own server: every test
 * of the "chrome" project, its retries as attempts, the summary's flaky
 * and failed ones. */
START_TEST(playwright_turbo)
{
	struct flaky_results	 r;
	size_t			 flaky = 0;

	pt_fixture("playwright/turbo-list.txt", NULL, &r);
	ck_assert_uint_eq(r.n, TURBO_TESTS);
	ck_assert_int_eq(r.summary_total, TURBO_TESTS);
	ck_assert_ptr_null(r.incomplete);
	ck_assert_uint_eq(pt_count(&r, FLAKY_PASS), TURBO_PASSED);
	for (size_t i = 0; i < r.n; i++)
		flaky += r.v[i].message != NULL &&
		    strstr(r.v[i].message, "passed on retry #") != NULL;
	ck_assert_uint_eq(flaky, TURBO_FLAKY);
	ck_assert_uint_eq(pt_count(&r, FLAKY_FAIL), TURBO_FAILED +
	    TURBO_FLAKY);
	ck_assert_ptr_nonnull(pt_find(&r, "src/tests/functional/"
	    "autofocus_tests.js:8" SEP "[chrome]" SEP "autofocus first "
	    "autofocus element on load"));
	ck_assert_uint_gt(r.nattempts, 2 * TURBO_FLAKY);
	flaky_results_free(&r);
}
END_TEST

static void
add_tests(TCase *tc)
{
	tcase_add_test(tc, playwright_list);
	tcase_add_test(tc, playwright_retries);
	tcase_add_test(tc, playwright_xfail_seed);
	tcase_add_test(tc, playwright_incomplete);
	tcase_add_test(tc, playwright_turbo);
}

int
main(void)
{
	return pt_run("parse_playwright", add_tests);
}
