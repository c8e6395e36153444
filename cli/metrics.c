/* flakyctl metrics: the current figures in the Prometheus text format, for
 * node_exporter's textfile collector. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flakyctl.h"
#include "log.h"
#include "output.h"
#include "stats/stats.h"
#include "store/store.h"
#include "util/util.h"

/* A label value: backslash, quote and newline escaped. */
static void
label(const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		if (*s == '\\' || *s == '"')
			printf("\\%c", *s);
		else if (*s == '\n')
			printf("\\n");
		else
			putchar(*s);
	}
}

/* The labels of one test's samples. */
static void
test_labels(const struct flaky_test_row *r)
{
	printf("{target=\"");
	label(r->target);
	printf("\",test=\"");
	label(r->test);
	printf("\"}");
}

struct target_group {
	size_t			 first, tests, tiers[4];
	struct flaky_run_counts	 runs;
};

/* Rows by target, then test: the samples of a target together. */
static int
cmp_target(const void *a, const void *b)
{
	const struct flaky_test_row *x = a, *y = b;
	int	 c = strcmp(x->target, y->target);

	return c ? c : strcmp(x->test, y->test);
}

/* The window's start; with --since all, the first run's (until when
 * there is none, a window of 0 s). */
static int64_t
window_start(struct flaky_store *store, const struct flaky_query *q)
{
	struct flaky_run_counts rc;
	char	 err[256];

	if (q->since_ms != INT64_MIN)
		return q->since_ms;
	if (flaky_store_run_counts(store, q, &rc, err, sizeof err) < 0 ||
	    rc.runs == 0 || rc.first_ms > q->until_ms)
		return q->until_ms;
	return rc.first_ms;
}

static int	cmd_metrics(struct ctl *, int, char **);

static const struct cmd_option metrics_options[] = {
	{ "since", 's', 0, "D|DATE|all", "the window's start (default 7d, "
	    "not report's 30d: a gauge shows the recent state, so a fix "
	    "shows within days; all: from the first run)" },
	{ "target", 'T', 0, "NAME", "only this target's tests (default "
	    "all targets)" },
	CMD_OPTION_KIND,
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_metrics_entry = {
	.name = "metrics",
	.usage = "metrics [--since D|all] [--target NAME] [--kind K]",
	.summary = "The current figures in the Prometheus text format.",
	.example = "flakyctl metrics > /var/lib/node_exporter/flaky.prom",
	.options = metrics_options,
	.exec = cmd_metrics,
};

/* The outbox (docs/fleet.md): finished runs not yet on the fleet's
 * server, and how long the oldest has waited. Read from the database, so
 * it is right whether or not flakyd runs. */
static int
print_backlog(struct flaky_store *store)
{
	struct flaky_ship_backlog b;
	char	 err[1024];

	if (flaky_store_ship_backlog(store, &b, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl metrics: %s\n", err);
		return -1;
	}
	printf("# HELP flaky_fleet_backlog_runs Finished runs not yet shipped "
	    "to the fleet's server.\n# TYPE flaky_fleet_backlog_runs gauge\n"
	    "flaky_fleet_backlog_runs %lld\n"
	    "# HELP flaky_fleet_backlog_oldest_seconds Age of the oldest "
	    "finished run not yet shipped (0: none).\n"
	    "# TYPE flaky_fleet_backlog_oldest_seconds gauge\n"
	    "flaky_fleet_backlog_oldest_seconds %.3f\n"
	    "# HELP flaky_fleet_shipped_runs Runs shipped so far.\n"
	    "# TYPE flaky_fleet_shipped_runs counter\n"
	    "flaky_fleet_shipped_runs %lld\n", (long long)b.runs,
	    b.oldest_ms > 0 ? (double)(flaky_now_ms() - b.oldest_ms) / 1e3 :
	    0.0, (long long)b.shipped);
	return 0;
}

/* flakyctl metrics: one family per figure, one sample per test. */
static int
cmd_metrics(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt go;
	static const char *const tiers[] = { "critical", "warning", "broken",
	    "noise" };
	struct flaky_store *store = NULL;
	struct flaky_test_row *rows = NULL;
	static const struct {
		const char	*name, *help;
	} families[5] = {
		{ "failure_rate", "Failed runs / runs in the window." },
		{ "runs", "Runs of the test in the window." },
		{ "failures", "Failed runs in the window." },
		{ "budget_seconds", "Wall time of the runs in which the test "
		    "failed." },
		{ "quarantined", "1 when the test is in quarantine." },
	};
	struct target_group *groups = NULL;
	struct flaky_history hist;
	struct flaky_query q;
	size_t		 nrows = 0, ng = 0;
	const char	*since = "7d";
	char		 err[1024];
	int		 c, ret = EXIT_ERROR;

	memset(&q, 0, sizeof q);
	memset(&hist, 0, sizeof hist);
	cmd_getopt_init(&go, &cmd_metrics_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&go)) > 0) {
		switch (c) {
		case 's':
			since = optarg;
			break;
		case 'T':
			q.target = optarg;
			break;
		}
	}
	if (c < 0)
		return go.exit;
	if (optind < argc) {
		ctl_usage_error("metrics", "unexpected argument '%s'",
		    argv[optind]);
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "metrics", 1 << FORMAT_TABLE) < 0 ||
	    parse_window("metrics", since, NULL, &q.since_ms, &q.until_ms) < 0)
		return EXIT_ERROR;
	q.kinds = ctl->kinds;
	if (report_read(ctl, "metrics", &q, &store, &rows, &nrows, &hist) < 0)
		goto out;
	if (nrows > 1)
		qsort(rows, nrows, sizeof *rows, cmp_target);
	printf("# HELP flaky_window_seconds Length of the window the figures "
	    "cover.\n# TYPE flaky_window_seconds gauge\n"
	    "flaky_window_seconds %lld\n", (long long)((q.until_ms -
	    window_start(store, &q)) / 1000));
	/* Per target: runs, tests and tests by tier; each family's samples
	 * together, as the text format requires. */
	groups = xcalloc(nrows + 1, sizeof *groups);
	for (size_t i = 0, j; i < nrows; i = j) {
		struct flaky_query tq = q;
		struct target_group *g = &groups[ng++];

		g->first = i;
		for (j = i; j < nrows && strcmp(rows[j].target,
		    rows[i].target) == 0; j++) {
			int	 t = flaky_tier(rows[j].failures, rows[j].runs);

			g->tiers[0] += t == FLAKY_TIER_CRITICAL;
			g->tiers[1] += t == FLAKY_TIER_WARNING;
			g->tiers[2] += t == FLAKY_TIER_BROKEN;
			g->tiers[3] += t == FLAKY_TIER_NOISE;
		}
		g->tests = j - i;
		tq.target = rows[i].target;
		if (flaky_store_run_counts(store, &tq, &g->runs, err,
		    sizeof err) < 0) {
			fprintf(stderr, "flakyctl metrics: %s\n", err);
			goto out;
		}
	}
	printf("# HELP flaky_target_runs Runs of the target in the window.\n"
	    "# TYPE flaky_target_runs gauge\n");
	for (size_t i = 0; i < ng; i++) {
		printf("flaky_target_runs{target=\"");
		label(rows[groups[i].first].target);
		printf("\"} %lld\n", (long long)groups[i].runs.runs);
	}
	printf("# HELP flaky_target_tests Tests seen in the window.\n"
	    "# TYPE flaky_target_tests gauge\n");
	for (size_t i = 0; i < ng; i++) {
		printf("flaky_target_tests{target=\"");
		label(rows[groups[i].first].target);
		printf("\"} %zu\n", groups[i].tests);
	}
	printf("# HELP flaky_target_unstable_tests Tests with failures, by "
	    "tier.\n# TYPE flaky_target_unstable_tests gauge\n");
	for (size_t i = 0; i < ng; i++)
		for (int t = 0; t < 4; t++) {
			printf("flaky_target_unstable_tests{target=\"");
			label(rows[groups[i].first].target);
			printf("\",tier=\"%s\"} %zu\n", tiers[t],
			    groups[i].tiers[t]);
		}
	/* Per unstable test, one family at a time. */
	for (int m = 0; m < 5; m++) {
		printf("# HELP flaky_test_%s %s\n# TYPE flaky_test_%s gauge\n",
		    families[m].name, families[m].help, families[m].name);
		for (size_t i = 0; i < nrows; i++) {
			const struct flaky_test_row *r = &rows[i];
			const struct flaky_history_row *h;
			double	 v;

			if (r->failures == 0)
				continue;
			h = flaky_history_find(&hist, r->test_id);
			switch (m) {
			case 0:
				v = (double)r->failures / (double)r->runs;
				break;
			case 1: v = (double)r->runs; break;
			case 2: v = (double)r->failures; break;
			case 3:
				v = h ? (double)h->budget_wall_us / 1e6 : 0;
				break;
			default: v = h ? h->quarantined : 0; break;
			}
			printf("flaky_test_%s", families[m].name);
			test_labels(r);
			printf(" %.10g\n", v);
		}
	}
	if (print_backlog(store) < 0)
		goto out;
	ret = EXIT_OK;
out:
	free(groups);
	flaky_history_free(&hist);
	flaky_test_rows_free(rows, nrows);
	flaky_store_close(store);
	return ret;
}
