/* A trigger's runs, once it has a job slot: its revision (the target's
 * revision: command, or git), a scan and the retention pass, the runs one
 * after another through the pipeline that stores them, then the tests
 * rerun alone while confirm: true has unsettled ones and budget left.
 * Also the sweep for processes a run leaves behind. */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "flakyd.h"
#include "log.h"
#include "run/run.h"
#include "stats/stats.h"
#include "store/store.h"

static void	trigger_next_ev(evutil_socket_t, short, void *);
static void	job_ended(struct flakyd *, struct job *, struct flaky_run *);
static void	settle_count(struct trigger *, struct flaky_run *);

/* A trigger of a target, not yet waiting for a slot. */
struct trigger *
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
void
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
	flaky_settle_free(tr->settle);
	free(tr->settle);
	flaky_command_free_vec(tr->sel_argv);
	flaky_command_free_vec(tr->sel_envp);
	flaky_command_free_vec(tr->open_argv);
	flaky_command_free_vec(tr->open_envp);
	cfgref_unref(tr->cref);
	free(tr);
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
		log_debug("target %s: scanned %zu file%s, %zu finding%s",
		    tr->ts->name, sum.files, flaky_plural((long long)sum.files),
		    sum.findings, flaky_plural((long long)sum.findings));
}

/* risky: true: every other trigger of a target (its 2nd, 4th, ...) runs
 * only the tests with static scan findings, scanned now; the others run
 * the whole suite. No finding, or a runner that cannot select, makes it a
 * whole run, logged. */
static void
trigger_risky(struct flakyd *d, struct trigger *tr,
    const struct flaky_command *cmd)
{
	char	**tests = NULL, err[512];
	size_t	  n = 0;

	if (!tr->def->risky || tr->ts->fires++ % 2 == 0)
		return;
	if (!tr->def->scan)
		trigger_scan(d, tr);
	if (flaky_risky_tests(d->store, tr->ts->name, cmd->runner, &tests,
	    &n, err, sizeof err) < 0)
		log_warnx("target %s: risky: %s", tr->ts->name, err);
	else if (n == 0)
		log_info("target %s: risky: no test has scan findings, the "
		    "whole suite runs", tr->ts->name);
	else if (flaky_command_select(cmd, tr->def->dir, tests, n,
	    &tr->sel_argv, &tr->sel_envp, err, sizeof err) < 0)
		log_warnx("target %s: risky: %s: the whole suite runs",
		    tr->ts->name, err);
	else {
		log_info("target %s: risky: only the %zu test%s with scan "
		    "findings run", tr->ts->name, n, n == 1 ? "" : "s");
		tr->argv = tr->sel_argv;
		tr->envp = tr->sel_envp;
		tr->selected = (int)n;
	}
	flaky_risky_tests_free(tests, n);
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
		log_info("retention: raw results of %lld run%s older than %lld "
		    "day%s removed (daily rollups kept)", (long long)ps.runs,
		    flaky_plural(ps.runs), (long long)(keep / 86400000),
		    flaky_plural(keep / 86400000));
}

/* The trigger got its slot: find the revision, then start the runs. */
void
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
	tr->cmd = &d->cur->cmds[i];
	tr->runner_version = d->cur->versions[i];
	if (tr->def->scan)
		trigger_scan(d, tr);
	trigger_risky(d, tr, tr->cmd);
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

/* Free a run's job (its run belongs to the pipeline). */
void
job_free(struct job *j)
{
	if (j == NULL)
		return;
	flaky_stress_stop(j->stress);
	flaky_command_free_vec(j->argv);
	flaky_command_free_vec(j->envp);
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

/* A shuffled run (the runner's own shuffling, the config refused if the
 * runner cannot shuffle) or a seed sweep's run (issue 34: the Python
 * tests seeded through the seed hook, the margins of approximate
 * assertions read after it; docs/runners.md, "Seed sweeps"): a fresh
 * seed, recorded with the run. */
static void
job_seeded(struct trigger *tr, struct job *j, struct flaky_job *job,
    int sweep)
{
	char	 err[256];
	int	 r;

	flaky_shuffle_seed(j->seed, sizeof j->seed);
	r = sweep ? flaky_command_seed(tr->cmd, j->seed, tr->def->dir, 1,
	    &j->argv, &j->envp, err, sizeof err) :
	    flaky_command_shuffle(tr->cmd, j->seed, &j->argv, &j->envp, err,
	    sizeof err);
	if (r < 0) {
		log_warnx("target %s: %s (the run is calm)", tr->ts->name,
		    err);
		j->seed[0] = '\0';
		return;
	}
	job->spec.argv = j->argv;
	job->spec.envp = j->envp;
	job->spec.headroom = sweep;
	job->seed = j->seed;
	job->perturbation = sweep ? FLAKY_PERTURB_SEED : FLAKY_PERTURB_SHUFFLE;
}

/* The run's perturbation, recorded with it: the target's stress: beside
 * every run, or the next step of its perturb: cycle, counted over the
 * target's suite runs across triggers (docs/stress.md). Stress stops when
 * the job is freed (its run ended). */
static void
job_perturb(struct trigger *tr, struct job *j, struct flaky_job *job,
    struct flaky_stress_spec *spec)
{
	const struct flaky_target *t = tr->def;
	const char *step = t->stress;
	char	 err[256];

	if (t->nperturb > 0)
		step = t->perturb[tr->ts->perturbed++ % t->nperturb];
	if (step == NULL || strcmp(step, "calm") == 0)
		return;
	if (strcmp(step, "shuffle") == 0 || strcmp(step, "seed") == 0) {
		job_seeded(tr, j, job, step[1] == 'e');
		return;
	}
	if (flaky_stress_parse(step, spec, err, sizeof err) < 0 ||
	    flaky_stress_start(spec, t->dir, &j->stress, err,
	    sizeof err) < 0) {
		log_warnx("target %s: stress: %s (the run is calm)",
		    tr->ts->name, err);
		return;
	}
	job->perturbation = spec->name;
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
		log_info("target %s: confirm budget spent after %d run%s alone",
		    tr->ts->name, tr->confirm_runs,
		    flaky_plural(tr->confirm_runs));
		return -1;
	}
	if ((t = flaky_confirm_next(tr->confirm, tr->envp, &argv, &envp)) ==
	    NULL) {
		log_info("target %s: confirmed, %d run%s alone", tr->ts->name,
		    tr->confirm_runs, flaky_plural(tr->confirm_runs));
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
	job.spec.no_stacks = !tr->def->stacks;
	job.spec.stacks_ms = tr->def->stacks_bound_ms;
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
		log_info("target %s run %d/%d: %s, %zu test%s, %lld failure%s, "
		    "%.2fs%s%s%s%s%s%s%s%s", j->target, j->index, j->of,
		    flaky_run_status_name(run->rec.status), run->results.n,
		    flaky_plural((long long)run->results.n),
		    (long long)failures, flaky_plural(failures),
		    (double)run->rec.duration_us / 1e6,
		    run->rec.perturbation ? ", " : "",
		    run->rec.perturbation ? run->rec.perturbation : "",
		    j->seed[0] ? " seed " : "", j->seed,
		    run->rec.error ? ": " : "",
		    run->rec.error ? run->rec.error : "",
		    run->rec.incomplete && run->rec.status == FLAKY_RUN_DONE ?
		    "; incomplete: " : "",
		    run->rec.incomplete && run->rec.status == FLAKY_RUN_DONE ?
		    run->rec.incomplete : "");
	if (run != NULL && j->ctest == NULL)
		settle_count(tr, run);
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

/* until_settled: true: after the first whole runs, the next run runs only
 * the tests still open where the runner selects them, as analyze
 * --until-settled does (docs/statistics.md); else the whole suite, said
 * once. */
static void
settle_select(struct trigger *tr, struct flaky_job *job)
{
	struct flaky_settle *st = tr->settle;
	const char	**open;
	char		  err[256];
	size_t		  n;

	flaky_command_free_vec(tr->open_argv);
	flaky_command_free_vec(tr->open_envp);
	tr->open_argv = tr->open_envp = NULL;
	if (st == NULL || st->runs < FLAKY_SETTLE_MIN_RUNS || st->open == 0)
		return;
	open = xcalloc(st->open, sizeof *open);
	n = flaky_settle_open_tests(st, open, st->open);
	if (flaky_command_select(tr->cmd, tr->def->dir, (char *const *)open,
	    n, &tr->open_argv, &tr->open_envp, err, sizeof err) == 0) {
		job->spec.argv = tr->open_argv;
		job->spec.envp = tr->open_envp;
		job->selected = (int)n;
	} else if (!tr->open_told) {
		log_info("target %s: until_settled: %s: the whole suite "
		    "reruns", tr->ts->name, err);
		tr->open_told = 1;
	}
	free(open);
}

/* until_settled: true: count a complete suite run; once every failing
 * test's tier is settled, the trigger starts no more (confirm may follow). */
static void
settle_count(struct trigger *tr, struct flaky_run *run)
{
	if (!tr->def->until_settled || run->rec.incomplete != NULL)
		return;
	if (tr->settle == NULL) {
		tr->settle = xcalloc(1, sizeof *tr->settle);
		flaky_settle_init(tr->settle, FLAKY_CS_ALPHA);
	}
	if (flaky_settle_count(tr->settle, &run->results) < 0)
		fatalx("out of memory");
	if (tr->started < tr->runs &&
	    flaky_settle_done(tr->settle, FLAKY_SETTLE_MIN_RUNS)) {
		log_info("target %s: settled after %d of at most %d run%s",
		    tr->ts->name, tr->settle->runs, tr->runs,
		    flaky_plural(tr->runs));
		tr->runs = tr->started;
	}
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
	alerts_kick(d);
	ship_wake();
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
	struct flaky_stress_spec spec;
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
	job.spec.no_stacks = !tr->def->stacks;
	job.spec.stacks_ms = tr->def->stacks_bound_ms;
	job.spec.junit_path = tr->def->junit;
	job.spec.more = tr->runs - tr->started;	/* TMPDIRs made ahead */
	job.target_id = tr->ts->id;
	job.kind = FLAKY_KIND_SUITE;
	job.trigger = tr->kind;
	job.runner_version = tr->runner_version;
	job.revision = j->revision;
	job.selected = tr->selected;
	settle_select(tr, &job);
	job.arg = j;
	job_perturb(tr, j, &job, &spec);
	if (job_start(d, tr, j, &job) < 0)
		trigger_end(tr);
}

/* The pipeline that takes runs to the database, and the sweep for the
 * strays they leave. */
int
runs_init(struct flakyd *d, char *err, size_t errlen)
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
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	if ((d->sweep_ev = evtimer_new(d->base, sweep_cb, d)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	return 0;
}

/* At exit: what still waits for the database, then the pipeline. */
void
runs_free(struct flakyd *d)
{
	char	 err[512];

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
	if (d->sweep_ev != NULL)
		event_free(d->sweep_ev);
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
