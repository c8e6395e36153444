/* flakyctl ci [options] -- COMMAND (or DIRECTORY): the retry button that
 * keeps the evidence (issue 30, docs/ci.md). The suite runs once as
 * analyze runs it; the tests that failed are retried alone, each until it
 * passes or had --retries, within --budget; with --new-tests N, the tests
 * the default branch never reported (or whose file changed) are rerun
 * until one fails or they passed N runs. Every attempt is stored in the
 * database or uploaded to a server. Exit 0 when every failure passed on a
 * retry or is quarantined, 1 when a test failed every attempt or a new
 * test failed, 2 when the evidence is incomplete (a crash, an abort, a
 * summary that disagrees, a retry that ran other tests, an upload that
 * failed): never a wrong green. */
#include "buildconf.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ci.h"
#include "classify/classify.h"
#include "diag.h"
#include "flakyctl.h"
#include "log.h"
#include "util/util.h"

static int	cmd_ci(struct ctl *, int, char **);

static const struct cmd_option ci_options[] = {
	{ "retries", 'r', 0, "N", "retries of each failed test, 0 to 20; 0 "
	    "only records (default 3)" },
	{ "budget", 'B', 0, "D", "start no retry after D (90s, 10m; default a "
	    "quarter of the first run's time, at least 10s)" },
	{ "new-tests", 'N', 0, "N", "rerun new tests until one fails or they "
	    "passed N runs, 2 to 1000 (default none)" },
	{ "default-branch", 0, 'D', "NAME", "the branch new tests are new to "
	    "(default $CI_DEFAULT_BRANCH, $GITHUB_BASE_REF, origin's HEAD, "
	    "then main)" },
	{ "quarantine-file", 0, 'q', "FILE", "test ids quarantined besides "
	    "the server's or the database's, one a line (default none)" },
	{ "server", 'S', 0, "URL", "http(s)://HOST[:PORT] to upload to and "
	    "read the quarantine from, or a database (default $FLAKY_SERVER, "
	    "else the database)" },
	{ "token-file", 0, 'k', "FILE", "the upload token (default "
	    "$FLAKY_TOKEN)" },
	{ "read-token-file", 0, 'K', "FILE", "a read token for the server's "
	    "lists (default $FLAKY_READ_TOKEN, else the upload token)" },
	{ "ca-file", 0, 'c', "FILE", "https: the CA that signed the server's "
	    "certificate (default the system's)" },
	{ "target", 'T', 0, "NAME", "the runs' target (default the project's "
	    "name and its runner)" },
	{ "revision", 0, 'R', "REV", "the revision tested (default the CI's "
	    "commit, else git HEAD)" },
	{ "branch", 'b', 0, "NAME", "the branch (default the CI's, else "
	    "git's)" },
	{ "pr", 0, 'P', "ID", "the pull or merge request (default the CI's)" },
	{ "job", 'j', 0, "NAME", "the CI job (default the CI's)" },
	{ "job-url", 0, 'U', "URL", "the job's page (default the CI's)" },
	{ "attempt", 0, 'A', "N", "the job's attempt, 1 the first (default "
	    "the CI's)" },
	{ "timeout", 't', 0, "D", "end a run's process group after D (default "
	    "none)" },
	CMD_OPTION_BOX,
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_ci_entry = {
	.name = "ci",
	.usage = "ci [--retries N] [--budget D] [--new-tests N] "
	    "[--default-branch NAME] [--quarantine-file FILE] [--server URL] "
	    "[--token-file FILE] [--read-token-file FILE] [--ca-file FILE] "
	    "[--target NAME] [--revision REV] [--branch NAME] [--pr ID] "
	    "[--job NAME] [--job-url URL] [--attempt N] [--timeout D] "
	    "[--box NAME] (DIRECTORY | [--] COMMAND...)",
	.summary = "Run a CI step's tests, retry the failed ones alone, keep "
	    "every attempt.",
	.example = "flakyctl ci -- pytest tests/\n"
	    "flakyctl ci --format github --new-tests 10 -- npx jest\n"
	    "flakyctl ci --server https://flaky.example:8470 tests/",
	.options = ci_options,
	.flags = CMD_STOP_AT_OPERAND | CMD_WRITES,
	.exec = cmd_ci,
};

/* One option's value into c; -1 after a usage error. */
static int
ci_option(struct ci *c, int opt, const char *arg)
{
	long long	 v;

	switch (opt) {
	case 'r':
		if (flaky_parse_int(arg, 0, CI_MAX_RETRIES, &v) < 0) {
			ctl_usage_error("ci", "--retries: expected 0 to %d, "
			    "got '%s'", CI_MAX_RETRIES, arg);
			return -1;
		}
		c->retries = (int)v;
		break;
	case 'N':
		if (flaky_parse_int(arg, 2, CI_MAX_NEW_RUNS, &v) < 0) {
			ctl_usage_error("ci", "--new-tests: expected 2 to %d "
			    "runs, got '%s'", CI_MAX_NEW_RUNS, arg);
			return -1;
		}
		c->new_runs = (int)v;
		break;
	case 'A':
		if (flaky_parse_int(arg, 1, 10000, &v) < 0) {
			ctl_usage_error("ci", "--attempt: expected 1 to 10000, "
			    "got '%s'", arg);
			return -1;
		}
		c->m.attempt = (int)v;
		break;
	case 'B':
	case 't':
		if (flaky_parse_duration(arg, opt == 'B' ? &c->budget_ms :
		    &c->job.spec.timeout_ms) < 0 || (opt == 'B' ?
		    c->budget_ms : c->job.spec.timeout_ms) <= 0) {
			ctl_usage_error("ci", "--%s: expected a duration such "
			    "as 90s, 10m or 1h30m, got '%s'", opt == 'B' ?
			    "budget" : "timeout", arg);
			return -1;
		}
		break;
	case 'D': c->default_branch = arg; break;
	case 'q': c->quarantine_file = arg; break;
	case 'S': c->server = arg; break;
	case 'k': c->token_file = arg; break;
	case 'K': c->read_token_file = arg; break;
	case 'c': c->ca_file = arg; break;
	case 'T': c->target_arg = arg; break;
	case 'R': c->rev_arg = arg; break;
	case 'b': c->m.branch = arg; break;
	case 'P': c->m.pr = arg; break;
	case 'j': c->m.job = arg; break;
	case 'U': c->m.job_url = arg; break;
	}
	return 0;
}

/* The CI's variables under the options; the revision, else git's. */
static void
where(struct ci *c)
{
	extern char	**environ;

	if (flaky_ci_from_env(environ, &c->env)) {
		c->m.ci = c->m.ci ? c->m.ci : c->env.ci;
		c->m.branch = c->m.branch ? c->m.branch : c->env.branch;
		c->m.pr = c->m.pr ? c->m.pr : c->env.pr;
		c->m.job = c->m.job ? c->m.job : c->env.job;
		c->m.job_url = c->m.job_url ? c->m.job_url : c->env.job_url;
		c->m.attempt = c->m.attempt ? c->m.attempt : c->env.attempt;
	}
	if (c->rev_arg != NULL)
		c->revision = xstrdup(c->rev_arg);
	else if (c->env.revision != NULL)
		c->revision = xstrdup(c->env.revision);
	else if (flaky_revision_git(c->dir, &c->revision) == -ENOMEM)
		fatalx("out of memory");
	ci_branches(c);
}

/* The database the runs go to: the server's file or URI, the private
 * one of an upload (removed at the end), or flakyctl's. */
static int
open_store(struct ci *c)
{
	char	 err[1024], *path = NULL;
	const char *db;

	if (c->http) {
		char	 tmpl[] = "/tmp/flaky-ci-XXXXXX";
		const char *t = getenv("TMPDIR");

		if (t != NULL && *t == '/')
			xasprintf(&c->tmpdir, "%s/flaky-ci-XXXXXX", t);
		else
			c->tmpdir = xstrdup(tmpl);
		if (mkdtemp(c->tmpdir) == NULL) {
			fprintf(stderr, "flakyctl ci: %s: %s\n", c->tmpdir,
			    strerror(errno));
			free(c->tmpdir);
			c->tmpdir = NULL;
			return -1;
		}
		xasprintf(&path, "%s/flaky.db", c->tmpdir);
		db = path;
	} else
		db = c->server != NULL ? c->server : ctl_db_path(c->ctl);
	if (flaky_store_open(db, 0, &c->store, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl ci: %s\n", err);
		free(path);
		return -1;
	}
	free(path);
	ctl_store_box(c->ctl, c->store, 1);
	if (diag_load_signatures(c->ctl, c->store, &c->cls) < 0)
		return -1;
	flaky_store_set_busy_timeout(c->store, 5 * 60 * 1000);
	if (flaky_store_target(c->store, c->target, c->command, c->dir,
	    &c->job.target_id, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl ci: %s\n", err);
		return -1;
	}
	return 0;
}

/* The rounds of retries and new-test reruns, while tests are open and
 * the budget lasts (a round that started ends: --timeout bounds it). */
static void
rounds(struct ci *c)
{
	const char	**open;
	char		**argv, **envp, err[1024], *why;
	int64_t		 t0 = flaky_mono_us(), end_us;
	size_t		 n;

	c->budget_used_ms = c->budget_ms > 0 ? c->budget_ms :
	    c->first_wall_us / 4000 > CI_BUDGET_MIN_MS ?
	    c->first_wall_us / 4000 : CI_BUDGET_MIN_MS;
	end_us = t0 + c->budget_used_ms * 1000;
	open = xcalloc(c->retry.nt + 1, sizeof *open);
	if (c->retry.too_many)
		c->no_retry_why = "more than 100 tests failed at once, no "
		    "flakiness a retry would show";
	else if (c->retries == 0)
		c->no_retry_why = "--retries 0 only records";
	while (!c->signal && c->nruns < c->maxruns &&
	    (n = flaky_retry_open_tests(&c->retry, open, c->retry.nt)) > 0) {
		if (flaky_mono_us() >= end_us) {
			c->stopped = "the budget ran out";
			c->no_retry_why = c->no_retry_why ? c->no_retry_why :
			    c->stopped;
			break;
		}
		if (flaky_command_select(&c->cmd, c->dir, (char *const *)open,
		    n, &argv, &envp, err, sizeof err) < 0) {
			log_warnx("%s: no retry: %s", c->cmd.runner ?
			    c->cmd.runner : c->cmd.argv[0], err);
			c->stopped = c->no_retry_why = "the runner cannot run "
			    "only the failed tests";
			break;
		}
		(void)ci_run_one(c, argv, envp, (int)n, c->retry.rounds + 1);
		flaky_command_free_vec(argv);
		flaky_command_free_vec(envp);
		if ((why = ci_run_problem(c, &c->runs[c->nruns - 1])) != NULL) {
			xasprintf(&c->incomplete, "retry round %d: %s",
			    c->retry.rounds + 1, why);
			free(why);
			break;
		}
		if (flaky_retry_count(&c->retry, &c->runs[c->nruns - 1].res,
		    err, sizeof err) < 0) {
			xasprintf(&c->incomplete, "retry round %d: %s",
			    c->retry.rounds + 1, err);
			c->no_retry_why = "its retry was refused";
			break;
		}
	}
	c->retry_wall_us = flaky_mono_us() - t0;
	free(open);
}

/* The exit: 2 when the evidence is incomplete, 1 when a test failed the
 * step, else 0. The server's or database's quarantine of failed tests is
 * taken from what it answered, too. */
static int
decide(struct ci *c)
{
	int	 fails = 0;

	for (size_t i = 0; i < c->retry.nt; i++) {
		struct flaky_retry_test *t = &c->retry.t[i];
		const struct ci_known *k = ci_known_of(c, t->name);

		if (k != NULL && k->quarantined && t->failures > 0)
			t->quarantined = 1;
		fails |= flaky_retry_fails_step(flaky_retry_verdict(&c->retry,
		    t));
	}
	if (c->signal)
		return 128 + c->signal;
	if (c->incomplete != NULL)
		return EXIT_ERROR;
	return fails ? EXIT_FOUND : EXIT_OK;
}

/* The first run, the rounds, the evidence stored or sent, the exit. */
static int
run_all(struct ci *c)
{
	char	*why;

	if (ci_runs_open(c) < 0)
		return EXIT_ERROR;
	c->job.kind = FLAKY_KIND_SUITE;
	c->job.trigger = "ci";
	c->job.revision = c->revision;
	c->job.spec.dir = c->dir;
	(void)ci_run_one(c, c->cmd.argv, c->cmd.envp, 0, 0);
	c->first_wall_us = c->runs[0].wall_us;
	if ((why = ci_run_problem(c, &c->runs[0])) != NULL)
		c->incomplete = why;
	else if (!c->signal) {
		if (flaky_retry_first(&c->retry, &c->runs[0].res, ci_is_new,
		    ci_is_quarantined, c) < 0)
			fatalx("out of memory");
		rounds(c);
	}
	if (ci_runs_flush(c) < 0 && c->incomplete == NULL)
		xasprintf(&c->incomplete, "the runs could not all be stored");
	if (c->http)
		(void)ci_upload(c);
	else
		(void)ci_store_local(c);
	c->exit = decide(c);
	if (!c->signal)
		ci_print(c, stdout);
	else
		log_warnx("stopped by %s: %d run%s stored, no verdict",
		    strsignal(c->signal), c->nruns, c->nruns == 1 ? "" : "s");
	return c->exit;
}

/* Free what the call holds; the private database of an upload goes. */
static void
ci_free(struct ci *c)
{
	ci_runs_close(c);
	flaky_store_close(c->store);
	flaky_classifier_free(c->cls);
	flaky_retry_free(&c->retry);
	ci_lists_free(c);
	if (c->tmpdir != NULL) {
		const char *const rm[] = { "flaky.db", "flaky.db-wal",
			"flaky.db-shm", "flaky.db-journal", NULL };
		char	 p[PATH_MAX];

		for (size_t i = 0; rm[i] != NULL; i++) {
			snprintf(p, sizeof p, "%s/%s", c->tmpdir, rm[i]);
			unlink(p);
		}
		if (rmdir(c->tmpdir) < 0)
			log_warn("%s", c->tmpdir);
		free(c->tmpdir);
	}
	free(c->target);
	free(c->command);
	free(c->revision);
	free(c->branch);
	free(c->incomplete);
	flaky_command_clear(&c->cmd);
}

static int
cmd_ci(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct flaky_command_opts copts = { 1 };
	struct ci	 c;
	char		 cwd[PATH_MAX], err[512];
	const char	*dir_arg = NULL;
	int		 opt, ret = EXIT_ERROR;

	memset(&c, 0, sizeof c);
	c.ctl = ctl;
	c.retries = 3;
	c.server = getenv("FLAKY_SERVER");
	if (c.server != NULL && *c.server == '\0')
		c.server = NULL;
	cmd_getopt_init(&g, &cmd_ci_entry, ctl, argc, argv);
again:
	while ((opt = cmd_getopt(&g)) > 0)
		if (ci_option(&c, opt, optarg) < 0)
			return EXIT_ERROR;
	if (opt < 0)
		return g.exit;
	if (ctl_dir_operand(argc, argv, &dir_arg))
		goto again;
	argc -= optind;
	argv += optind;
	if (dir_arg != NULL && argc > 0) {
		ctl_usage_error("ci", "'%s' after the directory %s: give "
		    "either a directory or a command after --", argv[0],
		    dir_arg);
		return EXIT_ERROR;
	}
	if (dir_arg == NULL && argc == 0) {
		ctl_usage_error("ci", "no command to run: give a directory, or "
		    "a command (after --)");
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "ci", 1 << FORMAT_TABLE | 1 << FORMAT_JSON |
	    1 << FORMAT_GITHUB | 1 << FORMAT_JUNIT) < 0)
		return EXIT_ERROR;
	if (flaky_ci_meta_check(&c.m, err, sizeof err) < 0) {
		ctl_usage_error("ci", "%s", err);
		return EXIT_ERROR;
	}
	c.http = c.server != NULL && (strncmp(c.server, "http://", 7) == 0 ||
	    strncmp(c.server, "https://", 8) == 0);
	if (getcwd(cwd, sizeof cwd) == NULL)
		fatal("getcwd");
	if (ctl_prepare_command("ci", dir_arg, argv, &copts, &c.cmd) < 0)
		goto out;
	c.dir = c.cmd.dir != NULL ? c.cmd.dir : cwd;
	c.target = c.target_arg ? xstrdup(c.target_arg) :
	    default_target(&c.cmd, c.dir);
	c.command = join_argv(c.cmd.env_set, c.cmd.argv);
	c.maxruns = 1 + (c.retries > c.new_runs - 1 ? c.retries :
	    c.new_runs - 1);
	flaky_retry_init(&c.retry, c.retries, c.new_runs);
	fprintf(stderr, "flakyctl ci: running `%s` in %s (target %s)\n",
	    c.command, c.dir, c.target);
	where(&c);
	if (open_store(&c) < 0 || ci_lists(&c) < 0)
		goto out;
	c.job.runner_version = flaky_runner_version(&c.cmd, c.dir);
	{
		char	*resolved = NULL;

		if (flaky_resolve_command(c.cmd.argv[0], c.dir, getenv("PATH"),
		    &resolved, err, sizeof err) == 0)
			c.job.spec.path = resolved;
		ret = run_all(&c);
		free(resolved);
	}
	free((char *)c.job.runner_version);
out:
	ci_free(&c);
	return ret;
}
