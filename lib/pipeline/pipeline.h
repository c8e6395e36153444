/* The run lifecycle: the one path from a started run to its stored
 * evidence. flakyd, flakyctl analyze and flakyctl confirm all start their
 * runs here, so they never disagree on what a run means and never write it
 * differently:
 *
 *   start -> start row -> capture and parse (run.c) -> classify (the
 *   classifier the caller hands in) -> completeness -> grouped commit ->
 *   the caller's stored callback
 *
 * Writes are short transactions, grouped: the write lock is held for one
 * commit, never while a run runs. A write the database refuses (busy, full,
 * read-only for a moment) is kept in memory and retried from a timer with
 * backoff; nothing is dropped. The pipeline never waits in its event loop
 * longer than the store's busy timeout it sets. See docs/architecture.md. */
#ifndef FLAKY_PIPELINE_H
#define FLAKY_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "run/run.h"
#include "store/store.h"
#include "diagnose/diagnose.h"
#include "parse/parse.h"

struct event_base;
struct flaky_classifier;
struct flaky_pipeline;

/* Called with a run and the arg of the job that made it. */
typedef void	(*flaky_pipeline_run_cb)(struct flaky_run *, void *job_arg,
		    void *arg);
/* A write failed and will be retried: code is a negative errno (-EBUSY
 * when the database was locked past the busy timeout). */
typedef void	(*flaky_pipeline_error_cb)(int code, const char *err,
		    size_t waiting, void *arg);

struct flaky_pipeline_opts {
	struct event_base	*base;
	struct flaky_spawner	*sp;
	struct flaky_store	*store;
	const struct flaky_classifier *classifier;	/* NULL: built-ins */
	/* Ended runs wait at most this long to share a commit (0: each is
	 * written as soon as the loop comes round). Start rows of runs still
	 * in flight go in with the same commits. */
	int64_t			 group_ms;
	int			 busy_ms;	/* store wait per attempt */
	int64_t			 retry_first_ms, retry_last_ms;
	flaky_pipeline_run_cb	 ended;		/* classified, not stored */
	flaky_pipeline_run_cb	 stored;	/* committed; freed after */
	flaky_pipeline_error_cb	 error;
	void			*arg;
};

/* One run to make. Strings are copied. */
struct flaky_job {
	struct flaky_run_spec	 spec;
	int64_t			 target_id;
	int			 kind;		/* enum flaky_run_kind */
	const char		*trigger;	/* analyze, schedule, ... */
	const char		*revision;
	/* The runner's version, for runs whose output does not print one
	 * (flaky_runner_version); NULL: none known. */
	const char		*runner_version;
	/* A caller's budget (monotonic us; 0: none): the run is stopped then
	 * and stored as stopped, not as a timeout of the test. */
	int64_t			 budget_end_us;
	/* Why the run's outcomes count in no rate though they are whole
	 * (flakyctl bisect: a revision checked out for the search, not the
	 * code the target runs); stored as runs.incomplete, so the results
	 * are kept as evidence only. NULL: they count. */
	const char		*evidence_only;
	/* Issue 18: the stress beside the run ("cpu:2"; NULL: calm) and
	 * the order seed passed to the runner (NULL: not shuffled). */
	const char		*perturbation;
	const char		*seed;
	/* Issue 18: how many tests the command selects (flaky_command_
	 * select; runs.selected); 0: the whole suite. */
	int			 selected;
	void			*arg;		/* for the callbacks */
};

int	 flaky_pipeline_new(const struct flaky_pipeline_opts *,
	    struct flaky_pipeline **ret);
/* Frees what is left; runs not written are lost: flush first. */
void	 flaky_pipeline_free(struct flaky_pipeline *);
/* Later runs are classified with this one (a reload). Not owned. */
void	 flaky_pipeline_set_classifier(struct flaky_pipeline *,
	    const struct flaky_classifier *);

/* Start a run. 0 with *ret the live run; or a negative errno with err
 * filled when the command could not be started: the run is then recorded
 * as an error run (its stored callback comes as for any other, its ended
 * callback does not: the caller knows) and *ret is NULL. -ENOMEM: nothing
 * was recorded. */
int	 flaky_pipeline_start(struct flaky_pipeline *, const struct flaky_job *,
	    struct flaky_run **ret, char *err, size_t errlen);
/* Record a run that did not run (a skipped trigger): rec is copied. */
int	 flaky_pipeline_record(struct flaky_pipeline *,
	    const struct flaky_run_record *, void *job_arg);
/* End every live run (shutdown): they end as interrupted. */
void	 flaky_pipeline_stop_all(struct flaky_pipeline *);

/* Live runs, and ended runs not yet stored. */
size_t	 flaky_pipeline_running(const struct flaky_pipeline *);
size_t	 flaky_pipeline_waiting(const struct flaky_pipeline *);

/* Write what waits now, trying for up to wait_ms (backing off between
 * attempts; 0: one attempt). 0 when nothing waits any more, else the last
 * negative errno with err filled. */
int	 flaky_pipeline_flush(struct flaky_pipeline *, int64_t wait_ms,
	    char *err, size_t errlen);

/* Confirming (issue 4): rerun unsettled tests alone, through the target's
 * isolate: template, until each one's interval settles or a budget ends.
 * A test that passes alone but fails in the suite is order dependent; one
 * that fails alone too is not. The state and the rules only: the caller
 * (flakyctl confirm, flakyd's confirm: true) spawns, stores and keeps time.
 * See docs/triage.md. */

#define FLAKY_CONFIRM_MAX_TESTS	50	/* per call or trigger */
#define FLAKY_CONFIRM_MAX_RUNS	100	/* alone, per test, default */

struct flaky_confirm_test {
	int64_t		 id, target_id;
	char		*name, *target, *dir, *isolate, *revision;
	int64_t		 runs, failures;	/* all, in the window */
	int64_t		 suite_runs, suite_failures;
	int64_t		 alone_runs, alone_failures;	/* stored before too */
	int		 alone, alone_failed;	/* this call */
	int		 settled;
	int		 start_error;	/* did not start or not reported */
};

struct flaky_confirm {
	struct flaky_confirm_test *t;
	size_t		 nt, next;
	int		 max_runs;	/* alone, per test */
	int		 files_only;	/* HEAD from .git only, never git
					 * (an event loop must not wait) */
	char		*argv[4];	/* /bin/sh -c COMMAND */
	char		**envp;		/* the run's: FLAKY_TEST=the id */
};

void	 flaky_confirm_init(struct flaky_confirm *, int max_runs);
void	 flaky_confirm_free(struct flaky_confirm *);
/* Add the test of a diagnosis with its target's isolate: template. The
 * revision is what the reruns test: NULL means git HEAD of the target's
 * directory, else the newest one its runs saw. A broken test (it fails
 * every time) or a settled one is added as settled. -ENOSPC past
 * FLAKY_CONFIRM_MAX_TESTS. */
int	 flaky_confirm_add(struct flaky_confirm *,
	    const struct flaky_diagnosis *, const char *isolate,
	    const char *revision);
/* The isolate: template of a target (malloc'd), or NULL to leave the
 * target's tests out. */
typedef char	*(*flaky_isolate_fn)(const char *target, void *arg);
/* Choose what to confirm: the unstable tests of the window (failed in
 * some runs, not all), most failing first, at most
 * FLAKY_CONFIRM_MAX_TESTS, each with its target's template. *ret_open:
 * how many of them are not settled yet. flakyd and flakyctl confirm both
 * choose here. */
struct flaky_store;
struct flaky_query;
int	 flaky_confirm_choose(struct flaky_confirm *, struct flaky_store *,
	    const struct flaky_query *, flaky_isolate_fn, void *arg,
	    const char *revision, size_t *ret_open, char *err, size_t errlen);
/* The next unsettled test, round robin, the command that runs it alone
 * and its environment: base_envp (NULL: ours) with FLAKY_TEST set to the
 * test's id, which the command reads (valid until the next call); NULL
 * when every test is settled (or out of memory). */
struct flaky_confirm_test *flaky_confirm_next(struct flaky_confirm *,
	    char *const *base_envp, char *const **argv, char *const **envp);
/* Count a run alone of t from its results. Returns 0, or -ENOENT when the
 * run did not report the test (the template is wrong: t is settled, with
 * start_error, since more runs would not report it either). */
int	 flaky_confirm_count(struct flaky_confirm *,
	    struct flaky_confirm_test *, const struct flaky_results *);
/* The isolate template as a /bin/sh command: each {test} becomes a
 * reference to $FLAKY_TEST quoted for where it stands (outside quotes,
 * inside double or single quotes), so a test id is never part of the
 * command's text; NULL when out of memory. */
char	*flaky_confirm_expand(const char *tmpl);

/* Bisecting (issue 19): the first revision of good..bad at which a test
 * turned flaky. The bad revision is rerun first until the test failed
 * FLAKY_BISECT_BAD_FAILURES times (or max_runs): its rate p there gives
 * the passes that tell a revision from it, flaky_passes_needed(p, 0.05).
 * Then a binary search: a candidate is flaky at its first failure and
 * not flaky at rate p after that many passes in a row. The state and the
 * rules only: flakyctl bisect checks revisions out, runs and stores.
 * See docs/triage.md. */

#define FLAKY_BISECT_BAD_FAILURES	3
#define FLAKY_BISECT_MAX_RUNS		100	/* at the bad revision */
#define FLAKY_BISECT_MAX_REVS		100000

enum flaky_bisect_verdict {
	FLAKY_BISECT_UNTESTED = 0,
	FLAKY_BISECT_FLAKY,	/* failed at least once */
	FLAKY_BISECT_CLEAN,	/* passed the passes needed in a row */
	FLAKY_BISECT_ABSENT,	/* the runs did not report the test */
};

struct flaky_bisect_rev {
	char		*rev;
	int64_t		 runs, failures, in_row;	/* passes in a row */
	int		 verdict;
	int		 order;		/* 1 for the first tested, ... */
};

struct flaky_bisect {
	struct flaky_bisect_rev *v;	/* good..bad, oldest first; last:
					 * bad */
	size_t		 n;
	long		 lo, hi;	/* newest not flaky (-1: good), oldest
					 * flaky */
	int		 measuring;	/* the rate at bad is not known yet */
	int64_t		 max_runs;	/* at bad, measuring */
	int64_t		 bad_runs, bad_failures;	/* what p comes from */
	int64_t		 need;		/* passes in a row: not flaky */
	double		 p;
	int		 tested;
};

/* revs: the revisions after good up to bad, oldest first (git rev-list
 * --first-parent --reverse good..bad), copied. -EINVAL when there are
 * none, -ENOMEM. */
int	 flaky_bisect_init(struct flaky_bisect *, char *const *revs, size_t n,
	    int64_t max_runs);
void	 flaky_bisect_free(struct flaky_bisect *);
/* Take the rate at bad from stored evidence: no measuring. -EINVAL when
 * it has no failure. */
int	 flaky_bisect_set_rate(struct flaky_bisect *, int64_t failures,
	    int64_t runs);
/* The index of the revision to run next, or -1 when done. */
long	 flaky_bisect_next(struct flaky_bisect *);
/* Count a run of revision i: outcome 1 failed, 0 passed, -1 the run did
 * not report the test. */
void	 flaky_bisect_count(struct flaky_bisect *, size_t i, int outcome);
/* When done: the first flaky revision's index; -1 when the test never
 * failed at bad (nothing to bisect), -2 when bad itself did not report
 * the test. */
long	 flaky_bisect_result(const struct flaky_bisect *);
/* Runs made, and what a fixed runs_each per tested revision would take. */
int64_t	 flaky_bisect_runs(const struct flaky_bisect *);
int64_t	 flaky_bisect_fixed_runs(const struct flaky_bisect *,
	    int64_t runs_each);
const char *flaky_bisect_verdict_name(int);

/* Until settled (issue 18, settle.c): a call's runs are counted test by
 * test, and the runs stop once every test that failed at least once has
 * its tier settled by the confidence sequence (flaky_cs_settled), so that
 * looking after every run does not inflate the error rate. Tests that never
 * failed do not hold the runs up. See docs/statistics.md. */
#define FLAKY_SETTLE_MIN_RUNS	10	/* never stop before */
#define FLAKY_SETTLE_MAX_RUNS	200	/* default --max-runs */

struct flaky_settle_test {
	char		*name;
	int64_t		 runs, failures;
	int		 settled;	/* flaky_cs_settled */
	double		 lo, hi;	/* its confidence sequence now */
};

struct flaky_settle {
	struct flaky_settle_test *t;	/* in order of first sight */
	size_t		 nt, cap;
	size_t		*slot, nslot;	/* open addressing into t, 1-based */
	double		 alpha;
	int		 runs;		/* complete runs counted */
	size_t		 open;		/* failed, not settled */
};

void	 flaky_settle_init(struct flaky_settle *, double alpha);
void	 flaky_settle_free(struct flaky_settle *);
/* Count one run whose results are complete (an incomplete run gives no
 * rate and is not counted). 0 or -ENOMEM. */
int	 flaky_settle_count(struct flaky_settle *,
	    const struct flaky_results *);
/* May the runs stop: at least min_runs counted, some test's outcome seen
 * and no test open? */
int	 flaky_settle_done(const struct flaky_settle *, int min_runs);
/* Did t fail and is its tier still open? */
int	 flaky_settle_is_open(const struct flaky_settle_test *);
/* The names of the open tests (failed, not settled), at most cap of them
 * into v (borrowed from s): what runs after the first whole runs where the
 * runner selects (issue 18). Returns how many. */
size_t	 flaky_settle_open_tests(const struct flaky_settle *, const char **v,
	    size_t cap);

/* The tests of target with static scan findings (stored by flaky_store_
 * scan), named as runner names them: pytest node ids without parameters
 * for "pytest", unittest ids for any other; each once, sorted. *ret is
 * for flaky_risky_tests_free (lib/pipeline/risky.c). 0 or a negative
 * errno with err filled. */
int	 flaky_risky_tests(struct flaky_store *, const char *target,
	    const char *runner, char ***ret, size_t *ret_n, char *err,
	    size_t errlen);
void	 flaky_risky_tests_free(char **, size_t);

/* CI retries (issue 30, retry.c): flakyctl ci reruns the tests that failed
 * its first run, each until it passes or had its retries, and the new tests
 * until one fails or passed new_runs runs, the open ones together in one
 * run of only them per round. The state and the rules only: the caller
 * spawns, stores and keeps the budget. See docs/ci.md. */
#define FLAKY_RETRY_MAX_FAILED	100	/* more: none is retried */
#define FLAKY_RETRY_MAX_NEW	200	/* more: the rest unchecked */

enum flaky_retry_verdict {
	FLAKY_RETRY_FLAKY = 0,	/* failed, then passed on a retry */
	FLAKY_RETRY_BROKEN,		/* failed every attempt */
	FLAKY_RETRY_NOT_RETRIED,	/* failed once, no retry ran */
	FLAKY_RETRY_QUARANTINED,	/* failed, not counted */
	FLAKY_RETRY_NEW_FAILED,	/* a new test failed a run */
	FLAKY_RETRY_NEW_PASSED,	/* a new test passed every run */
	FLAKY_RETRY_NEW_UNCHECKED,	/* a new test with runs missing */
};

struct flaky_retry_test {
	char		*name;
	int		 first;		/* its outcome in the first run */
	int		 is_new;
	int		 quarantined;
	int		 runs, failures;	/* the first run included */
	int		 skips;		/* skipped in a retry */
	int		 passed_on;	/* the retry it first passed on; 0 */
	int		 skipped_out;	/* no more runs: past the bounds, a
					 * skip, or its id twice in a run */
	int		 in_round;	/* asked for in the round running */
};

struct flaky_retry {
	struct flaky_retry_test *t;	/* by name, after the first run */
	size_t		 nt, cap;
	int		 retries;	/* per failed test */
	int		 new_runs;	/* of a new test, the first included */
	int		 rounds;	/* counted */
	int		 too_many;	/* over FLAKY_RETRY_MAX_FAILED failed */
	size_t		 new_unchecked;	/* over FLAKY_RETRY_MAX_NEW */
};

/* Is this test new (quarantined)? For flaky_retry_first. */
typedef int	(*flaky_retry_pick_fn)(const char *test, void *arg);

void	 flaky_retry_init(struct flaky_retry *, int retries, int new_runs);
void	 flaky_retry_free(struct flaky_retry *);
/* The first run's results: its failed tests (quarantined ones are not
 * rerun) and, with new_runs, its new tests. 0 or -ENOMEM. */
int	 flaky_retry_first(struct flaky_retry *, const struct flaky_results *,
	    flaky_retry_pick_fn is_new, flaky_retry_pick_fn quarantined,
	    void *arg);
/* The tests of the next round (borrowed), at most cap, marked as asked
 * for; 0 when none is open. */
size_t	 flaky_retry_open_tests(struct flaky_retry *, const char **v,
	    size_t cap);
/* Count a round's complete results. -EPROTO with err, and nothing
 * counted, when it ran a test it was not asked for (a go subtest of one
 * asked for runs with it; a test skipped, filtered out, did not run), did
 * not report one it was, or the runner's own count disagrees. */
int	 flaky_retry_count(struct flaky_retry *, const struct flaky_results *,
	    char *err, size_t errlen);
/* No test open any more. */
int	 flaky_retry_done(const struct flaky_retry *);
/* enum flaky_retry_verdict of a test, its name ("flaky", "broken", ...),
 * and whether it fails the step (broken, not retried, new failed). */
int	 flaky_retry_verdict(const struct flaky_retry *,
	    const struct flaky_retry_test *);
const char *flaky_retry_verdict_name(int);
int	 flaky_retry_fails_step(int verdict);

#endif
