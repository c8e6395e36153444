/* store: a run's writes in one transaction, deduplicated messages,
 * rollups and histograms, busy writers and readers, redaction, names that
 * must round-trip, the documented views and the rollup query's plan.
 * Opening and migrating are in test_store_open.c. Checked through a second
 * SQLite connection, as a user's ad-hoc SQL would see it. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/store_int.h"
#include "util/util.h"
#include "test_db.h"
#include "test_helper.h"
#include "test_store_fixture.h"

static int
cmp_rows(const void *a, const void *b)
{
	return strcmp(((const struct flaky_test_row *)a)->test,
	    ((const struct flaky_test_row *)b)->test);
}

/* The results of the "basic" run: a pass, two failures that differ only
 * by numbers and addresses, a skip. */
static void
basic_results(struct flaky_results *r)
{
	flaky_results_init(r);
	strcpy(r->runner, "pytest");
	r->summary_total = 4;
	add(r, "t.py::test_ok", FLAKY_PASS, 1000, NULL);
	add(r, "t.py::test_a", FLAKY_FAIL, 2000,
	    "AssertionError: <Obj at 0x7f00aa10> != 17");
	add(r, "t.py::test_b", FLAKY_ERROR, 3000,
	    "AssertionError: <Obj at 0x55bb0c20> != 42");
	add(r, "t.py::test_skip", FLAKY_SKIP, -1, NULL);
}

START_TEST(run_roundtrip)
{
	struct flaky_store *s = open_store();
	struct flaky_results r;
	sqlite3		*db;
	int64_t		 tid = target(s, "demo"), id;

	basic_results(&r);
	id = store_run(s, tid, T0, &r);
	db = raw_open();
	tu_rows_eq(db, "SELECT id, target_id, status, trigger, started_ms, "
	    "ended_ms, exit_code, signal, runner, tests, failures, "
	    "summary_total, stdout FROM runs JOIN run_output ON run_id = id",
	    "1|1|done|analyze|1793534400000|1793534401500|1|NULL|pytest|4|2|"
	    "4|collected 4 items\n\n");
	ck_assert_int_eq(id, 1);
	tu_rows_eq(db, "SELECT r.position, t.name, r.outcome, r.duration_us, "
	    "r.signature, r.message_id FROM results r JOIN tests t ON "
	    "t.id = r.test_id ORDER BY r.run_id, r.position",
	    "0|t.py::test_ok|0|1000|NULL|NULL\n"
	    "1|t.py::test_a|1|2000|UNKNOWN|1\n"
	    "2|t.py::test_b|2|3000|UNKNOWN|1\n"
	    "3|t.py::test_skip|3|NULL|NULL|NULL\n");
	tu_rows_eq(db, "SELECT id, normalized FROM messages",
	    "1|AssertionError: <Obj at 0x?> != N\n");
	tu_rows_eq(db, "SELECT t.name, day, runs, failures, skips, pass_us, "
	    "fail_us FROM rollups JOIN tests t ON t.id = test_id "
	    "ORDER BY t.name",
	    "t.py::test_a|20758|1|1|0|0|2000\n"
	    "t.py::test_b|20758|1|1|0|0|3000\n"
	    "t.py::test_ok|20758|1|0|0|1000|0\n"
	    "t.py::test_skip|20758|0|0|1|0|0\n");
	/* a second run the next day: the same message row, new rollups */
	store_run(s, tid, T0 + 86400000LL, &r);
	tu_rows_eq(db, "SELECT count(*) FROM messages", "1\n");
	tu_rows_eq(db, "SELECT day, sum(runs), sum(failures), sum(skips) "
	    "FROM rollups GROUP BY day",
	    "20758|3|2|1\n20759|3|2|1\n");
	/* and the same day again: accumulated */
	store_run(s, tid, T0 + 60000, &r);
	tu_rows_eq(db, "SELECT runs, failures, fail_us FROM rollups "
	    "JOIN tests t ON t.id = test_id WHERE t.name = 't.py::test_b' "
	    "ORDER BY day", "2|2|6000\n1|1|3000\n");
	sqlite3_close(db);
	flaky_results_free(&r);
	flaky_store_close(s);
}
END_TEST

/* Medians from the rollup histograms lie within one bucket of the true
 * ones; the raw path gives the true ones. */
START_TEST(histograms)
{
	struct flaky_store *s = open_store();
	struct flaky_results r;
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0 };
	struct flaky_test_row *v;
	size_t		 n;
	char		 err[512];
	int64_t		 tid = target(s, "h");
	/* ms: pass 3 7 12 40 41 45 300 900 2500 (median 41); fail 5 6 */
	static const int pass_ms[] = { 300, 3, 41, 2500, 7, 45, 12, 900, 40 };
	static const int fail_ms[] = { 6, 5 };
	const double	 bucket = exp2(0.25);

	for (size_t i = 0; i < 11; i++) {
		flaky_results_init(&r);
		if (i < 9)
			add(&r, "x", FLAKY_PASS, pass_ms[i] * 1000LL, NULL);
		else
			add(&r, "x", FLAKY_FAIL, fail_ms[i - 9] * 1000LL,
			    "boom");
		store_run(s, tid, T0 + (int64_t)i * 3600000, &r);
		flaky_results_free(&r);
	}
	ck_assert_int_eq(flaky_store_test_stats(s, &q, &v, &n, err,
	    sizeof err), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(v[0].runs, 11);
	ck_assert_int_eq(v[0].failures, 2);
	ck_assert_msg(v[0].median_ms_pass / 41 < bucket &&
	    41 / v[0].median_ms_pass < bucket, "%g", v[0].median_ms_pass);
	ck_assert_msg(v[0].median_ms_fail / 5 < bucket &&
	    5 / v[0].median_ms_fail < bucket, "%g", v[0].median_ms_fail);
	ck_assert_str_eq(v[0].top_message, "boom");
	ck_assert_int_eq(v[0].top_message_count, 2);
	flaky_test_rows_free(v, n);
	q.first_run_id = 1;
	q.last_run_id = 11;
	ck_assert_int_eq(flaky_store_test_stats(s, &q, &v, &n, err,
	    sizeof err), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert(v[0].median_ms_pass == 41.0);
	ck_assert(v[0].median_ms_fail == 5.0);
	ck_assert(v[0].p90_ms_pass == 2500.0);
	ck_assert_int_eq(v[0].pass_n, 9);
	flaky_test_rows_free(v, n);
	flaky_store_close(s);
}
END_TEST

/* From the rollups, pass_n and fail_n ("with a known duration", store.h)
 * come from the histograms' counts, and agree with the raw path's. */
START_TEST(rollup_duration_counts)
{
	struct flaky_store *s = open_store();
	struct flaky_results r;
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0 };
	struct flaky_test_row *v;
	size_t		 n;
	char		 err[512];
	int64_t		 tid = target(s, "h"), pn, fn;

	basic_results(&r);
	store_run(s, tid, T0, &r);
	store_run(s, tid, T0 + 1, &r);
	flaky_results_free(&r);
	ck_assert_int_eq(flaky_store_test_stats(s, &q, &v, &n, err,
	    sizeof err), 0);
	ck_assert_uint_eq(n, 4);
	qsort(v, n, sizeof *v, cmp_rows);
	/* sorted: test_a, test_b (2 failures each, with durations),
	 * test_ok (2 passes), test_skip */
	pn = v[1].pass_n + v[2].pass_n;
	fn = v[0].fail_n + v[1].fail_n;
	flaky_test_rows_free(v, n);
	/* the raw path agrees with that */
	q.first_run_id = 1;
	ck_assert_int_eq(flaky_store_test_stats(s, &q, &v, &n, err,
	    sizeof err), 0);
	qsort(v, n, sizeof *v, cmp_rows);
	ck_assert_int_eq(v[1].pass_n + v[2].pass_n, 2);
	ck_assert_int_eq(v[0].fail_n + v[1].fail_n, 4);
	flaky_test_rows_free(v, n);
	flaky_store_close(s);
	ck_assert_int_eq(pn, 2);
	ck_assert_int_eq(fn, 4);
}
END_TEST

/* A failure in the middle of run_finish leaves nothing half-written. */
START_TEST(atomic)
{
	struct flaky_store *s = open_store();
	struct flaky_results r, bad;
	struct flaky_run_record rec = { 0 };
	sqlite3		*db;
	int64_t		 tid = target(s, "demo");
	char		 err[512], *roll, *roll2;

	basic_results(&r);
	store_run(s, tid, T0, &r);
	db = raw_open();
	roll = tu_rows(db, "SELECT * FROM rollups ORDER BY test_id, day");
	/* a new test, a new message, then a result the schema refuses */
	flaky_results_init(&bad);
	add(&bad, "t.py::test_ok", FLAKY_PASS, 10, NULL);
	add(&bad, "t.py::test_new", FLAKY_FAIL, 10, "brand new failure");
	add(&bad, "t.py::test_a", 9, 10, NULL);
	rec.target_id = tid;
	rec.started_ms = T0 + 1000;
	rec.loadavg = -1;
	ck_assert_int_eq(flaky_store_run_start(s, &rec, err, sizeof err), 0);
	rec.status = FLAKY_RUN_DONE;
	ck_assert_int_lt(flaky_store_run_finish(s, &rec, &bad, err,
	    sizeof err), 0);
	ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "%s", err);
	tu_rows_eq(db, "SELECT count(*) FROM results WHERE run_id = 2", "0\n");
	tu_rows_eq(db, "SELECT status, tests FROM runs WHERE id = 2",
	    "running|NULL\n");
	tu_rows_eq(db, "SELECT count(*) FROM tests WHERE name = "
	    "'t.py::test_new'", "0\n");
	tu_rows_eq(db, "SELECT count(*) FROM messages", "1\n");
	roll2 = tu_rows(db, "SELECT * FROM rollups ORDER BY test_id, day");
	ck_assert_str_eq(roll, roll2);
	free(roll2);
	/* the store still works, and forgot the ids of the rolled back
	 * transaction */
	bad.v[2].outcome = FLAKY_PASS;
	ck_assert_msg(flaky_store_run_finish(s, &rec, &bad, err,
	    sizeof err) == 0, "%s", err);
	tu_rows_eq(db, "SELECT count(*) FROM results WHERE run_id = 2", "3\n");
	tu_rows_eq(db, "SELECT count(*) FROM messages", "2\n");
	tu_rows_eq(db, "SELECT count(*) FROM results r LEFT JOIN tests t ON "
	    "t.id = r.test_id WHERE t.id IS NULL", "0\n");
	free(roll);
	sqlite3_close(db);
	flaky_results_free(&bad);
	flaky_results_free(&r);
	flaky_store_close(s);
}
END_TEST

/* A result whose test id is NULL fails the run's transaction with an
 * error (it once crashed: test_id() called strlen(NULL)). Run in a child
 * so a crash is reported, not fatal to the suite. */
START_TEST(null_test_id)
{
	struct flaky_store *s = open_store();
	struct flaky_results r;
	sqlite3		*db;
	int64_t		 tid = target(s, "demo");
	int		 status;
	pid_t		 pid;

	basic_results(&r);
	store_run(s, tid, T0, &r);
	flaky_store_close(s);
	flaky_results_free(&r);
	if ((pid = fork()) == 0) {
		struct flaky_run_record rec = { 0 };
		char	 err[512];

		s = open_store();
		flaky_results_init(&r);
		add(&r, "t.py::test_ok", FLAKY_PASS, 10, NULL);
		add(&r, NULL, FLAKY_FAIL, 10, "x");
		rec.target_id = tid;
		rec.started_ms = T0;
		rec.loadavg = -1;
		rec.status = FLAKY_RUN_DONE;
		status = flaky_store_run_finish(s, &rec, &r, err, sizeof err);
		flaky_store_close(s);
		flaky_results_free(&r);
		_exit(status < 0 ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	db = raw_open();
	tu_rows_eq(db, "SELECT count(*), sum(runs) FROM rollups", "4|3\n");
	tu_rows_eq(db, "SELECT count(*) FROM runs", "1\n");
	sqlite3_close(db);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "run_finish with a NULL test id: %s %d", WIFSIGNALED(status) ?
	    "killed by signal" : "exit", WIFSIGNALED(status) ?
	    WTERMSIG(status) : WEXITSTATUS(status));
}
END_TEST

START_TEST(locked_db)
{
	struct flaky_store *s = open_store();
	struct flaky_results r;
	struct flaky_run_record rec = { 0 };
	sqlite3		*db = raw_open();
	int64_t		 tid = target(s, "demo");
	char		 err[512];

	basic_results(&r);
	/* another connection holds the write lock: busy after the bound,
	 * nothing written */
	ck_assert_int_eq(flaky_store_set_busy_timeout(s, 100), 0);
	ck_assert_int_eq(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL,
	    NULL), SQLITE_OK);
	rec.target_id = tid;
	rec.started_ms = T0;
	rec.loadavg = -1;
	rec.status = FLAKY_RUN_DONE;
	ck_assert_int_eq(flaky_store_run_finish(s, &rec, &r, err, sizeof err),
	    -EBUSY);
	ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "%s", err);
	ck_assert_msg(strstr(err, "busy") != NULL, "%s", err);
	ck_assert_int_eq(rec.id, 0);
	ck_assert_int_eq(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL),
	    SQLITE_OK);
	tu_rows_eq(db, "SELECT (SELECT count(*) FROM runs), (SELECT count(*) "
	    "FROM results), (SELECT count(*) FROM rollups)", "0|0|0\n");
	rec.id = 0;
	ck_assert_msg(flaky_store_run_finish(s, &rec, &r, err, sizeof err) ==
	    0, "%s", err);
	tu_rows_eq(db, "SELECT (SELECT count(*) FROM runs), (SELECT count(*) "
	    "FROM results), (SELECT count(*) FROM rollups)", "1|4|4\n");
	sqlite3_close(db);
	flaky_results_free(&r);
	flaky_store_close(s);
}
END_TEST

START_TEST(interrupted)
{
	struct flaky_store *s = open_store();
	struct flaky_run_record a = { 0 }, b = { 0 }, c = { 0 };
	sqlite3		*db = raw_open();
	int64_t		 t1 = target(s, "one"), t2 = target(s, "two");
	char		 err[512];

	a.target_id = b.target_id = t1;
	c.target_id = t2;
	a.started_ms = b.started_ms = c.started_ms = T0;
	a.loadavg = b.loadavg = c.loadavg = -1;
	ck_assert_int_eq(flaky_store_run_start(s, &a, err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_run_start(s, &b, err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_run_start(s, &c, err, sizeof err), 0);
	b.status = FLAKY_RUN_DONE;
	ck_assert_int_eq(flaky_store_run_finish(s, &b, NULL, err, sizeof err),
	    0);
	tu_rows_eq(db, "SELECT id, status FROM runs ORDER BY id",
	    "1|running\n2|done\n3|running\n");
	ck_assert_int_eq(flaky_store_mark_interrupted(s, t1, err, sizeof err),
	    1);
	tu_rows_eq(db, "SELECT id, status, error FROM runs ORDER BY id",
	    "1|interrupted|interrupted: the run did not finish\n2|done|NULL\n"
	    "3|running|NULL\n");
	ck_assert_int_eq(flaky_store_mark_interrupted(s, 0, err, sizeof err),
	    1);
	ck_assert_int_eq(flaky_store_mark_interrupted(s, 0, err, sizeof err),
	    0);
	sqlite3_close(db);
	flaky_store_close(s);
}
END_TEST

/* One writer process of many_writers: runs of its own (run_start, then
 * run_finish with 20 results), each call retried on -EBUSY until a
 * deadline. A short bound makes busy answers common. */
static int
writer(int who, int nruns)
{
	struct flaky_store *s;
	struct flaky_results r;
	char		 err[512], rev[32], name[32];
	int64_t		 tid, deadline = flaky_mono_us() + 60 * 1000000LL;
	int		 e, busy = 0;

	if (flaky_store_open(path, 0, &s, err, sizeof err) < 0)
		return 1;
	flaky_store_set_busy_timeout(s, 20);
	while ((e = flaky_store_target(s, "shared", NULL, NULL, &tid, err,
	    sizeof err)) == -EBUSY && flaky_mono_us() < deadline)
		busy++;
	if (e < 0)
		return 2;
	for (int i = 0; i < nruns; i++) {
		struct flaky_run_record rec = { 0 };

		flaky_results_init(&r);
		for (int k = 0; k < 20; k++) {
			snprintf(name, sizeof name, "t%d", k);
			add(&r, name, k == who ? FLAKY_FAIL : FLAKY_PASS, 1000,
			    k == who ? "boom" : NULL);
		}
		snprintf(rev, sizeof rev, "w%d-r%d", who, i);
		rec.target_id = tid;
		rec.started_ms = T0 + i;
		rec.loadavg = -1;
		rec.revision = rev;
		while ((e = flaky_store_run_start(s, &rec, err,
		    sizeof err)) == -EBUSY && flaky_mono_us() < deadline) {
			if (strstr(err, "busy") == NULL || rec.id != 0)
				return 3;
			busy++;
		}
		if (e < 0)
			return 4;
		rec.status = FLAKY_RUN_DONE;
		rec.ended_ms = rec.started_ms + 1;
		while ((e = flaky_store_run_finish(s, &rec, &r, err,
		    sizeof err)) == -EBUSY && flaky_mono_us() < deadline)
			busy++;
		if (e < 0)
			return 5;
		flaky_results_free(&r);
	}
	flaky_store_close(s);
	return 0;
}

/* N processes write runs into one database at once: every run is there
 * exactly once, with all its results, nothing is left running, and the
 * file is sound. */
START_TEST(many_writers)
{
	enum { N = 6, RUNS = 15 };
	struct flaky_store *s = open_store();
	pid_t		 pids[N];
	sqlite3		*db;
	int		 status;

	target(s, "shared");
	flaky_store_close(s);
	for (int i = 0; i < N; i++) {
		if ((pids[i] = fork()) == 0)
			_exit(writer(i, RUNS));
		ck_assert_int_gt(pids[i], 0);
	}
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "writer %d: %d", i, WEXITSTATUS(status));
	}
	db = raw_open();
	tu_rows_eq(db, "SELECT count(*), count(DISTINCT revision), "
	    "sum(status = 'done'), sum(tests) FROM runs", "90|90|90|1800\n");
	tu_rows_eq(db, "SELECT count(*) FROM results", "1800\n");
	tu_rows_eq(db, "SELECT sum(runs), sum(failures) FROM rollups", "1800|90\n");
	tu_rows_eq(db, "PRAGMA integrity_check", "ok\n");
	tu_rows_eq(db, "PRAGMA foreign_key_check", "");
	sqlite3_close(db);
}
END_TEST

/* A reader that holds a read transaction open (a report, ad-hoc SQL) does
 * not make writers wait or fail: WAL, and no write starts as a read. */
START_TEST(reader_does_not_block)
{
	struct flaky_store *s = open_store();
	struct flaky_results r;
	sqlite3		*db = raw_open();
	char		 err[512];
	int64_t		 tid = target(s, "demo");

	ck_assert_int_eq(sqlite3_exec(db, "BEGIN; SELECT count(*) FROM runs",
	    NULL, NULL, NULL), SQLITE_OK);
	tu_rows_eq(db, "SELECT count(*) FROM runs", "0\n");
	/* no waiting at all: a writer that had to wait would fail */
	ck_assert_int_eq(flaky_store_set_busy_timeout(s, 0), 0);
	for (int i = 0; i < 3; i++) {
		basic_results(&r);
		store_run(s, tid, T0 + i, &r);
		flaky_results_free(&r);
	}
	ck_assert_msg(flaky_store_target(s, "other", NULL, NULL, &tid, err,
	    sizeof err) == 0, "%s", err);
	/* the reader still sees its snapshot, then the new rows */
	tu_rows_eq(db, "SELECT count(*) FROM runs", "0\n");
	ck_assert_int_eq(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL),
	    SQLITE_OK);
	tu_rows_eq(db, "SELECT count(*) FROM runs", "3\n");
	sqlite3_close(db);
	flaky_store_close(s);
}
END_TEST

/* Rollups (days) and raw results (run ids) agree on the counts. */
START_TEST(stats_agree)
{
	struct flaky_store *s = open_store();
	struct flaky_query qd = { INT64_MIN, INT64_MAX, NULL, 0, 0 };
	struct flaky_query qr = { INT64_MIN, INT64_MAX, NULL, 1, 0 };
	struct flaky_test_row *a, *b;
	struct flaky_results r;
	size_t		 na, nb;
	char		 err[512], name[32];
	int64_t		 t1 = target(s, "one"), t2 = target(s, "two");
	int64_t		 last = 0;

	for (int run = 0; run < 30; run++) {
		flaky_results_init(&r);
		for (int t = 0; t < 6; t++) {
			int	 o = (run * 7 + t * 3) % 11 < t ?
			    FLAKY_FAIL : (run + t) % 9 == 0 ? FLAKY_SKIP :
			    FLAKY_PASS;

			snprintf(name, sizeof name, "test_%d", t);
			add(&r, name, o, 1000 * (run + 1), o == FLAKY_FAIL ?
			    (run % 2 ? "fail 1" : "other failure") : NULL);
		}
		last = store_run(s, run % 3 ? t1 : t2,
		    T0 + (int64_t)run * 7200000, &r);
		flaky_results_free(&r);
	}
	qr.last_run_id = last;
	ck_assert_int_eq(flaky_store_test_stats(s, &qd, &a, &na, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_test_stats(s, &qr, &b, &nb, err,
	    sizeof err), 0);
	ck_assert_uint_eq(na, 12);
	ck_assert_uint_eq(nb, 12);
	for (size_t i = 0; i < na; i++) {
		ck_assert_str_eq(a[i].test, b[i].test);
		ck_assert_str_eq(a[i].target, b[i].target);
		ck_assert_int_eq(a[i].runs, b[i].runs);
		ck_assert_int_eq(a[i].failures, b[i].failures);
		ck_assert_int_eq(a[i].skips, b[i].skips);
		ck_assert_int_eq(a[i].top_message_count,
		    b[i].top_message_count);
		if (a[i].top_message != NULL || b[i].top_message != NULL)
			ck_assert_str_eq(a[i].top_message, b[i].top_message);
	}
	/* the counts themselves, from the same data by SQL */
	{
		sqlite3	*db = raw_open();
		char	 sql[256];

		for (size_t i = 0; i < na; i++) {
			snprintf(sql, sizeof sql, "SELECT count(*) FROM "
			    "results WHERE test_id = %lld AND outcome IN "
			    "(0, 1, 2, 5)", (long long)a[i].test_id);
			ck_assert_int_eq(tu_q1(db, sql), a[i].runs);
			snprintf(sql, sizeof sql, "SELECT count(*) FROM "
			    "results WHERE test_id = %lld AND outcome IN "
			    "(1, 2)", (long long)a[i].test_id);
			ck_assert_int_eq(tu_q1(db, sql), a[i].failures);
		}
		sqlite3_close(db);
	}
	flaky_test_rows_free(a, na);
	flaky_test_rows_free(b, nb);
	/* a target and a window of days */
	qd.target = "two";
	qd.since_ms = T0 + 86400000LL;
	qd.until_ms = T0 + 2 * 86400000LL;
	ck_assert_int_eq(flaky_store_test_stats(s, &qd, &a, &na, err,
	    sizeof err), 0);
	ck_assert_uint_eq(na, 6);
	qsort(a, na, sizeof *a, cmp_rows);
	ck_assert_str_eq(a[0].target, "two");
	/* the window is rounded out to whole days, 20759 and 20760: runs
	 * 6 to 29 (every 2 h from 12:00 on day 20758), of which "two" has
	 * 6, 9, ..., 27 */
	ck_assert_int_eq(a[0].runs + a[0].skips, 8);
	flaky_test_rows_free(a, na);
	flaky_store_close(s);
}
END_TEST

START_TEST(redaction)
{
	struct flaky_store *s = open_store();
	struct flaky_results r;
	struct flaky_run_record rec = { 0 };
	sqlite3		*db = raw_open();
	char		 err[512];
	static const char out[] = "env password=hunter2 ok\n";

	ck_assert_int_eq(flaky_store_add_redaction(s, "internal-[0-9]+", err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_add_redaction(s, "(", err, sizeof err),
	    -EINVAL);
	flaky_results_init(&r);
	add(&r, "t", FLAKY_FAIL, 5, "login token=abc123 to internal-42 "
	    "failed");
	rec.target_id = target(s, "demo");
	rec.started_ms = T0;
	rec.loadavg = -1;
	rec.status = FLAKY_RUN_DONE;
	rec.out = out;
	rec.out_len = sizeof out - 1;
	rec.err = "Authorization: Bearer abc.def\n";
	rec.err_len = strlen(rec.err);
	rec.error = "started with api_key=zzz";
	ck_assert_int_eq(flaky_store_run_finish(s, &rec, &r, err, sizeof err),
	    0);
	tu_rows_eq(db, "SELECT stdout, stderr, error FROM runs JOIN run_output "
	    "ON run_id = id",
	    "env password=[REDACTED] ok\n|Authorization: Bearer [REDACTED]\n|"
	    "started with api_key=[REDACTED]\n");
	tu_rows_eq(db, "SELECT message FROM results",
	    "login token=[REDACTED] to [REDACTED] failed\n");
	tu_rows_eq(db, "SELECT normalized FROM messages",
	    "login token=[REDACTED] to [REDACTED] failed\n");
	/* the caller's text is untouched */
	ck_assert_str_eq(out, "env password=hunter2 ok\n");
	sqlite3_close(db);
	flaky_results_free(&r);
	flaky_store_close(s);
}
END_TEST

START_TEST(names)
{
	struct flaky_store *s = open_store();
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0 };
	struct flaky_test_row *v;
	struct flaky_results r;
	size_t		 n, found = 0;
	char		 err[512], *longid;
	const char	*ids[] = {
		"t.py::test_x[with space]", "t.py::test_x[quote'single]",
		"t.py::test_x[quote\"double]", "t.py::test_x[back\\slash]",
		"t.py::test_x[caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac]",
		"t.py::test_x[tab\there]",
		"suite \xe2\x80\xba a \xe2\x80\xba b",
		"t.py::test_x[%s%n]", "t.py::test_x[', NULL); --]", NULL,
	};
	int64_t		 tid = target(s, "names");

	ck_assert_ptr_nonnull(longid = malloc(10240 + 1));
	memcpy(longid, "t.py::test_long[", 16);
	for (size_t i = 16; i < 10239; i++)
		longid[i] = (char)('a' + i % 26);
	longid[10239] = ']';
	longid[10240] = '\0';
	ids[FLAKY_ARRAY_SIZE(ids) - 1] = longid;
	flaky_results_init(&r);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(ids); i++)
		add(&r, ids[i], i % 2 ? FLAKY_FAIL : FLAKY_PASS, 1, "m");
	store_run(s, tid, T0, &r);
	store_run(s, tid, T0 + 1, &r);
	ck_assert_int_eq(flaky_store_test_stats(s, &q, &v, &n, err,
	    sizeof err), 0);
	ck_assert_uint_eq(n, FLAKY_ARRAY_SIZE(ids));
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < FLAKY_ARRAY_SIZE(ids); k++) {
			if (strcmp(v[i].test, ids[k]) != 0)
				continue;
			found++;
			ck_assert_int_eq(v[i].runs, 2);
			ck_assert_int_eq(v[i].failures, k % 2 ? 2 : 0);
		}
	}
	ck_assert_uint_eq(found, FLAKY_ARRAY_SIZE(ids));
	flaky_test_rows_free(v, n);
	flaky_results_free(&r);
	free(longid);
	flaky_store_close(s);
}
END_TEST

/* The views in schema/0001-initial.sql over a known data set. */
START_TEST(views)
{
	struct flaky_store *s = open_store();
	struct flaky_results r;
	sqlite3		*db = raw_open();
	int64_t		 tid = target(s, "demo");

	/* 4 runs on day 20758: flaky fails in 1, broken in all, stable in
	 * none; 1 run on day 20759 */
	for (int i = 0; i < 5; i++) {
		flaky_results_init(&r);
		strcpy(r.runner, "pytest");
		add(&r, "stable", FLAKY_PASS, 1000, NULL);
		add(&r, "flaky", i == 1 ? FLAKY_FAIL : FLAKY_PASS, 2000,
		    "AssertionError: got 17");
		add(&r, "broken", FLAKY_FAIL, 3000, i == 4 ?
		    "ConnectionRefusedError: [Errno 111]" :
		    "KeyError: 'k1'");
		add(&r, "skipped", FLAKY_SKIP, -1, NULL);
		store_run(s, tid, i < 4 ? T0 + i * 60000 : T0 + 86400000LL,
		    &r);
		flaky_results_free(&r);
	}
	tu_rows_eq(db, "SELECT run_id, target, status, trigger, started, "
	    "duration_ms, exit_code, runner, tests, failures FROM run_list "
	    "ORDER BY run_id",
	    "1|demo|done|analyze|2026-11-01T12:00:00.000Z|1500.0|1|pytest|"
	    "4|1\n"
	    "2|demo|done|analyze|2026-11-01T12:01:00.000Z|1500.0|1|pytest|"
	    "4|2\n"
	    "3|demo|done|analyze|2026-11-01T12:02:00.000Z|1500.0|1|pytest|"
	    "4|1\n"
	    "4|demo|done|analyze|2026-11-01T12:03:00.000Z|1500.0|1|pytest|"
	    "4|1\n"
	    "5|demo|done|analyze|2026-11-02T12:00:00.000Z|1500.0|1|pytest|"
	    "4|1\n");
	tu_rows_eq(db, "SELECT run_id, target, test, outcome, position, "
	    "duration_ms, signature, message FROM test_results "
	    "WHERE run_id = 2 ORDER BY position",
	    "2|demo|stable|pass|0|1.0|NULL|NULL\n"
	    "2|demo|flaky|fail|1|2.0|UNKNOWN|AssertionError: got 17\n"
	    "2|demo|broken|fail|2|3.0|UNKNOWN|KeyError: 'k1'\n"
	    "2|demo|skipped|skip|3|NULL|NULL|NULL\n");
	tu_rows_eq(db, "SELECT target, test, runs, failures, skips, "
	    "round(fail_rate, 4), tier, first_day, last_day FROM test_stats "
	    "ORDER BY test",
	    "demo|broken|5|5|0|1.0|broken|2026-11-01|2026-11-02\n"
	    "demo|flaky|5|1|0|0.2|warning|2026-11-01|2026-11-02\n"
	    "demo|skipped|0|0|5|NULL|none|2026-11-01|2026-11-02\n"
	    "demo|stable|5|0|0|0.0|stable|2026-11-01|2026-11-02\n");
	tu_rows_eq(db, "SELECT test, runs, failures, tier FROM flaky_tests",
	    "flaky|5|1|warning\n");
	tu_rows_eq(db, "SELECT target, test, day, runs, failures, skips, "
	    "fail_rate FROM daily_trend WHERE test IN ('flaky', 'skipped') "
	    "ORDER BY test, day",
	    "demo|flaky|2026-11-01|4|1|0|0.25\n"
	    "demo|flaky|2026-11-02|1|0|0|0.0\n"
	    "demo|skipped|2026-11-01|0|0|4|NULL\n"
	    "demo|skipped|2026-11-02|0|0|1|NULL\n");
	tu_rows_eq(db, "SELECT target, test, normalized, signature, count "
	    "FROM failure_messages ORDER BY count DESC, test, normalized",
	    "demo|broken|KeyError: 'kN'|UNKNOWN|4\n"
	    "demo|broken|ConnectionRefusedError: [Errno N]|INFRA|1\n"
	    "demo|flaky|AssertionError: got N|UNKNOWN|1\n");
	sqlite3_close(db);
	flaky_store_close(s);
}
END_TEST

/* The rollup query of flaky_store_test_stats (the statement query.c
 * prepares) reads the rollups by their primary key, a range of days, and
 * never scans them or reads the results, also after ANALYZE. */
START_TEST(rollup_plan)
{
	struct flaky_store *s = open_store();
	struct flaky_results r;
	sqlite3		*db;
	char		*plan, *sql, name[32];
	int64_t		 tid = target(s, "p");

	for (int run = 0; run < 20; run++) {
		flaky_results_init(&r);
		for (int t = 0; t < 50; t++) {
			snprintf(name, sizeof name, "test_%d", t);
			add(&r, name, t % 7 ? FLAKY_PASS : FLAKY_FAIL, 10,
			    "x");
		}
		store_run(s, tid, T0 + run * 86400000LL, &r);
		flaky_results_free(&r);
	}
	flaky_store_close(s);
	db = raw_open();
	if (asprintf(&sql, "EXPLAIN QUERY PLAN %s",
	    store_sql_test_stats_rollups) == -1)
		ck_abort_msg("out of memory");
	for (int pass = 0; pass < 2; pass++) {
		plan = tu_rows(db, sql);
		ck_assert_msg(strstr(plan, "results") == NULL, "%s", plan);
		ck_assert_msg(strstr(plan, "SEARCH ru USING PRIMARY KEY "
		    "(day>? AND day<?)") != NULL, "%s", plan);
		ck_assert_msg(strstr(plan, "SCAN ru") == NULL, "%s", plan);
		ck_assert_msg(strstr(plan, "SCAN t\n") == NULL &&
		    strstr(plan, "SCAN tg\n") == NULL, "%s", plan);
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
	Suite	*s = suite_create("store");
	TCase	*tc = tcase_create("store");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, run_roundtrip);
	tcase_add_test(tc, histograms);
	tcase_add_test(tc, rollup_duration_counts);
	tcase_add_test(tc, atomic);
	tcase_add_test(tc, null_test_id);
	tcase_add_test(tc, locked_db);
	tcase_add_test(tc, many_writers);
	tcase_add_test(tc, reader_does_not_block);
	tcase_add_test(tc, interrupted);
	tcase_add_test(tc, stats_agree);
	tcase_add_test(tc, redaction);
	tcase_add_test(tc, names);
	tcase_add_test(tc, views);
	tcase_add_test(tc, rollup_plan);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
