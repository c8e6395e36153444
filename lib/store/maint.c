/* Keeping the database: retention (prune removes the raw data of old runs
 * in short transactions, the rollups stay) and its statistics. */
#include "buildconf.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

/* Runs whose raw data prune removes per transaction: flakyd calls prune
 * and must not hold the write lock for long. */
#define PRUNE_BATCH		50

int
flaky_store_prune(struct flaky_store *s, int64_t before_ms,
    struct flaky_prune_stats *ps, char *err, size_t errlen)
{
	struct sql_stmt	*st = NULL;
	int64_t		 ids[PRUNE_BATCH], after = 0, dummy;
	int		 r = 0, rc, n;

	memset(ps, 0, sizeof *ps);
	/* On PostgreSQL the weeks wholly before the horizon go first, a
	 * partition at a time (schema/pg/0002, 0008); the runs of the week
	 * it cuts are pruned one by one. */
	if (sql_is_pg(store_db(s)) && ((r = flaky_store_begin(s, err,
	    errlen)) < 0 || (r = store_scalar(s, "SELECT "
	    "flaky_drop_partitions(?1)", before_ms, 0, &dummy, err,
	    errlen)) < 0 || (r = flaky_store_commit(s, err, errlen)) < 0)) {
		flaky_store_rollback(s);
		return r;
	}
	for (;;) {
		/* The next batch of runs that still hold raw data. */
		if ((r = store_prepare(s, "SELECT id FROM runs WHERE id > ?1 "
		    "AND started_ms < ?2 AND (stdout_id IS NOT NULL OR "
		    "stderr_id IS NOT NULL OR EXISTS (SELECT 1 FROM results "
		    "WHERE run_id = runs.id) OR EXISTS (SELECT 1 FROM "
		    "stack_dumps WHERE run_id = runs.id)) ORDER BY id LIMIT 50",
		    &st, err,
		    errlen)) < 0)
			return r;
		sql_bind_int64(st, 1, after);
		sql_bind_int64(st, 2, before_ms);
		n = 0;
		while ((rc = sql_step(st)) == SQL_ROW && n < PRUNE_BATCH)
			ids[n++] = sql_column_int64(st, 0);
		if (rc != SQL_DONE && rc != SQL_ROW)
			r = store_sql_error(s, err, errlen, "pruning");
		sql_finalize(st);
		if (r < 0 || n == 0)
			break;
		if ((r = flaky_store_begin(s, err, errlen)) < 0)
			return r;
		for (int i = 0; i < n && r == 0; i++) {
			/* The run's budget outlives its results: it is in
			 * budget since the run was stored (0015-budget15). */
			if ((r = store_exec_ints(s, "DELETE FROM results WHERE run_id = ?1",
			    ids[i], 0, &ps->results, err, errlen)) < 0 ||
			    (r = store_exec_ints(s, "DELETE FROM attempts WHERE "
			    "run_id = ?1", ids[i], 0, NULL, err, errlen)) < 0 ||
			    (r = store_exec_ints(s, "DELETE FROM headroom WHERE "
			    "run_id = ?1", ids[i], 0, NULL, err, errlen)) < 0 ||
			    /* a hung run's stacks; where it hung stays */
			    (r = store_exec_ints(s, "DELETE FROM stack_dumps WHERE "
			    "run_id = ?1", ids[i], 0, NULL, err, errlen)) < 0 ||
			    (r = store_exec_ints(s, "UPDATE runs SET stdout_id = NULL, "
			    "stderr_id = NULL WHERE id = ?1", ids[i], 0, NULL, err,
			    errlen)) < 0)
				break;
			ps->runs++;
		}
		if (r == 0)
			r = store_exec_ints(s, "INSERT INTO store_meta (key, value) VALUES "
			    "('pruned_before_ms', ?1) ON CONFLICT (key) DO UPDATE "
			    "SET value = max(store_meta.value, ?1)", before_ms, 0,
			    NULL, err,
			    errlen);
		if (r < 0) {
			flaky_store_rollback(s);
			return r;
		}
		if ((r = flaky_store_commit(s, err, errlen)) < 0)
			return r;
		after = ids[n - 1];
	}
	if (r < 0)
		return r;
	if ((r = flaky_store_begin(s, err, errlen)) < 0)
		return r;
	/* Messages are referenced by failed results only. */
	dummy = 0;
	if ((r = store_exec_ints(s, "DELETE FROM messages WHERE id NOT IN (SELECT "
	    "message_id FROM results WHERE outcome IN (1, 2) AND message_id "
	    "IS NOT NULL)", 0, 0, &ps->messages, err, errlen)) < 0 ||
	    /* Output is shared between runs: kept while any run names it. */
	    (r = store_exec_ints(s, "DELETE FROM outputs WHERE id NOT IN (SELECT "
	    "stdout_id FROM runs WHERE stdout_id IS NOT NULL UNION ALL "
	    "SELECT stderr_id FROM runs WHERE stderr_id IS NOT NULL)", 0, 0,
	    &dummy, err, errlen)) < 0 ||
	    (r = store_exec_ints(s, "INSERT INTO store_meta (key, value) VALUES "
	    "('pruned_before_ms', ?1) ON CONFLICT (key) DO UPDATE SET "
	    "value = max(store_meta.value, ?1)", before_ms, 0, &dummy, err,
	    errlen)) < 0) {
		flaky_store_rollback(s);
		return r;
	}
	return flaky_store_commit(s, err, errlen);
}

/* The size of a file, 0 when it does not exist. */
static int64_t
file_size(const char *path, const char *suffix)
{
	struct stat	 sb;
	char		 p[4096];

	snprintf(p, sizeof p, "%s%s", path, suffix);
	return stat(p, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

int
flaky_store_db_stats(struct flaky_store *s, struct flaky_db_stats *d,
    char *err, size_t errlen)
{
	static const struct {
		const char	*sql;
		size_t		 off;
		int64_t		 def;
	} q[] = {
#define F(x)	offsetof(struct flaky_db_stats, x)
		{ "PRAGMA page_size", F(page_size), 0 },
		{ "PRAGMA page_count", F(pages), 0 },
		{ "PRAGMA freelist_count", F(free_pages), 0 },
		{ "SELECT count(*) FROM targets", F(targets), 0 },
		{ "SELECT count(*) FROM tests", F(tests), 0 },
		{ "SELECT count(*) FROM runs", F(runs), 0 },
		{ "SELECT count(*) FROM results", F(results), 0 },
		{ "SELECT count(*) FROM messages", F(messages), 0 },
		{ "SELECT count(*) FROM rollups", F(rollups), 0 },
		{ "SELECT count(*) FROM budget", F(budget), 0 },
		{ "SELECT count(*) FROM attempts", F(attempts), 0 },
		{ "SELECT count(*) FROM quarantine", F(quarantined), 0 },
		{ "SELECT min(started_ms) FROM runs", F(first_run_ms),
		    INT64_MIN },
		{ "SELECT max(started_ms) FROM runs", F(last_run_ms),
		    INT64_MIN },
		{ "SELECT min(day) FROM rollups", F(first_day), -1 },
		{ "SELECT max(day) FROM rollups", F(last_day), -1 },
		{ "SELECT started_ms FROM runs WHERE id = (SELECT "
		    "min(run_id) FROM results)", F(first_result_ms), INT64_MIN },
		{ "SELECT value FROM store_meta WHERE key = "
		    "'pruned_before_ms'", F(pruned_before_ms), 0 },
		{ "PRAGMA user_version", 0, -1 },
#undef F
	};
	int64_t		 v;
	int		 r;

	memset(d, 0, sizeof *d);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(q); i++) {
		if ((r = store_scalar(s, q[i].sql, 0, q[i].def, &v, err,
		    errlen)) < 0)
			return r;
		if (i == FLAKY_ARRAY_SIZE(q) - 1)
			d->schema_version = (int)v;
		else
			*(int64_t *)(void *)((char *)d + q[i].off) = v;
	}
	if (sql_is_pg(store_db(s))) {
		/* the server's database and its own schema version
		 * (schema/pg); no pages of SQLite's */
		if ((r = store_scalar(s, "SELECT pg_database_size("
		    "current_database())", 0, 0, &d->file_bytes, err,
		    errlen)) < 0 || (r = store_scalar(s, "SELECT max(version) "
		    "FROM schema_version", 0, -1, &v, err, errlen)) < 0)
			return r;
		d->schema_version = (int)v;
		return 0;
	}
	d->file_bytes = file_size(flaky_store_path(s), "");
	d->wal_bytes = file_size(flaky_store_path(s), "-wal");
	return 0;
}
