/* What flakyctl bisect and verify share (bisect.c): one test rerun
 * through the run lifecycle, one run at a time, where and as often as a
 * rule says; bisect's runs in temporary git worktrees, verify's in the
 * tree as it is. */
#ifndef FLAKYCTL_BISECT_H
#define FLAKYCTL_BISECT_H

#include <stdint.h>

#include "flakyctl.h"
#include "pipeline/pipeline.h"
#include "run/run.h"

struct bisect {
	struct flaky_bisect	 b;
	struct ctl		*ctl;
	struct flaky_store	*store;
	struct flaky_classifier	*cls;
	struct event_base	*base;
	struct flaky_spawner	*sp;
	struct flaky_pipeline	*pl;
	/* the rule: the run to make next (-1: done), and a run's outcome
	 * (1 failed, 0 passed, -1 not reported) */
	long			(*next)(struct bisect *);
	void			(*count)(struct bisect *, long, int);
	void			*arg;		/* the rule's */
	const char		*trigger;
	const char		*evidence_only;
	char			*revision;	/* verify: the tree's */
	char			**subject;	/* per candidate */
	size_t			 nsubject;
	const char		*test;
	char			*good;		/* full hash */
	char			*top, *prefix;	/* the repository, where the
						 * command runs in it; top
						 * NULL: no worktree */
	char			*tmp, *tree;	/* mkdtemp, its worktree */
	long			 at;		/* checked out in tree; -1 */
	char			**argv, **envp;
	char			*rundir;
	int64_t			 target_id, timeout_ms;
	int			 alone, stopping, failed, store_told;
	int			 signal;	/* that stopped it, or 0 */
	int			 stored_rate;	/* p from stored runs */
	struct flaky_run	*live;
	/* TEST as a user may give it, a part of an id (bisect): a run's
	 * results, before they are counted; 1 when they must not be */
	int			(*seen)(struct bisect *, long,
				    const struct flaky_results *);
	char			**suite_argv;	/* the command without the
						 * test selected */
	int			 select_at;	/* the test's word in argv;
						 * -1: none */
	int			 select_env;	/* in $FLAKY_TEST */
	int			 resolving;	/* the next run is suite_argv */
	int			 resolved;	/* looked up once */
	int			 unresolved;	/* ... and not one test */
	char			*test_owned;	/* the full id found */
	const char		*target_name, *badrev;
};

/* The command that reruns bs->test: the one after -- (cmdv[0] not
 * NULL), with the test selected when its runner can, else the config's
 * target_arg; sets bs->argv, envp, alone, timeout_ms, *target and *dir,
 * and the suite's command without the test (suite_argv, select_at,
 * select_env). -1 after telling why. */
int	 bisect_command(struct bisect *, char **cmdv, const char *target_arg,
	    char **target, char **dir, struct flaky_command *);
/* Run until the rule says done, a signal or a refused write, then store
 * what ran; bs->store, cls, target_id, argv, rundir (or top) and the rule
 * set. */
void	 bisect_run(struct bisect *);
/* The signatures and the store, into bs; -1 after telling why. */
int	 bisect_open(struct ctl *, struct bisect *);
/* The test's stored evidence in target, all of it; NULL with err filled
 * when there is none. */
struct flaky_diagnosis *bisect_stored(struct bisect *, const char *target,
	    char *err, size_t errlen);
/* The rate at bad from the test's stored runs at badrev, when they saw
 * it fail: bs->b measures nothing then. */
void	 bisect_stored_rate(struct bisect *, const char *target,
	    const char *badrev);
/* The test's outcome in a run: 1 failed, 0 passed, -1 not reported. */
int	 bisect_outcome(const char *test, const struct flaky_results *);
/* The command with the test selected, when its runner can select one
 * (bisect_name.c): pytest takes a node id, unittest a dotted name. 1 when
 * it runs alone (*at: the test's word in cmd->argv, else -1). */
int	 bisect_select(struct flaky_command *, const char *test, int *at);
/* A copy of argv, words and all (suite_argv). */
char	**bisect_argv_copy(char *const *argv);
/* bisect's seen (bisect_name.c): when the first run at bad does not
 * report TEST as given, the suite's run there resolves it as every
 * command does (a unique part, the whole last part of an id); 1 when
 * the run must not be counted. */
int	 bisect_seen(struct bisect *, long i, const struct flaky_results *);
/* Everything bs holds; NULL-safe, bs zeroed. */
void	 bisect_free(struct bisect *);

#endif
