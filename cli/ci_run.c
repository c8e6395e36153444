/* flakyctl ci's runs: through the run lifecycle analyze uses
 * (lib/pipeline), one at a time, each copied when it ends; and what makes
 * a run's evidence incomplete, so that the step exits 2 rather than give
 * a wrong green. */
#include "buildconf.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <event2/event.h>

#include "ci.h"
#include "classify/classify.h"
#include "flakyctl.h"
#include "log.h"

/* As analyze: a write waits this long for another writer per attempt,
 * and the last flush keeps trying this long. */
#define BUSY_MS		100
#define FINAL_FLUSH_MS	(5 * 60 * 1000)

static struct event	*sig_ev[2];

/* A copy of what the parsers gave, which the run's own copy outlives
 * not: the runner, its count and each result. */
static void
results_copy(struct flaky_results *dst, const struct flaky_results *src)
{
	flaky_results_init(dst);
	memcpy(dst->runner, src->runner, sizeof dst->runner);
	dst->summary_total = src->summary_total;
	dst->v = xcalloc(src->n + 1, sizeof *dst->v);
	dst->cap = src->n + 1;
	for (size_t i = 0; i < src->n; i++) {
		const struct flaky_result *s = &src->v[i];
		struct flaky_result *d = &dst->v[i];

		d->test = xstrdup(s->test);
		d->outcome = s->outcome;
		d->duration_us = s->duration_us;
		d->position = s->position;
		d->message = s->message ? xstrdup(s->message) : NULL;
		d->signature = s->signature ? xstrdup(s->signature) : NULL;
	}
	dst->n = src->n;
}

/* A run ended: parsed and classified, on its way to the store. */
static void
run_ended(struct flaky_run *run, void *job_arg, void *arg)
{
	struct ci	*c = arg;
	struct ci_run	*r = job_arg;

	r->status = run->rec.status;
	r->exit_code = run->rec.exit_code;
	r->signal = run->rec.signal;
	r->started_ms = run->rec.started_ms;
	r->incomplete = run->rec.incomplete ? xstrdup(run->rec.incomplete) :
	    NULL;
	if (run->rec.error != NULL && r->status == FLAKY_RUN_ERROR)
		r->error = xstrdup(run->rec.error);
	results_copy(&r->res, &run->results);
	r->ended = 1;
	c->live = NULL;
	event_base_loopbreak(c->base);
}

/* A run is in the database. */
static void
run_stored(struct flaky_run *run, void *job_arg, void *arg)
{
	struct ci_run	*r = job_arg;

	(void)arg;
	r->id = run->rec.id;
}

/* A write was refused and will be retried: another writer's lock is
 * waited out without a word, anything else told once. */
static void
store_error(int code, const char *err, size_t waiting, void *arg)
{
	struct ci	*c = arg;

	(void)waiting;
	if (code == -EBUSY)
		return;
	if (!c->store_failed)
		log_warnx("%s (the finished runs are kept and retried)", err);
	c->store_failed = 1;
}

/* SIGINT, SIGTERM: the run in flight ends as interrupted, no other
 * starts. */
static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct ci	*c = arg;

	(void)what;
	log_warnx("%s: stopping; the run in flight is ended and recorded as "
	    "interrupted", strsignal((int)sig));
	c->signal = (int)sig;
	if (c->live != NULL)
		flaky_run_stop(c->live);
}

int
ci_runs_open(struct ci *c)
{
	struct flaky_pipeline_opts po;

	c->base = ctl_event_base();
	signal(SIGPIPE, SIG_IGN);
	/* a subreaper, as analyze: nothing of a run outlives the call */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1)
		log_warn("prctl(PR_SET_CHILD_SUBREAPER)");
	if (flaky_spawner_new(c->base, &c->sp) < 0)
		fatalx("cannot watch child processes");
	memset(&po, 0, sizeof po);
	po.base = c->base;
	po.sp = c->sp;
	po.store = c->store;
	po.classifier = c->cls;
	po.busy_ms = BUSY_MS;
	po.ended = run_ended;
	po.stored = run_stored;
	po.error = store_error;
	po.arg = c;
	if (flaky_pipeline_new(&po, &c->pl) < 0)
		fatalx("out of memory");
	sig_ev[0] = evsignal_new(c->base, SIGINT, signal_cb, c);
	sig_ev[1] = evsignal_new(c->base, SIGTERM, signal_cb, c);
	evsignal_add(sig_ev[0], NULL);
	evsignal_add(sig_ev[1], NULL);
	c->runs = xcalloc((size_t)c->maxruns, sizeof *c->runs);
	return 0;
}

/* Kill what escaped the runs, as analyze does before it exits. */
static void
end_strays(struct ci *c)
{
	int64_t	 end_us = flaky_mono_us() + 1000 * 1000;

	while (flaky_kill_strays(NULL, NULL) > 0 && flaky_mono_us() < end_us) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		flaky_spawner_reap(c->sp);
		nanosleep(&ts, NULL);
	}
	flaky_spawner_reap(c->sp);
}

void
ci_runs_close(struct ci *c)
{
	for (int i = 0; i < 2; i++)
		if (sig_ev[i] != NULL) {
			event_free(sig_ev[i]);
			sig_ev[i] = NULL;
		}
	if (c->sp != NULL) {
		end_strays(c);
		if (flaky_spawner_running(c->sp) > 0 && c->pl != NULL)
			flaky_pipeline_stop_all(c->pl);
		if (flaky_spawner_free(c->sp) < 0)
			log_warnx("runs still in flight at exit");
	}
	flaky_pipeline_free(c->pl);
	if (c->base != NULL)
		event_base_free(c->base);
	for (int i = 0; i < c->nruns; i++) {
		free(c->runs[i].incomplete);
		free(c->runs[i].error);
		flaky_results_free(&c->runs[i].res);
	}
	free(c->runs);
	c->sp = NULL;
	c->pl = NULL;
	c->base = NULL;
	c->runs = NULL;
}

int
ci_run_one(struct ci *c, char *const *argv, char *const *envp, int selected,
    int round)
{
	struct ci_run	*r = &c->runs[c->nruns++];
	struct flaky_run *run;
	char		 err[1024];
	int64_t		 t0 = flaky_mono_us();

	r->round = round;
	r->selected = selected;
	c->job.spec.argv = argv;
	c->job.spec.envp = envp;
	c->job.selected = selected;
	c->job.arg = r;
	flaky_results_init(&r->res);
	if (flaky_pipeline_start(c->pl, &c->job, &run, err, sizeof err) < 0) {
		/* recorded as an error run; its stored callback comes */
		r->status = FLAKY_RUN_ERROR;
		r->error = xstrdup(err);
		r->exit_code = -1;
		r->started_ms = flaky_now_ms();
		r->ended = 1;
		return -1;
	}
	c->live = run;
	while (!r->ended)
		if (event_base_dispatch(c->base) < 0)
			fatalx("the event loop failed");
	r->wall_us = flaky_mono_us() - t0;
	return 0;
}

int
ci_runs_flush(struct ci *c)
{
	char	 err[1024];

	if (flaky_pipeline_flush(c->pl, FINAL_FLUSH_MS, err, sizeof err) < 0) {
		size_t	 n = flaky_pipeline_waiting(c->pl);

		fprintf(stderr, "flakyctl ci: %zu finished run%s could not be "
		    "stored: %s\n", n, n == 1 ? "" : "s", err);
		return -1;
	}
	return 0;
}

/* A failure that is a file, a module or a package rather than a test:
 * it did not load, so its tests did not run (pytest's "ERROR collecting",
 * Jest's "Test suite failed to run", unittest's _FailedTest, a go package
 * that did not build). Its id, or NULL. */
static const char *
collection_error(const struct flaky_results *res)
{
	const char *runner = res->runner;

	for (size_t i = 0; i < res->n; i++) {
		const char *id = res->v[i].test;

		if (!FLAKY_FAILED(res->v[i].outcome))
			continue;
		if ((strcmp(runner, "pytest") == 0 && strstr(id, "::") == NULL) ||
		    (strcmp(runner, "jest") == 0 &&
		    strstr(id, " \xe2\x80\xba ") == NULL) ||
		    (strcmp(runner, "unittest") == 0 &&
		    strncmp(id, "unittest.loader.", 16) == 0) ||
		    (strcmp(runner, "gotest") == 0 && strstr(id, "/Test") ==
		    NULL && strstr(id, "/Example") == NULL &&
		    strstr(id, "/Fuzz") == NULL))
			return id;
	}
	return NULL;
}

char *
ci_run_problem(const struct ci *c, const struct ci_run *r)
{
	const char *coll = collection_error(&r->res);
	size_t	 failed = 0;
	char	*s = NULL;

	(void)c;
	for (size_t i = 0; i < r->res.n; i++)
		failed += FLAKY_FAILED(r->res.v[i].outcome);
	if (r->error != NULL)
		xasprintf(&s, "the command did not run: %s", r->error);
	else if (r->status == FLAKY_RUN_TIMEOUT)
		xasprintf(&s, "the run was killed at its time limit "
		    "(--timeout)");
	else if (r->status == FLAKY_RUN_INTERRUPTED ||
	    r->status == FLAKY_RUN_STOPPED)
		xasprintf(&s, "the run was interrupted");
	else if (r->signal > 0)
		xasprintf(&s, "the runner was killed by signal %d (%s): a "
		    "crash", r->signal, strsignal(r->signal));
	else if (r->incomplete != NULL)
		xasprintf(&s, "the results are incomplete: %s", r->incomplete);
	else if (coll != NULL)
		xasprintf(&s, "a collection error: %s did not load, its tests "
		    "did not run", coll);
	else if (r->res.n == 0)
		xasprintf(&s, "the runner reported no test (exit code %d)",
		    r->exit_code);
	else if (r->exit_code != 0 && failed == 0)
		xasprintf(&s, "the runner exited %d but reported no failing "
		    "test: a collection error, or a failure outside the tests",
		    r->exit_code);
	else if (r->exit_code == 0 && failed > 0)
		xasprintf(&s, "the runner exited 0 but reported %zu failing "
		    "test%s: its summary disagrees", failed,
		    failed == 1 ? "" : "s");
	return s;
}
