/* The fleet's connection to PostgreSQL (libpq) and its schema migrations:
 * schema/pg/NNNN-name.sql, compiled in by schema/embed.sh. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libpq-fe.h>

#include "fleet/fleet.h"
#include "fleet/fleet_int.h"
#include "util/util.h"

struct flaky_fleet {
	PGconn		*conn;
	char		 where[256];	/* the URI, redacted */
};

/* libpq's messages are shown by their first line: "%.*s", LINE(m). */
#define LINE(m)		(int)strcspn((m), "\n"), (m)

/* The advisory lock key of migrations: boxes migrating at once wait. */
#define FLEET_MIGRATE_LOCK	"7046971235"

/* Drop libpq's notices ("NOTICE: relation exists"): the library never
 * prints. */
static void
no_notices(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* libpq's error of a connection; it never holds the password. */
static const char *
pq_error(PGconn *conn)
{
	return conn ? PQerrorMessage(conn) : "out of memory";
}

/* The password file libpq looked in: the connection's passfile, which
 * libpq sets to PGPASSFILE or ~/.pgpass. */
static void
passfile(PGconn *conn, char *buf, size_t len)
{
	PQconninfoOption *opts = PQconninfo(conn), *o;

	snprintf(buf, len, "~/.pgpass");
	for (o = opts; o != NULL && o->keyword != NULL; o++)
		if (strcmp(o->keyword, "passfile") == 0 && o->val != NULL &&
		    o->val[0] != '\0')
			snprintf(buf, len, "%s", o->val);
	PQconninfoFree(opts);
}

/* What to check when the server said no, by what it said: a database or
 * a user that does not exist, a password that no line of the password
 * file gave (its lines name the host, port, database and user: a wrong
 * database or user name finds none), or one that was wrong (PostgreSQL
 * says the same for an unknown user). *code: -ENOENT for a database,
 * -EACCES for the rest; "" and *code unchanged for other failures. */
static void
refusal_hint(PGconn *conn, int *code, char *buf, size_t len)
{
	const char	*m = PQerrorMessage(conn), *host = PQhost(conn);
	char		 file[256];
	struct stat	 st;

	buf[0] = '\0';
	if (host == NULL || host[0] == '\0' || host[0] == '/')
		host = "localhost";
	if (strstr(m, "database \"") != NULL &&
	    strstr(m, "does not exist") != NULL) {
		*code = ENOENT;
		snprintf(buf, len, "; check the database name, the URI's path "
		    "(psql -l lists the server's databases)");
	} else if (strstr(m, "role \"") != NULL &&
	    strstr(m, "does not exist") != NULL) {
		*code = EACCES;
		snprintf(buf, len, "; check the user name, user@ or user= of "
		    "the URI (default: the name of the user flaky runs as)");
	} else if (PQconnectionNeedsPassword(conn)) {
		*code = EACCES;
		passfile(conn, file, sizeof file);
		if (stat(file, &st) == -1)
			snprintf(buf, len, "; %s", fleet_password_hint);
		else if (st.st_mode & 077)
			snprintf(buf, len, "; %s is ignored: its mode must be "
			    "0600 (chmod 0600 %s)", file, file);
		else
			snprintf(buf, len, "; no line of %s (the password "
			    "file: PGPASSFILE, else ~/.pgpass) matches "
			    "%s:%s:%s:%s (host:port:database:user, * for any): "
			    "check the database and user names of the URI "
			    "against its lines", file, host, PQport(conn),
			    PQdb(conn), PQuser(conn));
	} else if (strstr(m, "password authentication failed") != NULL) {
		*code = EACCES;
		passfile(conn, file, sizeof file);
		snprintf(buf, len, "; the password (from %s, the password "
		    "file: PGPASSFILE, else ~/.pgpass; or PGPASSWORD) or the "
		    "user name %s is wrong: PostgreSQL answers the same for "
		    "both", file, PQuser(conn));
	}
}

/* Connect with libpq's own credentials; refuse a password in the URI. */
int
flaky_fleet_connect(const char *uri, struct flaky_fleet **ret, char *err,
    size_t errlen)
{
	const char	*keys[] = { "dbname", "fallback_application_name",
			    "connect_timeout", NULL };
	const char	*vals[] = { uri, "flaky", "10", NULL };
	struct flaky_fleet *f;
	char		 hint[1024];
	int		 has_timeout = 0, rc, code;

	*ret = NULL;
	if ((f = calloc(1, sizeof *f)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "fleet: out of memory");
	flaky_fleet_redact_uri(uri, f->where, sizeof f->where);
	if ((rc = fleet_check_uri(uri, &has_timeout, hint, sizeof hint)) < 0) {
		flaky_error(err, errlen, -rc, "fleet: %s: %s", f->where, hint);
		goto fail;
	}
	if (has_timeout)
		keys[2] = NULL;		/* the URI's own wins */
	f->conn = PQconnectdbParams(keys, vals, 1);
	if (f->conn == NULL || PQstatus(f->conn) != CONNECTION_OK) {
		code = ECONNREFUSED;
		hint[0] = '\0';
		if (f->conn != NULL)
			refusal_hint(f->conn, &code, hint, sizeof hint);
		rc = flaky_error(err, errlen, code, "fleet: cannot connect to "
		    "%s: %.*s%s", f->where, LINE(pq_error(f->conn)), hint);
		goto fail;
	}
	PQsetNoticeProcessor(f->conn, no_notices, NULL);
	*ret = f;
	return 0;
fail:
	flaky_fleet_close(f);
	return rc;
}

/* Is the connection gone (the server restarted, the network broke)?
 * libpq knows once a statement has failed for it. */
int
flaky_fleet_lost(struct flaky_fleet *f)
{
	return f == NULL || f->conn == NULL ||
	    PQstatus(f->conn) != CONNECTION_OK;
}

/* Close the connection; NULL is fine. */
void
flaky_fleet_close(struct flaky_fleet *f)
{
	if (f == NULL)
		return;
	if (f->conn != NULL)
		PQfinish(f->conn);
	free(f);
}

/* libpq's connection, for the code that speaks SQL. */
struct pg_conn *
flaky_fleet_pq(struct flaky_fleet *f)
{
	return f->conn;
}

/* The number of schema/pg migrations compiled in. */
int
flaky_fleet_schema_latest(void)
{
	return (int)flaky_pg_schema_count;
}

/* Run SQL (one or more statements); -EIO with the server's message. */
static int
fleet_exec(struct flaky_fleet *f, const char *sql, const char *what,
    PGresult **ret, char *err, size_t errlen)
{
	PGresult	*res = PQexec(f->conn, sql);
	ExecStatusType	 st = PQresultStatus(res);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		flaky_error(err, errlen, EIO, "fleet: %s: %s: %.*s", f->where,
		    what, LINE(res ? PQresultErrorMessage(res) :
		    pq_error(f->conn)));
		PQclear(res);
		return -EIO;
	}
	if (ret != NULL)
		*ret = res;
	else
		PQclear(res);
	return 0;
}

/* The version of the database: 0 when empty; refuses a newer one and a
 * database that is someone else's. Inside the migration's transaction. */
static int
read_version(struct flaky_fleet *f, int *ret, char *err, size_t errlen)
{
	PGresult	*res;
	int		 rc, version, foreign;

	if ((rc = fleet_exec(f, "SELECT to_regclass('schema_version') IS NULL,"
	    " to_regclass('runs') IS NOT NULL", "reading the schema version",
	    &res, err, errlen)) < 0)
		return rc;
	version = strcmp(PQgetvalue(res, 0, 0), "t") == 0 ? -1 : 0;
	foreign = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
	PQclear(res);
	if (version == 0) {
		if ((rc = fleet_exec(f, "SELECT coalesce(max(version), 0) FROM "
		    "schema_version", "reading the schema version", &res, err,
		    errlen)) < 0)
			return rc;
		version = atoi(PQgetvalue(res, 0, 0));
		PQclear(res);
	}
	/* schema_version is made by the first migration itself. */
	if (version < 0 && foreign)
		return flaky_error(err, errlen, EPROTO, "fleet: %s: not a "
		    "flaky database (a table runs but no schema_version)",
		    f->where);
	if (version > (int)flaky_pg_schema_count)
		return flaky_error(err, errlen, EPROTO, "fleet: %s: schema "
		    "version %d is newer than this program understands (%d); "
		    "upgrade flaky", f->where, version,
		    (int)flaky_pg_schema_count);
	*ret = version < 0 ? 0 : version;
	return 0;
}

/* Apply migration i (0-based) and record it. */
static int
apply(struct flaky_fleet *f, size_t i, char *err, size_t errlen)
{
	const char	*vals[2];
	char		 num[32], what[128];
	PGresult	*res;
	int		 rc;

	snprintf(what, sizeof what, "migration %s", flaky_pg_schema_names[i]);
	if ((rc = fleet_exec(f, flaky_pg_schema_migrations[i], what, NULL,
	    err, errlen)) < 0)
		return rc;
	snprintf(num, sizeof num, "%zu", i + 1);
	vals[0] = num;
	vals[1] = flaky_pg_schema_names[i];
	res = PQexecParams(f->conn, "INSERT INTO schema_version (version, name)"
	    " VALUES ($1, $2)", 2, NULL, vals, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		rc = flaky_error(err, errlen, EIO, "fleet: %s: %s: %.*s",
		    f->where, what, LINE(PQresultErrorMessage(res)));
	PQclear(res);
	return rc;
}

/* Apply the missing migrations in one transaction, boxes in turn. */
int
flaky_fleet_migrate(struct flaky_fleet *f, int *ret_version, char *err,
    size_t errlen)
{
	size_t	 i;
	int	 rc, version = 0;

	if ((rc = fleet_exec(f, "BEGIN; SELECT pg_advisory_xact_lock("
	    FLEET_MIGRATE_LOCK ")", "locking for migration", NULL, err,
	    errlen)) < 0)
		goto fail;
	if ((rc = read_version(f, &version, err, errlen)) < 0)
		goto fail;
	for (i = (size_t)version; i < flaky_pg_schema_count; i++) {
		/* 10's CHECK needs the deflated outputs made whole first */
		if (i == 9 && (rc = fleet_inflate_outputs(f->conn, f->where,
		    err, errlen)) < 0)
			goto fail;
		if ((rc = apply(f, i, err, errlen)) < 0)
			goto fail;
	}
	if ((rc = fleet_exec(f, "COMMIT", "committing the migration", NULL,
	    err, errlen)) < 0)
		return rc;
	if (ret_version != NULL)
		*ret_version = (int)flaky_pg_schema_count;
	return 0;
fail:
	PQclear(PQexec(f->conn, "ROLLBACK"));
	return rc;
}
