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

#include "run.h"
#include "store.h"

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

#endif
