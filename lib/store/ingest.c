/* A run stored as its results come (flakyctl ingest of a JUnit file of any
 * size): the row first, then each result with its test, message, rollup and
 * attempts, then the row completed. All in the caller's transaction, so a
 * file still lands whole or not at all; what this holds does not grow with
 * the run. flaky_store_run_finish() takes a run's results at once and
 * caches every test id it meets (up to a million of them): right for the
 * runs of the daemon, a few hundred MB for a CI file of millions of tests.
 *
 * Tests with the same id in one run get " #2", " #3" in the order they
 * ran, as parse_dedupe() names them. Which tests the run has met is a
 * bitmap of their ids (row ids are dense: a bit per test of the database,
 * at most SEEN_BITS of them); how often a test came more than once is
 * counted in a temporary table, which SQLite keeps within its page cache
 * (spilling to a temporary file). Ids past the bitmap are counted there
 * from their first time. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "classify/classify.h"
#include "store_int.h"
#include "util/util.h"

#define SEEN_BITS	((int64_t)1 << 25)	/* 4 MiB of bitmap at most */
/* Results are written IS_BATCH at a time with one statement: a
 * statement's fixed cost is paid once per batch (as flaky_store_run_finish
 * does with its CHUNK); the batch's texts are copied, bounded. */
#define IS_BATCH	64
#define IS_COLS		8
/* Results whose rollups a writer that yields adds at once. */
#define IS_ROLLUP_PART	4096

enum {
	IS_RUN,
	IS_TEST_FIND,
	IS_TEST_ADD,
	IS_SEEN,
	IS_MSG_FIND,
	IS_MSG_ADD,
	IS_RESULT,
	IS_ATTEMPT,
	IS_COUNT
};

static const char *const is_sql[IS_COUNT] = {
	/* with its owner: a run committed in parts (an upload's) whose
	 * writer is gone is interrupted by the next writer (owner.c) */
	[IS_RUN] = "INSERT INTO runs (target_id, status, trigger, "
	    "started_ms, kind, box, owner_boot, owner_pid, owner_start) "
	    "VALUES (?1, 'running', 'ingest', ?2, 'ingested', ?3, ?4, ?5, ?6)",
	[IS_TEST_FIND] = "SELECT id FROM tests WHERE target_id = ?1 AND "
	    "name = ?2",
	[IS_TEST_ADD] = "INSERT INTO tests (target_id, name) VALUES (?1, ?2)",
	/* ?2: 2 when the bitmap says it is the second time */
	[IS_SEEN] = "INSERT INTO temp.ingest_seen (test_id, n) VALUES (?1, ?2) "
	    "ON CONFLICT (test_id) DO UPDATE SET n = n + 1 RETURNING n",
	[IS_MSG_FIND] = "SELECT id FROM messages WHERE fingerprint = ?1",
	[IS_MSG_ADD] = "INSERT INTO messages (fingerprint, normalized) "
	    "VALUES (?1, ?2)",
	[IS_RESULT] = "INSERT INTO results (run_id, position, test_id, "
	    "outcome, duration_us, message_id, signature, message) VALUES "
	    "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[IS_ATTEMPT] = "INSERT INTO attempts (run_id, position, attempt, "
	    "outcome, message) VALUES (?1, ?2, ?3, ?4, ?5)",
};

/* A result waiting for its batch; sig, msg: offsets in text, -1 NULL. */
struct is_row {
	int64_t		 position, tid, dur, mid;
	int		 outcome;
	long		 sig, msg;
};

struct flaky_store_ingest {
	struct flaky_store	*s;
	struct sql		*db;
	struct sql_stmt		*st[IS_COUNT];
	int64_t			 run_id;
	int64_t			 target_id;
	int64_t			 tests;
	int64_t			 failures;
	unsigned char		*seen;		/* a bit per test id */
	size_t			 seen_len;	/* bytes */
	struct flaky_buf	 name;		/* a test id with its " #N" */
	struct flaky_buf	 msg;		/* a redacted message */
	struct flaky_buf	 norm;		/* its normalized form */
	struct sql_stmt		*many;		/* IS_BATCH rows of results */
	struct is_row		 rows[IS_BATCH];
	size_t			 nrows;
	struct flaky_buf	 text;		/* their messages, signatures */
	int			(*yield)(void *, char *, size_t);
	void			*yield_arg;
};

/* Prepare sql; on PostgreSQL the results go to the temporary table
 * ingest_results until the run is final (is_pg_move). */
static int
is_prepare(struct flaky_store_ingest *w, const char *sql,
    struct sql_stmt **st)
{
	struct flaky_buf b;
	const char	*p;
	int		 rc;

	if (!sql_is_pg(w->db) || (p = strstr(sql, " results ")) == NULL)
		return sql_prepare_v2(w->db, sql, -1, st, NULL);
	flaky_buf_init(&b);
	flaky_buf_add(&b, sql, (size_t)(p - sql));
	flaky_buf_adds(&b, " ingest_results ");
	flaky_buf_adds(&b, p + strlen(" results "));
	if (b.oom) {
		flaky_buf_free(&b);
		return SQL_NOMEM;
	}
	rc = sql_prepare_v2(w->db, flaky_buf_cstr(&b), -1, st, NULL);
	flaky_buf_free(&b);
	return rc;
}

/* A statement, reset and unbound, prepared on first use. */
static struct sql_stmt *
is_stmt(struct flaky_store_ingest *w, int which)
{
	struct sql_stmt	*st = w->st[which];

	if (st == NULL) {
		if (is_prepare(w, is_sql[which], &st) != SQL_OK)
			return NULL;
		w->st[which] = st;
		return st;
	}
	sql_reset(st);
	sql_clear_bindings(st);
	return st;
}

/* Run a statement that gives no row; 0 or -EIO with err filled. */
static int
is_done(struct flaky_store_ingest *w, struct sql_stmt *st, const char *what,
    char *err, size_t errlen)
{
	if (sql_step(st) == SQL_DONE)
		return 0;
	return store_sql_error(w->s, err, errlen, what);
}

/* The id a statement finds (its first column), 0 when it finds none. */
static int64_t
is_find(struct sql_stmt *st)
{
	int64_t	 id = 0;

	if (sql_step(st) == SQL_ROW)
		id = sql_column_int64(st, 0);
	/* a statement left on a row holds a read transaction open */
	sql_reset(st);
	return id;
}

int
flaky_store_ingest_start(struct flaky_store *s, int64_t target_id,
    int64_t started_ms, struct flaky_store_ingest **ret,
    char *err, size_t errlen)
{
	struct flaky_store_ingest *w;
	struct store_owner me;
	struct sql_stmt	*st;
	int		 r;

	*ret = NULL;
	if (!store_in_tx(s))
		return flaky_error(err, errlen, EINVAL, "%s: storing a run "
		    "as it comes takes an open transaction",
		    flaky_store_name(s));
	if ((w = calloc(1, sizeof *w)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	w->s = s;
	w->db = store_db(s);
	w->target_id = target_id;
	flaky_buf_init(&w->name);
	flaky_buf_init(&w->msg);
	flaky_buf_init(&w->norm);
	flaky_buf_init(&w->text);
	if (sql_exec(w->db, "CREATE TEMP TABLE IF NOT EXISTS ingest_seen "
	    "(test_id INTEGER PRIMARY KEY, n INTEGER NOT NULL); "
	    "DELETE FROM temp.ingest_seen", NULL, NULL, NULL) != SQL_OK ||
	    (sql_is_pg(w->db) && sql_exec(w->db, "CREATE TEMP TABLE IF NOT "
	    "EXISTS ingest_results AS SELECT * FROM results LIMIT 0; "
	    "DELETE FROM "
	    "temp.ingest_results", NULL, NULL, NULL) != SQL_OK)) {
		r = store_sql_error(s, err, errlen, "making the seen table");
		goto fail;
	}
	if ((st = is_stmt(w, IS_RUN)) == NULL) {
		r = store_sql_error(s, err, errlen, "preparing");
		goto fail;
	}
	sql_bind_int64(st, 1, target_id);
	sql_bind_int64(st, 2, started_ms);
	sql_bind_text(st, 3, flaky_store_box(s), -1, SQL_STATIC);
	if (store_owner_self(&me) == 0) {
		sql_bind_text(st, 4, me.boot, -1, SQL_TRANSIENT);
		sql_bind_int64(st, 5, me.pid);
		sql_bind_int64(st, 6, me.start);
	}
	if ((r = is_done(w, st, "adding the run", err, errlen)) < 0)
		goto fail;
	w->run_id = sql_last_insert_rowid(w->db);
	*ret = w;
	return 0;
fail:
	flaky_store_ingest_free(w);
	return r;
}

int64_t
flaky_store_ingest_run(const struct flaky_store_ingest *w)
{
	return w->run_id;
}

/* The id of a test of the target, added on first sight. */
static int
is_test(struct flaky_store_ingest *w, const char *name, int64_t *ret,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;

	if ((st = is_stmt(w, IS_TEST_FIND)) == NULL)
		return store_sql_error(w->s, err, errlen, "preparing");
	sql_bind_int64(st, 1, w->target_id);
	sql_bind_text(st, 2, name, -1, SQL_STATIC);
	if ((*ret = is_find(st)) != 0)
		return 0;
	if ((st = is_stmt(w, IS_TEST_ADD)) == NULL)
		return store_sql_error(w->s, err, errlen, "preparing");
	sql_bind_int64(st, 1, w->target_id);
	sql_bind_text(st, 2, name, -1, SQL_STATIC);
	if (sql_step(st) != SQL_DONE)
		return store_sql_error(w->s, err, errlen, "adding a test");
	*ret = sql_last_insert_rowid(w->db);
	return 0;
}

/* Has the run met test id before? 1, 0, or -1 when the bitmap does not
 * reach it (then -ENOMEM in *r when it could not grow). */
static int
is_seen_bit(struct flaky_store_ingest *w, int64_t id, int *r)
{
	size_t	 byte = (size_t)(id / 8), len;
	int	 bit = 1 << (id % 8), was;

	*r = 0;
	if (id < 0 || id >= SEEN_BITS)
		return -1;
	if (byte >= w->seen_len) {
		unsigned char *p;

		for (len = w->seen_len ? w->seen_len : 4096; len <= byte; )
			len *= 2;
		if ((p = realloc(w->seen, len)) == NULL) {
			*r = -ENOMEM;
			return -1;
		}
		memset(p + w->seen_len, 0, len - w->seen_len);
		w->seen = p;
		w->seen_len = len;
	}
	was = (w->seen[byte] & bit) != 0;
	w->seen[byte] |= bit;
	return was;
}

/* The test of a result: its id as the runner gave it, or, the Nth time
 * it comes in this run, "ID #N". */
static int
is_unique_test(struct flaky_store_ingest *w, const char *name,
    int64_t *ret, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int64_t		 n = 0;
	int		 r, seen;

	if ((r = is_test(w, name, ret, err, errlen)) < 0)
		return r;
	if ((seen = is_seen_bit(w, *ret, &r)) == 0)
		return 0;
	if (r < 0)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	if ((st = is_stmt(w, IS_SEEN)) == NULL)
		return store_sql_error(w->s, err, errlen, "preparing");
	sql_bind_int64(st, 1, *ret);
	sql_bind_int(st, 2, seen == 1 ? 2 : 1);
	if (sql_step(st) == SQL_ROW)
		n = sql_column_int64(st, 0);
	if (sql_step(st) != SQL_DONE || n < 1)
		return store_sql_error(w->s, err, errlen, "counting a test");
	if (n == 1)
		return 0;
	flaky_buf_reset(&w->name);
	flaky_buf_printf(&w->name, "%s #%lld", name, (long long)n);
	if (w->name.oom)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	return is_test(w, flaky_buf_cstr(&w->name), ret, err, errlen);
}

/* The id of a (redacted) failure message's normalized form. */
static int
is_message(struct flaky_store_ingest *w, const char *msg, int64_t *ret,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int64_t		 fp;

	flaky_buf_reset(&w->norm);
	if (flaky_normalize(msg, strlen(msg), &w->norm) < 0)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	fp = flaky_fingerprint(flaky_buf_cstr(&w->norm), w->norm.len);
	if ((st = is_stmt(w, IS_MSG_FIND)) == NULL)
		return store_sql_error(w->s, err, errlen, "preparing");
	sql_bind_int64(st, 1, fp);
	if ((*ret = is_find(st)) != 0)
		return 0;
	if ((st = is_stmt(w, IS_MSG_ADD)) == NULL)
		return store_sql_error(w->s, err, errlen, "preparing");
	sql_bind_int64(st, 1, fp);
	sql_bind_text(st, 2, flaky_buf_cstr(&w->norm), -1, SQL_STATIC);
	if (sql_step(st) != SQL_DONE)
		return store_sql_error(w->s, err, errlen, "adding a message");
	*ret = sql_last_insert_rowid(w->db);
	return 0;
}

/* The attempts of the result at position pos. */
static int
is_attempts(struct flaky_store_ingest *w, unsigned pos,
    const struct flaky_attempt *a, size_t na, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	for (size_t i = 0; i < na; i++) {
		if ((st = is_stmt(w, IS_ATTEMPT)) == NULL)
			return store_sql_error(w->s, err, errlen, "preparing");
		sql_bind_int64(st, 1, w->run_id);
		sql_bind_int64(st, 2, pos);
		sql_bind_int(st, 3, a[i].attempt);
		sql_bind_int(st, 4, a[i].outcome);
		if (a[i].message != NULL)
			sql_bind_text(st, 5, a[i].message, -1,
			    SQL_STATIC);
		if ((r = is_done(w, st, "adding an attempt", err,
		    errlen)) < 0)
			return r;
	}
	return 0;
}

/* A copy of s in the batch's text: its offset, -1 for NULL. */
static long
is_keep(struct flaky_store_ingest *w, const char *s)
{
	long	 off = (long)w->text.len;

	if (s == NULL)
		return -1;
	flaky_buf_add(&w->text, s, strlen(s) + 1);
	return off;
}

/* Bind a waiting result's columns from index i. */
static void
is_bind_row(struct flaky_store_ingest *w, struct sql_stmt *st, int i,
    const struct is_row *row)
{
	sql_bind_int64(st, i, w->run_id);
	sql_bind_int64(st, i + 1, row->position);
	sql_bind_int64(st, i + 2, row->tid);
	sql_bind_int(st, i + 3, row->outcome);
	if (row->dur >= 0)
		sql_bind_int64(st, i + 4, row->dur);
	if (row->mid != 0)
		sql_bind_int64(st, i + 5, row->mid);
	if (row->sig >= 0)
		sql_bind_text(st, i + 6, w->text.data + row->sig, -1,
		    SQL_STATIC);
	if (row->msg >= 0)
		sql_bind_text(st, i + 7, w->text.data + row->msg, -1,
		    SQL_STATIC);
}

/* The statement of a full batch: IS_BATCH rows of IS_RESULT. */
static struct sql_stmt *
is_many(struct flaky_store_ingest *w)
{
	struct flaky_buf b;

	if (w->many != NULL) {
		sql_reset(w->many);
		sql_clear_bindings(w->many);
		return w->many;
	}
	flaky_buf_init(&b);
	flaky_buf_adds(&b, "INSERT INTO results (run_id, position, test_id, "
	    "outcome, duration_us, message_id, signature, message) VALUES ");
	for (int i = 0; i < IS_BATCH; i++)
		flaky_buf_adds(&b, i ? ", (?, ?, ?, ?, ?, ?, ?, ?)" :
		    "(?, ?, ?, ?, ?, ?, ?, ?)");
	if (!b.oom && is_prepare(w, flaky_buf_cstr(&b), &w->many) != SQL_OK)
		w->many = NULL;
	flaky_buf_free(&b);
	return w->many;
}

/* Write the waiting results: a full batch with one statement, fewer one
 * by one. */
static int
is_flush(struct flaky_store_ingest *w, char *err, size_t errlen)
{
	struct sql_stmt	*st = NULL;
	int		 full = w->nrows == IS_BATCH, r = 0;

	if (w->text.oom)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	if (full && (st = is_many(w)) == NULL)
		return store_sql_error(w->s, err, errlen, "preparing");
	for (size_t i = 0; r == 0 && i < w->nrows; i++) {
		if (!full && (st = is_stmt(w, IS_RESULT)) == NULL)
			return store_sql_error(w->s, err, errlen, "preparing");
		is_bind_row(w, st, full ? (int)i * IS_COLS + 1 : 1,
		    &w->rows[i]);
		if (!full)
			r = is_done(w, st, "adding a result", err, errlen);
	}
	if (full)
		r = is_done(w, st, "adding results", err, errlen);
	/* nothing may point into the text once it is reused */
	if (st != NULL) {
		sql_reset(st);
		sql_clear_bindings(st);
	}
	w->nrows = 0;
	flaky_buf_reset(&w->text);
	return r;
}

int
flaky_store_ingest_add(struct flaky_store_ingest *w,
    const struct flaky_result *res, const struct flaky_attempt *a,
    size_t na, char *err, size_t errlen)
{
	struct is_row	*row = &w->rows[w->nrows];
	const char	*msg = NULL;
	int		 failed = FLAKY_FAILED(res->outcome), r;

	if (res->test == NULL)
		return flaky_error(err, errlen, EINVAL, "%s: result %u of the "
		    "run has no test id", flaky_store_name(w->s), res->position);
	memset(row, 0, sizeof *row);
	if ((r = is_unique_test(w, res->test, &row->tid, err, errlen)) < 0)
		return r;
	if (failed && res->message != NULL) {
		if ((msg = store_redacted(w->s, res->message, strlen(res->message),
		    &w->msg, NULL)) == NULL)
			return flaky_error(err, errlen, ENOMEM, "out of "
			    "memory");
		if ((r = is_message(w, msg, &row->mid, err, errlen)) < 0)
			return r;
	}
	row->position = res->position;
	row->outcome = res->outcome;
	row->dur = res->duration_us;
	row->sig = is_keep(w, failed ? res->signature : NULL);
	row->msg = is_keep(w, msg);
	if (++w->nrows == IS_BATCH && (r = is_flush(w, err, errlen)) < 0)
		return r;
	if ((r = is_attempts(w, res->position, a, na, err, errlen)) < 0)
		return r;
	w->tests++;
	w->failures += failed;
	return 0;
}

int
flaky_store_ingest_resign(struct flaky_store_ingest *w, const char *sig,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	if ((r = is_flush(w, err, errlen)) < 0)
		return r;
	if (is_prepare(w, "UPDATE results SET signature = ?2 "
	    "WHERE run_id = ?1 AND signature IS NOT NULL", &st) != SQL_OK)
		return store_sql_error(w->s, err, errlen, "preparing");
	sql_bind_int64(st, 1, w->run_id);
	sql_bind_text(st, 2, sig, -1, SQL_STATIC);
	r = is_done(w, st, "classifying the run", err, errlen);
	sql_finalize(st);
	return r;
}

/* One statement over the run's results at positions [from, to):
 * ?1 the run, ?2 the day, ?3 and ?4 the positions. */
static int
is_rollup_sql(struct flaky_store_ingest *w, int64_t day, int64_t from,
    int64_t to, const char *sql, const char *what, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	if (sql_prepare_v2(w->db, sql, -1, &st, NULL) != SQL_OK)
		return store_sql_error(w->s, err, errlen, "preparing");
	sql_bind_int64(st, 1, w->run_id);
	sql_bind_int64(st, 2, day);
	sql_bind_int64(st, 3, from);
	sql_bind_int64(st, 4, to);
	r = is_done(w, st, what, err, errlen);
	sql_finalize(st);
	return r;
}

/* The rollups of the run's results at positions [from, to), added to
 * their tests' day at once: what flaky_store_run_finish adds result by
 * result, read back from the results (a run's rows are neighbours). Done
 * at the end, when the run's time is known (a JUnit file may name it
 * after its first testcase). */
static int
is_rollups_part(struct flaky_store_ingest *w, int64_t day, int64_t from,
    int64_t to, char *err, size_t errlen)
{
	int	 r;

	r = is_rollup_sql(w, day, from, to,
	    "INSERT INTO rollups (test_id, day, runs, failures, skips, "
	    "pass_us, fail_us, pass_hist, fail_hist) "
	    "SELECT test_id, ?2, c, f, 1 - c, "
	    "CASE WHEN c AND NOT f THEN coalesce(duration_us, 0) ELSE 0 END, "
	    "CASE WHEN f THEN coalesce(duration_us, 0) ELSE 0 END, "
	    "flaky_hist_add(NULL, CASE WHEN c AND NOT f THEN duration_us END), "
	    "flaky_hist_add(NULL, CASE WHEN f THEN duration_us END) "
	    "FROM (SELECT test_id, duration_us, outcome IN (1, 2) AS f, "
	    "outcome IN (0, 1, 2, 5) AS c FROM results WHERE run_id = ?1 "
	    "AND position >= ?3 AND position < ?4) "
	    "WHERE true ON CONFLICT (test_id, day) DO UPDATE SET "
	    "runs = runs + excluded.runs, "
	    "failures = failures + excluded.failures, "
	    "skips = skips + excluded.skips, "
	    "pass_us = pass_us + excluded.pass_us, "
	    "fail_us = fail_us + excluded.fail_us, "
	    "pass_hist = CASE WHEN excluded.pass_hist IS NULL THEN pass_hist "
	    "ELSE flaky_hist_add(pass_hist, excluded.pass_hist) END, "
	    "fail_hist = CASE WHEN excluded.fail_hist IS NULL THEN fail_hist "
	    "ELSE flaky_hist_add(fail_hist, excluded.fail_hist) END",
	    "updating the rollups", err, errlen);
	if (r < 0)
		return r;
	/* and per box (schema/0014-boxrollups15.sql): the run's box as
	 * stored, a row for each test it had, as for the rollups */
	return is_rollup_sql(w, day, from, to,
	    "INSERT INTO box_rollups (day, test_id, box, runs, failures) "
	    "SELECT ?2, r.test_id, coalesce(ru.box, ''), "
	    "sum(r.outcome IN (0, 1, 2, 5)), sum(r.outcome IN (1, 2)) "
	    "FROM runs ru JOIN results r ON r.run_id = ru.id "
	    "WHERE ru.id = ?1 AND r.position >= ?3 AND r.position < ?4 "
	    "GROUP BY r.test_id, ru.box "
	    "ON CONFLICT (day, test_id, box) DO UPDATE SET "
	    "runs = box_rollups.runs + excluded.runs, "
	    "failures = box_rollups.failures + excluded.failures",
	    "updating the rollups per box", err, errlen);
}

/* The rollups of the whole run, a part of its positions at a time for a
 * writer that yields between them (each test has one result in a run:
 * the parts add up to the whole). */
static int
is_rollups(struct flaky_store_ingest *w, int64_t day, char *err,
    size_t errlen)
{
	int64_t	 part = w->yield != NULL ? IS_ROLLUP_PART : INT64_MAX / 2;
	int	 r = 0;

	for (int64_t from = 0; r == 0 && from < w->tests; from += part) {
		if (from > 0 && (r = w->yield(w->yield_arg, err, errlen)) < 0)
			break;
		r = is_rollups_part(w, day, from, from + part, err, errlen);
	}
	return r;
}

void
flaky_store_ingest_set_yield(struct flaky_store_ingest *w,
    int (*fn)(void *, char *, size_t), void *arg)
{
	w->yield = fn;
	w->yield_arg = arg;
}

/* PostgreSQL: the run is final, its results go over in one statement,
 * whose trigger adds them to the rollups (schema/pg/0002). */
static int
is_pg_move(struct flaky_store_ingest *w, int64_t started_ms, char *err,
    size_t errlen)
{
	int	 r;

	if ((r = store_pg_week(w->s, started_ms, err, errlen)) < 0)
		return r;
	if (sql_exec(w->db, "INSERT INTO results (run_id, position, test_id, "
	    "outcome, duration_us, message_id, signature, message) SELECT "
	    "run_id, position, test_id, outcome, duration_us, message_id, "
	    "signature, message FROM temp.ingest_results ORDER BY position; "
	    "DELETE FROM temp.ingest_results", NULL, NULL, NULL) != SQL_OK)
		return store_sql_error(w->s, err, errlen, "adding the results");
	return 0;
}

int
flaky_store_ingest_finish(struct flaky_store_ingest *w,
    struct flaky_run_record *rec, const struct flaky_results *meta,
    char *err, size_t errlen)
{
	struct flaky_results none;
	struct sql_stmt	*st;
	int		 r;

	/* The row as flaky_store_run_finish completes any run, with no
	 * results to add: they are in. */
	if ((r = is_flush(w, err, errlen)) < 0)
		return r;
	/* Rates count complete runs, as flaky_store_run_finish has it.
	 * First, while the run is still running: a writer that yields
	 * commits between their parts, and a run of an upload that is
	 * still running says the upload is being stored (store/ci.c). */
	if (!sql_is_pg(w->db) && rec->kind != FLAKY_KIND_ALONE &&
	    rec->incomplete == NULL && (r = is_rollups(w, rec->started_ms /
	    86400000, err, errlen)) < 0)
		return r;
	none = *meta;
	none.v = NULL;
	none.n = none.cap = 0;
	rec->id = w->run_id;
	rec->target_id = w->target_id;
	if ((r = flaky_store_run_finish(w->s, rec, &none, err, errlen)) < 0)
		return r;
	if (sql_prepare_v2(w->db, "UPDATE runs SET tests = ?2, "
	    "failures = ?3 WHERE id = ?1", -1, &st, NULL) != SQL_OK)
		return store_sql_error(w->s, err, errlen, "preparing");
	sql_bind_int64(st, 1, w->run_id);
	sql_bind_int64(st, 2, w->tests);
	sql_bind_int64(st, 3, w->failures);
	r = is_done(w, st, "completing the run", err, errlen);
	sql_finalize(st);
	if (r == 0 && sql_is_pg(w->db)) {
		/* Flips read the run's results: on the server they are in
		 * results only now, so flaky_store_run_finish found none
		 * (and counted nothing); count them here. */
		if ((r = is_pg_move(w, rec->started_ms, err, errlen)) < 0 ||
		    rec->kind == FLAKY_KIND_ALONE || rec->incomplete != NULL ||
		    rec->revision == NULL)
			return r;
		return store_flips_run(w->s, w->run_id, w->target_id,
		    rec->revision, rec->started_ms, w->failures, err, errlen);
	}
	/* The budget and failure rollups count a run of any kind
	 * (write_sql.c) */
	for (int i = 0; r == 0 && w->failures > 0 && i < 2; i++) {
		if (sql_prepare_v2(w->db, i == 0 ? store_sql_budget_run :
		    store_sql_failure_rollups_run, -1, &st, NULL) != SQL_OK)
			return store_sql_error(w->s, err, errlen, "preparing");
		sql_bind_int64(st, 1, w->run_id);
		r = is_done(w, st, i == 0 ? "adding to the rerun budget" :
		    "updating the failure rollups", err, errlen);
		sql_finalize(st);
	}
	return r;
}

void
flaky_store_ingest_free(struct flaky_store_ingest *w)
{
	if (w == NULL)
		return;
	for (size_t i = 0; i < IS_COUNT; i++)
		sql_finalize(w->st[i]);
	sql_finalize(w->many);
	flaky_buf_free(&w->text);
	flaky_buf_free(&w->name);
	flaky_buf_free(&w->msg);
	flaky_buf_free(&w->norm);
	free(w->seen);
	free(w);
}
