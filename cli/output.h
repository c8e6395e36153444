/* Printing per-test statistics: the ranked table, JSON, CSV, Markdown. */
#ifndef FLAKYCTL_OUTPUT_H
#define FLAKYCTL_OUTPUT_H

#include <stdint.h>

#include "flakyctl.h"
#include "store.h"

/* What a report is about, printed above the table and in JSON. */
struct report_head {
	const char	*command;	/* analyze: the command, else NULL */
	const char	*target;	/* NULL: all */
	int64_t		 since_ms, until_ms;	/* INT64_MIN/MAX: open */
	struct flaky_run_counts runs;
	int64_t		 wall_us;	/* analyze: how long it took */
	const char	*revision;
};

/* --fail-on: a mask of (1 << tier); 0 or -1 on a bad list. */
int	 parse_fail_on(const char *cmd, const char *list, int *mask);
/* Would the rows trip the gate? */
int	 gate_tripped(const struct flaky_test_row *, size_t, int mask);
/* Sort rows: critical, warning, broken, noise, stable; by rate within. */
void	 sort_rows(struct flaky_test_row *, size_t);
int	 print_report(struct ctl *, const struct report_head *,
	    const struct flaky_test_row *, size_t);

#endif
