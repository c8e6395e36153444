/* The writes of a run: its row, its results, their deduplicated tests and
 * messages, the daily rollups, the rerun budget and the failure rollups,
 * in one short transaction each, through statements prepared once
 * (write_sql.c). And the targets the runs belong to. */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "classify/classify.h"
#include "util/util.h"
#include "store/store.h"
#include "store_int.h"

/* A cached prepared statement, reset and unbound. */
static struct sql_stmt *
stmt(struct flaky_store *s, int which)
{
	if (s->st[which] == NULL) {
		const char *fixed = store_write_sql[which];
		char	*sql = fixed ? NULL : store_write_many_sql(which);
		int	 rc;

		if (fixed == NULL && sql == NULL)
			return NULL;
		rc = sql_prepare_v3(s->db, sql ? sql : fixed, -1,
		    SQL_PREPARE_PERSISTENT, &s->st[which], NULL);
		free(sql);
		if (rc != SQL_OK)
			return NULL;
	} else {
		sql_reset(s->st[which]);
		sql_clear_bindings(s->st[which]);
	}
	return s->st[which];
}

static void
bind_text(struct sql_stmt *st, int i, const char *s)
{
	if (s == NULL)
		sql_bind_null(st, i);
	else
		sql_bind_text(st, i, s, -1, SQL_STATIC);
}

static void
bind_int_or_null(struct sql_stmt *st, int i, int64_t v, int null)
{
	if (null)
		sql_bind_null(st, i);
	else
		sql_bind_int64(st, i, v);
}

int
flaky_store_target(struct flaky_store *s, const char *name,
    const char *command, const char *dir, int64_t *ret_id, char *err,
    size_t errlen)
{
	struct sql_stmt	*st = NULL;
	int		 r = 0;

	/* On its own, the target's row is committed without a sync of its
	 * own: it is no evidence, and the sync of the next run's commit
	 * (synchronous=FULL) makes the WAL frames before it durable too. A
	 * power cut in between loses a target with no runs. One sync fewer
	 * per analyze call. */
	if (!s->in_tx && !(s->flags & FLAKY_STORE_BULK))
		sql_exec(s->db, "PRAGMA synchronous = NORMAL", NULL, NULL,
		    NULL);
	if (sql_prepare_v2(s->db,
	    "INSERT INTO targets (name, command, dir, created_ms) "
	    "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (name) DO UPDATE SET "
	    "command = coalesce(?2, targets.command), "
	    "dir = coalesce(?3, targets.dir) "
	    "RETURNING id", -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "saving the target");
	bind_text(st, 1, name);
	bind_text(st, 2, command);
	bind_text(st, 3, dir);
	sql_bind_int64(st, 4, flaky_now_ms());
	if (sql_step(st) != SQL_ROW)
		r = store_sql_error(s, err, errlen, "saving the target");
	else
		*ret_id = sql_column_int64(st, 0);
	sql_finalize(st);
	if (!s->in_tx && !(s->flags & FLAKY_STORE_BULK))
		sql_exec(s->db, "PRAGMA synchronous = FULL", NULL, NULL,
		    NULL);
	return r;
}

int
flaky_store_run_start(struct flaky_store *s, struct flaky_run_record *rec,
    char *err, size_t errlen)
{
	struct store_owner me;
	struct sql_stmt	*st;
	int		 r, own = !s->in_tx;

	if (rec->kind < FLAKY_KIND_SUITE || rec->kind > FLAKY_KIND_INGESTED)
		return flaky_error(err, errlen, EINVAL, "%s: run kind %d is "
		    "not one of suite, alone, ingested", s->name, rec->kind);
	if (own && (r = flaky_store_begin(s, err, errlen)) < 0)
		return r;
	if ((st = stmt(s, ST_RUN_START)) == NULL) {
		r = store_sql_error(s, err, errlen, "preparing");
		goto fail;
	}
	sql_bind_int64(st, 1, rec->target_id);
	bind_text(st, 2, flaky_run_status_name(FLAKY_RUN_RUNNING));
	bind_text(st, 3, rec->trigger);
	sql_bind_int64(st, 4, rec->started_ms);
	bind_text(st, 5, rec->revision);
	sql_bind_int(st, 6, rec->in_flight);
	if (rec->loadavg >= 0)
		sql_bind_double(st, 7, rec->loadavg);
	bind_text(st, 8, flaky_run_kind_name(rec->kind));
	/* the owner, so that no other writer takes the row for abandoned
	 * while this process lives */
	if (store_owner_self(&me) == 0) {
		sql_bind_text(st, 9, me.boot, -1, SQL_TRANSIENT);
		sql_bind_int64(st, 10, me.pid);
		sql_bind_int64(st, 11, me.start);
	}
	bind_text(st, 12, rec->perturbation);
	bind_text(st, 13, rec->seed);
	bind_text(st, 14, rec->box ? rec->box : flaky_store_box(s));
	if (sql_step(st) != SQL_DONE) {
		r = store_sql_error(s, err, errlen, "recording the run start");
		goto fail;
	}
	rec->id = sql_last_insert_rowid(s->db);
	if (own && (r = flaky_store_commit(s, err, errlen)) < 0) {
		/* rolled back: a retry inserts the row again */
		rec->id = 0;
		return r;
	}
	return 0;
fail:
	if (own)
		flaky_store_rollback(s);
	return r;
}

/* The id of a test, created on first sight. */
static int
test_id(struct flaky_store *s, int64_t target, const char *name,
    int64_t *ret, char *err, size_t errlen)
{
	uint64_t	 h = flaky_hash64(name, strlen(name), (uint64_t)target);
	struct sql_stmt	*st;
	int64_t		 id;

	if ((id = store_idcache_get(&s->tests, h, target, name)) != 0)
		goto done;
	if ((st = stmt(s, ST_TEST_FIND)) == NULL)
		return store_sql_error(s, err, errlen, "preparing");
	sql_bind_int64(st, 1, target);
	bind_text(st, 2, name);
	if (sql_step(st) == SQL_ROW)
		id = sql_column_int64(st, 0);
	/* a statement left on a row holds a read transaction open */
	sql_reset(st);
	if (id == 0) {
		if ((st = stmt(s, ST_TEST_ADD)) == NULL)
			return store_sql_error(s, err, errlen, "preparing");
		sql_bind_int64(st, 1, target);
		bind_text(st, 2, name);
		if (sql_step(st) != SQL_DONE)
			return store_sql_error(s, err, errlen, "adding a test");
		id = sql_last_insert_rowid(s->db);
	}
	if (store_idcache_put(&s->tests, h, target, name, id) < 0)
		return -ENOMEM;
done:
	*ret = id;
	return 0;
}

/* The id of a normalized failure text, stored once per fingerprint. */
static int
message_id(struct flaky_store *s, const char *msg, int64_t *ret, char *err,
    size_t errlen)
{
	struct flaky_buf norm;
	struct sql_stmt	*st;
	int64_t		 fp, id;
	int		 r = 0;

	flaky_buf_init(&norm);
	if (flaky_normalize(msg, strlen(msg), &norm) < 0)
		return -ENOMEM;
	fp = flaky_fingerprint(flaky_buf_cstr(&norm), norm.len);
	if ((id = store_idcache_get(&s->msgs, (uint64_t)fp, fp, NULL)) != 0)
		goto done;
	if ((st = stmt(s, ST_MSG_FIND)) == NULL) {
		r = store_sql_error(s, err, errlen, "preparing");
		goto out;
	}
	sql_bind_int64(st, 1, fp);
	if (sql_step(st) == SQL_ROW)
		id = sql_column_int64(st, 0);
	sql_reset(st);
	if (id == 0) {
		if ((st = stmt(s, ST_MSG_ADD)) == NULL) {
			r = store_sql_error(s, err, errlen, "preparing");
			goto out;
		}
		sql_bind_int64(st, 1, fp);
		bind_text(st, 2, flaky_buf_cstr(&norm));
		if (sql_step(st) != SQL_DONE) {
			r = store_sql_error(s, err, errlen, "adding a message");
			goto out;
		}
		id = sql_last_insert_rowid(s->db);
	}
	if (store_idcache_put(&s->msgs, (uint64_t)fp, fp, NULL, id) < 0) {
		r = -ENOMEM;
		goto out;
	}
done:
	*ret = id;
out:
	flaky_buf_free(&norm);
	return r;
}

/* Redacted copy of a text into b (reset first); NULL stays NULL. */
const char *
store_redacted(struct flaky_store *s, const char *t, size_t len,
    struct flaky_buf *b, size_t *ret_len)
{
	flaky_buf_reset(b);
	if (t == NULL)
		return NULL;
	if (len == 0) {
		/* most runs print nothing on one stream: no buffer for it */
		if (ret_len != NULL)
			*ret_len = 0;
		return "";
	}
	if (flaky_redact(s->redact, t, len, b) < 0)
		return NULL;
	if (ret_len != NULL)
		*ret_len = b->len;
	return flaky_buf_cstr(b);
}

/* One result on its way in: what the rows of results and rollups need. */
struct pending {
	const struct flaky_result *res;
	int64_t		 tid;
	int64_t		 mid;
};

/* Bind one result's columns from index i (results, without the run id). */
static void
bind_result(struct sql_stmt *st, int i, const struct pending *p, const char *msg)
{
	const struct flaky_result *res = p->res;
	int		 failed = FLAKY_FAILED(res->outcome);

	sql_bind_int64(st, i, res->position);
	sql_bind_int64(st, i + 1, p->tid);
	sql_bind_int(st, i + 2, res->outcome);
	bind_int_or_null(st, i + 3, res->duration_us, res->duration_us < 0);
	bind_int_or_null(st, i + 4, p->mid, p->mid == 0);
	if (failed)
		bind_text(st, i + 5, res->signature);
	if (msg != NULL)
		sql_bind_text(st, i + 6, msg, -1, SQL_TRANSIENT);
}

/* The one-entry histograms {bucket, count 1}, bound as they are: the
 * rollup UPSERT then adds them without a function call per row. */
#define H1(b)	{ (b), 1 }
#define H4(b)	H1(b), H1((b) + 1), H1((b) + 2), H1((b) + 3)
#define H16(b)	H4(b), H4((b) + 4), H4((b) + 8), H4((b) + 12)
static const unsigned char hist_one[FLAKY_HIST_BUCKETS][2] = {
	H16(0), H16(16), H16(32), H16(48), H16(64), H16(80), H16(96),
	H16(112)
};
#undef H1
#undef H4
#undef H16

/* Bind the one-entry histogram of a duration at index i. */
static void
bind_hist(struct sql_stmt *st, int i, int64_t us)
{
	sql_bind_blob(st, i, hist_one[flaky_hist_bucket(us)], 2,
	    SQL_STATIC);
}

/* Bind one result's rollup deltas from index i: runs, failures, skips,
 * pass_us, fail_us, pass and fail histogram of this one (NULL: none). */
static void
bind_rollup(struct sql_stmt *st, int i, const struct flaky_result *res)
{
	int		 failed = FLAKY_FAILED(res->outcome);
	int		 counted = res->outcome == FLAKY_PASS ||
			    res->outcome == FLAKY_XPASS || failed;
	int		 known = res->duration_us >= 0;

	sql_bind_int(st, i, counted);
	sql_bind_int(st, i + 1, failed);
	sql_bind_int(st, i + 2, !counted);
	sql_bind_int64(st, i + 3, counted && !failed && known ?
	    res->duration_us : 0);
	sql_bind_int64(st, i + 4, failed && known ? res->duration_us : 0);
	if (counted && !failed && known)
		bind_hist(st, i + 5, res->duration_us);
	if (failed && known)
		bind_hist(st, i + 6, res->duration_us);
}

/* Bind one result's row of box_rollups from index i: test id, runs and
 * failures (a skip adds a row of none, as it adds one to the rollups). */
static void
bind_box_rollup(struct sql_stmt *st, int i, const struct pending *p)
{
	int		 failed = FLAKY_FAILED(p->res->outcome);

	sql_bind_int64(st, i, p->tid);
	sql_bind_int(st, i + 1, p->res->outcome == FLAKY_PASS ||
	    p->res->outcome == FLAKY_XPASS || failed);
	sql_bind_int(st, i + 2, failed);
}

/* The rollup rows of results one at a time: UPDATE first (the day's row
 * exists after a test's first run of the day), INSERT when it did not. */
static int
rollup_one(struct flaky_store *s, int64_t day, const struct pending *p,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;

	for (int which = ST_ROLLUP_UPDATE; which <= ST_ROLLUP; which++) {
		if ((st = stmt(s, which)) == NULL)
			return store_sql_error(s, err, errlen, "preparing");
		sql_bind_int64(st, 1, p->tid);
		sql_bind_int64(st, 2, day);
		bind_rollup(st, 3, p->res);
		if (sql_step(st) != SQL_DONE)
			break;
		if (which == ST_ROLLUP || sql_changes(s->db) > 0)
			return 0;
	}
	return store_sql_error(s, err, errlen, "updating the rollups");
}

/* A failed result's share of the budget and its row of failure_rollups
 * (SQLite; the server's trigger makes them there). */
static int
add_failure(struct flaky_store *s, const struct flaky_run_record *rec,
    int counted, const struct pending *p, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int64_t		 fday = rec->started_ms / 86400000;

	if ((st = stmt(s, ST_BUDGET)) == NULL)
		return store_sql_error(s, err, errlen, "preparing");
	sql_bind_int64(st, 1, fday);
	sql_bind_int64(st, 2, p->tid);
	sql_bind_int64(st, 3, rec->duration_us);
	sql_bind_int64(st, 4, rec->user_us + rec->sys_us);
	if (sql_step(st) != SQL_DONE)
		return store_sql_error(s, err, errlen,
		    "adding to the rerun budget");
	if ((st = stmt(s, ST_FAILURE_ROLLUP)) == NULL)
		return store_sql_error(s, err, errlen, "preparing");
	sql_bind_int64(st, 1, fday);
	sql_bind_int64(st, 2, p->tid);
	sql_bind_int(st, 3, counted);
	sql_bind_int64(st, 4, p->mid);
	bind_text(st, 5, p->res->signature);
	sql_bind_int64(st, 6, rec->id);
	if (sql_step(st) != SQL_DONE)
		return store_sql_error(s, err, errlen,
		    "updating the failure rollups");
	return 0;
}

/* Look up the ids of n results and write their rows: CHUNK of them with
 * one statement, fewer one by one; each failure's budget and failure
 * rollup; and their rollups and box's rollups (the run's box as
 * stored), unless day is -1. */
static int
add_results(struct flaky_store *s, const struct flaky_run_record *rec,
    int64_t day, const char *box, const struct flaky_result *res, size_t n,
    struct flaky_buf *tmp, char *err, size_t errlen)
{
	int64_t		 run_id = rec->id, target = rec->target_id;
	struct pending	 p[CHUNK];
	struct sql_stmt	*st = NULL;
	int		 many = n == CHUNK, r;

	if (many) {
		if ((st = stmt(s, ST_RESULT_MANY)) == NULL)
			return store_sql_error(s, err, errlen, "preparing");
		sql_bind_int64(st, 1, run_id);
	}
	for (size_t i = 0; i < n; i++) {
		const char *msg = NULL;

		p[i].res = &res[i];
		p[i].mid = 0;
		if (res[i].test == NULL)
			return flaky_error(err, errlen, EINVAL, "%s: result "
			    "%zu of the run has no test id", s->name, i);
		if ((r = test_id(s, target, res[i].test, &p[i].tid, err,
		    errlen)) < 0)
			return r;
		if (FLAKY_FAILED(res[i].outcome) && res[i].message != NULL) {
			msg = store_redacted(s, res[i].message,
			    strlen(res[i].message), tmp, NULL);
			if (msg == NULL)
				return -ENOMEM;
			if ((r = message_id(s, msg, &p[i].mid, err,
			    errlen)) < 0)
				return r;
		}
		if (!many) {
			if ((st = stmt(s, ST_RESULT_ADD)) == NULL)
				return store_sql_error(s, err, errlen,
				    "preparing");
			sql_bind_int64(st, 1, run_id);
		}
		bind_result(st, many ? 2 + (int)i * RESULT_COLS : 2, &p[i],
		    msg);
		if (!many && sql_step(st) != SQL_DONE)
			return store_sql_error(s, err, errlen,
			    "adding a result");
	}
	if (many && sql_step(st) != SQL_DONE)
		return store_sql_error(s, err, errlen, "adding results");
	/* PostgreSQL's rollups, budget and failure rollups are its
	 * trigger's (schema/pg/0002, 0008) */
	if (sql_is_pg(s->db))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (FLAKY_FAILED(res[i].outcome) && (r = add_failure(s, rec,
		    day >= 0, &p[i], err, errlen)) < 0)
			return r;
	if (day < 0)
		return 0;

	/* One UPSERT for the chunk's rollup rows (a test twice in a chunk,
	 * possible only through the API, conflicts with itself and adds up). */
	if (many) {
		if ((st = stmt(s, ST_ROLLUP_MANY)) == NULL)
			return store_sql_error(s, err, errlen, "preparing");
		sql_bind_int64(st, 1, day);
		for (size_t i = 0; i < n; i++) {
			int	 k = 2 + (int)i * ROLLUP_COLS;

			sql_bind_int64(st, k, p[i].tid);
			bind_rollup(st, k + 1, p[i].res);
		}
		if (sql_step(st) != SQL_DONE)
			return store_sql_error(s, err, errlen,
			    "updating the rollups");
		if ((st = stmt(s, ST_BOX_ROLLUP_MANY)) == NULL)
			return store_sql_error(s, err, errlen, "preparing");
		sql_bind_int64(st, 1, day);
		bind_text(st, 2, box ? box : "");
		for (size_t i = 0; i < n; i++)
			bind_box_rollup(st, 3 + (int)i * BOX_COLS, &p[i]);
		if (sql_step(st) != SQL_DONE)
			return store_sql_error(s, err, errlen,
			    "updating the rollups per box");
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if ((r = rollup_one(s, day, &p[i], err, errlen)) < 0)
			return r;
		if ((st = stmt(s, ST_BOX_ROLLUP)) == NULL)
			return store_sql_error(s, err, errlen, "preparing");
		sql_bind_int64(st, 1, day);
		bind_text(st, 2, box ? box : "");
		bind_box_rollup(st, 3, &p[i]);
		if (sql_step(st) != SQL_DONE)
			return store_sql_error(s, err, errlen,
			    "updating the rollups per box");
	}
	return 0;
}

/* On PostgreSQL a result row carries its run's start, the partition key
 * (schema/pg/0005-store.sql takes it from flaky.started_ms), and the
 * week's partition must be there: made only when missing, since making
 * one locks out other writers until the commit. */
int
store_pg_week(struct flaky_store *s, int64_t started_ms, char *err,
    size_t errlen)
{
	struct sql_stmt	*st;
	int		 rc;

	if (sql_prepare_v2(s->db, "SELECT set_config('flaky.started_ms', "
	    "?1::text, true), CASE WHEN to_regclass('results_' || "
	    "to_char(to_timestamp((?1 - ?1 % 604800000) / 1000) AT TIME ZONE "
	    "'UTC', 'YYYYMMDD')) IS NULL THEN flaky_make_partitions(?1, ?1) "
	    "END", -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "preparing");
	sql_bind_int64(st, 1, started_ms);
	rc = sql_step(st);
	sql_finalize(st);
	if (rc != SQL_ROW)
		return store_sql_error(s, err, errlen, "making the week's "
		    "partition of results");
	return 0;
}

/* A run of only some tests (issue 18): how many, in runs.selected. Only
 * such runs pay for this statement. */
static int
store_selected(struct flaky_store *s, const struct flaky_run_record *rec,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 rc;

	if (sql_prepare_v2(s->db, "UPDATE runs SET selected = ?1 WHERE "
	    "id = ?2", -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "preparing");
	sql_bind_int(st, 1, rec->selected);
	sql_bind_int64(st, 2, rec->id);
	rc = sql_step(st);
	sql_finalize(st);
	if (rc != SQL_DONE)
		return store_sql_error(s, err, errlen, "recording the tests "
		    "a run selected");
	return 0;
}

int
flaky_store_run_finish(struct flaky_store *s, struct flaky_run_record *rec,
    const struct flaky_results *res, char *err, size_t errlen)
{
	struct flaky_buf out, errb, tmp, msg;
	struct sql_stmt	*st;
	const char	*o, *e, *error, *what = NULL;
	size_t		 olen = 0, elen = 0;
	struct store_packed po = { 0 }, pe = { 0 };
	int64_t		 day, failures = 0, out_id = 0, err_id = 0;
	int		 r, own = !s->in_tx, inserted = 0;

	flaky_buf_init(&out);
	flaky_buf_init(&errb);
	flaky_buf_init(&tmp);
	flaky_buf_init(&msg);
	if (rec->kind < FLAKY_KIND_SUITE || rec->kind > FLAKY_KIND_INGESTED) {
		r = flaky_error(err, errlen, EINVAL, "%s: run kind %d is not "
		    "one of suite, alone, ingested", s->name, rec->kind);
		goto out;
	}
	/* Output is redacted and compressed before the transaction: other
	 * writers wait for the writes only. */
	o = store_redacted(s, rec->out, rec->out_len, &out, &olen);
	e = store_redacted(s, rec->err, rec->err_len, &errb, &elen);
	error = store_redacted(s, rec->error, rec->error ? strlen(rec->error) : 0,
	    &msg, NULL);
	if (out.oom || errb.oom || msg.oom) {
		r = -ENOMEM;
		goto out;
	}
	if ((o != NULL && (r = store_output_pack(&po, o, olen,
	    sql_is_pg(s->db), err, errlen)) < 0) || (e != NULL &&
	    (r = store_output_pack(&pe, e, elen, sql_is_pg(s->db), err,
	    errlen)) < 0))
		goto out;
	if (own && (r = flaky_store_begin(s, err, errlen)) < 0)
		goto out;
	if ((o != NULL && (r = store_output_put(s->db, &s->output, &po,
	    &out_id, &what)) < 0) || (e != NULL && (r = store_output_put(s->db,
	    &s->output, &pe, &err_id, &what)) < 0)) {
		r = r == -ENOMEM ? flaky_error(err, errlen, ENOMEM, "out of "
		    "memory") : store_sql_error(s, err, errlen, what);
		goto fail;
	}
	if (res != NULL) {
		for (size_t i = 0; i < res->n; i++)
			failures += FLAKY_FAILED(res->v[i].outcome);
	}
	/* Not started in the store: one INSERT instead of two statements. */
	if ((st = stmt(s, rec->id == 0 ? ST_RUN_INSERT : ST_RUN_FINISH)) ==
	    NULL) {
		r = store_sql_error(s, err, errlen, "preparing");
		goto fail;
	}
	bind_text(st, 1, flaky_run_status_name(rec->status));
	sql_bind_int64(st, 2, rec->ended_ms);
	sql_bind_int64(st, 3, rec->duration_us);
	bind_int_or_null(st, 4, rec->exit_code, rec->exit_code < 0 ||
	    rec->status == FLAKY_RUN_ERROR || rec->status == FLAKY_RUN_SKIPPED);
	bind_int_or_null(st, 5, rec->signal, rec->signal == 0);
	bind_text(st, 6, rec->revision);
	if (res != NULL && res->runner[0] != '\0')
		bind_text(st, 7, res->runner);
	bind_text(st, 8, res ? res->version : NULL);
	/* the seed we gave wins over one the runner printed */
	bind_text(st, 9, rec->seed ? rec->seed : res ? res->seed : NULL);
	sql_bind_int64(st, 10, res ? (int64_t)res->n : 0);
	sql_bind_int64(st, 11, failures);
	bind_int_or_null(st, 12, res ? res->summary_total : -1,
	    res == NULL || res->summary_total < 0);
	bind_int_or_null(st, 13, rec->in_flight, rec->in_flight <= 0);
	if (rec->loadavg >= 0)
		sql_bind_double(st, 14, rec->loadavg);
	sql_bind_int64(st, 15, rec->user_us);
	sql_bind_int64(st, 16, rec->sys_us);
	sql_bind_int64(st, 17, rec->maxrss_kb);
	sql_bind_int64(st, 18, (int64_t)rec->output_bytes);
	sql_bind_int64(st, 19, (int64_t)rec->output_dropped);
	bind_int_or_null(st, 20, out_id, o == NULL);
	bind_int_or_null(st, 21, err_id, e == NULL);
	bind_text(st, 22, error);
	bind_text(st, 23, rec->content_hash);
	sql_bind_int64(st, 24, rec->started_ms);
	bind_text(st, 25, rec->trigger);
	bind_text(st, 26, flaky_run_kind_name(rec->kind));
	bind_text(st, 27, rec->incomplete);
	bind_text(st, 28, rec->perturbation);
	bind_text(st, 29, rec->box ? rec->box : flaky_store_box(s));
	sql_bind_int64(st, 30, rec->id == 0 ? rec->target_id : rec->id);
	if (sql_step(st) != SQL_DONE) {
		r = store_sql_error(s, err, errlen, "completing the run");
		goto fail;
	}
	if (rec->id == 0) {
		rec->id = sql_last_insert_rowid(s->db);
		inserted = 1;
	}
	if (rec->selected > 0 && (r = store_selected(s, rec, err,
	    errlen)) < 0)
		goto fail;
	/* Rates count complete suite and ingested runs: a run alone or an
	 * incomplete one keeps its results (the evidence) out of the
	 * rollups. */
	day = rec->kind == FLAKY_KIND_ALONE || rec->incomplete != NULL ? -1 :
	    rec->started_ms / 86400000;
	if (res != NULL && res->n > 0 && sql_is_pg(s->db) &&
	    (r = store_pg_week(s, rec->started_ms, err, errlen)) < 0)
		goto fail;
	for (size_t i = 0; res != NULL && i < res->n; i += CHUNK) {
		r = add_results(s, rec, day,
		    rec->box ? rec->box : flaky_store_box(s), &res->v[i],
		    res->n - i < CHUNK ? res->n - i : CHUNK, &tmp,
		    err, errlen);
		if (r < 0)
			goto fail;
	}
	/* A runner's own retries (Playwright's): every attempt, beside the
	 * result that keeps the first one's outcome. */
	if (res != NULL && res->nattempts > 0) {
		struct flaky_junit_extra x = { -1, res->attempts,
		    res->nattempts, res->acap };

		if ((r = flaky_store_add_attempts(s, rec->id, res, &x, err,
		    errlen)) < 0)
			goto fail;
	}
	/* A seeded run's margins of its approximate assertions (seed.c) */
	if (res != NULL && res->nheadroom > 0 && (r = store_add_headroom(s,
	    rec->id, res, err, errlen)) < 0)
		goto fail;
	/* Where a hung run was stuck (issue 33, stacks.c). */
	if (rec->stacks != NULL && (r = store_stacks_write(s, rec, res, err,
	    errlen)) < 0)
		goto fail;
	/* A counted run's outcomes at its revision: flips (flips.c). An
	 * ingested run's results are in already (ingest.c), its failures
	 * counted there. */
	if (day >= 0 && rec->revision != NULL && (r = store_flips_run(s,
	    rec->id, rec->target_id, rec->revision, rec->started_ms,
	    res == NULL || res->n > 0 ? failures : -1, err, errlen)) < 0)
		goto fail;
	if (own && (r = flaky_store_commit(s, err, errlen)) < 0)
		goto undo;
	r = 0;
	goto out;
fail:
	if (own)
		flaky_store_rollback(s);
undo:
	/* The row is not there: a retry must insert it again. */
	if (inserted && own)
		rec->id = 0;
out:
	store_output_packed_free(&po);
	store_output_packed_free(&pe);
	flaky_buf_free(&out);
	flaky_buf_free(&errb);
	flaky_buf_free(&tmp);
	flaky_buf_free(&msg);
	return r;
}
