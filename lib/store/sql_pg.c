/* The store's statements on PostgreSQL (sql.h): libpq, one PQexecParams
 * per execution, its rows read as text. The store's SQL is SQLite's; the
 * few phrases PostgreSQL spells otherwise are translated once, at prepare
 * (sql_pg_translate); the rest of the dialect is kept to what both
 * understand, or given PostgreSQL functions of the same name in
 * schema/pg. */
#include "buildconf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libpq-fe.h>

#include "fleet/fleet.h"
#include "util/util.h"
#include "sql.h"

#define OID_BOOL	16
#define OID_BYTEA	17
#define OID_INT8	20
#define OID_INT2	21
#define OID_INT4	23
#define OID_OID		26
#define OID_FLOAT4	700
#define OID_FLOAT8	701
#define OID_NUMERIC	1700

struct sql *
sql_wrap_pg(struct flaky_fleet *f)
{
	struct sql	*c;

	if ((c = calloc(1, sizeof *c)) == NULL) {
		flaky_fleet_close(f);
		return NULL;
	}
	c->fleet = f;
	return c;
}

void
sql_pg_close(struct sql *c)
{
	flaky_fleet_close(c->fleet);
}

int
sql_pg_lost(struct sql *c)
{
	return c->lost || flaky_fleet_lost(c->fleet);
}

static PGconn *
conn(struct sql *c)
{
	return (PGconn *)flaky_fleet_pq(c->fleet);
}

/* Is the word w (letters, one space between words) at s, case aside, and
 * not followed by a letter, digit or '_'? Its length, or 0. */
static size_t
word_at(const char *s, const char *w)
{
	size_t	 n = strlen(w);

	if (strncasecmp(s, w, n) != 0)
		return 0;
	if (isalnum((unsigned char)w[n - 1]) &&
	    (isalnum((unsigned char)s[n]) || s[n] == '_'))
		return 0;
	return n;
}

/* The phrases of SQLite's dialect the store uses, and PostgreSQL's. */
static const struct phrase {
	const char	*lite;
	const char	*pg;
} phrases[] = {
	{ "BEGIN IMMEDIATE", "BEGIN" },
	{ "BEGIN EXCLUSIVE", "BEGIN" },
	{ "AS REAL", "AS double precision" },
	{ "AS INTEGER", "AS bigint" },
	{ "LIMIT -1", "LIMIT ALL" },
	{ "WITHOUT ROWID", "" },
	{ "json_each", "flaky_json_each" },
	{ "NOT INDEXED", "" },		/* SQLite's planner hints */
	{ "CROSS JOIN", "JOIN" },	/* SQLite's "keep this order": ON */
	{ "temp.", "pg_temp." },
};

char *
sql_pg_translate(const char *in)
{
	struct flaky_buf b;
	const char	*p = in;
	size_t		 n, at = SIZE_MAX;	/* where a RETURNING starts */
	int		 maxp = 0, ignore = 0;
	char		 quote = 0;

	while (isspace((unsigned char)*p))
		p++;
	if (word_at(p, "PRAGMA"))
		return strdup("");
	flaky_buf_init(&b);
	while (*p != '\0') {
		if (quote != 0 || *p == '\'' || *p == '"') {
			quote = quote == 0 ? *p : *p == quote ? 0 : quote;
			flaky_buf_addc(&b, *p++);
			continue;
		}
		if (*p == '?') {
			int	 k = maxp + 1;

			if (isdigit((unsigned char)*++p))
				k = (int)strtol(p, (char **)&p, 10);
			if (k > maxp)
				maxp = k;
			flaky_buf_printf(&b, "$%d", k);
			continue;
		}
		if (p == in || !(isalnum((unsigned char)p[-1]) ||
		    p[-1] == '_')) {
			size_t	 i;

			if ((n = word_at(p, "INDEXED BY")) != 0) {
				p += n;
				while (isspace((unsigned char)*p))
					p++;
				while (isalnum((unsigned char)*p) || *p == '_')
					p++;
				continue;
			}
			if ((n = word_at(p, "INSERT OR IGNORE")) != 0) {
				flaky_buf_adds(&b, "INSERT");
				p += n;
				ignore = 1;
				continue;
			}
			/* ON CONFLICT DO NOTHING goes before RETURNING */
			if (word_at(p, "RETURNING"))
				at = b.len;
			for (i = 0; i < FLAKY_ARRAY_SIZE(phrases); i++)
				if ((n = word_at(p, phrases[i].lite)) != 0)
					break;
			if (i < FLAKY_ARRAY_SIZE(phrases)) {
				flaky_buf_adds(&b, phrases[i].pg);
				p += n;
				continue;
			}
		}
		flaky_buf_addc(&b, *p++);
	}
	if (b.oom) {
		flaky_buf_free(&b);
		return NULL;
	}
	while (b.len > 0 && (isspace((unsigned char)b.data[b.len - 1]) ||
	    b.data[b.len - 1] == ';'))
		b.data[--b.len] = '\0';
	if (ignore) {
		char	*t = flaky_buf_steal(&b);
		size_t	 len;

		if (t == NULL)
			return NULL;
		len = strlen(t);
		if (at > len)
			at = len;
		flaky_buf_init(&b);
		flaky_buf_printf(&b, "%.*s%sON CONFLICT DO NOTHING%s%s",
		    (int)at, t, at == len ? " " : "", at == len ? "" : " ",
		    t + at);
		free(t);
	}
	return flaky_buf_steal(&b);
}

/* Word PostgreSQL's error as SQLite's code and a one-line message. */
static int
pg_error(struct sql *c, const PGresult *res)
{
	const char	*state = NULL, *msg = NULL;
	int		 code = SQL_ERROR;
	size_t		 n;

	if (res != NULL) {
		state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
	}
	if (msg == NULL)
		msg = PQerrorMessage(conn(c));
	/* No SQLSTATE: libpq's own (the server closed the connection, none
	 * is left); 08: a connection exception; 57P01-57P03: the server
	 * shuts down or is not up yet. The connection is of no more use,
	 * even when libpq has not marked it bad yet (a failed write). */
	if (state == NULL || strncmp(state, "08", 2) == 0 ||
	    strncmp(state, "57P0", 4) == 0 ||
	    PQstatus(conn(c)) != CONNECTION_OK)
		c->lost = 1;
	if (state == NULL || PQstatus(conn(c)) != CONNECTION_OK)
		code = SQL_IOERR;
	else if (strncmp(state, "23", 2) == 0)
		code = SQL_CONSTRAINT;
	else if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0 ||
	    strcmp(state, "55P03") == 0)
		code = SQL_BUSY;
	else if (strcmp(state, "53100") == 0)
		code = SQL_FULL;
	else if (strcmp(state, "53200") == 0)
		code = SQL_NOMEM;
	else if (strcmp(state, "42501") == 0)
		code = SQL_PERM;
	else if (strcmp(state, "25006") == 0)
		code = SQL_READONLY;
	else if (strncmp(state, "08", 2) == 0)
		code = SQL_IOERR;
	snprintf(c->errmsg, sizeof c->errmsg, "%s", msg != NULL && *msg ?
	    msg : "PostgreSQL: unknown error");
	n = strcspn(c->errmsg, "\n");
	c->errmsg[n] = '\0';
	c->errcode = code;
	return code;
}

int
sql_pg_prepare(struct sql *c, const char *text, struct sql_stmt *st)
{
	const char	*p;
	int		 n = 0;

	if ((st->text = sql_pg_translate(text)) == NULL)
		return SQL_NOMEM;
	for (p = st->text; (p = strchr(p, '$')) != NULL; p++)
		if (isdigit((unsigned char)p[1]) && atoi(p + 1) > n)
			n = atoi(p + 1);
	st->nparam = n;
	if (n > 0) {
		st->val = calloc((size_t)n, sizeof *st->val);
		st->len = calloc((size_t)n, sizeof *st->len);
		st->fmt = calloc((size_t)n, sizeof *st->fmt);
		st->type = calloc((size_t)n, sizeof *st->type);
		st->used = calloc((size_t)n, 1);
		if (st->val == NULL || st->len == NULL || st->fmt == NULL ||
		    st->type == NULL || st->used == NULL)
			return SQL_NOMEM;
		/* A parameter the text does not use (SQLite's ?4 without ?2)
		 * still needs a type: text. */
		for (p = st->text; (p = strchr(p, '$')) != NULL; p++)
			if (isdigit((unsigned char)p[1]))
				st->used[atoi(p + 1) - 1] = 1;
		for (int i = 0; i < n; i++)
			if (!st->used[i])
				st->type[i] = 25;
	}
	(void)c;
	return SQL_OK;
}

int
sql_pg_bind(struct sql_stmt *st, int i, const void *v, int len, int fmt,
    unsigned int type)
{
	char	*copy = NULL;

	if (i < 1 || i > st->nparam)
		return SQLITE_RANGE;
	if (v != NULL) {
		if (len < 0)
			len = (int)strlen(v);
		if ((copy = malloc((size_t)len + 1)) == NULL)
			return SQL_NOMEM;
		memcpy(copy, v, (size_t)len);
		copy[len] = '\0';
	}
	free(st->val[i - 1]);
	st->val[i - 1] = copy;
	st->len[i - 1] = len;
	st->fmt[i - 1] = fmt;
	st->type[i - 1] = !st->used[i - 1] ? 25 : v != NULL ? type : 0;
	return SQL_OK;
}

static void
blobs_free(struct sql_stmt *st)
{
	if (st->blob == NULL)
		return;
	for (int i = 0; i < st->ncols; i++) {
		PQfreemem(st->blob[i]);
		st->blob[i] = NULL;
	}
}

void
sql_pg_reset(struct sql_stmt *st)
{
	blobs_free(st);
	free(st->blob);
	free(st->bloblen);
	st->blob = NULL;
	st->bloblen = NULL;
	PQclear(st->res);
	st->res = NULL;
	st->state = 0;
}

void
sql_pg_free(struct sql_stmt *st)
{
	char	 q[64];

	sql_pg_reset(st);
	if (st->name[0] != '\0') {
		snprintf(q, sizeof q, "DEALLOCATE %s", st->name);
		PQclear(PQexec(conn(st->db), q));
	}
	free(st->ptype);
	for (int i = 0; i < st->nparam && st->val != NULL; i++)
		free(st->val[i]);
	free(st->val);
	free(st->len);
	free(st->fmt);
	free(st->type);
	free(st->used);
	free(st->text);
}

/* A statement run a second time (a cached one: the writes, ingest's) is
 * prepared on the server, which then parses and plans it once; one run
 * once (most reads) is not, which would cost two more round trips. Not
 * transactional: a prepared statement outlives a rollback. */
static void
pg_prepare(struct sql_stmt *st)
{
	struct sql	*c = st->db;
	PGresult	*res;
	char		 name[sizeof st->name];

	if (st->nparam > 0 && (st->ptype = malloc((size_t)st->nparam *
	    sizeof *st->ptype)) == NULL)
		return;
	if (st->nparam > 0)
		memcpy(st->ptype, st->type, (size_t)st->nparam *
		    sizeof *st->ptype);
	snprintf(name, sizeof name, "flaky%u", ++c->nprepared);
	res = PQprepare(conn(c), name, st->text, st->nparam, st->type);
	if (PQresultStatus(res) == PGRES_COMMAND_OK)
		memcpy(st->name, name, sizeof name);
	PQclear(res);
}

/* Do this execution's parameters fit the types it was prepared with?
 * (A value where the server guessed the type from a NULL, or of another
 * type: sent unprepared.) */
static int
pg_types_fit(const struct sql_stmt *st)
{
	for (int i = 0; i < st->nparam; i++)
		if (st->val[i] != NULL && st->type[i] != st->ptype[i])
			return 0;
	return 1;
}

int
sql_pg_step(struct sql_stmt *st)
{
	struct sql	*c = st->db;
	PGresult	*res;

	if (st->state == 2)
		return SQL_DONE;
	if (st->state == 1) {
		blobs_free(st);
		if (++st->row < st->nrows)
			return SQL_ROW;
		st->state = 2;
		return SQL_DONE;
	}
	if (st->text[0] == '\0') {	/* nothing for PostgreSQL */
		st->state = 2;
		return SQL_DONE;
	}
	if (st->execs++ == 1)
		pg_prepare(st);
	if (st->name[0] != '\0' && pg_types_fit(st))
		res = PQexecPrepared(conn(c), st->name, st->nparam,
		    (const char *const *)st->val, st->len, st->fmt, 0);
	else
		res = PQexecParams(conn(c), st->text, st->nparam, st->type,
		    (const char *const *)st->val, st->len, st->fmt, 0);
	switch (PQresultStatus(res)) {
	case PGRES_COMMAND_OK:
		c->changes = strtoll(PQcmdTuples(res), NULL, 10);
		PQclear(res);
		st->state = 2;
		return SQL_DONE;
	case PGRES_TUPLES_OK:
		c->changes = strtoll(PQcmdTuples(res), NULL, 10);
		st->res = res;
		st->nrows = PQntuples(res);
		st->ncols = PQnfields(res);
		st->row = 0;
		st->blob = calloc((size_t)st->ncols + 1, sizeof *st->blob);
		st->bloblen = calloc((size_t)st->ncols + 1,
		    sizeof *st->bloblen);
		if (st->blob == NULL || st->bloblen == NULL)
			return SQL_NOMEM;
		if (st->nrows == 0) {
			st->state = 2;
			return SQL_DONE;
		}
		st->state = 1;
		return SQL_ROW;
	default:
		pg_error(c, res);
		PQclear(res);
		st->state = 2;
		return c->errcode;
	}
}

static int
on_row(struct sql_stmt *st, int i)
{
	return st->state == 1 && st->res != NULL && i >= 0 && i < st->ncols &&
	    st->row < st->nrows;
}

int
sql_pg_column_type(struct sql_stmt *st, int i)
{
	if (!on_row(st, i) || PQgetisnull(st->res, st->row, i))
		return SQL_NULL;
	switch (PQftype(st->res, i)) {
	case OID_BOOL:
	case OID_INT2:
	case OID_INT4:
	case OID_INT8:
	case OID_OID:
		return SQL_INTEGER;
	case OID_FLOAT4:
	case OID_FLOAT8:
	case OID_NUMERIC:
		return SQL_FLOAT;
	case OID_BYTEA:
		return SQL_BLOB;
	default:
		return SQL_TEXT;
	}
}

const unsigned char *
sql_pg_column_text(struct sql_stmt *st, int i)
{
	if (!on_row(st, i) || PQgetisnull(st->res, st->row, i))
		return NULL;
	return (const unsigned char *)PQgetvalue(st->res, st->row, i);
}

const void *
sql_pg_column_blob(struct sql_stmt *st, int i, int *ret_len)
{
	if (ret_len != NULL)
		*ret_len = 0;
	if (!on_row(st, i) || PQgetisnull(st->res, st->row, i))
		return NULL;
	if (PQftype(st->res, i) != OID_BYTEA) {
		if (ret_len != NULL)
			*ret_len = PQgetlength(st->res, st->row, i);
		return PQgetvalue(st->res, st->row, i);
	}
	if (st->blob[i] == NULL) {
		st->blob[i] = PQunescapeBytea((const unsigned char *)
		    PQgetvalue(st->res, st->row, i), &st->bloblen[i]);
		if (st->blob[i] == NULL)
			return NULL;
	}
	if (ret_len != NULL)
		*ret_len = (int)st->bloblen[i];
	return st->blob[i];
}

int
sql_pg_exec(struct sql *c, const char *text)
{
	PGresult	*res;
	char		*t;
	int		 rc = SQL_OK;

	if ((t = sql_pg_translate(text)) == NULL)
		return SQL_NOMEM;
	if (t[0] != '\0') {
		res = PQexec(conn(c), t);
		if (PQresultStatus(res) != PGRES_COMMAND_OK &&
		    PQresultStatus(res) != PGRES_TUPLES_OK)
			rc = pg_error(c, res);
		else
			c->changes = strtoll(PQcmdTuples(res), NULL, 10);
		PQclear(res);
	}
	free(t);
	return rc;
}

int64_t
sql_pg_last_id(struct sql *c)
{
	PGresult	*res;
	int64_t		 id = 0;

	res = PQexec(conn(c), "SELECT lastval()");
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
		id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return id;
}
