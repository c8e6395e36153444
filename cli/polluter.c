/* flakyctl polluter TEST: the smallest set of tests that, run before an
 * order-dependent test, makes it fail. Takes the newest stored failing
 * run of the test, and narrows the tests that ran before it there by
 * delta debugging (lib/diagnose/minimize.c), each subset confirmed by
 * rerunning it in its stored order followed by the victim. pytest and
 * unittest run the ids they are given in the given order; Jest cannot
 * order tests within a file, go and the others are not selectable by a
 * list: those are refused. The reruns are not stored as runs (they are
 * neither the suite nor the test alone); the set found is, in table
 * polluters, for triage and ticket. See docs/triage.md. */
#include "buildconf.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <event2/event.h>

#include "diag.h"
#include "log.h"
#include "run/run.h"

#define POLLUTER_RERUNS_DEFAULT	100
#define POLLUTER_TIMEOUT_MS	(10 * 60 * 1000)

struct polluter {
	struct event_base	*base;
	struct flaky_spawner	*sp;
	const char		*runner;	/* pytest or unittest */
	char			*prefix;	/* the runner's command */
	const char		*dir;
	const char		*victim;
	char			**names;	/* the tests before it, in order */
	size_t			 nnames;
	int			 repeat;	/* reruns of a subset that passes */
	int64_t			 reruns, max_reruns;
	int			 stopping, done;
	struct flaky_run	*live;
	char			 err[1024];
};

/* A rerun ended. */
static void
polluter_done(struct flaky_run *run, void *arg)
{
	struct polluter	*p = arg;

	(void)run;
	p->done = 1;
	event_base_loopbreak(p->base);
}

/* The runner's flags that keep the given order. */
static const char *
polluter_flags(const char *runner)
{
	if (strcmp(runner, "pytest") == 0)
		return "-p no:randomly -p no:random_order -v";
	return "-v";
}

/* The command that runs idx[0..n) then the victim, for a person. */
static void
polluter_command(const struct polluter *p, const size_t *idx, size_t n,
    struct flaky_buf *b)
{
	flaky_buf_printf(b, "%s %s", p->prefix, polluter_flags(p->runner));
	for (size_t i = 0; i < n; i++) {
		flaky_buf_addc(b, ' ');
		flaky_sh_quote(b, p->names[idx[i]]);
	}
	flaky_buf_addc(b, ' ');
	flaky_sh_quote(b, p->victim);
}

/* Run idx[0..n) and the victim once: 1 the victim failed, 0 it passed,
 * or a negative errno with p->err filled. */
static int
polluter_run_once(struct polluter *p, const size_t *idx, size_t n)
{
	struct flaky_run_spec spec;
	struct flaky_buf b;
	char		**argv;
	size_t		 k = 0;
	int		 r;

	/* The ids go to the runner as arguments, never into the text sh
	 * reads: they come from the code under test. */
	argv = xcalloc(n + 6, sizeof *argv);
	flaky_buf_init(&b);
	flaky_buf_printf(&b, "exec %s %s \"$@\"", p->prefix,
	    polluter_flags(p->runner));
	argv[k++] = (char *)"/bin/sh";
	argv[k++] = (char *)"-c";
	argv[k++] = (char *)flaky_buf_cstr(&b);
	argv[k++] = (char *)"sh";
	for (size_t i = 0; i < n; i++)
		argv[k++] = p->names[idx[i]];
	argv[k++] = (char *)p->victim;
	memset(&spec, 0, sizeof spec);
	spec.argv = argv;
	spec.dir = p->dir;
	spec.timeout_ms = POLLUTER_TIMEOUT_MS;
	p->done = 0;
	p->reruns++;
	if ((r = flaky_run_start(p->sp, &spec, polluter_done, p, &p->live,
	    p->err, sizeof p->err)) == 0 && !p->done)
		event_base_dispatch(p->base);
	free(argv);
	flaky_buf_free(&b);
	if (r < 0)
		goto out;
	if (p->stopping) {
		r = flaky_error(p->err, sizeof p->err, EINTR, "interrupted");
		goto out;
	}
	r = -ENOENT;
	for (size_t i = 0; i < p->live->results.n; i++) {
		const struct flaky_result *res = &p->live->results.v[i];

		if (strcmp(res->test, p->victim) == 0) {
			r = res->outcome == FLAKY_FAIL ||
			    res->outcome == FLAKY_ERROR;
			break;
		}
	}
	if (r == -ENOENT)
		flaky_error(p->err, sizeof p->err, ENOENT, "the rerun did not "
		    "report %s (exit %d); are the stored ids the runner's "
		    "own, run from %s?", p->victim, p->live->rec.exit_code,
		    p->dir);
out:
	flaky_run_free(p->live);
	p->live = NULL;
	return r;
}

/* The oracle: the victim after idx[0..n) fails in any of p->repeat
 * reruns (a failure is proof; a pass is taken after repeat passes). */
static int
polluter_oracle(const size_t *idx, size_t n, void *arg)
{
	struct polluter	*p = arg;
	int		 r = 0;

	for (int i = 0; i < p->repeat && r == 0; i++) {
		if (p->stopping)
			return flaky_error(p->err, sizeof p->err, EINTR,
			    "interrupted");
		if (p->reruns >= p->max_reruns)
			return -E2BIG;
		r = polluter_run_once(p, idx, n);
	}
	return r;
}

/* SIGINT or SIGTERM: end the rerun in flight, then stop. */
static void
polluter_signal(evutil_socket_t sig, short what, void *arg)
{
	struct polluter	*p = arg;

	(void)sig;
	(void)what;
	p->stopping = 1;
	if (p->live != NULL)
		flaky_run_stop(p->live);
}

struct order_pick {
	int64_t		 victim;
	int64_t		 want_run;	/* 0: the newest failing run */
	int64_t		 run_id;
	int64_t		*before;
	size_t		 n;
};

/* Keep the newest run where the victim failed: the tests before it. */
static int
pick_order(const struct flaky_run_order *o, void *arg)
{
	struct order_pick *op = arg;

	if (op->want_run != 0 && o->run_id != op->want_run)
		return 0;
	for (size_t i = 0; i < o->n; i++) {
		if (o->test_ids[i] != op->victim)
			continue;
		if (o->outcomes[i] != FLAKY_FAIL &&
		    o->outcomes[i] != FLAKY_ERROR)
			return 0;
		free(op->before);
		op->before = xcalloc(i ? i : 1, sizeof *op->before);
		memcpy(op->before, o->test_ids, i * sizeof *op->before);
		op->n = i;
		op->run_id = o->run_id;
		return 0;
	}
	return 0;
}

/* The names of the ids in op, from the target's tests. */
static int
polluter_names(struct flaky_store *s, const char *target,
    const struct order_pick *op, struct polluter *p)
{
	struct flaky_test_ref *refs = NULL;
	size_t		 nrefs = 0;
	char		 err[1024];

	if (flaky_store_tests(s, target, &refs, &nrefs, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		return -1;
	}
	p->names = xcalloc(op->n ? op->n : 1, sizeof *p->names);
	for (size_t i = 0; i < op->n; i++) {
		for (size_t j = 0; j < nrefs && p->names[i] == NULL; j++)
			if (refs[j].id == op->before[i])
				p->names[i] = xstrdup(refs[j].name);
		if (p->names[i] == NULL)
			p->names[i] = xstrdup("?");
	}
	p->nnames = op->n;
	flaky_test_refs_free(refs, nrefs);
	return 0;
}

/* Print what was found (and stored). */
static void
print_found(struct ctl *ctl, const struct flaky_diagnosis *d,
    const struct polluter *p, const struct flaky_minimize *m,
    const char *command)
{
	if (ctl->format == FORMAT_JSON) {
		printf("{\"test\": ");
		json_string(stdout, d->test);
		printf(", \"target\": ");
		json_string(stdout, d->target);
		printf(", \"candidates\": %zu, \"polluters\": [", p->nnames);
		for (size_t i = 0; i < m->n; i++) {
			printf("%s", i ? ", " : "");
			json_string(stdout, p->names[m->set[i]]);
		}
		printf("], \"reruns\": %lld, \"minimal\": %s, \"command\": ",
		    (long long)p->reruns, m->minimal ? "true" : "false");
		json_string(stdout, command);
		printf(", \"dir\": ");
		json_string(stdout, p->dir);
		printf("}\n");
		return;
	}
	printf("%s: %zu of the %zu test%s before it make%s it fail (%lld "
	    "rerun%s%s):\n", d->test, m->n, p->nnames,
	    flaky_plural((long long)p->nnames), m->n == 1 ? "s" : "",
	    (long long)p->reruns, flaky_plural(p->reruns), m->minimal ? "" :
	    "; the rerun budget ran out, the set may not be the smallest");
	for (size_t i = 0; i < m->n; i++)
		printf("  %s\n", p->names[m->set[i]]);
	printf("reproduce (in %s):\n  %s\n", p->dir, command);
}

/* Narrow, store and print; the exit code. */
static int
polluter_search(struct ctl *ctl, struct flaky_store *s,
    const struct flaky_diagnosis *d, struct polluter *p,
    const struct order_pick *op)
{
	struct flaky_minimize m = { 0 };
	struct flaky_polluter_row row;
	struct flaky_buf cmd, members;
	char		 err[1024];
	int		 r, ret = EXIT_ERROR;

	/* Failing alone, it is not the order: nothing to narrow. */
	if ((r = polluter_oracle(NULL, 0, p)) < 0) {
		fprintf(stderr, "flakyctl polluter: %s\n", p->err);
		return EXIT_ERROR;
	}
	if (r == 1) {
		fprintf(stderr, "flakyctl polluter: %s fails alone too: not "
		    "order dependent, no polluter to find\n", d->test);
		return EXIT_FOUND;
	}
	r = flaky_minimize(p->nnames, (size_t)p->max_reruns, polluter_oracle,
	    p, &m);
	if (r == -ENOENT) {
		fprintf(stderr, "flakyctl polluter: %s passed after the %zu "
		    "tests that ran before it in run %lld (%lld rerun%s): the "
		    "failure did not reproduce in that order\n", d->test,
		    p->nnames, (long long)op->run_id, (long long)p->reruns,
		    p->reruns == 1 ? "" : "s");
		return EXIT_FOUND;
	}
	if (r < 0 && r != -E2BIG) {
		fprintf(stderr, "flakyctl polluter: %s\n", r == -ENOMEM ?
		    "out of memory" : p->err);
		return EXIT_ERROR;
	}
	if (r == -E2BIG && m.set == NULL) {
		fprintf(stderr, "flakyctl polluter: the rerun budget (%lld) "
		    "ran out\n", (long long)p->max_reruns);
		return EXIT_ERROR;
	}
	flaky_buf_init(&cmd);
	flaky_buf_init(&members);
	polluter_command(p, m.set, m.n, &cmd);
	for (size_t i = 0; i < m.n; i++)
		flaky_buf_printf(&members, "%s%s", i ? "\n" : "",
		    p->names[m.set[i]]);
	memset(&row, 0, sizeof row);
	row.test_id = d->test_id;
	row.from_run_id = op->run_id;
	row.candidates = (int64_t)p->nnames;
	row.members = (char *)flaky_buf_cstr(&members);
	row.reruns = p->reruns;
	row.minimal = m.minimal;
	row.command = (char *)flaky_buf_cstr(&cmd);
	row.made_ms = flaky_now_ms();
	if (flaky_store_polluter_put(s, &row, err, sizeof err) < 0)
		fprintf(stderr, "flakyctl: %s\n", err);
	else {
		print_found(ctl, d, p, &m, flaky_buf_cstr(&cmd));
		ret = EXIT_OK;
	}
	flaky_buf_free(&cmd);
	flaky_buf_free(&members);
	flaky_minimize_free(&m);
	return ret;
}

/* Set up the loop and the spawner, then search. */
static int
polluter_start(struct ctl *ctl, struct flaky_store *s,
    const struct flaky_diagnosis *d, struct polluter *p,
    const struct order_pick *op)
{
	struct event	*sigint_ev, *sigterm_ev;
	int		 ret;

	p->base = ctl_event_base();
	signal(SIGPIPE, SIG_IGN);
	/* A subreaper: nothing a rerun leaves behind outlives us. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1)
		log_warn("prctl(PR_SET_CHILD_SUBREAPER)");
	if (flaky_spawner_new(p->base, &p->sp) < 0)
		fatalx("cannot watch child processes");
	sigint_ev = evsignal_new(p->base, SIGINT, polluter_signal, p);
	sigterm_ev = evsignal_new(p->base, SIGTERM, polluter_signal, p);
	evsignal_add(sigint_ev, NULL);
	evsignal_add(sigterm_ev, NULL);
	ret = polluter_search(ctl, s, d, p, op);
	while (flaky_kill_strays(NULL, NULL) > 0) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		flaky_spawner_reap(p->sp);
		nanosleep(&ts, NULL);
	}
	flaky_spawner_reap(p->sp);
	event_free(sigint_ev);
	event_free(sigterm_ev);
	if (flaky_spawner_free(p->sp) < 0)
		log_warnx("reruns still in flight at exit");
	event_base_free(p->base);
	return ret;
}

static int	cmd_polluter(struct ctl *, int, char **);

static const struct cmd_option polluter_options[] = {
	DIAG_OPTIONS,
	{ "max-reruns", 'n', 0, "N", "at most N reruns in all (default "
	    "100)" },
	{ "run", 'R', 0, "ID", "narrow the order of this failing run "
	    "(default the newest)" },
	{ "repeat", 'r', 0, "K", "rerun a subset after which the test "
	    "passed up to K times (default 1; more for a test flaky on its "
	    "own)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_polluter_entry = {
	.name = "polluter",
	.usage = "polluter TEST [--since D|all] [--until DATE] "
	    "[--target NAME] [--run ID] [--max-reruns N] [--repeat K]",
	.summary = "The fewest earlier tests that make an order-dependent "
	    "test fail.",
	.example = "flakyctl polluter test_default_locale --target demo",
	.options = polluter_options,
	.flags = CMD_WRITES,
	.exec = cmd_polluter,
};

/* Check the options and the test: 0 to go on, or -1 with the exit code
 * in g->exit (--help, a usage error). */
static int
polluter_options_parse(struct cmd_getopt *g, struct diag_opts *o,
    struct polluter *p, struct order_pick *op)
{
	long long	 v;
	int		 ch;

	while ((ch = cmd_getopt(g)) > 0) {
		if (diag_option(o, ch, optarg))
			continue;
		if (ch == 'n') {
			if (flaky_parse_int(optarg, 1, 1000, &v) < 0) {
				ctl_usage_error("polluter", "--max-reruns: "
				    "expected a number from 1 to 1000, got "
				    "'%s'", optarg);
				g->exit = EXIT_ERROR;
				return -1;
			}
			p->max_reruns = v;
		} else if (ch == 'r') {
			if (flaky_parse_int(optarg, 1, 20, &v) < 0) {
				ctl_usage_error("polluter", "--repeat: "
				    "expected a number from 1 to 20, got '%s'",
				    optarg);
				g->exit = EXIT_ERROR;
				return -1;
			}
			p->repeat = (int)v;
		} else if (ch == 'R') {
			if (flaky_parse_int(optarg, 1, INT64_MAX, &v) < 0) {
				ctl_usage_error("polluter", "--run: expected a "
				    "run id (flakyctl show TEST lists them), got "
				    "'%s'", optarg);
				g->exit = EXIT_ERROR;
				return -1;
			}
			op->want_run = v;
		}
	}
	if (ch < 0)
		return -1;
	if (optind + 1 != g->argc) {
		ctl_usage_error("polluter", "expected one test, such as "
		    "tests/test_b.py::test_victim");
		g->exit = EXIT_ERROR;
		return -1;
	}
	return 0;
}

/* The runner must run the ids it is given in that order. */
static int
polluter_runner(const struct flaky_diagnosis *d, struct polluter *p)
{
	const char *runner = flaky_repro_runner(d->runner, d->command);

	if (runner != NULL && strcmp(runner, "pytest") == 0) {
		p->runner = "pytest";
		p->prefix = xstrdup("python3 -m pytest");
	} else if (runner != NULL && strcmp(runner, "unittest") == 0) {
		p->runner = "unittest";
		p->prefix = xstrdup("python3 -m unittest");
	} else {
		fprintf(stderr, "flakyctl polluter: %s runs with %s, which "
		    "cannot be told to run given tests in a given order%s; "
		    "pytest and unittest can\n", d->test, runner ? runner :
		    "an unknown runner", runner != NULL && strcmp(runner,
		    "jest") == 0 ? " (Jest orders the tests of a file itself)" :
		    "");
		return -1;
	}
	{
		struct flaky_buf b;

		flaky_buf_init(&b);
		flaky_repro_runner_prefix(p->runner, d->command, p->prefix, &b);
		free(p->prefix);
		p->prefix = xstrdup(flaky_buf_cstr(&b));
		flaky_buf_free(&b);
	}
	return 0;
}

/* flakyctl polluter TEST. */
static int
cmd_polluter(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct diag_opts o = { 0 };
	struct polluter	 p;
	struct order_pick op = { 0 };
	struct flaky_store *s = NULL;
	struct flaky_diagnosis *d = NULL;
	char		 err[1024];
	int64_t		 id;
	int		 ret = EXIT_ERROR;

	memset(&p, 0, sizeof p);
	p.repeat = 1;
	p.max_reruns = POLLUTER_RERUNS_DEFAULT;
	cmd_getopt_init(&g, &cmd_polluter_entry, ctl, argc, argv);
	if (polluter_options_parse(&g, &o, &p, &op) < 0)
		return g.exit;
	if (ctl_check_format(ctl, "polluter", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON) < 0 || diag_window(&o, "polluter") < 0)
		return EXIT_ERROR;
	if (flaky_store_open(ctl_db_path(ctl), 0, &s, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		return EXIT_ERROR;
	}
	if (diag_resolve(s, "polluter", o.target, argv[optind], &id) < 0)
		goto out;
	if (flaky_diagnose_test(s, id, &o.q, &d, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		goto out;
	}
	op.victim = id;
	if (flaky_store_run_orders(s, d->target_id, &o.q, FLAKY_ORDER_RUNS_MAX,
	    pick_order, &op, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		goto out;
	}
	if (op.want_run != 0 && op.run_id == 0) {
		fprintf(stderr, "flakyctl polluter: %s did not fail in run "
		    "%lld (in this window)\n", d->test, (long long)op.want_run);
		ret = EXIT_FOUND;
		goto out;
	}
	if (op.run_id == 0 || op.n == 0) {
		fprintf(stderr, "flakyctl polluter: %s has no stored failing "
		    "run with tests before it in this window (--since all "
		    "looks further back)\n", d->test);
		ret = EXIT_FOUND;
		goto out;
	}
	if (polluter_runner(d, &p) < 0 ||
	    polluter_names(s, d->target, &op, &p) < 0)
		goto out;
	p.victim = d->test;
	p.dir = d->dir ? d->dir : ".";
	ret = polluter_start(ctl, s, d, &p, &op);
out:
	for (size_t i = 0; i < p.nnames; i++)
		free(p.names[i]);
	free(p.names);
	free(p.prefix);
	free(op.before);
	flaky_diagnosis_free(d);
	flaky_store_close(s);
	return ret;
}

