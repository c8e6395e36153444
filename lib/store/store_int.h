/* Inside the store: shared between store.c (writes) and store_query.c. */
#ifndef FLAKY_STORE_INT_H
#define FLAKY_STORE_INT_H

#include <stdint.h>
#include <sys/types.h>

#include <sqlite3.h>

#include "store/store.h"

sqlite3	*store_db(struct flaky_store *);
int	 store_sql_error(struct flaky_store *, char *, size_t, const char *);
void	 store_query_finalize(struct flaky_store *);
/* A redacted copy of t into b (reset first); NULL stays NULL, NULL when
 * out of memory (store.c; lib/store/ingest.c too). */
struct flaky_buf;
const char *redacted(struct flaky_store *, const char *t, size_t len,
	    struct flaky_buf *b, size_t *ret_len);
/* Is a transaction open (flaky_store_begin)? */
int	 store_in_tx(const struct flaky_store *);

/* The process that writes a running row (store_owner.c). */
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
	sqlite3_stmt	*find;
	sqlite3_stmt	*add;
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

/* Pack len bytes of data (already redacted); p->data points to data. */
int	store_output_pack(struct store_packed *p, const void *data,
	    size_t len, char *err, size_t errlen);
/* Free what store_output_pack allocated; a zeroed struct is fine. */
void	store_output_packed_free(struct store_packed *);

/* The id of the outputs row that holds the packed content, added when no
 * row holds it yet. In the open transaction. 0, -ENOMEM, or -EIO for an
 * SQLite error of the step *what names: the connection has its code and
 * message (the store, which knows its path and bounds, words it). */
int	store_output_put(sqlite3 *, struct store_output *,
	    const struct store_packed *, int64_t *ret_id, const char **what);
/* Finalize the statements; the struct may be used again. */
void	store_output_finalize(struct store_output *);

#endif
