/* Printing per-test statistics: the ranked table, JSON, CSV, Markdown. */
#ifndef FLAKYCTL_OUTPUT_H
#define FLAKYCTL_OUTPUT_H

#include <stdint.h>

#include "evidence.h"
#include "flakyctl.h"
#include "store/store.h"
#include "util/util.h"

/* What a report is about, printed above the table and in JSON. */
struct flaky_settle;

/* How analyze --until-settled ended (settled.c). */
struct settled_report {
	const struct flaky_settle *settle;
	int		 max_runs;
	int64_t		 budget_ms;	/* 0: none */
	const char	*stopped;	/* settled, max-runs, budget,
					 * interrupted */
	int		 selected_runs;	/* of only some tests (issue 18) */
};

struct report_head {
	const char	*command;	/* analyze: the command, else NULL */
	const char	*target;	/* NULL: all */
	int64_t		 since_ms, until_ms;	/* INT64_MIN/MAX: open */
	struct flaky_run_counts runs;
	int64_t		 wall_us;	/* analyze: how long it took */
	const char	*revision;
	/* report: trends, budget, change points, quarantine; NULL in
	 * analyze (output looks rows up by test id). */
	const struct flaky_history *hist;
	/* The rows' window for the signature column (analyze: its runs);
	 * NULL: since, until and target above. */
	const struct flaky_query *query;
	/* The command's open store, for the signatures and static scan
	 * findings printed beside the rows (evidence.h). */
	struct flaky_store *store;
	/* analyze --until-settled: how the runs stopped (settled.c) */
	const struct settled_report *settled;
};

/* The window's rows and history from the database, read-only, for the
 * report commands (report.c); -1 after a message. */
int	 report_read(struct ctl *, const char *cmd, const struct flaky_query *,
	    struct flaky_store **, struct flaky_test_row **, size_t *,
	    struct flaky_history *);
/* --fail-on: a mask of (1 << tier); 0 or -1 on a bad list. */
int	 parse_fail_on(const char *cmd, const char *list, int *mask);
/* Would the rows trip the gate? */
int	 gate_tripped(const struct flaky_test_row *, size_t, int mask);
/* Sort rows: critical, warning, broken, noise, stable; by rate within. */
void	 sort_rows(struct flaky_test_row *, size_t);
/* --sort for report: rate (the default order), budget or trend. */
enum report_sort { SORT_RATE, SORT_BUDGET, SORT_TREND };
void	 sort_rows_by(struct flaky_test_row *, size_t, int how,
	    const struct flaky_history *);
/* A sparkline of daily failure rates in at most width columns: block
 * characters when unicode, else ASCII; a blank for days without runs. */
void	 sparkline(struct flaky_buf *, const uint32_t *runs,
	    const uint32_t *failures, size_t ndays, size_t width, int unicode);
/* report --html: one self-contained file (html.c). */
int	 html_report(const char *path, const struct report_head *,
	    const struct flaky_query *, char *err, size_t errlen);
/* The first line of a message, at most len - 1 bytes ("..." when cut). */
void	 msg_first_line(const char *, char *buf, size_t len);
/* The ranked table for a person (report_table.c). */
int	 report_table(struct ctl *, const struct report_head *,
	    const struct report_evidence *, const struct flaky_test_row *,
	    size_t);
int	 print_report(struct ctl *, const struct report_head *,
	    const struct flaky_test_row *, size_t);
/* analyze --until-settled: the runs it took and the tests still open, as
 * a table after the report or as the JSON's "until_settled" member. */
void	 settled_table(const struct settled_report *);
void	 settled_json(const struct settled_report *);
/* analyze's --until-settled ('U'), --max-runs ('M', into runs) and
 * --budget ('B'); runs_set gets 2 for --max-runs (1 is --runs). -1 after
 * a usage message. */
int	 settled_option(int c, const char *arg, int *until, int *runs,
	    int64_t *budget_ms, int *runs_set);
/* --runs is a fixed count, --max-runs the bound of --until-settled (200
 * when not given). -1 after a usage message. */
int	 settled_check(int until, int runs_set, int *runs);

#endif
