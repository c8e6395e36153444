/* Inside the store: shared between store.c (writes) and store_query.c. */
#ifndef FLAKY_STORE_INT_H
#define FLAKY_STORE_INT_H

#include <stdint.h>
#include <sys/types.h>

#include <sqlite3.h>

#include "store.h"

sqlite3	*store_db(struct flaky_store *);
int	 store_sql_error(struct flaky_store *, char *, size_t, const char *);
void	 store_query_finalize(struct flaky_store *);
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

#endif
