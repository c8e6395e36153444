/* analyze's perturbed runs (issue 18): stress threads beside each run
 * (lib/run/stress.c) for as long as any run is in flight, and a fresh seed
 * for the runner's own shuffling each run (flaky_command_shuffle). The
 * pipeline records both with the run: runs.perturbation and runs.seed. */
#include "buildconf.h"

#include <errno.h>
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
perturb_check(struct perturb *p, const struct flaky_command *cmd)
{
	char	**argv, **envp, err[256];

	p->cmd = cmd;
	if (!p->shuffle)
		return 0;
	if (flaky_command_shuffle(cmd, "1", &argv, &envp, err,
	    sizeof err) < 0) {
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
	if (p->fixed_seed != NULL)
		snprintf(p->seed, sizeof p->seed, "%s", p->fixed_seed);
	else
		flaky_shuffle_seed(p->seed, sizeof p->seed);
	p->seeds++;
}

void
perturb_job(struct perturb *p, struct flaky_job *job, const char *dir)
{
	char	 err[256];

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
}

int
perturb_seed_option(struct perturb *p, const char *arg)
{
	long long v;

	if (flaky_parse_int(arg, 1, 0x7fffffff, &v) < 0) {
		ctl_usage_error("analyze", "--seed: expected a number from 1 "
		    "to 2147483647 (a seed runs.seed recorded), got '%s'",
		    arg);
		return -1;
	}
	p->fixed_seed = arg;
	p->shuffle = 1;
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
