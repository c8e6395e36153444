/* The outbox of a box in a fleet: finished runs queued by the triggers of
 * schema 0012 (polluters by those of 0013), read in batches for flakyd's
 * shipper and taken off the queues once the server has committed them
 * (docs/fleet.md). Reads happen
 * on the shipper's own connection, in one read transaction per batch, so
 * the daemon's writes never wait for them; the one write, taking a batch
 * off the queue, is a short BEGIN IMMEDIATE like every other. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "util/util.h"
#include "store/store.h"
#include "store_int.h"

/* The order of the columns handed to a sink (and of the server's staging
 * tables, lib/fleet/ship.c). */
const char *const flaky_ship_run_cols[FLAKY_SHIP_RUN_NCOLS] = {
	"local_id", "target", "status", "kind", "trigger", "started_ms",
	"ended_ms", "duration_us", "exit_code", "signal", "revision",
	"runner", "runner_version", "seed", "tests", "failures",
	"summary_total", "in_flight", "loadavg", "user_us", "sys_us",
	"maxrss_kb", "output_bytes", "output_dropped", "error",
	"content_hash", "incomplete", "perturbation", "stdout_hash",
	"stdout_size", "stdout_data", "stderr_hash", "stderr_size",
	"stderr_data", "selected", "target_command", "target_dir",
};
/* Results name their test by its local id: a batch's tests come once
 * each after its runs, not once per result (most of the bytes, and a text
 * join on the server for each row). */
const char *const flaky_ship_result_cols[FLAKY_SHIP_RESULT_NCOLS] = {
	"local_run", "position", "local_test", "outcome", "duration_us",
	"signature", "message", "fingerprint",
};
const char *const flaky_ship_test_cols[FLAKY_SHIP_TEST_NCOLS] = {
	"local_test", "target", "name",
};
/* A rerun's earlier attempts of a result (ingest of JUnit, pytest), keyed
 * on the server by its run id there, mapped from (box, local_run). */
const char *const flaky_ship_attempt_cols[FLAKY_SHIP_ATTEMPT_NCOLS] = {
	"local_run", "position", "attempt", "outcome", "message",
};
/* A polluter found on this box: its victim and the run it narrowed by
 * local id, the server maps both. */
const char *const flaky_ship_polluter_cols[FLAKY_SHIP_POLLUTER_NCOLS] = {
	"local_test", "local_run", "candidates", "members", "reruns",
	"minimal", "command", "made_ms",
};

/* Queued runs from a position on; r.id NULL: pruned since. Column 0 is
 * the queue's seq, then flaky_ship_run_cols. The target's command and
 * directory ride with each run, as the box knows them now: the server's
 * tickets reproduce with them (cd DIR && ...). */
static const char sql_runs[] =
    "SELECT q.seq, r.id, tg.name, r.status, r.kind, r.trigger, "
    "r.started_ms, r.ended_ms, r.duration_us, r.exit_code, r.signal, "
    "r.revision, r.runner, r.runner_version, r.seed, r.tests, r.failures, "
    "r.summary_total, r.in_flight, r.loadavg, r.user_us, r.sys_us, "
    "r.maxrss_kb, r.output_bytes, r.output_dropped, r.error, "
    "r.content_hash, r.incomplete, r.perturbation, o.hash, o.size, "
    "sqlar_uncompress(o.data, o.size), e.hash, e.size, "
    "sqlar_uncompress(e.data, e.size), r.selected, tg.command, tg.dir "
    "FROM ship_queue q "
    "LEFT JOIN runs r ON r.id = q.run_id "
    "LEFT JOIN targets tg ON tg.id = r.target_id "
    "LEFT JOIN outputs o ON o.id = r.stdout_id "
    "LEFT JOIN outputs e ON e.id = r.stderr_id "
    "ORDER BY q.seq";

/* A run's results in run order: flaky_ship_result_cols but the first
 * (the run), which comes from the run. */
static const char sql_results[] =
    "SELECT res.position, res.test_id, res.outcome, res.duration_us, "
    "res.signature, res.message, m.fingerprint "
    "FROM results res LEFT JOIN messages m ON m.id = res.message_id "
    "WHERE res.run_id = ? ORDER BY res.position";

/* A run's attempts: flaky_ship_attempt_cols but the first. */
static const char sql_attempts[] =
    "SELECT position, attempt, outcome, message FROM attempts "
    "WHERE run_id = ? ORDER BY position, attempt";

/* The tests the results of a batch (queue positions ?1 to ?2) and its
 * polluters (positions to ?3) name, and the normalized texts of their
 * messages (fingerprint, text): a message row rides along as a test row
 * with local_test NULL. */
static const char sql_tests[] =
    "SELECT t.id, tg.name, t.name FROM tests t "
    "JOIN targets tg ON tg.id = t.target_id WHERE t.id IN ("
    "SELECT res.test_id FROM ship_queue q JOIN results res "
    "ON res.run_id = q.run_id WHERE q.seq BETWEEN ?1 AND ?2 "
    "UNION SELECT test_id FROM ship_polluters WHERE seq <= ?3) "
    "UNION ALL SELECT NULL, m.fingerprint, m.normalized FROM messages m "
    "WHERE m.id IN (SELECT res.message_id FROM ship_queue q "
    "JOIN results res ON res.run_id = q.run_id WHERE q.seq BETWEEN ?1 "
    "AND ?2 AND res.message_id IS NOT NULL)";

/* The polluters queued up to position ?1, as they are now (a finding
 * made twice goes once, the newer). */
static const char sql_polluters[] =
    "SELECT p.test_id, p.from_run_id, p.candidates, p.members, p.reruns, "
    "p.minimal, p.command, p.made_ms FROM polluters p WHERE p.test_id IN ("
    "SELECT test_id FROM ship_polluters WHERE seq <= ?1) ORDER BY p.test_id";

/* Column i of st as text into v[o], len[o]. */
static void
col(struct sql_stmt *st, int i, const char **v, size_t *len, size_t o)
{
	if (sql_column_type(st, i) == SQL_NULL) {
		v[o] = NULL;
		len[o] = 0;
		return;
	}
	/* Blobs as they are: the sink knows which columns are bytes. */
	if (sql_column_type(st, i) == SQL_BLOB)
		v[o] = sql_column_blob(st, i);
	else
		v[o] = (const char *)sql_column_text(st, i);
	len[o] = (size_t)sql_column_bytes(st, i);
	if (v[o] == NULL)
		v[o] = "";
}

/* The widest row handed to a sink but a run. */
#define SHIP_ROW_NCOLS	FLAKY_SHIP_RESULT_NCOLS
_Static_assert(FLAKY_SHIP_ATTEMPT_NCOLS <= SHIP_ROW_NCOLS &&
    FLAKY_SHIP_TEST_NCOLS <= SHIP_ROW_NCOLS &&
    FLAKY_SHIP_POLLUTER_NCOLS <= SHIP_ROW_NCOLS, "read_rows' arrays");
typedef int (*ship_fn)(void *, const char *const *, const size_t *, char *,
    size_t);

/* The rows of st to fn, ncols columns each: with run, the run's local id
 * and then st's first ncols - 1 columns (a run's results, attempts);
 * without, st's ncols columns. */
static int
read_rows(struct flaky_store *s, struct sql_stmt *st, const char *run,
    size_t runlen, ship_fn fn, void *arg, int ncols, size_t *n,
    const char *what, char *err, size_t errlen)
{
	const char	*v[SHIP_ROW_NCOLS];
	size_t		 len[SHIP_ROW_NCOLS];
	int		 rc, r, o = run != NULL;

	v[0] = run;
	len[0] = runlen;
	while ((rc = sql_step(st)) == SQL_ROW) {
		for (int i = 0; i < ncols - o; i++)
			col(st, i, v, len, (size_t)(i + o));
		if ((r = fn(arg, v, len, err, errlen)) != 0)
			return r;
		(*n)++;
	}
	if (rc != SQL_DONE)
		return store_sql_error(s, err, errlen, what);
	return 0;
}

/* One run's results, then its attempts, to the sink. */
static int
read_run(struct flaky_store *s, struct sql_stmt *xs, struct sql_stmt *as,
    int64_t id, const char *run, size_t runlen,
    const struct flaky_ship_sink *k, struct flaky_ship_batch *b, char *err,
    size_t errlen)
{
	int	 r;

	sql_reset(xs);
	sql_bind_int64(xs, 1, id);
	if ((r = read_rows(s, xs, run, runlen, k->result, k->arg,
	    FLAKY_SHIP_RESULT_NCOLS, &b->results, "reading results to ship",
	    err, errlen)) != 0 || k->attempt == NULL)
		return r;
	sql_reset(as);
	sql_bind_int64(as, 1, id);
	return read_rows(s, as, run, runlen, k->attempt, k->arg,
	    FLAKY_SHIP_ATTEMPT_NCOLS, &b->attempts, "reading attempts to ship",
	    err, errlen);
}

/* The batch under the open read transaction. */
static int
read_batch(struct flaky_store *s, struct sql_stmt *rs, struct sql_stmt *xs,
    struct sql_stmt *as, size_t max_runs, size_t max_results,
    const struct flaky_ship_sink *k, struct flaky_ship_batch *b, char *err,
    size_t errlen)
{
	const char	*v[FLAKY_SHIP_RUN_NCOLS];
	size_t		 len[FLAKY_SHIP_RUN_NCOLS];
	int		 rc = SQL_DONE, r;

	while (b->runs < max_runs && (b->runs == 0 || b->results <
	    max_results) && (rc = sql_step(rs)) == SQL_ROW) {
		b->last_seq = sql_column_int64(rs, 0);
		if (sql_column_type(rs, 1) == SQL_NULL)
			continue;	/* pruned before it shipped */
		for (int i = 0; i < FLAKY_SHIP_RUN_NCOLS; i++)
			col(rs, i + 1, v, len, (size_t)i);
		if ((r = k->run(k->arg, v, len, err, errlen)) != 0)
			return r;
		b->runs++;
		if ((r = read_run(s, xs, as, sql_column_int64(rs, 1), v[0],
		    len[0], k, b, err, errlen)) != 0)
			return r;
	}
	if (b->runs < max_runs && (b->runs == 0 || b->results < max_results)
	    && rc != SQL_DONE)
		return store_sql_error(s, err, errlen, "reading runs to ship");
	return 0;
}

/* The tests and messages the batch's results and polluters name, then
 * its polluters, to the sink. */
static int
read_names(struct flaky_store *s, const struct flaky_ship_sink *k,
    struct flaky_ship_batch *b, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	size_t		 n = 0;
	int		 r;

	if (k->polluter != NULL && (r = store_scalar(s, "SELECT "
	    "coalesce(max(seq), 0) FROM ship_polluters", 0, 0,
	    &b->polluter_seq, err, errlen)) < 0)
		return r;
	if ((r = store_prepare(s, sql_tests, &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, 1);
	sql_bind_int64(st, 2, b->last_seq);
	sql_bind_int64(st, 3, b->polluter_seq);
	r = read_rows(s, st, NULL, 0, k->test, k->arg, FLAKY_SHIP_TEST_NCOLS,
	    &n, "reading tests to ship", err, errlen);
	sql_finalize(st);
	if (r != 0 || b->polluter_seq == 0)
		return r;
	if ((r = store_prepare(s, sql_polluters, &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, b->polluter_seq);
	r = read_rows(s, st, NULL, 0, k->polluter, k->arg,
	    FLAKY_SHIP_POLLUTER_NCOLS, &b->polluters,
	    "reading polluters to ship", err, errlen);
	sql_finalize(st);
	return r;
}

/* Read a batch of queued runs, whole, for a sink. */
int
flaky_store_ship_read(struct flaky_store *s, size_t max_runs,
    size_t max_results, const struct flaky_ship_sink *k,
    struct flaky_ship_batch *b, char *err, size_t errlen)
{
	struct sql_stmt	*rs = NULL, *xs = NULL, *as = NULL;
	int		 r;

	memset(b, 0, sizeof *b);
	if ((r = store_exec(s, "BEGIN", err, errlen)) < 0)
		return r;
	if ((r = store_prepare(s, sql_runs, &rs, err, errlen)) == 0 &&
	    (r = store_prepare(s, sql_results, &xs, err, errlen)) == 0 &&
	    (r = store_prepare(s, sql_attempts, &as, err, errlen)) == 0)
		r = read_batch(s, rs, xs, as, max_runs, max_results, k, b,
		    err, errlen);
	if (r == 0 && b->runs > 0)
		r = read_names(s, k, b, err, errlen);
	sql_finalize(rs);
	sql_finalize(xs);
	sql_finalize(as);
	sql_exec(store_db(s), "COMMIT", NULL, NULL, NULL);
	if (r < 0)
		memset(b, 0, sizeof *b);
	return r;
}

/* Run sql with ?1 (and ?2, when it has one) bound. */
static int
ship_exec(struct flaky_store *s, const char *sql, int64_t a1, int64_t a2,
    const char *what, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	if ((r = store_prepare(s, sql, &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, a1);
	if (strstr(sql, "?2") != NULL)
		sql_bind_int64(st, 2, a2);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, what);
	sql_finalize(st);
	return r;
}

/* Take a shipped batch off the queues and move the high-water mark. */
int
flaky_store_ship_done(struct flaky_store *s, const struct flaky_ship_batch *b,
    char *err, size_t errlen)
{
	int	 r;

	if (b->last_seq <= 0)
		return 0;
	if ((r = flaky_store_begin(s, err, errlen)) < 0)
		return r;
	if ((r = ship_exec(s, "DELETE FROM ship_queue WHERE seq <= ?1",
	    b->last_seq, 0, "taking shipped runs off the queue", err,
	    errlen)) < 0 ||
	    (r = ship_exec(s, "UPDATE ship_state SET value = CASE key "
	    "WHEN 'shipped_seq' THEN max(value, ?1) ELSE value + ?2 END "
	    "WHERE key IN ('shipped_seq', 'shipped_runs')", b->last_seq,
	    (int64_t)b->runs, "saving the shipped mark", err, errlen)) < 0 ||
	    (b->polluter_seq > 0 && (r = ship_exec(s, "DELETE FROM "
	    "ship_polluters WHERE seq <= ?1", b->polluter_seq, 0,
	    "taking shipped polluters off the queue", err, errlen)) < 0)) {
		flaky_store_rollback(s);
		return r;
	}
	return flaky_store_commit(s, err, errlen);
}

/* How many finished runs wait, the oldest's end, and how many shipped. */
int
flaky_store_ship_backlog(struct flaky_store *s, struct flaky_ship_backlog *ret,
    char *err, size_t errlen)
{
	int	 r;

	memset(ret, 0, sizeof *ret);
	/* a server is where runs are shipped to: it has no outbox */
	if (sql_is_pg(store_db(s)))
		return 0;
	if ((r = store_scalar(s, "SELECT count(*) FROM ship_queue", 0, 0,
	    &ret->runs, err, errlen)) < 0 ||
	    (r = store_scalar(s, "SELECT coalesce(r.ended_ms, r.started_ms) "
	    "FROM ship_queue q JOIN runs r ON r.id = q.run_id "
	    "ORDER BY q.seq LIMIT 1", 0, 0, &ret->oldest_ms, err,
	    errlen)) < 0 ||
	    (r = store_scalar(s, "SELECT value FROM ship_state "
	    "WHERE key = 'shipped_runs'", 0, 0, &ret->shipped, err,
	    errlen)) < 0)
		return r;
	return 0;
}

/* The random id this database claims its box name with, made on first
 * use (a database made from the schema image has none yet). */
int
flaky_store_box_id(struct flaky_store *s, char *buf, size_t len, char *err,
    size_t errlen)
{
	struct sql_stmt	*st = NULL;
	int		 r;

	if ((r = flaky_store_begin(s, err, errlen)) < 0)
		return r;
	if ((r = store_exec(s, "INSERT OR IGNORE INTO ship_state (key, value) "
	    "VALUES ('box_id', lower(hex(randomblob(16))))", err,
	    errlen)) < 0 ||
	    (r = store_prepare(s, "SELECT value FROM ship_state "
	    "WHERE key = 'box_id'", &st, err, errlen)) < 0)
		goto out;
	if (sql_step(st) == SQL_ROW &&
	    sql_column_text(st, 0) != NULL)
		snprintf(buf, len, "%s", sql_column_text(st, 0));
	else
		r = store_sql_error(s, err, errlen, "reading the box id");
out:
	sql_finalize(st);
	if (r == 0)
		return flaky_store_commit(s, err, errlen);
	flaky_store_rollback(s);
	return r;
}
