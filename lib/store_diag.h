/* Reading the evidence for diagnosis (lib/diagnose.c): a test's stored
 * results with their runs, the run orders of a target, the tests there
 * are. Plain structs out; the SQL stays in store_diag.c. */
#ifndef FLAKY_STORE_DIAG_H
#define FLAKY_STORE_DIAG_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

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
int	 flaky_store_signature_counts(struct flaky_store *, int64_t test_id,
	    const struct flaky_query *, struct flaky_sig_count **ret,
	    size_t *ret_n, char *err, size_t errlen);
void	 flaky_sig_counts_free(struct flaky_sig_count *, size_t);

#endif
