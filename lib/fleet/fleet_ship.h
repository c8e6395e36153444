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

#define FLEET_SHIP_RUN_NCOLS	35	/* FLAKY_SHIP_RUN_NCOLS */
#define FLEET_SHIP_RESULT_NCOLS	8
#define FLEET_SHIP_TEST_NCOLS	3
#define FLEET_SHIP_ATTEMPT_NCOLS	5
#define FLEET_SHIP_POLLUTER_NCOLS	8
/* The bytea columns of a run. */
#define FLEET_RUN_STDOUT_DATA	30
#define FLEET_RUN_STDERR_DATA	33

extern const char fleet_ship_sql_staging[];
extern const char fleet_ship_sql_names[];
extern const char fleet_ship_sql_runs[];	/* $1: the box */
extern const char fleet_ship_sql_attempts[];	/* $1: the box */
extern const char fleet_ship_sql_polluters[];	/* $1: the box */

#endif
