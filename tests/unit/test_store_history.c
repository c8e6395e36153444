/* store_history: the trend and change-point rules, the budget trigger,
 * JUnit attempts and timestamps, quarantine streaks and pruning, on small
 * databases whose every count is known. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "parse/parse.h"
#include "store/store.h"
#include "util/util.h"
#include "test_db.h"

/* internals the tests reach (lib/store/store_int.h) */
extern const char store_sql_budget_run[];

#define DAY0	20700		/* a day index, 2026-09-04 */

START_TEST(trend_rule)
{
	ck_assert_int_eq(flaky_trend(0, 0, 5, 100), FLAKY_TREND_SAME);
	ck_assert_int_eq(flaky_trend(3, 100, 0, 0), FLAKY_TREND_NEW);
	ck_assert_int_eq(flaky_trend(0, 100, 0, 0), FLAKY_TREND_SAME);
	/* 0/300 before: [0, 1.3%]; 51/300 now: [13.2%, 21.7%]. */
	ck_assert_int_eq(flaky_trend(51, 300, 0, 300), FLAKY_TREND_NEW);
	ck_assert_int_eq(flaky_trend(120, 300, 15, 300), FLAKY_TREND_WORSE);
	ck_assert_int_eq(flaky_trend(0, 300, 69, 300), FLAKY_TREND_BETTER);
	/* Overlapping intervals decide nothing. */
	ck_assert_int_eq(flaky_trend(3, 300, 2, 300), FLAKY_TREND_SAME);
	ck_assert_int_eq(flaky_trend(60, 300, 60, 300), FLAKY_TREND_SAME);
	/* One failure after none, in few runs: not new. */
	ck_assert_int_eq(flaky_trend(1, 10, 0, 10), FLAKY_TREND_SAME);
	ck_assert_str_eq(flaky_trend_name(FLAKY_TREND_WORSE), "worse");
	ck_assert_str_eq(flaky_trend_name(FLAKY_TREND_NEW), "new");
}
END_TEST

START_TEST(change_point)
{
	uint32_t runs[60], fails[60];

	for (int d = 0; d < 60; d++) {
		runs[d] = 10;
		fails[d] = d >= 43 ? 3 : 0;
	}
	ck_assert_int_eq(flaky_change_point(runs, fails, 60), 43);
	/* Days without runs before the change: the first day with runs. */
	runs[43] = runs[44] = fails[43] = fails[44] = 0;
	ck_assert_int_eq(flaky_change_point(runs, fails, 60), 45);
	/* Flat: none. */
	for (int d = 0; d < 60; d++) {
		runs[d] = 10;
		fails[d] = 2;
	}
	ck_assert_int_eq(flaky_change_point(runs, fails, 60), -1);
	/* Better, not worse: none. */
	for (int d = 0; d < 60; d++)
		fails[d] = d < 20 ? 3 : 0;
	ck_assert_int_eq(flaky_change_point(runs, fails, 60), -1);
	/* Too little evidence: one failure late. */
	for (int d = 0; d < 60; d++)
		fails[d] = d == 58;
	ck_assert_int_eq(flaky_change_point(runs, fails, 60), -1);
	/* 5% then 40%. */
	for (int d = 0; d < 60; d++)
		fails[d] = d >= 30 ? 4 : (d % 2 == 0);
	ck_assert_int_eq(flaky_change_point(runs, fails, 60), 30);
	memset(runs, 0, sizeof runs);
	memset(fails, 0, sizeof fails);
	ck_assert_int_eq(flaky_change_point(runs, fails, 60), -1);
	ck_assert_int_eq(flaky_change_point(runs, fails, 0), -1);
}
END_TEST

/* A fresh database in a temporary directory. */
static struct flaky_store *
fresh(char *path, size_t len)
{
	struct flaky_store *s;
	char	 dir[] = "/tmp/test_history_XXXXXX", err[256];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, len, "%s/h.db", dir);
	ck_assert_msg(flaky_store_open(path, 0, &s, err, sizeof err) == 0,
	    "%s", err);
	return s;
}

/* Store one run of tests a, b, c at day + hour with the given outcomes,
 * of a kind, whole or not. */
static int64_t
add_run_kind(struct flaky_store *s, int64_t target, int64_t day, int hour,
    const int *out, int64_t dur_us, int kind, const char *incomplete)
{
	static char *names[] = { "a", "b", "c" };
	struct flaky_result v[3];
	struct flaky_results res;
	struct flaky_run_record rec;
	char	 err[256];

	memset(&rec, 0, sizeof rec);
	flaky_results_init(&res);
	for (int i = 0; i < 3; i++) {
		memset(&v[i], 0, sizeof v[i]);
		v[i].test = names[i];
		v[i].outcome = out[i];
		v[i].duration_us = 1000;
		v[i].position = (unsigned)i;
	}
	res.v = v;
	res.n = 3;
	rec.target_id = target;
	rec.status = FLAKY_RUN_DONE;
	rec.started_ms = day * FLAKY_DAY_MS + hour * 3600000LL;
	rec.duration_us = dur_us;
	rec.user_us = dur_us / 2;
	rec.sys_us = dur_us / 4;
	rec.loadavg = -1;
	rec.kind = kind;
	rec.incomplete = incomplete;
	ck_assert_msg(flaky_store_run_finish(s, &rec, &res, err,
	    sizeof err) == 0, "%s", err);
	return rec.id;
}

static int64_t
add_run(struct flaky_store *s, int64_t target, int64_t day, int hour,
    const int *out, int64_t dur_us)
{
	return add_run_kind(s, target, day, hour, out, dur_us,
	    FLAKY_KIND_SUITE, NULL);
}

/* The budget as it was read before 0015-budget15.sql: every failed result
 * still stored, with its run's wall and CPU time, per day and test. */
#define BUDGET_OF_RESULTS \
	"SELECT r.started_ms / 86400000, res.test_id, count(*), " \
	"sum(coalesce(r.duration_us, 0)), " \
	"sum(coalesce(r.user_us, 0) + coalesce(r.sys_us, 0)) " \
	"FROM results res JOIN runs r ON r.id = res.run_id " \
	"WHERE res.outcome IN (1, 2) GROUP BY 1, 2 ORDER BY 1, 2"
#define BUDGET_ROWS \
	"SELECT day, test_id, runs, wall_us, cpu_us FROM budget ORDER BY 1, 2"

/* Every stored run adds its failures to the budget, of every kind (runs
 * alone, incomplete ones: rates leave them out, the budget never did),
 * twice over for a run stored twice in a day; a run without failures adds
 * nothing; daily_budget reads the table alone. */
START_TEST(budget_every_run)
{
	struct flaky_store *s;
	sqlite3	*db;
	char	 path[128], err[256], *want, *plan;
	int64_t	 t;
	int	 pass[3] = { 0, 0, 0 }, bfail[3] = { 0, 1, 0 };
	int	 both[3] = { 2, 1, 0 };

	s = fresh(path, sizeof path);
	ck_assert_int_eq(flaky_store_target(s, "t", NULL, NULL, &t, err,
	    sizeof err), 0);
	add_run(s, t, DAY0, 1, bfail, 2000000);
	add_run(s, t, DAY0, 2, both, 3000000);
	add_run(s, t, DAY0, 3, pass, 4000000);
	add_run_kind(s, t, DAY0, 4, bfail, 5000000, FLAKY_KIND_ALONE, NULL);
	add_run_kind(s, t, DAY0 + 1, 1, both, 7000000, FLAKY_KIND_SUITE,
	    "timeout");
	flaky_store_close(s);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	want = tu_rows(db, BUDGET_OF_RESULTS);
	tu_rows_eq(db, BUDGET_ROWS, want);
	/* b: four runs on the first day (2 + 3 + 5 s), one the next; a: one
	 * on each day */
	tu_rows_eq(db, BUDGET_ROWS,
	    "20700|1|1|3000000|2250000\n"
	    "20700|2|3|10000000|7500000\n"
	    "20701|1|1|7000000|5250000\n"
	    "20701|2|1|7000000|5250000\n");
	tu_rows_eq(db, "SELECT test, day, failed_runs, wall_s, cpu_s FROM "
	    "daily_budget WHERE test = 'b' ORDER BY day",
	    "b|2026-09-04|3|10.0|7.5\nb|2026-09-05|1|7.0|5.25\n");
	/* a run's failures through the results' key, not every failure */
	{
		char ex[1024];

		snprintf(ex, sizeof ex, "EXPLAIN QUERY PLAN %s",
		    store_sql_budget_run);
		plan = tu_rows(db, ex);
		ck_assert_msg(strstr(plan, "USING PRIMARY KEY (run_id=?)") !=
		    NULL, "%s", plan);
		free(plan);
	}
	free(want);
	sqlite3_close(db);
	unlink(path);
}
END_TEST

/* A database of the version before 0015-budget15.sql, whose budget held
 * the pruned runs only: the migration adds the stored results' share, so
 * that the budget is what it was read as before, and prune moves nothing
 * more. */
START_TEST(budget_migrate)
{
	struct flaky_store *s;
	struct flaky_prune_stats ps;
	sqlite3	*db;
	char	 path[128], sql[64], err[256], *before;
	int	 from;

	s = fresh(path, sizeof path);
	flaky_store_close(s);
	unlink(path);
	db = tu_db_before(path, "budget is whole", &from);
	ck_assert_msg(sqlite3_exec(db,
	    "INSERT INTO targets (id, name, created_ms) VALUES (1, 't', 0);"
	    "INSERT INTO tests (id, target_id, name) VALUES (1, 1, 'a'), "
	    "  (2, 1, 'b');"
	    /* day 20700: pruned, its share in budget */
	    "INSERT INTO budget VALUES (20700, 2, 2, 4000000, 3000000);"
	    "INSERT INTO runs (id, target_id, status, started_ms, kind, "
	    "  duration_us, user_us, sys_us) VALUES "
	    "  (1, 1, 'done', 1788480000000, 'suite', 2000000, 1000, 500), "
	    "  (2, 1, 'done', 1788566400000, 'suite', 3000000, 2000, NULL), "
	    "  (3, 1, 'done', 1788566500000, 'alone', NULL, NULL, NULL);"
	    "INSERT INTO results (run_id, position, test_id, outcome) VALUES "
	    "  (2, 0, 1, 0), (2, 1, 2, 1), (3, 0, 2, 2), (3, 1, 1, 3);",
	    NULL, NULL, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(db));
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", from);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	before = tu_rows(db, "SELECT * FROM daily_budget ORDER BY day");
	sqlite3_close(db);
	ck_assert_msg(flaky_store_open(path, 0, &s, err, sizeof err) == 0,
	    "%s", err);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	tu_rows_eq(db, BUDGET_ROWS,
	    "20700|2|2|4000000|3000000\n20701|2|2|3000000|2000\n");
	/* the view gives what it gave */
	tu_rows_eq(db, "SELECT * FROM daily_budget ORDER BY day", before);
	/* failure_rollups (0016) made from the stored failures: the run
	 * alone's apart from the suite run's (counted 0) */
	tu_rows_eq(db, "SELECT * FROM failure_rollups",
	    "20701|2|0|0|UNKNOWN|1|3\n20701|2|1|0|UNKNOWN|1|2\n");
	/* prune moves nothing more */
	ck_assert_int_eq(flaky_store_prune(s, 1788566600000LL, &ps, err,
	    sizeof err), 0);
	ck_assert_int_eq(ps.runs, 2);
	tu_rows_eq(db, BUDGET_ROWS,
	    "20700|2|2|4000000|3000000\n20701|2|2|3000000|2000\n");
	free(before);
	sqlite3_close(db);
	flaky_store_close(s);
	unlink(path);
}
END_TEST

START_TEST(history_budget_prune)
{
	struct flaky_store *s;
	struct flaky_history h;
	struct flaky_quarantine_row *q;
	struct flaky_prune_stats ps;
	struct flaky_db_stats ds;
	struct flaky_query qu = { 0 };
	const struct flaky_history_row *r;
	char	 path[128], err[256];
	int64_t	 t, id;
	size_t	 nq;
	int	 pass[3] = { 0, 0, 0 }, bfail[3] = { 0, 1, 0 };

	s = fresh(path, sizeof path);
	ck_assert_int_eq(flaky_store_target(s, "t", NULL, NULL, &t, err,
	    sizeof err), 0);
	/* 20 days, 4 runs a day: b fails one run a day from day 10. */
	for (int d = 0; d < 20; d++)
		for (int k = 0; k < 4; k++)
			add_run(s, t, DAY0 + d, k, d >= 10 && k == 0 ? bfail :
			    pass, 2000000);
	qu.since_ms = (DAY0 + 10) * FLAKY_DAY_MS;
	qu.until_ms = (DAY0 + 20) * FLAKY_DAY_MS;
	ck_assert_int_eq(flaky_store_find_test(s, NULL, "b", &id, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_history(s, &qu, &h, err, sizeof err), 0);
	ck_assert_int_eq(h.ndays, 10);
	ck_assert_int_eq(h.first_day, DAY0 + 10);
	/* Only b failed: a and c have no history to tell. */
	ck_assert_uint_eq(h.n, 1);
	ck_assert_ptr_null(flaky_history_find(&h, id - 1));
	r = flaky_history_find(&h, id);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->runs, 40);
	ck_assert_int_eq(r->failures, 10);
	ck_assert_int_eq(r->prev_runs, 40);
	ck_assert_int_eq(r->prev_failures, 0);
	ck_assert_int_eq(r->trend, FLAKY_TREND_NEW);
	ck_assert_int_eq(r->change_day, DAY0 + 10);
	/* Ten failed runs of 2 s wall, 1.5 s CPU. */
	ck_assert_int_eq(r->budget_runs, 10);
	ck_assert_int_eq(r->budget_wall_us, 20000000);
	ck_assert_int_eq(r->budget_cpu_us, 15000000);
	ck_assert_uint_eq(r->day_runs[3], 4);
	ck_assert_uint_eq(r->day_failures[3], 1);
	flaky_history_free(&h);

	/* Quarantine: b's last failure was the first run of the last day. */
	ck_assert_int_eq(flaky_store_quarantine_add(s, id, "why", NULL, 5,
	    err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_quarantine_list(s, &q, &nq, err,
	    sizeof err), 0);
	ck_assert_uint_eq(nq, 1);
	ck_assert_str_eq(q[0].test, "b");
	ck_assert_int_eq(q[0].passes, 3);
	ck_assert_ptr_null(q[0].ticket);
	flaky_quarantine_rows_free(q, nq);

	/* Prune the first 15 days: counts, budget and trend stay. */
	ck_assert_int_eq(flaky_store_prune(s, (DAY0 + 15) * FLAKY_DAY_MS, &ps,
	    err, sizeof err), 0);
	ck_assert_int_eq(ps.runs, 60);
	ck_assert_int_eq(ps.results, 180);
	ck_assert_int_eq(flaky_store_history(s, &qu, &h, err, sizeof err), 0);
	r = flaky_history_find(&h, id);
	ck_assert_int_eq(r->failures, 10);
	ck_assert_int_eq(r->budget_wall_us, 20000000);
	ck_assert_int_eq(r->change_day, DAY0 + 10);
	ck_assert_int_eq(h.pruned_before_ms, (DAY0 + 15) * FLAKY_DAY_MS);
	flaky_history_free(&h);
	ck_assert_int_eq(flaky_store_db_stats(s, &ds, err, sizeof err), 0);
	ck_assert_int_eq(ds.runs, 80);
	ck_assert_int_eq(ds.results, 60);
	ck_assert_int_eq(ds.rollups, 60);
	ck_assert_int_eq(ds.first_day, DAY0);
	ck_assert_int_eq(ds.first_result_ms, (DAY0 + 15) * FLAKY_DAY_MS);
	ck_assert_int_eq(flaky_store_quarantine_remove(s, id, err, sizeof err),
	    0);
	ck_assert_int_eq(flaky_store_quarantine_remove(s, id, err, sizeof err),
	    -ENOENT);
	ck_assert_int_eq(flaky_store_find_test(s, NULL, "zz", &id, err,
	    sizeof err), -ENOENT);
	flaky_store_close(s);
	unlink(path);
}
END_TEST

START_TEST(junit_attempts)
{
	struct flaky_results res;
	struct flaky_junit_extra x;
	char	 err[256];

	ck_assert_msg(flaky_parse_junit_ex(FIXTURES "/junit/surefire-flaky.xml",
	    &res, &x, err, sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(res.n, 4);
	ck_assert_int_eq(x.timestamp_ms, -1);
	ck_assert_uint_eq(x.nattempts, 4);
	/* retriesOnce: failed, then passed. */
	ck_assert_uint_eq(x.attempts[0].result, 0);
	ck_assert_int_eq(x.attempts[0].outcome, FLAKY_FAIL);
	ck_assert_str_eq(x.attempts[0].message, "expected:<1> but was:<2>");
	ck_assert_int_eq(x.attempts[1].attempt, 1);
	ck_assert_int_eq(x.attempts[1].outcome, FLAKY_PASS);
	/* alwaysBroken: the failure, then its rerun. */
	ck_assert_uint_eq(x.attempts[2].result, 1);
	ck_assert_int_eq(x.attempts[2].attempt, 0);
	ck_assert_str_eq(x.attempts[2].message, "Connection refused");
	ck_assert_int_eq(x.attempts[3].attempt, 1);
	ck_assert_int_eq(x.attempts[3].outcome, FLAKY_FAIL);
	flaky_junit_extra_free(&x);
	flaky_results_free(&res);
	/* A refused file hands nothing over. */
	ck_assert_int_lt(flaky_parse_junit_ex(FIXTURES
	    "/junit/billion-laughs.xml", &res, &x, err, sizeof err), 0);
	ck_assert_uint_eq(x.nattempts, 0);
	ck_assert_uint_eq(res.n, 0);
}
END_TEST

/* A runner's own retries parsed from its output (Playwright's --retries,
 * tests/fixtures/playwright/demo-retries.txt) are stored with the run:
 * each attempt beside the result, which keeps the first one's outcome. */
START_TEST(run_attempts)
{
	struct flaky_store *s;
	struct flaky_results res;
	struct flaky_run_record rec;
	sqlite3	*db;
	char	 path[128], err[256], *text;
	size_t	 len;
	int64_t	 t;

	s = fresh(path, sizeof path);
	ck_assert_int_eq(flaky_store_target(s, "pw", NULL, NULL, &t, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_read_file(FIXTURES
	    "/playwright/demo-retries.txt", 1 << 20, &text, &len, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_parse_buffer(text, len, NULL, &res), 0);
	free(text);
	ck_assert_uint_eq(res.nattempts, 8);
	memset(&rec, 0, sizeof rec);
	rec.target_id = t;
	rec.status = FLAKY_RUN_DONE;
	rec.started_ms = DAY0 * FLAKY_DAY_MS;
	rec.loadavg = -1;
	rec.kind = FLAKY_KIND_SUITE;
	ck_assert_msg(flaky_store_run_finish(s, &rec, &res, err,
	    sizeof err) == 0, "%s", err);
	flaky_results_free(&res);
	flaky_store_close(s);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	/* the payment failed, then passed; its result keeps the failure */
	tu_rows_eq(db, "SELECT a.attempt, a.outcome, r.outcome, "
	    "a.message LIKE 'Error: expect(received)%' FROM attempts a "
	    "JOIN results r USING (run_id, position) JOIN tests t ON t.id = "
	    "r.test_id WHERE t.name LIKE '%retries the payment' ORDER BY 1",
	    "0|1|1|1\n1|0|1|NULL\n");
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM attempts"), 8);
	sqlite3_close(db);
	unlink(path);
}
END_TEST

START_TEST(junit_timestamp)
{
	struct flaky_results res;
	struct flaky_junit_extra x;
	char	 path[] = "/tmp/test_history_ts_XXXXXX", err[256];
	int	 fd = mkstemp(path);
	static const char xml[] = "<testsuites><testsuite name=\"s\" "
	    "timestamp=\"2026-11-20T10:00:00.250+01:00\"><testcase "
	    "classname=\"c\" name=\"n\"/></testsuite><testsuite name=\"t\" "
	    "timestamp=\"2027-01-01T00:00:00\"/></testsuites>";

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, xml, sizeof xml - 1), sizeof xml - 1);
	close(fd);
	ck_assert_int_eq(flaky_parse_junit_ex(path, &res, &x, err, sizeof err),
	    0);
	/* The first suite's, with its zone. */
	ck_assert_int_eq(x.timestamp_ms, 1795165200250LL);
	flaky_junit_extra_free(&x);
	flaky_results_free(&res);
	unlink(path);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("store_history");
	TCase	*tc = tcase_create("store_history");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, trend_rule);
	tcase_add_test(tc, change_point);
	tcase_add_test(tc, history_budget_prune);
	tcase_add_test(tc, budget_every_run);
	tcase_add_test(tc, budget_migrate);
	tcase_add_test(tc, junit_attempts);
	tcase_add_test(tc, junit_timestamp);
	tcase_add_test(tc, run_attempts);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
