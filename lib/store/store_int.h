/* Inside the store: what its files share. The handle (store.c), opening
 * it (open.c), the writes of runs (write.c), the histogram codec (hist.c)
 * and the id cache (idcache.c); the readers (query.c, history.c ...) reach
 * the connection through store_db and word errors with store_sql_error. */
#ifndef FLAKY_STORE_INT_H
#define FLAKY_STORE_INT_H

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/types.h>

#include <sqlite3.h>

#include "sql.h"

#include "store/store.h"
#include "util/util.h"

struct flaky_redactor;

/* The cached statements of the writes (write.c). */
enum {
	ST_RUN_START,
	ST_RUN_FINISH,
	ST_RUN_INSERT,
	ST_TEST_FIND,
	ST_TEST_ADD,
	ST_MSG_FIND,
	ST_MSG_ADD,
	ST_RESULT_ADD,
	ST_ROLLUP_UPDATE,
	ST_ROLLUP,
	ST_BOX_ROLLUP,
	ST_BUDGET,
	ST_FAILURE_ROLLUP,
	ST_RESULT_MANY,		/* built by many_sql() */
	ST_ROLLUP_MANY,
	ST_BOX_ROLLUP_MANY,
	ST_COUNT
};

/* Results are written CHUNK at a time with one statement each for the rows
 * and the rollups: a statement's fixed cost (cursors opened, the plan run
 * from the start) is paid once per CHUNK results instead of per result. */
#define CHUNK		64
#define RESULT_COLS	7	/* without the run id */
#define ROLLUP_COLS	8	/* test id, then ?3.. of ST_ROLLUP */
#define BOX_COLS	3	/* test id, runs, failures */

/* The SQL of the statements above (write_sql.c): NULL for the ..._MANY
 * ones, which store_write_many_sql builds (CHUNK rows; malloc'd, NULL when
 * out of memory). */
extern const char *const store_write_sql[ST_COUNT];
char	*store_write_many_sql(int which);

/* Test ids and message ids already looked up, so a run of 1,000 tests
 * does not ask SQLite 1,000 times. Cleared on rollback. */
struct idcache_ent {
	uint64_t	 hash;
	int64_t		 key;	/* target id, or the fingerprint */
	char		*name;	/* NULL for messages */
	int64_t		 id;
};

struct idcache {
	struct idcache_ent *v;
	size_t		 n, cap;	/* cap: a power of two */
};

struct sql	*store_db(struct flaky_store *);
/* An error from SQLite, naming the database. */
int	 store_sql_error(struct flaky_store *, char *, size_t, const char *);
/* Run sql; an error from SQLite names it. */
int	 store_exec(struct flaky_store *, const char *sql, char *, size_t);
/* Run sql with its integer parameters ?1 and ?2 (those it has); the rows
 * it changed added to *changes (NULL: not counted). */
int	 store_exec_ints(struct flaky_store *, const char *sql, int64_t a,
	    int64_t b, int64_t *changes, char *, size_t);
/* Prepare sql, or fill err (and set *st to NULL). */
int	 store_prepare(struct flaky_store *, const char *sql, struct sql_stmt **st,
	    char *, size_t);
/* A statement's only integer (bound to bind when it takes a parameter),
 * or def when it gives no row or NULL. */
int	 store_scalar(struct flaky_store *, const char *sql, int64_t bind,
	    int64_t def, int64_t *ret, char *, size_t);
/* A copy of column i of a row, NULL for NULL; *oom set when out of
 * memory. */
char	*store_col_dup(struct sql_stmt *, int i, int *oom);
/* The rows of st (prepared and bound; finalized here), each read by
 * fill into a new zeroed element of size sz of the array at retp (a T **),
 * fill setting *oom when out of memory. On failure the rows read so far
 * stay in *retp and *ret_n for the caller to free (notes.c). */
int	 store_rows(struct flaky_store *, struct sql_stmt *st, size_t sz,
	    void (*fill)(struct sql_stmt *, void *, int *), const char *what,
	    void *retp, size_t *ret_n, char *, size_t);
/* The names sql lists (?1 text, ?2 since_ms) as a NULL-ended array
 * (flaky_store_names_free); sql NULL: text alone (box.c). */
int	 store_names(struct flaky_store *, const char *sql, const char *text,
	    int64_t since_ms, const char *what, char ***ret, size_t *ret_n,
	    char *, size_t);
/* The same with a text bound to its parameter. */
int	 store_scalar_text(struct flaky_store *, const char *sql,
	    const char *bind, int64_t def, int64_t *ret, char *, size_t);
/* A redacted copy of t into b (reset first); NULL stays NULL, NULL when
 * out of memory (write.c; ingest.c too). */
struct flaky_buf;
const char *store_redacted(struct flaky_store *, const char *t, size_t len,
	    struct flaky_buf *b, size_t *ret_len);
/* PostgreSQL: the results the transaction inserts next start at
 * started_ms, and that week's partition is there (write.c). */
int	 store_pg_week(struct flaky_store *, int64_t started_ms, char *,
	    size_t);
/* Is a transaction open (flaky_store_begin)? */
int	 store_in_tx(const struct flaky_store *);

/* The days [*from, *to) that cover q's window, rounded outwards: the
 * rows of rollups and box_rollups it reads. */
void	 store_window_days(const struct flaky_query *, int64_t *from,
	    int64_t *to);
/* The run ids [*lo, *hi] of q's window (its times and run ids) and the
 * runs condition runs (on runs ru; lo > hi: none), and whether every run
 * in them is of the window: then a run-id range of results is exactly
 * the window's, and needs no look at each result's run. -EIO on error. */
/* Do failure_rollups hold q's failures, of every run or of the runs the
 * rates count (diag.c)? */
int	 store_failure_rollups_hold(struct flaky_store *,
	    const struct flaky_query *, int every_run);
int	 store_run_range(struct flaky_store *, const struct flaky_query *,
	    const char *runs, int64_t *lo, int64_t *hi, int *exact);
/* The statement flaky_store_test_stats reads the rollups with (query.c):
 * its unit test checks the plan of this very text. */
extern const char store_sql_test_stats_rollups[];
/* A run's share of the rerun budget (?1 the run id; write_sql.c, for
 * ingest.c): read through the results' primary key, as its unit test
 * checks. */
extern const char store_sql_budget_run[];
/* ... and its failures per test, message and signature. */
extern const char store_sql_failure_rollups_run[];
/* The failures of a range of runs, for clusters (cluster.c): read through
 * the partial index results_failed, as its unit test checks. */
extern const char store_sql_cofail_fails[];
/* The window of a stored run's tests for alerts (alerts.c). */
extern const char store_sql_alert_window[];

/* The cached ids (idcache.c); 0 when not cached. */
void	 store_idcache_clear(struct idcache *);
int64_t	 store_idcache_get(struct idcache *, uint64_t hash, int64_t key,
	    const char *name);
int	 store_idcache_put(struct idcache *, uint64_t hash, int64_t key,
	    const char *name, int64_t id);

/* flaky_hist_add(hist, duration_us) on a connection (hist.c); returns an
 * SQLite result code. */
int	 store_hist_register(sqlite3 *);
/* Add the histogram in a column (SQLite's blob, PostgreSQL's array) to
 * counts[FLAKY_HIST_BUCKETS]. */
void	 store_hist_merge_col(struct sql_stmt *, int, uint64_t *);

/* The process that writes a running row (owner.c). */
struct store_owner {
	char		 boot[64];	/* boot_id; "" when unknown */
	pid_t		 pid;		/* 0: unknown (no /proc) */
	int64_t		 start;		/* /proc/PID/stat field 22 */
};
/* This process, read once per process; -ENOENT without /proc (then
 * ret->pid is 0 and no owner is recorded). */
int	 store_owner_self(struct store_owner *ret);
/* A process's start time in clock ticks since boot, -1 when it is gone. */
int64_t	 store_owner_start_time(pid_t);


/* The statements of a store's output writes, prepared on first use. */
#define STORE_OUTPUT_MEMO	256	/* bytes: the last small output */

struct store_output {
	struct sql_stmt	*find;
	struct sql_stmt	*add;
	/* The last small output stored in this transaction and its id: most
	 * runs repeat it (an empty stderr), and the runs of one grouped
	 * commit save two statements each. Forgotten at the commit (another
	 * process may prune the row after it) and at a rollback. */
	int		 memo_valid;
	int64_t		 memo_id;
	size_t		 memo_len;
	unsigned char	 memo[STORE_OUTPUT_MEMO];
};
/* Forget the memo (a rollback). */
void	store_output_forget(struct store_output *);

/* sqlar_compress(X), sqlar_uncompress(X, SZ) (what the sqlite3 shell has
 * built in) and flaky_output_hash(X) on a connection: before migrating
 * (0006 moves output with them), and on every connection so that the view
 * run_output reads. Returns an SQLite result code. */
int	store_output_register(sqlite3 *);

/* One output made ready to store: hashed, and deflated where that makes
 * it smaller. Made before the transaction, so that other writers wait for
 * the writes only, not for deflate (about 3 ms for a 164 kB pytest -v
 * output here). */
struct store_packed {
	const void	*data;		/* the content; not owned */
	size_t		 len;
	int64_t		 hash;
	unsigned char	*z;		/* deflated, or NULL: stored raw */
	size_t		 zlen;
};

/* Pack len bytes of data (already redacted); p->data points to data.
 * raw: not deflated, for PostgreSQL, where outputs hold the content
 * itself (docs/fleet.md; schema/pg/0010 checks it). */
int	store_output_pack(struct store_packed *p, const void *data,
	    size_t len, int raw, char *err, size_t errlen);
/* Free what store_output_pack allocated; a zeroed struct is fine. */
void	store_output_packed_free(struct store_packed *);

/* The id of the outputs row that holds the packed content, added when no
 * row holds it yet. In the open transaction. 0, -ENOMEM, or -EIO for an
 * SQLite error of the step *what names: the connection has its code and
 * message (the store, which knows its path and bounds, words it). */
int	store_output_put(struct sql *, struct store_output *,
	    const struct store_packed *, int64_t *ret_id, const char **what);
/* Finalize the statements; the struct may be used again. */
void	store_output_finalize(struct store_output *);

/* The condition on the runs (alias ru) a query counts: complete runs of
 * its kinds, of its box (query.c); into buf, which it returns. */
const char *store_runs_sql(struct flaky_store *, const struct flaky_query *,
	    char *buf, size_t len);
/* runs.box (issue 15) where the schema has it, else NULL (a database
 * opened read-only before 0009-box15.sql): col is the runs table's
 * column under its alias in the query, "r.box" or "ru.box" (runs.c). */
const char *store_box_column(struct flaky_store *, const char *col);
/* " AND coalesce(ru.box, 'LOCAL') = 'BOX'" for a query of one box, ""
 * for all (box.c). The names are checked before they are put in the
 * SQL: a bad one gives " AND 0", no run. */
void	 store_box_sql(struct flaky_store *, const struct flaky_query *,
	    char *buf, size_t len);

/* ids as a JSON array, for json_each(?) (box.c); NULL: no memory. */
char	*store_ids_json(const int64_t *ids, size_t n);
/* The same of n elements of size bytes, each holding its id (int64_t)
 * at offset off: a test_id field of an array of rows. */
char	*store_ids_json_of(const void *v, size_t n, size_t size, size_t off);
/* Bind a window as perturb.c and box.c read it: ?1 ?2 run ids, ?3
 * target, ?4 ?5 times. */
void	 store_bind_window(struct sql_stmt *, const struct flaky_query *);
/* The margins of a seeded run's results (res->headroom) into headroom,
 * in the open transaction (seed.c). */
int	 store_add_headroom(struct flaky_store *, int64_t run_id,
	    const struct flaky_results *res, char *err, size_t errlen);
/* A failed run's share of the rerun budget: test, UTC day, runs, wall
 * and CPU time. */
typedef void (*store_budget_fn)(void *arg, int64_t test_id, int64_t day,
	    int64_t runs, int64_t wall_us, int64_t cpu_us);
/* The rerun budget of q->box's runs started in days [from, to), read from
 * its runs and their failed results (the budget table is of every box),
 * one call of add per failed result. 0 or a negative errno with err. */
int	 store_box_budget(struct flaky_store *, const struct flaky_query *q,
	    int64_t from, int64_t to, store_budget_fn add, void *arg,
	    char *err, size_t errlen);
/* The SQL of flaky_store_box_stats (box.c), for its plan in the tests;
 * NULL: no memory. */
char	*store_box_stats_sql(struct flaky_store *, const struct flaky_query *);

/* The handle: made by flaky_store_open (open.c), its transactions in
 * store.c, its cached statements and ids used by the writes (write.c). */
struct flaky_store {
	struct sql		*db;
	char			*path;
	char			*name;		/* as shown */
	int			 flags;
	int			 in_tx;
	int			 busy_ms;	/* the bound of a wait */
	int			 orphans;	/* marked by the open */
	int64_t			 busy_start_us;	/* this wait's start */
	uint64_t		 rnd;		/* backoff jitter */
	int			 yielding;	/* flaky_store_set_yielding */
	struct sql_stmt		*st[ST_COUNT];
	struct idcache		 tests, msgs;
	struct flaky_redactor	*redact;
	struct store_output	 output;
	char			 box[FLAKY_BOX_MAX + 1];	/* "": not yet */
};

#endif
