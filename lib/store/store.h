/* The evidence database. Only the store talks SQL: the rest of libflaky and
 * the programs hand it plain structs and get plain structs back. */
#ifndef FLAKY_STORE_H
#define FLAKY_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "parse/parse.h"
#include "util/util.h"

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
	const char	*perturbation;	/* "cpu:2", "shuffle" (issue 18);
					 * NULL: calm */
	const char	*seed;		/* the order seed given; NULL: the
					 * one the runner printed, if any */
	const char	*box;		/* issue 15: the box it ran on;
					 * NULL: the store's (runs.box) */
	int		 selected;	/* tests the runner was asked for
					 * (issue 18); 0: the whole suite */
	const struct flaky_stacks *stacks; /* issue 33; NULL: none */
};

/* path: a SQLite file, or a PostgreSQL connection URI (postgresql:// or
 * postgres://; docs/fleet.md), which the same calls read and write. */
int	 flaky_store_open(const char *path, int flags,
	    struct flaky_store **ret, char *err, size_t errlen);
/* Does path name a PostgreSQL database rather than a file? */
int	 flaky_store_is_server(const char *path);
/* PostgreSQL: is the connection gone (known once a statement failed for
 * it)? Connect again (not in a transaction: -EBUSY; the old session's
 * statements and ids dropped; the store as it was on failure). One round
 * trip. 0 on SQLite. */
int	 flaky_store_lost(const struct flaky_store *);
int	 flaky_store_reconnect(struct flaky_store *, char *err, size_t errlen);
int	 flaky_store_ping(struct flaky_store *, char *err, size_t errlen);
void	 flaky_store_close(struct flaky_store *);
/* The path or URI as given (a file's own size). */
const char *flaky_store_path(const struct flaky_store *);
/* The database as shown (errors, logs, banners): the path, or the URI
 * without userinfo and password (docs/fleet.md); of an open store, and
 * of a path not opened, into buf. */
const char *flaky_store_name(const struct flaky_store *);
const char *flaky_store_shown(const char *path, char *buf, size_t len);
/* The box (issue 15) this store records with every run written that
 * names none (flaky_run_record.box), and reads runs.box NULL as (a run
 * from before boxes were recorded ran here): the host name
 * (flaky_box_default) until set. -EINVAL with err for an invalid name
 * (flaky_box_check). The string stays the store's. */
int	 flaky_store_set_box(struct flaky_store *, const char *box,
	    char *err, size_t errlen);
const char *flaky_store_box(struct flaky_store *);
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
/* A writer that yields (the upload worker of flakyd and serve): its long
 * transactions are committed in parts whenever another store of this
 * process waits for the write lock (flaky_store_others_wait), so that the
 * daemon's loop never waits long. While one exists, every store of the
 * process polls a busy lock every millisecond rather than backing off. */
void	 flaky_store_set_yielding(struct flaky_store *, int);
/* Has a store of this process that does not yield waited for the write
 * lock since the last call? Cleared by the call. */
int	 flaky_store_others_wait(void);

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
	const char	*box;		/* issue 15: only the runs of this box
					 * (runs.box NULL: the store's box);
					 * NULL: every box */
};

/* Fill *ret with one row per test seen in the window (caller frees with
 * flaky_test_rows_free), counting the runs of q->kinds only, and never an
 * incomplete run. Windows by days of the default kinds use the rollups;
 * run-id windows (one analyze call) and other kinds (runs alone are few)
 * read the raw results. */
int	 flaky_store_test_stats(struct flaky_store *, const struct flaky_query *,
	    struct flaky_test_row **ret, size_t *ret_n, char *err, size_t errlen);
void	 flaky_test_rows_free(struct flaky_test_row *, size_t);
/* The report's order: critical, warning, broken, noise, stable, skipped,
 * no evidence; by rate, then runs, target and test within a tier
 * (qsort's comparison). */
int	 flaky_test_row_cmp(const void *, const void *);
/* The counts of test_stats only (runs, failures, skips, first and last
 * day; no durations, messages or runs alone), from the rollups: what the
 * dashboard's tests page needs, at a fraction of the cost (runs.c). Falls
 * back to flaky_store_test_stats for what the rollups do not hold (runs
 * by id, other kinds, one box). */
int	 flaky_store_test_counts(struct flaky_store *,
	    const struct flaky_query *, struct flaky_test_row **ret,
	    size_t *ret_n, char *err, size_t errlen);
void	 flaky_test_rows_sort(struct flaky_test_row *, size_t);

/* Counts of runs in a window. runs and the statuses count the runs of
 * q->kinds; incomplete is how many of those lack some outcomes (counted in
 * their status too, and in no rate). suite, alone and ingested count every
 * run in the window by kind, whatever q->kinds. */
struct flaky_run_counts {
	int64_t		 runs, done, timeout, error, interrupted, skipped;
	int64_t		 stopped, incomplete, replays;	/* seeds' replays */
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

/* runs.perturbation of a run in an order flaky shuffled ("shuffle", or
 * "shuffle+cpu:2" when stressed too): not a stress, and no evidence of
 * one. */
#define FLAKY_PERTURB_SHUFFLE	"shuffle"
int	 flaky_perturb_is_shuffle(const char *perturbation);
/* Issue 18: a test's rate per perturbation ("2% calm, 31% under
 * cpu:2"), from the raw results of the window's complete suite runs, for
 * the targets with a perturbed run in the window only (none: no rows, at
 * the cost of one look at the runs); test_id > 0: that test only. Sorted
 * by test id, calm first, then by perturbation. */
struct flaky_perturb_row {
	int64_t		 test_id;
	char		*perturbation;	/* NULL: calm */
	int64_t		 runs;		/* pass, fail, error, xpass */
	int64_t		 failures;	/* fail, error */
};
int	 flaky_store_perturb_stats(struct flaky_store *,
	    const struct flaky_query *, int64_t test_id,
	    struct flaky_perturb_row **ret,
	    size_t *ret_n, char *err, size_t errlen);
void	 flaky_perturb_rows_free(struct flaky_perturb_row *, size_t);
/* The boxes of the runs started at or after since_ms (INT64_MIN: every
 * run), runs.box NULL read as the store's own box, by name: a
 * NULL-terminated array for flaky_store_names_free. */
int	 flaky_store_box_names(struct flaky_store *, int64_t since_ms,
	    char ***ret, size_t *ret_n, char *err, size_t errlen);
/* Has any run been stored of box (a NULL runs.box is the store's own)?
 * 1, 0, or a negative errno with err. */
int	 flaky_store_box_known(struct flaky_store *, const char *box,
	    char *err, size_t errlen);
/* Issue 15: the listed tests' rates per box ("30% on box-a (9/30), 0%
 * on box-b (0/30)") in the window's complete runs of q's kinds, of every
 * box whatever q->box, in one grouped query; only for the targets with
 * runs of more than one box in the window (none: no rows, at the cost of
 * one look at the runs). A window the rollups hold (whole days, default
 * kinds, no run ids: what flaky_store_test_counts reads from the rollups)
 * is read whole from box_rollups. Any other window is read from the raw
 * results: budget > 0 keeps each such target to its newest runs that
 * hold about budget results (20 to 500 runs); 0: every run.
 * runs.box NULL counts as the store's box. Sorted by test id, then box;
 * free(3) the array. */
struct flaky_box_row {
	int64_t		 test_id;
	char		 box[FLAKY_BOX_MAX + 1];
	int64_t		 runs;		/* pass, fail, error, xpass */
	int64_t		 failures;	/* fail, error */
};
int	 flaky_store_box_stats(struct flaky_store *,
	    const struct flaky_query *, const int64_t *ids, size_t nids,
	    int64_t budget, struct flaky_box_row **ret, size_t *ret_n,
	    char *err, size_t errlen);
/* The newest failing runs of a test in the window that had an order seed
 * (at most max), newest first: what `show` offers to replay. */
struct flaky_seed_row {
	int64_t		 run_id;
	char		*seed;
	char		*perturbation;	/* NULL: calm */
	int64_t		 started_ms;
};
int	 flaky_store_failing_seeds(struct flaky_store *,
	    const struct flaky_query *, int64_t test_id, size_t max,
	    struct flaky_seed_row **ret, size_t *ret_n, char *err,
	    size_t errlen);
void	 flaky_seed_rows_free(struct flaky_seed_row *, size_t);

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

/* Inside the store: kept output, compressed as SQLite's sqlar compresses
 * and stored once per distinct content (table outputs,
 * schema/0006-outputs.sql; docs/schema.md). */
/* Static scan findings in the evidence database: stored per target (a new
 * scan replaces the last), read back per test. */

struct flaky_scan_summary {
	size_t		 files, skipped, findings, unseeded;
};

/* Scan paths (files or directories, .py below them) and replace the
 * target's stored findings with the result, in one transaction. Paths are
 * stored relative to dir (the target's directory). A file that cannot be
 * read or parsed is counted as skipped; skipped_cb, when not NULL, hears
 * of each with its reason. */
typedef void	(*flaky_scan_skip_cb)(void *arg, const char *path,
		    const char *reason);
int	 flaky_store_scan(struct flaky_store *, int64_t target_id,
	    const char *dir, char *const *paths, size_t npaths,
	    flaky_scan_skip_cb, void *arg, struct flaky_scan_summary *,
	    char *err, size_t errlen);

/* The target's directory (*ret malloc'd); a target without one gets
 * fallback, which is saved. */
int	 flaky_store_target_dir(struct flaky_store *, int64_t target_id,
	    const char *fallback, char **ret, char *err, size_t errlen);

/* One finding that lies in a test: key is the test id it matches (a
 * pytest node id without parameters, or a unittest id). */
struct flaky_risk {
	char	*target;
	char	*key;
	char	*path;
	int	 line;
	char	*category;
	char	*tolerance;	/* NULL: none */
	int	 seeded;
};

/* Every finding in a test, of one target or all (NULL), two entries per
 * finding (its pytest and its unittest key), sorted by (target, key).
 * A database without findings gives none. */
int	 flaky_store_risks(struct flaky_store *, const char *target,
	    struct flaky_risk **ret, size_t *ret_n, char *err, size_t errlen);
/* The findings of a test id: [*first, *first + count) in v. */
size_t	 flaky_risks_find(const struct flaky_risk *v, size_t n,
	    const char *target, const char *test, size_t *first);
void	 flaky_risks_free(struct flaky_risk *, size_t);

/* Reading the evidence for diagnosis (lib/diagnose/diagnose.c): a test's
 * stored results with their runs, the run orders of a target, the tests
 * there are. Plain structs out; the SQL stays in lib/store/diag.c. */

/* A test as stored. */
struct flaky_test_ref {
	int64_t		 id;
	int64_t		 target_id;
	char		*target;
	char		*name;
};
/* Every test (of one target when target is not NULL), by target and
 * name. */
int	 flaky_store_tests(struct flaky_store *, const char *target,
	    struct flaky_test_ref **ret, size_t *ret_n, char *err,
	    size_t errlen);
void	 flaky_test_refs_free(struct flaky_test_ref *, size_t);

/* Every target's name, sorted, in a NULL-terminated array. */
int	 flaky_store_target_names(struct flaky_store *, char ***ret,
	    size_t *ret_n, char *err, size_t errlen);
void	 flaky_store_names_free(char **);
/* A target's command and directory (either may come back NULL). */
int	 flaky_store_target_info(struct flaky_store *, int64_t target_id,
	    char **command, char **dir, char *err, size_t errlen);

/* One stored result of a test, with what its run recorded. */
struct flaky_result_row {
	int64_t		 run_id;
	int64_t		 started_ms;
	int64_t		 run_duration_us;	/* -1: unknown */
	char		 status[16];		/* the run's */
	char		 trigger[16];		/* analyze, confirm, ... */
	int		 kind;			/* enum flaky_run_kind */
	int		 exit_code;		/* -1: none (killed) */
	int		 signal;
	char		*revision;		/* NULL: not recorded */
	char		*seed;			/* NULL: none printed */
	char		*runner;
	int64_t		 position;
	int		 outcome;		/* enum flaky_outcome */
	int64_t		 duration_us;		/* -1: unknown */
	char		*signature;		/* failed results */
	int64_t		 fingerprint;		/* 0: none */
	char		*normalized;
	char		*message;
	char		*box;	/* runs.box (issue 15); NULL: none recorded */
	char		*perturbation;		/* the run's; NULL: calm */
};
void	 flaky_result_rows_free(struct flaky_result_row *, size_t);

/* One result of a target's scan. Strings are NULL unless the test is one
 * of the wanted ones (and then valid only during the callback). */
struct flaky_scan_row {
	struct flaky_result_row	 r;	/* the run's fields and the result */
	int64_t			 test_id;
	int			 wanted;
};
/* Every result of a target's finished runs in the window, by run and
 * position: one pass for many tests' evidence and the run orders. wanted
 * is sorted; fn returns <0 to stop with that code. */
int	 flaky_store_scan_target(struct flaky_store *, int64_t target_id,
	    const struct flaky_query *, const int64_t *wanted, size_t nwanted,
	    int (*fn)(const struct flaky_scan_row *, void *), void *arg,
	    char *err, size_t errlen);

/* One run's order: test ids by position and their outcomes. */
struct flaky_run_order {
	int64_t		 run_id;
	size_t		 n;
	int64_t		*test_ids;
	int		*outcomes;
};
/* Call fn for each finished run of a target in the window (at most
 * max_runs, the newest), oldest first. fn returns <0 to stop with that
 * code. */
int	 flaky_store_run_orders(struct flaky_store *, int64_t target_id,
	    const struct flaky_query *, size_t max_runs,
	    int (*fn)(const struct flaky_run_order *, void *), void *arg,
	    char *err, size_t errlen);

/* The outcome and duration of each result of the wanted tests (sorted
 * ids) with a known duration, passed or failed, in a target's newest
 * max_runs finished runs of the window (0: all). fn returns <0 to stop
 * with that code. */
int	 flaky_store_durations(struct flaky_store *, int64_t target_id,
	    const struct flaky_query *, size_t max_runs, const int64_t *wanted,
	    size_t nwanted, int (*fn)(int64_t test_id, int outcome,
	    int64_t duration_us, void *), void *arg, char *err, size_t errlen);

/* How often each signature was stored for a test in the window, most
 * first (read through the partial index of failures). */
struct flaky_sig_count {
	int64_t		 test_id;
	char		*signature;
	int64_t		 count;
};
/* Did the target's runs in the window run in more than one order (two or
 * more distinct random-order seeds)? 1, 0, or a negative errno. */
int	 flaky_store_order_varies(struct flaky_store *, int64_t target_id,
	    const struct flaky_query *, char *err, size_t errlen);
/* The stored signatures of the failures of tests ids in the window: by
 * test id, then most first, then by name (UNKNOWN for none). */
int	 flaky_store_signature_counts(struct flaky_store *, const int64_t *ids,
	    size_t nids, const struct flaky_query *, struct flaky_sig_count **ret,
	    size_t *ret_n, char *err, size_t errlen);
void	 flaky_sig_counts_free(struct flaky_sig_count *, size_t);

/* Co-failure evidence for clusters (lib/store/cluster.c): the complete
 * suite and ingested runs of the window (the newest max_runs), and for
 * each test with at least min_failures failures in them the runs it ran
 * in (pass, fail, error, xpass) and its failures with their message and
 * signature. Runs are sorted by id; a test's run indexes ascend. */
struct flaky_cofail_run {
	int64_t		 id;
	int64_t		 target_id;
	int64_t		 started_ms;
};
struct flaky_cofail_fail {
	uint32_t	 run;		/* index into runs */
	int64_t		 fingerprint;	/* 0: no message */
	char		*normalized;	/* NULL: no message */
	char		*signature;	/* NULL: not classified */
};
struct flaky_cofail_test {
	int64_t		 test_id, target_id;
	char		*target, *name;
	uint32_t	*ran;		/* run indexes */
	size_t		 nran;
	struct flaky_cofail_fail *fails;	/* by run */
	size_t		 nfails;
};
struct flaky_cofail {
	struct flaky_cofail_run *runs;
	size_t		 nruns;
	struct flaky_cofail_test *tests;	/* by test id */
	size_t		 ntests;
};
int	 flaky_store_cofail(struct flaky_store *, const struct flaky_query *,
	    int64_t min_failures, size_t max_runs, struct flaky_cofail *ret,
	    char *err, size_t errlen);
void	 flaky_cofail_free(struct flaky_cofail *);

/* What flakyd asks of the store beyond recording runs: the last trigger
 * time per target (catch-up after downtime) and the last finished run per
 * target (status). Implemented in lib/store/daemon.c. */

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

/* History over weeks: daily series, trends and change points, the rerun
 * budget, ingest's attempts (lib/store/history.c), quarantine
 * (quarantine.c) and retention (maint.c). Reads the daily rollups and the
 * budget table, never the raw results for anything per day. */

#define FLAKY_DAY_MS	86400000LL

enum flaky_trend {
	FLAKY_TREND_SAME = 0,
	FLAKY_TREND_WORSE,	/* the window's interval above the last one's */
	FLAKY_TREND_BETTER,	/* below it */
	FLAKY_TREND_NEW,	/* no failures (or no runs) before, now some
				 * beyond the previous interval */
};
const char *flaky_trend_name(int);

/* One test's history around a window of ndays days: daily runs and
 * failures of the window, totals of the window before it (same length),
 * the budget and the change point. */
struct flaky_history_row {
	int64_t		 test_id;
	const char	*target, *test;	/* owned by struct flaky_history */
	int64_t		 runs, failures;	/* the window */
	int64_t		 prev_runs, prev_failures;
	int64_t		 budget_runs;	/* failed runs counted in the budget */
	int64_t		 budget_wall_us, budget_cpu_us;
	int64_t		 change_day;	/* days since 1970, -1: none */
	int		 trend;		/* enum flaky_trend */
	int		 quarantined;
	uint32_t	*day_runs, *day_failures;	/* ndays each */
};

struct flaky_history {
	int64_t			 first_day, ndays;
	struct flaky_history_row *v;	/* sorted by test_id */
	size_t			 n;
	int64_t			 pruned_before_ms;	/* 0: never pruned */
	/* private */
	char			**names;
	size_t			 nnames;
	uint32_t		*days;
};

/* The history of the tests that failed in the window of q (days, as the
 * rollups hold them) or in the window before it, and of those in
 * quarantine: the others have trend same, no change point and no budget,
 * and flaky_history_find() returns NULL for them. q->box keeps the days
 * (box_rollups) and the budget (its runs' failed results) to one box's
 * runs, as the rates of the same q; q->kinds changes neither. */
int	 flaky_store_history(struct flaky_store *, const struct flaky_query *,
	    struct flaky_history *ret, char *err, size_t errlen);
void	 flaky_history_free(struct flaky_history *);
/* The row of a test, or NULL. */
const struct flaky_history_row *flaky_history_find(
	    const struct flaky_history *, int64_t test_id);

/* The trend of (k, n) against the window before (pk, pn), and the change
 * point of a daily series (first index of the unstable part, or -1):
 * exposed for the tests. */
int	 flaky_trend(int64_t k, int64_t n, int64_t pk, int64_t pn);
long	 flaky_change_point(const uint32_t *runs, const uint32_t *failures,
	    size_t ndays);

/* A test by name (and target when given); -ENOENT or -EEXIST (the name
 * is in more than one target) with err filled. */
int	 flaky_store_find_test(struct flaky_store *, const char *target,
	    const char *test, int64_t *ret_id, char *err, size_t errlen);
/* Daily runs and failures of one test for ndays from first_day. */
int	 flaky_store_test_days(struct flaky_store *, int64_t test_id,
	    int64_t first_day, int64_t ndays, uint32_t *runs,
	    uint32_t *failures, char *err, size_t errlen);

/* Ingest: 1 when a run with this content hash is stored (its id in
 * *ret_id), 0 when not. */
int	 flaky_store_run_by_hash(struct flaky_store *, const char *hash,
	    int64_t *ret_id, char *err, size_t errlen);
/* Store the attempts of the results of a finished run (in the open
 * transaction, so a run and its attempts land together). */
int	 flaky_store_add_attempts(struct flaky_store *, int64_t run_id,
	    const struct flaky_results *, const struct flaky_junit_extra *,
	    char *err, size_t errlen);

/* A run stored as its results come (ingest.c), apart in
 * store_ingest.h, a part of this header. */
#include "store/store_ingest.h"

/* Quarantine. */
struct flaky_quarantine_row {
	char		*target, *test, *reason, *ticket;
	int64_t		 test_id;
	int64_t		 added_ms;
	int64_t		 passes;	/* passing runs in a row, latest last */
	char		*runner;	/* of the target's newest run, or NULL */
};
int	 flaky_store_quarantine_add(struct flaky_store *, int64_t test_id,
	    const char *reason, const char *ticket, int64_t now_ms,
	    char *err, size_t errlen);
/* 0, or -ENOENT when the test was not quarantined. */
int	 flaky_store_quarantine_remove(struct flaky_store *, int64_t test_id,
	    char *err, size_t errlen);
int	 flaky_store_quarantine_list(struct flaky_store *,
	    struct flaky_quarantine_row **ret, size_t *ret_n, char *err,
	    size_t errlen);
void	 flaky_quarantine_rows_free(struct flaky_quarantine_row *, size_t);

/* Retention: raw results, attempts and kept output of runs that started
 * before before_ms are removed in short transactions; runs, rollups and
 * the budget stay. flakyd calls it when "retention:" is set. */
struct flaky_prune_stats {
	int64_t		 runs;		/* runs whose raw data went */
	int64_t		 results;	/* result rows removed */
	int64_t		 messages;	/* messages no longer referenced */
};
int	 flaky_store_prune(struct flaky_store *, int64_t before_ms,
	    struct flaky_prune_stats *, char *err, size_t errlen);

/* What the database holds. */
struct flaky_db_stats {
	int64_t		 file_bytes, wal_bytes, page_size, pages, free_pages;
	int64_t		 targets, tests, runs, results, messages, rollups;
	int64_t		 budget, attempts, quarantined;
	int64_t		 first_run_ms, last_run_ms;	/* INT64_MIN: none */
	int64_t		 first_day, last_day;		/* -1: none */
	int64_t		 first_result_ms;	/* oldest raw results kept */
	int64_t		 pruned_before_ms;
	int		 schema_version;
};
int	 flaky_store_db_stats(struct flaky_store *, struct flaky_db_stats *,
	    char *err, size_t errlen);

/* The smallest polluter flakyctl polluter found for a test (polluter.c,
 * table polluters). */
struct flaky_polluter_row {
	int64_t		 test_id;
	int64_t		 from_run_id;	/* the failing run narrowed */
	int64_t		 candidates;	/* tests before the victim there */
	char		*members;	/* test ids, one a line, in order */
	int64_t		 reruns;
	int		 minimal;	/* 0: the rerun budget ran out */
	char		*command;	/* reproduces the failure */
	int64_t		 made_ms;
};
/* Replaces the test's row. */
int	 flaky_store_polluter_put(struct flaky_store *,
	    const struct flaky_polluter_row *, char *err, size_t errlen);
/* 1 with *ret filled, 0 when none was stored, or a negative errno. */
int	 flaky_store_polluter_get(struct flaky_store *, int64_t test_id,
	    struct flaky_polluter_row *ret, char *err, size_t errlen);
void	 flaky_polluter_row_clear(struct flaky_polluter_row *);

/* The runs as the dashboard shows them (runs.c). */
struct flaky_run_view {
	int64_t		 id, target_id;
	char		*target;
	char		 status[16], kind[16], trigger[16];
	int64_t		 started_ms, ended_ms;	/* ended 0: unknown */
	int64_t		 duration_us;		/* -1: unknown */
	int		 exit_code;		/* -1: none (killed) */
	int		 signal;
	char		*revision, *runner, *seed, *error, *incomplete;
	char		*perturbation;
	int64_t		 tests, failures;
	int64_t		 user_us, sys_us;	/* -1: unknown */
	int64_t		 maxrss_kb;		/* -1: unknown */
	double		 loadavg;		/* -1: unknown */
	int64_t		 output_bytes, output_dropped;
	char		*out, *err;	/* kept output as stored (redacted);
					 * flaky_store_run_view only */
	char		*box;		/* runs.box (issue 15) as stored; NULL:
					 * none, or no such column */
};
/* One run with its kept output; -ENOENT when there is none. */
int	 flaky_store_run_view(struct flaky_store *, int64_t id,
	    struct flaky_run_view *ret, char *err, size_t errlen);
void	 flaky_run_view_clear(struct flaky_run_view *);
/* The newest max runs (of target_id; 0: all; of box, runs.box NULL
 * read as the store's own; NULL: every box), newest first, no output. */
int	 flaky_store_runs_recent(struct flaky_store *, int64_t target_id,
	    const char *box, size_t max, struct flaky_run_view **ret,
	    size_t *ret_n, char *err, size_t errlen);
void	 flaky_run_views_free(struct flaky_run_view *, size_t);
/* A run's results in their order. */
struct flaky_run_result {
	int64_t		 position, test_id;
	char		*test;
	int		 outcome;	/* enum flaky_outcome */
	int64_t		 duration_us;	/* -1: unknown */
	char		*signature, *message;	/* failed results */
};
int	 flaky_store_run_results(struct flaky_store *, int64_t run_id,
	    struct flaky_run_result **ret, size_t *ret_n, char *err,
	    size_t errlen);
void	 flaky_run_results_free(struct flaky_run_result *, size_t);
/* A test's newest max results with their runs, newest first (every kind
 * and status: the page shows what happened), each with its run's box. */
int	 flaky_store_test_results(struct flaky_store *, int64_t test_id,
	    size_t max, struct flaky_result_row **ret, size_t *ret_n,
	    char *err, size_t errlen);
/* Does the database record boxes (runs.box, issue 15)? */
int	 flaky_store_has_boxes(struct flaky_store *);

/* Every target with its id, command and last trigger time, by name. */
struct flaky_target_view {
	int64_t		 id;
	char		*name, *command;
	int64_t		 last_fire_ms;	/* FLAKY_NO_FIRE: never */
};
int	 flaky_store_target_views(struct flaky_store *,
	    struct flaky_target_view **ret, size_t *ret_n, char *err,
	    size_t errlen);
void	 flaky_target_views_free(struct flaky_target_view *, size_t);
/* Alerts: their events and deliveries (alerts.c), declared apart in
 * store_alerts.h, a part of this header, to keep each file short. */
#include "store/store_alerts.h"
/* Shipping to a fleet's server (ship.c), apart in store_ship.h, a part of
 * this header too. */
#include "store/store_ship.h"
#include "store/store_ci.h"	/* CI jobs' evidence: ci.c, tokens.c, flips.c */
#include "store/store_dash.h"	/* the dashboard's notes, actions, trends */
#include "store/store_seed.h"	/* seed sweeps, headroom (issue 34) */
#include "store/store_stacks.h"	/* hung runs' stacks (issue 33) */

#endif
