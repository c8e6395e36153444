/* Quarantine: tests whose failures are known and tracked elsewhere, with
 * how long each has passed since its last failure. */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

int
flaky_store_quarantine_add(struct flaky_store *s, int64_t test_id,
    const char *reason, const char *ticket, int64_t now_ms, char *err,
    size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	if ((r = store_prepare(s, "INSERT INTO quarantine (test_id, reason, "
	    "ticket, added_ms) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (test_id) "
	    "DO UPDATE SET reason = ?2, "
	    "ticket = coalesce(?3, quarantine.ticket)", &st, err,
	    errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, test_id);
	sql_bind_text(st, 2, reason, -1, SQL_STATIC);
	if (ticket != NULL)
		sql_bind_text(st, 3, ticket, -1, SQL_STATIC);
	sql_bind_int64(st, 4, now_ms);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "quarantining");
	sql_finalize(st);
	return r;
}

int
flaky_store_quarantine_remove(struct flaky_store *s, int64_t test_id,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	if ((r = store_prepare(s, "DELETE FROM quarantine WHERE test_id = ?1",
	    &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, test_id);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "releasing");
	else if (sql_changes(store_db(s)) == 0)
		r = flaky_error(err, errlen, ENOENT, "the test is not in "
		    "quarantine");
	sql_finalize(st);
	return r;
}

void
flaky_quarantine_rows_free(struct flaky_quarantine_row *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++) {
		free(v[i].target);
		free(v[i].test);
		free(v[i].reason);
		free(v[i].ticket);
		free(v[i].runner);
	}
	free(v);
}

/* Passing runs in a row up to now: the runs after the last failed one.
 * The last failure is found through the partial index of failed results;
 * whole days after it come from the rollups, the rest of its day from the
 * raw results of the runs stored after it. After pruning, the last day
 * with a failure in the rollups stands in (a lower bound). */
static int
pass_streak(struct flaky_store *s, int64_t test_id, int64_t *ret, char *err,
    size_t errlen)
{
	struct sql_stmt	*st;
	int64_t		 last, day, tail = 0, end;
	int		 r;

	if ((r = store_scalar(s, "SELECT max(run_id) FROM results WHERE "
	    "test_id = ?1 AND outcome IN (1, 2)", test_id, -1, &last, err,
	    errlen)) < 0)
		return r;
	if (last >= 0) {
		if ((r = store_scalar(s, "SELECT started_ms / 86400000 "
		    "FROM runs WHERE id = ?1", last, -1, &day, err,
		    errlen)) < 0)
			return r;
		if ((r = store_scalar(s, "SELECT max(id) FROM runs WHERE "
		    "started_ms < (?1 + 1) * 86400000", day, last, &end, err,
		    errlen)) < 0)
			return r;
		if ((r = store_prepare(s, "SELECT count(*) FROM results WHERE "
		    "run_id > ?1 AND run_id <= ?2 AND test_id = ?3 AND "
		    "outcome IN (0, 5)", &st, err, errlen)) < 0)
			return r;
		sql_bind_int64(st, 1, last);
		sql_bind_int64(st, 2, end);
		sql_bind_int64(st, 3, test_id);
		if (sql_step(st) == SQL_ROW)
			tail = sql_column_int64(st, 0);
		else
			r = store_sql_error(s, err, errlen, "counting passes");
		sql_finalize(st);
		if (r < 0)
			return r;
	} else if ((r = store_scalar(s, "SELECT max(day) FROM rollups WHERE "
	    "test_id = ?1 AND failures > 0", test_id, -1, &day, err,
	    errlen)) < 0)
		return r;
	if ((r = store_prepare(s, "SELECT coalesce(sum(runs), 0) FROM rollups "
	    "WHERE test_id = ?1 AND day > ?2", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, test_id);
	sql_bind_int64(st, 2, day);
	if (sql_step(st) == SQL_ROW)
		*ret = tail + sql_column_int64(st, 0);
	else
		r = store_sql_error(s, err, errlen, "counting passes");
	sql_finalize(st);
	return r;
}

int
flaky_store_pass_streak(struct flaky_store *s, int64_t test_id, int64_t *ret,
    char *err, size_t errlen)
{
	return pass_streak(s, test_id, ret, err, errlen);
}

int
flaky_store_quarantine_list(struct flaky_store *s,
    struct flaky_quarantine_row **ret, size_t *ret_n, char *err,
    size_t errlen)
{
	struct flaky_quarantine_row *v = NULL, *row;
	struct sql_stmt	*st;
	size_t		 n = 0, cap = 0;
	int		 r, rc;

	*ret = NULL;
	*ret_n = 0;
	if ((r = store_prepare(s, "SELECT q.test_id, tg.name, t.name, "
	    "q.reason, q.ticket, q.added_ms, (SELECT runner FROM runs "
	    "WHERE target_id = t.target_id AND runner IS NOT NULL "
	    "ORDER BY started_ms DESC LIMIT 1) FROM quarantine q "
	    "JOIN tests t ON t.id = q.test_id "
	    "JOIN targets tg ON tg.id = t.target_id "
	    "ORDER BY tg.name, t.name", &st, err, errlen)) < 0)
		return r;
	while ((rc = sql_step(st)) == SQL_ROW) {
		const char *tk = (const char *)sql_column_text(st, 4);
		const char *rn = (const char *)sql_column_text(st, 6);

		if (flaky_array_grow(&v, &cap, n, sizeof *v) < 0) {
			r = -ENOMEM;
			goto out;
		}
		row = &v[n++];
		memset(row, 0, sizeof *row);
		row->test_id = sql_column_int64(st, 0);
		row->target = strdup((const char *)sql_column_text(st, 1));
		row->test = strdup((const char *)sql_column_text(st, 2));
		row->reason = strdup((const char *)sql_column_text(st, 3));
		row->ticket = tk ? strdup(tk) : NULL;
		row->added_ms = sql_column_int64(st, 5);
		row->runner = rn ? strdup(rn) : NULL;
		if (row->target == NULL || row->test == NULL ||
		    row->reason == NULL || (tk != NULL && row->ticket == NULL) ||
		    (rn != NULL && row->runner == NULL)) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (rc != SQL_DONE) {
		r = store_sql_error(s, err, errlen, "reading the quarantine");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if ((r = pass_streak(s, v[i].test_id, &v[i].passes, err,
		    errlen)) < 0)
			goto out;
out:
	sql_finalize(st);
	if (r < 0) {
		if (r == -ENOMEM)
			flaky_error(err, errlen, ENOMEM, "out of memory");
		flaky_quarantine_rows_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}
