/* The run lifecycle (lib/pipeline.h): start, classify, decide what the
 * evidence may count for, and write it in short grouped transactions that
 * are retried, never dropped. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "classify/classify.h"
#include "pipeline/pipeline.h"
#include "util/util.h"

/* Ended runs' output that makes a commit due at once (memory); else a
 * commit waits for the caller's grouping time: one sync per commit. */
#define GROUP_BYTES	(16 << 20)

struct item {
	struct flaky_pipeline	*pl;
	struct flaky_run	*run;
	char			*trigger, *revision, *error, *version;
	char			*evidence_only;	/* the job's, or NULL */
	char			*perturbation, *seed;
	char			*dir;		/* where it runs: own code */
	int64_t			 target_id;
	int			 kind;
	int			 selected;	/* the job's (issue 18) */
	void			*job_arg;
	int			 ended;
	int			 by_budget;	/* the caller's budget ended it */
	int64_t			 old_id;	/* rec.id before a write */
	struct event		*budget_ev;
	TAILQ_ENTRY(item)	 entry;
};
TAILQ_HEAD(itemq, item);

struct flaky_pipeline {
	struct flaky_pipeline_opts o;
	struct itemq		 items;		/* in the order they started */
	size_t			 nlive, nended;
	size_t			 bytes;		/* of the ended ones */
	int			 unwritten_starts;
	struct event		*flush_ev;
	int64_t			 retry_ms;	/* 0: not backing off */
};

static void	flush_cb(evutil_socket_t, short, void *);

int
flaky_pipeline_new(const struct flaky_pipeline_opts *o,
    struct flaky_pipeline **ret)
{
	struct flaky_pipeline *pl;

	*ret = NULL;
	if ((pl = calloc(1, sizeof *pl)) == NULL)
		return -ENOMEM;
	pl->o = *o;
	if (pl->o.busy_ms <= 0)
		pl->o.busy_ms = FLAKY_BUSY_TIMEOUT_MS;
	if (pl->o.retry_first_ms <= 0)
		pl->o.retry_first_ms = 100;
	if (pl->o.retry_last_ms < pl->o.retry_first_ms)
		pl->o.retry_last_ms = 30 * 1000;
	TAILQ_INIT(&pl->items);
	if ((pl->flush_ev = evtimer_new(o->base, flush_cb, pl)) == NULL) {
		free(pl);
		return -ENOMEM;
	}
	*ret = pl;
	return 0;
}

/* Free one item and its run. */
static void
item_free(struct item *it)
{
	if (it == NULL)
		return;
	if (it->budget_ev != NULL)
		event_free(it->budget_ev);
	flaky_run_free(it->run);
	free(it->trigger);
	free(it->revision);
	free(it->error);
	free(it->version);
	free(it->evidence_only);
	free(it->perturbation);
	free(it->seed);
	free(it->dir);
	free(it);
}

void
flaky_pipeline_free(struct flaky_pipeline *pl)
{
	struct item	*it;

	if (pl == NULL)
		return;
	while ((it = TAILQ_FIRST(&pl->items)) != NULL) {
		TAILQ_REMOVE(&pl->items, it, entry);
		item_free(it);
	}
	event_free(pl->flush_ev);
	free(pl);
}

void
flaky_pipeline_set_classifier(struct flaky_pipeline *pl,
    const struct flaky_classifier *c)
{
	pl->o.classifier = c;
}

size_t
flaky_pipeline_running(const struct flaky_pipeline *pl)
{
	return pl->nlive;
}

size_t
flaky_pipeline_waiting(const struct flaky_pipeline *pl)
{
	return pl->nended;
}

/* Arm the flush timer for ms from now, unless it fires sooner already or
 * a retry is backing off. */
static void
flush_in(struct flaky_pipeline *pl, int64_t ms)
{
	struct timeval	 tv, left;

	if (pl->retry_ms > 0)
		return;
	if (evtimer_pending(pl->flush_ev, &left)) {
		struct timeval now;

		event_base_gettimeofday_cached(pl->o.base, &now);
		if (timercmp(&left, &now, <) ||
		    (left.tv_sec - now.tv_sec) * 1000 +
		    (left.tv_usec - now.tv_usec) / 1000 <= ms)
			return;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(pl->flush_ev, &tv);
}

/* One attempt: the start rows of live runs not written yet and every
 * ended run, in one transaction. On failure nothing of it stays, and the
 * runs keep the ids they had before. */
static int
write_once(struct flaky_pipeline *pl, char *err, size_t errlen)
{
	struct flaky_store *s = pl->o.store;
	struct item	*it, *next;
	int		 r;

	if (pl->nended == 0 && pl->unwritten_starts == 0)
		return 0;
	flaky_store_set_busy_timeout(s, pl->o.busy_ms);
	if ((r = flaky_store_begin(s, err, errlen)) < 0)
		return r;
	TAILQ_FOREACH(it, &pl->items, entry) {
		struct flaky_run_record *rec = &it->run->rec;

		it->old_id = rec->id;
		if (!it->ended && rec->id == 0)
			r = flaky_store_run_start(s, rec, err, errlen);
		else if (it->ended)
			r = flaky_store_run_finish(s, rec, &it->run->results,
			    err, errlen);
		if (r < 0)
			goto fail;
	}
	if ((r = flaky_store_commit(s, err, errlen)) < 0)
		goto fail;
	pl->unwritten_starts = 0;
	for (it = TAILQ_FIRST(&pl->items); it != NULL; it = next) {
		next = TAILQ_NEXT(it, entry);
		if (!it->ended)
			continue;
		TAILQ_REMOVE(&pl->items, it, entry);
		pl->nended--;
		if (pl->o.stored != NULL)
			pl->o.stored(it->run, it->job_arg, pl->o.arg);
		item_free(it);
	}
	pl->bytes = 0;
	return 0;
fail:
	flaky_store_rollback(s);
	TAILQ_FOREACH(it, &pl->items, entry)
		it->run->rec.id = it->old_id;
	return r;
}

/* Write what waits; on failure tell the caller and back off. */
static void
flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct flaky_pipeline *pl = arg;
	struct timeval	 tv;
	char		 err[1024];
	int		 r;

	(void)fd;
	(void)what;
	if ((r = write_once(pl, err, sizeof err)) == 0) {
		pl->retry_ms = 0;
		return;
	}
	pl->retry_ms = pl->retry_ms == 0 ? pl->o.retry_first_ms :
	    pl->retry_ms * 2;
	if (pl->retry_ms > pl->o.retry_last_ms)
		pl->retry_ms = pl->o.retry_last_ms;
	if (pl->o.error != NULL)
		pl->o.error(r, err, pl->nended, pl->o.arg);
	tv.tv_sec = pl->retry_ms / 1000;
	tv.tv_usec = (pl->retry_ms % 1000) * 1000;
	evtimer_add(pl->flush_ev, &tv);
}

/* Outside an event loop only (the final flush of a CLI command). */
static void
nap_ms(int64_t ms)
{
	struct timespec	 ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

int
flaky_pipeline_flush(struct flaky_pipeline *pl, int64_t wait_ms, char *err,
    size_t errlen)
{
	int64_t	 end_us = flaky_mono_us() + wait_ms * 1000, delay_ms = 10;
	int	 r;

	if (evtimer_pending(pl->flush_ev, NULL))
		event_del(pl->flush_ev);
	pl->retry_ms = 0;
	for (;;) {
		if ((r = write_once(pl, err, errlen)) == 0)
			return 0;
		if (flaky_mono_us() + delay_ms * 1000 > end_us)
			break;
		nap_ms(delay_ms);
		if ((delay_ms *= 2) > 1000)
			delay_ms = 1000;
	}
	/* Still waiting: the loop's timer tries again, if it runs. */
	flush_in(pl, pl->o.retry_first_ms);
	return r;
}

/* Why a run's outcomes may not count for rates, or NULL. A run killed at
 * its time limit counts what it reported: the test that hung is its
 * TIMEOUT failure, and leaving such runs out would hide exactly the tests
 * that hang. */
static const char *
incomplete_reason(const struct flaky_run *run)
{
	switch (run->rec.status) {
	case FLAKY_RUN_INTERRUPTED:
		return "interrupted: the run was stopped before it ended";
	case FLAKY_RUN_STOPPED:
		return "stopped: the caller's budget ended before the run did";
	case FLAKY_RUN_TIMEOUT:
		return NULL;
	}
	return run->results.incomplete;
}

/* The test running at the kill: the failure classified TIMEOUT (the
 * last, as flaky_classify_run marks it), or -1. */
static long
timeout_test(const struct flaky_results *r)
{
	for (size_t i = r->n; i-- > 0;)
		if (r->v[i].signature != NULL &&
		    strcmp(r->v[i].signature, "TIMEOUT") == 0)
			return (long)i;
	return -1;
}

/* A failed result for the test the stacks name (Jest prints a file's
 * results when the file ends: a run killed in it names no test), unless
 * the runner reported it; it is then the last failure, the TIMEOUT. */
static int
add_hung_test(struct flaky_results *r, const char *test)
{
	static const char msg[] = "no outcome: killed at its time limit "
	    "while this test ran (named by its stacks: the runner had not "
	    "reported it yet)";
	struct flaky_results one;
	int	 e;

	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].test, test) == 0)
			return 0;
	flaky_results_init(&one);
	if ((one.v = calloc(1, sizeof *one.v)) == NULL)
		return -ENOMEM;
	one.cap = one.n = 1;
	one.v[0].outcome = FLAKY_FAIL;
	one.v[0].duration_us = -1;
	if ((one.v[0].test = strdup(test)) == NULL ||
	    (one.v[0].message = strdup(msg)) == NULL) {
		flaky_results_free(&one);
		return -ENOMEM;
	}
	e = flaky_results_merge(r, &one);
	flaky_results_free(&one);
	return e;
}

/* Where a hung run was stuck (issue 33), before classification: the
 * stacks taken before its kill, folded; a test they name that the runner
 * did not report becomes its failure. */
static void
item_stacks_fold(struct item *it)
{
	struct flaky_run *run = it->run;

	if (run->stacks == NULL)
		return;
	if (flaky_hang_fold(run->stacks, it->dir) < 0 ||
	    (run->stacks->hang.test != NULL &&
	    run->rec.status == FLAKY_RUN_TIMEOUT &&
	    add_hung_test(&run->results, run->stacks->hang.test) < 0))
		run->rec.error = run->rec.error ? run->rec.error :
		    "folding the stacks ran out of memory";
}

/* After classification: the stacks linked to the test that was running
 * (its TIMEOUT failure); without stacks, the runner's own dump of that
 * test's timeout (pytest-timeout, go test -timeout) in its failure or the
 * run's output, folded. */
static void
item_stacks_link(struct item *it)
{
	struct flaky_run *run = it->run;
	long		 t = timeout_test(&run->results);
	const char	*msg;

	if (run->stacks == NULL && t >= 0) {
		msg = run->results.v[t].message;
		if (msg != NULL)
			run->stacks = flaky_hang_from_text(msg, strlen(msg));
		if (run->stacks == NULL && run->rec.err != NULL)
			run->stacks = flaky_hang_from_text(run->rec.err,
			    run->rec.err_len);
		if (run->stacks == NULL && run->rec.out != NULL)
			run->stacks = flaky_hang_from_text(run->rec.out,
			    run->rec.out_len);
		if (run->stacks != NULL &&
		    flaky_hang_fold(run->stacks, it->dir) < 0)
			run->rec.error = run->rec.error ? run->rec.error :
			    "folding the stacks ran out of memory";
	}
	if (run->stacks == NULL)
		return;
	run->stacks->test = t >= 0 ? run->results.v[t].test : NULL;
	run->rec.stacks = run->stacks;
}

/* The run ended and its output is parsed: classify it and queue it. */
static void
item_end(struct item *it, int tell)
{
	struct flaky_run	*run = it->run;
	struct flaky_pipeline	*pl = it->pl;
	struct flaky_run_evidence ev = { 0 };

	if (it->budget_ev != NULL) {
		event_free(it->budget_ev);
		it->budget_ev = NULL;
	}
	if (it->by_budget && run->rec.status == FLAKY_RUN_INTERRUPTED)
		run->rec.status = FLAKY_RUN_STOPPED;
	ev.timed_out = run->rec.status == FLAKY_RUN_TIMEOUT;
	item_stacks_fold(it);
	if (flaky_classify_results(pl->o.classifier, &run->results, &ev) < 0)
		run->rec.error = run->rec.error ? run->rec.error :
		    "classifying the failures ran out of memory";
	item_stacks_link(it);
	run->rec.incomplete = incomplete_reason(run);
	if (run->rec.incomplete == NULL)
		run->rec.incomplete = it->evidence_only;
	/* A runner that prints no version of its own: what the caller found
	 * in its installation. */
	if (run->results.version == NULL && run->results.n > 0 &&
	    it->version != NULL)
		run->results.version = strdup(it->version);
	if (!it->ended) {
		pl->nlive--;
		it->ended = 1;
		pl->nended++;
		pl->bytes += run->rec.out_len + run->rec.err_len +
		    run->results.n * 128;
	}
	if (tell && pl->o.ended != NULL)
		pl->o.ended(run, it->job_arg, pl->o.arg);
	if (pl->o.group_ms <= 0 || pl->bytes >= GROUP_BYTES)
		flush_in(pl, 0);
	else
		flush_in(pl, pl->o.group_ms);
}

/* run.c's done callback. */
static void
item_ended(struct flaky_run *run, void *arg)
{
	(void)run;
	item_end(arg, 1);
}

/* The caller's budget ran out: stop the run, stored as stopped. */
static void
budget_cb(evutil_socket_t fd, short what, void *arg)
{
	struct item	*it = arg;

	(void)fd;
	(void)what;
	it->by_budget = 1;
	flaky_run_stop(it->run);
}

/* A new item for a job, its record filled. */
static struct item *
item_new(struct flaky_pipeline *pl, int64_t target_id, int kind,
    const char *trigger, const char *revision, void *job_arg)
{
	struct item	*it;

	if ((it = calloc(1, sizeof *it)) == NULL)
		return NULL;
	it->pl = pl;
	it->target_id = target_id;
	it->kind = kind;
	it->job_arg = job_arg;
	if ((trigger != NULL && (it->trigger = strdup(trigger)) == NULL) ||
	    (revision != NULL && (it->revision = strdup(revision)) == NULL)) {
		item_free(it);
		return NULL;
	}
	return it;
}

/* Point the run's record at the item's copies. */
static void
item_bind(struct item *it)
{
	it->run->rec.target_id = it->target_id;
	it->run->rec.kind = it->kind;
	it->run->rec.trigger = it->trigger;
	it->run->rec.revision = it->revision;
	it->run->rec.perturbation = it->perturbation;
	it->run->rec.seed = it->seed;
	it->run->rec.selected = it->selected;
}

int
flaky_pipeline_start(struct flaky_pipeline *pl, const struct flaky_job *job,
    struct flaky_run **ret, char *err, size_t errlen)
{
	struct item	*it;
	int		 r;

	*ret = NULL;
	if ((it = item_new(pl, job->target_id, job->kind, job->trigger,
	    job->revision, job->arg)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	if ((job->evidence_only != NULL &&
	    (it->evidence_only = strdup(job->evidence_only)) == NULL) ||
	    (job->perturbation != NULL && (it->perturbation =
	    strdup(job->perturbation)) == NULL) || (job->seed != NULL &&
	    (it->seed = strdup(job->seed)) == NULL)) {
		item_free(it);
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	}
	it->selected = job->selected;
	if (job->spec.dir != NULL)
		it->dir = strdup(job->spec.dir);
	else
		it->dir = getcwd(NULL, 0);
	r = flaky_run_start(pl->o.sp, &job->spec, item_ended, it, &it->run,
	    err, errlen);
	if (it->run == NULL) {
		item_free(it);
		return r;
	}
	item_bind(it);
	if (job->runner_version != NULL)
		it->version = strdup(job->runner_version);
	TAILQ_INSERT_TAIL(&pl->items, it, entry);
	if (r < 0) {
		/* Could not start: an error run, ended at once. The caller
		 * knows from r; its ended callback is not called from inside
		 * its own start. */
		item_end(it, 0);
		return r;
	}
	pl->nlive++;
	pl->unwritten_starts = 1;
	/* The start row goes in with the next commit: at once for a caller
	 * that groups nothing, else within its grouping time. */
	flush_in(pl, pl->o.group_ms);
	if (job->budget_end_us > 0) {
		int64_t		 us = job->budget_end_us - flaky_mono_us();
		struct timeval	 tv;

		if (us < 0)
			us = 0;
		tv.tv_sec = us / 1000000;
		tv.tv_usec = us % 1000000;
		if ((it->budget_ev = evtimer_new(pl->o.base, budget_cb,
		    it)) != NULL)
			evtimer_add(it->budget_ev, &tv);
	}
	*ret = it->run;
	return 0;
}

int
flaky_pipeline_record(struct flaky_pipeline *pl,
    const struct flaky_run_record *rec, void *job_arg)
{
	struct item	*it;

	if ((it = item_new(pl, rec->target_id, rec->kind, rec->trigger,
	    rec->revision, job_arg)) == NULL)
		return -ENOMEM;
	if ((it->run = calloc(1, sizeof *it->run)) == NULL) {
		item_free(it);
		return -ENOMEM;
	}
	flaky_results_init(&it->run->results);
	it->run->rec = *rec;
	it->run->rec.id = 0;
	it->run->rec.out = it->run->rec.err = NULL;
	it->run->rec.out_len = it->run->rec.err_len = 0;
	it->run->rec.content_hash = NULL;
	it->run->rec.incomplete = NULL;
	if (rec->error != NULL && (it->error = strdup(rec->error)) == NULL) {
		item_free(it);
		return -ENOMEM;
	}
	it->run->rec.error = it->error;
	item_bind(it);
	it->ended = 1;
	pl->nended++;
	TAILQ_INSERT_TAIL(&pl->items, it, entry);
	flush_in(pl, pl->o.group_ms);
	return 0;
}

void
flaky_pipeline_stop_all(struct flaky_pipeline *pl)
{
	struct item	*it;

	TAILQ_FOREACH(it, &pl->items, entry)
		if (!it->ended)
			flaky_run_stop(it->run);
}
