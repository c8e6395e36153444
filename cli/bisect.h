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
};

/* The command that reruns bs->test: the one after -- (cmdv[0] not
 * NULL), with the test selected when its runner can, else the config's
 * target_arg; sets bs->argv, envp, alone, timeout_ms, *target and *dir.
 * -1 after telling why. */
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
/* Everything bs holds; NULL-safe, bs zeroed. */
void	 bisect_free(struct bisect *);

#endif
