/* The daemon's own small reads and writes: last trigger times for catch-up
 * and the last finished run per target for status. Each is one statement,
 * so each is its own short transaction unless the caller opened one. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store.h"
#include "store_int.h"

/* enum flaky_run_status from the stored name. */
int
flaky_run_status_parse(const char *s)
{
	for (int i = FLAKY_RUN_RUNNING; i <= FLAKY_RUN_STOPPED; i++)
		if (s != NULL && strcmp(s, flaky_run_status_name(i)) == 0)
			return i;
	return -1;
}

/* targets.last_fire_ms of a target. */
int
flaky_store_last_fire(struct flaky_store *s, int64_t target_id,
    int64_t *ret_ms, char *err, size_t errlen)
{
	struct sql	*db = store_db(s);
	struct sql_stmt	*st = NULL;
	int		 r = 0;

	*ret_ms = FLAKY_NO_FIRE;
	if (sql_prepare_v2(db, "SELECT last_fire_ms FROM targets "
	    "WHERE id = ?", -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "reading last_fire_ms");
	sql_bind_int64(st, 1, target_id);
	switch (sql_step(st)) {
	case SQL_ROW:
		if (sql_column_type(st, 0) != SQL_NULL)
			*ret_ms = sql_column_int64(st, 0);
		break;
	case SQL_DONE:
		break;
	default:
		r = store_sql_error(s, err, errlen, "reading last_fire_ms");
	}
	sql_finalize(st);
	return r;
}

/* Save targets.last_fire_ms of a target. */
int
flaky_store_set_last_fire(struct flaky_store *s, int64_t target_id,
    int64_t ms, char *err, size_t errlen)
{
	struct sql	*db = store_db(s);
	struct sql_stmt	*st = NULL;
	int		 r = 0;

	if (sql_prepare_v2(db, "UPDATE targets SET last_fire_ms = ? "
	    "WHERE id = ?", -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "saving last_fire_ms");
	sql_bind_int64(st, 1, ms);
	sql_bind_int64(st, 2, target_id);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "saving last_fire_ms");
	sql_finalize(st);
	return r;
}

/* The newest run of a target that is not running and not a run alone (a
 * confirm run is not the target's last run: status shows the suite). */
int
flaky_store_last_run(struct flaky_store *s, int64_t target_id,
    struct flaky_last_run *ret, char *err, size_t errlen)
{
	struct sql	*db = store_db(s);
	struct sql_stmt	*st = NULL;
	int		 r = 0, rc;

	memset(ret, 0, sizeof *ret);
	ret->target_id = target_id;
	/* runs_by_target (target_id, started_ms) finds the newest rows. */
	if (sql_prepare_v2(db, "SELECT id, status, started_ms, "
	    "ended_ms, tests, failures FROM runs WHERE target_id = ? AND "
	    "status != 'running' AND kind != 'alone' "
	    "ORDER BY started_ms DESC, id DESC LIMIT 1",
	    -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "reading the last run");
	sql_bind_int64(st, 1, target_id);
	if ((rc = sql_step(st)) == SQL_ROW) {
		ret->run_id = sql_column_int64(st, 0);
		ret->status = flaky_run_status_parse(
		    (const char *)sql_column_text(st, 1));
		ret->started_ms = sql_column_int64(st, 2);
		ret->ended_ms = sql_column_int64(st, 3);
		ret->tests = sql_column_int64(st, 4);
		ret->failures = sql_column_int64(st, 5);
	} else if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading the last run");
	sql_finalize(st);
	return r;
}
