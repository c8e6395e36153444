/* The evidence database. Only the store talks SQL: the rest of libflaky and
 * the programs hand it plain structs and get plain structs back. */
#ifndef FLAKY_STORE_H
#define FLAKY_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "parse.h"

struct flaky_store;

/* flags for flaky_store_open */
#define FLAKY_STORE_READONLY	0x01	/* queries only; never creates */
#define FLAKY_STORE_BULK	0x02	/* synchronous=NORMAL (bulk ingest) */

/* How long a write waits for another writer (with backoff) before it
 * fails with -EBUSY: the default of a store, right for a command line
 * program. An event loop sets a short bound and retries from a timer. */
#define FLAKY_BUSY_TIMEOUT_MS		10000
#define FLAKY_BUSY_TIMEOUT_LOOP_MS	2000

enum flaky_run_status {
	FLAKY_RUN_RUNNING = 0,
	FLAKY_RUN_DONE,		/* the command ran to its end */
	FLAKY_RUN_TIMEOUT,	/* killed at its time limit */
	FLAKY_RUN_ERROR,	/* could not be started */
	FLAKY_RUN_INTERRUPTED,	/* stopped by shutdown or a crash */
	FLAKY_RUN_SKIPPED,	/* a trigger skipped: the last run still ran */
	FLAKY_RUN_STOPPED,	/* ended by its caller's budget, not a limit */
};

/* What a run was: rates, tiers and trends count suite and ingested runs;
 * runs alone (confirm) give their own verdict beside the rate. */
enum flaky_run_kind {
	FLAKY_KIND_SUITE = 0,	/* the target's command: schedule, analyze */
	FLAKY_KIND_ALONE,	/* one test rerun alone: confirm, isolation */
	FLAKY_KIND_INGESTED,	/* results from CI files */
};
#define FLAKY_KIND_MASK(k)	(1u << (k))
#define FLAKY_KINDS_DEFAULT	(FLAKY_KIND_MASK(FLAKY_KIND_SUITE) | \
				 FLAKY_KIND_MASK(FLAKY_KIND_INGESTED))
const char *flaky_run_kind_name(int);
const char *flaky_run_status_name(int);

/* One run as stored. Strings may be NULL. */
struct flaky_run_record {
	int64_t		 id;		/* set by flaky_store_run_start */
	int64_t		 target_id;
	int		 status;	/* enum flaky_run_status */
	int		 kind;		/* enum flaky_run_kind */
	const char	*incomplete;	/* why outcomes are missing, or NULL */
	const char	*trigger;	/* "analyze", "schedule", "manual", ... */
	int64_t		 started_ms;
	int64_t		 ended_ms;
	int64_t		 duration_us;
	int		 exit_code;	/* -1 when killed by a signal */
	int		 signal;
	const char	*revision;
	int		 in_flight;
	double		 loadavg;
	int64_t		 user_us, sys_us;
	long		 maxrss_kb;
	uint64_t	 output_bytes;	/* produced, both streams */
	uint64_t	 output_dropped;	/* not kept */
	const char	*out;		/* kept stdout (head, marker, tail) */
	size_t		 out_len;
	const char	*err;		/* kept stderr */
	size_t		 err_len;
	const char	*error;		/* why it could not start, warning */
	const char	*content_hash;	/* ingest: idempotence key */
};

int	 flaky_store_open(const char *path, int flags,
	    struct flaky_store **ret, char *err, size_t errlen);
void	 flaky_store_close(struct flaky_store *);
const char *flaky_store_path(const struct flaky_store *);
/* The schema version this binary writes. */
int	 flaky_store_schema_version(void);
/* A new database at path (made empty, or not there) by the migrations, not
 * synced: what schema/mkimage turns into the image new databases are
 * written from. */
int	 flaky_store_build(const char *path, char *err, size_t errlen);
/* Is that image linked in (1), or are new databases built (0)? */
int	 flaky_store_image_linked(void);

/* User redaction patterns (POSIX extended regular expressions), applied
 * with the built-in ones to stored output and messages. */
int	 flaky_store_add_redaction(struct flaky_store *, const char *regex,
	    char *err, size_t errlen);

/* Many writers share one database. Every write transaction starts with
 * BEGIN IMMEDIATE (never a read turned into a write), and a write that
 * finds another writer holding the database waits with backoff up to the
 * store's bound, then fails with -EBUSY and an err that says "busy". The
 * store is then as it was before the call: the transaction rolled back
 * (one the store opened itself; the caller rolls back its own), statements
 * reset, rec->id as it was: the same call may simply be made again. */
/* The bound of a wait in ms (default FLAKY_BUSY_TIMEOUT_MS); 0: fail at
 * once. -EINVAL when negative. */
int	 flaky_store_set_busy_timeout(struct flaky_store *, int ms);
int	 flaky_store_busy_timeout(const struct flaky_store *);

/* Group several writes into one transaction (BEGIN IMMEDIATE). Without
 * them each write is its own transaction. */
int	 flaky_store_begin(struct flaky_store *, char *err, size_t errlen);
int	 flaky_store_commit(struct flaky_store *, char *err, size_t errlen);
void	 flaky_store_rollback(struct flaky_store *);

/* Find or create a target by name; command and dir are updated when given. */
int	 flaky_store_target(struct flaky_store *, const char *name,
	    const char *command, const char *dir, int64_t *ret_id,
	    char *err, size_t errlen);
/* The row written when a run starts (status running, rec->kind), owned
 * by this process (its boot id, pid and start time); sets rec->id. */
int	 flaky_store_run_start(struct flaky_store *,
	    struct flaky_run_record *, char *err, size_t errlen);
/* Complete a run: the row (with rec->kind and rec->incomplete), its
 * results, messages and rollups, in one transaction (or in the open one).
 * rec->id 0 inserts the row too. Only complete suite and ingested runs
 * add to the rollups (every rate, tier, trend, gate and metric): a run
 * alone or an incomplete one keeps its results as evidence only. */
int	 flaky_store_run_finish(struct flaky_store *,
	    struct flaky_run_record *, const struct flaky_results *,
	    char *err, size_t errlen);
/* Running rows (of target_id; 0: all) whose owner is gone become
 * interrupted; returns how many. Gone: recorded on another boot, its pid
 * is not alive, or the pid is alive but started at another time; a row
 * with no owner (written before schema version 5) is gone. A live
 * process's rows are never marked. Every open for writing does this for
 * all targets. */
int	 flaky_store_mark_orphans(struct flaky_store *, int64_t target_id,
	    char *err, size_t errlen);
/* How many rows flaky_store_open marked so (for a program to log). */
int	 flaky_store_orphans_marked(const struct flaky_store *);
/* The same, and this process's own running rows too: for a program that
 * stops and will not finish the runs it started (flakyd at shutdown).
 * Never the rows of another live process. Returns how many. */
int	 flaky_store_mark_interrupted(struct flaky_store *, int64_t target_id,
	    char *err, size_t errlen);

/* Per-test statistics over a window, from the daily rollups (and the raw
 * results for messages). */
struct flaky_test_row {
	char		*target;
	char		*test;
	int64_t		 test_id;
	int64_t		 runs;		/* pass, fail, error, xpass */
	int64_t		 failures;	/* fail, error */
	int64_t		 skips;		/* skip, xfail */
	int64_t		 pass_n, fail_n;	/* with a known duration */
	double		 median_ms_pass;	/* NAN when unknown */
	double		 median_ms_fail;
	double		 p90_ms_pass;
	double		 p90_ms_fail;
	char		*top_message;	/* most common failure, or NULL */
	int64_t		 top_message_count;
	int64_t		 first_ms, last_ms;	/* first/last day seen */
	/* The test's verdict when rerun alone in the same window, whatever
	 * kinds asked for (complete runs of kind alone; 0/0: never). */
	int64_t		 alone_runs;	/* pass, fail, error, xpass */
	int64_t		 alone_failures;
};

struct flaky_query {
	int64_t		 since_ms;	/* inclusive; INT64_MIN: all */
	int64_t		 until_ms;	/* exclusive; INT64_MAX: all */
	const char	*target;	/* NULL: all */
	int64_t		 first_run_id;	/* >0: only runs with id >= this */
	int64_t		 last_run_id;	/* >0: only runs with id <= this */
	unsigned	 kinds;		/* FLAKY_KIND_MASK()s; 0: default */
};

/* Fill *ret with one row per test seen in the window (caller frees with
 * flaky_test_rows_free), counting the runs of q->kinds only, and never an
 * incomplete run. Windows by days of the default kinds use the rollups;
 * run-id windows (one analyze call) and other kinds (runs alone are few)
 * read the raw results. */
int	 flaky_store_test_stats(struct flaky_store *, const struct flaky_query *,
	    struct flaky_test_row **ret, size_t *ret_n, char *err, size_t errlen);
void	 flaky_test_rows_free(struct flaky_test_row *, size_t);

/* Counts of runs in a window. runs and the statuses count the runs of
 * q->kinds; incomplete is how many of those lack some outcomes (counted in
 * their status too, and in no rate). suite, alone and ingested count every
 * run in the window by kind, whatever q->kinds. */
struct flaky_run_counts {
	int64_t		 runs, done, timeout, error, interrupted, skipped;
	int64_t		 stopped, incomplete;
	int64_t		 suite, alone, ingested;
	int64_t		 first_ms, last_ms;
};
int	 flaky_store_run_counts(struct flaky_store *, const struct flaky_query *,
	    struct flaky_run_counts *, char *err, size_t errlen);

/* Per test, the verdict of its complete runs alone in the window of q
 * (q->kinds does not apply): "passes alone 30/30", "fails alone 9/30".
 * Read from the raw results of runs alone (few, found by the runs_alone
 * index). Sorted by test id. */
struct flaky_alone_row {
	int64_t		 test_id;
	char		*target;
	char		*test;
	int64_t		 runs;		/* pass, fail, error, xpass */
	int64_t		 failures;	/* fail, error */
	int64_t		 last_ms;	/* the newest run alone */
};
int	 flaky_store_alone_stats(struct flaky_store *,
	    const struct flaky_query *, struct flaky_alone_row **ret,
	    size_t *ret_n, char *err, size_t errlen);
void	 flaky_alone_rows_free(struct flaky_alone_row *, size_t);

/* The kinds of q, FLAKY_KINDS_DEFAULT for 0. */
unsigned flaky_query_kinds(const struct flaky_query *);

/* Duration histograms (log-scale buckets, 4 per doubling of ms), kept per
 * test and day in the rollups so medians need no raw rows. */
#define FLAKY_HIST_BUCKETS	128
int	 flaky_hist_bucket(int64_t duration_us);
double	 flaky_hist_value_ms(int bucket);
/* Add a histogram blob's counts into counts[FLAKY_HIST_BUCKETS]. */
int	 flaky_hist_merge(const void *blob, size_t len, uint64_t *counts);
/* The q-quantile (0..1) of counts, in ms; NAN when empty. */
double	 flaky_hist_quantile(const uint64_t *counts, double q);

#endif
