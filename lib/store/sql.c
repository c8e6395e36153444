/* The store's statements: each call goes to SQLite's function of the same
 * name, or to PostgreSQL's side in sql_pg.c. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "sql.h"
#include "util/util.h"

struct sql *
sql_wrap_sqlite(sqlite3 *db)
{
	struct sql	*c;

	if ((c = calloc(1, sizeof *c)) == NULL) {
		sqlite3_close(db);
		return NULL;
	}
	c->lite = db;
	return c;
}

void
sql_close(struct sql *c)
{
	if (c == NULL)
		return;
	if (c->lite != NULL)
		sqlite3_close(c->lite);
	else
		sql_pg_close(c);
	free(c);
}

int
sql_is_pg(const struct sql *c)
{
	return c->lite == NULL;
}

sqlite3 *
sql_sqlite(struct sql *c)
{
	return c->lite;
}

static int
prepare(struct sql *c, const char *text, unsigned int flags,
    struct sql_stmt **ret)
{
	struct sql_stmt	*st;
	int		 rc;

	*ret = NULL;
	if ((st = calloc(1, sizeof *st)) == NULL)
		return SQL_NOMEM;
	st->db = c;
	if (c->lite != NULL)
		rc = sqlite3_prepare_v3(c->lite, text, -1, flags, &st->lite,
		    NULL);
	else
		rc = sql_pg_prepare(c, text, st);
	if (rc != SQL_OK) {
		sql_finalize(st);
		return rc;
	}
	*ret = st;
	return SQL_OK;
}

int
sql_prepare_v2(struct sql *c, const char *text, int len,
    struct sql_stmt **ret, const char **tail)
{
	(void)len;
	(void)tail;
	return prepare(c, text, 0, ret);
}

int
sql_prepare_v3(struct sql *c, const char *text, int len, unsigned int flags,
    struct sql_stmt **ret, const char **tail)
{
	(void)len;
	(void)tail;
	return prepare(c, text, flags, ret);
}

int
sql_bind_int64(struct sql_stmt *st, int i, int64_t v)
{
	char	 b[24];

	if (st->lite != NULL)
		return sqlite3_bind_int64(st->lite, i, v);
	snprintf(b, sizeof b, "%lld", (long long)v);
	return sql_pg_bind(st, i, b, -1, 0, 20);	/* int8 */
}

int
sql_bind_int(struct sql_stmt *st, int i, int v)
{
	return sql_bind_int64(st, i, v);
}

int
sql_bind_double(struct sql_stmt *st, int i, double v)
{
	char	 b[40];

	if (st->lite != NULL)
		return sqlite3_bind_double(st->lite, i, v);
	snprintf(b, sizeof b, "%.17g", v);
	return sql_pg_bind(st, i, b, -1, 0, 701);	/* float8 */
}

int
sql_bind_text(struct sql_stmt *st, int i, const char *v, int len,
    void (*d)(void *))
{
	if (st->lite != NULL)
		return sqlite3_bind_text(st->lite, i, v, len, d);
	if (v == NULL)
		return sql_pg_bind(st, i, NULL, 0, 0, 0);
	return sql_pg_bind(st, i, v, len < 0 ? (int)strlen(v) : len, 0, 0);
}

int
sql_bind_blob(struct sql_stmt *st, int i, const void *v, int len,
    void (*d)(void *))
{
	if (st->lite != NULL)
		return sqlite3_bind_blob(st->lite, i, v, len, d);
	if (v == NULL)
		return sql_pg_bind(st, i, NULL, 0, 0, 0);
	return sql_pg_bind(st, i, v, len, 1, 17);	/* bytea */
}

int
sql_bind_null(struct sql_stmt *st, int i)
{
	if (st->lite != NULL)
		return sqlite3_bind_null(st->lite, i);
	return sql_pg_bind(st, i, NULL, 0, 0, 0);
}

int
sql_bind_parameter_count(struct sql_stmt *st)
{
	if (st->lite != NULL)
		return sqlite3_bind_parameter_count(st->lite);
	return st->nparam;
}

int
sql_clear_bindings(struct sql_stmt *st)
{
	if (st->lite != NULL)
		return sqlite3_clear_bindings(st->lite);
	for (int i = 1; i <= st->nparam; i++)
		sql_pg_bind(st, i, NULL, 0, 0, 0);
	return SQL_OK;
}

int
sql_step(struct sql_stmt *st)
{
	if (st->lite != NULL)
		return sqlite3_step(st->lite);
	return sql_pg_step(st);
}

int
sql_reset(struct sql_stmt *st)
{
	if (st->lite != NULL)
		return sqlite3_reset(st->lite);
	sql_pg_reset(st);
	return SQL_OK;
}

int
sql_finalize(struct sql_stmt *st)
{
	int	 rc = SQL_OK;

	if (st == NULL)
		return SQL_OK;
	if (st->lite != NULL)
		rc = sqlite3_finalize(st->lite);
	else
		sql_pg_free(st);
	free(st);
	return rc;
}

int
sql_column_type(struct sql_stmt *st, int i)
{
	if (st->lite != NULL)
		return sqlite3_column_type(st->lite, i);
	return sql_pg_column_type(st, i);
}

int64_t
sql_column_int64(struct sql_stmt *st, int i)
{
	const unsigned char *t;
	const char	*end;
	int64_t		 v;

	if (st->lite != NULL)
		return sqlite3_column_int64(st->lite, i);
	if ((t = sql_pg_column_text(st, i)) == NULL)
		return 0;
	if (t[0] == 't' && t[1] == '\0')	/* a boolean */
		return 1;
	v = flaky_scan_int((const char *)t, &end);
	if (*end == '.' || *end == 'e' || *end == 'E')	/* numeric */
		return (int64_t)strtod((const char *)t, NULL);
	return v;
}

int
sql_column_int(struct sql_stmt *st, int i)
{
	return (int)sql_column_int64(st, i);
}

double
sql_column_double(struct sql_stmt *st, int i)
{
	const unsigned char *t;

	if (st->lite != NULL)
		return sqlite3_column_double(st->lite, i);
	if ((t = sql_pg_column_text(st, i)) == NULL)
		return 0;
	if (t[0] == 't' && t[1] == '\0')
		return 1;
	return strtod((const char *)t, NULL);
}

const unsigned char *
sql_column_text(struct sql_stmt *st, int i)
{
	if (st->lite != NULL)
		return sqlite3_column_text(st->lite, i);
	return sql_pg_column_text(st, i);
}

const void *
sql_column_blob(struct sql_stmt *st, int i)
{
	if (st->lite != NULL)
		return sqlite3_column_blob(st->lite, i);
	return sql_pg_column_blob(st, i, NULL);
}

int
sql_column_bytes(struct sql_stmt *st, int i)
{
	int	 n = 0;

	if (st->lite != NULL)
		return sqlite3_column_bytes(st->lite, i);
	sql_pg_column_blob(st, i, &n);
	return n;
}

int
sql_exec(struct sql *c, const char *text, void *cb, void *arg, char **errmsg)
{
	(void)cb;
	(void)arg;
	(void)errmsg;
	if (c->lite != NULL)
		return sqlite3_exec(c->lite, text, NULL, NULL, NULL);
	return sql_pg_exec(c, text);
}

int64_t
sql_last_insert_rowid(struct sql *c)
{
	if (c->lite != NULL)
		return sqlite3_last_insert_rowid(c->lite);
	return sql_pg_last_id(c);
}

int64_t
sql_changes(struct sql *c)
{
	if (c->lite != NULL)
		return sqlite3_changes(c->lite);
	return c->changes;
}

const char *
sql_errmsg(struct sql *c)
{
	if (c->lite != NULL)
		return sqlite3_errmsg(c->lite);
	return c->errmsg;
}

int
sql_extended_errcode(struct sql *c)
{
	if (c->lite != NULL)
		return sqlite3_extended_errcode(c->lite);
	return c->errcode;
}
