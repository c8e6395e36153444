/* flakyctl confirm [TEST]: rerun unsettled tests alone, through the
 * target's isolate: template, until each one's interval settles or the
 * budget ends. A test that passes alone but fails in the suite is order
 * dependent; one that fails alone too is not. The runs are stored under
 * the target as runs alone (kind alone, trigger "confirm"): they give
 * their own verdict and never count in the suite's rates. */
#include "buildconf.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <event2/event.h>

#include "pipeline/pipeline.h"
#include "diag.h"
#include "log.h"
#include "progress.h"
#include "table.h"
#include "run/run.h"
#include "classify/classify.h"
#include "stats/stats.h"

struct confirm {
	struct event_base	*base;
	struct flaky_spawner	*sp;
	struct flaky_store	*store;
	struct flaky_pipeline	*pl;
	struct flaky_classifier	*cls;
	struct flaky_confirm	 cf;
	int64_t			 deadline_us;
	int64_t			 timeout_ms;	/* each run's; 0: none */
	int			 no_stacks;	/* kill at once at it */
	int			 stopping, failed, store_told;
	int			 signal;	/* SIGINT or SIGTERM came */
	struct flaky_run	*live;
	struct flaky_confirm_test *live_test;
	int			 runs;		/* runs alone ended */
	struct progress		 prog;		/* on stderr, a terminal */
};

/* The words of the progress line: "2 of 5 tests settled · 14 runs alone ·
 * 1:20 elapsed · budget 8:40 left · now tests/t.py::test_x". */
static void
confirm_words(struct flaky_buf *b, void *arg)
{
	struct confirm	*c = arg;
	size_t		 settled = 0;
	int64_t		 left = c->deadline_us - flaky_mono_us();

	for (size_t i = 0; i < c->cf.nt; i++)
		settled += c->cf.t[i].settled != 0;
	flaky_buf_printf(b, "%zu of %zu test%s settled \u00b7 %d run%s alone",
	    settled, c->cf.nt, plural((long long)c->cf.nt), c->runs,
	    plural(c->runs));
	flaky_buf_adds(b, " \u00b7 ");
	progress_times(&c->prog, b);
	flaky_buf_adds(b, " \u00b7 budget ");
	progress_clock(b, left > 0 ? left : 0);
	flaky_buf_adds(b, " left");
	if (c->live_test != NULL) {
		flaky_buf_adds(b, " \u00b7 now ");
		table_cell(b, c->live_test->name, table_width(
		    c->live_test->name) > 40 ? 40 : table_width(
		    c->live_test->name), 0);
	}
}

static void	confirm_next(struct confirm *);

/* A run alone ended: count it for its test, start the next. */
static void
confirm_ended(struct flaky_run *run, void *job_arg, void *arg)
{
	struct confirm	*c = arg;
	struct flaky_confirm_test *t = job_arg;

	c->live = NULL;
	c->live_test = NULL;
	c->runs++;
	if (run->rec.status == FLAKY_RUN_STOPPED ||
	    run->rec.status == FLAKY_RUN_INTERRUPTED)
		;	/* the budget or a signal ended it: it tells nothing */
	else if (flaky_confirm_count(&c->cf, t, &run->results) == -ENOENT)
		/* The template did not run the test: more runs will not. */
		log_warnx("%s: the isolate: command did not report this test "
		    "(exit %d%s%s); check the template", t->name,
		    run->rec.exit_code, run->rec.error ? ": " : "",
		    run->rec.error ? run->rec.error : "");
	confirm_next(c);
	progress_draw(&c->prog);
}

/* A write was refused and will be retried; another writer's lock is
 * waited out without a word. */
static void
confirm_store_error(int code, const char *err, size_t waiting, void *arg)
{
	struct confirm	*c = arg;

	(void)waiting;
	if (code == -EBUSY)
		return;
	if (!c->store_told)
		log_warnx("%s (the finished runs are kept and retried)", err);
	c->store_told = 1;
	c->failed = c->stopping = 1;
}

/* Start the next unsettled test's run (round robin), or stop. */
static void
confirm_next(struct confirm *c)
{
	struct flaky_job job;
	struct flaky_confirm_test *t;
	char *const	*argv, *const *envp;
	char		 err[1024];

	for (;;) {
		if (c->stopping || flaky_mono_us() >= c->deadline_us ||
		    (t = flaky_confirm_next(&c->cf, NULL, &argv, &envp)) ==
		    NULL) {
			event_base_loopbreak(c->base);
			return;
		}
		memset(&job, 0, sizeof job);
		job.spec.argv = argv;
		job.spec.envp = envp;
		job.spec.dir = t->dir;
		job.target_id = t->target_id;
		job.kind = FLAKY_KIND_ALONE;
		job.trigger = FLAKY_TRIGGER_CONFIRM;
		job.revision = t->revision;
		/* The budget ends a run as stopped, not as a timeout;
		 * --timeout ends it as one, its stacks taken first. */
		job.budget_end_us = c->deadline_us;
		job.spec.timeout_ms = c->timeout_ms;
		job.spec.no_stacks = c->no_stacks;
		job.arg = t;
		if (flaky_pipeline_start(c->pl, &job, &c->live, err,
		    sizeof err) == 0) {
			c->live_test = t;
			return;
		}
		log_warnx("%s: %s", t->name, err);
		t->start_error = t->settled = 1;
	}
}

/* SIGINT or SIGTERM: end the run in flight, then stop. */
static void
confirm_signal(evutil_socket_t sig, short what, void *arg)
{
	struct confirm	*c = arg;

	(void)what;
	c->signal = (int)sig;
	c->stopping = 1;
	if (c->live != NULL)
		flaky_run_stop(c->live);
	else
		event_base_loopbreak(c->base);
}

/* The isolate: template of a target from the config, for the choice. */
static char *
confirm_isolate(const char *target, void *arg)
{
	return diag_isolate(arg, target);
}

/* Log an escapee before it is killed. */
static void
confirm_stray(long pid, void *arg)
{
	(void)arg;
	log_info("killing process %ld, left behind by a run", pid);
}

/* Add a test to confirm when its target has an isolate: template. */
static int
add_test(struct ctl *ctl, struct confirm *c, struct flaky_store *ro,
    int64_t id, const struct flaky_query *q, int named)
{
	struct flaky_diagnosis *d;
	char	 err[1024], *iso;
	int	 r;

	if (flaky_diagnose_test(ro, id, q, &d, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		return -1;
	}
	if ((iso = diag_isolate(ctl, d->target)) == NULL) {
		if (named)
			fprintf(stderr, "flakyctl confirm: target %s has no "
			    "isolate: template in the config (for example "
			    "isolate: \"pytest -v {test}\")\n", d->target);
		flaky_diagnosis_free(d);
		return named ? -1 : 0;
	}
	r = flaky_confirm_add(&c->cf, d, iso, NULL);
	free(iso);
	flaky_diagnosis_free(d);
	if (r == -ENOMEM)
		fatalx("out of memory");
	return 0;
}

/* What the runs alone showed for one test. */
static void
print_result(struct ctl *ctl, struct flaky_store *s,
    const struct flaky_confirm_test *t,
    const struct flaky_query *q, int first)
{
	struct flaky_diagnosis *d;
	char	 err[1024];
	const char *what;

	if (flaky_diagnose_test(s, t->id, q, &d, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		return;
	}
	if (t->alone == 0)
		what = t->start_error ? "not run: see the warning above" :
		    "already settled: not rerun";
	else if (d->passes_alone)
		what = "passes alone, fails in the suite: ORDER_DEPENDENT";
	else if (d->fails_alone)
		what = "fails alone, passes in the suite: relies on a test that "
		    "runs before it, ORDER_DEPENDENT";
	else if (d->alone_failures == d->alone_runs)
		what = "fails alone so far: too few runs to tell";
	else if (d->alone_failures > 0)
		what = "fails alone too: not order dependent";
	else
		what = "passes alone so far: too few runs to tell";
	if (ctl->format == FORMAT_JSON) {
		printf("%s\n  {\"test\": ", first ? "" : ",");
		json_string(stdout, t->name);
		printf(", \"target\": ");
		json_string(stdout, t->target);
		printf(", \"alone_runs\": %lld, \"alone_failures\": %lld, "
		    "\"suite_runs\": %lld, \"suite_failures\": %lld, "
		    "\"passes_alone\": %s, \"fails_alone\": %s, "
		    "\"runs_now\": %d, \"conclusion\": ",
		    (long long)d->alone_runs, (long long)d->alone_failures,
		    (long long)d->suite_runs, (long long)d->suite_failures,
		    d->passes_alone ? "true" : "false",
		    d->fails_alone ? "true" : "false", t->alone);
		json_string(stdout, what);
		printf(", \"tier\": \"%s\", \"signature\": ",
		    flaky_tier_name(flaky_tier(d->failures, d->runs)));
		json_string(stdout, d->signature);
		printf("}");
	} else
		printf("%-15s %s: alone %lld/%lld, in the suite %lld/%lld "
		    "(%d run%s now): %s\n", d->signature ? d->signature : "-",
		    t->name, (long long)d->alone_failures,
		    (long long)d->alone_runs, (long long)d->suite_failures,
		    (long long)d->suite_runs, t->alone, t->alone == 1 ? "" :
		    "s", what);
	flaky_diagnosis_free(d);
}

static int	cmd_confirm(struct ctl *, int, char **);

static const struct cmd_option confirm_options[] = {
	DIAG_OPTIONS,
	{ "budget", 'b', 0, "D", "stop after this long (default 10m)" },
	{ "max-runs", 'n', 0, "N", "at most N runs alone of each test "
	    "(default 100)" },
	{ "timeout", 0, 'O', "D", "end a run alone after D, its stacks "
	    "taken first (default none: the budget ends it)" },
	{ "no-stacks", 0, 'N', NULL, "at the timeout kill at once, without "
	    "taking the stacks first" },
	CMD_OPTION_BOX,
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_confirm_entry = {
	.name = "confirm",
	.usage = "confirm [TEST] [--since D|all] [--until DATE] [--target NAME] "
	    "[--budget D] [--max-runs N] [--timeout D] [--no-stacks] "
	    "[--box NAME]",
	.summary = "Rerun unsettled tests alone until each one's tier "
	    "settles.",
	.example = "flakyctl confirm --budget 30m\nflakyctl confirm "
	    "test_login_retry --max-runs 200",
	.options = confirm_options,
	.flags = CMD_WRITES,
	.exec = cmd_confirm,
};

/* flakyctl confirm [TEST]. */
static int
cmd_confirm(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct diag_opts o = { 0 };
	struct confirm	 c;
	struct event	*sigint_ev = NULL, *sigterm_ev = NULL;
	int64_t		 budget_ms = 10 * 60 * 1000, id;
	long long	 v;
	char		 err[1024];
	int		 ch, ret = EXIT_ERROR;

	memset(&c, 0, sizeof c);
	flaky_confirm_init(&c.cf, FLAKY_CONFIRM_MAX_RUNS);
	cmd_getopt_init(&g, &cmd_confirm_entry, ctl, argc, argv);
	while ((ch = cmd_getopt(&g)) > 0) {
		if (diag_option(&o, ch, optarg))
			continue;
		if (ch == 'b' || ch == 'O') {
			if (flaky_parse_duration(optarg, ch == 'b' ?
			    &budget_ms : &c.timeout_ms) < 0 || (ch == 'b' ?
			    budget_ms : c.timeout_ms) <= 0) {
				ctl_usage_error("confirm", "--%s: expected "
				    "a duration such as 10m, got '%s'", ch ==
				    'b' ? "budget" : "timeout", optarg);
				return EXIT_ERROR;
			}
		} else if (ch == 'N')
			c.no_stacks = 1;
		else if (ch == 'n') {
			if (flaky_parse_int(optarg, 1, 100000, &v) < 0) {
				ctl_usage_error("confirm", "--max-runs: "
				    "expected a number from 1 to 100000, got "
				    "'%s'", optarg);
				return EXIT_ERROR;
			}
			c.cf.max_runs = (int)v;
		}
	}
	if (ch < 0)
		return g.exit;
	if (optind + 1 < argc) {
		ctl_usage_error("confirm", "one test at a time");
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "confirm", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON) < 0 || diag_window(&o, "confirm") < 0)
		return EXIT_ERROR;
	if (diag_load_signatures(ctl, NULL, &c.cls) < 0)
		return EXIT_ERROR;
	if (flaky_store_open(ctl_db_path(ctl), 0, &c.store, err,
	    sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		return EXIT_ERROR;
	}
	ctl_store_box(ctl, c.store, 1);
	if (optind < argc) {
		if (diag_resolve(c.store, "confirm", o.target, argv[optind],
		    &id) < 0 || add_test(ctl, &c, c.store, id, &o.q, 1) < 0)
			goto out;
	} else {
		size_t	 open;

		if (ctl_check_target(c.store, "confirm", o.target) < 0)
			goto out;
		if (flaky_confirm_choose(&c.cf, c.store, &o.q, confirm_isolate,
		    ctl, NULL, &open, err, sizeof err) < 0) {
			fprintf(stderr, "flakyctl: %s\n", err);
			goto out;
		}
	}
	if (c.cf.nt == 0) {
		fprintf(stderr, "flakyctl confirm: no unstable test with an "
		    "isolate: template to rerun\n");
		ret = EXIT_OK;
		goto out;
	}
	c.base = ctl_event_base();
	signal(SIGPIPE, SIG_IGN);
	/* A subreaper: nothing a run leaves behind outlives confirm. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1)
		log_warn("prctl(PR_SET_CHILD_SUBREAPER)");
	if (flaky_spawner_new(c.base, &c.sp) < 0)
		fatalx("cannot watch child processes");
	{
		struct flaky_pipeline_opts po = {
			.base = c.base, .sp = c.sp, .store = c.store,
			.classifier = c.cls, .busy_ms = 100,
			.ended = confirm_ended, .error = confirm_store_error,
			.arg = &c,
		};

		if (flaky_pipeline_new(&po, &c.pl) < 0)
			fatalx("out of memory");
	}
	sigint_ev = evsignal_new(c.base, SIGINT, confirm_signal, &c);
	sigterm_ev = evsignal_new(c.base, SIGTERM, confirm_signal, &c);
	evsignal_add(sigint_ev, NULL);
	evsignal_add(sigterm_ev, NULL);
	c.deadline_us = flaky_mono_us() + budget_ms * 1000;
	progress_start(&c.prog, c.base, confirm_words, &c);
	confirm_next(&c);
	progress_draw(&c.prog);
	if (c.live != NULL)
		event_base_dispatch(c.base);
	progress_end(&c.prog);
	while (flaky_kill_strays(confirm_stray, NULL) > 0) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		flaky_spawner_reap(c.sp);
		nanosleep(&ts, NULL);
	}
	flaky_spawner_reap(c.sp);
	if (flaky_pipeline_flush(c.pl, 5 * 60 * 1000, err, sizeof err) < 0) {
		log_warnx("%zu finished run%s could not be stored: %s",
		    flaky_pipeline_waiting(c.pl),
		    flaky_pipeline_waiting(c.pl) == 1 ? "" : "s", err);
		c.failed = 1;
	}
	/* the window now includes the runs of this call */
	o.q.until_ms = INT64_MAX;
	if (ctl->format == FORMAT_JSON)
		printf("{\"tests\": [");
	for (size_t i = 0; i < c.cf.nt; i++)
		print_result(ctl, c.store, &c.cf.t[i], &o.q, i == 0);
	if (ctl->format == FORMAT_JSON)
		printf("\n]}\n");
	/* ^C: what finished is stored and printed, then 130 (as analyze) */
	ret = c.failed ? EXIT_ERROR : c.signal ? 128 + c.signal : EXIT_OK;
out:
	if (sigint_ev != NULL)
		event_free(sigint_ev);
	if (sigterm_ev != NULL)
		event_free(sigterm_ev);
	if (c.sp != NULL && flaky_spawner_free(c.sp) < 0)
		log_warnx("runs still in flight at exit");
	flaky_pipeline_free(c.pl);
	flaky_classifier_free(c.cls);
	if (c.base != NULL)
		event_base_free(c.base);
	flaky_confirm_free(&c.cf);
	flaky_store_close(c.store);
	return ret;
}
