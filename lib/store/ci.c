/* Where a CI run came from, and uploads stored once (issue 29,
 * docs/ci.md): the columns runs.branch, pr, job, job_url, attempt, ci and
 * upload_id, and the uploads table. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

/* Is s (NULL is) printable UTF-8 of at most max bytes? The field's name
 * and what is wrong into err. */
static int	upload_forget(struct flaky_store *, int64_t, char *, size_t);

static int
field_check(const char *name, const char *s, size_t max, char *err,
    size_t errlen)
{
	size_t	 n, i = 0, k;

	if (s == NULL)
		return 0;
	if ((n = strlen(s)) == 0 || n > max)
		return flaky_error(err, errlen, EINVAL, "%s: expected 1 to %zu "
		    "bytes, got %zu", name, max, n);
	while (i < n) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return flaky_error(err, errlen, EINVAL, "%s: byte %zu is "
			    "a control character: expected printable text",
			    name, i + 1);
		if ((k = flaky_utf8_len((const unsigned char *)s + i,
		    n - i)) == 0)
			return flaky_error(err, errlen, EINVAL, "%s: byte %zu: "
			    "expected UTF-8", name, i + 1);
		i += k;
	}
	return 0;
}

int
flaky_ci_meta_check(const struct flaky_ci_meta *m, char *err, size_t errlen)
{
	int	 r;

	if ((r = field_check("branch", m->branch, FLAKY_CI_FIELD_MAX, err,
	    errlen)) < 0 || (r = field_check("pr", m->pr, FLAKY_CI_FIELD_MAX,
	    err, errlen)) < 0 || (r = field_check("job", m->job,
	    FLAKY_CI_FIELD_MAX, err, errlen)) < 0 ||
	    (r = field_check("job_url", m->job_url, FLAKY_CI_URL_MAX, err,
	    errlen)) < 0 || (r = field_check("ci", m->ci, FLAKY_CI_FIELD_MAX,
	    err, errlen)) < 0)
		return r;
	if (m->attempt < 0 || m->attempt > 10000)
		return flaky_error(err, errlen, EINVAL, "attempt: expected 1 to "
		    "10000, got %d", m->attempt);
	return 0;
}

/* Bind s, or NULL. */
static void
bind_opt(struct sql_stmt *st, int i, const char *s)
{
	if (s != NULL)
		sql_bind_text(st, i, s, -1, SQL_STATIC);
}

int
flaky_store_run_ci(struct flaky_store *s, int64_t run_id,
    const struct flaky_ci_meta *m, int64_t upload_id, char *err,
    size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	if ((r = store_prepare(s, "INSERT INTO run_ci (run_id, branch, pr, "
	    "job, job_url, attempt, ci, upload_id) VALUES (?1, ?2, ?3, ?4, "
	    "?5, ?6, ?7, ?8) ON CONFLICT (run_id) DO UPDATE SET branch = "
	    "excluded.branch, pr = excluded.pr, job = excluded.job, job_url "
	    "= excluded.job_url, attempt = excluded.attempt, ci = excluded.ci, "
	    "upload_id = excluded.upload_id", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, run_id);
	bind_opt(st, 2, m->branch);
	bind_opt(st, 3, m->pr);
	bind_opt(st, 4, m->job);
	bind_opt(st, 5, m->job_url);
	if (m->attempt > 0)
		sql_bind_int64(st, 6, m->attempt);
	bind_opt(st, 7, m->ci);
	if (upload_id > 0)
		sql_bind_int64(st, 8, upload_id);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "recording where a run "
		    "came from");
	sql_finalize(st);
	return r;
}

int
flaky_store_upload_find(struct flaky_store *s, const char *key,
    int64_t *ret_id, int64_t **ret_runs, size_t *ret_n, char *err,
    size_t errlen)
{
	struct sql_stmt	*st;
	int64_t		*v = NULL, id = 0;
	size_t		 n = 0, cap = 0;
	int		 r, rc, partial = 0, running = 0;

	*ret_id = 0;
	*ret_runs = NULL;
	*ret_n = 0;
	if ((r = store_prepare(s, "SELECT u.id, c.run_id, u.stored_ms IS "
	    "NULL, r.status = 'running' FROM uploads u LEFT JOIN run_ci c ON "
	    "c.upload_id = u.id LEFT JOIN runs r ON r.id = c.run_id WHERE "
	    "u.key = ?1 ORDER BY c.run_id", &st, err, errlen)) < 0)
		return r;
	sql_bind_text(st, 1, key, -1, SQL_STATIC);
	while ((rc = sql_step(st)) == SQL_ROW) {
		id = sql_column_int64(st, 0);
		partial = sql_column_int(st, 2);
		running |= sql_column_type(st, 3) != SQL_NULL &&
		    sql_column_int(st, 3);
		if (sql_column_type(st, 1) == SQL_NULL)
			continue;
		if (flaky_array_grow(&v, &cap, n, sizeof *v) < 0) {
			sql_finalize(st);
			free(v);
			return flaky_error(err, errlen, ENOMEM, "out of memory");
		}
		v[n++] = sql_column_int64(st, 1);
	}
	sql_finalize(st);
	if (rc != SQL_DONE) {
		free(v);
		return store_sql_error(s, err, errlen, "reading an upload");
	}
	if (id == 0)
		return 0;
	if (partial) {
		free(v);
		/* being stored by a live writer, or left by one gone (its
		 * run interrupted): then it was never stored */
		if (running)
			return 2;
		return (r = upload_forget(s, id, err, errlen)) < 0 ? r : 0;
	}
	*ret_id = id;
	*ret_runs = v;
	*ret_n = n;
	return 1;
}

/* An upload that was not stored whole: its row goes (its runs stay, an
 * unfinished one interrupted, a whole one evidence as any), so that the
 * same upload may be stored again. Its own transaction. */
static int
upload_forget(struct flaky_store *s, int64_t id, char *err, size_t errlen)
{
	int	 r;

	if ((r = flaky_store_begin(s, err, errlen)) < 0)
		return r;
	if ((r = store_exec_ints(s, "UPDATE runs SET status = 'interrupted', "
	    "error = coalesce(error, 'interrupted: the upload was not "
	    "stored whole') WHERE status = 'running' AND id IN (SELECT run_id "
	    "FROM run_ci WHERE upload_id = ?1)", id, 0, NULL, err,
	    errlen)) < 0 ||
	    (r = store_exec_ints(s, "UPDATE run_ci SET upload_id = NULL WHERE "
	    "upload_id = ?1", id, 0, NULL, err, errlen)) < 0 ||
	    (r = store_exec_ints(s, "DELETE FROM uploads WHERE id = ?1 AND "
	    "stored_ms IS NULL", id, 0, NULL, err, errlen)) < 0) {
		flaky_store_rollback(s);
		return r;
	}
	return flaky_store_commit(s, err, errlen);
}

int
flaky_store_upload_abandon(struct flaky_store *s, int64_t id, char *err,
    size_t errlen)
{
	return upload_forget(s, id, err, errlen);
}

int
flaky_store_upload_done(struct flaky_store *s, int64_t id, int64_t ms,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r = 0;

	if ((r = store_prepare(s, "UPDATE uploads SET stored_ms = ?2 WHERE "
	    "id = ?1 AND stored_ms IS NULL", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, id);
	sql_bind_int64(st, 2, ms);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "completing an upload");
	else if (sql_changes(store_db(s)) != 1)
		r = flaky_error(err, errlen, ESTALE, "upload %lld: its row went "
		    "while it was stored (another server of this database "
		    "gave it up)", (long long)id);
	sql_finalize(st);
	return r;
}

int
flaky_store_upload_add(struct flaky_store *s, const char *key,
    int64_t token_id, int64_t received_ms, int64_t bytes, int files,
    int64_t *ret_id, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int64_t		 have = 0;
	int		 r;

	if ((r = store_scalar_text(s, "SELECT count(*) FROM uploads WHERE key "
	    "= ?1", key, 0, &have, err, errlen)) < 0)
		return r;
	if (have > 0)
		return flaky_error(err, errlen, EEXIST, "upload %s is stored "
		    "already", key);
	if ((r = store_prepare(s, "INSERT INTO uploads (key, token_id, "
	    "received_ms, bytes, files) VALUES (?1, ?2, ?3, ?4, ?5)", &st, err,
	    errlen)) < 0)
		return r;
	sql_bind_text(st, 1, key, -1, SQL_STATIC);
	if (token_id > 0)
		sql_bind_int64(st, 2, token_id);
	sql_bind_int64(st, 3, received_ms);
	sql_bind_int64(st, 4, bytes);
	sql_bind_int64(st, 5, files);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "recording an upload");
	else
		*ret_id = sql_last_insert_rowid(store_db(s));
	sql_finalize(st);
	return r;
}

/* What the store knows of the tests that failed in some runs (an
 * upload's): each test once, with its counted runs and failures in the
 * window from the rollups (a point lookup a day: the rollups are keyed by
 * day first), whether it is quarantined, and how many revisions it
 * flipped on. */
int
flaky_store_known(struct flaky_store *s, const int64_t *runs, size_t nruns,
    int64_t since_ms, int64_t until_ms, struct flaky_known **ret,
    size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_known *v = NULL;
	struct sql_stmt	*fails = NULL, *roll = NULL;
	size_t		 n = 0, cap = 0;
	int		 r, rc, oom = 0;

	*ret = NULL;
	*ret_n = 0;
	if ((r = store_prepare(s, "SELECT DISTINCT r.test_id, t.name, tg.name, "
	    "q.test_id IS NOT NULL, q.ticket, q.reason FROM results r JOIN "
	    "tests t ON t.id = r.test_id JOIN targets tg ON tg.id = "
	    "t.target_id LEFT JOIN quarantine q ON q.test_id = r.test_id "
	    "WHERE r.run_id = ?1 AND r.outcome IN (1, 2)", &fails, err,
	    errlen)) < 0)
		return r;
	if ((r = store_prepare(s, "WITH RECURSIVE d(day) AS (SELECT ?2 UNION "
	    "ALL SELECT day + 1 FROM d WHERE day + 1 < ?3) SELECT "
	    "coalesce(sum(ro.runs), 0), coalesce(sum(ro.failures), 0), (SELECT "
	    "count(*) FROM revision_outcomes o WHERE o.test_id = ?1 AND "
	    "o.fails > 0 AND o.passes > 0 AND o.last_ms >= ?4) FROM d JOIN "
	    "rollups ro ON ro.day = d.day AND ro.test_id = ?1", &roll, err,
	    errlen)) < 0)
		goto out;
	for (size_t i = 0; i < nruns && !oom; i++) {
		sql_reset(fails);
		sql_bind_int64(fails, 1, runs[i]);
		while ((rc = sql_step(fails)) == SQL_ROW) {
			int64_t	 tid = sql_column_int64(fails, 0);
			struct flaky_known *k;
			size_t	 j;

			for (j = 0; j < n && v[j].test_id != tid; j++)
				;
			if (j < n)
				continue;
			if (flaky_array_grow(&v, &cap, n, sizeof *v) < 0) {
				oom = 1;
				break;
			}
			k = &v[n++];
			memset(k, 0, sizeof *k);
			k->test_id = tid;
			k->test = store_col_dup(fails, 1, &oom);
			k->target = store_col_dup(fails, 2, &oom);
			k->quarantined = sql_column_int64(fails, 3) != 0;
			k->ticket = store_col_dup(fails, 4, &oom);
			k->reason = store_col_dup(fails, 5, &oom);
			sql_reset(roll);
			sql_bind_int64(roll, 1, tid);
			sql_bind_int64(roll, 2, since_ms / 86400000);
			sql_bind_int64(roll, 3, until_ms / 86400000 + 1);
			sql_bind_int64(roll, 4, since_ms);
			if (sql_step(roll) == SQL_ROW) {
				k->runs = sql_column_int64(roll, 0);
				k->failures = sql_column_int64(roll, 1);
				k->flips = sql_column_int64(roll, 2);
			} else {
				r = store_sql_error(s, err, errlen, "reading "
				    "the rollups");
				goto out;
			}
		}
		if (!oom && rc != SQL_DONE) {
			r = store_sql_error(s, err, errlen, "reading a run's "
			    "failures");
			goto out;
		}
	}
	if (oom) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	*ret = v;
	*ret_n = n;
	v = NULL;
	n = 0;
out:
	sql_finalize(fails);
	sql_finalize(roll);
	flaky_known_free(v, n);
	return r;
}

void
flaky_known_free(struct flaky_known *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++) {
		free(v[i].test);
		free(v[i].target);
		free(v[i].ticket);
		free(v[i].reason);
	}
	free(v);
}
