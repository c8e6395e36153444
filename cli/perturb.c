/* analyze's perturbed runs (issue 18): stress threads beside each run
 * (lib/run/stress.c) for as long as any run is in flight, and a fresh seed
 * for the runner's own shuffling each run (flaky_command_shuffle). The
 * pipeline records both with the run: runs.perturbation and runs.seed. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flakyctl.h"
#include "log.h"
#include "perturb.h"

int
perturb_stress_option(struct perturb *p, const char *arg)
{
	char	 err[256];

	if (flaky_stress_parse(arg, &p->stress, err, sizeof err) < 0) {
		ctl_usage_error("analyze", "--stress: %s", err);
		return -1;
	}
	return 0;
}

int
perturb_kind_option(struct perturb *p, const char *arg)
{
	if (strcmp(arg, "seed") == 0) {
		/* --seed N given before: the seed of every run, not an order */
		p->seeded = 1;
		p->shuffle = 0;
	} else if (strcmp(arg, "shuffle") == 0)
		p->shuffle = p->asked_shuffle = 1;
	else if (strncmp(arg, "stress:", 7) == 0)
		return perturb_stress_option(p, arg + 7);
	else if (strcmp(arg, "calm") != 0) {
		ctl_usage_error("analyze", "--perturb: expected seed, shuffle, "
		    "calm or stress:KIND[:LEVEL], got '%s'", arg);
		return -1;
	}
	return 0;
}

int
perturb_check(struct perturb *p, const struct flaky_command *cmd)
{
	char	**argv, **envp, err[512];
	int	 r;

	p->cmd = cmd;
	if (p->seed_to > 0 && !p->seeded) {
		ctl_usage_error("analyze", "--seed %s: a range of seeds is for "
		    "a seed sweep (--perturb seed); to shuffle, give one seed",
		    p->fixed_seed);
		return -1;
	}
	if (!p->seeded && p->fixed_seed != NULL &&
	    strtoll(p->fixed_seed, NULL, 10) > 0x7fffffffLL) {
		ctl_usage_error("analyze", "--seed: expected a number from 1 "
		    "to 2147483647 to shuffle with, got '%s'", p->fixed_seed);
		return -1;
	}
	if (p->seeded && (p->asked_shuffle || p->stress.kinds)) {
		/* one seed per run, and SEED told from RACE on calm runs */
		ctl_usage_error("analyze", "--perturb seed: expected no %s "
		    "beside it: a seed sweep's runs are calm and in order",
		    p->stress.kinds ? "--stress" : "--shuffle");
		return -1;
	}
	/* the command must take the perturbation: tried on a seed of 1 */
	if (p->seeded)
		r = flaky_command_seed(cmd, "1", NULL, 0, &argv, &envp, err,
		    sizeof err);
	else if (p->shuffle)
		r = flaky_command_shuffle(cmd, "1", &argv, &envp, err,
		    sizeof err);
	else
		return 0;
	if (r < 0) {
		fprintf(stderr, "flakyctl: analyze: %s\n", err);
		return -1;
	}
	flaky_command_free_vec(argv);
	flaky_command_free_vec(envp);
	return 0;
}

/* The next run's seed: --seed's, or a fresh one. */
static void
new_seed(struct perturb *p)
{
	if (p->seed_to > 0)
		snprintf(p->seed, sizeof p->seed, "%lld", p->seed_from +
		    (long long)p->seeds % (p->seed_to - p->seed_from + 1));
	else if (p->fixed_seed != NULL)
		snprintf(p->seed, sizeof p->seed, "%s", p->fixed_seed);
	else
		flaky_shuffle_seed(p->seed, sizeof p->seed);
	p->seeds++;
}

/* A run of the seed sweep, or one of its replays once they are planned:
 * its seed in the hook's environment (flaky_command_seed). */
static void
seed_job(struct perturb *p, struct flaky_job *job, const char *dir)
{
	const struct seeds_replay *rp = NULL;
	char	 err[512];

	p->only = NULL;
	p->nonly = 0;
	job->evidence_only = NULL;
	if (p->sweep.planned && (rp = seeds_next(&p->sweep)) != NULL) {
		snprintf(p->seed, sizeof p->seed, "%s", rp->seed);
		p->only = rp->tests;
		p->nonly = rp->ntests;
		snprintf(p->evidence, sizeof p->evidence, "a replay of seed "
		    "%s, chosen because it failed: evidence only", rp->seed);
		job->evidence_only = p->evidence;
		job->perturbation = FLAKY_PERTURB_REPLAY;
	} else {
		new_seed(p);
		job->perturbation = FLAKY_PERTURB_SEED;
	}
	perturb_started(p);
	/* a replay's margins would be of chosen seeds: not measured */
	if (flaky_command_seed(p->cmd, p->seed, dir, rp == NULL, &p->argv,
	    &p->envp, err, sizeof err) < 0)
		fatalx("%s", err);
	job->spec.argv = p->argv;
	job->spec.envp = p->envp;
	job->spec.headroom = rp == NULL;
	job->seed = p->seed;
}

void
perturb_runs(struct perturb *p, int *runs, int set)
{
	if (p->seed_to > 0 && !set)
		*runs = p->seed_to - p->seed_from >= 1000000 ? 1000000 :
		    (int)(p->seed_to - p->seed_from + 1);
}

void
perturb_ended(struct perturb *p, const struct flaky_run *run)
{
	if (p->seeded)
		seeds_ended(&p->sweep, run);
}

size_t
perturb_replays(struct perturb *p)
{
	size_t	 n, tests = 0;

	/* a fixed seed replays itself in every run */
	if (!p->seeded || (p->fixed_seed != NULL && p->seed_to == 0) ||
	    p->sweep.planned)
		return 0;
	if ((n = seeds_plan(&p->sweep)) == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		tests += p->sweep.replay[i].ntests;
	fprintf(stderr, "flakyctl: --perturb seed: replaying failing seeds "
	    "(%zu run%s, %zu test%s in all) of the tests that failed with some "
	    "seeds and passed with others; evidence only, no rate counts "
	    "them\n", n, n == 1 ? "" : "s", tests, tests == 1 ? "" : "s");
	return n;
}

void
perturb_job(struct perturb *p, struct flaky_job *job, const char *dir)
{
	char	 err[256];

	if (p->seeded) {
		seed_job(p, job, dir);
		return;
	}
	if (p->stress.kinds != 0 && p->running == NULL) {
		if (flaky_stress_start(&p->stress, dir, &p->running, err,
		    sizeof err) < 0)
			fatalx("%s", err);
	}
	job->perturbation = p->stress.kinds ? p->stress.name : NULL;
	if (!p->shuffle)
		return;
	/* shuffled runs apart from calm ones: "shuffle", "shuffle+cpu:2" */
	snprintf(p->name, sizeof p->name, "%s%s%s", FLAKY_PERTURB_SHUFFLE,
	    p->stress.kinds ? "+" : "", p->stress.kinds ? p->stress.name : "");
	job->perturbation = p->name;
	new_seed(p);
	perturb_started(p);
	if (flaky_command_shuffle(p->cmd, p->seed, &p->argv, &p->envp, err,
	    sizeof err) < 0)
		fatalx("%s", err);
	job->spec.argv = p->argv;
	job->spec.envp = p->envp;
	job->seed = p->seed;
}

void
perturb_started(struct perturb *p)
{
	flaky_command_free_vec(p->argv);
	flaky_command_free_vec(p->envp);
	p->argv = p->envp = NULL;
}

void
perturb_idle(struct perturb *p)
{
	flaky_stress_stop(p->running);
	p->running = NULL;
}

void
perturb_free(struct perturb *p)
{
	perturb_idle(p);
	perturb_started(p);
	seeds_free(&p->sweep);
}

int
perturb_seed_option(struct perturb *p, const char *arg)
{
	long long v, w;
	const char *dash = strchr(arg, '-');
	char	 a[24];

	/* A-B: a seed sweep's seeds in turn (--perturb seed) */
	if (dash != NULL && dash > arg && (size_t)(dash - arg) < sizeof a) {
		memcpy(a, arg, (size_t)(dash - arg));
		a[dash - arg] = '\0';
		if (flaky_parse_int(a, 1, 0xffffffffLL, &v) < 0 ||
		    flaky_parse_int(dash + 1, 1, 0xffffffffLL, &w) < 0 ||
		    w < v) {
			ctl_usage_error("analyze", "--seed: expected a number "
			    "or a range A-B of seeds from 1 to 4294967295, "
			    "got '%s'", arg);
			return -1;
		}
		p->seed_from = v;
		p->seed_to = w;
		p->fixed_seed = arg;
		return 0;
	}
	if (flaky_parse_int(arg, 1, 0xffffffffLL, &v) < 0) {
		ctl_usage_error("analyze", "--seed: expected a number from 1 "
		    "to 2147483647 (a seed runs.seed recorded; to 4294967295 "
		    "with --perturb seed), got '%s'", arg);
		return -1;
	}
	p->fixed_seed = arg;
	/* with --perturb seed (before or after), the seed of every run */
	p->shuffle = !p->seeded;
	return 0;
}

void
perturb_replay(const char *runner, const char *command, const char *dir,
    const char *seed, struct flaky_buf *b)
{
	const char *r = runner ? runner : "";

	if (dir != NULL) {
		flaky_buf_adds(b, "cd '");
		for (const char *c = dir; *c; c++) {
			if (*c == '\'')
				flaky_buf_adds(b, "'\\''");
			else
				flaky_buf_addc(b, *c);
		}
		flaky_buf_adds(b, "' && ");
	}
	if (strncmp(r, "pytest", 6) == 0)
		flaky_buf_printf(b, "%s -p random_order --random-order-seed=%s",
		    command, seed);
	else if (strncmp(r, "jest", 4) == 0)
		flaky_buf_printf(b, "%s --randomize --seed=%s", command, seed);
	else if (strncmp(r, "go", 2) == 0)
		flaky_buf_printf(b, "%s -shuffle=%s", command, seed);
	else if (strcmp(r, "vitest") == 0)
		flaky_buf_printf(b, "%s --sequence.shuffle --sequence.seed=%s",
		    command, seed);
	else if (strcmp(r, "playwright") == 0)
		flaky_buf_printf(b, "%s --shuffle=%s", command, seed);
	else
		flaky_buf_printf(b, "flakyctl analyze --runs 1 --seed %s -- %s",
		    seed, command);
}
