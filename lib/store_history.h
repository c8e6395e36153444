/* History over weeks: daily series, trends and change points, the rerun
 * budget, ingest's attempts, quarantine and retention (store_history.c).
 * Reads the daily rollups and the budget table, never the raw results for
 * anything per day. */
#ifndef FLAKY_STORE_HISTORY_H
#define FLAKY_STORE_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "parse.h"
#include "store.h"

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
 * and flaky_history_find() returns NULL for them. */
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

/* Quarantine. */
struct flaky_quarantine_row {
	char		*target, *test, *reason, *ticket;
	int64_t		 test_id;
	int64_t		 added_ms;
	int64_t		 passes;	/* passing runs in a row, latest last */
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

#endif
