/* Part of store.h (include that, not this): shipping finished runs to a
 * fleet's server (ship.c, docs/fleet.md). */
#ifndef FLAKY_STORE_SHIP_H
#define FLAKY_STORE_SHIP_H

#include <stddef.h>
#include <stdint.h>

struct flaky_store;

/* Shipping finished runs to a fleet's server (ship.c, docs/fleet.md).
 * A trigger queues each run as it finishes (schema 0012-ship15.sql); a shipper reads
 * a batch from the queue, stores it elsewhere, and only then marks it
 * shipped. Columns come as text (v[i] NULL: SQL NULL) with their lengths,
 * in the order of flaky_ship_run_cols, flaky_ship_result_cols,
 * flaky_ship_attempt_cols and flaky_ship_polluter_cols; the
 * output columns (stdout_data, stderr_data) are the content as kept
 * (inflated: the server compresses on its own), with its hash. */
extern const char *const flaky_ship_run_cols[];
extern const char *const flaky_ship_result_cols[];
extern const char *const flaky_ship_test_cols[];
extern const char *const flaky_ship_attempt_cols[];
extern const char *const flaky_ship_polluter_cols[];
#define FLAKY_SHIP_RUN_NCOLS	37
#define FLAKY_SHIP_RESULT_NCOLS	8
#define FLAKY_SHIP_TEST_NCOLS	3
#define FLAKY_SHIP_ATTEMPT_NCOLS	5
#define FLAKY_SHIP_POLLUTER_NCOLS	8
struct flaky_ship_sink {
	/* A run, then each of its results (naming its test by local id)
	 * and each earlier attempt of them (a rerun's, table attempts);
	 * after the last run, each test the batch's results and polluters
	 * name, then each polluter found since the last batch (its victim
	 * by local id, the run it narrowed by local id). Non-zero (a
	 * negative errno, with err filled) stops the read. */
	int	(*run)(void *arg, const char *const *v, const size_t *len,
		    char *err, size_t errlen);
	int	(*result)(void *arg, const char *const *v, const size_t *len,
		    char *err, size_t errlen);
	int	(*test)(void *arg, const char *const *v, const size_t *len,
		    char *err, size_t errlen);
	int	(*attempt)(void *arg, const char *const *v, const size_t *len,
		    char *err, size_t errlen);
	int	(*polluter)(void *arg, const char *const *v, const size_t *len,
		    char *err, size_t errlen);
	void	*arg;
};
struct flaky_ship_batch {
	int64_t		 last_seq;	/* queue position reached */
	int64_t		 polluter_seq;	/* ... of the polluters' queue */
	size_t		 runs, results, attempts, polluters;
};
/* Read queued runs in order, whole, while fewer than max_runs runs and
 * max_results results were read (at least one run), and the polluters
 * queued (they ride with runs: none without one); all in one read
 * transaction. b->runs 0: the queue is empty. */
int	 flaky_store_ship_read(struct flaky_store *, size_t max_runs,
	    size_t max_results, const struct flaky_ship_sink *,
	    struct flaky_ship_batch *b, char *err, size_t errlen);
/* The batch is on the server: take its runs and polluters off the
 * queues. */
int	 flaky_store_ship_done(struct flaky_store *,
	    const struct flaky_ship_batch *, char *err, size_t errlen);
struct flaky_ship_backlog {
	int64_t		 runs;		/* finished, not yet shipped */
	int64_t		 oldest_ms;	/* the oldest's end; 0: none */
	int64_t		 shipped;	/* runs shipped so far */
};
int	 flaky_store_ship_backlog(struct flaky_store *,
	    struct flaky_ship_backlog *, char *err, size_t errlen);
/* This database's random claim on its box name (32 hex digits). */
int	 flaky_store_box_id(struct flaky_store *, char *buf, size_t len,
	    char *err, size_t errlen);

#endif
