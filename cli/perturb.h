/* analyze's perturbed runs (issue 18): stress beside each run and a fresh
 * order seed for each, recorded with the run. */
#ifndef FLAKYCTL_PERTURB_H
#define FLAKYCTL_PERTURB_H

#include "pipeline/pipeline.h"
#include "run/run.h"

struct flaky_buf;

struct perturb {
	struct flaky_stress_spec stress;	/* kinds 0: calm */
	struct flaky_stress	*running;
	int			 shuffle;
	const char		*fixed_seed;	/* --seed: every run's */
	const struct flaky_command *cmd;
	char			**argv, **envp;	/* the last shuffled run's */
	char			 seed[16];
	char			 name[48];	/* runs.perturbation */
	unsigned		 seeds;		/* given so far */
};

/* --stress KIND[:LEVEL]: 0, or -1 after a usage message. */
int	 perturb_stress_option(struct perturb *, const char *arg);
/* Can the command be perturbed as asked? 0, or -1 after saying why. */
int	 perturb_check(struct perturb *, const struct flaky_command *);
/* Before a run starts: its seed, argv and envp, its stress started. */
void	 perturb_job(struct perturb *, struct flaky_job *, const char *dir);
/* After a run started: its copies are no longer needed. */
void	 perturb_started(struct perturb *);
/* No run in flight: the stress stops. */
void	 perturb_idle(struct perturb *);
void	 perturb_free(struct perturb *);
/* --seed N: 0, or -1 after a usage message. */
int	 perturb_seed_option(struct perturb *, const char *arg);
/* The shell command that runs the suite in the order of seed: "cd DIR &&
 * COMMAND" with the runner's seed option, or flakyctl analyze --seed for
 * a runner not known. */
void	 perturb_replay(const char *runner, const char *command,
	    const char *dir, const char *seed, struct flaky_buf *);

#endif
