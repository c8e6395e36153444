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
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "command.h"
#include "flakyctl.h"
#include "log.h"
#include "diag.h"
#include "output.h"
#include "run.h"
#include "stats.h"
#include "store.h"

/* Runs that end within this long of each other share a transaction. */
#define COMMIT_EVERY_MS	1000

/* Ended runs wait to be written together, at most this many or this much
 * output, still within the commit's second: one after the other the INSERTs
 * run warm. Written each right after its run, between two execs that evict
 * SQLite's pages from the caches, the rows of 200 runs of `true` cost about
 * 7 ms; written this way 3 ms less (docs/performance.md). */
#define PENDING_RUNS	64
#define PENDING_BYTES	(16 << 20)

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
	struct flaky_run_spec	 spec;
	struct event		*commit_ev;
	struct event		*sigint_ev, *sigterm_ev;
	int64_t			 target_id;
	int64_t			 first_run_id, last_run_id;
	const char		*revision;
	int			 runs, jobs;
	int			 started, finished, running;
	int			 stopping;
	int			 failed;	/* a store error or start error */
	int			 store_broken;	/* its error was told */
	int			 progress;	/* draw the progress line */
	struct tally		*tally;
	size_t			 ntally, captally;	/* open addressing */
	int			 unstable;
	struct flaky_run	**live;		/* jobs slots */
	struct flaky_run	*pending[PENDING_RUNS];	/* ended, not written */
	int			 npending;
	size_t			 pending_bytes;
	int			 tx_open;	/* batch() began one */
};

static void	launch(struct analyze *);
static int	starts(struct analyze *);
static void	write_pending(struct analyze *);

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

static void
tally_free(struct analyze *a)
{
	for (size_t i = 0; i < a->captally; i++)
		free(a->tally[i].name);
	free(a->tally);
}

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

static void
progress(struct analyze *a, int final)
{
	char	 bar[21];
	int	 fill;

	if (!a->progress)
		return;
	fill = a->runs ? a->finished * 20 / a->runs : 20;
	for (int i = 0; i < 20; i++)
		bar[i] = i < fill ? '=' : (i == fill ? '>' : ' ');
	bar[20] = '\0';
	fprintf(stderr, "\r[%s] %d/%d runs \u00b7 %d running \u00b7 %d unstable "
	    "so far\033[K", bar, a->finished, a->runs, a->running,
	    a->unstable);
	if (final)
		fprintf(stderr, "\r\033[K");
	fflush(stderr);
}

/* No more runs; those in flight end (as interrupted) through their done
 * callbacks. */
static void
stop_live(struct analyze *a)
{
	a->stopping = 1;
	for (int i = 0; i < a->jobs; i++)
		if (a->live[i] != NULL)
			flaky_run_stop(a->live[i]);
}

/* A store error ends the analysis: the runs in flight end as stopped. */
static void
store_failed(struct analyze *a, const char *err)
{
	if (!a->store_broken)
		log_warnx("%s", err);
	a->store_broken = 1;
	a->failed = 1;
	stop_live(a);
}

static void
commit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct analyze	*a = arg;
	char		 err[1024];

	(void)fd;
	(void)what;
	write_pending(a);
	if (starts(a) == 0 &&
	    flaky_store_commit(a->store, err, sizeof err) < 0)
		store_failed(a, err);
	a->tx_open = 0;
}

/* Make sure a transaction is open and will be committed soon. */
static int
batch(struct analyze *a)
{
	struct timeval	 tv = { 0, COMMIT_EVERY_MS * 1000 };
	char		 err[1024];

	if (a->tx_open)
		return 0;
	if (flaky_store_begin(a->store, err, sizeof err) < 0) {
		store_failed(a, err);
		return -1;
	}
	a->tx_open = 1;
	evtimer_add(a->commit_ev, &tv);
	return 0;
}

static void
note_run_id(struct analyze *a, int64_t id)
{
	if (a->first_run_id == 0 || id < a->first_run_id)
		a->first_run_id = id;
	if (id > a->last_run_id)
		a->last_run_id = id;
}

/* The rows of the runs still in flight, written with the transaction
 * that commits: a run that ends before then is stored in one INSERT. */
static int
starts(struct analyze *a)
{
	struct flaky_run *run;
	char		  err[1024];

	for (int i = 0; i < a->jobs; i++) {
		if ((run = a->live[i]) == NULL || run->rec.id != 0)
			continue;
		if (flaky_store_run_start(a->store, &run->rec, err,
		    sizeof err) < 0) {
			store_failed(a, err);
			return -1;
		}
		note_run_id(a, run->rec.id);
	}
	return 0;
}

static void
run_done(struct flaky_run *run, void *arg)
{
	struct analyze	*a = arg;

	for (int i = 0; i < a->jobs; i++)
		if (a->live[i] == run)
			a->live[i] = NULL;
	a->running--;
	a->finished++;
	/* The next run first: storing this one overlaps with it. */
	launch(a);
	run->rec.target_id = a->target_id;
	run->rec.trigger = "analyze";
	run->rec.revision = a->revision;
	tally_run(a, &run->results);
	progress(a, 0);
	/* Written with the next few, and within the second by the commit. */
	a->pending[a->npending++] = run;
	a->pending_bytes += run->rec.out_len + run->rec.err_len +
	    run->results.n * 128;
	if (a->npending == PENDING_RUNS || a->pending_bytes >= PENDING_BYTES)
		write_pending(a);
	else
		batch(a);
}

/* Write the ended runs that wait, in the order they ended, into the open
 * transaction. */
static void
write_pending(struct analyze *a)
{
	struct flaky_run *run;
	char		  err[1024];
	int		  ok = a->npending > 0 && batch(a) == 0;

	for (int i = 0; i < a->npending; i++) {
		run = a->pending[i];
		if (!ok || a->store_broken)
			;	/* told once; the rest is lost with it */
		else if (flaky_store_run_finish(a->store, &run->rec,
		    &run->results, err, sizeof err) < 0)
			store_failed(a, err);
		else if (run->rec.id > 0)
			note_run_id(a, run->rec.id);
		flaky_run_free(run);
	}
	a->npending = 0;
	a->pending_bytes = 0;
}

/* Start runs until J are in flight or all have started. */
static void
launch(struct analyze *a)
{
	struct flaky_run *run;
	char		 err[1024], serr[1024];

	while (!a->stopping && a->started < a->runs && a->running < a->jobs) {
		a->started++;
		a->spec.more = a->runs - a->started;
		if (flaky_run_start(a->sp, &a->spec, run_done, a, &run, err,
		    sizeof err) < 0) {
			/* Recorded as an error run; no point in more. */
			log_warnx("%s", err);
			a->failed = 1;
			a->stopping = 1;
			if (run != NULL) {
				write_pending(a);
				run->rec.target_id = a->target_id;
				run->rec.trigger = "analyze";
				run->rec.revision = a->revision;
				if (batch(a) == 0 && flaky_store_run_finish(
				    a->store, &run->rec, NULL, serr,
				    sizeof serr) < 0)
					log_warnx("%s", serr);
				else if (run->rec.id > 0)
					note_run_id(a, run->rec.id);
				a->finished++;
				flaky_run_free(run);
			}
			break;
		}
		a->running++;
		for (int i = 0; i < a->jobs; i++)
			if (a->live[i] == NULL) {
				a->live[i] = run;
				break;
			}
		run->rec.target_id = a->target_id;
		run->rec.trigger = "analyze";
		run->rec.revision = a->revision;
		/* Its row is written by the commit if it is still running
		 * then, else whole when it ends. */
		batch(a);
	}
	if (a->running == 0 && (a->stopping || a->started >= a->runs))
		event_base_loopbreak(a->base);
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct analyze	*a = arg;

	(void)what;
	if (a->stopping) {
		/* A second ^C: no more waiting. */
		event_base_loopbreak(a->base);
		return;
	}
	log_warnx("%s: stopping, the runs in flight are ended and recorded "
	    "as interrupted", strsignal((int)sig));
	a->failed = 1;
	stop_live(a);
}

/* "shop-pytest": the directory's name (the project root's in directory
 * mode) and the command's first word (the runner's name there). */
static char *
default_target(const char *where, const char *cmd)
{
	char	 cwd[PATH_MAX], *dir, *word, *t;
	const char *w;

	if (where != NULL)
		snprintf(cwd, sizeof cwd, "%s", where);
	else if (getcwd(cwd, sizeof cwd) == NULL)
		snprintf(cwd, sizeof cwd, "run");
	dir = strrchr(cwd, '/');
	dir = dir && dir[1] ? dir + 1 : cwd;
	w = strrchr(cmd, '/');
	word = xstrdup(w ? w + 1 : cmd);
	xasprintf(&t, "%s-%s", dir, word);
	free(word);
	/* Keep target names to [A-Za-z0-9._-], as the schedule does. */
	for (char *p = t; *p; p++)
		if (!(*p == '.' || *p == '_' || *p == '-' ||
		    (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9')))
			*p = '_';
	return t;
}

/* Quote one word for a shell when it needs it. */
static void
add_word(struct flaky_buf *b, const char *w)
{
	if (w[0] == '\0' || strpbrk(w, " \t\"'\\$`*?[]{}()<>;&|~#") != NULL) {
		flaky_buf_addc(b, '\'');
		for (const char *p = w; *p; p++) {
			if (*p == '\'')
				flaky_buf_adds(b, "'\\''");
			else
				flaky_buf_addc(b, *p);
		}
		flaky_buf_addc(b, '\'');
	} else
		flaky_buf_adds(b, w);
}

/* The command as one line, for people: with the variable flakyctl set
 * ("PYTEST_ADDOPTS=-v pytest"), so that it can be pasted into a shell. */
static char *
join_argv(const char *env_set, char **argv)
{
	struct flaky_buf b;
	const char	*eq;

	flaky_buf_init(&b);
	if (env_set != NULL && (eq = strchr(env_set, '=')) != NULL) {
		flaky_buf_add(&b, env_set, (size_t)(eq + 1 - env_set));
		add_word(&b, eq + 1);
		flaky_buf_addc(&b, ' ');
	}
	for (int i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			flaky_buf_addc(&b, ' ');
		add_word(&b, argv[i]);
	}
	if (b.oom)
		fatalx("out of memory");
	return flaky_buf_steal(&b);
}

/* Is s an existing directory (and so not a command)? */
static int
is_dir(const char *s)
{
	struct stat	 st;

	return stat(s, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The command the runs execute: built for a directory, or the user's
 * completed so that the runner prints every test's outcome. */
static int
prepare_command(const char *dir, char **argv,
    const struct flaky_command_opts *opts, struct flaky_command *cmd)
{
	extern char	**environ;
	char		  err[2048];
	int		  r;

	if (dir != NULL)
		r = flaky_command_detect(dir, environ, opts, cmd, err,
		    sizeof err);
	else
		r = flaky_command_complete(argv, environ, opts, cmd, err,
		    sizeof err);
	if (r == -ENOMEM)
		fatalx("out of memory");
	if (r < 0)
		fprintf(stderr, "flakyctl: analyze: %s\n", err);
	return r;
}

int
cmd_analyze(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "runs", required_argument, NULL, 'n' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ "grace", required_argument, NULL, 'g' },
		{ "target", required_argument, NULL, 'T' },
		{ "junit", required_argument, NULL, 'J' },
		{ "fail-on", required_argument, NULL, 'F' },
		{ "revision", required_argument, NULL, 'R' },
		{ "capture", required_argument, NULL, 'C' },
		{ "no-runner-cache", no_argument, NULL, 'K' },
		CTL_GLOBAL_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	struct analyze	 a;
	struct flaky_command cmd;
	struct flaky_command_opts copts = { 1 };
	struct report_head head;
	struct flaky_query q;
	struct flaky_test_row *rows = NULL;
	size_t		 nrows = 0;
	long long	 v;
	int64_t		 ms, t0;
	char		 err[1024], *target = NULL, *command = NULL;
	char		*revision = NULL, *resolved = NULL, cwd[PATH_MAX];
	const char	*target_arg = NULL, *rev_arg = NULL, *dir_arg = NULL;
	int		 c, fail_mask = 0, ret = EXIT_ERROR;

	memset(&a, 0, sizeof a);
	memset(&cmd, 0, sizeof cmd);
	a.ctl = ctl;
	a.runs = 10;
	a.jobs = 1;
	/* Options stop at the first word (a command's own options are its
	 * own), except after a directory: `analyze tests/ --runs 50`. */
again:
	while ((c = getopt_long(argc, argv, "+n:j:t:T:", longopts, NULL)) !=
	    -1) {
		switch (c) {
		case 'n':
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
		case 't':
		case 'g':
			if (flaky_parse_duration(optarg, &ms) < 0 || ms <= 0) {
				ctl_usage_error("analyze", "--%s: expected a "
				    "duration such as 90s, 10m or 1h30m, got "
				    "'%s'", c == 't' ? "timeout" : "grace",
				    optarg);
				return EXIT_ERROR;
			}
			if (c == 't')
				a.spec.timeout_ms = ms;
			else
				a.spec.grace_ms = ms;
			break;
		case 'T':
			target_arg = optarg;
			break;
		case 'J':
			a.spec.junit_path = optarg;
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
			a.spec.capture_max = (size_t)v;
			break;
		case 'K':
			copts.keep_jest_cache = 0;
			break;
		case '?':
			ctl_usage_error("analyze", "unknown option");
			return EXIT_ERROR;
		default:
			if (ctl_global_option(ctl, c, optarg) < 0)
				return EXIT_ERROR;
		}
	}
	if (optind < argc && dir_arg == NULL &&
	    strcmp(argv[optind - 1], "--") != 0 && is_dir(argv[optind])) {
		dir_arg = argv[optind++];
		goto again;
	}
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
	    1 << FORMAT_JSON | 1 << FORMAT_CSV | 1 << FORMAT_MARKDOWN) < 0)
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
	if (prepare_command(dir_arg, argv, &copts, &cmd) < 0)
		goto out;
	a.spec.argv = cmd.argv;
	a.spec.envp = cmd.envp;
	a.spec.dir = cmd.dir != NULL ? cmd.dir : cwd;
	target = target_arg ? xstrdup(target_arg) : cmd.root != NULL ?
	    default_target(cmd.root, cmd.runner) :
	    default_target(NULL, cmd.argv[0]);
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
	/* the config's signatures (checked before the built-ins) and its
	 * redaction patterns */
	if (diag_load_signatures(ctl, a.store) < 0)
		goto out;
	/* The revision once per call, not per run. */
	if (rev_arg != NULL)
		revision = xstrdup(rev_arg);
	else if (flaky_revision_git(a.spec.dir, &revision) < 0)
		fatalx("out of memory");
	a.revision = revision;
	/* Look the command up once, not per run; when that fails, the first
	 * run records the error. */
	{
		const char *pe = getenv("PATH");

		if (flaky_resolve_command(cmd.argv[0], a.spec.dir, pe,
		    &resolved, err, sizeof err) == 0)
			a.spec.path = resolved;
	}

	a.base = ctl_event_base();
	signal(SIGPIPE, SIG_IGN);
	/* A subreaper, as flakyd: whatever escapes a run's process group is
	 * reparented to us, so an end with no child left proves that nothing
	 * of the run lives on (and its empty TMPDIR may serve the next). */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1)
		log_warn("prctl(PR_SET_CHILD_SUBREAPER)");
	if (flaky_spawner_new(a.base, &a.sp) < 0)
		fatalx("cannot watch child processes");
	a.commit_ev = evtimer_new(a.base, commit_cb, &a);
	a.sigint_ev = evsignal_new(a.base, SIGINT, signal_cb, &a);
	a.sigterm_ev = evsignal_new(a.base, SIGTERM, signal_cb, &a);
	evsignal_add(a.sigint_ev, NULL);
	evsignal_add(a.sigterm_ev, NULL);
	a.live = xcalloc((size_t)a.jobs, sizeof *a.live);
	a.progress = isatty(STDERR_FILENO) && !ctl->format_set;
	/* The target's row goes in with the first runs: one commit, one sync
	 * of the WAL fewer. */
	if (batch(&a) < 0)
		goto out;
	if (flaky_store_target(a.store, target, command, a.spec.dir,
	    &a.target_id, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		goto out;
	}
	t0 = flaky_mono_us();

	launch(&a);
	if (a.running > 0)
		event_base_dispatch(a.base);
	progress(&a, 1);
	write_pending(&a);
	if (evtimer_pending(a.commit_ev, NULL))
		event_del(a.commit_ev);
	/* After a second ^C runs may still be live: they stay "running". */
	if (starts(&a) < 0)
		a.failed = 1;
	else if (flaky_store_commit(a.store, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		a.failed = 1;
	}
	a.tx_open = 0;

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
	if (a.first_run_id == 0) {
		/* nothing was recorded */
		goto out;
	}
	if (flaky_store_run_counts(a.store, &q, &head.runs, err,
	    sizeof err) < 0 || flaky_store_test_stats(a.store, &q, &rows,
	    &nrows, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		goto out;
	}
	sort_rows(rows, nrows);
	print_report(ctl, &head, rows, nrows);
	if (head.runs.done + head.runs.timeout > 0 && nrows == 0)
		log_warnx("no test results were recognized in the output "
		    "(exit code and duration are recorded); see `sqlite3 %s "
		    "\"SELECT error FROM runs ORDER BY id DESC LIMIT 1\"`",
		    ctl_db_path(ctl));
	if (a.failed)
		ret = EXIT_ERROR;
	else if (fail_mask && gate_tripped(rows, nrows, fail_mask))
		ret = EXIT_FOUND;
	else
		ret = EXIT_OK;
out:
	flaky_test_rows_free(rows, nrows);
	if (a.commit_ev != NULL)
		event_free(a.commit_ev);
	if (a.sigint_ev != NULL)
		event_free(a.sigint_ev);
	if (a.sigterm_ev != NULL)
		event_free(a.sigterm_ev);
	if (a.sp != NULL && flaky_spawner_free(a.sp) < 0)
		log_warnx("runs still in flight at exit");
	if (a.base != NULL)
		event_base_free(a.base);
	flaky_store_close(a.store);
	tally_free(&a);
	free(a.live);
	free(target);
	free(command);
	free(revision);
	free(resolved);
	flaky_command_clear(&cmd);
	return ret;
}
