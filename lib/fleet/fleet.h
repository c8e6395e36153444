/*
 * The fleet: flaky's evidence on a PostgreSQL server (docs/fleet.md).
 *
 * A connection through libpq, the PostgreSQL schema (schema/pg/NNNN-name.sql,
 * compiled in) migrated forward in one transaction, and the URI rules:
 * credentials come from libpq's own mechanisms (~/.pgpass, PGPASSFILE, a
 * service file, PGPASSWORD), never from the URI, and a URI is shown only
 * without its userinfo. Like the rest of libflaky, nothing here prints:
 * 0 or a negative errno, and a message in err.
 */
#ifndef FLAKY_FLEET_H
#define FLAKY_FLEET_H

#include <stddef.h>

struct flaky_fleet;
struct pg_conn;			/* libpq's PGconn */

/* Whether s names a PostgreSQL database (postgresql:// or postgres://)
 * rather than a SQLite file. */
int	 flaky_fleet_is_uri(const char *s);

/* Whether s is a libpq key=value connection string ("host=db
 * dbname=flaky ..."), which flaky does not take: a caller refuses it
 * without repeating it (it may hold password=). */
int	 flaky_fleet_is_conninfo(const char *s);

/* The URI as it may be shown: without userinfo ("user:secret@") and
 * without a password parameter (however its key is percent-encoded).
 * Always NUL-terminated, truncated to len. */
char	*flaky_fleet_redact_uri(const char *uri, char *buf, size_t len);

/* The URI rules without connecting: a postgresql:// URI libpq can read,
 * with the options libpq checks only when it connects (port, sslmode ...)
 * valid, without a password. -EINVAL with a message that names neither
 * the URI nor what it could not read (flakyd --check-config). */
int	 flaky_fleet_check_uri(const char *uri, char *err, size_t errlen);

/* Connect. A URI that carries a password is refused (-EINVAL) before
 * anything is sent; a server that is down gives -ECONNREFUSED, one that
 * refuses the credentials or the user -EACCES, one without the database
 * -ENOENT, each with what to check. libpq's notices are dropped. */
int	 flaky_fleet_connect(const char *uri, struct flaky_fleet **ret,
	    char *err, size_t errlen);
void	 flaky_fleet_close(struct flaky_fleet *);
/* Whether the connection is gone (the server restarted or went away):
 * known once a statement failed for that reason. */
int	 flaky_fleet_lost(struct flaky_fleet *);

/* libpq's connection, for the code that speaks SQL to it. */
struct pg_conn *flaky_fleet_pq(struct flaky_fleet *);

/* Bring the schema forward (all missing migrations, one transaction,
 * serialized between boxes by an advisory lock). A database of a newer
 * schema is refused with -EPROTO; one with tables but no schema_version
 * is not flaky's (-EPROTO). Sets *ret_version (may be NULL). */
int	 flaky_fleet_migrate(struct flaky_fleet *, int *ret_version,
	    char *err, size_t errlen);

/* The schema version of this program: the number of schema/pg files. */
int	 flaky_fleet_schema_latest(void);

/* Shipping a box's finished runs (ship.c, claim.c; docs/fleet.md).
 * Errors are -ECONNRESET when the connection is lost (reconnect), -EIO
 * for the server's other errors, with its message in err. */
/* Claim the name box for this box (claim: its machine's and database's
 * ids); -EEXIST when another box holds it. */
int	 flaky_fleet_claim(struct flaky_fleet *, const char *box,
	    const char *claim, char *err, size_t errlen);
/* One batch, one server transaction: begin, the rows of the batch in the
 * columns of flaky_ship_run_cols, _result_cols, _test_cols, _attempt_cols
 * and _polluter_cols (store.h; NULL: SQL NULL), commit (*ret_new: runs
 * the server did not have yet), and abort, which rolls back an
 * uncommitted batch and frees it. The row functions take the batch as
 * void * so that they are a struct flaky_ship_sink's callbacks as they
 * are (the sink's arg: the batch). */
struct flaky_fleet_ship;
int	 flaky_fleet_ship_begin(struct flaky_fleet *, const char *box,
	    struct flaky_fleet_ship **ret, char *err, size_t errlen);
int	 flaky_fleet_ship_run(void *sh, const char *const *v,
	    const size_t *len, char *err, size_t errlen);
int	 flaky_fleet_ship_result(void *sh, const char *const *v,
	    const size_t *len, char *err, size_t errlen);
int	 flaky_fleet_ship_test(void *sh, const char *const *v,
	    const size_t *len, char *err, size_t errlen);
int	 flaky_fleet_ship_attempt(void *sh, const char *const *v,
	    const size_t *len, char *err, size_t errlen);
int	 flaky_fleet_ship_polluter(void *sh, const char *const *v,
	    const size_t *len, char *err, size_t errlen);
int	 flaky_fleet_ship_commit(struct flaky_fleet_ship *, long long *ret_new,
	    char *err, size_t errlen);
void	 flaky_fleet_ship_abort(struct flaky_fleet_ship *);

#endif
