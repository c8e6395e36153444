/* analyze's perturbed runs (issue 18): stress threads beside each run
 * (lib/run/stress.c) for as long as any run is in flight, and a fresh seed
 * for the runner's own shuffling each run (flaky_command_shuffle). The
 * pipeline records both with the run: runs.perturbation and runs.seed. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

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

/* A fresh seed from 1 to 2^31-1: what Jest, go and pytest all take. */
static void
new_seed(struct perturb *p)
{
	uint32_t v;

	if (getrandom(&v, sizeof v, 0) != sizeof v)
		v = (uint32_t)time(NULL) ^ (p->seeds * 2654435761u);
	v &= 0x7fffffff;
	snprintf(p->seed, sizeof p->seed, "%u", v ? v : 1);
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
