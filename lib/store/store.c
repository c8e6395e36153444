/* The evidence database's handle: what the other files of the store reach
 * it through, its errors, and its transactions. Opening it is in open.c,
 * the writes of a run in write.c, the reads in query.c and history.c. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "fleet/fleet.h"
#include "util/util.h"
#include "store/store.h"
#include "store_int.h"

struct sql *
store_db(struct flaky_store *s)
{
	return s->db;
}

int
store_in_tx(const struct flaky_store *s)
{
	return s->in_tx;
}

int
flaky_store_is_server(const char *path)
{
	return flaky_fleet_is_uri(path);
}

const char *
flaky_store_path(const struct flaky_store *s)
{
	return s->path;
}

const char *
flaky_store_name(const struct flaky_store *s)
{
	return s->name;
}

const char *
flaky_store_shown(const char *path, char *buf, size_t len)
{
	if (flaky_fleet_is_uri(path))
		return flaky_fleet_redact_uri(path, buf, len);
	if (flaky_fleet_is_conninfo(path))
		snprintf(buf, len, "(a connection string)");
	else
		snprintf(buf, len, "%s", path);
	return buf;
}

int
flaky_store_set_box(struct flaky_store *s, const char *box, char *err,
    size_t errlen)
{
	int	 r;

	if ((r = flaky_box_check(box, err, errlen)) < 0)
		return r;
	memcpy(s->box, box, strlen(box) + 1);
	return 0;
}

const char *
flaky_store_box(struct flaky_store *s)
{
	/* the host name is looked up once, when a run is first written
	 * or read by box */
	if (s->box[0] == '\0')
		flaky_box_default(s->box, sizeof s->box);
	return s->box;
}

const char *
flaky_run_status_name(int s)
{
	static const char *const names[] = {
		"running", "done", "timeout", "error", "interrupted", "skipped",
		"stopped"
	};

	if (s < 0 || s > FLAKY_RUN_STOPPED)
		return "unknown";
	return names[s];
}

const char *
flaky_run_kind_name(int k)
{
	static const char *const names[] = { "suite", "alone", "ingested" };

	if (k < 0 || k > FLAKY_KIND_INGESTED)
		return "unknown";
	return names[k];
}

/* An error from SQLite, naming the database. */
static int
sql_error(struct flaky_store *s, char *err, size_t errlen, const char *what)
{
	int	 rc = sql_extended_errcode(s->db);
	int	 code = EIO;

	if ((rc & 0xff) == SQL_BUSY || (rc & 0xff) == SQL_LOCKED)
		return flaky_error(err, errlen, EBUSY, "%s: %s: busy: another "
		    "writer held the database for longer than this one waits "
		    "(%d ms); try again",
		    s->name, what, s->busy_ms);
	else if ((rc & 0xff) == SQL_READONLY || (rc & 0xff) == SQL_PERM
	    || (rc & 0xff) == SQL_CANTOPEN)
		code = EACCES;
	else if ((rc & 0xff) == SQL_FULL)
		code = ENOSPC;
	else if ((rc & 0xff) == SQL_NOMEM)
		code = ENOMEM;
	return flaky_error(err, errlen, code, "%s: %s: %s", s->name, what,
	    sql_errmsg(s->db));
}

int
store_sql_error(struct flaky_store *s, char *err, size_t errlen,
    const char *what)
{
	return sql_error(s, err, errlen, what);
}

int
store_exec_ints(struct flaky_store *s, const char *sql, int64_t a, int64_t b,
    int64_t *changes, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	if ((r = store_prepare(s, sql, &st, err, errlen)) < 0)
		return r;
	if (sql_bind_parameter_count(st) >= 1)
		sql_bind_int64(st, 1, a);
	if (sql_bind_parameter_count(st) >= 2)
		sql_bind_int64(st, 2, b);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "writing");
	else if (changes != NULL)
		*changes += sql_changes(store_db(s));
	sql_finalize(st);
	return r;
}

int
store_exec(struct flaky_store *s, const char *sql, char *err, size_t errlen)
{
	if (sql_exec(s->db, sql, NULL, NULL, NULL) != SQL_OK)
		return sql_error(s, err, errlen, sql);
	return 0;
}

/* Prepare, or fill err. */
int
store_prepare(struct flaky_store *s, const char *sql, struct sql_stmt **st,
    char *err, size_t errlen)
{
	if (sql_prepare_v2(store_db(s), sql, -1, st, NULL) != SQL_OK) {
		*st = NULL;
		return store_sql_error(s, err, errlen, "preparing a query");
	}
	return 0;
}

/* A statement's only integer, or def when it gives no row or NULL; its
 * parameter, if any, an integer or (text not NULL) a text. */
static int
scalar(struct flaky_store *s, const char *sql, int64_t bind, const char *text,
    int64_t def, int64_t *ret, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r, rc;

	if ((r = store_prepare(s, sql, &st, err, errlen)) < 0)
		return r;
	if (sql_bind_parameter_count(st) > 0 && text != NULL)
		sql_bind_text(st, 1, text, -1, SQL_STATIC);
	else if (sql_bind_parameter_count(st) > 0)
		sql_bind_int64(st, 1, bind);
	*ret = def;
	rc = sql_step(st);
	if (rc == SQL_ROW && sql_column_type(st, 0) != SQL_NULL)
		*ret = sql_column_int64(st, 0);
	if (rc != SQL_ROW && rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading");
	sql_finalize(st);
	return r;
}

/* A copy of column i, NULL for NULL; *oom set when out of memory. */
char *
store_col_dup(struct sql_stmt *st, int i, int *oom)
{
	const char	*t = (const char *)sql_column_text(st, i);
	char		*c;

	if (sql_column_type(st, i) == SQL_NULL || t == NULL)
		return NULL;
	if ((c = strdup(t)) == NULL)
		*oom = 1;
	return c;
}

int
store_scalar(struct flaky_store *s, const char *sql, int64_t bind, int64_t def,
    int64_t *ret, char *err, size_t errlen)
{
	return scalar(s, sql, bind, NULL, def, ret, err, errlen);
}

int
store_scalar_text(struct flaky_store *s, const char *sql, const char *bind,
    int64_t def, int64_t *ret, char *err, size_t errlen)
{
	return scalar(s, sql, 0, bind, def, ret, err, errlen);
}

int
flaky_store_add_redaction(struct flaky_store *s, const char *regex,
    char *err, size_t errlen)
{
	return flaky_redactor_add(s->redact, regex, err, errlen);
}

/* Reset every cached statement: one left on a row holds a read
 * transaction open, and a connection whose read snapshot is older than
 * another writer's commit can never take the write lock (SQL_BUSY at
 * once, whatever the busy timeout). Done around every transaction. */
static void
stmts_reset(struct flaky_store *s)
{
	for (size_t i = 0; i < ST_COUNT; i++)
		if (s->st[i] != NULL)
			sql_reset(s->st[i]);
}

int
flaky_store_begin(struct flaky_store *s, char *err, size_t errlen)
{
	int	 r;

	if (s->in_tx)
		return flaky_error(err, errlen, EALREADY,
		    "%s: a transaction is already open", s->name);
	stmts_reset(s);
	if ((r = store_exec(s, "BEGIN IMMEDIATE", err, errlen)) < 0)
		return r;
	s->in_tx = 1;
	return 0;
}

int
flaky_store_commit(struct flaky_store *s, char *err, size_t errlen)
{
	int	 r;

	if (!s->in_tx)
		return 0;
	stmts_reset(s);
	/* Another process may prune the memo's row once it is committed. */
	store_output_forget(&s->output);
	if ((r = store_exec(s, "COMMIT", err, errlen)) < 0) {
		flaky_store_rollback(s);
		return r;
	}
	s->in_tx = 0;
	return 0;
}

void
flaky_store_rollback(struct flaky_store *s)
{
	if (!s->in_tx)
		return;
	stmts_reset(s);
	sql_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->in_tx = 0;
	/* Ids handed out inside the transaction are gone. */
	store_idcache_clear(&s->tests);
	store_idcache_clear(&s->msgs);
	store_output_forget(&s->output);
}
