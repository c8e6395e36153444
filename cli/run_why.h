/* What the first runs of a call ended with, told when none of them gave a
 * test result (analyze exits 2 then, naming the reasons). */
#ifndef FLAKYCTL_RUN_WHY_H
#define FLAKYCTL_RUN_WHY_H

#include "store/store.h"

#define RUN_WHY_MAX	3

struct run_why {
	char	*line[RUN_WHY_MAX];	/* "run 1: timeout, ...: reason" */
	int	 n;
};

/* Keep the nth run's end (1-based), up to RUN_WHY_MAX; interrupted runs
 * are no reason. */
void	 run_why_note(struct run_why *, int nth,
	    const struct flaky_run_record *);
/* "no run produced test results; the first runs:" and the lines. */
void	 run_why_tell(const struct run_why *);
void	 run_why_free(struct run_why *);

#endif
