/* Part of store.h (include that, not this): what the dashboard a team
 * keeps open reads and writes (issue 32, docs/dashboard.md): what a team
 * wrote about a test (its ticket, its owner) and every action on a test
 * with who took it and when (notes.c); rates per branch (notes.c); the
 * overview's trends and a test's whole story (trends.c). */
#ifndef FLAKY_STORE_DASH_H
#define FLAKY_STORE_DASH_H

#include <stddef.h>
#include <stdint.h>

struct flaky_store;
struct flaky_query;

/* An action on a test (table actions). */
enum flaky_action_kind {
	FLAKY_ACT_QUARANTINE = 0,	/* value: the reason */
	FLAKY_ACT_RELEASE,		/* out of quarantine */
	FLAKY_ACT_TICKET,		/* value: the URL; NULL unlinks */
	FLAKY_ACT_OWNER,		/* value: the owner; NULL clears */
	FLAKY_ACT_COUNT,
};
const char *flaky_action_name(int);
/* The kind of "quarantine", "release", "ticket", "owner"; -1. */
int	 flaky_action_parse(const char *);
/* Bounds of what an action carries (bytes). */
#define FLAKY_ACTION_TEXT_MAX	1024	/* a reason */
#define FLAKY_ACTION_NAME_MAX	256	/* an owner, a who */
#define FLAKY_ACTION_URL_MAX	2048	/* a ticket */
/* Is value right for the action (0), else -EINVAL with err naming what
 * was expected: a reason of 1 to 1024 bytes, an http(s) URL without
 * spaces of at most 2048, an owner of 1 to 256; each printable UTF-8.
 * NULL or "" is right for ticket and owner (they clear) and release. */
int	 flaky_action_check(int kind, const char *value, char *err,
	    size_t errlen);

/* Take an action on a test and record it (who, via "cli" or "http",
 * when), in one transaction (or the caller's): quarantine with a reason
 * and an optional ticket (kept in quarantine.ticket and linked as the
 * test's ticket), release (-ENOENT when it was not quarantined), link or
 * unlink a ticket, set or clear an owner. A value that fails
 * flaky_action_check is -EINVAL. */
int	 flaky_store_act(struct flaky_store *, int64_t test_id, int kind,
	    const char *value, const char *ticket, const char *who,
	    const char *via, int64_t now_ms, char *err, size_t errlen);

struct flaky_action {
	int64_t		 id, test_id;
	int		 kind;
	char		*value, *who, *via;
	char		*target, *test;
	int64_t		 at_ms;
};
/* The newest max actions (of test_id; 0: every test), newest first. */
int	 flaky_store_actions(struct flaky_store *, int64_t test_id,
	    size_t max, struct flaky_action **ret, size_t *ret_n, char *err,
	    size_t errlen);
void	 flaky_actions_free(struct flaky_action *, size_t);

/* The name of a valid token (not revoked) of that id and scope: 1 with
 * *ret (malloc'd), 0 when there is none. */
int	 flaky_store_token_name(struct flaky_store *, int64_t id, int scope,
	    char **ret, char *err, size_t errlen);

/* What a team wrote about a test: its ticket and its owner. */
struct flaky_note {
	int64_t		 test_id;
	char		*ticket, *owner;	/* NULL: none */
	int64_t		 updated_ms;
};
/* Every test's note, by test id. */
int	 flaky_store_notes(struct flaky_store *, struct flaky_note **ret,
	    size_t *ret_n, char *err, size_t errlen);
/* A test's note: 1 with *ret filled, 0 when none. */
int	 flaky_store_note(struct flaky_store *, int64_t test_id,
	    struct flaky_note *ret, char *err, size_t errlen);
void	 flaky_note_clear(struct flaky_note *);
void	 flaky_notes_free(struct flaky_note *, size_t);
/* The note of a test in a list by test id, or NULL. */
const struct flaky_note *flaky_note_find(const struct flaky_note *,
	    size_t n, int64_t test_id);

/* Rollups per branch (branch_rollups): a counted run's results added
 * under its CI branch when its run_ci row is first written with one
 * (store_ci.h, flaky_store_run_ci), in that transaction. */
int	 store_branch_rollup(struct flaky_store *, int64_t run_id,
	    const char *branch, char *err, size_t errlen);
/* The same for a finished run, under its run_ci row's branch if any. */
int	 store_branch_rollup_run(struct flaky_store *, int64_t run_id,
	    char *, size_t);
/* Rates per branch in the window of q (whole days, as the rollups hold
 * them) of test_id (0: every test of q's target, or of every target):
 * sorted by test id, then branch. */
struct flaky_branch_row {
	int64_t		 test_id;
	char		*branch;
	int64_t		 runs, failures;
};
int	 flaky_store_branch_stats(struct flaky_store *,
	    const struct flaky_query *, int64_t test_id,
	    struct flaky_branch_row **ret, size_t *ret_n, char *err,
	    size_t errlen);
void	 flaky_branch_rows_free(struct flaky_branch_row *, size_t);
/* The branches of the runs since since_ms, by name: a NULL-terminated
 * array for flaky_store_names_free. */
int	 flaky_store_branch_names(struct flaky_store *, int64_t since_ms,
	    char ***ret, size_t *ret_n, char *err, size_t errlen);
/* Has a counted run of that branch a rollup? 1, 0, -errno. */
int	 flaky_store_branch_known(struct flaky_store *, const char *branch,
	    char *err, size_t errlen);
/* Per test, runs and failures of one branch in q's window (the counts of
 * flaky_store_test_counts, as q->box gives them for a box): rows as
 * flaky_test_row, names filled. */
struct flaky_test_row;
int	 flaky_store_branch_counts(struct flaky_store *,
	    const struct flaky_query *, const char *branch,
	    struct flaky_test_row **ret, size_t *ret_n, char *err,
	    size_t errlen);

/* The overview's trends (trends.c), over ndays whole UTC days ending with
 * the day before q->until_ms, of q->target (NULL: every target) and
 * q->box or branch (NULL: all):
 *   - tiers[d][k]: the tests in each unstable tier (k: FLAKY_TIER_NOISE,
 *     WARNING, CRITICAL, BROKEN) as report --since 30d would have ranked
 *     them on day d (its 30 days up to d's end);
 *   - introduced[w], fixed[w] per week (7 days from first_day): a test's
 *     flaky period begins at a failure after 30 days without one, and is
 *     fixed on the day its passing runs since its last failure reach
 *     flaky_passes_needed(p) (p its failure rate over the period); a
 *     period in which every run of the failing days failed, on
 *     consecutive days, is a break and its fix, counted in breaks[w],
 *     never as a flaky test;
 *   - lost_us[d], lost_runs[d]: the wall time and number of the counted
 *     runs in which a test failed (each run once): the rerun budget. */
#define FLAKY_TREND_TIERS	4
struct flaky_trends {
	int64_t		 first_day, ndays, nweeks;
	uint32_t	(*tiers)[FLAKY_TREND_TIERS];
	uint32_t	*introduced, *fixed, *breaks;
	int64_t		*lost_us;
	uint32_t	*lost_runs;
	int64_t		 tests;		/* read: failed in the span */
};
int	 flaky_store_trends(struct flaky_store *, const struct flaky_query *,
	    const char *branch, int ndays, struct flaky_trends *ret,
	    char *err, size_t errlen);
void	 flaky_trends_free(struct flaky_trends *);
/* Index of a tier in flaky_trends.tiers' rows, -1 for the others. */
int	 flaky_trend_tier_index(int tier);

/* A test's first and last counted failure, ever (0: never failed). */
int	 flaky_store_test_failed_span(struct flaky_store *, int64_t test_id,
	    int64_t *first_ms, int64_t *last_ms, char *err, size_t errlen);
/* A test's duration histograms of passing and failing results in q's
 * window (whole days, from the rollups), FLAKY_HIST_BUCKETS counts each. */
int	 flaky_store_test_hists(struct flaky_store *, int64_t test_id,
	    const struct flaky_query *, uint64_t *pass, uint64_t *fail,
	    char *err, size_t errlen);
/* The newest max flips of every test (of target; NULL: all) whose last
 * run started before until_ms: flaky_flip rows with test ids and names. */
struct flaky_flip_row {
	int64_t		 test_id;
	char		*target, *test;
	struct flaky_flip f;
};
int	 flaky_store_flips_recent(struct flaky_store *, const char *target,
	    int64_t until_ms, size_t max, struct flaky_flip_row **ret,
	    size_t *ret_n, char *err, size_t errlen);
void	 flaky_flip_rows_free(struct flaky_flip_row *, size_t);
/* Is there a test of that id? *found 1 or 0. */
int	 flaky_store_test_exists(struct flaky_store *, int64_t test_id,
	    int64_t *found, char *err, size_t errlen);

/* A quarantined test's passing runs in a row (quarantine.c). */
int	 flaky_store_pass_streak(struct flaky_store *, int64_t test_id,
	    int64_t *ret, char *err, size_t errlen);

#endif
