/* lib/confirm.c: the command for a test alone and when a test is settled,
 * with exact counts from the hypergeometric tail. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "confirm.h"

/* A diagnosis as the store would give it, for flaky_confirm_add. */
static void
diag(struct flaky_diagnosis *d, const char *test, int64_t runs,
    int64_t failures, int verdict)
{
	memset(d, 0, sizeof *d);
	d->test_id = 7;
	d->target_id = 1;
	d->test = (char *)test;
	d->target = (char *)"demo";
	d->dir = (char *)"/nonexistent";
	d->runs = d->suite_runs = runs;
	d->failures = d->suite_failures = failures;
	d->verdict = verdict;
}

/* One run's results: the test with this outcome. */
static void
result(struct flaky_results *r, struct flaky_result *x, const char *test,
    int outcome)
{
	memset(r, 0, sizeof *r);
	memset(x, 0, sizeof *x);
	x->test = (char *)test;
	x->outcome = outcome;
	x->duration_us = -1;
	r->v = x;
	r->n = 1;
}

/* Runs alone with outcome until t is settled; how many it took. */
static int
until_settled(struct flaky_confirm *c, int outcome)
{
	struct flaky_confirm_test *t;
	struct flaky_results r;
	struct flaky_result x;
	char *const	*argv;
	int		 n = 0;

	while ((t = flaky_confirm_next(c, &argv)) != NULL) {
		ck_assert_str_eq(argv[0], "/bin/sh");
		ck_assert_str_eq(argv[1], "-c");
		result(&r, &x, t->name, outcome);
		ck_assert_int_eq(flaky_confirm_count(c, t, &r), 0);
		n++;
	}
	return n;
}

START_TEST(expand)
{
	char	*s;

	s = flaky_confirm_expand("pytest -v {test}", "t.py::test_x[a b]");
	ck_assert_str_eq(s, "pytest -v 't.py::test_x[a b]'");
	free(s);
	s = flaky_confirm_expand("./alone.sh {test} && echo {test}", "it's");
	ck_assert_str_eq(s, "./alone.sh 'it'\\''s' && echo 'it'\\''s'");
	free(s);
}
END_TEST

/* Passing alone while failing in 5 of 10 suite runs: settled once that is
 * under 1% by chance, C(10,5)/C(10+n,5) < 0.01, first at n = 12. */
START_TEST(passes_alone)
{
	struct flaky_confirm c;
	struct flaky_diagnosis d;

	flaky_confirm_init(&c, 100);
	diag(&d, "t.py::test_fresh", 10, 5, FLAKY_VERDICT_FLAKY);
	ck_assert_int_eq(flaky_confirm_add(&c, &d, "pytest -v {test}", "r1"),
	    0);
	ck_assert_int_eq(c.t[0].settled, 0);
	ck_assert_str_eq(c.t[0].revision, "r1");
	ck_assert_int_eq(until_settled(&c, FLAKY_PASS), 12);
	ck_assert_int_eq(c.t[0].alone, 12);
	ck_assert_int_eq(c.t[0].alone_failed, 0);
	flaky_confirm_free(&c);
}
END_TEST

/* The mirror: failing alone while passing in 25 of 50 suite runs,
 * C(50,25)/C(50+n,25) < 0.01 first at n = 8. */
START_TEST(fails_alone)
{
	struct flaky_confirm c;
	struct flaky_diagnosis d;

	flaky_confirm_init(&c, 100);
	diag(&d, "t.py::test_login", 50, 25, FLAKY_VERDICT_FLAKY);
	ck_assert_int_eq(flaky_confirm_add(&c, &d, "pytest -v {test}", "r1"),
	    0);
	ck_assert_int_eq(until_settled(&c, FLAKY_FAIL), 8);
	ck_assert_int_eq(c.t[0].alone_failed, 8);
	flaky_confirm_free(&c);
}
END_TEST

/* Broken is never rerun; the cap ends a test that does not settle; a run
 * that does not report the test drops it. */
START_TEST(limits)
{
	struct flaky_confirm c;
	struct flaky_diagnosis d;
	struct flaky_confirm_test *t;
	struct flaky_results r;
	struct flaky_result x;
	char *const	*argv;

	flaky_confirm_init(&c, 5);
	diag(&d, "t.py::test_broken", 10, 10, FLAKY_VERDICT_BROKEN);
	ck_assert_int_eq(flaky_confirm_add(&c, &d, "x {test}", "r1"), 0);
	ck_assert_int_eq(c.t[0].settled, 1);
	ck_assert_ptr_null(flaky_confirm_next(&c, &argv));
	/* 3 of 10 in the suite, passes and failures alone: the tier stays
	 * open for long, the cap (5) ends it */
	diag(&d, "t.py::test_mixed", 10, 3, FLAKY_VERDICT_FLAKY);
	ck_assert_int_eq(flaky_confirm_add(&c, &d, "x {test}", "r1"), 0);
	for (int i = 0; (t = flaky_confirm_next(&c, &argv)) != NULL; i++) {
		ck_assert_str_eq(t->name, "t.py::test_mixed");
		result(&r, &x, t->name, i % 2 ? FLAKY_FAIL : FLAKY_PASS);
		ck_assert_int_eq(flaky_confirm_count(&c, t, &r), 0);
	}
	ck_assert_int_eq(c.t[1].alone, 5);
	/* not reported: dropped at once */
	diag(&d, "t.py::test_gone", 10, 5, FLAKY_VERDICT_FLAKY);
	ck_assert_int_eq(flaky_confirm_add(&c, &d, "x {test}", "r1"), 0);
	ck_assert_ptr_nonnull(t = flaky_confirm_next(&c, &argv));
	ck_assert_str_eq(argv[2], "x 't.py::test_gone'");
	result(&r, &x, "t.py::test_other", FLAKY_PASS);
	ck_assert_int_eq(flaky_confirm_count(&c, t, &r), -ENOENT);
	ck_assert_int_eq(t->start_error, 1);
	ck_assert_ptr_null(flaky_confirm_next(&c, &argv));
	flaky_confirm_free(&c);
	flaky_confirm_free(NULL);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("confirm");
	TCase	*tc = tcase_create("core");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, expand);
	tcase_add_test(tc, passes_alone);
	tcase_add_test(tc, fails_alone);
	tcase_add_test(tc, limits);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
