/* flakyctl analyze: rerun a command N times (J at once), store every run,
 * print the ranked tests of this call. */
#include "buildconf.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "run/run.h"
#include "flakyctl.h"
#include "log.h"
#include "diag.h"
#include "output.h"
#include "progress.h"
#include "perturb.h"
#include "subset.h"
#include "pipeline/pipeline.h"
#include "run_why.h"
#include "stats/stats.h"
#include "store/store.h"
#include "classify/classify.h"

/* Ended runs wait this long to share a commit: one transaction (and one
 * sync) a second, whatever the rate of runs. The write lock is held only
 * for the commit itself, never while runs run. */
#define GROUP_MS		1000
/* How long a write waits for another writer before it backs off and is
 * retried from a timer; and how long the last flush keeps trying before
 * analyze gives up and says what was not stored. */
#define BUSY_MS			100
#define FINAL_FLUSH_MS		(5 * 60 * 1000)

/* Per-test tallies while the runs come in, for the progress line. */
struct tally {
	char	*name;
	int	 runs, fails;
};

struct analyze {
	struct ctl		*ctl;
	struct event_base	*base;
	struct flaky_spawner	*sp;
	struct flaky_store	*store;
	struct flaky_pipeline	*pl;
	struct flaky_classifier	*cls;
	struct flaky_job	 job;
	struct event		*sigint_ev, *sigterm_ev;
	int64_t			 first_run_id, last_run_id;
	int			 runs, jobs;
	int			 started, finished, running;
	int			 stopping;
	int			 failed;	/* a store error or start error */
	int			 signal;	/* SIGINT or SIGTERM came */
	struct run_why		 why;	/* the first runs' ends */
	int			 store_told;	/* a store error was told */
	struct progress		 prog;		/* on stderr, a terminal */
	int			 incomplete;	/* runs that give no rate */
	char			*incomplete_why;	/* the first one's reason */
	struct tally		*tally;
	size_t			 ntally, captally;	/* open addressing */
	int			 unstable;
	struct flaky_run	**live;		/* jobs slots */
	int			 until_settled;	/* --until-settled */
	struct flaky_settle	 settle;
	int64_t			 budget_ms, budget_end_us;	/* --budget */
	const char		*stopped;	/* why the runs stopped */
	struct perturb		 pt;		/* --stress, --shuffle */
	struct subset		 sub;		/* --risky, the open tests */
	int			 risky, selected_runs;
};

static void	launch(struct analyze *);

/* --until-settled: count a complete run, and stop starting runs once every
 * failing test's tier is settled (the runs in flight still count). */
static void
settle_ended(struct analyze *a, struct flaky_run *run)
{
	if (!a->until_settled || run->rec.incomplete != NULL)
		return;
	if (flaky_settle_count(&a->settle, &run->results) < 0)
		fatalx("out of memory");
	if (a->stopped == NULL &&
	    flaky_settle_done(&a->settle, FLAKY_SETTLE_MIN_RUNS)) {
		a->stopped = "settled";
		a->stopping = 1;
	}
}

/* The tally of a test, added on first sight (open addressing). */
static struct tally *
tally_get(struct analyze *a, const char *name)
{
	uint64_t h;
	size_t	 i, mask;

	if ((a->ntally + 1) * 2 > a->captally) {
		struct tally *old = a->tally;
		size_t	 oldcap = a->captally;

		a->captally = a->captally ? a->captally * 2 : 256;
		a->tally = xcalloc(a->captally, sizeof *a->tally);
		for (size_t k = 0; k < oldcap; k++) {
			if (old[k].name == NULL)
				continue;
			h = flaky_hash64(old[k].name, strlen(old[k].name),
			    FLAKY_HASH_SEED);
			mask = a->captally - 1;
			for (i = h & mask; a->tally[i].name; i = (i + 1) & mask)
				;
			a->tally[i] = old[k];
		}
		free(old);
	}
	h = flaky_hash64(name, strlen(name), FLAKY_HASH_SEED);
	mask = a->captally - 1;
	for (i = h & mask; a->tally[i].name != NULL; i = (i + 1) & mask)
		if (strcmp(a->tally[i].name, name) == 0)
			return &a->tally[i];
	a->tally[i].name = xstrdup(name);
	a->ntally++;
	return &a->tally[i];
}

/* Free the tallies and their names. */
static void
tally_free(struct analyze *a)
{
	for (size_t i = 0; i < a->captally; i++)
		free(a->tally[i].name);
	free(a->tally);
}

/* Count one run's outcomes, and how many tests are unstable so far. */
static void
tally_run(struct analyze *a, const struct flaky_results *r)
{
	for (size_t i = 0; i < r->n; i++) {
		int	 o = r->v[i].outcome, was, now;
		struct tally *t;

		if (o != FLAKY_PASS && o != FLAKY_XPASS && !FLAKY_FAILED(o))
			continue;
		t = tally_get(a, r->v[i].test);
		was = t->fails > 0 && t->fails < t->runs;
		t->runs++;
		t->fails += FLAKY_FAILED(o);
		now = t->fails > 0 && t->fails < t->runs;
		a->unstable += now - was;
	}
}

/* The words of the progress line: "[==>       ] run 12/50 · 0:42
 * elapsed, ~2:10 left · 1 running · 2 unstable". */
static void
progress_words(struct flaky_buf *b, void *arg)
{
	struct analyze	*a = arg;
	char		 bar[11];
	int		 fill;

	fill = a->runs ? a->finished * 10 / a->runs : 10;
	for (int i = 0; i < 10; i++)
		bar[i] = i < fill ? '=' : (i == fill ? '>' : ' ');
	bar[10] = '\0';
	a->prog.done = a->finished;
	a->prog.total = a->runs;
	flaky_buf_printf(b, "[%s] run %d/%d \u00b7 ", bar, a->started,
	    a->runs);
	progress_times(&a->prog, b);
	flaky_buf_printf(b, " \u00b7 %d running \u00b7 %d unstable",
	    a->running, a->unstable);
}

/* No more runs; those in flight end (as interrupted) through their ended
 * callbacks. */
static void
stop_live(struct analyze *a)
{
	a->stopping = 1;
	for (int i = 0; i < a->jobs; i++)
		if (a->live[i] != NULL)
			flaky_run_stop(a->live[i]);
}

/* The exit code: 2 on an error or when no run gave results, 128 + the
 * signal after ^C or SIGTERM (what finished is stored), 1 when a test is
 * in a --fail-on tier. */
static int
exit_code(const struct analyze *a, int no_results, int tripped)
{
	if (a->failed)
		return EXIT_ERROR;
	if (a->signal)
		return 128 + a->signal;
	if (no_results)
		return EXIT_ERROR;
	return tripped ? EXIT_FOUND : EXIT_OK;
}

/* A run ended (classified, on its way to the store): start the next one
 * first, so that storing this one overlaps with it. */
static void
run_ended(struct flaky_run *run, void *job_arg, void *arg)
{
	struct analyze	*a = arg;

	(void)job_arg;
	for (int i = 0; i < a->jobs; i++)
		if (a->live[i] == run)
			a->live[i] = NULL;
	a->running--;
	a->finished++;
	run_why_note(&a->why, a->finished, &run->rec);
	settle_ended(a, run);
	perturb_ended(&a->pt, run);
	a->selected_runs += run->rec.selected > 0;
	launch(a);
	if (a->running == 0)
		perturb_idle(&a->pt);
	if (run->rec.incomplete != NULL && (run->rec.perturbation == NULL ||
	    strcmp(run->rec.perturbation, FLAKY_PERTURB_REPLAY) != 0)) {
		if (a->incomplete++ == 0)
			a->incomplete_why = xstrdup(run->rec.incomplete);
	} else if (run->rec.incomplete == NULL)
		tally_run(a, &run->results);
	progress_draw(&a->prog);
	if (a->running == 0 && (a->stopping || a->started >= a->runs))
		event_base_loopbreak(a->base);
}

/* A run is in the database: its id bounds this call's window. */
static void
run_stored(struct flaky_run *run, void *job_arg, void *arg)
{
	struct analyze	*a = arg;
	int64_t		 id = run->rec.id;

	(void)job_arg;
	if (a->first_run_id == 0 || id < a->first_run_id)
		a->first_run_id = id;
	if (id > a->last_run_id)
		a->last_run_id = id;
}

/* A write was refused and will be retried. Another writer holding the
 * lock is normal (flakyd, another analyze): it is waited out without a
 * word. Anything else is told once, and no more runs are started. */
static void
store_error(int code, const char *err, size_t waiting, void *arg)
{
	struct analyze	*a = arg;

	(void)waiting;
	if (code == -EBUSY)
		return;
	if (!a->store_told)
		log_warnx("%s (the finished runs are kept and retried)", err);
	a->store_told = 1;
	a->failed = 1;
	a->stopping = 1;
}

/* Start runs until J are in flight or all have started. */
static void
launch(struct analyze *a)
{
	struct flaky_run *run;
	char		 err[1024];
	int		 rc;

	if (a->budget_end_us > 0 && flaky_mono_us() >= a->budget_end_us &&
	    !a->stopping) {
		a->stopped = a->stopped ? a->stopped : "budget";
		a->stopping = 1;
	}
	/* a seed sweep's runs all ended: its replays, if any */
	if (!a->stopping && a->started >= a->runs && a->running == 0)
		a->runs += (int)perturb_replays(&a->pt);
	while (!a->stopping && a->started < a->runs && a->running < a->jobs) {
		a->started++;
		a->job.spec.more = a->runs - a->started;
		perturb_job(&a->pt, &a->job, a->job.spec.dir);
		subset_job(&a->sub, &a->job, &a->settle, a->pt.only,
		    a->pt.nonly);
		rc = flaky_pipeline_start(a->pl, &a->job, &run, err, sizeof err);
		perturb_started(&a->pt);
		subset_started(&a->sub, &a->job);
		if (rc < 0) {
			/* Recorded as an error run; no point in more. */
			log_warnx("%s", err);
			a->finished++;
			a->failed = 1;
			a->stopping = 1;
			break;
		}
		a->running++;
		for (int i = 0; i < a->jobs; i++)
			if (a->live[i] == NULL) {
				a->live[i] = run;
				break;
			}
	}
	if (a->running == 0 && (a->stopping || a->started >= a->runs))
		event_base_loopbreak(a->base);
}

/* SIGINT or SIGTERM: stop starting runs; a second one stops waiting. */
static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct analyze	*a = arg;

	(void)what;
	if (a->stopping && a->running > 0 && a->signal) {
		/* A second ^C: no more waiting. */
		event_base_loopbreak(a->base);
		return;
	}
	log_warnx("%s: stopping, the runs in flight are ended and recorded "
	    "as interrupted", strsignal((int)sig));
	a->signal = (int)sig;
	stop_live(a);
}

/* Log an escapee before it is killed. */
static void
stray_cb(long pid, void *arg)
{
	(void)arg;
	log_info("killing process %ld, left behind by a run", pid);
}

/* Nothing of the runs outlives analyze: with no run in flight every child
 * of ours (a subreaper) is an escapee of one. Their own children come to
 * us in turn, so look again until none is left, for at most a second. */
static void
end_strays(struct analyze *a)
{
	int64_t	 end_us = flaky_mono_us() + 1000 * 1000;

	while (flaky_kill_strays(stray_cb, a) > 0 &&
	    flaky_mono_us() < end_us) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		flaky_spawner_reap(a->sp);
		nanosleep(&ts, NULL);
	}
	flaky_spawner_reap(a->sp);
}

static int	cmd_analyze(struct ctl *, int, char **);

/* Options stop at the first word: a command's own options are its own. */
static const struct cmd_option analyze_options[] = {
	{ "runs", 'n', 0, "N", "how many runs (default 10)" },
	{ "jobs", 'j', 0, "J", "runs at once (default 1)" },
	{ "timeout", 't', 0, "D", "end a run's process group after D "
	    "(90s, 10m, 1h30m; default none)" },
	{ "grace", 0, 'g', "D", "from SIGTERM to SIGKILL at the timeout "
	    "(default 10s)" },
	{ "no-stacks", 0, 'N', NULL, "at the timeout kill at once, without "
	    "taking the stacks first" },
	{ "stacks-bound", 0, 'P', "D", "the time a hung run's stacks may "
	    "take (default 10s)" },
	{ "target", 'T', 0, "NAME", "the runs' target (default the "
	    "project's name and its runner)" },
	{ "junit", 0, 'J', "PATH", "a JUnit XML file the command writes "
	    "after each run (default none: its output is parsed)" },
	{ "fail-on", 0, 'F', "TIERS", "exit 1 when a test is in one of these "
	    "tiers (critical,warning,broken; default none)" },
	{ "revision", 0, 'R', "REV", "the revision the runs test (default "
	    "git HEAD)" },
	{ "capture", 0, 'C', "BYTES", "output kept per run, head and tail "
	    "(default 1 MiB)" },
	{ "no-runner-cache", 0, 'K', NULL, "no Jest transform cache kept "
	    "between runs" },
	{ "wide", 0, 'W', NULL, "whole test ids on a terminal, however "
	    "long the lines" },
	{ "until-settled", 0, 'U', NULL, "rerun until every failing test's "
	    "tier is settled (docs/statistics.md)" },
	{ "max-runs", 0, 'M', "N", "--until-settled: at most N runs (default "
	    "200)" },
	{ "budget", 0, 'B', "D", "start no run after D (10m, 1h), and stop "
	    "the ones in flight then (default none)" },
	{ "stress", 0, 'S', "KIND[:LEVEL]", "cpu, memory, io or all load "
	    "beside each run, LEVEL workers of each (default one per CPU)" },
	{ "shuffle", 0, 'O', NULL, "shuffle the tests' order, a fresh seed "
	    "each run, recorded (pytest, Jest, Vitest, Playwright, go)" },
	{ "seed", 0, 'Q', "N", "shuffle every run with this seed (default "
	    "none: a fresh one a run, in runs.seed), the order of that run "
	    "again; in a seed sweep, every run's seed, or A-B in turn" },
	{ "perturb", 0, 'E', "KIND", "seed: a seed sweep, each run's Python "
	    "tests seeded with its own seed (pytest, unittest); shuffle, "
	    "stress:KIND[:LEVEL], calm (default calm)" },
	CMD_OPTION_BOX,
	{ "risky", 0, 'X', NULL, "rerun only the Python tests with "
	    "approximate assertions (flakyctl scan) in DIRECTORY" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_analyze_entry = {
	.name = "analyze",
	.usage = "analyze [--runs N] [--jobs J] [--timeout D] [--grace D] "
	    "[--no-stacks] [--stacks-bound D] "
	    "[--target NAME] [--junit PATH] [--fail-on TIERS] [--revision REV] "
	    "[--capture BYTES] [--no-runner-cache] [--wide] [--until-settled "
	    "[--max-runs N]] [--budget D] [--stress KIND[:LEVEL]] [--shuffle] "
	    "[--seed N] [--perturb KIND] [--box NAME] [--risky] "
	    "(DIRECTORY | [--] COMMAND...)",
	.summary = "Rerun a test command N times, store every run, rank "
	    "the tests.",
	.example = "flakyctl analyze --runs 50 --jobs 4 tests/\n"
	    "flakyctl analyze --runs 20 --timeout 10m -- pytest -x tests/api\n"
	    "flakyctl analyze --risky --until-settled tests/\n"
	    "flakyctl analyze --risky --perturb seed --runs 100 tests/",
	.options = analyze_options,
	.flags = CMD_STOP_AT_OPERAND | CMD_WRITES,
	.exec = cmd_analyze,
};

/* flakyctl analyze: the options, the runs, the report of this call. */
static int
cmd_analyze(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct analyze	 a;
	struct flaky_command cmd;
	struct flaky_command_opts copts = { 1 };
	struct report_head head;
	struct settled_report sreport;
	struct flaky_query q;
	struct flaky_test_row *rows = NULL;
	size_t		 nrows = 0;
	long long	 v;
	int64_t		 ms, t0;
	char		 err[1024], *target = NULL, *command = NULL;
	char		*revision = NULL, *resolved = NULL, cwd[PATH_MAX];
	char		*runner_version = NULL;
	const char	*target_arg = NULL, *rev_arg = NULL, *dir_arg = NULL;
	int		 c, rc, fail_mask = 0, ret = EXIT_ERROR, runs_set = 0;

	memset(&a, 0, sizeof a);
	memset(&cmd, 0, sizeof cmd);
	a.ctl = ctl;
	a.runs = 10;
	a.jobs = 1;
	/* Options stop at the first word (a command's own options are its
	 * own), except after a directory: `analyze tests/ --runs 50`. */
	cmd_getopt_init(&g, &cmd_analyze_entry, ctl, argc, argv);
again:
	while ((c = cmd_getopt(&g)) > 0) {
		switch (c) {
		case 'n':
			runs_set |= 1;
			if (flaky_parse_int(optarg, 1, 1000000, &v) < 0) {
				ctl_usage_error("analyze", "--runs: expected a "
				    "number from 1 to 1000000, got '%s'",
				    optarg);
				return EXIT_ERROR;
			}
			a.runs = (int)v;
			break;
		case 'j':
			if (flaky_parse_int(optarg, 1, 256, &v) < 0) {
				ctl_usage_error("analyze", "--jobs: expected a "
				    "number from 1 to 256, got '%s'", optarg);
				return EXIT_ERROR;
			}
			a.jobs = (int)v;
			break;
		case 'N':
			a.job.spec.no_stacks = 1;
			break;
		case 't':
		case 'g':
		case 'P':
			if (flaky_parse_duration(optarg, &ms) < 0 || ms <= 0) {
				ctl_usage_error("analyze", "--%s: expected a "
				    "duration such as 90s, 10m or 1h30m, got "
				    "'%s'", c == 't' ? "timeout" : c == 'g' ?
				    "grace" : "stacks-bound", optarg);
				return EXIT_ERROR;
			}
			if (c == 't')
				a.job.spec.timeout_ms = ms;
			else if (c == 'g')
				a.job.spec.grace_ms = ms;
			else
				a.job.spec.stacks_ms = ms;
			break;
		case 'T':
			target_arg = optarg;
			break;
		case 'J':
			a.job.spec.junit_path = optarg;
			break;
		case 'F':
			if (parse_fail_on("analyze", optarg, &fail_mask) < 0)
				return EXIT_ERROR;
			break;
		case 'R':
			rev_arg = optarg;
			break;
		case 'C':
			if (flaky_parse_int(optarg, 1024, 1LL << 30, &v) < 0) {
				ctl_usage_error("analyze", "--capture: expected "
				    "bytes from 1024 to 1073741824, got '%s'",
				    optarg);
				return EXIT_ERROR;
			}
			a.job.spec.capture_max = (size_t)v;
			break;
		case 'K':
			copts.keep_jest_cache = 0;
			break;
		case 'W':
			ctl->wide = 1;
			break;
		case 'U':
		case 'M':
		case 'B':
			if (settled_option(c, optarg, &a.until_settled,
			    &a.runs, &a.budget_ms, &runs_set) < 0)
				return EXIT_ERROR;
			break;
		case 'S':
			if (perturb_stress_option(&a.pt, optarg) < 0)
				return EXIT_ERROR;
			break;
		case 'O':
			a.pt.shuffle = a.pt.asked_shuffle = 1;
			break;
		case 'E':
			if (perturb_kind_option(&a.pt, optarg) < 0)
				return EXIT_ERROR;
			break;
		case 'X':
			a.risky = 1;
			break;
		case 'Q':
			if (perturb_seed_option(&a.pt, optarg) < 0)
				return EXIT_ERROR;
			break;
		}
	}
	if (c < 0)
		return g.exit;
	if (settled_check(a.until_settled, runs_set, &a.runs) < 0)
		return EXIT_ERROR;
	perturb_runs(&a.pt, &a.runs, runs_set & 1);
	flaky_settle_init(&a.settle, FLAKY_CS_ALPHA);
	if (ctl_dir_operand(argc, argv, &dir_arg))
		goto again;
	argc -= optind;
	argv += optind;
	if (dir_arg != NULL && argc > 0) {
		ctl_usage_error("analyze", "'%s' after the directory %s: give "
		    "either a directory or a command after --", argv[0],
		    dir_arg);
		return EXIT_ERROR;
	}
	if (dir_arg == NULL && argc == 0) {
		ctl_usage_error("analyze", "no command to run: give a "
		    "directory, or a command (after --)");
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "analyze", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON | 1 << FORMAT_CSV | 1 << FORMAT_MARKDOWN |
	    1 << FORMAT_GITHUB | 1 << FORMAT_JUNIT) < 0)
		return EXIT_ERROR;
	if (target_arg != NULL && (*target_arg == '\0' ||
	    strspn(target_arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
	    "TUVWXYZ0123456789._-") != strlen(target_arg))) {
		ctl_usage_error("analyze", "--target: expected a name of "
		    "letters, digits, '.', '_' and '-', got '%s'", target_arg);
		return EXIT_ERROR;
	}
	if (getcwd(cwd, sizeof cwd) == NULL)
		fatal("getcwd");
	if (ctl_prepare_command("analyze", dir_arg, argv, &copts, &cmd) < 0 ||
	    perturb_check(&a.pt, &cmd) < 0)
		goto out;
	a.job.spec.argv = cmd.argv;
	a.job.spec.envp = cmd.envp;
	a.job.spec.dir = cmd.dir != NULL ? cmd.dir : cwd;
	if (subset_check(&a.sub, &cmd, a.job.spec.dir, a.until_settled,
	    a.risky) < 0)
		goto out;
	if (a.pt.seeded)
		subset_replays(&a.sub);
	target = target_arg ? xstrdup(target_arg) :
	    default_target(&cmd, a.job.spec.dir);
	command = join_argv(cmd.env_set, cmd.argv);
	if (dir_arg != NULL)
		fprintf(stderr, "flakyctl: running `%s` in %s (%s: %s)\n",
		    command, cmd.dir, cmd.runner, cmd.note);
	else if (cmd.note != NULL)
		fprintf(stderr, "flakyctl: %s\n", cmd.note);

	if (flaky_store_open(ctl_db_path(ctl), 0, &a.store, err,
	    sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		goto out;
	}
	ctl_store_box(ctl, a.store, 1);
	/* the config's signatures (checked before the built-ins) and its
	 * redaction patterns */
	if (diag_load_signatures(ctl, a.store, &a.cls) < 0)
		goto out;
	/* The revision once per call, not per run. */
	if (rev_arg != NULL)
		revision = xstrdup(rev_arg);
	else if ((rc = flaky_revision_git(a.job.spec.dir, &revision)) ==
	    -ETIMEDOUT)
		log_warnx("git did not answer within %lld ms: the runs have "
		    "no revision", (long long)flaky_revision_timeout_ms());
	else if (rc < 0)
		fatalx("out of memory");
	/* Look the command up once, not per run; when that fails, the first
	 * run records the error. */
	{
		const char *pe = getenv("PATH");

		if (flaky_resolve_command(cmd.argv[0], a.job.spec.dir, pe,
		    &resolved, err, sizeof err) == 0)
			a.job.spec.path = resolved;
	}
	/* The target's row, waiting for other writers as long as a run's
	 * rows would. */
	flaky_store_set_busy_timeout(a.store, FINAL_FLUSH_MS);
	if (flaky_store_target(a.store, target, command, a.job.spec.dir,
	    &a.job.target_id, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		goto out;
	}
	if (a.risky && subset_risky(&a.sub, a.store, a.job.target_id, target,
	    dir_arg != NULL ? dir_arg : cwd) < 0)
		goto out;

	a.base = ctl_event_base();
	signal(SIGPIPE, SIG_IGN);
	/* A subreaper, as flakyd: whatever escapes a run's process group is
	 * reparented to us, so an end with no child left proves that nothing
	 * of the run lives on (and its empty TMPDIR may serve the next). */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1)
		log_warn("prctl(PR_SET_CHILD_SUBREAPER)");
	if (flaky_spawner_new(a.base, &a.sp) < 0)
		fatalx("cannot watch child processes");
	{
		struct flaky_pipeline_opts po = {
			.base = a.base, .sp = a.sp, .store = a.store,
			.classifier = a.cls, .group_ms = GROUP_MS,
			.busy_ms = BUSY_MS, .ended = run_ended,
			.stored = run_stored, .error = store_error, .arg = &a,
		};

		if (flaky_pipeline_new(&po, &a.pl) < 0)
			fatalx("out of memory");
	}
	a.job.kind = FLAKY_KIND_SUITE;
	a.job.trigger = "analyze";
	a.job.runner_version = runner_version =
	    flaky_runner_version(&cmd, a.job.spec.dir);
	a.job.revision = revision;
	a.sigint_ev = evsignal_new(a.base, SIGINT, signal_cb, &a);
	a.sigterm_ev = evsignal_new(a.base, SIGTERM, signal_cb, &a);
	evsignal_add(a.sigint_ev, NULL);
	evsignal_add(a.sigterm_ev, NULL);
	a.live = xcalloc((size_t)a.jobs, sizeof *a.live);
	t0 = flaky_mono_us();
	if (a.budget_ms > 0)
		a.job.budget_end_us = a.budget_end_us = t0 + a.budget_ms * 1000;
	progress_start(&a.prog, a.base, progress_words, &a);

	launch(&a);
	progress_draw(&a.prog);
	if (a.running > 0)
		event_base_dispatch(a.base);
	progress_end(&a.prog);
	/* After a second ^C runs may still be live: they are stopped here and
	 * end as interrupted when the spawner is freed. */
	end_strays(&a);
	if (flaky_pipeline_flush(a.pl, FINAL_FLUSH_MS, err, sizeof err) < 0) {
		log_warnx("%zu finished run%s could not be stored: %s",
		    flaky_pipeline_waiting(a.pl),
		    flaky_pipeline_waiting(a.pl) == 1 ? "" : "s", err);
		a.failed = 1;
	}

	memset(&q, 0, sizeof q);
	q.since_ms = INT64_MIN;
	q.until_ms = INT64_MAX;
	q.target = target;
	q.first_run_id = a.first_run_id;
	q.last_run_id = a.last_run_id;
	memset(&head, 0, sizeof head);
	head.command = command;
	head.target = target;
	head.since_ms = INT64_MIN;
	head.until_ms = INT64_MAX;
	head.wall_us = flaky_mono_us() - t0;
	head.revision = revision;
	head.query = &q;
	head.store = a.store;
	if (a.until_settled) {
		sreport.settle = &a.settle;
		sreport.max_runs = a.runs;
		sreport.budget_ms = a.budget_ms;
		sreport.selected_runs = a.selected_runs;
		sreport.stopped = a.stopped ? a.stopped : a.failed ?
		    "interrupted" : "max-runs";
		head.settled = &sreport;
	}
	if (a.first_run_id == 0) {
		/* nothing was recorded */
		ret = a.signal && !a.failed ? 128 + a.signal : EXIT_ERROR;
		goto out;
	}
	flaky_store_set_busy_timeout(a.store, FLAKY_BUSY_TIMEOUT_MS);
	if (flaky_store_run_counts(a.store, &q, &head.runs, err,
	    sizeof err) < 0 || flaky_store_test_stats(a.store, &q, &rows,
	    &nrows, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		goto out;
	}
	sort_rows(rows, nrows);
	print_report(ctl, &head, rows, nrows);
	if (a.incomplete > 0)
		log_warnx("%d of %d run%s gave incomplete results, which "
		    "count for no test's rate: %s", a.incomplete, a.finished,
		    a.finished == 1 ? "" : "s", a.incomplete_why);
	if (nrows == 0 && a.why.n > 0 && !a.signal)
		run_why_tell(&a.why);
	ret = exit_code(&a, nrows == 0 && !a.signal,
	    fail_mask && gate_tripped(rows, nrows, fail_mask));
out:
	flaky_test_rows_free(rows, nrows);
	if (a.sigint_ev != NULL)
		event_free(a.sigint_ev);
	if (a.sigterm_ev != NULL)
		event_free(a.sigterm_ev);
	if (a.sp != NULL && flaky_spawner_running(a.sp) > 0 && a.pl != NULL) {
		/* A second ^C: end them now, and keep their rows. */
		flaky_pipeline_stop_all(a.pl);
	}
	if (a.sp != NULL && flaky_spawner_free(a.sp) < 0)
		log_warnx("runs still in flight at exit");
	flaky_pipeline_free(a.pl);
	if (a.base != NULL)
		event_base_free(a.base);
	flaky_store_close(a.store);
	flaky_classifier_free(a.cls);
	tally_free(&a);
	flaky_settle_free(&a.settle);
	perturb_free(&a.pt);
	subset_free(&a.sub);
	free(a.live);
	free(a.incomplete_why);
	run_why_free(&a.why);
	free(target);
	free(command);
	free(revision);
	free(resolved);
	free(runner_version);
	flaky_command_clear(&cmd);
	return ret;
}
