/* analyze's perturbed runs (issue 18): stress beside each run and a fresh
 * order seed for each, recorded with the run. */
#ifndef FLAKYCTL_PERTURB_H
#define FLAKYCTL_PERTURB_H

#include "pipeline/pipeline.h"
#include "run/run.h"
#include "seeds.h"

struct flaky_buf;

struct perturb {
	struct flaky_stress_spec stress;	/* kinds 0: calm */
	struct flaky_stress	*running;
	int			 shuffle;
	int			 asked_shuffle;	/* --shuffle, not --seed's */
	const char		*fixed_seed;	/* --seed: every run's */
	long long		 seed_from, seed_to;	/* --seed A-B */
	const struct flaky_command *cmd;
	char			**argv, **envp;	/* the last shuffled run's */
	char			 seed[16];
	char			 name[48];	/* runs.perturbation */
	unsigned		 seeds;		/* given so far */
	/* issue 34: --perturb seed, its sweep and replays */
	int			 seeded;
	struct seeds		 sweep;
	char *const		*only;		/* a replay's tests, or NULL */
	size_t			 nonly;
	char			 evidence[96];	/* a replay's runs.incomplete */
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
/* --perturb KIND: seed, shuffle, calm or stress:KIND[:LEVEL] (the steps
 * of a target's perturb:). 0, or -1 after a usage message. */
int	 perturb_kind_option(struct perturb *, const char *arg);
/* --seed A-B without --runs (set 0): as many runs as seeds. */
void	 perturb_runs(struct perturb *, int *runs, int set);
/* A run ended: a seed sweep's failing seeds (seeds.h). */
void	 perturb_ended(struct perturb *, const struct flaky_run *);
/* Every run of a seed sweep ended: plan its replays once, telling how
 * many; the runs they add (0: none). */
size_t	 perturb_replays(struct perturb *);
/* --seed N, or --seed A-B (with --perturb seed: the runs take A, A+1,
 * ..., B in turn): 0, or -1 after a usage message. */
int	 perturb_seed_option(struct perturb *, const char *arg);
/* The shell command that runs the suite in the order of seed: "cd DIR &&
 * COMMAND" with the runner's seed option, or flakyctl analyze --seed for
 * a runner not known. */
void	 perturb_replay(const char *runner, const char *command,
	    const char *dir, const char *seed, struct flaky_buf *);

#endif
