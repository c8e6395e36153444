/* store: alerts (docs/alerts.md). The rule that turns a test's window into
 * an event, the window a stored run gives, events added once, deliveries
 * taken oldest first and marked, and the window query's plan. */
#include "buildconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "config/config.h"
#include "store/store_int.h"
#include "test_db.h"
#include "test_store_fixture.h"

/* The rule: escalations once until recovered, recovered once stable. */
START_TEST(decide)
{
	static const struct {
		int64_t	 runs, failures;
		int	 last, want;
	} c[] = {
		{ 4, 4, -1, -1 },			/* too few runs */
		{ 20, 0, -1, -1 },			/* stable, never told */
		{ 20, 0, FLAKY_ALERT_CRITICAL, FLAKY_ALERT_RECOVERED },
		{ 20, 0, FLAKY_ALERT_RECOVERED, -1 },
		{ 100, 3, -1, -1 },			/* noise */
		{ 100, 3, FLAKY_ALERT_FLAKY, -1 },	/* not stable yet */
		{ 20, 2, -1, FLAKY_ALERT_FLAKY },
		{ 20, 4, -1, FLAKY_ALERT_FLAKY },	/* 20%: warning */
		{ 20, 2, FLAKY_ALERT_FLAKY, -1 },
		{ 20, 2, FLAKY_ALERT_CRITICAL, -1 },	/* back down: quiet */
		{ 20, 2, FLAKY_ALERT_RECOVERED, FLAKY_ALERT_FLAKY },
		{ 20, 5, -1, FLAKY_ALERT_CRITICAL },
		{ 20, 5, FLAKY_ALERT_FLAKY, FLAKY_ALERT_CRITICAL },
		{ 20, 5, FLAKY_ALERT_CRITICAL, -1 },
		{ 20, 5, FLAKY_ALERT_BROKEN, -1 },
		{ 20, 20, FLAKY_ALERT_CRITICAL, FLAKY_ALERT_BROKEN },
		{ 20, 20, FLAKY_ALERT_BROKEN, -1 },
		{ 5, 5, -1, FLAKY_ALERT_BROKEN },
	};

	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct flaky_alert_test t = { .runs = c[i].runs,
		    .failures = c[i].failures, .last_kind = c[i].last };

		ck_assert_msg(flaky_alert_decide(&t, 5) == c[i].want,
		    "case %zu: got %d", i, flaky_alert_decide(&t, 5));
	}
}
END_TEST

/* One run of two tests; flip fails when fail is set. */
static int64_t
flip_run(struct flaky_store *s, int64_t tid, int n, int fail)
{
	struct flaky_results r;
	int64_t	 id;

	flaky_results_init(&r);
	strcpy(r.runner, "pytest");
	add(&r, "t.py::test_flip", fail ? FLAKY_FAIL : FLAKY_PASS, 10,
	    fail ? "AssertionError" : NULL);
	add(&r, "t.py::test_steady", FLAKY_PASS, 10, NULL);
	id = store_run(s, tid, T0 + n * 1000, &r);
	flaky_results_free(&r);
	return id;
}

/* Evaluate what was stored after the cursor, as flakyd does; the kinds
 * of the events added, one letter each. */
static void
evaluate(struct flaky_store *s, int64_t tid, char *kinds)
{
	static const char *const names[] = { "hook" };
	struct flaky_alert_test *v;
	int64_t	 run, ms, cursor;
	size_t	 n;
	char	 err[512];
	int	 k;

	ck_assert_int_eq(flaky_store_alert_cursor(s, tid, &cursor, err,
	    sizeof err), 0);
	while (flaky_store_alert_next_run(s, tid, cursor, &run, &ms, err,
	    sizeof err) == 1) {
		ck_assert_int_eq(flaky_store_alert_window(s, tid, run, ms, 5,
		    &v, &n, err, sizeof err), 0);
		ck_assert_int_le(n, 1);	/* never test_steady */
		for (size_t i = 0; i < n; i++) {
			struct flaky_alert a = { .test_id = v[i].test_id,
			    .run_id = run, .at_ms = ms, .runs = v[i].runs,
			    .failures = v[i].failures, .created_ms = ms };

			if ((a.kind = k = flaky_alert_decide(&v[i], 5)) < 0)
				continue;
			ck_assert_int_eq(flaky_store_alert_add(s, &a, names, 1,
			    err, sizeof err), 1);
			/* the same event again: nothing */
			ck_assert_int_eq(flaky_store_alert_add(s, &a, names, 1,
			    err, sizeof err), 0);
			strcat(kinds, flaky_alert_kind_name(k));
			strcat(kinds, " ");
		}
		flaky_alert_tests_free(v, n);
		ck_assert_int_eq(flaky_store_alert_set_cursor(s, tid, run, err,
		    sizeof err), 0);
		cursor = run;
	}
}

/* Runs 6 to 10 fail: flaky, critical, broken, recovered, once each. */
START_TEST(events_once)
{
	struct flaky_store *s = open_store();
	struct flaky_alert a, *v;
	int64_t	 tid = target(s, "demo"), old;
	size_t	 n;
	char	 kinds[256] = "", err[512];

	/* a run stored before alerts first looked is history */
	ck_assert_int_eq(flip_run(s, tid, 0, 0), 1);
	ck_assert_int_eq(flaky_store_alert_cursor(s, tid, &old, err,
	    sizeof err), 0);
	ck_assert_int_eq(old, 1);
	ck_assert_int_eq(flaky_store_alert_next_run(s, tid, old, &old, &old,
	    err, sizeof err), 0);
	for (int i = 1; i <= 15; i++) {
		flip_run(s, tid, i, i >= 6 && i <= 10);
		evaluate(s, tid, kinds);
	}
	ck_assert_str_eq(kinds, "flaky critical broken recovered ");
	/* the receiver takes them oldest first */
	ck_assert_int_eq(flaky_store_alert_next(s, "hook", &a, err,
	    sizeof err), 1);
	ck_assert_int_eq(a.kind, FLAKY_ALERT_FLAKY);
	ck_assert_str_eq(a.test, "t.py::test_flip");
	ck_assert_int_eq(a.runs, 5);
	ck_assert_int_eq(a.failures, 1);
	ck_assert_int_eq(flaky_store_alert_mark(s, a.id, "hook", 0, 1,
	    T0 + 99000, "timed out", T0, err, sizeof err), 0);
	flaky_alert_clear(&a);
	ck_assert_int_eq(flaky_store_alert_next(s, "hook", &a, err,
	    sizeof err), 1);
	ck_assert_int_eq(a.kind, FLAKY_ALERT_FLAKY);
	ck_assert_int_eq(a.attempts, 1);
	ck_assert_int_eq(a.next_ms, T0 + 99000);
	ck_assert_int_eq(flaky_store_alert_mark(s, a.id, "hook", 1, 2, 0, NULL,
	    T0, err, sizeof err), 0);
	flaky_alert_clear(&a);
	ck_assert_int_eq(flaky_store_alert_next(s, "hook", &a, err,
	    sizeof err), 1);
	ck_assert_int_eq(a.kind, FLAKY_ALERT_CRITICAL);
	flaky_alert_clear(&a);
	ck_assert_int_eq(flaky_store_alert_next(s, "other", &a, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_alerts_list(s, INT64_MIN, &v, &n, err,
	    sizeof err), 0);
	ck_assert_int_eq(n, 4);
	ck_assert_int_eq(v[0].nd, 1);
	ck_assert_int_eq(v[0].d[0].state, 1);
	ck_assert_int_eq(v[0].d[0].attempts, 2);
	ck_assert_int_eq(v[1].d[0].state, 0);
	flaky_alerts_free(v, n);
	flaky_store_close(s);
}
END_TEST

/* The window reads the target's runs by runs_by_target and the results
 * of those runs by their key, never a scan of either table; also after
 * ANALYZE. */
START_TEST(window_plan)
{
	struct flaky_store *s = open_store();
	int64_t	 tid = target(s, "demo");
	sqlite3	*db;
	char	*plan, *sql;

	for (int i = 0; i < 30; i++)
		flip_run(s, tid, i, i % 3 == 0);
	flaky_store_close(s);
	db = raw_open();
	if (asprintf(&sql, "EXPLAIN QUERY PLAN %s", store_sql_alert_window) ==
	    -1)
		ck_abort_msg("out of memory");
	for (int pass = 0; pass < 2; pass++) {
		plan = tu_rows(db, sql);
		ck_assert_msg(strstr(plan, "runs_by_target") != NULL, "%s",
		    plan);
		ck_assert_msg(strstr(plan, "SCAN runs") == NULL &&
		    strstr(plan, "SCAN r\n") == NULL &&
		    strstr(plan, "SCAN cur") == NULL &&
		    strstr(plan, "SCAN results") == NULL, "%s", plan);
		free(plan);
		ck_assert_int_eq(sqlite3_exec(db, "ANALYZE", NULL, NULL, NULL),
		    SQLITE_OK);
	}
	free(sql);
	sqlite3_close(db);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("store_alerts");
	TCase	*tc = tcase_create("alerts");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, decide);
	tcase_add_test(tc, events_once);
	tcase_add_test(tc, window_plan);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
