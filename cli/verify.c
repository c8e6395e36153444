/* flakyctl verify TEST [--target NAME | -- COMMAND]: prove a fix. The test
 * is rerun in the tree as it is (alone when the runner can select it)
 * until it passed n runs in a row, n = ceil(ln 0.05 / ln(1 - p)) with p
 * its stored failure rate (a test still flaky at rate p passes them all
 * with a chance of at most 5%): fixed; or until it fails: still flaky.
 * The runs are stored as any other, trigger "verify", at the tree's git
 * HEAD (docs/triage.md). */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "classify/classify.h"
#include "diag.h"
#include "log.h"
#include "stats/stats.h"

struct proof {
	int64_t		 rate_runs, rate_failures;
	double		 p;
	int64_t		 need;
	int64_t		 runs, failures, in_row, absent;
};

/* Another run while neither proven nor disproven. */
static long
proof_next(struct bisect *bs)
{
	struct proof	*pr = bs->arg;

	if (pr->failures > 0 || pr->absent > 0 || pr->in_row >= pr->need)
		return -1;
	return 0;
}

/* Count a run. */
static void
proof_count(struct bisect *bs, long i, int o)
{
	struct proof	*pr = bs->arg;

	(void)i;
	if (o < 0) {
		pr->absent++;
		return;
	}
	pr->runs++;
	pr->failures += o;
	pr->in_row = o ? 0 : pr->in_row + 1;
}

/* p from the test's stored runs (suite and ingested, complete): -1 after
 * telling why there is none. */
static int
proof_rate(struct bisect *bs, const char *target, struct proof *pr)
{
	struct flaky_diagnosis *d;
	char	 err[1024];

	if ((d = bisect_stored(bs, target, err, sizeof err)) == NULL) {
		fprintf(stderr, "flakyctl verify: %s (give --rate P)\n", err);
		return -1;
	}
	pr->rate_runs = d->runs;
	pr->rate_failures = d->failures;
	flaky_diagnosis_free(d);
	if (pr->rate_failures == 0) {
		fprintf(stderr, "flakyctl verify: %s: no failure in %lld stored "
		    "runs of target %s: no rate to prove a fix against (give "
		    "--rate P)\n", bs->test, (long long)pr->rate_runs, target);
		return -1;
	}
	pr->p = (double)pr->rate_failures / (double)pr->rate_runs;
	return 0;
}

/* The verdict in words and in JSON. */
static const char *
proof_verdict(const struct proof *pr)
{
	if (pr->absent > 0)
		return "not reported";
	if (pr->failures > 0)
		return "still flaky";
	return pr->in_row >= pr->need ? "fixed" : "stopped";
}

/* What the runs showed. */
static void
proof_print(struct ctl *ctl, const struct bisect *bs, const struct proof *pr)
{
	if (ctl->format == FORMAT_JSON) {
		printf("{\"test\": ");
		json_string(stdout, bs->test);
		printf(", \"revision\": ");
		json_string(stdout, bs->revision);
		printf(", \"alone\": %s, \"rate_runs\": %lld, "
		    "\"rate_failures\": %lld, \"p\": %.6g, \"passes_needed\": "
		    "%lld, \"confidence\": 0.95, \"runs\": %lld, "
		    "\"failures\": %lld, \"passes_in_a_row\": %lld, "
		    "\"verdict\": \"%s\"}\n", bs->alone ? "true" : "false",
		    (long long)pr->rate_runs, (long long)pr->rate_failures,
		    pr->p, (long long)pr->need, (long long)pr->runs,
		    (long long)pr->failures, (long long)pr->in_row,
		    proof_verdict(pr));
		return;
	}
	if (pr->rate_runs > 0)
		printf("%s: p = %.3f (%lld of %lld stored runs failed): ",
		    bs->test, pr->p, (long long)pr->rate_failures,
		    (long long)pr->rate_runs);
	else
		printf("%s: p = %.3f (--rate): ", bs->test, pr->p);
	printf("%lld pass%s in a row prove%s a fix (95%%)\n",
	    (long long)pr->need, flaky_plural_es(pr->need), pr->need == 1 ?
	    "s" : "");
	if (pr->failures > 0)
		printf("still flaky: failed at run %lld\n", (long long)pr->runs);
	else if (pr->absent > 0)
		printf("not reported: the run did not report the test\n");
	else
		printf("%s: %lld pass%s in a row%s\n", proof_verdict(pr),
		    (long long)pr->in_row, flaky_plural_es(pr->in_row),
		    pr->in_row >= pr->need ? "" : ", interrupted");
}

static int	cmd_verify(struct ctl *, int, char **);

static const struct cmd_option verify_options[] = {
	{ "target", 0, 'T', "NAME", "the config's target (its command, "
	    "directory and isolate: template); with a command after --, "
	    "the target whose runs give the rate (default: as analyze "
	    "names it)" },
	{ "rate", 0, 'r', "P", "the failure rate to prove the fix against "
	    "(default: the test's stored rate)" },
	{ "timeout", 0, 't', "D", "end a run after D (default: the "
	    "target's, else none)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_verify_entry = {
	.name = "verify",
	.usage = "verify TEST [--target NAME] [--rate P] [--timeout D] "
	    "[-- COMMAND]",
	.summary = "Rerun a test until a fix is proven or disproven.",
	.example = "flakyctl verify tests/test_api.py::test_retry -- pytest\n"
	    "flakyctl verify test_retry --target shop-unit --rate 0.05",
	.options = verify_options,
	.flags = CMD_WRITES,
	.exec = cmd_verify,
};

/* Options into o; -1 after a usage error. */
static int
verify_args(struct ctl *ctl, int argc, char **argv, const char **target,
    double *rate, int64_t *timeout_ms, char ***cmdv, const char **test)
{
	struct cmd_getopt g;
	char		*end;
	int		 ch, dashes = 0;

	cmd_getopt_init(&g, &cmd_verify_entry, ctl, argc, argv);
	while ((ch = cmd_getopt(&g)) > 0) {
		if (ch == 'T')
			*target = optarg;
		else if (ch == 'r') {
			errno = 0;
			*rate = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    !(*rate > 0 && *rate < 1)) {
				ctl_usage_error("verify", "--rate: expected a "
				    "failure rate above 0 and below 1, got "
				    "'%s'", optarg);
				return -1;
			}
		} else if (ch == 't' && (flaky_parse_duration(optarg,
		    timeout_ms) < 0 || *timeout_ms <= 0)) {
			ctl_usage_error("verify", "--timeout: expected a "
			    "duration such as 10m, got '%s'", optarg);
			return -1;
		}
	}
	if (ch < 0)
		return g.exit == EXIT_OK ? -2 : -1;
	for (int i = 0; i < argc; i++)
		dashes |= strcmp(argv[i], "--") == 0;
	if (optind >= argc) {
		ctl_usage_error("verify", "expected the test to verify (its "
		    "id, as report shows it)");
		return -1;
	}
	*test = argv[optind];
	*cmdv = argv + optind + 1;
	if ((*cmdv)[0] != NULL && !dashes) {
		ctl_usage_error("verify", "'%s' after the test: give the "
		    "command after --", (*cmdv)[0]);
		return -1;
	}
	if ((*cmdv)[0] == NULL && *target == NULL) {
		ctl_usage_error("verify", "expected --target NAME or a command "
		    "after --");
		return -1;
	}
	return ctl_check_format(ctl, "verify", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON);
}

/* flakyctl verify TEST [--target NAME | -- COMMAND]. */
static int
cmd_verify(struct ctl *ctl, int argc, char **argv)
{
	struct bisect	 bs;
	struct proof	 pr;
	struct flaky_command cmd;
	const char	*target_arg = NULL;
	char		**cmdv, *target = NULL, *dir = NULL, *line = NULL;
	char		 err[1024];
	double		 rate = 0;
	int64_t		 timeout_ms = 0;
	int		 r, ret = EXIT_ERROR;

	memset(&bs, 0, sizeof bs);
	memset(&pr, 0, sizeof pr);
	memset(&cmd, 0, sizeof cmd);
	bs.ctl = ctl;
	bs.at = -1;
	bs.next = proof_next;
	bs.count = proof_count;
	bs.arg = &pr;
	bs.trigger = "verify";
	if ((r = verify_args(ctl, argc, argv, &target_arg, &rate, &timeout_ms,
	    &cmdv, &bs.test)) < 0)
		return r == -2 ? EXIT_OK : EXIT_ERROR;
	if (bisect_command(&bs, cmdv, target_arg, &target, &dir, &cmd) < 0)
		goto out;
	if (timeout_ms > 0)
		bs.timeout_ms = timeout_ms;
	bs.rundir = xstrdup(dir);
	if (bisect_open(ctl, &bs) < 0)
		goto out;
	if (rate > 0)
		pr.p = rate;
	else if (proof_rate(&bs, target, &pr) < 0)
		goto out;
	pr.need = flaky_passes_needed(pr.p, FLAKY_PROOF_ALPHA);
	line = join_argv(cmd.env_set, bs.argv);
	if (flaky_store_target(bs.store, target, cmdv[0] != NULL ? line : NULL,
	    dir, &bs.target_id, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		goto out;
	}
	if (flaky_revision_git(dir, &bs.revision) == -ENOMEM)
		fatalx("out of memory");
	if (ctl->format != FORMAT_JSON)
		fprintf(stderr, "flakyctl: verifying %s: up to %lld run%s of "
		    "`%s`%s\n", bs.test, (long long)pr.need,
		    flaky_plural(pr.need), line, bs.alone ?
		    "" : " (the whole suite: the runner cannot select the "
		    "test)");
	bisect_run(&bs);
	proof_print(ctl, &bs, &pr);
	if (bs.signal != 0)
		ret = 128 + bs.signal;	/* ^C: 130, as analyze */
	else if (bs.failed)
		ret = EXIT_ERROR;
	else
		ret = strcmp(proof_verdict(&pr), "fixed") == 0 ? EXIT_OK :
		    EXIT_FOUND;
out:
	bisect_free(&bs);
	flaky_command_clear(&cmd);
	free(target);
	free(dir);
	free(line);
	return ret;
}
