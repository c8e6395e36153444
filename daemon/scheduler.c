/* The schedule and the supervision of runs: one realtime timer for the
 * earliest due target, triggers waiting for a job slot, each trigger's
 * runs one after another, a run row at start and one transaction at the
 * end, and finished runs kept for a retry when the database refuses. */
#include "buildconf.h"

#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "flakyd.h"
#include "log.h"
#include "classify/classify.h"
#include "run/run.h"
#include "diagnose/diagnose.h"
#include "sched/sched.h"
#include "store/store.h"

static void	trigger_next_ev(evutil_socket_t, short, void *);
static void	trigger_end(struct trigger *);
static void	kick(struct flakyd *);
struct job;
static void	job_ended(struct flakyd *, struct job *, struct flaky_run *);

/* The minimal environment of a run: PATH, HOME, LANG, TZ, USER (TMPDIR is
 * the spawner's, per run), then the target's env: over them. */
static char **
make_envp(const struct flaky_config *cfg, const struct flaky_target *t)
{
	struct passwd	*pw = getpwuid(geteuid());
	const char	*path = getenv("PATH"), *home = getenv("HOME");
	const char	*lang = getenv("LANG"), *tz = cfg->timezone;
	const char	*user = pw ? pw->pw_name : getenv("USER");
	char		**v;
	size_t		 n = 0;

	v = xcalloc(6 + t->nenv, sizeof *v);
	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	if ((home == NULL || *home == '\0') && pw != NULL)
		home = pw->pw_dir;
	if (lang == NULL || *lang == '\0')
		lang = "C.UTF-8";
	if (tz == NULL)
		tz = getenv("TZ");
	xasprintf(&v[n++], "PATH=%s", path);
	if (home != NULL)
		xasprintf(&v[n++], "HOME=%s", home);
	xasprintf(&v[n++], "LANG=%s", lang);
	if (tz != NULL && *tz != '\0')
		xasprintf(&v[n++], "TZ=%s", tz);
	if (user != NULL)
		xasprintf(&v[n++], "USER=%s", user);
	for (size_t i = 0; i < t->nenv; i++) {
		size_t	 len = strlen(t->env[i].name);
		size_t	 j;

		for (j = 0; j < n; j++)
			if (strncmp(v[j], t->env[i].name, len) == 0 &&
			    v[j][len] == '=')
				break;
		if (j < n)
			free(v[j]);
		else
			n++;
		xasprintf(&v[j], "%s=%s", t->env[i].name, t->env[i].value);
	}
	v[n] = NULL;
	return v;
}

/* A loaded config with the environment of each target. */
struct cfgref *
cfgref_new(struct flaky_config *cfg)
{
	struct cfgref	*c = xcalloc(1, sizeof *c);

	c->cfg = cfg;
	c->refs = 1;
	c->envs = xcalloc(cfg->ntargets + 1, sizeof *c->envs);
	c->cmds = xcalloc(cfg->ntargets + 1, sizeof *c->cmds);
	c->versions = xcalloc(cfg->ntargets + 1, sizeof *c->versions);
	for (size_t i = 0; i < cfg->ntargets; i++) {
		const struct flaky_command_opts co = { .keep_jest_cache = 1 };
		char	 err[512];

		c->envs[i] = make_envp(cfg, &cfg->targets[i]);
		/* The same completion as flakyctl analyze: a YAML command
		 * `pytest tests/` gives every test's outcome too. */
		if (flaky_command_complete(cfg->targets[i].argv, c->envs[i],
		    &co, &c->cmds[i], err, sizeof err) < 0)
			fatalx("target %s: %s", cfg->targets[i].name, err);
		if (c->cmds[i].note != NULL)
			log_info("target %s: %s", cfg->targets[i].name,
			    c->cmds[i].note);
		c->versions[i] = flaky_runner_version(&c->cmds[i],
		    cfg->targets[i].dir ? cfg->targets[i].dir : ".");
	}
	return c;
}

/* Drop a reference; the last frees the config. */
void
cfgref_unref(struct cfgref *c)
{
	if (c == NULL || --c->refs > 0)
		return;
	for (size_t i = 0; i < c->cfg->ntargets; i++) {
		for (char **e = c->envs[i]; *e != NULL; e++)
			free(*e);
		free(c->envs[i]);
		flaky_command_clear(&c->cmds[i]);
		free(c->versions[i]);
	}
	free(c->envs);
	free(c->cmds);
	free(c->versions);
	flaky_config_free(c->cfg);
	free(c);
}

/* The command as stored in targets.command. */
static char *
command_text(const struct flaky_target *t)
{
	struct flaky_buf b;

	if (t->shell)
		return xstrdup(t->argv[2]);
	flaky_buf_init(&b);
	for (size_t i = 0; i < t->argc; i++)
		flaky_buf_printf(&b, "%s%s", i ? " " : "", t->argv[i]);
	if (b.oom)
		fatalx("out of memory");
	return flaky_buf_steal(&b);
}

static uint64_t
rand64(void)
{
	return ((uint64_t)arc4random() << 32) | arc4random();
}

/* The next schedule time of a target after after_ms, with its jitter. */
static void
compute_next(struct flakyd *d, struct tstate *ts, int64_t after_ms)
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

/* A trigger of a target, not yet waiting for a slot. */
static struct trigger *
trigger_new(struct flakyd *d, struct tstate *ts, const char *kind, int runs)
{
	struct trigger	*tr = xcalloc(1, sizeof *tr);

	tr->ts = ts;
	tr->kind = kind;
	tr->runs = runs;
	tr->queued_ms = flaky_now_ms();
	flaky_buf_init(&tr->revout);
	if ((tr->next_ev = evtimer_new(d->base, trigger_next_ev, tr)) == NULL)
		fatalx("out of memory");
	return tr;
}

/* Free a trigger (its run, if any, is the caller's). */
static void
trigger_free(struct trigger *tr)
{
	if (tr == NULL)
		return;
	flaky_proc_free(tr->revproc);
	flaky_buf_free(&tr->revout);
	if (tr->next_ev != NULL)
		event_free(tr->next_ev);
	free(tr->revision);
	flaky_confirm_free(tr->confirm);
	free(tr->confirm);
	cfgref_unref(tr->cref);
	free(tr);
}

/* Wait for a job slot. */
static void
enqueue(struct flakyd *d, struct trigger *tr)
{
	TAILQ_INSERT_TAIL(&d->waitq, tr, wait);
	d->nwaiting++;
	kick(d);
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
		/* Targets due together share one transaction (one sync). */
		if (!in_tx)
			in_tx = batch_begin(d);
		save_fire(d, ts, ts->due_ms);
		fire(d, ts, "schedule", ts->def->runs, 0);
		/* A loaded machine or a suspend may have slept through
		 * several: they become this one trigger. */
		compute_next(d, ts, ts->due_ms > now ? ts->due_ms : now);
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

/* The trigger's revision: command finished; its first line is the
 * revision. */
static void
revision_done(void *arg, struct flaky_proc *p)
{
	struct trigger	*tr = arg;
	const struct flaky_proc_info *pi = flaky_proc_info(p);
	const char	*s = flaky_buf_cstr(&tr->revout);
	size_t		 len = strcspn(s, "\r\n");

	if (pi->exit_code == 0 && len > 0)
		tr->revision = flaky_strndup(s, len);
	else
		log_warnx("target %s: revision command \"%s\" failed "
		    "(exit %d%s); runs have no revision", tr->ts->name,
		    tr->def->revision, pi->exit_code,
		    pi->end == FLAKY_PROC_TIMEOUT ? ", timed out" : "");
	/* Freed from the next event, not inside the spawner's callback. */
	event_active(tr->next_ev, EV_TIMEOUT, 0);
}

/* The revision command's output: its first bytes are enough. */
static void
revision_data(void *arg, int stream, const char *s, size_t n)
{
	struct trigger	*tr = arg;

	if (stream == FLAKY_STDOUT && tr->revout.len < 256)
		flaky_buf_add(&tr->revout, s, n > 256 ? 256 : n);
}

/* scan: true: the target's directory is scanned for approximate
 * assertions at each trigger (milliseconds for a test tree), and the
 * findings replace the last scan's. */
static void
trigger_scan(struct flakyd *d, struct trigger *tr)
{
	struct flaky_scan_summary sum;
	char		*paths[] = { (char *)tr->def->dir };
	char		 err[512];

	if (flaky_store_scan(d->store, tr->ts->id, tr->def->dir, paths, 1,
	    NULL, NULL, &sum, err, sizeof err) < 0)
		log_warnx("target %s: scan: %s", tr->ts->name, err);
	else
		log_debug("target %s: scanned %zu files, %zu findings",
		    tr->ts->name, sum.files, sum.findings);
}

/* retention: raw results older than the limit go (the daily rollups stay),
 * at most once an hour, when a trigger starts: no timer of its own. */
static void
retention(struct flakyd *d)
{
	struct flaky_prune_stats ps;
	int64_t		 keep = d->cur->cfg->retention_ms, now = flaky_now_ms();
	char		 err[512];

	if (keep <= 0 || now - d->pruned_ms < 3600 * 1000)
		return;
	d->pruned_ms = now;
	if (flaky_store_prune(d->store, now - keep, &ps, err, sizeof err) < 0)
		log_warnx("retention: %s", err);
	else if (ps.runs > 0)
		log_info("retention: raw results of %lld runs older than %lld "
		    "days removed (daily rollups kept)", (long long)ps.runs,
		    (long long)(keep / 86400000));
}

/* The trigger got its slot: find the revision, then start the runs. */
static void
trigger_start(struct flakyd *d, struct trigger *tr)
{
	struct flaky_spawn_opts o;
	char		*argv[] = { "/bin/sh", "-c", NULL, NULL };
	char		 err[512];
	size_t		 i;

	tr->has_slot = 1;
	d->slots++;
	tr->cref = d->cur;
	tr->cref->refs++;
	tr->def = tr->ts->def;
	for (i = 0; i < d->cur->cfg->ntargets; i++)
		if (&d->cur->cfg->targets[i] == tr->def)
			break;
	tr->envp = d->cur->cmds[i].envp;
	tr->argv = d->cur->cmds[i].argv;
	tr->runner_version = d->cur->versions[i];
	if (tr->def->scan)
		trigger_scan(d, tr);
	retention(d);
	if (tr->def->revision != NULL) {
		memset(&o, 0, sizeof o);
		argv[2] = tr->def->revision;
		o.argv = argv;
		o.dir = tr->def->dir;
		o.envp = tr->envp;
		o.timeout_ms = FLAKYD_REVISION_TIMEOUT_MS;
		o.grace_ms = 1000;
		o.capture_max = 4096;
		if (flaky_spawn(d->sp, &o, revision_data, revision_done, tr,
		    &tr->revproc, err, sizeof err) == 0)
			return;
		log_warnx("target %s: revision command: %s", tr->ts->name,
		    err);
	} else if (revision_git_start(d, tr) == 1)
		return;
	event_active(tr->next_ev, EV_TIMEOUT, 0);
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
static void
kick(struct flakyd *d)
{
	event_active(d->kick_ev, EV_TIMEOUT, 0);
}

/* Free a run's job (its run belongs to the pipeline). */
static void
job_free(struct job *j)
{
	if (j == NULL)
		return;
	free(j->target);
	free(j->revision);
	free(j);
}

/* Log an escapee before it is killed. */
static void
stray_log(long pid, void *arg)
{
	(void)arg;
	log_info("killing stray process %ld (left by a run)", pid);
}

/* No run in flight any more: end the strays, and look again shortly for
 * their own children, reparented to us in turn. */
static void
sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	struct flakyd	*d = arg;
	int		 found;

	(void)fd;
	(void)what;
	if (flaky_spawner_running(d->sp) > 0)
		return;
	found = flaky_kill_strays(stray_log, NULL);
	flaky_spawner_reap(d->sp);
	if (found > 0 && d->sweeps++ < 50) {
		struct timeval tv = { 0, 100 * 1000 };

		evtimer_add(d->sweep_ev, &tv);
	} else
		d->sweeps = 0;
}

/* Start a job's run through the pipeline, which writes its start row.
 * -1 when not even an error run could be made (out of memory: logged, the
 * job freed). */
static int
job_start(struct flakyd *d, struct trigger *tr, struct job *j,
    const struct flaky_job *job)
{
	struct flaky_run *run;
	char	 err[512];
	int	 r;

	tr->job = j;
	r = flaky_pipeline_start(d->pl, job, &run, err, sizeof err);
	if (r == -ENOMEM) {
		log_warnx("target %s: out of memory", tr->ts->name);
		tr->job = NULL;
		job_free(j);
		return -1;
	}
	if (r < 0) {
		/* Could not start (command not found, no directory): an
		 * error run, recorded like any other. */
		log_warnx("target %s: %s", tr->ts->name, err);
		job_ended(d, j, NULL);
		return 0;
	}
	j->run = run;
	return 0;
}

/* The isolate: template of a trigger's target. */
static char *
confirm_isolate(const char *target, void *arg)
{
	struct trigger	*tr = arg;

	(void)target;
	return tr->def->isolate != NULL ? xstrdup(tr->def->isolate) : NULL;
}

/* confirm: true: the unstable tests of the target over the last 30 days,
 * to rerun alone after the trigger's runs. -1: nothing to confirm. */
static int
confirm_begin(struct flakyd *d, struct trigger *tr)
{
	struct flaky_query q;
	size_t		 open = 0;
	char		 err[512];

	memset(&q, 0, sizeof q);
	q.since_ms = flaky_now_ms() - FLAKYD_CONFIRM_WINDOW_MS;
	q.until_ms = INT64_MAX;
	q.target = tr->ts->name;
	tr->confirm = xcalloc(1, sizeof *tr->confirm);
	flaky_confirm_init(tr->confirm, FLAKY_CONFIRM_MAX_RUNS);
	tr->confirm->files_only = 1;	/* git was asked at the start */
	if (flaky_confirm_choose(tr->confirm, d->store, &q, confirm_isolate,
	    tr, tr->revision, &open, err, sizeof err) < 0) {
		log_warnx("target %s: confirm: %s", tr->ts->name, err);
		return -1;
	}
	if (open == 0)
		return -1;
	tr->confirm_end_us = flaky_mono_us() + tr->def->confirm_budget_ms *
	    1000;
	log_info("target %s: confirming %zu unsettled test%s alone, for at "
	    "most %llds", tr->ts->name, open, open == 1 ? "" : "s",
	    (long long)(tr->def->confirm_budget_ms / 1000));
	return 0;
}

/* After the trigger's runs: the next test alone, while one is unsettled
 * and the budget lasts. -1: confirming is over (or not asked for). */
static int
confirm_start(struct flakyd *d, struct trigger *tr)
{
	struct flaky_job job;
	struct flaky_confirm_test *t;
	struct job	*j;
	char *const	*argv, *const *envp;
	int64_t		 left_ms;

	if (!tr->def->confirm)
		return -1;
	if (tr->confirm == NULL) {
		char	 err[512];

		/* The choice reads the store: the trigger's last runs must be
		 * in it first. */
		if (flaky_pipeline_flush(d->pl, 0, err, sizeof err) < 0) {
			struct timeval tv = { 0, 200 * 1000 };

			evtimer_add(tr->next_ev, &tv);
			return 0;
		}
		if (confirm_begin(d, tr) < 0)
			return -1;
	}
	left_ms = (tr->confirm_end_us - flaky_mono_us()) / 1000;
	if (left_ms <= 0) {
		log_info("target %s: confirm budget spent after %d runs alone",
		    tr->ts->name, tr->confirm_runs);
		return -1;
	}
	if ((t = flaky_confirm_next(tr->confirm, tr->envp, &argv, &envp)) ==
	    NULL) {
		log_info("target %s: confirmed, %d runs alone", tr->ts->name,
		    tr->confirm_runs);
		return -1;
	}
	j = xcalloc(1, sizeof *j);
	j->tr = tr;
	j->target = xstrdup(tr->ts->name);
	j->revision = t->revision ? xstrdup(t->revision) : NULL;
	j->index = ++tr->confirm_runs;
	j->ctest = t;
	memset(&job, 0, sizeof job);
	job.spec.argv = argv;
	job.spec.dir = t->dir;
	job.spec.envp = envp;
	job.spec.timeout_ms = tr->def->timeout_ms;
	job.spec.grace_ms = tr->cref->cfg->kill_grace_ms;
	job.target_id = tr->ts->id;
	job.kind = FLAKY_KIND_ALONE;
	job.trigger = FLAKY_TRIGGER_CONFIRM;
	job.revision = j->revision;
	/* A run alone ends with the budget at the latest, stored as
	 * stopped: the budget is ours, not the test's time limit. */
	job.budget_end_us = tr->confirm_end_us;
	job.arg = j;
	return job_start(d, tr, j, &job);
}

/* A run alone ended: count it for its test and log it. */
static void
confirm_count(struct trigger *tr, struct job *j, struct flaky_run *run)
{
	struct flaky_confirm_test *t = j->ctest;

	if (run->rec.status == FLAKY_RUN_STOPPED ||
	    run->rec.status == FLAKY_RUN_INTERRUPTED) {
		log_info("target %s confirm run %d: %s: stopped by the %s",
		    j->target, j->index, t->name,
		    run->rec.status == FLAKY_RUN_STOPPED ? "confirm budget" :
		    "shutdown");
		return;
	}
	if (run->rec.status == FLAKY_RUN_ERROR ||
	    flaky_confirm_count(tr->confirm, t, &run->results) == -ENOENT) {
		t->start_error = t->settled = 1;
		log_warnx("target %s confirm run %d: %s: the isolate: command "
		    "did not report this test (exit %d%s%s); check the "
		    "template", j->target, j->index, t->name,
		    run->rec.exit_code, run->rec.error ? ": " : "",
		    run->rec.error ? run->rec.error : "");
		return;
	}
	log_info("target %s confirm run %d: %s alone: %d/%d failed%s",
	    j->target, j->index, t->name, t->alone_failed, t->alone,
	    t->settled ? ", settled" : "");
}

/* A job's run ended (run NULL: it could not start, the pipeline has
 * its error run): log it, go on with the trigger. The pipeline stores
 * it. */
static void
job_ended(struct flakyd *d, struct job *j, struct flaky_run *run)
{
	struct trigger	*tr = j->tr;
	struct tstate	*ts = tr->ts;
	int64_t		 failures = 0;

	for (size_t i = 0; run != NULL && i < run->results.n; i++)
		failures += FLAKY_FAILED(run->results.v[i].outcome);
	if (run == NULL)
		;	/* told by job_start */
	else if (j->ctest != NULL)
		confirm_count(tr, j, run);
	else
		log_info("target %s run %d/%d: %s, %zu tests, %lld failures, "
		    "%.2fs%s%s%s%s", j->target, j->index, j->of,
		    flaky_run_status_name(run->rec.status), run->results.n,
		    (long long)failures, (double)run->rec.duration_us / 1e6,
		    run->rec.error ? ": " : "",
		    run->rec.error ? run->rec.error : "",
		    run->rec.incomplete && run->rec.status == FLAKY_RUN_DONE ?
		    "; incomplete: " : "",
		    run->rec.incomplete && run->rec.status == FLAKY_RUN_DONE ?
		    run->rec.incomplete : "");
	d->runs_done++;
	tr->job = NULL;
	tr->finished++;
	/* A run alone is not the target's last run: status shows suites. */
	if (run != NULL && j->ctest == NULL) {
		ts->last.status = run->rec.status;
		ts->last.started_ms = run->rec.started_ms;
		ts->last.ended_ms = run->rec.ended_ms;
		ts->last.tests = (int64_t)run->results.n;
		ts->last.failures = failures;
		ts->last.run_id = -1;	/* known here, not stored yet */
	}
	job_free(j);
	if (flaky_spawner_running(d->sp) == 0)
		event_active(d->sweep_ev, EV_TIMEOUT, 0);
	event_active(tr->next_ev, EV_TIMEOUT, 0);
}

/* The pipeline's ended callback. */
static void
pl_ended(struct flaky_run *run, void *job_arg, void *arg)
{
	job_ended(arg, job_arg, run);
}

/* A run is in the database: the target's last run gets its id. */
static void
pl_stored(struct flaky_run *run, void *job_arg, void *arg)
{
	struct flakyd	*d = arg;

	(void)job_arg;
	for (size_t i = 0; i < d->ntargets; i++) {
		struct tstate *ts = d->targets[i];

		if (ts->id == run->rec.target_id && ts->last.run_id == -1 &&
		    ts->last.started_ms == run->rec.started_ms &&
		    run->rec.kind != FLAKY_KIND_ALONE)
			ts->last.run_id = run->rec.id;
	}
	if (d->store_told_ms != 0)
		log_info("the database takes writes again; %zu finished "
		    "run%s still waiting", flaky_pipeline_waiting(d->pl),
		    flaky_pipeline_waiting(d->pl) == 1 ? "" : "s");
	d->store_failing = 0;
	d->store_told_ms = 0;
	flakyd_maybe_exit(d);
}

/* A write failed; the pipeline keeps the runs and retries. Another
 * writer holding the lock (flakyctl analyze, ingest) is normal and waited
 * out without a word unless it lasts; anything else is said at once.
 * Either way once per streak, then every FLAKYD_STORE_NAG_MS. */
static void
pl_error(int code, const char *err, size_t waiting, void *arg)
{
	struct flakyd	*d = arg;
	int64_t		 now = flaky_mono_us() / 1000;

	d->runs_failed_store++;
	if (d->store_failing++ == 0)
		d->store_failing_since_ms = now;
	if (code == -EBUSY && now - d->store_failing_since_ms <
	    FLAKYD_BUSY_QUIET_MS)
		return;
	if (d->store_told_ms != 0 && now - d->store_told_ms <
	    FLAKYD_STORE_NAG_MS)
		return;
	d->store_told_ms = now;
	log_warnx("storing finished runs failed for %llds, keeping %zu for a "
	    "retry: %s", (long long)(now - d->store_failing_since_ms) / 1000,
	    waiting, err);
}

/* Start the trigger's next run, or end the trigger. */
static void
trigger_next_ev(evutil_socket_t fd, short what, void *arg)
{
	struct trigger	*tr = arg;
	struct flakyd	*d = flakyd;
	struct flaky_job job;
	struct job	*j;

	(void)fd;
	(void)what;
	if (tr->revproc != NULL) {
		flaky_proc_free(tr->revproc);
		tr->revproc = NULL;
	}
	if (tr->job != NULL)
		return;
	if (d->stopping || tr->started >= tr->runs) {
		if (d->stopping || confirm_start(d, tr) < 0)
			trigger_end(tr);
		return;
	}
	/* The database refuses writes: finished runs wait in memory, and no
	 * more are made until it takes them (nothing is dropped). */
	if (flaky_pipeline_waiting(d->pl) >= FLAKYD_WAITING_MAX) {
		struct timeval tv = { 1, 0 };

		evtimer_add(tr->next_ev, &tv);
		return;
	}
	j = xcalloc(1, sizeof *j);
	j->tr = tr;
	j->target = xstrdup(tr->ts->name);
	j->revision = tr->revision ? xstrdup(tr->revision) : NULL;
	j->index = ++tr->started;
	j->of = tr->runs;
	memset(&job, 0, sizeof job);
	job.spec.argv = tr->argv;
	job.spec.dir = tr->def->dir;
	job.spec.envp = tr->envp;
	job.spec.timeout_ms = tr->def->timeout_ms;
	job.spec.grace_ms = tr->cref->cfg->kill_grace_ms;
	job.spec.junit_path = tr->def->junit;
	job.spec.more = tr->runs - tr->started;	/* TMPDIRs made ahead */
	job.target_id = tr->ts->id;
	job.kind = FLAKY_KIND_SUITE;
	job.trigger = tr->kind;
	job.runner_version = tr->runner_version;
	job.revision = j->revision;
	job.arg = j;
	if (job_start(d, tr, j, &job) < 0)
		trigger_end(tr);
}

/* Free a target's state (its waiting trigger too). */
static void
tstate_free(struct tstate *ts)
{
	if (ts == NULL)
		return;
	trigger_free(ts->pending);
	free(ts->name);
	free(ts);
}

/* The trigger's runs are over: free the slot, start what waits. */
static void
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
	kick(d);
	flakyd_maybe_exit(d);
}

/* Fill a new target state from the store: its id, last run. */
static struct tstate *
tstate_new(struct flakyd *d, const struct flaky_target *t, char *err,
    size_t errlen)
{
	struct tstate	*ts = xcalloc(1, sizeof *ts);
	char		*cmd = command_text(t);
	int		 r;

	ts->name = xstrdup(t->name);
	ts->def = t;
	ts->due_ms = ts->fire_ms = FLAKY_NO_FIRE;
	r = flaky_store_target(d->store, t->name, cmd, t->dir, &ts->id, err,
	    errlen);
	free(cmd);
	if (r == 0)
		r = flaky_store_last_run(d->store, ts->id, &ts->last, err,
		    errlen);
	if (r < 0) {
		tstate_free(ts);
		return NULL;
	}
	return ts;
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
	d->sweep_ev = evtimer_new(d->base, sweep_cb, d);
	if (d->timer_ev == NULL || d->kick_ev == NULL ||
	    d->sweep_ev == NULL || event_add(d->timer_ev, NULL) == -1)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	{
		/* Each run written as it starts and as it ends, in its own
		 * short transaction: synchronous=FULL, a few a minute. */
		struct flaky_pipeline_opts po = {
			.base = d->base, .sp = d->sp, .store = d->store,
			.group_ms = 0, .busy_ms = FLAKYD_BUSY_MS,
			.retry_first_ms = FLAKYD_RETRY_FIRST_MS,
			.retry_last_ms = FLAKYD_RETRY_LAST_MS,
			.ended = pl_ended, .stored = pl_stored,
			.error = pl_error, .arg = d,
		};

		if (flaky_pipeline_new(&po, &d->pl) < 0)
			return flaky_error(err, errlen, ENOMEM,
			    "out of memory");
	}
	return 0;
}

/* Make cfg the running schedule: targets kept by name (their triggers and
 * history undisturbed), new ones created in the store, removed ones ended
 * after their running trigger. On error nothing changed and the caller
 * still owns cfg. */
int
sched_apply(struct flakyd *d, struct flaky_config *cfg, char *err,
    size_t errlen)
{
	struct tstate	**nv, *ts;
	struct cfgref	*old = d->cur;
	struct flaky_classifier *cls = NULL;
	int64_t		 now = flaky_now_ms();
	size_t		 i, j;
	int		 r;

	/* The config's signatures first: a bad one refuses the file before
	 * anything changed. */
	if ((r = flaky_classifier_from_config(cfg, &cls, err, errlen)) < 0)
		return r;
	nv = xcalloc(cfg->ntargets + 1, sizeof *nv);
	/* New targets in one transaction: a thousand rows, one sync. */
	if ((r = flaky_store_begin(d->store, err, errlen)) < 0) {
		free(nv);
		return r;
	}
	for (i = 0; i < cfg->ntargets; i++) {
		if ((nv[i] = sched_find(d, cfg->targets[i].name)) != NULL) {
			/* Kept: its command or directory may have changed. */
			char	*cmd = command_text(&cfg->targets[i]);
			int64_t	 id;

			r = flaky_store_target(d->store, nv[i]->name, cmd,
			    cfg->targets[i].dir, &id, err, errlen);
			free(cmd);
			if (r < 0)
				goto fail;
			continue;
		}
		nv[i] = tstate_new(d, &cfg->targets[i], err, errlen);
		if (nv[i] == NULL) {
			r = -EIO;
			goto fail;
		}
		nv[i]->def = NULL;	/* marks it new below */
	}
	if ((r = flaky_store_commit(d->store, err, errlen)) < 0)
		goto fail;

	d->cur = cfgref_new(cfg);
	/* Runs finishing from now on are classified with the new file. */
	flaky_pipeline_set_classifier(d->pl, cls);
	flaky_classifier_free(d->classifier);
	d->classifier = cls;
	cls = NULL;
	for (i = 0; i < cfg->ntargets; i++) {
		const struct flaky_target *t = &cfg->targets[i];
		char	 src[64];
		int	 same;

		ts = nv[i];
		flaky_sched_format(&t->sched, src, sizeof src);
		same = ts->def != NULL && ts->due_ms != FLAKY_NO_FIRE &&
		    t->has_schedule && strcmp(src, ts->sched_src) == 0 &&
		    t->jitter_ms == ts->jitter_ms;
		ts->def = t;
		if (!same)
			compute_next(d, ts, now);
	}
	/* Targets no longer in the file: their history stays in the store;
	 * a running trigger ends normally, anything queued is dropped. */
	for (i = 0; i < d->ntargets; i++) {
		ts = d->targets[i];
		for (j = 0; j < cfg->ntargets; j++)
			if (nv[j] == ts)
				break;
		if (j < cfg->ntargets)
			continue;
		trigger_free(ts->pending);
		ts->pending = NULL;
		ts->def = NULL;
		ts->removed = 1;
		if (ts->active != NULL && !ts->active->has_slot) {
			TAILQ_REMOVE(&d->waitq, ts->active, wait);
			d->nwaiting--;
			trigger_free(ts->active);
			ts->active = NULL;
		}
		if (ts->active == NULL)
			tstate_free(ts);
		else
			LIST_INSERT_HEAD(&d->gone, ts, gone);
	}
	free(d->targets);
	d->targets = nv;
	d->ntargets = cfg->ntargets;
	cfgref_unref(old);
	d->armed_ms = -1;	/* force a re-arm */
	sched_arm(d);
	kick(d);
	return 0;
fail:
	flaky_store_rollback(d->store);
	for (i = 0; i < cfg->ntargets; i++)
		if (nv[i] != NULL && sched_find(d, nv[i]->name) != nv[i])
			tstate_free(nv[i]);
	free(nv);
	flaky_classifier_free(cls);
	return r;
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

/* At exit: strays are ended and reaped, a few rounds for their children
 * (a short blocking wait is fine once the loop is over). */
void
sched_sweep_final(struct flakyd *d)
{
	for (int i = 0; i < 20 && flaky_kill_strays(stray_log, NULL) > 0;
	    i++) {
		usleep(50 * 1000);
		flaky_spawner_reap(d->sp);
	}
	flaky_spawner_reap(d->sp);
}

/* Everything still held, at exit (after the loop). Live runs are killed
 * by flaky_run_free and their rows stay "running" for the next start. */
void
sched_free(struct flakyd *d)
{
	struct tstate	*ts;
	char		 err[512];

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
	/* What still waits for the database gets a last chance; runs still
	 * live are killed with the pipeline and end up interrupted. */
	if (flaky_pipeline_flush(d->pl, FLAKYD_FINAL_FLUSH_MS, err,
	    sizeof err) < 0)
		log_warnx("%zu finished run%s could not be stored and %s "
		    "lost: %s", flaky_pipeline_waiting(d->pl),
		    flaky_pipeline_waiting(d->pl) == 1 ? "" : "s",
		    flaky_pipeline_waiting(d->pl) == 1 ? "is" : "are", err);
	flaky_pipeline_free(d->pl);
	d->pl = NULL;
	if (d->timer_ev != NULL)
		event_free(d->timer_ev);
	if (d->kick_ev != NULL)
		event_free(d->kick_ev);
	if (d->sweep_ev != NULL)
		event_free(d->sweep_ev);
	if (d->timerfd != -1)
		close(d->timerfd);
	cfgref_unref(d->cur);
	d->cur = NULL;
}
