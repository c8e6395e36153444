/* flakyctl bisect TEST --good REV --bad REV [--target NAME | -- COMMAND]:
 * the first revision of good..bad (first parents) at which TEST turned
 * flaky. Each revision is checked out in a temporary git worktree, never
 * in the user's tree, and the test is rerun there (alone when the runner
 * can select it) until it fails (flaky) or passes the runs that tell it
 * from the rate measured at bad (not flaky at that rate, 95%). The runs
 * are stored through the run lifecycle with their revision, trigger
 * "bisect", as evidence only: an old revision's outcomes count in no
 * rate of the target (docs/triage.md). */
#include "buildconf.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "classify/classify.h"
#include "config/config.h"
#include "diag.h"
#include "log.h"
#include "pipeline/pipeline.h"
#include "run/run.h"
#include "stats/stats.h"
#include "bisect.h"

#define FIXED_RUNS	100	/* per revision: what bisect is compared to */

/* For atexit: a worktree is removed whatever way flakyctl ends. */
static struct bisect	*bisect_live;

/* Remove the worktree (and its administrative files) if there is one. */
static void
tree_remove(struct bisect *bs)
{
	if (bs->at < 0)
		return;
	if (ctl_git(bs->top, NULL, (const char *[]){ "worktree", "remove",
	    "--force", "--force", bs->tree, NULL }) != 0)
		log_warnx("git worktree remove %s failed", bs->tree);
	ctl_git(bs->top, NULL, (const char *[]){ "worktree", "prune", NULL });
	bs->at = -1;
}

/* At exit, however it came: no worktree and no directory left. */
static void
bisect_atexit(void)
{
	struct bisect	*bs = bisect_live;

	if (bs == NULL)
		return;
	bisect_live = NULL;
	tree_remove(bs);
	if (bs->tmp != NULL && rmdir(bs->tmp) == -1 && errno != ENOENT)
		log_warn("rmdir %s", bs->tmp);
}

/* Check revision i out in the worktree (a new one per revision: nothing a
 * run leaves behind reaches the next). */
static int
tree_checkout(struct bisect *bs, long i)
{
	if (bs->at == i)
		return 0;
	tree_remove(bs);
	if (ctl_git(bs->top, NULL, (const char *[]){ "worktree", "add",
	    "--detach", "--quiet", bs->tree, bs->b.v[i].rev, NULL }) != 0) {
		log_warnx("git worktree add %s %s failed", bs->tree,
		    bs->b.v[i].rev);
		/* a half-made one is removed all the same */
		bs->at = i;
		tree_remove(bs);
		return -1;
	}
	bs->at = i;
	free(bs->rundir);
	xasprintf(&bs->rundir, "%s/%s", bs->tree, bs->prefix);
	return 0;
}

/* The test's outcome in a run: 1 failed, 0 passed, -1 not reported. */
int
bisect_outcome(const char *test, const struct flaky_results *res)
{
	int	 o = -1;

	for (size_t i = 0; res != NULL && i < res->n; i++) {
		const struct flaky_result *r = &res->v[i];

		if (strcmp(r->test, test) != 0)
			continue;
		if (FLAKY_FAILED(r->outcome))
			o = 1;
		else if ((r->outcome == FLAKY_PASS ||
		    r->outcome == FLAKY_XPASS) && o < 0)
			o = 0;
	}
	return o;
}

static void	bisect_next(struct bisect *);

/* A run ended: count it for its revision, start the next. */
static void
bisect_ended(struct flaky_run *run, void *job_arg, void *arg)
{
	struct bisect	*bs = arg;
	long		 i = (long)(intptr_t)job_arg;

	bs->live = NULL;
	if (run->rec.status == FLAKY_RUN_INTERRUPTED ||
	    run->rec.status == FLAKY_RUN_STOPPED)
		;	/* ^C: it tells nothing */
	else if (bs->seen == NULL || !bs->seen(bs, i, &run->results))
		bs->count(bs, i, bisect_outcome(bs->test, &run->results));
	bisect_next(bs);
}

/* A refused write is retried; another writer's lock without a word. */
static void
bisect_store_error(int code, const char *err, size_t waiting, void *arg)
{
	struct bisect	*bs = arg;

	(void)waiting;
	if (code == -EBUSY)
		return;
	if (!bs->store_told)
		log_warnx("%s (the finished runs are kept and retried)", err);
	bs->store_told = 1;
	bs->failed = bs->stopping = 1;
}

/* Start the next run, at the revision the search asks for, or stop. */
static void
bisect_next(struct bisect *bs)
{
	struct flaky_job job;
	char	 err[1024];
	long	 i;

	for (;;) {
		if (bs->stopping || (i = bs->next(bs)) < 0) {
			event_base_loopbreak(bs->base);
			return;
		}
		if (bs->top != NULL && tree_checkout(bs, i) < 0) {
			bs->failed = bs->stopping = 1;
			continue;
		}
		memset(&job, 0, sizeof job);
		/* the run that resolves TEST is the suite's */
		job.spec.argv = bs->resolving ? bs->suite_argv : bs->argv;
		job.spec.envp = bs->envp;
		job.spec.dir = bs->rundir;
		job.spec.timeout_ms = bs->timeout_ms;
		job.target_id = bs->target_id;
		job.kind = bs->alone && !bs->resolving ? FLAKY_KIND_ALONE :
		    FLAKY_KIND_SUITE;
		job.trigger = bs->trigger;
		job.revision = bs->top != NULL ? bs->b.v[i].rev : bs->revision;
		job.evidence_only = bs->evidence_only;
		job.arg = (void *)(intptr_t)i;
		if (flaky_pipeline_start(bs->pl, &job, &bs->live, err,
		    sizeof err) == 0)
			return;
		/* Not even started here (its directory is not there yet):
		 * the test is not there either. */
		log_warnx("%.12s: %s", job.revision ? job.revision : "-",
		    err);
		bs->count(bs, i, -1);
	}
}

/* SIGINT or SIGTERM: end the run in flight, then clean up. */
static void
bisect_signal(evutil_socket_t sig, short what, void *arg)
{
	struct bisect	*bs = arg;

	(void)what;
	bs->stopping = 1;
	bs->signal = (int)sig;
	if (bs->live != NULL)
		flaky_run_stop(bs->live);
	else
		event_base_loopbreak(bs->base);
}

/* Log an escapee before it is killed. */
static void
bisect_stray(long pid, void *arg)
{
	(void)arg;
	log_info("killing process %ld, left behind by a run", pid);
}

/* The revisions of good..bad along first parents, oldest first, with
 * their subjects. */
static int
candidates(struct bisect *bs, const char *bad, int64_t max_runs)
{
	char	*range, *out, *line, *save = NULL;
	char	**revs = NULL;
	size_t	 n = 0, cap = 0;
	int	 r;

	xasprintf(&range, "%s..%s", bs->good, bad);
	r = ctl_git(bs->top, &out, (const char *[]){ "log", "--first-parent",
	    "--reverse", "--format=%H %s", range, "--", NULL });
	free(range);
	if (r != 0) {
		fprintf(stderr, "flakyctl bisect: git log failed in %s\n",
		    bs->top);
		free(out);
		return -1;
	}
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char	*sp = strchr(line, ' ');

		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			revs = xreallocarray(revs, cap, sizeof *revs);
			bs->subject = xreallocarray(bs->subject, cap,
			    sizeof *bs->subject);
		}
		if (sp != NULL)
			*sp++ = '\0';
		revs[n++] = line;
		bs->subject[bs->nsubject++] = xstrdup(sp != NULL ? sp : "");
	}
	r = flaky_bisect_init(&bs->b, revs, n, max_runs);
	free(revs);
	free(out);
	if (r == -ENOMEM)
		fatalx("out of memory");
	if (r < 0) {
		fprintf(stderr, "flakyctl bisect: no revision between --good "
		    "and --bad along first parents: expected --good to be an "
		    "ancestor of --bad\n");
		return -1;
	}
	return 0;
}

/* The command and directory: the one after --, else the config's target
 * (through its isolate: template when it has one). */
int
bisect_command(struct bisect *bs, char **cmdv, const char *target_arg,
    char **target, char **dir, struct flaky_command *cmd)
{
	extern char	**environ;
	struct flaky_config *cfg = NULL;
	const struct flaky_target *t;
	const char	*path;
	char		 err[1024], cwd[PATH_MAX];

	if (cmdv[0] != NULL) {
		struct flaky_command_opts copts = { 0 };

		if (flaky_command_complete(cmdv, environ, &copts, cmd, err,
		    sizeof err) < 0) {
			fprintf(stderr, "flakyctl bisect: %s\n", err);
			return -1;
		}
		if (getcwd(cwd, sizeof cwd) == NULL)
			fatal("getcwd");
		bs->suite_argv = bisect_argv_copy(cmd->argv);
		bs->alone = bisect_select(cmd, bs->test, &bs->select_at);
		bs->argv = cmd->argv;
		bs->envp = cmd->envp;
		*dir = xstrdup(cwd);
		*target = target_arg != NULL ? xstrdup(target_arg) :
		    default_target(cmd, cwd);
		return 0;
	}
	if ((path = ctl_config_path(bs->ctl)) == NULL ||
	    flaky_config_load(path, FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err,
	    sizeof err) < 0 || (t = flaky_config_target(cfg, target_arg)) ==
	    NULL) {
		fprintf(stderr, "flakyctl bisect: --target %s: expected a "
		    "target of the config%s%s, or a command after --\n",
		    target_arg, path != NULL ? " " : "", path ? path : "");
		flaky_config_free(cfg);
		return -1;
	}
	cmd->argv = xcalloc(4, sizeof *cmd->argv);
	bs->select_at = -1;
	if (t->isolate != NULL) {
		/* the test id reaches the command as $FLAKY_TEST only */
		if ((cmd->argv[2] = flaky_confirm_expand(t->isolate)) == NULL)
			fatalx("out of memory");
		if (setenv("FLAKY_TEST", bs->test, 1) == -1)
			fatal("setenv");
		bs->alone = bs->select_env = 1;
	} else
		cmd->argv[2] = join_argv(NULL, t->argv);
	cmd->argv[0] = xstrdup("/bin/sh");
	cmd->argv[1] = xstrdup("-c");
	bs->suite_argv = xcalloc(4, sizeof *bs->suite_argv);
	bs->suite_argv[0] = xstrdup("/bin/sh");
	bs->suite_argv[1] = xstrdup("-c");
	bs->suite_argv[2] = join_argv(NULL, t->argv);
	bs->argv = cmd->argv;
	bs->timeout_ms = t->timeout_ms;
	*dir = xstrdup(t->dir);
	*target = xstrdup(target_arg);
	flaky_config_free(cfg);
	return 0;
}

/* Where the command runs in the repository, and both revisions. */
static int
repository(struct bisect *bs, const char *dir, const char *good,
    const char *bad, char **badrev)
{
	if (ctl_git(dir, &bs->top, (const char *[]){ "rev-parse",
	    "--show-toplevel", NULL }) != 0 || ctl_git(dir, &bs->prefix,
	    (const char *[]){ "rev-parse", "--show-prefix", NULL }) != 0) {
		fprintf(stderr, "flakyctl bisect: %s: expected a directory "
		    "in a git work tree\n", dir);
		return -1;
	}
	if ((bs->good = ctl_git_commit(bs->top, good)) == NULL) {
		fprintf(stderr, "flakyctl bisect: --good: expected a commit "
		    "of %s, got '%s'\n", bs->top, good);
		return -1;
	}
	if ((*badrev = ctl_git_commit(bs->top, bad)) == NULL) {
		fprintf(stderr, "flakyctl bisect: --bad: expected a commit "
		    "of %s, got '%s'\n", bs->top, bad);
		return -1;
	}
	return 0;
}

/* The evidence per revision tested, and the one named. */
static void
print_table(const struct bisect *bs, long first)
{
	const struct flaky_bisect *b = &bs->b;
	int64_t	 runs = flaky_bisect_runs(b);
	int64_t	 fixed = flaky_bisect_fixed_runs(b, FIXED_RUNS);

	printf("%s: %zu revision%s after %.12s, %s\n", bs->test, b->n,
	    b->n == 1 ? "" : "s", bs->good, bs->alone ? "run alone" :
	    "in the whole suite");
	if (b->need > 0)
		printf("at bad: %lld of %lld %sruns failed (p = %.3f): %lld "
		    "passes in a row say \"not flaky at rate p\" (95%%)\n",
		    (long long)b->bad_failures, (long long)b->bad_runs,
		    bs->stored_rate ? "stored " : "", b->p,
		    (long long)b->need);
	printf("\n%-12s %5s %5s %8s  %-10s %s\n", "REVISION", "ORDER", "RUNS",
	    "FAILURES", "VERDICT", "SUBJECT");
	for (size_t i = 0; i < b->n; i++) {
		const struct flaky_bisect_rev *r = &b->v[i];

		if (r->order == 0)
			continue;
		printf("%-12.12s %5d %5lld %8lld  %-10s %s\n", r->rev,
		    r->order, (long long)r->runs, (long long)r->failures,
		    flaky_bisect_verdict_name(r->verdict), bs->subject[i]);
	}
	if (first >= 0)
		printf("\nfirst flaky revision: %s %s\n", b->v[first].rev,
		    bs->subject[first]);
	if (first == 0)
		printf("(the first after --good, which is taken as not flaky "
		    "without runs: `flakyctl verify` in a checkout of it can "
		    "prove that)\n");
	printf("runs: %lld; a fixed %d per revision tested: %lld "
	    "(ratio %.3f)\n", (long long)runs, FIXED_RUNS, (long long)fixed,
	    fixed > 0 ? (double)runs / (double)fixed : 0.0);
}

/* The same as JSON (docs/json.md). */
static void
print_json(const struct bisect *bs, long first)
{
	const struct flaky_bisect *b = &bs->b;
	int64_t	 runs = flaky_bisect_runs(b);
	int64_t	 fixed = flaky_bisect_fixed_runs(b, FIXED_RUNS);
	int	 n = 0;

	printf("{\"test\": ");
	json_string(stdout, bs->test);
	printf(", \"good\": \"%s\", \"bad\": \"%s\", \"candidates\": %zu, "
	    "\"alone\": %s, \"bad_runs\": %lld, \"bad_failures\": %lld, "
	    "\"rate_from\": \"%s\", \"p\": %.6g, \"passes_needed\": %lld, \"confidence\": 0.95, "
	    "\"first_flaky\": ", bs->good, b->v[b->n - 1].rev, b->n,
	    bs->alone ? "true" : "false", (long long)b->bad_runs,
	    (long long)b->bad_failures, bs->stored_rate ? "stored" :
	    "measured", b->p, (long long)b->need);
	if (first >= 0) {
		printf("{\"revision\": \"%s\", \"subject\": ", b->v[first].rev);
		json_string(stdout, bs->subject[first]);
		printf("}");
	} else
		printf("null");
	printf(", \"runs\": %lld, \"fixed_runs\": %lld, "
	    "\"fixed_per_revision\": %d, \"ratio\": %.6g, \"revisions\": [",
	    (long long)runs, (long long)fixed, FIXED_RUNS,
	    fixed > 0 ? (double)runs / (double)fixed : 0.0);
	for (size_t i = 0; i < b->n; i++) {
		const struct flaky_bisect_rev *r = &b->v[i];

		if (r->order == 0)
			continue;
		printf("%s\n  {\"revision\": \"%s\", \"subject\": ",
		    n++ ? "," : "", r->rev);
		json_string(stdout, bs->subject[i]);
		printf(", \"order\": %d, \"runs\": %lld, \"failures\": %lld, "
		    "\"verdict\": \"%s\"}", r->order, (long long)r->runs,
		    (long long)r->failures,
		    flaky_bisect_verdict_name(r->verdict));
	}
	printf("\n]}\n");
}

static int	cmd_bisect(struct ctl *, int, char **);

static const struct cmd_option bisect_options[] = {
	{ "good", 0, 'g', "REV", "a revision at which the test was not "
	    "flaky (required)" },
	{ "bad", 0, 'b', "REV", "a later revision at which it is flaky "
	    "(required)" },
	{ "target", 0, 'T', "NAME", "the config's target (its command, "
	    "directory and isolate: template); with a command after --, "
	    "the name the runs are stored under (default: as analyze "
	    "names it)" },
	{ "max-runs", 0, 'n', "N", "at most N runs at bad to measure its "
	    "rate (default 100)" },
	{ "timeout", 0, 't', "D", "end a run after D (default: the "
	    "target's, else none)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_bisect_entry = {
	.name = "bisect",
	.usage = "bisect TEST --good REV --bad REV [--target NAME] "
	    "[--max-runs N] [--timeout D] [-- COMMAND]",
	.summary = "Find the first revision at which a test turned flaky.",
	.example = "flakyctl bisect tests/test_api.py::test_retry --good v1.2 "
	    "--bad main -- pytest\nflakyctl bisect test_retry --good HEAD~40 "
	    "--bad HEAD --target shop-unit",
	.options = bisect_options,
	.flags = CMD_WRITES,
	.exec = cmd_bisect,
};

/* The search's rule, for bisect_next: the run at bad that resolves
 * TEST first when one is due. */
static long
search_next(struct bisect *bs)
{
	if (bs->resolving)
		return (long)bs->b.n - 1;
	return flaky_bisect_next(&bs->b);
}

/* Count a run for the search. */
static void
search_count(struct bisect *bs, long i, int o)
{
	flaky_bisect_count(&bs->b, (size_t)i, o);
}

/* Parse the options into bs and the rest; -1 after a usage error. */
static int
bisect_args(struct ctl *ctl, int argc, char **argv, const char **good,
    const char **bad, const char **target, int64_t *max_runs,
    int64_t *timeout_ms, char ***cmdv, const char **test, int *exit)
{
	struct cmd_getopt g;
	long long	 v;
	int		 ch, dashes = 0;

	cmd_getopt_init(&g, &cmd_bisect_entry, ctl, argc, argv);
	while ((ch = cmd_getopt(&g)) > 0) {
		if (ch == 'g')
			*good = optarg;
		else if (ch == 'b')
			*bad = optarg;
		else if (ch == 'T')
			*target = optarg;
		else if (ch == 'n') {
			if (flaky_parse_int(optarg, 1, 100000, &v) < 0) {
				ctl_usage_error("bisect", "--max-runs: expected "
				    "a number from 1 to 100000, got '%s'",
				    optarg);
				return -1;
			}
			*max_runs = v;
		} else if (ch == 't' && (flaky_parse_duration(optarg,
		    timeout_ms) < 0 || *timeout_ms <= 0)) {
			ctl_usage_error("bisect", "--timeout: expected a "
			    "duration such as 10m, got '%s'", optarg);
			return -1;
		}
	}
	*exit = g.exit;
	if (ch < 0)
		return -1;
	*exit = EXIT_ERROR;
	for (int i = 0; i < argc; i++)
		dashes |= strcmp(argv[i], "--") == 0;
	if (optind >= argc) {
		ctl_usage_error("bisect", "expected the test to bisect (its "
		    "id, as report shows it)");
		return -1;
	}
	*test = argv[optind];
	*cmdv = argv + optind + 1;
	if ((*cmdv)[0] != NULL && !dashes) {
		ctl_usage_error("bisect", "'%s' after the test: give the "
		    "command after --", (*cmdv)[0]);
		return -1;
	}
	if (*good == NULL || *bad == NULL) {
		ctl_usage_error("bisect", "expected --good REV and --bad REV");
		return -1;
	}
	if ((*cmdv)[0] == NULL && *target == NULL) {
		ctl_usage_error("bisect", "expected --target NAME or a command "
		    "after --");
		return -1;
	}
	if (*target != NULL && (**target == '\0' || strspn(*target,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	    "._-") != strlen(*target))) {
		ctl_usage_error("bisect", "--target: expected a name of "
		    "letters, digits, '.', '_' and '-', got '%s'", *target);
		return -1;
	}
	return ctl_check_format(ctl, "bisect", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON);
}

/* The test's stored evidence (bisect.h). */
struct flaky_diagnosis *
bisect_stored(struct bisect *bs, const char *target, char *err,
    size_t errlen)
{
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0, 0 };
	struct flaky_diagnosis *d = NULL;
	int64_t	 id;

	q.target = target;
	if (flaky_store_find_test(bs->store, target, bs->test, &id, err,
	    errlen) < 0 || flaky_diagnose_test(bs->store, id, &q, &d, err,
	    errlen) < 0)
		return NULL;
	return d;
}

/* The config's signatures and the store. */
int
bisect_open(struct ctl *ctl, struct bisect *bs)
{
	char	 err[1024];

	if (diag_load_signatures(ctl, NULL, &bs->cls) < 0)
		return -1;
	if (flaky_store_open(ctl_db_path(ctl), 0, &bs->store, err,
	    sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		return -1;
	}
	return 0;
}

/* Everything a bisect or verify holds. */
void
bisect_free(struct bisect *bs)
{
	if (bs->sp != NULL && flaky_spawner_free(bs->sp) < 0)
		log_warnx("runs still in flight at exit");
	flaky_pipeline_free(bs->pl);
	flaky_classifier_free(bs->cls);
	if (bs->base != NULL)
		event_base_free(bs->base);
	flaky_store_close(bs->store);
	for (size_t i = 0; i < bs->nsubject; i++)
		free(bs->subject[i]);
	free(bs->subject);
	flaky_bisect_free(&bs->b);
	free(bs->good);
	free(bs->top);
	free(bs->prefix);
	free(bs->tmp);
	free(bs->tree);
	free(bs->rundir);
	free(bs->revision);
	for (size_t i = 0; bs->suite_argv != NULL && bs->suite_argv[i]; i++)
		free(bs->suite_argv[i]);
	free(bs->suite_argv);
	free(bs->test_owned);
	memset(bs, 0, sizeof *bs);
}

/* The rate at bad from the test's stored runs at that revision (suite
 * and ingested, complete), when they saw it fail: no measuring then. */
void
bisect_stored_rate(struct bisect *bs, const char *target,
    const char *badrev)
{
	struct flaky_diagnosis *d;
	char	 err[1024];

	if ((d = bisect_stored(bs, target, err, sizeof err)) == NULL)
		return;		/* not stored yet: measured */
	for (size_t i = 0; i < d->nrevs; i++)
		if (d->revs[i].revision != NULL &&
		    strcmp(d->revs[i].revision, badrev) == 0 &&
		    flaky_bisect_set_rate(&bs->b, d->revs[i].failures,
		    d->revs[i].runs) == 0)
			bs->stored_rate = 1;
	flaky_diagnosis_free(d);
}

/* Set up the run lifecycle, run the search, clean up the worktree. */
void
bisect_run(struct bisect *bs)
{
	struct event	*sigint_ev, *sigterm_ev;
	char		 err[1024];

	bs->base = ctl_event_base();
	signal(SIGPIPE, SIG_IGN);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1)
		log_warn("prctl(PR_SET_CHILD_SUBREAPER)");
	if (flaky_spawner_new(bs->base, &bs->sp) < 0)
		fatalx("cannot watch child processes");
	{
		struct flaky_pipeline_opts po = {
			.base = bs->base, .sp = bs->sp, .store = bs->store,
			.classifier = bs->cls, .busy_ms = 100,
			.ended = bisect_ended, .error = bisect_store_error,
			.arg = bs,
		};

		if (flaky_pipeline_new(&po, &bs->pl) < 0)
			fatalx("out of memory");
	}
	sigint_ev = evsignal_new(bs->base, SIGINT, bisect_signal, bs);
	sigterm_ev = evsignal_new(bs->base, SIGTERM, bisect_signal, bs);
	evsignal_add(sigint_ev, NULL);
	evsignal_add(sigterm_ev, NULL);
	bisect_next(bs);
	if (bs->live != NULL)
		event_base_dispatch(bs->base);
	while (flaky_kill_strays(bisect_stray, NULL) > 0) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		flaky_spawner_reap(bs->sp);
		nanosleep(&ts, NULL);
	}
	flaky_spawner_reap(bs->sp);
	bisect_atexit();
	if (flaky_pipeline_flush(bs->pl, 5 * 60 * 1000, err, sizeof err) < 0) {
		log_warnx("%zu finished run%s could not be stored: %s",
		    flaky_pipeline_waiting(bs->pl),
		    flaky_pipeline_waiting(bs->pl) == 1 ? "" : "s", err);
		bs->failed = 1;
	}
	event_free(sigint_ev);
	event_free(sigterm_ev);
}

/* flakyctl bisect TEST --good REV --bad REV [--target NAME | -- CMD]. */
static int
cmd_bisect(struct ctl *ctl, int argc, char **argv)
{
	struct bisect	 bs;
	struct flaky_command cmd;
	const char	*good = NULL, *bad = NULL, *target_arg = NULL;
	char		**cmdv, *target = NULL, *dir = NULL, *badrev = NULL;
	char		*line = NULL, err[1024];
	int64_t		 max_runs = FLAKY_BISECT_MAX_RUNS, timeout_ms = 0;
	long		 first;
	int		 ret = EXIT_ERROR;

	memset(&bs, 0, sizeof bs);
	memset(&cmd, 0, sizeof cmd);
	bs.ctl = ctl;
	bs.at = -1;
	bs.next = search_next;
	bs.count = search_count;
	bs.seen = bisect_seen;
	bs.trigger = "bisect";
	bs.evidence_only = "bisect: a revision checked out by flakyctl "
	    "bisect, not the code the target runs";
	if (bisect_args(ctl, argc, argv, &good, &bad, &target_arg, &max_runs,
	    &timeout_ms, &cmdv, &bs.test, &ret) < 0)
		return ret;
	ret = EXIT_ERROR;
	if (bisect_command(&bs, cmdv, target_arg, &target, &dir, &cmd) < 0 ||
	    repository(&bs, dir, good, bad, &badrev) < 0 ||
	    candidates(&bs, badrev, max_runs) < 0)
		goto out;
	if (timeout_ms > 0)
		bs.timeout_ms = timeout_ms;
	if (bisect_open(ctl, &bs) < 0)
		goto out;
	line = join_argv(cmd.env_set, bs.argv);
	if (flaky_store_target(bs.store, target, cmdv[0] != NULL ? line : NULL,
	    dir, &bs.target_id, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		goto out;
	}
	bisect_stored_rate(&bs, target, badrev);
	bs.target_name = target;
	bs.badrev = badrev;
	xasprintf(&bs.tmp, "%s/flaky-bisect.XXXXXX", getenv("TMPDIR") &&
	    *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(bs.tmp) == NULL) {
		log_warn("mkdtemp %s", bs.tmp);
		goto out;
	}
	xasprintf(&bs.tree, "%s/tree", bs.tmp);
	bisect_live = &bs;
	atexit(bisect_atexit);
	if (!ctl->format_set || ctl->format == FORMAT_TABLE)
		fprintf(stderr, "flakyctl: bisecting %s over %zu revision%s: "
		    "`%s`%s\n", bs.test, bs.b.n, flaky_plural((long long)bs.b.n),
		    line, bs.alone ? "" :
		    " (the whole suite: the runner cannot select the test)");
	bisect_run(&bs);
	if (bs.unresolved && bs.signal == 0)
		goto out;	/* TEST named no one test: said why */
	if (bs.signal != 0 || (bs.stopping && bs.failed && !bs.store_told)) {
		fprintf(stderr, "flakyctl bisect: stopped; the runs so far "
		    "are stored\n");
		/* ^C: 130, as analyze and confirm */
		if (bs.signal != 0)
			ret = 128 + bs.signal;
		goto out;
	}
	first = flaky_bisect_result(&bs.b);
	if (first == -2)
		fprintf(stderr, "flakyctl bisect: %s: the runs at --bad did "
		    "not report this test (its id, as report shows it?)\n",
		    bs.test);
	else if (first == -1)
		fprintf(stderr, "flakyctl bisect: %s did not fail in %lld "
		    "runs at --bad: nothing to bisect\n", bs.test,
		    (long long)bs.b.v[bs.b.n - 1].runs);
	if (ctl->format == FORMAT_JSON)
		print_json(&bs, first);
	else
		print_table(&bs, first);
	ret = bs.failed ? EXIT_ERROR : first >= 0 ? EXIT_OK : EXIT_FOUND;
out:
	bisect_atexit();
	bisect_free(&bs);
	flaky_command_clear(&cmd);
	free(badrev);
	free(target);
	free(dir);
	free(line);
	return ret;
}
