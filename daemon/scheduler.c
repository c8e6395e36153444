/* The schedule: one realtime timer for the earliest due target, the
 * triggers it fires (and catch-up and manual ones) waiting for a job slot,
 * and the end of a trigger. A trigger's runs are runs.c; a new config is
 * reload.c. */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <event2/event.h>

#include "flakyd.h"
#include "log.h"
#include "run/run.h"
#include "sched/sched.h"
#include "store/store.h"

static uint64_t
rand64(void)
{
	return ((uint64_t)arc4random() << 32) | arc4random();
}

/* The next schedule time of a target after after_ms, with its jitter. */
void
sched_next_fire(struct flakyd *d, struct tstate *ts, int64_t after_ms)
{
	const struct flaky_target *t = ts->def;
	int64_t		 next;

	ts->due_ms = ts->fire_ms = FLAKY_NO_FIRE;
	ts->sched_src[0] = '\0';
	if (t == NULL || !t->has_schedule)
		return;
	if (flaky_sched_next(&t->sched, d->cur->cfg->tz, d->start_ms,
	    after_ms, &next) < 0) {
		log_warnx("target %s: schedule \"%s\" never fires", ts->name,
		    t->schedule);
		return;
	}
	ts->due_ms = next;
	ts->jitter_ms = t->jitter_ms;
	ts->fire_ms = next;
	if (t->jitter_ms > 0)
		ts->fire_ms += (int64_t)(rand64() % (uint64_t)t->jitter_ms);
	flaky_sched_format(&t->sched, ts->sched_src, sizeof ts->sched_src);
}

/* The target with this name in the running schedule, or NULL. */
struct tstate *
sched_find(struct flakyd *d, const char *name)
{
	for (size_t i = 0; i < d->ntargets; i++)
		if (strcmp(d->targets[i]->name, name) == 0)
			return d->targets[i];
	return NULL;
}

/* Processes of ours in flight (runs and revision commands). */
int
sched_running(struct flakyd *d)
{
	return flaky_spawner_running(d->sp);
}

/* Record a trigger that did not run because the last one still does, so
 * that no denominator is silently smaller. */
static void
record_skipped(struct flakyd *d, struct tstate *ts, const char *kind)
{
	struct flaky_run_record rec;

	memset(&rec, 0, sizeof rec);
	rec.target_id = ts->id;
	rec.status = FLAKY_RUN_SKIPPED;
	rec.trigger = kind;
	rec.started_ms = rec.ended_ms = flaky_now_ms();
	rec.exit_code = -1;
	rec.loadavg = -1;
	rec.error = "skipped: the previous trigger of this target was "
	    "still running";
	if (flaky_pipeline_record(d->pl, &rec, NULL) < 0)
		fatalx("out of memory");
	log_info("target %s: trigger skipped, the last one still runs",
	    ts->name);
}

/* Wait for a job slot. */
static void
enqueue(struct flakyd *d, struct trigger *tr)
{
	TAILQ_INSERT_TAIL(&d->waitq, tr, wait);
	d->nwaiting++;
	sched_kick(d);
}

/* A trigger for a target: start it, queue it behind the running one, or
 * record it as skipped. Returns 0, or -EBUSY when it was skipped. */
static int
fire(struct flakyd *d, struct tstate *ts, const char *kind, int runs,
    int force_queue)
{
	if (ts->active == NULL) {
		ts->active = trigger_new(d, ts, kind, runs);
		enqueue(d, ts->active);
		return 0;
	}
	if ((force_queue || ts->def->overlap == FLAKY_OVERLAP_QUEUE) &&
	    ts->pending == NULL) {
		ts->pending = trigger_new(d, ts, kind, runs);
		return 1;
	}
	if (!force_queue)
		record_skipped(d, ts, kind);
	return -EBUSY;
}

/* Remember the trigger time for catch-up after downtime. */
static void
save_fire(struct flakyd *d, struct tstate *ts, int64_t ms)
{
	char	 err[512];

	if (flaky_store_set_last_fire(d->store, ts->id, ms, err,
	    sizeof err) < 0)
		log_warnx("target %s: %s", ts->name, err);
}

/* Open a transaction for several small writes; 1 when open, -1 when the
 * database refused (each write then tries on its own). */
static int
batch_begin(struct flakyd *d)
{
	char	 err[512];

	if (flaky_store_begin(d->store, err, sizeof err) < 0) {
		log_warnx("%s", err);
		return -1;
	}
	return 1;
}

/* Close the transaction batch_begin() opened. */
static void
batch_commit(struct flakyd *d)
{
	char	 err[512];

	if (flaky_store_commit(d->store, err, sizeof err) < 0)
		log_warnx("%s", err);
}

/* The timer went off: fire every due target, then arm for the next. */
static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct flakyd	*d = arg;
	uint64_t	 n;
	int64_t		 now;
	int		 in_tx = 0;

	(void)what;
	/* ECANCELED: the clock was set; times are absolute, so re-arm. */
	if (read(fd, &n, sizeof n) == -1 && errno != EAGAIN &&
	    errno != ECANCELED && errno != EINTR)
		log_warn("timerfd");
	d->armed_ms = FLAKY_NO_FIRE;
	if (d->stopping)
		return;
	now = flaky_now_ms();
	for (size_t i = 0; i < d->ntargets; i++) {
		struct tstate *ts = d->targets[i];

		if (ts->fire_ms == FLAKY_NO_FIRE || ts->fire_ms > now)
			continue;
		log_debug("target %s: fired %lld ms after its time", ts->name,
		    (long long)(now - ts->fire_ms));
		/* Targets due together share one transaction (one sync). */
		if (!in_tx)
			in_tx = batch_begin(d);
		save_fire(d, ts, ts->due_ms);
		fire(d, ts, "schedule", ts->def->runs, 0);
		/* A loaded machine or a suspend may have slept through
		 * several: they become this one trigger. */
		sched_next_fire(d, ts, ts->due_ms > now ? ts->due_ms : now);
	}
	if (in_tx > 0)
		batch_commit(d);
	sched_arm(d);
}

/* Arm the timer for the earliest fire time (or disarm it). */
void
sched_arm(struct flakyd *d)
{
	struct itimerspec its;
	int64_t		 min = FLAKY_NO_FIRE;

	if (d->stopping)
		return;
	for (size_t i = 0; i < d->ntargets; i++) {
		int64_t f = d->targets[i]->fire_ms;

		if (f != FLAKY_NO_FIRE && (min == FLAKY_NO_FIRE || f < min))
			min = f;
	}
	if (min == d->armed_ms)
		return;
	memset(&its, 0, sizeof its);
	if (min != FLAKY_NO_FIRE) {
		if (min <= 0)
			min = 1;
		its.it_value.tv_sec = min / 1000;
		its.it_value.tv_nsec = (min % 1000) * 1000000;
	}
	/* Absolute wall-clock time: a suspend or a clock step does not
	 * shift cron times; CANCEL_ON_SET tells us when the clock is set. */
	if (timerfd_settime(d->timerfd, TFD_TIMER_ABSTIME |
	    TFD_TIMER_CANCEL_ON_SET, &its, NULL) == -1)
		fatal("timerfd_settime");
	d->armed_ms = min;
}

/* Start waiting triggers while job slots are free. */
static void
kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct flakyd	*d = arg;
	struct trigger	*tr;

	(void)fd;
	(void)what;
	while (!d->stopping && d->slots < d->cur->cfg->jobs &&
	    (tr = TAILQ_FIRST(&d->waitq)) != NULL) {
		TAILQ_REMOVE(&d->waitq, tr, wait);
		d->nwaiting--;
		trigger_start(d, tr);
	}
}

/* Start waiting triggers from the loop, not from inside a callback. */
void
sched_kick(struct flakyd *d)
{
	event_active(d->kick_ev, EV_TIMEOUT, 0);
}

/* The trigger's runs are over: free the slot, start what waits. */
void
trigger_end(struct trigger *tr)
{
	struct flakyd	*d = flakyd;
	struct tstate	*ts = tr->ts;

	if (tr->has_slot)
		d->slots--;
	ts->active = NULL;
	trigger_free(tr);
	if (ts->pending != NULL && !d->stopping && !ts->removed) {
		ts->active = ts->pending;
		ts->pending = NULL;
		enqueue(d, ts->active);
	}
	if (ts->removed && ts->active == NULL) {
		LIST_REMOVE(ts, gone);
		tstate_free(ts);
	}
	sched_kick(d);
	flakyd_maybe_exit(d);
}

/* The timer, the deferred events and the queues. */
int
sched_init(struct flakyd *d, char *err, size_t errlen)
{
	TAILQ_INIT(&d->waitq);
	LIST_INIT(&d->gone);
	d->armed_ms = -1;
	d->timerfd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK |
	    TFD_CLOEXEC);
	if (d->timerfd == -1)
		return flaky_error(err, errlen, errno, "timerfd_create: %s",
		    strerror(errno));
	d->timer_ev = event_new(d->base, d->timerfd, EV_READ | EV_PERSIST,
	    timer_cb, d);
	d->kick_ev = evtimer_new(d->base, kick_cb, d);
	if (d->timer_ev == NULL || d->kick_ev == NULL ||
	    event_priority_set(d->timer_ev, 0) == -1 ||
	    event_add(d->timer_ev, NULL) == -1)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	return runs_init(d, err, errlen);
}

/* After downtime: a target whose trigger was missed runs once now. */
void
sched_catch_up(struct flakyd *d)
{
	int64_t		 now = flaky_now_ms(), last, next;
	char		 err[512];
	int		 in_tx = 0;

	for (size_t i = 0; i < d->ntargets; i++) {
		struct tstate *ts = d->targets[i];
		const struct flaky_target *t = ts->def;

		if (!t->has_schedule || !t->catch_up)
			continue;
		if (flaky_store_last_fire(d->store, ts->id, &last, err,
		    sizeof err) < 0) {
			log_warnx("target %s: %s", ts->name, err);
			continue;
		}
		/* Never fired: nothing was missed. "every" counts from the
		 * last trigger here, as the daemon that fired it did. */
		if (last == FLAKY_NO_FIRE || flaky_sched_next(&t->sched,
		    d->cur->cfg->tz, last, last, &next) < 0 || next > now)
			continue;
		log_info("target %s: a trigger was missed while flakyd was "
		    "down; running it once now", ts->name);
		if (!in_tx)
			in_tx = batch_begin(d);
		save_fire(d, ts, now);
		fire(d, ts, "catch-up", t->runs, 0);
	}
	if (in_tx > 0)
		batch_commit(d);
}

/* A manual trigger: it runs now, waits behind the running one, or is
 * refused. */
int
sched_manual(struct flakyd *d, const char *name, int runs, int *ret_queued,
    char *err, size_t errlen)
{
	struct tstate	*ts;
	int		 r;

	if (d->stopping)
		return flaky_error(err, errlen, ESHUTDOWN,
		    "flakyd is shutting down");
	if ((ts = sched_find(d, name)) == NULL)
		return flaky_error(err, errlen, ENOENT, "no target named '%s'",
		    name);
	if (runs <= 0)
		runs = ts->def->runs;
	r = fire(d, ts, "manual", runs, 1);
	if (r < 0)
		return flaky_error(err, errlen, EBUSY, "target '%s' is running "
		    "and another trigger already waits for it", name);
	*ret_queued = r == 1;
	log_info("target %s: %d run%s asked for over the control socket",
	    name, runs, runs == 1 ? "" : "s");
	return 0;
}

/* Stop launching; end what runs (it finishes as interrupted). */
void
sched_shutdown(struct flakyd *d)
{
	struct trigger	*tr;

	if (d->timer_ev != NULL)
		event_del(d->timer_ev);
	while ((tr = TAILQ_FIRST(&d->waitq)) != NULL) {
		TAILQ_REMOVE(&d->waitq, tr, wait);
		d->nwaiting--;
		tr->ts->active = NULL;
		trigger_free(tr);
	}
	for (size_t i = 0; i < d->ntargets; i++) {
		struct tstate *ts = d->targets[i];

		trigger_free(ts->pending);
		ts->pending = NULL;
	}
	for (size_t i = 0; i < d->ntargets; i++) {
		tr = d->targets[i]->active;
		if (tr == NULL)
			continue;
		if (tr->revproc != NULL)
			flaky_proc_stop(tr->revproc);
		if (tr->job != NULL)
			flaky_run_stop(tr->job->run);
	}
	{
		struct tstate *ts;

		LIST_FOREACH(ts, &d->gone, gone) {
			tr = ts->active;
			if (tr != NULL && tr->job != NULL)
				flaky_run_stop(tr->job->run);
			if (tr != NULL && tr->revproc != NULL)
				flaky_proc_stop(tr->revproc);
		}
	}
}

/* Everything still held, at exit (after the loop). Live runs are killed
 * by flaky_run_free and their rows stay "running" for the next start. */
void
sched_free(struct flakyd *d)
{
	struct tstate	*ts;

	for (size_t i = 0; i < d->ntargets; i++) {
		ts = d->targets[i];
		if (ts->active != NULL) {
			if (ts->active->job != NULL)
				job_free(ts->active->job);
			trigger_free(ts->active);
		}
		tstate_free(ts);
	}
	while ((ts = LIST_FIRST(&d->gone)) != NULL) {
		LIST_REMOVE(ts, gone);
		if (ts->active != NULL) {
			if (ts->active->job != NULL)
				job_free(ts->active->job);
			trigger_free(ts->active);
		}
		tstate_free(ts);
	}
	free(d->targets);
	d->targets = NULL;
	d->ntargets = 0;
	runs_free(d);
	if (d->timer_ev != NULL)
		event_free(d->timer_ev);
	if (d->kick_ev != NULL)
		event_free(d->kick_ev);
	if (d->timerfd != -1)
		close(d->timerfd);
	cfgref_unref(d->cur);
	d->cur = NULL;
}
