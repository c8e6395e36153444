/* Issue 15, the box as a dimension: the name and its checks
 * (lib/util/box.c, box: of the YAML), runs.box as the store writes and
 * migrates it, report's --box, the rates per box in one grouped query
 * (lib/store/box.c) and INFRA from one box (lib/diagnose/boxes.c). */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "config/config.h"
#include "diagnose/diagnose.h"
#include "store/store.h"
#include "util/util.h"
#include "test_db.h"
#include "test_helper.h"

#define T0	1793534400000LL

/* internals the tests reach (lib/store/store_int.h) */
extern char *store_box_stats_sql(struct flaky_store *,
    const struct flaky_query *);

static char	 dir[64];
static char	 path[128];

static void
setup(void)
{
	tu_tmpdir(dir, sizeof dir, "box");
	snprintf(path, sizeof path, "%s/flaky.db", dir);
	unsetenv("FLAKY_BOX");
}

static void
teardown(void)
{
	tu_rmdir(dir);
}

START_TEST(name_check)
{
	static const char *const good[] = { "a", "box-a", "build_07.eu",
	    "B0X", "0123456789012345678901234567890123456789012345678901"
	    "234567890123" };
	static const struct { const char *name, *says; } bad[] = {
		{ "", "empty" },
		{ "a b", "' ' at byte 2" },
		{ "a/b", "'/' at byte 2" },
		{ "it's", "''' at byte 3" },
		{ "caf\xc3\xa9", "byte 4 is 0xc3" },
		{ "0123456789012345678901234567890123456789012345678901"
		    "2345678901234", "65 bytes: expected at most 64" },
	};
	char	 err[256];

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(good); i++)
		ck_assert_msg(flaky_box_check(good[i], err, sizeof err) == 0,
		    "%s: %s", good[i], err);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(bad); i++) {
		ck_assert_int_eq(flaky_box_check(bad[i].name, err,
		    sizeof err), -EINVAL);
		ck_assert_msg(strstr(err, bad[i].says) != NULL, "%s", err);
	}
	ck_assert_int_eq(flaky_box_check(NULL, err, sizeof err), -EINVAL);
	/* what was expected, said once */
	ck_assert_int_eq(flaky_box_check("a b", err, sizeof err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "expected letters, digits, '.', "
	    "'-' or '_'"));
}
END_TEST

/* --box, then $FLAKY_BOX, then box: of the YAML, then the host name; a
 * bad name is named with where it came from. */
START_TEST(name_resolve)
{
	char	 box[FLAKY_BOX_MAX + 1], host[FLAKY_BOX_MAX + 1], err[256];

	ck_assert_int_eq(flaky_box_default(host, sizeof host), 0);
	ck_assert_msg(flaky_box_check(host, err, sizeof err) == 0, "%s", err);
	ck_assert_ptr_null(strchr(host, '.'));
	ck_assert_int_eq(flaky_box_default(box, 8), -ENOBUFS);

	ck_assert_int_eq(flaky_box_resolve(NULL, NULL, box, sizeof box, err,
	    sizeof err), 0);
	ck_assert_str_eq(box, host);
	ck_assert_int_eq(flaky_box_resolve(NULL, "conf", box, sizeof box, err,
	    sizeof err), 0);
	ck_assert_str_eq(box, "conf");
	setenv("FLAKY_BOX", "env-1", 1);
	ck_assert_int_eq(flaky_box_resolve(NULL, "conf", box, sizeof box, err,
	    sizeof err), 0);
	ck_assert_str_eq(box, "env-1");
	ck_assert_int_eq(flaky_box_resolve("opt", "conf", box, sizeof box,
	    err, sizeof err), 0);
	ck_assert_str_eq(box, "opt");
	setenv("FLAKY_BOX", "env 1", 1);
	ck_assert_int_eq(flaky_box_resolve(NULL, "conf", box, sizeof box, err,
	    sizeof err), -EINVAL);
	ck_assert_msg(strncmp(err, "$FLAKY_BOX: ", 12) == 0, "%s", err);
	ck_assert_int_eq(flaky_box_resolve("-x?", NULL, box, sizeof box, err,
	    sizeof err), -EINVAL);
	ck_assert_msg(strncmp(err, "--box: ", 7) == 0, "%s", err);
	unsetenv("FLAKY_BOX");
	ck_assert_int_eq(flaky_box_resolve(NULL, "", box, sizeof box, err,
	    sizeof err), -EINVAL);
	ck_assert_msg(strncmp(err, "box: box name is empty", 22) == 0, "%s",
	    err);
}
END_TEST

/* box: at the top of the YAML: kept when good, FILE:LINE:COL when not. */
START_TEST(config_box)
{
	static const char good[] = "box: build-07\ntargets: []\n";
	static const char bad[] = "jobs: 2\nbox: 'build 07'\ntargets: []\n";
	struct flaky_config *cfg;
	char	 err[512];

	ck_assert_msg(flaky_config_parse_buffer("x.yaml", good,
	    sizeof good - 1, FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_str_eq(cfg->box, "build-07");
	flaky_config_free(cfg);
	ck_assert_int_eq(flaky_config_parse_buffer("x.yaml", bad,
	    sizeof bad - 1, FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err,
	    sizeof err), -EINVAL);
	ck_assert_msg(strncmp(err, "x.yaml:2:", 9) == 0 && strstr(err,
	    "box: box name \"build \": ' ' at byte 6") != NULL, "%s", err);
}
END_TEST

/* One run of target tid on box (NULL: the store's): test a fails when
 * fail_a (with signature sig), b passes. */
static int64_t
run(struct flaky_store *s, int64_t tid, int64_t started, int fail_a,
    const char *sig, const char *box)
{
	struct flaky_run_record rec = { 0 };
	struct flaky_results r;
	char	 err[512];

	flaky_results_init(&r);
	strcpy(r.runner, "pytest");
	r.cap = 2;
	ck_assert_ptr_nonnull(r.v = calloc(2, sizeof *r.v));
	r.v[0].test = strdup("a");
	r.v[0].outcome = fail_a ? FLAKY_FAIL : FLAKY_PASS;
	r.v[0].duration_us = 100;
	if (fail_a) {
		r.v[0].message = strdup("AssertionError");
		r.v[0].signature = strdup(sig);
	}
	r.v[1].test = strdup("b");
	r.v[1].position = 1;
	r.v[1].duration_us = 100;
	r.n = 2;
	rec.target_id = tid;
	rec.kind = FLAKY_KIND_SUITE;
	rec.trigger = "analyze";
	rec.started_ms = started;
	rec.loadavg = -1;
	rec.box = box;
	ck_assert_msg(flaky_store_run_start(s, &rec, err, sizeof err) == 0,
	    "%s", err);
	rec.status = FLAKY_RUN_DONE;
	rec.ended_ms = started + 10;
	ck_assert_msg(flaky_store_run_finish(s, &rec, &r, err, sizeof err) ==
	    0, "%s", err);
	flaky_results_free(&r);
	return rec.id;
}

/* Every run records a box: the store's (the host name until set), or
 * the record's own; a bad name is refused and changes nothing. */
START_TEST(store_writes_box)
{
	struct flaky_store *s;
	struct flaky_run_record rec = { 0 };
	sqlite3	*db;
	int64_t	 tid;
	char	 host[FLAKY_BOX_MAX + 1], want[256], err[512];

	ck_assert_int_eq(flaky_box_default(host, sizeof host), 0);
	ck_assert_msg(flaky_store_open(path, 0, &s, err, sizeof err) == 0,
	    "%s", err);
	ck_assert_str_eq(flaky_store_box(s), host);
	ck_assert_int_eq(flaky_store_target(s, "t", "pytest", "/src", &tid,
	    err, sizeof err), 0);
	run(s, tid, T0, 0, NULL, NULL);
	ck_assert_int_eq(flaky_store_set_box(s, "no way", err, sizeof err),
	    -EINVAL);
	ck_assert_str_eq(flaky_store_box(s), host);
	ck_assert_int_eq(flaky_store_set_box(s, "box-a", err, sizeof err), 0);
	run(s, tid, T0 + 1, 0, NULL, NULL);
	run(s, tid, T0 + 2, 0, NULL, "box-b");
	/* a run stored whole at its end (no start row) */
	rec.target_id = tid;
	rec.kind = FLAKY_KIND_SUITE;
	rec.status = FLAKY_RUN_ERROR;
	rec.started_ms = T0 + 3;
	rec.loadavg = -1;
	ck_assert_int_eq(flaky_store_run_finish(s, &rec, NULL, err,
	    sizeof err), 0);
	flaky_store_close(s);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(want, sizeof want, "1|%s\n2|box-a\n3|box-b\n4|box-a\n", host);
	tu_rows_eq(db, "SELECT id, box FROM runs ORDER BY id", want);
	sqlite3_close(db);
}
END_TEST

/* A database of the version before the column (built by the migrations
 * before the one that adds it, found by its text) keeps its runs, whose
 * box is NULL: read as the reading store's box. */
START_TEST(migrate)
{
	struct flaky_store *s;
	struct flaky_run_counts c;
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0, 0, NULL };
	sqlite3	*db;
	char	 sql[64], err[512];
	int	 from;

	db = tu_db_before(path, "ADD COLUMN box", &from);
	ck_assert_int_eq(sqlite3_exec(db, "SELECT box FROM runs", NULL, NULL,
	    NULL), SQLITE_ERROR);
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", from);
	ck_assert_msg(sqlite3_exec(db,
	    "INSERT INTO targets (id, name, created_ms) VALUES (1, 'demo', 0);"
	    "INSERT INTO runs (id, target_id, status, trigger, started_ms, "
	    "  kind) VALUES (5, 1, 'done', 'schedule', 1, 'suite');"
	    "INSERT INTO runs (id, target_id, status, trigger, started_ms, "
	    "  kind) VALUES (6, 1, 'done', 'schedule', 2, 'alone');"
	    "INSERT INTO tests (id, target_id, name) VALUES (1, 1, 'x'), "
	    "  (2, 1, 'y'), (3, 1, 'z');"
	    "INSERT INTO results (run_id, position, test_id, outcome) "
	    "  VALUES (5, 0, 1, 1), (5, 1, 2, 0), (5, 2, 3, 3), "
	    "  (6, 0, 1, 1);",
	    NULL, NULL, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(db));
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	ck_assert_msg(flaky_store_open(path, 0, &s, err, sizeof err) == 0,
	    "%s", err);
	/* the old run is the local box's */
	ck_assert_int_eq(flaky_store_set_box(s, "here", err, sizeof err), 0);
	q.box = "here";
	ck_assert_int_eq(flaky_store_run_counts(s, &q, &c, err, sizeof err),
	    0);
	ck_assert_int_eq(c.runs, 1);
	q.box = "there";
	ck_assert_int_eq(flaky_store_run_counts(s, &q, &c, err, sizeof err),
	    0);
	ck_assert_int_eq(c.runs, 0);
	flaky_store_close(s);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(sql, sizeof sql, "%d\n", flaky_store_schema_version());
	tu_rows_eq(db, "PRAGMA user_version", sql);
	tu_rows_eq(db, "SELECT id, box FROM runs ORDER BY id",
	    "5|NULL\n6|NULL\n");
	/* box_rollups made from the results of before: the suite run's,
	 * under '' (the store's box); a skip is a row of no runs, the run
	 * alone is not counted, as in the rollups */
	tu_rows_eq(db, "SELECT day, test_id, box, runs, failures FROM "
	    "box_rollups ORDER BY test_id",
	    "0|1||1|1\n0|2||1|0\n0|3||0|0\n");
	tu_rows_eq(db, "PRAGMA integrity_check", "ok\n");
	sqlite3_close(db);
}
END_TEST

/* The rows of test id among v. */
static const struct flaky_box_row *
row_of(const struct flaky_box_row *v, size_t n, int64_t id, const char *box)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].test_id == id && strcmp(v[i].box, box) == 0)
			return &v[i];
	return NULL;
}

/* Target t: a fails 10 of 20 runs on box-a, never in 20 on box-b (15 of
 * them with no box: stored before boxes were, the local box-b's); target
 * one: a single box. */
static void
fill(struct flaky_store *s, int64_t *tid, int64_t *one)
{
	sqlite3	*db;
	char	 sql[128], err[512];

	ck_assert_int_eq(flaky_store_set_box(s, "box-b", err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_target(s, "t", "pytest", "/src", tid,
	    err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_target(s, "one", "pytest", "/src", one,
	    err, sizeof err), 0);
	for (int i = 0; i < 20; i++) {
		run(s, *tid, T0 + i, i % 2 == 0, "UNKNOWN", "box-a");
		run(s, *tid, T0 + 100 + i, 0, NULL, i < 15 ? NULL : "box-b");
		run(s, *one, T0 + i, i < 5, "UNKNOWN", NULL);
	}
	/* the first 15 of box-b's as if stored before boxes were recorded */
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(sql, sizeof sql, "UPDATE runs SET box = NULL WHERE box = "
	    "'box-b' AND started_ms < %lld", T0 + 115);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM runs WHERE box IS "
	    "NULL"), 15 + 20);
	sqlite3_close(db);
}

/* The ids of fill()'s tests: t's a and b, one's a. */
static void
fill_ids(sqlite3 *db, int64_t ids[3])
{
	ids[0] = tu_q1(db, "SELECT id FROM tests WHERE target_id = 1 AND "
	    "name = 'a'");
	ids[1] = tu_q1(db, "SELECT id FROM tests WHERE target_id = 1 AND "
	    "name = 'b'");
	ids[2] = tu_q1(db, "SELECT id FROM tests WHERE target_id = 2 AND "
	    "name = 'a'");
}

START_TEST(breakdown)
{
	struct flaky_store *s;
	struct flaky_box_row *v;
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0, 0, NULL };
	const struct flaky_box_row *x;
	struct flaky_test_row *rows;
	struct flaky_run_counts c;
	sqlite3	*db;
	int64_t	 tid, one, ids[3];
	size_t	 n, nrows;
	char	 err[512];

	ck_assert_msg(flaky_store_open(path, 0, &s, err, sizeof err) == 0,
	    "%s", err);
	fill(s, &tid, &one);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	fill_ids(db, ids);
	/* one grouped query: the targets of several boxes from the runs,
	 * their runs by target, the results by the primary key; never a
	 * scan of every result, before ANALYZE and after */
	for (int pass = 0; pass < 2; pass++) {
		char	*sql = store_box_stats_sql(s, &q), *plan, ex[4096];

		ck_assert_ptr_nonnull(sql);
		snprintf(ex, sizeof ex, "EXPLAIN QUERY PLAN %s", sql);
		plan = tu_rows(db, ex);
		ck_assert_msg(strstr(plan, "SEARCH r USING PRIMARY KEY "
		    "(run_id=?)") != NULL, "%s", plan);
		ck_assert_msg(strstr(plan, "SEARCH ru USING INDEX "
		    "runs_by_target (target_id=?") != NULL, "%s", plan);
		ck_assert_msg(strstr(plan, "SCAN r ") == NULL && strstr(plan,
		    "SCAN ru ") == NULL, "%s", plan);
		free(plan);
		free(sql);
		ck_assert_int_eq(sqlite3_exec(db, "ANALYZE", NULL, NULL, NULL),
		    SQLITE_OK);
	}
	sqlite3_close(db);

	ck_assert_msg(flaky_store_box_stats(s, &q, ids, 3, 0, &v, &n, err,
	    sizeof err) == 0, "%s", err);
	/* a and b of t on two boxes each; target one has a single box */
	ck_assert_uint_eq(n, 4);
	ck_assert_ptr_nonnull(x = row_of(v, n, ids[0], "box-a"));
	ck_assert_int_eq(x->runs, 20);
	ck_assert_int_eq(x->failures, 10);
	ck_assert_ptr_nonnull(x = row_of(v, n, ids[0], "box-b"));
	ck_assert_int_eq(x->runs, 20);
	ck_assert_int_eq(x->failures, 0);
	ck_assert_ptr_nonnull(row_of(v, n, ids[1], "box-a"));
	ck_assert_ptr_null(row_of(v, n, ids[2], "box-b"));
	ck_assert_int_eq(v[0].test_id, ids[0]);
	ck_assert_str_eq(v[0].box, "box-a");
	free(v);
	/* only the tests asked for */
	ck_assert_int_eq(flaky_store_box_stats(s, &q, ids + 1, 1, 0, &v, &n, err,
	    sizeof err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(v[0].test_id, ids[1]);
	free(v);
	ck_assert_int_eq(flaky_store_box_stats(s, &q, ids, 0, 0, &v, &n, err,
	    sizeof err), 0);
	ck_assert_uint_eq(n, 0);
	/* a budget: the newest 20 runs (the least), all of them box-b's */
	ck_assert_int_eq(flaky_store_box_stats(s, &q, ids, 1, 1, &v, &n, err,
	    sizeof err), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0].box, "box-b");
	ck_assert_int_eq(v[0].runs, 20);
	free(v);
	/* 2 results a run: 30 runs, the newest 10 of box-a's too */
	ck_assert_int_eq(flaky_store_box_stats(s, &q, ids, 1, 60, &v, &n, err,
	    sizeof err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(v[0].runs, 10);
	ck_assert_int_eq(v[1].runs, 20);
	free(v);
	/* the window has one box: nothing */
	q.until_ms = T0 + 100;
	ck_assert_int_eq(flaky_store_box_stats(s, &q, ids, 3, 0, &v, &n, err,
	    sizeof err), 0);
	ck_assert_uint_eq(n, 0);
	free(v);
	q.until_ms = INT64_MAX;

	/* report --box: rates and run counts of one box's runs */
	q.box = "box-a";
	ck_assert_int_eq(flaky_store_run_counts(s, &q, &c, err, sizeof err),
	    0);
	ck_assert_int_eq(c.runs, 20);
	ck_assert_int_eq(flaky_store_test_stats(s, &q, &rows, &nrows, err,
	    sizeof err), 0);
	ck_assert_uint_eq(nrows, 2);
	ck_assert_int_eq(rows[0].runs, 20);
	ck_assert_int_eq(rows[0].failures, 10);
	flaky_test_rows_free(rows, nrows);
	q.box = "box-b";	/* the local box: its NULL rows too */
	ck_assert_int_eq(flaky_store_run_counts(s, &q, &c, err, sizeof err),
	    0);
	ck_assert_int_eq(c.runs, 40);
	ck_assert_int_eq(flaky_store_test_stats(s, &q, &rows, &nrows, err,
	    sizeof err), 0);
	ck_assert_uint_eq(nrows, 4);
	for (size_t i = 0; i < nrows; i++)
		ck_assert_int_eq(rows[i].failures, rows[i].target[0] == 'o' &&
		    strcmp(rows[i].test, "a") == 0 ? 5 : 0);
	flaky_test_rows_free(rows, nrows);
	q.box = "x' OR '1";	/* never into the SQL */
	ck_assert_int_eq(flaky_store_run_counts(s, &q, &c, err, sizeof err),
	    0);
	ck_assert_int_eq(c.runs, 0);
	q.box = NULL;
	ck_assert_int_eq(flaky_store_run_counts(s, &q, &c, err, sizeof err),
	    0);
	ck_assert_int_eq(c.runs, 60);
	flaky_store_close(s);
}
END_TEST

/* A window of whole days is read from box_rollups: the same rows as the
 * results give with every run counted, by one seek per day and test, no
 * result read; and the rollups per box add up to the rollups. */
START_TEST(breakdown_rollups)
{
	struct flaky_store *s;
	struct flaky_box_row *v, *w;
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0, 0, NULL };
	struct flaky_query raw;
	sqlite3	*db;
	int64_t	 tid, one, ids[3], day = T0 / 86400000;
	size_t	 n, m;
	char	 err[512];

	ck_assert_msg(flaky_store_open(path, 0, &s, err, sizeof err) == 0,
	    "%s", err);
	fill(s, &tid, &one);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	fill_ids(db, ids);
	tu_rows_eq(db, "SELECT count(*) FROM (SELECT day, test_id, "
	    "sum(runs) AS r, sum(failures) AS f FROM box_rollups "
	    "GROUP BY day, test_id) b FULL JOIN rollups ru USING (day, "
	    "test_id) WHERE b.r IS NOT ru.runs OR b.f IS NOT ru.failures",
	    "0\n");
	tu_rows_eq(db, "SELECT count(*) FROM box_rollups", "6\n");
	q.since_ms = day * 86400000;
	q.until_ms = (day + 1) * 86400000;
	for (int pass = 0; pass < 2; pass++) {
		char	*sql = store_box_stats_sql(s, &q), *plan, ex[4096];

		ck_assert_ptr_nonnull(sql);
		snprintf(ex, sizeof ex, "EXPLAIN QUERY PLAN %s", sql);
		plan = tu_rows(db, ex);
		ck_assert_msg(strstr(plan, "SEARCH b USING PRIMARY KEY "
		    "(day=? AND test_id=?)") != NULL, "%s", plan);
		ck_assert_msg(strstr(plan, "results") == NULL &&
		    strstr(plan, "SCAN b") == NULL, "%s", plan);
		free(plan);
		free(sql);
		ck_assert_int_eq(sqlite3_exec(db, "ANALYZE", NULL, NULL, NULL),
		    SQLITE_OK);
	}
	sqlite3_close(db);
	/* the same window from the results: a run id range keeps it there */
	raw = q;
	raw.first_run_id = 1;
	ck_assert_msg(flaky_store_box_stats(s, &q, ids, 3, 1, &v, &n, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_msg(flaky_store_box_stats(s, &raw, ids, 3, 0, &w, &m, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(m, n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(v[i].test_id, w[i].test_id);
		ck_assert_str_eq(v[i].box, w[i].box);
		ck_assert_int_eq(v[i].runs, w[i].runs);
		ck_assert_int_eq(v[i].failures, w[i].failures);
	}
	ck_assert_int_eq(row_of(v, n, ids[0], "box-a")->failures, 10);
	ck_assert_int_eq(row_of(v, n, ids[0], "box-b")->runs, 20);
	free(v);
	free(w);
	/* a window of the day before: no box, no rows */
	q.since_ms -= 86400000;
	q.until_ms -= 86400000;
	ck_assert_int_eq(flaky_store_box_stats(s, &q, ids, 3, 0, &v, &n, err,
	    sizeof err), 0);
	ck_assert_uint_eq(n, 0);
	free(v);
	flaky_store_close(s);
}
END_TEST

/* The rule: fails on one box, never on the others, with enough runs on
 * both sides and Fisher p below the threshold. */
START_TEST(infra_rule)
{
	static const struct {
		int64_t	 runs_a, fails_a, runs_b, fails_b;
		int	 infra;
	} cases[] = {
		{ 30, 9, 30, 0, 1 },	/* the issue's: p = 0.00096 */
		{ 20, 10, 20, 0, 1 },
		{ 30, 8, 30, 0, 0 },	/* p = 0.0024: chance */
		{ 30, 9, 30, 1, 0 },	/* it fails elsewhere too */
		{ 9, 9, 30, 0, 0 },	/* too few runs on the box */
		{ 30, 15, 9, 0, 0 },	/* too few on the other */
		{ 10, 2, 100, 0, 0 },	/* too few failures */
		{ 30, 0, 30, 0, 0 },
	};
	struct flaky_box_row v[3];
	struct flaky_box_evidence ev;

	memset(v, 0, sizeof v);
	strcpy(v[0].box, "box-a");
	strcpy(v[1].box, "box-b");
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(cases); i++) {
		v[0].runs = cases[i].runs_a;
		v[0].failures = cases[i].fails_a;
		v[1].runs = cases[i].runs_b;
		v[1].failures = cases[i].fails_b;
		ck_assert_msg(flaky_box_infra(v, 2, &ev) == cases[i].infra,
		    "case %zu: p %g", i, ev.p);
		if (cases[i].infra) {
			ck_assert_str_eq(ev.box, "box-a");
			ck_assert_int_eq(ev.other_runs, cases[i].runs_b);
			ck_assert_int_eq(ev.other_boxes, 1);
			ck_assert(ev.p < FLAKY_BOX_ALPHA);
		} else
			ck_assert_ptr_null(ev.box);
	}
	/* the failing box is second; a third box of 2 runs does not count */
	v[0].runs = 30;
	v[0].failures = 0;
	v[1].runs = 30;
	v[1].failures = 12;
	strcpy(v[2].box, "box-c");
	v[2].runs = 2;
	ck_assert_int_eq(flaky_box_infra(v, 3, &ev), 1);
	ck_assert_str_eq(ev.box, "box-b");
	ck_assert_int_eq(ev.other_runs, 30);
	ck_assert_int_eq(ev.other_boxes, 1);
	ck_assert_int_eq(flaky_box_infra(v, 1, &ev), 0);
	ck_assert_str_eq(flaky_box_signature("UNKNOWN"), "INFRA");
	ck_assert_str_eq(flaky_box_signature(NULL), "INFRA");
	ck_assert_str_eq(flaky_box_signature("TIMEOUT"), "TIMEOUT");
}
END_TEST

/* The diagnosis: INFRA from one box with its evidence; a signature a
 * message gave is kept, with the evidence all the same. */
START_TEST(diagnose_infra)
{
	struct flaky_store *s;
	struct flaky_diagnosis *d;
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0, 0, NULL };
	sqlite3	*db;
	int64_t	 tid, one, a;
	char	 err[512];

	ck_assert_msg(flaky_store_open(path, 0, &s, err, sizeof err) == 0,
	    "%s", err);
	fill(s, &tid, &one);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	a = tu_q1(db, "SELECT id FROM tests WHERE target_id = 1 AND name = "
	    "'a'");
	ck_assert_msg(flaky_diagnose_test(s, a, &q, &d, err, sizeof err) == 0,
	    "%s", err);
	ck_assert_str_eq(d->signature, "INFRA");
	ck_assert_int_eq(d->box_infra, 1);
	ck_assert_str_eq(d->box.box, "box-a");
	ck_assert_int_eq(d->box.failures, 10);
	ck_assert_int_eq(d->box.other_runs, 20);
	ck_assert_uint_eq(d->nboxes, 2);
	flaky_diagnosis_free(d);
	/* one box: no rates per box, no evidence */
	a = tu_q1(db, "SELECT id FROM tests WHERE target_id = 2 AND name = "
	    "'a'");
	ck_assert_int_eq(flaky_diagnose_test(s, a, &q, &d, err, sizeof err),
	    0);
	ck_assert_str_eq(d->signature, "UNKNOWN");
	ck_assert_uint_eq(d->nboxes, 0);
	ck_assert_ptr_null(d->box.box);
	flaky_diagnosis_free(d);
	/* TIMEOUT from its messages stays TIMEOUT */
	ck_assert_int_eq(sqlite3_exec(db, "UPDATE results SET signature = "
	    "'TIMEOUT' WHERE signature = 'UNKNOWN'", NULL, NULL, NULL),
	    SQLITE_OK);
	a = tu_q1(db, "SELECT id FROM tests WHERE target_id = 1 AND name = "
	    "'a'");
	ck_assert_int_eq(flaky_diagnose_test(s, a, &q, &d, err, sizeof err),
	    0);
	ck_assert_str_eq(d->signature, "TIMEOUT");
	ck_assert_int_eq(d->box_infra, 0);
	ck_assert_str_eq(d->box.box, "box-a");
	flaky_diagnosis_free(d);
	sqlite3_close(db);
	flaky_store_close(s);
}
END_TEST

static Suite *
box_suite(void)
{
	Suite	*s = suite_create("box");
	TCase	*tc = tcase_create("box");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, name_check);
	tcase_add_test(tc, name_resolve);
	tcase_add_test(tc, config_box);
	tcase_add_test(tc, store_writes_box);
	tcase_add_test(tc, migrate);
	tcase_add_test(tc, breakdown);
	tcase_add_test(tc, breakdown_rollups);
	tcase_add_test(tc, infra_rule);
	tcase_add_test(tc, diagnose_infra);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(box_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
