/* diagnose, one test's results folded: timing and RACE from it
 * (Mann-Whitney), revisions and transitions, runs alone that pass while
 * the suite's fail. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classify/classify.h"
#include "diagnose/diagnose.h"
#include "parse/parse.h"
#include "store/store.h"
#include "util/util.h"

/* n rows, the first `fails` failed with a signature, durations by the
 * callers' rule. */
static struct flaky_result_row *
timed_rows(int n, int fails, const char *sig, int64_t (*dur)(int, int))
{
	struct flaky_result_row *v = calloc((size_t)n, sizeof *v);

	ck_assert_ptr_nonnull(v);
	for (int i = 0; i < n; i++) {
		v[i].run_id = i + 1;
		v[i].started_ms = 1000 + i;
		v[i].outcome = i < fails ? FLAKY_FAIL : FLAKY_PASS;
		v[i].duration_us = dur(i, i < fails);
		v[i].signature = i < fails ? strdup(sig) : NULL;
		v[i].fingerprint = i < fails ? 7 : 0;
		snprintf(v[i].trigger, sizeof v[i].trigger, "analyze");
	}
	return v;
}

/* Failures at once (2 ms and up), passes after ~100 ms. */
static int64_t
dur_apart(int i, int failed)
{
	return failed ? 2000 + i * 100 : 100000 + i * 1000;
}

/* Failures cluster at 5 s (a limit), passes at 0.3 s. */
static int64_t
dur_limit(int i, int failed)
{
	return failed ? 5000000 + i * 1000 : 300000 + i;
}

/* Failures and passes interleaved. */
static int64_t
dur_mixed(int i, int failed)
{
	return failed ? 1000 + i * 2000 : 2000 + (i - 8) * 1000;
}

/* Diagnose rows and free them; d is left for the caller's asserts. */
static void
diagnose(struct flaky_diagnosis *d, struct flaky_result_row *v, int n)
{
	memset(d, 0, sizeof *d);
	ck_assert_int_eq(flaky_diagnose_rows(d, v, (size_t)n), 0);
	flaky_result_rows_free(v, (size_t)n);
}

/* Free what flaky_diagnose_rows put in a diagnosis on the stack. */
static void
undiagnose(struct flaky_diagnosis *d)
{
	struct flaky_diagnosis *p = calloc(1, sizeof *p);

	*p = *d;
	flaky_diagnosis_free(p);
}

/* Rows at revisions, oldest first. */
static void
rows_at(struct flaky_result_row *v, size_t *n, const char *rev, int runs,
    int fails, int64_t *t)
{
	for (int i = 0; i < runs; i++) {
		struct flaky_result_row *x = &v[(*n)++];

		memset(x, 0, sizeof *x);
		x->run_id = (int64_t)*n;
		x->started_ms = (*t)++;
		x->revision = rev ? strdup(rev) : NULL;
		x->outcome = i < fails ? FLAKY_FAIL : FLAKY_PASS;
		x->duration_us = i < fails ? 5000000 + i * 1000 : 300000;
		x->signature = i < fails ? strdup("TIMEOUT") : NULL;
		x->fingerprint = i < fails ? 42 : 0;
	}
}

START_TEST(race_from_timing)
{
	struct flaky_diagnosis d;

	/* 6 fast failures against 14 slow passes: U = 0, p = 6.2e-4 */
	diagnose(&d, timed_rows(20, 6, "UNKNOWN", dur_apart), 20);
	ck_assert_double_eq_tol(d.timing.mw_p, 0.000619654567738768, 1e-15);
	ck_assert(d.timing.varies);
	ck_assert(d.race_timing);
	ck_assert_str_eq(d.signature, "RACE");
	/* what was stored stays */
	ck_assert_str_eq(d.sigs[0].name, "UNKNOWN");
	ck_assert_int_eq(d.sigs[0].count, 6);
	ck_assert_str_eq(d.modes[0].signature, "UNKNOWN");
	undiagnose(&d);
	/* a message that said TIMEOUT keeps saying it */
	diagnose(&d, timed_rows(20, 6, "TIMEOUT", dur_apart), 20);
	ck_assert(d.timing.varies);
	ck_assert(!d.race_timing);
	ck_assert_str_eq(d.signature, "TIMEOUT");
	undiagnose(&d);
	/* 5 against 5, apart: p = 0.012, no decision */
	diagnose(&d, timed_rows(10, 5, "UNKNOWN", dur_apart), 10);
	ck_assert_double_eq_tol(d.timing.mw_p, 0.012185780355344813, 1e-12);
	ck_assert(!d.timing.varies);
	ck_assert_str_eq(d.signature, "UNKNOWN");
	undiagnose(&d);
	/* 4 failures: too few for any p */
	diagnose(&d, timed_rows(40, 4, "UNKNOWN", dur_apart), 40);
	ck_assert(isnan(d.timing.mw_p));
	ck_assert(!d.timing.varies);
	ck_assert_str_eq(d.signature, "UNKNOWN");
	undiagnose(&d);
	/* failures at one long time: near a limit, a timeout and not a race,
	 * however clear the difference */
	diagnose(&d, timed_rows(30, 10, "UNKNOWN", dur_limit), 30);
	ck_assert(d.timing.near_limit);
	ck_assert_double_lt(d.timing.mw_p, 1e-4);
	ck_assert(!d.timing.varies);
	ck_assert_str_eq(d.signature, "UNKNOWN");
	undiagnose(&d);
	/* durations that do not go with the outcome: p = 0.4999 */
	diagnose(&d, timed_rows(24, 8, "UNKNOWN", dur_mixed), 24);
	ck_assert_double_eq_tol(d.timing.mw_p, 0.4999063666797635, 1e-12);
	ck_assert(!d.timing.varies);
	ck_assert_str_eq(d.signature, "UNKNOWN");
	undiagnose(&d);
	/* failing every time (broken): no passes to compare */
	diagnose(&d, timed_rows(20, 20, "UNKNOWN", dur_apart), 20);
	ck_assert(isnan(d.timing.mw_p));
	ck_assert_str_eq(d.signature, "UNKNOWN");
	undiagnose(&d);
}
END_TEST

START_TEST(revisions)
{
	struct flaky_result_row *v = calloc(200, sizeof *v);
	struct flaky_diagnosis d;
	size_t	 n = 0;
	int64_t	 t = 1000;

	/* flaky at old1, fixed at abc123: 0/60, at most 6% */
	rows_at(v, &n, "old1", 20, 5, &t);
	rows_at(v, &n, "abc123", 60, 0, &t);
	memset(&d, 0, sizeof d);
	ck_assert_int_eq(flaky_diagnose_rows(&d, v, n), 0);
	ck_assert_uint_eq(d.nrevs, 2);
	ck_assert_str_eq(d.revs[0].revision, "old1");
	ck_assert_int_eq(d.revs[0].state, FLAKY_REV_FLAKY);
	ck_assert_int_eq(d.revs[1].state, FLAKY_REV_STABLE);
	ck_assert_int_eq(d.revs[1].transition, FLAKY_TRANS_FIXED);
	ck_assert_int_eq(d.revs[1].runs, 60);
	ck_assert_int_eq(d.revs[1].failures, 0);
	/* z^2 / (n + z^2) for 0 of 60 */
	ck_assert_double_eq_tol(d.revs[1].ci_high, 3.841458820694124 /
	    (60 + 3.841458820694124), 1e-9);
	ck_assert_int_eq((int)lround(100 * d.revs[1].ci_high), 6);
	ck_assert_int_eq(d.verdict, FLAKY_VERDICT_FIXED);
	ck_assert_int_eq(d.runs, 80);
	ck_assert_int_eq(d.failures, 5);
	ck_assert_str_eq(d.signature, "TIMEOUT");
	/* failures at ~5 s, passes at 0.3 s: near a limit, not early */
	ck_assert(d.timing.near_limit);
	ck_assert(!d.timing.early);
	ck_assert_double_eq_tol(d.timing.median_fail, 5002.0, 1e-9);
	ck_assert_double_eq_tol(d.timing.p90_pass, 300.0, 1e-9);
	ck_assert_str_eq(flaky_transition_name(d.revs[1].transition), "fixed");
	d.test = d.target = NULL;
	{
		struct flaky_diagnosis *p = calloc(1, sizeof *p);

		*p = d;
		flaky_diagnosis_free(p);
	}

	/* stable at r1, broken at r2: regressed, broken; no revision is a
	 * group of its own */
	flaky_result_rows_free(v, n);
	v = calloc(200, sizeof *v);
	n = 0;
	rows_at(v, &n, NULL, 3, 1, &t);
	rows_at(v, &n, "r1", 10, 0, &t);
	rows_at(v, &n, "r2", 4, 4, &t);
	memset(&d, 0, sizeof d);
	ck_assert_int_eq(flaky_diagnose_rows(&d, v, n), 0);
	ck_assert_uint_eq(d.nrevs, 3);
	ck_assert_ptr_null(d.revs[0].revision);
	ck_assert_int_eq(d.revs[1].transition, FLAKY_TRANS_FIXED);
	ck_assert_int_eq(d.revs[2].state, FLAKY_REV_BROKEN);
	ck_assert_int_eq(d.revs[2].transition, FLAKY_TRANS_REGRESSED);
	ck_assert_int_eq(d.verdict, FLAKY_VERDICT_BROKEN);
	{
		struct flaky_diagnosis *p = calloc(1, sizeof *p);

		*p = d;
		flaky_diagnosis_free(p);
	}
	flaky_result_rows_free(v, n);
}
END_TEST

/* Runs alone (flakyctl confirm) that pass while the suite's fail: order
 * dependence confirmed once chance is unlikely (< 1%). */
START_TEST(passes_alone)
{
	struct flaky_result_row *v = calloc(100, sizeof *v);
	struct flaky_diagnosis d;
	size_t	 n = 0;
	int64_t	 t = 1;

	rows_at(v, &n, "r1", 20, 10, &t);
	for (size_t i = 0; i < n; i++)
		snprintf(v[i].trigger, sizeof v[i].trigger, "analyze");
	/* 6 passes alone: C(20,10) / C(26,10) = 0.037, not yet */
	rows_at(v, &n, "r1", 6, 0, &t);
	for (size_t i = 20; i < n; i++) {
		snprintf(v[i].trigger, sizeof v[i].trigger, "confirm");
		v[i].kind = FLAKY_KIND_ALONE;
	}
	memset(&d, 0, sizeof d);
	ck_assert_int_eq(flaky_diagnose_rows(&d, v, n), 0);
	ck_assert_int_eq(d.alone_runs, 6);
	ck_assert_int_eq(d.suite_failures, 10);
	ck_assert_double_eq_tol(d.alone_p, 184756.0 / 5311735.0, 1e-12);
	ck_assert(!d.passes_alone);
	ck_assert_str_eq(d.signature, "TIMEOUT");
	{
		struct flaky_diagnosis *p = calloc(1, sizeof *p);

		*p = d;
		flaky_diagnosis_free(p);
	}
	/* 4 more: C(20,10) / C(30,10) = 0.0061 */
	rows_at(v, &n, "r1", 4, 0, &t);
	for (size_t i = 26; i < n; i++) {
		snprintf(v[i].trigger, sizeof v[i].trigger, "confirm");
		v[i].kind = FLAKY_KIND_ALONE;
	}
	memset(&d, 0, sizeof d);
	ck_assert_int_eq(flaky_diagnose_rows(&d, v, n), 0);
	ck_assert_double_eq_tol(d.alone_p, 184756.0 / 30045015.0, 1e-12);
	ck_assert(d.passes_alone);
	ck_assert_str_eq(d.signature, "ORDER_DEPENDENT");
	{
		struct flaky_diagnosis *p = calloc(1, sizeof *p);

		*p = d;
		flaky_diagnosis_free(p);
	}
	/* one failure alone: not order dependent */
	rows_at(v, &n, "r1", 1, 1, &t);
	snprintf(v[n - 1].trigger, sizeof v[n - 1].trigger, "confirm");
	v[n - 1].kind = FLAKY_KIND_ALONE;
	memset(&d, 0, sizeof d);
	ck_assert_int_eq(flaky_diagnose_rows(&d, v, n), 0);
	ck_assert(!d.passes_alone);
	ck_assert_int_eq(d.alone_failures, 1);
	{
		struct flaky_diagnosis *p = calloc(1, sizeof *p);

		*p = d;
		flaky_diagnosis_free(p);
	}
	flaky_result_rows_free(v, n);
}
END_TEST
static Suite *
suite(void)
{
	Suite	*s = suite_create("diagnose_modes");
	TCase	*tc = tcase_create("diagnose_modes");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, race_from_timing);
	tcase_add_test(tc, revisions);
	tcase_add_test(tc, passes_alone);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
