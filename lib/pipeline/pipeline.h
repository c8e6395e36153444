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
	/* Issue 18: the stress beside the run ("cpu:2"; NULL: calm) and
	 * the order seed passed to the runner (NULL: not shuffled). */
	const char		*perturbation;
	const char		*seed;
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

#endif
