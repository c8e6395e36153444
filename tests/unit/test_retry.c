/* lib/pipeline/retry.c: flakyctl ci's retries of failed tests and reruns
 * of new ones: what each round asks for, how its results count, the
 * rounds refused for running other tests, and the verdicts. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipeline.h"

/* Results of a run: "name=o" words, o one of p f e s. */
static void
results(struct flaky_results *r, const char *runner, const char *const *v)
{
	size_t	 n = 0;

	flaky_results_init(r);
	snprintf(r->runner, sizeof r->runner, "%s", runner);
	while (v[n] != NULL)
		n++;
	r->v = calloc(n + 1, sizeof *r->v);
	r->cap = n + 1;
	for (size_t i = 0; i < n; i++) {
		const char *eq = strrchr(v[i], '=');

		r->v[i].test = strndup(v[i], (size_t)(eq - v[i]));
		r->v[i].outcome = eq[1] == 'p' ? FLAKY_PASS : eq[1] == 'f' ?
		    FLAKY_FAIL : eq[1] == 'e' ? FLAKY_ERROR : FLAKY_SKIP;
		r->v[i].duration_us = -1;
		r->v[i].position = (unsigned)i;
	}
	r->n = n;
}

/* Tests whose name starts with "new". */
static int
is_new(const char *test, void *arg)
{
	(void)arg;
	return strncmp(test, "new", 3) == 0;
}

/* Tests whose name starts with "q". */
static int
is_quarantined(const char *test, void *arg)
{
	(void)arg;
	return test[0] == 'q';
}

/* A round: asked for the open tests, its results counted. */
static int
round_of(struct flaky_retry *r, const char *runner, const char *const *v,
    size_t *asked, char *err)
{
	struct flaky_results res;
	const char *open[64];
	int	 rc;

	*asked = flaky_retry_open_tests(r, open, 64);
	results(&res, runner, v);
	rc = flaky_retry_count(r, &res, err, 256);
	flaky_results_free(&res);
	return rc;
}

static struct flaky_retry_test *
get(struct flaky_retry *r, const char *name)
{
	for (size_t i = 0; i < r->nt; i++)
		if (strcmp(r->t[i].name, name) == 0)
			return &r->t[i];
	ck_abort_msg("no test %s", name);
	return NULL;
}

START_TEST(flaky_and_broken)
{
	static const char *const first[] = { "a=p", "flaky=f", "broken=e",
		"qbroken=f", "skip=s", NULL };
	static const char *const r1[] = { "flaky=f", "broken=f", NULL };
	static const char *const r2[] = { "flaky=p", "broken=f", NULL };
	static const char *const r3[] = { "broken=f", NULL };
	struct flaky_retry r;
	struct flaky_results res;
	const char *open[8];
	char	 err[256];
	size_t	 asked;

	flaky_retry_init(&r, 3, 0);
	results(&res, "pytest", first);
	ck_assert_int_eq(flaky_retry_first(&r, &res, is_new, is_quarantined,
	    NULL), 0);
	flaky_results_free(&res);
	/* the failed ones only; the quarantined one is not rerun */
	ck_assert_uint_eq(r.nt, 3);
	ck_assert_int_eq(round_of(&r, "pytest", r1, &asked, err), 0);
	ck_assert_uint_eq(asked, 2);
	ck_assert_int_eq(round_of(&r, "pytest", r2, &asked, err), 0);
	ck_assert_uint_eq(asked, 2);
	/* flaky passed on retry 2: it stops there */
	ck_assert_int_eq(get(&r, "flaky")->passed_on, 2);
	ck_assert_int_eq(round_of(&r, "pytest", r3, &asked, err), 0);
	ck_assert_uint_eq(asked, 1);
	ck_assert(flaky_retry_done(&r));
	ck_assert_uint_eq(flaky_retry_open_tests(&r, open, 8), 0);
	ck_assert_int_eq(get(&r, "broken")->runs, 4);
	ck_assert_int_eq(get(&r, "broken")->failures, 4);
	ck_assert_int_eq(flaky_retry_verdict(&r, get(&r, "flaky")),
	    FLAKY_RETRY_FLAKY);
	ck_assert_int_eq(flaky_retry_verdict(&r, get(&r, "broken")),
	    FLAKY_RETRY_BROKEN);
	ck_assert_int_eq(flaky_retry_verdict(&r, get(&r, "qbroken")),
	    FLAKY_RETRY_QUARANTINED);
	ck_assert(flaky_retry_fails_step(FLAKY_RETRY_BROKEN));
	ck_assert(!flaky_retry_fails_step(FLAKY_RETRY_FLAKY));
	ck_assert(!flaky_retry_fails_step(FLAKY_RETRY_QUARANTINED));
	ck_assert_int_eq(r.rounds, 3);
	flaky_retry_free(&r);
}
END_TEST

START_TEST(only_what_was_asked)
{
	static const char *const first[] = { "a=p", "b=f", "c=f", NULL };
	static const char *const other[] = { "b=p", "c=f", "a=p", NULL };
	static const char *const missing[] = { "b=p", NULL };
	static const char *const filtered[] = { "b=p", "c=f", "a=s", NULL };
	struct flaky_retry r;
	struct flaky_results res;
	char	 err[256];
	size_t	 asked;

	flaky_retry_init(&r, 3, 0);
	results(&res, "jest", first);
	ck_assert_int_eq(flaky_retry_first(&r, &res, NULL, NULL, NULL), 0);
	flaky_results_free(&res);
	/* a ran though only b and c were asked for: refused, uncounted */
	ck_assert_int_eq(round_of(&r, "jest", other, &asked, err), -EPROTO);
	ck_assert_ptr_nonnull(strstr(err, "'a'"));
	ck_assert_int_eq(get(&r, "b")->runs, 1);
	ck_assert_int_eq(r.rounds, 0);
	ck_assert_int_eq(round_of(&r, "jest", missing, &asked, err), -EPROTO);
	ck_assert_ptr_nonnull(strstr(err, "did not report 'c'"));
	/* a test of the same file filtered out (skipped) did not run */
	ck_assert_int_eq(round_of(&r, "jest", filtered, &asked, err), 0);
	ck_assert_int_eq(get(&r, "b")->passed_on, 1);
	flaky_retry_free(&r);
}
END_TEST

START_TEST(runner_count)
{
	static const char *const first[] = { "b=f", NULL };
	static const char *const r1[] = { "b=p", NULL };
	struct flaky_retry r;
	struct flaky_results res;
	const char *open[4];
	char	 err[256];

	flaky_retry_init(&r, 1, 0);
	results(&res, "pytest", first);
	ck_assert_int_eq(flaky_retry_first(&r, &res, NULL, NULL, NULL), 0);
	flaky_results_free(&res);
	ck_assert_uint_eq(flaky_retry_open_tests(&r, open, 4), 1);
	results(&res, "pytest", r1);
	res.summary_total = 3;	/* the runner ran three */
	ck_assert_int_eq(flaky_retry_count(&r, &res, err, sizeof err),
	    -EPROTO);
	ck_assert_ptr_nonnull(strstr(err, "counted 3 tests"));
	res.summary_total = 1;
	ck_assert_int_eq(flaky_retry_count(&r, &res, err, sizeof err), 0);
	flaky_results_free(&res);
	flaky_retry_free(&r);
}
END_TEST

START_TEST(go_subtests)
{
	static const char *const first[] = { "m/TestX=f", "m/TestX/one=f",
		"m/TestX/two=p", "m/TestY=p", NULL };
	static const char *const r1[] = { "m/TestX/one=p", "m/TestX/two=p",
		"m/TestX=p", NULL };
	static const char *const r2[] = { "m/TestX/one=p", "m/TestY=p",
		"m/TestX=p", NULL };
	struct flaky_retry r;
	struct flaky_results res;
	char	 err[256];
	size_t	 asked;

	flaky_retry_init(&r, 3, 0);
	results(&res, "gotest", first);
	ck_assert_int_eq(flaky_retry_first(&r, &res, NULL, NULL, NULL), 0);
	flaky_results_free(&res);
	/* TestX/two runs with TestX: allowed for go, not for others */
	ck_assert_int_eq(round_of(&r, "pytest", r1, &asked, err), -EPROTO);
	ck_assert_int_eq(round_of(&r, "gotest", r2, &asked, err), -EPROTO);
	ck_assert_int_eq(round_of(&r, "gotest", r1, &asked, err), 0);
	ck_assert_int_eq(flaky_retry_verdict(&r, get(&r, "m/TestX/one")),
	    FLAKY_RETRY_FLAKY);
	flaky_retry_free(&r);
}
END_TEST

START_TEST(new_tests)
{
	static const char *const first[] = { "a=p", "new_ok=p", "new_fl=p",
		"new_bad=f", NULL };
	static const char *const pass2[] = { "new_ok=p", "new_fl=p", NULL };
	static const char *const fail3[] = { "new_ok=p", "new_fl=f", NULL };
	static const char *const pass4[] = { "new_ok=p", NULL };
	struct flaky_retry r;
	struct flaky_results res;
	char	 err[256];
	size_t	 asked;

	flaky_retry_init(&r, 3, 4);
	results(&res, "pytest", first);
	ck_assert_int_eq(flaky_retry_first(&r, &res, is_new, NULL, NULL), 0);
	flaky_results_free(&res);
	/* new_bad failed its first run: caught, not rerun */
	ck_assert_int_eq(round_of(&r, "pytest", pass2, &asked, err), 0);
	ck_assert_uint_eq(asked, 2);
	ck_assert_int_eq(round_of(&r, "pytest", fail3, &asked, err), 0);
	ck_assert_int_eq(round_of(&r, "pytest", pass4, &asked, err), 0);
	ck_assert_uint_eq(asked, 1);
	ck_assert(flaky_retry_done(&r));
	ck_assert_int_eq(flaky_retry_verdict(&r, get(&r, "new_ok")),
	    FLAKY_RETRY_NEW_PASSED);
	ck_assert_int_eq(get(&r, "new_ok")->runs, 4);
	ck_assert_int_eq(flaky_retry_verdict(&r, get(&r, "new_fl")),
	    FLAKY_RETRY_NEW_FAILED);
	ck_assert_int_eq(get(&r, "new_fl")->runs, 3);
	ck_assert_int_eq(flaky_retry_verdict(&r, get(&r, "new_bad")),
	    FLAKY_RETRY_NEW_FAILED);
	ck_assert(flaky_retry_fails_step(FLAKY_RETRY_NEW_FAILED));
	ck_assert(!flaky_retry_fails_step(FLAKY_RETRY_NEW_PASSED));
	flaky_retry_free(&r);
}
END_TEST

/* With a cap past the settling point, a stable new test stops where the
 * confidence sequence of --until-settled settles it (116 clean runs at
 * alpha 0.05), not at the cap; one that fails first is caught. */
START_TEST(new_tests_settle)
{
	static const char *const first[] = { "new_ok=p", "new_fl=p", NULL };
	static const char *const both[] = { "new_ok=p", "new_fl=p", NULL };
	static const char *const fail[] = { "new_ok=p", "new_fl=f", NULL };
	static const char *const one[] = { "new_ok=p", NULL };
	struct flaky_retry r;
	struct flaky_results res;
	char	 err[256];
	size_t	 asked;
	int	 rounds = 0;

	flaky_retry_init(&r, 3, 500);
	results(&res, "pytest", first);
	ck_assert_int_eq(flaky_retry_first(&r, &res, is_new, NULL, NULL), 0);
	flaky_results_free(&res);
	while (!flaky_retry_done(&r) && rounds < 600) {
		rounds++;
		ck_assert_int_eq(round_of(&r, "pytest", get(&r, "new_fl")->
		    failures > 0 ? one : rounds == 40 ? fail : both, &asked,
		    err), 0);
	}
	ck_assert(flaky_retry_done(&r));
	ck_assert_int_eq(get(&r, "new_ok")->runs, 116);
	ck_assert_int_eq(flaky_retry_verdict(&r, get(&r, "new_ok")),
	    FLAKY_RETRY_NEW_PASSED);
	ck_assert_int_eq(get(&r, "new_fl")->runs, 41);
	ck_assert_int_eq(flaky_retry_verdict(&r, get(&r, "new_fl")),
	    FLAKY_RETRY_NEW_FAILED);
	flaky_retry_free(&r);
}
END_TEST

START_TEST(bounds)
{
	struct flaky_retry r;
	struct flaky_results res;
	const char *open[8];
	char	 name[32];

	/* --retries 0 records: a failure is not retried, and fails */
	flaky_retry_init(&r, 0, 0);
	{
		static const char *const first[] = { "b=f", NULL };

		results(&res, "pytest", first);
	}
	ck_assert_int_eq(flaky_retry_first(&r, &res, NULL, NULL, NULL), 0);
	flaky_results_free(&res);
	ck_assert_uint_eq(flaky_retry_open_tests(&r, open, 8), 0);
	ck_assert_int_eq(flaky_retry_verdict(&r, &r.t[0]),
	    FLAKY_RETRY_NOT_RETRIED);
	ck_assert(flaky_retry_fails_step(FLAKY_RETRY_NOT_RETRIED));
	flaky_retry_free(&r);

	/* too many failures at once: none retried, every one fails */
	flaky_retry_init(&r, 3, 0);
	flaky_results_init(&res);
	res.v = calloc(FLAKY_RETRY_MAX_FAILED + 1, sizeof *res.v);
	for (int i = 0; i <= FLAKY_RETRY_MAX_FAILED; i++) {
		snprintf(name, sizeof name, "t%03d", i);
		res.v[i].test = strdup(name);
		res.v[i].outcome = FLAKY_FAIL;
	}
	res.n = res.cap = FLAKY_RETRY_MAX_FAILED + 1;
	ck_assert_int_eq(flaky_retry_first(&r, &res, NULL, NULL, NULL), 0);
	flaky_results_free(&res);
	ck_assert(r.too_many);
	ck_assert_uint_eq(flaky_retry_open_tests(&r, open, 8), 0);
	ck_assert_int_eq(flaky_retry_verdict(&r, &r.t[7]),
	    FLAKY_RETRY_NOT_RETRIED);
	ck_assert_str_eq(flaky_retry_verdict_name(FLAKY_RETRY_NEW_FAILED),
	    "new failed");
	flaky_retry_free(&r);
}
END_TEST

START_TEST(skipped_on_retry)
{
	static const char *const first[] = { "b=f", NULL };
	static const char *const r1[] = { "b=s", NULL };
	struct flaky_retry r;
	struct flaky_results res;
	char	 err[256];
	size_t	 asked;

	flaky_retry_init(&r, 3, 0);
	results(&res, "pytest", first);
	ck_assert_int_eq(flaky_retry_first(&r, &res, NULL, NULL, NULL), 0);
	flaky_results_free(&res);
	/* a skip is no pass: the failure stands, and it is not rerun */
	ck_assert_int_eq(round_of(&r, "pytest", r1, &asked, err), 0);
	ck_assert(flaky_retry_done(&r));
	ck_assert(flaky_retry_fails_step(flaky_retry_verdict(&r, &r.t[0])));
	flaky_retry_free(&r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("retry");
	TCase	*tc = tcase_create("core");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, flaky_and_broken);
	tcase_add_test(tc, only_what_was_asked);
	tcase_add_test(tc, runner_count);
	tcase_add_test(tc, go_subtests);
	tcase_add_test(tc, new_tests);
	tcase_add_test(tc, new_tests_settle);
	tcase_add_test(tc, bounds);
	tcase_add_test(tc, skipped_on_retry);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
