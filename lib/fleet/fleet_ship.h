/* Internal to lib/fleet: the server side of shipping (ship.c, claim.c).
 * The staging tables' columns are those of flaky_ship_run_cols,
 * flaky_ship_test_cols, flaky_ship_attempt_cols and
 * flaky_ship_polluter_cols (lib/store/ship.c), in that order: the daemon
 * hands the store's rows to ship.c as they are. A test row with no local
 * id is a message: fingerprint, normalized text. Results, in the columns
 * of flaky_ship_result_cols, are kept on the box until their runs' server
 * ids are known, and go into results with COPY. */
#ifndef FLAKY_FLEET_SHIP_H
#define FLAKY_FLEET_SHIP_H

#define FLEET_SHIP_RUN_NCOLS	37	/* FLAKY_SHIP_RUN_NCOLS */
#define FLEET_SHIP_RESULT_NCOLS	8
#define FLEET_SHIP_TEST_NCOLS	3
#define FLEET_SHIP_ATTEMPT_NCOLS	5
#define FLEET_SHIP_POLLUTER_NCOLS	8
/* Columns of a run: the bytea ones, those the rollups read. */
#define FLEET_RUN_KIND		3
#define FLEET_RUN_STARTED_MS	5
#define FLEET_RUN_DURATION_US	7
#define FLEET_RUN_USER_US	19
#define FLEET_RUN_SYS_US	20
#define FLEET_RUN_INCOMPLETE	26
#define FLEET_RUN_STDOUT_DATA	30
#define FLEET_RUN_STDERR_DATA	33

#include <stddef.h>
#include <stdint.h>

struct flaky_buf;

/* A shipped result as the rollups see it (ship_rollup.c): its run's day,
 * whether the run counts for the rates (kind not 'alone', complete), its
 * wall and CPU time; the result's server test and message ids (0: none),
 * outcome, duration and signature (NULL: none). */
struct ship_roll {
	int64_t		 day, test, run, msg;
	int64_t		 dur, wall, cpu;
	const char	*sig;
	size_t		 siglen;
	int		 outcome, has_dur, counted;
};
/* The sums of v (sorted in place) as COPY text of ship_rollups and
 * ship_failures; -1: out of memory. */
int	 fleet_ship_sums(struct ship_roll *v, size_t n,
	    struct flaky_buf *rollups, struct flaky_buf *failures);
/* One text field of COPY (ship.c). */
int	 fleet_ship_put_text(struct flaky_buf *, const unsigned char *,
	    size_t);

extern const char fleet_ship_sql_begin[];
extern const char fleet_ship_sql_staging[];
extern const char fleet_ship_sql_names[];
extern const char fleet_ship_sql_runs[];	/* $1: the box */
extern const char fleet_ship_sql_attempts[];	/* $1: the box */
extern const char fleet_ship_sql_polluters[];	/* $1: the box */
extern const char fleet_ship_sql_sums[];	/* $1: the box */

#endif
