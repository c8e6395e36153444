/* store kinds: a run alone or an incomplete run keeps its results but
 * never touches the rollups (test_stats, flaky_tests, daily_trend and every
 * rate); queries over raw results skip incomplete runs and honour
 * flaky_query.kinds; run counts by kind; the verdict alone per test; a run
 * alone is never a target's last run; the migration of a version 4
 * database keeps every row and takes confirm runs out of the rollups. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "parse/parse.h"
#include "store/store.h"
#include "util/util.h"
#include "test_db.h"
#include "test_helper.h"

/* 2026-11-01T12:00:00Z: day 20758 */
#define T0	1793534400000LL

static char	 dir[64];
static char	 path[128];

static void
setup(void)
{
	tu_tmpdir(dir, sizeof dir, "kinds");
	snprintf(path, sizeof path, "%s/flaky.db", dir);
}

static void
teardown(void)
{
	tu_rmdir(dir);
}

static void
add(struct flaky_results *r, const char *test, int outcome, int64_t us)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 8;
		ck_assert_ptr_nonnull(r->v = realloc(r->v,
		    r->cap * sizeof *r->v));
	}
	memset(&r->v[r->n], 0, sizeof r->v[r->n]);
	r->v[r->n].test = strdup(test);
	r->v[r->n].outcome = outcome;
	r->v[r->n].duration_us = us;
	if (FLAKY_FAILED(outcome)) {
		r->v[r->n].message = strdup("AssertionError");
		r->v[r->n].signature = strdup("UNKNOWN");
	}
	r->v[r->n].position = (unsigned)r->n;
	r->n++;
}

static struct flaky_store *
open_store(void)
{
	struct flaky_store *s;
	char		 err[512];

	ck_assert_msg(flaky_store_open(path, 0, &s, err, sizeof err) == 0,
	    "%s", err);
	return s;
}

/* One finished run of kind with "a" (fails when fail_a) and "b" (passes);
 * incomplete when why is not NULL. */
static int64_t
run(struct flaky_store *s, int64_t tid, int kind, int64_t started,
    int fail_a, const char *why)
{
	struct flaky_run_record rec = { 0 };
	struct flaky_results r;
	char	 err[512];

	flaky_results_init(&r);
	strcpy(r.runner, "pytest");
	add(&r, "a", fail_a ? FLAKY_FAIL : FLAKY_PASS, 1000);
	if (kind != FLAKY_KIND_ALONE)
		add(&r, "b", FLAKY_PASS, 2000);
	rec.target_id = tid;
	rec.kind = kind;
	rec.trigger = kind == FLAKY_KIND_ALONE ? "confirm" : "analyze";
	rec.started_ms = started;
	rec.loadavg = -1;
	ck_assert_msg(flaky_store_run_start(s, &rec, err, sizeof err) == 0,
	    "%s", err);
	rec.status = FLAKY_RUN_DONE;
	rec.ended_ms = started + 10;
	rec.incomplete = why;
	ck_assert_msg(flaky_store_run_finish(s, &rec, &r, err, sizeof err) ==
	    0, "%s", err);
	flaky_results_free(&r);
	return rec.id;
}

static int64_t
target(struct flaky_store *s, const char *name)
{
	int64_t	 id;
	char	 err[512];

	ck_assert_msg(flaky_store_target(s, name, "pytest -v", "/src", &id,
	    err, sizeof err) == 0, "%s", err);
	return id;
}

/* The row of test name in v, or NULL. */
static const struct flaky_test_row *
find(const struct flaky_test_row *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].test, name) == 0)
			return &v[i];
	return NULL;
}

/* Four suite runs (a fails in one), then runs alone and an incomplete run:
 * the rollups, test_stats and the default query see the suite only. */
START_TEST(alone_and_incomplete_out_of_rollups)
{
	struct flaky_store *s = open_store();
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0, 0 };
	struct flaky_test_row *v;
	const struct flaky_test_row *a;
	struct flaky_run_counts c;
	sqlite3		*db;
	size_t		 n;
	char		 err[512];
	int64_t		 tid = target(s, "demo"), first;

	first = run(s, tid, FLAKY_KIND_SUITE, T0, 1, NULL);
	for (int i = 1; i < 4; i++)
		run(s, tid, FLAKY_KIND_SUITE, T0 + i, 0, NULL);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	tu_rows_eq(db, "SELECT test, runs, failures, tier FROM test_stats "
	    "ORDER BY test", "a|4|1|critical\nb|4|0|stable\n");
	/* three runs alone that all fail, one incomplete suite run where a
	 * fails: evidence kept, rates unchanged */
	for (int i = 0; i < 3; i++)
		run(s, tid, FLAKY_KIND_ALONE, T0 + 10 + i, 1, NULL);
	run(s, tid, FLAKY_KIND_SUITE, T0 + 20, 1, "the runner's summary "
	    "counted 3 tests, 2 were parsed");
	tu_rows_eq(db, "SELECT test, runs, failures, tier FROM test_stats "
	    "ORDER BY test", "a|4|1|critical\nb|4|0|stable\n");
	tu_rows_eq(db, "SELECT test, runs, failures FROM daily_trend "
	    "ORDER BY test", "a|4|1\nb|4|0\n");
	tu_rows_eq(db, "SELECT count(*) FROM test_results", "13\n");
	tu_rows_eq(db, "SELECT kind, count(*), count(incomplete) FROM run_list "
	    "GROUP BY kind ORDER BY kind", "alone|3|0\nsuite|5|1\n");
	tu_rows_eq(db, "SELECT target, test, runs_alone, failures_alone "
	    "FROM alone_stats", "demo|a|3|3\n");

	/* the store's own query: rollups, with the verdict alone */
	ck_assert_int_eq(flaky_store_test_stats(s, &q, &v, &n, err,
	    sizeof err), 0);
	ck_assert_int_eq(n, 2);
	ck_assert_ptr_nonnull(a = find(v, n, "a"));
	ck_assert_int_eq(a->runs, 4);
	ck_assert_int_eq(a->failures, 1);
	ck_assert_int_eq(a->alone_runs, 3);
	ck_assert_int_eq(a->alone_failures, 3);
	ck_assert_int_eq(find(v, n, "b")->alone_runs, 0);
	flaky_test_rows_free(v, n);

	/* a run-id window reads the raw results: the incomplete run and the
	 * runs alone are not counted there either */
	q.first_run_id = first;
	ck_assert_int_eq(flaky_store_test_stats(s, &q, &v, &n, err,
	    sizeof err), 0);
	ck_assert_ptr_nonnull(a = find(v, n, "a"));
	ck_assert_int_eq(a->runs, 4);
	ck_assert_int_eq(a->failures, 1);
	flaky_test_rows_free(v, n);

	/* runs alone asked for */
	q.first_run_id = 0;
	q.kinds = FLAKY_KIND_MASK(FLAKY_KIND_ALONE);
	ck_assert_int_eq(flaky_store_test_stats(s, &q, &v, &n, err,
	    sizeof err), 0);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(v[0].runs, 3);
	ck_assert_int_eq(v[0].failures, 3);
	ck_assert_int_eq(v[0].top_message_count, 3);
	flaky_test_rows_free(v, n);
	/* all kinds: suite and alone, still not the incomplete run */
	q.kinds = FLAKY_KIND_MASK(FLAKY_KIND_SUITE) |
	    FLAKY_KIND_MASK(FLAKY_KIND_ALONE) |
	    FLAKY_KIND_MASK(FLAKY_KIND_INGESTED);
	ck_assert_int_eq(flaky_store_test_stats(s, &q, &v, &n, err,
	    sizeof err), 0);
	ck_assert_ptr_nonnull(a = find(v, n, "a"));
	ck_assert_int_eq(a->runs, 7);
	ck_assert_int_eq(a->failures, 4);
	ck_assert_int_eq(a->top_message_count, 4);
	flaky_test_rows_free(v, n);

	/* run counts: the default kinds, incomplete apart, every kind */
	q.kinds = 0;
	ck_assert_int_eq(flaky_store_run_counts(s, &q, &c, err, sizeof err),
	    0);
	ck_assert_int_eq(c.runs, 5);
	ck_assert_int_eq(c.done, 5);
	ck_assert_int_eq(c.incomplete, 1);
	ck_assert_int_eq(c.suite, 5);
	ck_assert_int_eq(c.alone, 3);
	ck_assert_int_eq(c.ingested, 0);
	q.kinds = FLAKY_KIND_MASK(FLAKY_KIND_ALONE);
	ck_assert_int_eq(flaky_store_run_counts(s, &q, &c, err, sizeof err),
	    0);
	ck_assert_int_eq(c.runs, 3);
	ck_assert_int_eq(c.incomplete, 0);
	sqlite3_close(db);
	flaky_store_close(s);
}
END_TEST

/* Ingested runs count like suite runs; 'stopped' is a status; the kind is
 * checked. */
/* Runs of only some tests (issue 18: runs.selected): a selected run that
 * ran "a" alone counts for "a" only; "b" is not missing from it. */
START_TEST(selected_counts_for_its_tests)
{
	struct flaky_store *s = open_store();
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0, 0 };
	struct flaky_test_row *v = NULL;
	const struct flaky_test_row *a, *b;
	struct flaky_run_record rec = { 0 };
	struct flaky_results r;
	int64_t	 tid = target(s, "t");
	size_t	 n = 0;
	char	 err[512];
	sqlite3	*db;

	for (int i = 0; i < 3; i++)
		run(s, tid, FLAKY_KIND_SUITE, 1000 + i, i == 0, NULL);
	for (int i = 0; i < 2; i++) {
		memset(&rec, 0, sizeof rec);
		flaky_results_init(&r);
		strcpy(r.runner, "pytest");
		add(&r, "a", FLAKY_FAIL, 1000);
		rec.target_id = tid;
		rec.kind = FLAKY_KIND_SUITE;
		rec.trigger = "analyze";
		rec.started_ms = 2000 + i;
		rec.loadavg = -1;
		rec.selected = 1;
		rec.status = FLAKY_RUN_DONE;
		rec.ended_ms = rec.started_ms + 10;
		/* the one without a start row is inserted whole */
		if (i == 1)
			ck_assert_msg(flaky_store_run_start(s, &rec, err,
			    sizeof err) == 0, "%s", err);
		ck_assert_msg(flaky_store_run_finish(s, &rec, &r, err,
		    sizeof err) == 0, "%s", err);
		flaky_results_free(&r);
	}
	ck_assert_msg(flaky_store_test_stats(s, &q, &v, &n, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_ptr_nonnull(a = find(v, n, "a"));
	ck_assert_ptr_nonnull(b = find(v, n, "b"));
	ck_assert_int_eq(a->runs, 5);
	ck_assert_int_eq(a->failures, 3);
	ck_assert_int_eq(b->runs, 3);
	ck_assert_int_eq(b->failures, 0);
	flaky_test_rows_free(v, n);
	flaky_store_close(s);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	tu_rows_eq(db, "SELECT coalesce(selected, 'whole'), kind, tests "
	    "FROM runs ORDER BY id", "whole|suite|2\nwhole|suite|2\n"
	    "whole|suite|2\n1|suite|1\n1|suite|1\n");
	tu_rows_eq(db, "SELECT t.name, sum(ro.runs), sum(ro.failures) FROM "
	    "rollups ro JOIN tests t ON t.id = ro.test_id GROUP BY t.name",
	    "a|5|3\nb|3|0\n");
	sqlite3_close(db);
}
END_TEST

START_TEST(ingested_and_stopped)
{
	struct flaky_store *s = open_store();
	struct flaky_run_record rec = { 0 };
	struct flaky_run_counts c;
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0, 0 };
	sqlite3		*db;
	char		 err[512];
	int64_t		 tid = target(s, "demo");

	run(s, tid, FLAKY_KIND_INGESTED, T0, 1, NULL);
	run(s, tid, FLAKY_KIND_SUITE, T0 + 1, 0, NULL);
	rec.target_id = tid;
	rec.kind = FLAKY_KIND_ALONE;
	rec.started_ms = T0 + 2;
	rec.loadavg = -1;
	rec.status = FLAKY_RUN_STOPPED;
	ck_assert_int_eq(flaky_store_run_finish(s, &rec, NULL, err,
	    sizeof err), 0);
	rec.id = 0;
	rec.kind = 7;
	ck_assert_int_eq(flaky_store_run_finish(s, &rec, NULL, err,
	    sizeof err), -EINVAL);
	ck_assert_int_eq(flaky_store_run_start(s, &rec, err, sizeof err),
	    -EINVAL);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	tu_rows_eq(db, "SELECT test, runs, failures FROM test_stats ORDER BY "
	    "test", "a|2|1\nb|2|0\n");
	tu_rows_eq(db, "SELECT status, kind FROM runs ORDER BY id",
	    "done|ingested\ndone|suite\nstopped|alone\n");
	ck_assert_int_eq(sqlite3_exec(db, "UPDATE runs SET kind = 'other'",
	    NULL, NULL, NULL), SQLITE_CONSTRAINT);
	q.kinds = FLAKY_KIND_MASK(FLAKY_KIND_ALONE);
	ck_assert_int_eq(flaky_store_run_counts(s, &q, &c, err, sizeof err),
	    0);
	ck_assert_int_eq(c.stopped, 1);
	ck_assert_int_eq(c.runs, 1);
	sqlite3_close(db);
	flaky_store_close(s);
}
END_TEST

/* status shows the suite: a run alone is never the target's last run. */
START_TEST(last_run_not_alone)
{
	struct flaky_store *s = open_store();
	struct flaky_last_run lr;
	char		 err[512];
	int64_t		 tid = target(s, "demo"), suite;

	suite = run(s, tid, FLAKY_KIND_SUITE, T0, 0, NULL);
	run(s, tid, FLAKY_KIND_ALONE, T0 + 1000, 1, NULL);
	ck_assert_int_eq(flaky_store_last_run(s, tid, &lr, err, sizeof err),
	    0);
	ck_assert_int_eq(lr.run_id, suite);
	ck_assert_int_eq(lr.failures, 0);
	flaky_store_close(s);
}
END_TEST

/* The verdict alone reads the runs alone through their index and their
 * results by the primary key: never a scan of the results. */
START_TEST(alone_plan)
{
	static const char sql[] =
	    "EXPLAIN QUERY PLAN "
	    "SELECT r.test_id, t.name, tg.name, "
	    "sum(r.outcome IN (0, 1, 2, 5)), sum(r.outcome IN (1, 2)), "
	    "max(ru.started_ms) FROM runs ru "
	    "CROSS JOIN results r ON r.run_id = ru.id "
	    "CROSS JOIN tests t ON t.id = r.test_id "
	    "CROSS JOIN targets tg ON tg.id = t.target_id "
	    "WHERE ru.kind = 'alone' AND ru.incomplete IS NULL "
	    "AND ru.started_ms >= ?1 AND ru.started_ms < ?2 "
	    "AND +ru.id BETWEEN ?3 AND ?4 AND (?5 IS NULL OR tg.name = ?5) "
	    "GROUP BY r.test_id ORDER BY r.test_id";
	struct flaky_store *s = open_store();
	sqlite3		*db;
	char		*plan;
	int64_t		 tid = target(s, "p");

	for (int i = 0; i < 30; i++)
		run(s, tid, i % 10 ? FLAKY_KIND_SUITE : FLAKY_KIND_ALONE,
		    T0 + i * 1000, i % 3 == 0, NULL);
	flaky_store_close(s);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	for (int pass = 0; pass < 2; pass++) {
		plan = tu_rows(db, sql);
		ck_assert_msg(strstr(plan, "runs_alone") != NULL, "%s", plan);
		ck_assert_msg(strstr(plan, "SCAN r\n") == NULL &&
		    strstr(plan, "SCAN r ") == NULL, "%s", plan);
		free(plan);
		ck_assert_int_eq(sqlite3_exec(db, "ANALYZE", NULL, NULL, NULL),
		    SQLITE_OK);
	}
	sqlite3_close(db);
}
END_TEST

/* Every query the store makes over raw results for other kinds or a run-id
 * window (copied from lib/store_query.c, stats_raw) reads the results by
 * their primary key: a run-id window as one range, a window by time run
 * by run after the runs. Never a scan of every result. */
START_TEST(raw_plan)
{
	static const char *const kinds[] = {
		"ru.kind = 'alone' AND ru.incomplete IS NULL",
		"ru.kind = 'suite' AND ru.incomplete IS NULL",
		"ru.incomplete IS NULL",
	};
	struct flaky_store *s = open_store();
	sqlite3		*db;
	char		 sql[1024], *plan;
	int64_t		 tid = target(s, "p");

	for (int i = 0; i < 30; i++)
		run(s, tid, i % 10 ? FLAKY_KIND_SUITE : FLAKY_KIND_ALONE,
		    T0 + i * 1000, i % 3 == 0, i == 7 ? "cut short" : NULL);
	flaky_store_close(s);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0; k < 3; k++) {
			for (int byid = 0; byid < 2; byid++) {
				snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN "
				    "SELECT r.test_id, t.name, tg.name, "
				    "r.outcome, r.duration_us, ru.started_ms "
				    "FROM %s ON r.run_id = ru.id "
				    "CROSS JOIN tests t ON t.id = r.test_id "
				    "CROSS JOIN targets tg "
				    "ON tg.id = t.target_id "
				    "WHERE %s BETWEEN ?1 AND ?2 AND "
				    "ru.started_ms >= ?4 AND ru.started_ms < ?5 "
				    "AND (?3 IS NULL OR tg.name = ?3) AND %s "
				    "ORDER BY r.test_id", byid ?
				    "results r CROSS JOIN runs ru NOT INDEXED" :
				    "runs ru CROSS JOIN results r", byid ?
				    "r.run_id" : "+ru.id", kinds[k]);
				plan = tu_rows(db, sql);
				/* a run-id window: one range of results,
				 * first; else results by run */
				ck_assert_msg(byid ? strstr(plan, "SEARCH r "
				    "USING PRIMARY KEY (run_id>? AND run_id<?)")
				    == strchr(plan, '|') + 5 : strstr(plan,
				    "SEARCH r USING PRIMARY KEY (run_id=?)") !=
				    NULL, "%s", plan);
				free(plan);
			}
		}
		ck_assert_int_eq(sqlite3_exec(db, "ANALYZE", NULL, NULL, NULL),
		    SQLITE_OK);
	}
	sqlite3_close(db);
}
END_TEST

extern const char *const flaky_schema_migrations[];

/* A version 4 database (built by the old migrations; also versions 2 and
 * 3, which migrate through 0004's in-place edit first) with suite, confirm
 * and ingested runs and their rollups: migrating keeps every id and row,
 * sets the kinds, takes the confirm runs out of the rollups, keeps the
 * indexes and views, and passes the integrity and foreign key checks. */
START_TEST(migrate_from_old)
{
	struct flaky_store *s;
	sqlite3		*db;
	char		 sql[64];
	int		 from = _i;

	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	for (int i = 0; i < from; i++)
		ck_assert_int_eq(sqlite3_exec(db, flaky_schema_migrations[i],
		    NULL, NULL, NULL), SQLITE_OK);
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", from);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_msg(sqlite3_exec(db,
	    "INSERT INTO targets (id, name, created_ms) VALUES (1, 'demo', 0);"
	    "INSERT INTO tests (id, target_id, name) VALUES (1, 1, 'a'), "
	    "  (2, 1, 'b');"
	    "INSERT INTO runs (id, target_id, status, trigger, started_ms, "
	    "  tests, failures, stdout) VALUES "
	    "  (5, 1, 'done', 'schedule', 1793534400000, 2, 1, x'6f6b'), "
	    "  (7, 1, 'done', 'confirm', 1793534401000, 1, 0, NULL), "
	    "  (8, 1, 'done', 'confirm', 1793534402000, 1, 1, NULL), "
	    "  (9, 1, 'done', 'ingest', 1793534403000, 2, 0, NULL), "
	    "  (11, 1, 'running', 'analyze', 1793534404000, NULL, NULL, NULL);"
	    "INSERT INTO messages (id, fingerprint, normalized) "
	    "  VALUES (1, 42, 'boom');"
	    "INSERT INTO results (run_id, position, test_id, outcome, "
	    "  duration_us, message_id) VALUES "
	    "  (5, 0, 1, 1, 100, 1), (5, 1, 2, 0, 200, NULL), "
	    "  (7, 0, 1, 0, 150, NULL), (8, 0, 1, 2, 160, 1), "
	    "  (9, 0, 1, 0, 110, NULL), (9, 1, 2, 3, NULL, NULL);"
	    "INSERT INTO attempts (run_id, position, attempt, outcome) "
	    "  VALUES (9, 0, 0, 1), (9, 0, 1, 0);"
	    /* what the old store wrote: every run in the rollups */
	    "INSERT INTO rollups (test_id, day, runs, failures, skips, "
	    "  pass_us, fail_us) VALUES (1, 20758, 4, 2, 0, 260, 260), "
	    "  (2, 20758, 1, 0, 1, 200, 0);",
	    NULL, NULL, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(db));
	sqlite3_close(db);

	s = open_store();
	flaky_store_close(s);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	{
		char	 want[32];

		/* the newest the build knows, whatever migrations follow */
		snprintf(want, sizeof want, "%d\n",
		    flaky_store_schema_version());
		tu_rows_eq(db, "PRAGMA user_version", want);
	}
	tu_rows_eq(db, "PRAGMA integrity_check", "ok\n");
	tu_rows_eq(db, "PRAGMA foreign_key_check", "");
	/* the owner-less running row is gone: the open marked it */
	/* output moved by 0006: "ok" is kept as it is (deflate is longer) */
	tu_rows_eq(db, "SELECT r.id, status, trigger, kind, incomplete, "
	    "hex(o.data) FROM runs r LEFT JOIN outputs o ON o.id = "
	    "r.stdout_id ORDER BY r.id",
	    "5|done|schedule|suite|NULL|6F6B\n"
	    "7|done|confirm|alone|NULL|\n"
	    "8|done|confirm|alone|NULL|\n"
	    "9|done|ingest|ingested|NULL|\n"
	    "11|interrupted|analyze|suite|NULL|\n");
	tu_rows_eq(db, "SELECT count(*) FROM results", "6\n");
	tu_rows_eq(db, "SELECT count(*) FROM attempts", "2\n");
	tu_rows_eq(db, "SELECT count(*) FROM polluters", "0\n");
	tu_rows_eq(db, "SELECT test_id, runs, failures, skips, pass_us, fail_us "
	    "FROM rollups ORDER BY test_id",
	    "1|2|1|0|110|100\n2|1|0|1|200|0\n");
	tu_rows_eq(db, "SELECT test, runs, failures FROM test_stats ORDER BY "
	    "test", "a|2|1\nb|1|0\n");
	tu_rows_eq(db, "SELECT test, runs_alone, failures_alone FROM "
	    "alone_stats", "a|2|1\n");
	tu_rows_eq(db, "SELECT run_id, kind FROM run_list ORDER BY run_id "
	    "LIMIT 2", "5|suite\n7|alone\n");
	tu_rows_eq(db, "SELECT name FROM sqlite_schema WHERE type = 'index' AND "
	    "tbl_name = 'runs' ORDER BY name",
	    "runs_alone\nruns_by_revision\nruns_by_target\nruns_by_time\n"
	    "runs_running\nsqlite_autoindex_runs_1\n");
	tu_rows_eq(db, "SELECT name FROM sqlite_schema WHERE type = 'view' "
	    "ORDER BY name", "alone_stats\nci_runs\ndaily_budget\ndaily_trend\n"
	    "failure_messages\nflaky_tests\nflips\nhangs\nheadroom_runs\n"
	    "quarantined_tests\nrun_list\nrun_output\nstack_text\n"
	    "static_risks\ntest_actions\ntest_results\ntest_stats\n");
	/* the new status and the chains of comparisons (0004), no IN lists */
	tu_rows_eq(db, "SELECT count(*) FROM sqlite_schema WHERE sql LIKE "
	    "'%status IN%' OR sql LIKE '%kind IN%'", "0\n");
	ck_assert_int_eq(sqlite3_exec(db, "UPDATE runs SET status = 'stopped' "
	    "WHERE id = 8", NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "UPDATE runs SET status = 'Done' "
	    "WHERE id = 8", NULL, NULL, NULL), SQLITE_CONSTRAINT);
	/* the foreign keys still hold: a result of no run is refused */
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA foreign_keys = ON; "
	    "INSERT INTO results (run_id, position, test_id, outcome) VALUES "
	    "(99, 0, 1, 0)", NULL, NULL, NULL), SQLITE_CONSTRAINT);
	/* and deleting a run still deletes its results */
	ck_assert_int_eq(sqlite3_exec(db, "DELETE FROM runs WHERE id = 7",
	    NULL, NULL, NULL), SQLITE_OK);
	tu_rows_eq(db, "SELECT count(*) FROM results", "5\n");
	sqlite3_close(db);
}
END_TEST

/* flakyctl polluter's row: stored, read back, replaced by a newer search;
 * a test without one reads as none. Old databases get the table
 * (migrate_from_old). */
START_TEST(polluter_row)
{
	struct flaky_store *s = open_store();
	struct flaky_polluter_row w = { 0 }, r;
	int64_t	 tid = target(s, "t"), run_id;
	char	 err[512];

	run_id = run(s, tid, FLAKY_KIND_SUITE, 1000, 1, NULL);
	w.test_id = 1;
	w.from_run_id = run_id;
	w.candidates = 39;
	w.members = (char *)"a.py::test_x\nb.py::test_y";
	w.reruns = 19;
	w.minimal = 1;
	w.command = (char *)"pytest -p no:randomly a.py::test_x b.py::test_y c";
	w.made_ms = 5;
	ck_assert_msg(flaky_store_polluter_put(s, &w, err, sizeof err) == 0,
	    "%s", err);
	ck_assert_int_eq(flaky_store_polluter_get(s, 1, &r, err, sizeof err),
	    1);
	ck_assert_str_eq(r.members, w.members);
	ck_assert_str_eq(r.command, w.command);
	ck_assert_int_eq(r.reruns, 19);
	ck_assert_int_eq(r.candidates, 39);
	ck_assert_int_eq(r.from_run_id, run_id);
	ck_assert_int_eq(r.minimal, 1);
	flaky_polluter_row_clear(&r);
	w.members = (char *)"a.py::test_x";
	w.minimal = 0;
	ck_assert_int_eq(flaky_store_polluter_put(s, &w, err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_polluter_get(s, 1, &r, err, sizeof err),
	    1);
	ck_assert_str_eq(r.members, "a.py::test_x");
	ck_assert_int_eq(r.minimal, 0);
	flaky_polluter_row_clear(&r);
	ck_assert_int_eq(flaky_store_polluter_get(s, 2, &r, err, sizeof err),
	    0);
	ck_assert_ptr_null(r.members);
	/* a row of no test is refused */
	w.test_id = 99;
	ck_assert_int_lt(flaky_store_polluter_put(s, &w, err, sizeof err), 0);
	flaky_store_close(s);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("store_kinds");
	TCase	*tc = tcase_create("store_kinds");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, alone_and_incomplete_out_of_rollups);
	tcase_add_test(tc, ingested_and_stopped);
	tcase_add_test(tc, selected_counts_for_its_tests);
	tcase_add_test(tc, last_run_not_alone);
	tcase_add_test(tc, alone_plan);
	tcase_add_loop_test(tc, migrate_from_old, 2, 5);
	tcase_add_test(tc, raw_plan);
	tcase_add_test(tc, polluter_row);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
