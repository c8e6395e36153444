/* What flakyd asks of the store beyond recording runs: the last trigger
 * time per target (catch-up after downtime) and the last finished run per
 * target (status). Implemented in store_daemon.c. */
#ifndef FLAKY_STORE_DAEMON_H
#define FLAKY_STORE_DAEMON_H

#include <stdint.h>

#include "store.h"

/* No trigger recorded yet. */
#define FLAKY_NO_FIRE	INT64_MIN

/* The last trigger time of a target (unix ms), or FLAKY_NO_FIRE. */
int	 flaky_store_last_fire(struct flaky_store *, int64_t target_id,
	    int64_t *ret_ms, char *err, size_t errlen);
/* Remember a trigger time; one short write. */
int	 flaky_store_set_last_fire(struct flaky_store *, int64_t target_id,
	    int64_t ms, char *err, size_t errlen);

/* The last run of a target that is not running any more. */
struct flaky_last_run {
	int64_t		 target_id;
	int64_t		 run_id;	/* 0: none */
	int		 status;	/* enum flaky_run_status */
	int64_t		 started_ms;
	int64_t		 ended_ms;	/* 0: unknown */
	int64_t		 tests;
	int64_t		 failures;
};

/* The last finished run of target_id that is not a run alone; run_id
 * stays 0 when it has none. */
int	 flaky_store_last_run(struct flaky_store *, int64_t target_id,
	    struct flaky_last_run *ret, char *err, size_t errlen);

/* enum flaky_run_status from its stored name; -1 when unknown. */
int	 flaky_run_status_parse(const char *);

#endif
