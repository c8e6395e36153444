/* The store's statements on either backend: SQLite (a file, the default)
 * or PostgreSQL (a connection URI; docs/fleet.md). The rest of the store
 * prepares, binds, steps and reads columns through these, with SQLite's
 * names and codes, and does not know which backend answers.
 *
 * On SQLite each call is the sqlite3_ call of the same name. On
 * PostgreSQL (sql_pg.c) a statement's text is translated once at prepare
 * (?N -> $N, and the few phrases of SQLite's dialect the store uses, see
 * sql_pg_translate), parameters are kept as text (blobs as binary), the
 * first step executes it and later steps walk the rows. Booleans read as
 * 1 and 0, bytea as a blob. An error aborts PostgreSQL's transaction: a
 * statement that may fail is the caller's to avoid, not to catch. */
#ifndef FLAKY_STORE_SQL_H
#define FLAKY_STORE_SQL_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

struct flaky_fleet;

/* A connection of either backend. */
struct sql;
struct sql_stmt;

#define SQL_OK		SQLITE_OK
#define SQL_ERROR	SQLITE_ERROR
#define SQL_BUSY	SQLITE_BUSY
#define SQL_LOCKED	SQLITE_LOCKED
#define SQL_NOMEM	SQLITE_NOMEM
#define SQL_READONLY	SQLITE_READONLY
#define SQL_IOERR	SQLITE_IOERR
#define SQL_CONSTRAINT	SQLITE_CONSTRAINT
#define SQL_FULL	SQLITE_FULL
#define SQL_PERM	SQLITE_PERM
#define SQL_CANTOPEN	SQLITE_CANTOPEN
#define SQL_NOTADB	SQLITE_NOTADB
#define SQL_ROW		SQLITE_ROW
#define SQL_DONE	SQLITE_DONE

#define SQL_INTEGER	SQLITE_INTEGER
#define SQL_FLOAT	SQLITE_FLOAT
#define SQL_TEXT	SQLITE_TEXT
#define SQL_BLOB	SQLITE_BLOB
#define SQL_NULL	SQLITE_NULL

#define SQL_STATIC	SQLITE_STATIC
#define SQL_TRANSIENT	SQLITE_TRANSIENT
#define SQL_PREPARE_PERSISTENT	SQLITE_PREPARE_PERSISTENT

/* Wrap an open SQLite connection (the struct owns it from now on), or a
 * PostgreSQL one (lib/fleet; owned too). NULL when out of memory; the
 * connection is closed then. */
struct sql	*sql_wrap_sqlite(sqlite3 *);
struct sql	*sql_wrap_pg(struct flaky_fleet *);
/* Close the connection and free the struct; NULL is fine. */
void		 sql_close(struct sql *);
/* Is it PostgreSQL? The SQLite connection (NULL on PostgreSQL). */
int		 sql_is_pg(const struct sql *);
sqlite3		*sql_sqlite(struct sql *);

int		 sql_prepare_v2(struct sql *, const char *, int,
		    struct sql_stmt **, const char **);
int		 sql_prepare_v3(struct sql *, const char *, int, unsigned int,
		    struct sql_stmt **, const char **);
int		 sql_bind_int64(struct sql_stmt *, int, int64_t);
int		 sql_bind_int(struct sql_stmt *, int, int);
int		 sql_bind_double(struct sql_stmt *, int, double);
int		 sql_bind_text(struct sql_stmt *, int, const char *, int,
		    void (*)(void *));
int		 sql_bind_blob(struct sql_stmt *, int, const void *, int,
		    void (*)(void *));
int		 sql_bind_null(struct sql_stmt *, int);
int		 sql_bind_parameter_count(struct sql_stmt *);
int		 sql_clear_bindings(struct sql_stmt *);
int		 sql_step(struct sql_stmt *);
int		 sql_reset(struct sql_stmt *);
int		 sql_finalize(struct sql_stmt *);
int		 sql_column_type(struct sql_stmt *, int);
int64_t		 sql_column_int64(struct sql_stmt *, int);
int		 sql_column_int(struct sql_stmt *, int);
double		 sql_column_double(struct sql_stmt *, int);
const unsigned char *sql_column_text(struct sql_stmt *, int);
const void	*sql_column_blob(struct sql_stmt *, int);
int		 sql_column_bytes(struct sql_stmt *, int);

/* sqlite3_exec without callbacks: the arguments after sql must be NULL. */
int		 sql_exec(struct sql *, const char *, void *, void *, char **);
int64_t		 sql_last_insert_rowid(struct sql *);
int64_t		 sql_changes(struct sql *);
const char	*sql_errmsg(struct sql *);
int		 sql_extended_errcode(struct sql *);

/* The PostgreSQL text of an SQLite statement (sql_pg.c): malloc'd, NULL
 * when out of memory; "" for a statement PostgreSQL has no use for (a
 * PRAGMA). Exposed for its unit test. */
char		*sql_pg_translate(const char *);

/* The handles, for the two backends' files (sql.c, sql_pg.c) only. */
struct sql {
	sqlite3		*lite;		/* or NULL: PostgreSQL */
	struct flaky_fleet *fleet;
	int64_t		 changes;	/* the last statement's rows */
	unsigned int	 nprepared;	/* names of prepared statements */
	int		 errcode;	/* an SQL_ code */
	int		 lost;		/* PostgreSQL: the connection is gone */
	char		 errmsg[512];
};

struct sql_stmt {
	struct sql	*db;
	sqlite3_stmt	*lite;		/* or NULL: PostgreSQL */
	char		*text;		/* translated */
	int		 nparam;
	char		**val;		/* NULL: SQL NULL */
	int		*len;
	int		*fmt;		/* 1: binary (blobs) */
	unsigned int	*type;		/* an Oid, 0: the server's guess */
	char		*used;		/* does the text use $i + 1? */
	unsigned int	*ptype;		/* the types it was prepared with */
	unsigned int	 execs;
	char		 name[24];	/* prepared on the server; "": not */
	void		*res;		/* PGresult */
	int		 row, nrows, ncols;
	int		 state;		/* 0: not run, 1: rows, 2: done */
	unsigned char	**blob;		/* bytea decoded, per column */
	size_t		*bloblen;
};

/* PostgreSQL's side of the calls above (sql_pg.c). */
int	 sql_pg_prepare(struct sql *, const char *, struct sql_stmt *);
int	 sql_pg_bind(struct sql_stmt *, int, const void *, int, int fmt,
	    unsigned int type);
int	 sql_pg_step(struct sql_stmt *);
void	 sql_pg_reset(struct sql_stmt *);
void	 sql_pg_free(struct sql_stmt *);
int	 sql_pg_column_type(struct sql_stmt *, int);
const unsigned char *sql_pg_column_text(struct sql_stmt *, int);
const void *sql_pg_column_blob(struct sql_stmt *, int, int *);
int	 sql_pg_exec(struct sql *, const char *);
int64_t	 sql_pg_last_id(struct sql *);
void	 sql_pg_close(struct sql *);
/* Is the connection of no more use (lost, or a statement failed as a
 * lost connection does)? */
int	 sql_pg_lost(struct sql *);

#endif
