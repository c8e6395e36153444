/* flakyctl report: the ranked tests of a window, from the database. */
#include "buildconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flakyctl.h"
#include "output.h"
#include "store/store.h"
#include "util/util.h"

/* --since and --until: a duration back from until, a date or a time. */
int
parse_window(const char *cmd, const char *since, const char *until,
    int64_t *ret_since, int64_t *ret_until)
{
	int64_t	 u, s, d;

	u = flaky_now_ms();
	if (until != NULL && flaky_parse_time(until, &u) < 0) {
		ctl_usage_error(cmd, "--until: expected a date (2026-11-01) or "
		    "an ISO 8601 time, got '%s'", until);
		return -1;
	}
	/* "all": from the first run, for every command with a window. */
	if (since == NULL || strcmp(since, "all") == 0)
		s = INT64_MIN;
	else if (flaky_parse_duration(since, &d) == 0)
		s = u - d;
	else if (flaky_parse_time(since, &s) < 0) {
		ctl_usage_error(cmd, "--since: expected a duration (30d, 12h, "
		    "2w, 1h30m), a date (2026-11-01), an ISO 8601 time or all, "
		    "got '%s'", since);
		return -1;
	}
	if (s != INT64_MIN && s >= u) {
		ctl_usage_error(cmd, "--since must be before --until");
		return -1;
	}
	*ret_since = s;
	*ret_until = u;
	return 0;
}

/* The window's rows and history, from the database opened read-only;
 * -1 after a message (what was read is the caller's to free either way). */
int
report_read(struct ctl *ctl, const char *cmd, const struct flaky_query *q,
    struct flaky_store **store, struct flaky_test_row **rows, size_t *nrows,
    struct flaky_history *hist)
{
	char	 err[1024];

	if (flaky_store_open(ctl_db_path(ctl), FLAKY_STORE_READONLY, store,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl %s: %s\n", cmd, err);
		return -1;
	}
	if (ctl_check_target(*store, cmd, q->target) < 0)
		return -1;
	if (flaky_store_test_stats(*store, q, rows,
	    nrows, err, sizeof err) < 0 || flaky_store_history(*store, q,
	    hist, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl %s: %s\n", cmd, err);
		return -1;
	}
	return 0;
}

/* The rows count whole UTC days (the daily rollups): widen the window
 * to them, so that the runs counted and the header say the same. */
static void
whole_days(struct flaky_query *q)
{
	if (q->since_ms != INT64_MIN)
		q->since_ms -= ((q->since_ms % FLAKY_DAY_MS) + FLAKY_DAY_MS) %
		    FLAKY_DAY_MS;
	if (q->until_ms % FLAKY_DAY_MS != 0)
		q->until_ms += FLAKY_DAY_MS - ((q->until_ms % FLAKY_DAY_MS) +
		    FLAKY_DAY_MS) % FLAKY_DAY_MS;
}

static int	cmd_report(struct ctl *, int, char **);

static const struct cmd_option report_options[] = {
	{ "since", 's', 0, "D|DATE|all", "the window's start: a duration "
	    "back from --until (default 30d), a date, a time, or all" },
	{ "until", 'u', 0, "DATE", "the window's end, exclusive (default "
	    "now)" },
	{ "target", 'T', 0, "NAME", "only this target's tests (default "
	    "all targets)" },
	{ "fail-on", 0, 'F', "TIERS", "exit 1 when a test is in one of these "
	    "tiers (critical,warning,broken; default none)" },
	{ "sort", 0, 'S', "ORDER", "rate, budget or trend (default rate)" },
	{ "html", 0, 'H', "FILE", "write the dashboard's pages into one "
	    "self-contained HTML file (default none: print)" },
	{ "wide", 0, 'W', NULL, "whole test ids on a terminal, however "
	    "long the lines (default: cut to the terminal's width)" },
	CMD_OPTION_KIND,
	{ "box", 0, CTL_OPT_BOX, "NAME", "only the runs of this box (default "
	    "every box)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_report_entry = {
	.name = "report",
	.usage = "report [--since D|DATE|all] [--until DATE] [--target NAME] "
	    "[--fail-on TIERS] [--sort rate|budget|trend] [--html FILE] "
	    "[--wide] [--kind K] [--box NAME]",
	.summary = "Print the ranked tests of a window.",
	.example = "flakyctl report --since 7d --target shop-pytest",
	.options = report_options,
	.exec = cmd_report,
};

/* flakyctl report: the window's tests, ranked, as a table, JSON or HTML. */
static int
cmd_report(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct flaky_store *store = NULL;
	struct flaky_test_row *rows = NULL;
	struct report_head head;
	struct flaky_history hist;
	struct flaky_query q;
	size_t		 nrows = 0;
	const char	*since = "30d", *until = NULL, *target = NULL;
	const char	*html = NULL;
	char		 err[1024];
	int		 c, fail_mask = 0, ret = EXIT_ERROR, how = SORT_RATE;

	cmd_getopt_init(&g, &cmd_report_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		switch (c) {
		case 's':
			since = optarg;
			break;
		case 'u':
			until = optarg;
			break;
		case 'T':
			target = optarg;
			break;
		case 'F':
			if (parse_fail_on("report", optarg, &fail_mask) < 0)
				return EXIT_ERROR;
			break;
		case 'S':
			if (strcmp(optarg, "rate") == 0)
				how = SORT_RATE;
			else if (strcmp(optarg, "budget") == 0)
				how = SORT_BUDGET;
			else if (strcmp(optarg, "trend") == 0)
				how = SORT_TREND;
			else {
				ctl_usage_error("report", "--sort: expected "
				    "rate, budget or trend, got '%s'", optarg);
				return EXIT_ERROR;
			}
			break;
		case 'H':
			html = optarg;
			break;
		case 'W':
			ctl->wide = 1;
			break;
		}
	}
	if (c < 0)
		return g.exit;
	if (optind < argc) {
		ctl_usage_error("report", "unexpected argument '%s'",
		    argv[optind]);
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "report", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON | 1 << FORMAT_CSV | 1 << FORMAT_MARKDOWN |
	    1 << FORMAT_GITHUB | 1 << FORMAT_JUNIT) < 0)
		return EXIT_ERROR;
	memset(&q, 0, sizeof q);
	if (parse_window("report", since, until, &q.since_ms, &q.until_ms) < 0)
		return EXIT_ERROR;
	whole_days(&q);
	q.target = target;
	q.kinds = ctl->kinds;
	q.box = ctl->box;
	if (flaky_store_open(ctl_db_path(ctl), FLAKY_STORE_READONLY, &store,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl report: %s\n", err);
		return EXIT_ERROR;
	}
	ctl_store_box(ctl, store, 0);
	memset(&head, 0, sizeof head);
	memset(&hist, 0, sizeof hist);
	if (ctl_check_target(store, "report", target) < 0 ||
	    ctl_check_box(store, "report", q.box) < 0)
		goto out;
	head.target = target;
	head.since_ms = q.since_ms;
	head.until_ms = q.until_ms;
	if (flaky_store_run_counts(store, &q, &head.runs, err,
	    sizeof err) < 0 || flaky_store_test_stats(store, &q, &rows,
	    &nrows, err, sizeof err) < 0 || flaky_store_history(store, &q,
	    &hist, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		goto out;
	}
	head.hist = &hist;
	head.store = store;
	sort_rows_by(rows, nrows, how, &hist);
	if (html != NULL) {
		if (html_report(html, &head, &q, err, sizeof err) < 0) {
			fprintf(stderr, "flakyctl report: %s\n", err);
			goto out;
		}
	} else
		print_report(ctl, &head, rows, nrows);
	ret = fail_mask && gate_tripped(rows, nrows, fail_mask) ?
	    EXIT_FOUND : EXIT_OK;
out:
	flaky_history_free(&hist);
	flaky_test_rows_free(rows, nrows);
	flaky_store_close(store);
	return ret;
}
