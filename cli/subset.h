/* analyze's runs of only some tests (issue 18): after its first whole
 * runs --until-settled reruns the tests still open, --risky the tests the
 * static scan has findings in, each selected through the runner
 * (flaky_command_select) and stored with runs.selected. */
#ifndef FLAKYCTL_SUBSET_H
#define FLAKYCTL_SUBSET_H

#include "pipeline/pipeline.h"
#include "run/run.h"
#include "store/store.h"

struct subset {
	const struct flaky_command *cmd;
	const char	 *dir;		/* where the runs run */
	int		  until;	/* --until-settled: the open tests */
	int		  risky;	/* --risky: the tests with findings */
	int		  can;		/* the runner selects */
	char		**risky_tests;
	size_t		  nrisky;
	char		**argv, **envp;	/* the last selected run's */
	char *const	 *base_argv, *const *base_envp;
	const char	**open;		/* scratch: the open tests */
	size_t		  capopen;
	int		  told;		/* a fallback was told */
};

/* Can the runner select? Tells "RUNNER: reruns the whole suite: WHY"
 * once when it cannot (--until-settled goes on with whole runs); 0, or -1
 * for --risky, which has nothing else to run. */
int	 subset_check(struct subset *, const struct flaky_command *,
	    const char *dir, int until, int risky);
/* A seed sweep's replays select their tests where the runner can (else
 * a replay runs the whole suite, evidence only all the same). */
void	 subset_replays(struct subset *);
/* --risky: scan path's Python tests, store the findings for the target
 * (the report prints them beside the rates) and keep the ids of the tests
 * they lie in. 0, or -1 after saying why (no finding in a test). */
int	 subset_risky(struct subset *, struct flaky_store *, int64_t target_id,
	    const char *target, const char *path);
/* Before a run starts: the command of the tests to run (job->selected
 * their count), or the whole suite's; only (nonly > 0): those tests (a
 * seed's replay), whatever else would be run. */
void	 subset_job(struct subset *, struct flaky_job *,
	    const struct flaky_settle *, char *const *only, size_t nonly);
/* After a run started: its copies go, the job has the whole command. */
void	 subset_started(struct subset *, struct flaky_job *);
void	 subset_free(struct subset *);

#endif
