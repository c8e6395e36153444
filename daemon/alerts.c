/* Alerts (docs/alerts.md): after a run's evidence is stored, the tiers of
 * its tests over their target's last runs are compared with what was last
 * told, and each change becomes one event in the database (lib/store/
 * alerts.c). Each receiver of notify: is then given its pending events
 * one at a time, oldest first: a webhook by an HTTP POST (webhook.c), a
 * command with the event as JSON on its stdin. A failure is retried with
 * backoff, from the database, so neither a restart nor a broken receiver
 * loses an event or stalls the loop. */
#include "buildconf.h"

#include <sys/mman.h>
#include <sys/queue.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "diagnose/diagnose.h"
#include "flakyd.h"
#include "json/json.h"
#include "log.h"
#include "stats/stats.h"
#include "util/util.h"

/* Runs evaluated in one turn of the loop; more wait for the next. */
#define EVAL_BATCH		32
/* A write the database refused is tried again after this long. */
#define ALERTS_RETRY_MS		5000
/* Kept of a command's stderr for the log. */
#define CMD_ERR_MAX		200

/* A receiver as flakyd follows it. A reload makes new ones; an old one
 * with a delivery in flight is freed when that ends. */
struct receiver {
	struct flakyd		*d;
	struct cfgref		*cref;		/* holds def */
	const struct flaky_receiver *def;
	char			*safe;		/* what logs show of it */
	int			 gone;
	struct event		*ev;		/* the next step */
	struct flaky_alert	 cur;		/* in flight when busy */
	int			 busy;
	struct webhook		*wh;
	struct flaky_proc	*proc;
	int			 memfd;
	int			 ok;		/* the result, once done */
	char			 why[256];
	int			 done;
	/* A result the database did not take yet: written before anything
	 * is sent again, so a delivered event is never sent twice. */
	int			 unrecorded;
	int			 record_failing;	/* said once */
	TAILQ_ENTRY(receiver)	 entry;
};
TAILQ_HEAD(receiverq, receiver);

static struct receiverq	 receivers = TAILQ_HEAD_INITIALIZER(receivers);
static struct event	*eval_ev;
static int		 eval_failing;
static int		 stopping;

static void	receiver_step(evutil_socket_t, short, void *);
static void	receiver_arm_eval(int64_t);

/* Arm a receiver's step ms from now (0: from the next turn). */
static void
receiver_arm(struct receiver *rv, int64_t ms)
{
	struct timeval	 tv;

	if (ms < 0)
		ms = 0;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(rv->ev, &tv);
}

/* Free a receiver that has nothing in flight. */
static void
receiver_free(struct receiver *rv)
{
	TAILQ_REMOVE(&receivers, rv, entry);
	webhook_free(rv->wh);
	if (rv->proc != NULL)
		flaky_proc_free(rv->proc);
	if (rv->memfd != -1)
		close(rv->memfd);
	flaky_alert_clear(&rv->cur);
	event_free(rv->ev);
	cfgref_unref(rv->cref);
	free(rv->safe);
	free(rv);
}

/* The receiver's link: {test_id} and {run_id} filled in. */
static void
event_link(const struct flaky_receiver *def, const struct flaky_alert *a,
    struct flaky_buf *b)
{
	for (const char *s = def->link; *s != '\0'; s++) {
		if (strncmp(s, "{test_id}", 9) == 0) {
			flaky_buf_printf(b, "%lld", (long long)a->test_id);
			s += 8;
		} else if (strncmp(s, "{run_id}", 8) == 0) {
			flaky_buf_printf(b, "%lld", (long long)a->run_id);
			s += 7;
		} else
			flaky_buf_addc(b, *s);
	}
}

/* The event as the receivers get it: a Slack-compatible text and the
 * same in fields (docs/alerts.md). */
static void
event_json(const struct flaky_receiver *def, const struct flaky_alert *a,
    struct flaky_buf *out)
{
	struct flaky_jw	 w;
	struct flaky_buf text, link;
	double		 lo, hi;
	char		 t[32], key[96];

	flaky_wilson(a->failures, a->runs, FLAKY_Z95, &lo, &hi);
	flaky_buf_init(&text);
	flaky_buf_init(&link);
	alert_text(a, lo, hi, &text);
	if (def->link != NULL)
		event_link(def, a, &link);
	snprintf(key, sizeof key, "%s:%lld:%lld", flaky_alert_kind_name(
	    a->kind), (long long)a->test_id, (long long)a->at_ms);
	flaky_jw_init(&w, out);
	flaky_jw_object_begin(&w);
	flaky_jw_key(&w, "text");
	flaky_jw_string(&w, flaky_buf_cstr(&text));
	flaky_jw_key(&w, "event");
	flaky_jw_string(&w, flaky_alert_kind_name(a->kind));
	flaky_jw_key(&w, "key");
	flaky_jw_string(&w, key);
	flaky_jw_key(&w, "alert_id");
	flaky_jw_int(&w, a->id);
	flaky_jw_key(&w, "target");
	flaky_jw_string(&w, a->target);
	flaky_jw_key(&w, "test");
	flaky_jw_string(&w, a->test);
	flaky_jw_key(&w, "test_id");
	flaky_jw_int(&w, a->test_id);
	flaky_jw_key(&w, "tier");
	flaky_jw_string(&w, flaky_tier_name(flaky_tier(a->failures, a->runs)));
	flaky_jw_key(&w, "rate");
	flaky_jw_double(&w, a->runs > 0 ? (double)a->failures / a->runs : 0);
	flaky_jw_key(&w, "interval");
	flaky_jw_array_begin(&w);
	flaky_jw_double(&w, lo);
	flaky_jw_double(&w, hi);
	flaky_jw_array_end(&w);
	flaky_jw_key(&w, "runs");
	flaky_jw_int(&w, a->runs);
	flaky_jw_key(&w, "failures");
	flaky_jw_int(&w, a->failures);
	if (a->kind == FLAKY_ALERT_RELEASE) {
		flaky_jw_key(&w, "passes");
		flaky_jw_int(&w, a->passes);
		flaky_jw_key(&w, "needed");
		flaky_jw_int(&w, a->needed);
	}
	flaky_jw_key(&w, "run_id");
	flaky_jw_int(&w, a->run_id);
	flaky_jw_key(&w, "at");
	flaky_jw_string(&w, flaky_format_time(a->at_ms, t, sizeof t));
	flaky_jw_key(&w, "link");
	flaky_jw_string(&w, def->link != NULL ? flaky_buf_cstr(&link) : NULL);
	flaky_jw_object_end(&w);
	if (flaky_jw_finish(&w) < 0 || flaky_buf_addc(out, '\n') < 0)
		fatalx("out of memory");
	flaky_buf_free(&text);
	flaky_buf_free(&link);
}

/* The webhook answered, or did not. */
static void
webhook_done(void *arg, int ok, const char *why)
{
	struct receiver	*rv = arg;

	rv->ok = ok;
	snprintf(rv->why, sizeof rv->why, "%s", why != NULL ? why : "");
	rv->done = 1;
	receiver_arm(rv, 0);
}

/* The command ended: exit 0 is delivered. */
static void
command_done(void *arg, struct flaky_proc *p)
{
	struct receiver	*rv = arg;
	const struct flaky_proc_info *pi = flaky_proc_info(p);
	struct flaky_buf e;
	const char	*s;
	size_t		 n, i;

	rv->ok = pi->end == FLAKY_PROC_EXITED && pi->exit_code == 0;
	flaky_buf_init(&e);
	flaky_proc_output(p, FLAKY_STDERR, &e);
	/* Its last line: where a traceback says what went wrong. */
	s = flaky_buf_cstr(&e);
	n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	for (i = n; i > 0 && s[i - 1] != '\n'; i--)
		;
	s += i;
	n -= i;
	if (pi->end == FLAKY_PROC_TIMEOUT)
		snprintf(rv->why, sizeof rv->why, "timed out");
	else if (pi->signal != 0)
		snprintf(rv->why, sizeof rv->why, "killed by signal %d",
		    pi->signal);
	else
		snprintf(rv->why, sizeof rv->why, "exit %d%s%.*s",
		    pi->exit_code, n > 0 ? ": " : "",
		    (int)(n > CMD_ERR_MAX ? CMD_ERR_MAX : n), s);
	flaky_buf_free(&e);
	rv->done = 1;
	receiver_arm(rv, 0);
}

/* Start a command receiver: the event on stdin from a sealed memfd. */
static int
command_start(struct receiver *rv, const char *body, size_t len, char *err,
    size_t errlen)
{
	struct flaky_spawn_opts o;

	if ((rv->memfd = memfd_create("flaky-alert", MFD_CLOEXEC)) == -1)
		return flaky_error(err, errlen, errno, "memfd_create: %s",
		    strerror(errno));
	if (write(rv->memfd, body, len) != (ssize_t)len ||
	    lseek(rv->memfd, 0, SEEK_SET) == -1)
		return flaky_error(err, errlen, errno, "memfd: %s",
		    strerror(errno));
	memset(&o, 0, sizeof o);
	o.argv = rv->def->argv;
	o.timeout_ms = rv->def->timeout_ms;
	o.grace_ms = 1000;
	o.capture_max = 4096;
	o.stdin_fd = rv->memfd;
	return flaky_spawn(rv->d->sp, &o, NULL, command_done, rv, &rv->proc,
	    err, errlen);
}

/* Send the event in rv->cur. */
static void
deliver(struct receiver *rv)
{
	struct flaky_buf body;
	char		 err[256];
	int		 r;

	flaky_buf_init(&body);
	event_json(rv->def, &rv->cur, &body);
	rv->busy = 1;
	rv->done = 0;
	if (rv->def->url != NULL)
		r = webhook_post(rv->d->base, rv->def->url, rv->def->ca_file,
		    rv->def->timeout_ms, flaky_buf_cstr(&body), body.len,
		    webhook_done, rv, &rv->wh, err, sizeof err);
	else
		r = command_start(rv, flaky_buf_cstr(&body), body.len, err,
		    sizeof err);
	flaky_buf_free(&body);
	if (r < 0) {
		rv->ok = 0;
		snprintf(rv->why, sizeof rv->why, "%s", err);
		rv->done = 1;
		receiver_arm(rv, 0);
	}
}

/* The delay before attempt n + 1: retry doubling up to retry_max. */
static int64_t
backoff(const struct flaky_receiver *def, int64_t attempts)
{
	int64_t	 ms = def->retry_ms;

	for (int64_t i = 1; i < attempts && ms < def->retry_max_ms; i++)
		ms *= 2;
	return ms < def->retry_max_ms ? ms : def->retry_max_ms;
}

/* Write the result of rv->cur; 0, or -1 when the database refused it
 * (then it is written before anything else is sent). */
static int
record(struct receiver *rv)
{
	struct flaky_alert *a = &rv->cur;
	int64_t		 now = flaky_now_ms(), next = 0;
	char		 err[512];
	int		 state = 1;

	if (!rv->ok) {
		next = now + backoff(rv->def, a->attempts + 1);
		state = now - a->created_ms >= rv->def->give_up_ms ? 2 : 0;
	}
	if (flaky_store_alert_mark(rv->d->store, a->id, rv->def->name, state,
	    a->attempts + 1, next, rv->ok ? NULL : rv->why, now, err,
	    sizeof err) < 0) {
		if (!rv->record_failing)
			log_warnx("alert %lld to %s: %s; will retry",
			    (long long)a->id, rv->def->name, err);
		rv->record_failing = 1;
		return -1;
	}
	rv->unrecorded = 0;
	rv->record_failing = 0;
	if (state == 1)
		log_info("alert %lld (%s %s, target %s) delivered to %s",
		    (long long)a->id, flaky_alert_kind_name(a->kind), a->test,
		    a->target, rv->def->name);
	else if (state == 2)
		log_warnx("alert %lld (%s %s) to %s (%s): given up after %lld "
		    "attempts: %s", (long long)a->id, flaky_alert_kind_name(
		    a->kind), a->test, rv->def->name, rv->safe,
		    (long long)a->attempts + 1, rv->why);
	else
		log_warnx("alert %lld (%s %s) to %s (%s) failed, attempt "
		    "%lld: %s; next try in %.1fs", (long long)a->id,
		    flaky_alert_kind_name(a->kind), a->test, rv->def->name,
		    rv->safe, (long long)a->attempts + 1, rv->why,
		    (double)(next - now) / 1000);
	return 0;
}

/* Is an old receiver of the same name (before a reload) still sending?
 * Then this one waits, or one event could go out twice. */
static int
twin_busy(const struct receiver *rv)
{
	struct receiver	*o;

	TAILQ_FOREACH(o, &receivers, entry)
		if (o != rv && o->gone && (o->busy || o->unrecorded) &&
		    strcmp(o->def->name, rv->def->name) == 0)
			return 1;
	return 0;
}

/* Wake the current receiver of a name (its old twin is done). */
static void
wake_twin(const char *name)
{
	struct receiver	*o;

	TAILQ_FOREACH(o, &receivers, entry)
		if (!o->gone && strcmp(o->def->name, name) == 0)
			receiver_arm(o, 0);
}

/* Take the next pending event of a receiver, or wait for its time. */
static void
next_event(struct receiver *rv)
{
	char	 err[512];
	int64_t	 now;
	int	 r;

	flaky_alert_clear(&rv->cur);
	if (twin_busy(rv))
		return;		/* armed when the old one is done */
	if ((r = flaky_store_alert_next(rv->d->store, rv->def->name,
	    &rv->cur, err, sizeof err)) < 0) {
		log_warnx("alerts to %s: %s", rv->def->name, err);
		receiver_arm(rv, ALERTS_RETRY_MS);
		return;
	}
	if (r == 0)
		return;		/* idle until an event is added */
	now = flaky_now_ms();
	if (rv->cur.next_ms > now) {
		receiver_arm(rv, rv->cur.next_ms - now);
		return;
	}
	deliver(rv);
}

/* A receiver's step, from its event: a delivery ended (clean up, record
 * it), or it is time to send the next. */
static void
receiver_step(evutil_socket_t fd, short what, void *arg)
{
	struct receiver	*rv = arg;

	(void)fd;
	(void)what;
	if (rv->busy && !rv->done)
		return;
	if (rv->busy) {
		webhook_free(rv->wh);
		rv->wh = NULL;
		if (rv->proc != NULL)
			flaky_proc_free(rv->proc);
		rv->proc = NULL;
		if (rv->memfd != -1)
			close(rv->memfd);
		rv->memfd = -1;
		rv->busy = 0;
		rv->unrecorded = 1;
	}
	if (rv->unrecorded && record(rv) < 0) {
		receiver_arm(rv, ALERTS_RETRY_MS);
		return;
	}
	if (rv->gone) {
		char *name = xstrdup(rv->def->name);

		receiver_free(rv);
		wake_twin(name);
		free(name);
		return;
	}
	if (stopping) {
		flakyd_maybe_exit(rv->d);
		return;
	}
	next_event(rv);
}

/* The receivers that take events of this kind. */
static size_t
names_for(int kind, const char **names)
{
	struct receiver	*rv;
	size_t		 n = 0;

	TAILQ_FOREACH(rv, &receivers, entry)
		if (!rv->gone && (rv->def->events & (1u << kind)) &&
		    n < FLAKY_NOTIFY_MAX)
			names[n++] = rv->def->name;
	return n;
}

/* An event found in a run, before it is written. */
struct found {
	struct flaky_alert	 a;
	const char		*test;		/* the window's */
};

/* Where each target's evaluation stands: read from the database once,
 * written with the events of a run (and at exit). After a crash the runs
 * since the last write are looked at again, which adds nothing twice:
 * a run that made no event makes none again. */
struct cursor {
	int64_t		 target_id, run;
	int		 dirty;
};
static struct cursor	*cursors;
static size_t		 ncursors, cursors_cap;

/* A target's cursor, read (or started at its newest run) on first use. */
static struct cursor *
cursor_get(struct flakyd *d, int64_t target_id, char *err, size_t errlen)
{
	struct cursor	*c;

	for (size_t i = 0; i < ncursors; i++)
		if (cursors[i].target_id == target_id)
			return &cursors[i];
	if (flaky_array_grow(&cursors, &cursors_cap, ncursors,
	    sizeof *cursors) < 0)
		fatalx("out of memory");
	c = &cursors[ncursors];
	memset(c, 0, sizeof *c);
	c->target_id = target_id;
	if (flaky_store_alert_cursor(d->store, target_id, &c->run, err,
	    errlen) < 0)
		return NULL;
	ncursors++;
	return c;
}

/* Keep an event of a test at a run, if a receiver takes its kind. */
static void
keep(struct found **v, size_t *n, size_t *cap,
    const struct flaky_alert_test *t, int kind, int64_t run, int64_t run_ms,
    int64_t passes, int64_t needed)
{
	const char	*names[FLAKY_NOTIFY_MAX];
	struct flaky_alert *a;

	if (names_for(kind, names) == 0)
		return;
	if (flaky_array_grow(v, cap, *n, sizeof **v) < 0)
		fatalx("out of memory");
	(*v)[*n].test = t->test;
	a = &(*v)[(*n)++].a;
	memset(a, 0, sizeof *a);
	a->test_id = t->test_id;
	a->kind = kind;
	a->at_ms = run_ms;
	a->run_id = run;
	a->runs = t->runs;
	a->failures = t->failures;
	a->passes = passes;
	a->needed = needed;
	a->created_ms = flaky_now_ms();
}

/* The events of one stored run (reads only): its tests' tiers over the
 * window, and a quarantined test that passed often enough to leave. */
static int
eval_run(struct flakyd *d, const struct flaky_alert_test *v, size_t nv,
    int64_t run, int64_t run_ms, struct found **ret, size_t *ret_n,
    char *err, size_t errlen)
{
	int	 window = d->cur->cfg->notify_window, kind, r;
	int	 min_runs = window < FLAKY_NOTIFY_MIN_RUNS ? window :
		    FLAKY_NOTIFY_MIN_RUNS;
	size_t	 cap = 0;

	for (size_t i = 0; i < nv; i++) {
		int64_t	 streak;
		long long need;
		double	 p;

		if ((kind = flaky_alert_decide(&v[i], min_runs)) >= 0)
			keep(ret, ret_n, &cap, &v[i], kind, run, run_ms, -1,
			    -1);
		if (!v[i].quarantined || !v[i].passed || v[i].release_told)
			continue;
		if ((r = flaky_store_pass_streak(d->store, v[i].test_id,
		    &streak, err, errlen)) < 0)
			return r;
		need = flaky_release_after(d->store, v[i].test_id, 0, &p);
		if (streak >= need)
			keep(ret, ret_n, &cap, &v[i], FLAKY_ALERT_RELEASE, run,
			    run_ms, streak, need);
	}
	return 0;
}

/* Write a run's events with the cursor, in one short transaction. */
static int
write_events(struct flakyd *d, struct cursor *c, int64_t run,
    const struct found *v, size_t n, char *err, size_t errlen)
{
	const char	*names[FLAKY_NOTIFY_MAX];
	int		 r = 0;

	if ((r = flaky_store_begin(d->store, err, errlen)) < 0)
		return r;
	for (size_t i = 0; i < n && r >= 0; i++)
		r = flaky_store_alert_add(d->store, &v[i].a, names,
		    names_for(v[i].a.kind, names), err, errlen);
	if (r >= 0)
		r = flaky_store_alert_set_cursor(d->store, c->target_id, run,
		    err, errlen);
	if (r < 0) {
		flaky_store_rollback(d->store);
		return r;
	}
	if ((r = flaky_store_commit(d->store, err, errlen)) < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		log_info("alert: %s %s at run %lld (%lld of %lld run%s failed)",
		    flaky_alert_kind_name(v[i].a.kind), v[i].test,
		    (long long)run, (long long)v[i].a.failures,
		    (long long)v[i].a.runs, flaky_plural(v[i].a.runs));
	c->dirty = 0;
	return 0;
}

/* The next run of a target after its cursor: 1 when one was looked at,
 * 0 when none waits. Only a run with events writes. */
static int
eval_next(struct flakyd *d, int64_t target_id, char *err, size_t errlen)
{
	struct flaky_alert_test *v = NULL;
	struct found	*ev = NULL;
	struct cursor	*c;
	int64_t		 run, run_ms;
	size_t		 nv = 0, nev = 0;
	int		 r;

	if ((c = cursor_get(d, target_id, err, errlen)) == NULL)
		return -1;
	if ((r = flaky_store_alert_next_run(d->store, target_id, c->run, &run,
	    &run_ms, err, errlen)) <= 0)
		return r;
	if ((r = flaky_store_alert_window(d->store, target_id, run, run_ms,
	    d->cur->cfg->notify_window, &v, &nv, err, errlen)) == 0 &&
	    (r = eval_run(d, v, nv, run, run_ms, &ev, &nev, err,
	    errlen)) == 0 && nev > 0)
		r = write_events(d, c, run, ev, nev, err, errlen);
	if (r == 0 && nev == 0)
		c->dirty = 1;
	if (r == 0)
		c->run = run;
	free(ev);
	flaky_alert_tests_free(v, nv);
	return r < 0 ? r : 1;
}

/* Evaluate what was stored since the last look, a batch at a time, then
 * wake the receivers. */
static void
eval_cb(evutil_socket_t fd, short what, void *arg)
{
	struct flakyd	*d = arg;
	struct receiver	*rv;
	char		 err[512];
	int		 done = 0, r = 0, more = 0;

	(void)fd;
	(void)what;
	if (d->cur->cfg->nreceivers == 0 || stopping)
		return;
	for (size_t i = 0; i < d->ntargets && done < EVAL_BATCH; i++) {
		if (d->targets[i]->id <= 0)
			continue;
		while (done < EVAL_BATCH && (r = eval_next(d,
		    d->targets[i]->id, err, sizeof err)) > 0)
			done++;
		if (r < 0)
			break;
		if (done == EVAL_BATCH)
			more = 1;
	}
	if (r < 0) {
		if (eval_failing++ == 0)
			log_warnx("alerts: %s; will retry", err);
		more = 0;
		receiver_arm_eval(ALERTS_RETRY_MS);
	} else
		eval_failing = 0;
	if (more)
		event_active(eval_ev, EV_TIMEOUT, 0);
	TAILQ_FOREACH(rv, &receivers, entry)
		if (!rv->busy && !evtimer_pending(rv->ev, NULL))
			receiver_arm(rv, 0);
}

/* Evaluate again after ms (the database refused a write). */
static void
receiver_arm_eval(int64_t ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(eval_ev, &tv);
}

/* A run was stored: evaluate from the next turn of the loop (never inside
 * the pipeline's own transaction). */
void
alerts_kick(struct flakyd *d)
{
	(void)d;
	if (eval_ev != NULL && d->cur->cfg->nreceivers > 0)
		event_active(eval_ev, EV_TIMEOUT, 0);
}

/* The receivers of the current config (at start and after a reload): the
 * old ones go, those in flight once their delivery ended. */
void
alerts_apply(struct flakyd *d)
{
	const struct flaky_config *cfg = d->cur->cfg;
	struct receiver	*rv, *next;

	if (eval_ev == NULL && (eval_ev = evtimer_new(d->base, eval_cb, d)) ==
	    NULL)
		fatalx("out of memory");
	for (rv = TAILQ_FIRST(&receivers); rv != NULL; rv = next) {
		next = TAILQ_NEXT(rv, entry);
		rv->gone = 1;
		if (!rv->busy && !rv->unrecorded)
			receiver_free(rv);
	}
	for (size_t i = 0; i < cfg->nreceivers; i++) {
		const struct flaky_receiver *def = &cfg->receivers[i];

		rv = xcalloc(1, sizeof *rv);
		rv->d = d;
		rv->cref = d->cur;
		rv->cref->refs++;
		rv->def = def;
		rv->memfd = -1;
		rv->safe = def->url != NULL ? webhook_safe_url(def->url) :
		    xstrdup(def->argv[0]);
		if ((rv->ev = evtimer_new(d->base, receiver_step, rv)) == NULL)
			fatalx("out of memory");
		TAILQ_INSERT_TAIL(&receivers, rv, entry);
	}
	if (cfg->nreceivers > 0)
		log_info("alerts: %zu receiver%s, tiers over the last %d run%s",
		    cfg->nreceivers, flaky_plural((long long)cfg->nreceivers),
		    cfg->notify_window, flaky_plural(cfg->notify_window));
	alerts_kick(d);
}

/* Stopping: nothing new is sent; deliveries in flight are dropped and
 * stay pending in the database for the next start. */
void
alerts_shutdown(struct flakyd *d)
{
	struct receiver	*rv;

	(void)d;
	stopping = 1;
	TAILQ_FOREACH(rv, &receivers, entry) {
		if (rv->wh != NULL) {
			webhook_free(rv->wh);
			rv->wh = NULL;
			rv->busy = 0;
		}
		if (rv->proc != NULL)
			flaky_proc_stop(rv->proc);
	}
}

/* At exit: where each target's evaluation stands. */
void
alerts_free(struct flakyd *d)
{
	char	 err[512];

	for (size_t i = 0; i < ncursors; i++)
		if (cursors[i].dirty && flaky_store_alert_set_cursor(d->store,
		    cursors[i].target_id, cursors[i].run, err, sizeof err) < 0)
			log_warnx("alerts: %s", err);
	free(cursors);
	cursors = NULL;
	ncursors = cursors_cap = 0;
	while (!TAILQ_EMPTY(&receivers))
		receiver_free(TAILQ_FIRST(&receivers));
	if (eval_ev != NULL)
		event_free(eval_ev);
	eval_ev = NULL;
	webhook_shutdown();
}
