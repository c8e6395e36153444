/* flakyctl metrics: the current figures in the Prometheus text format, for
 * node_exporter's textfile collector. */
#include "buildconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flakyctl.h"
#include "stats.h"
#include "store.h"
#include "store_history.h"
#include "util.h"

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

static void
test_labels(const struct flaky_test_row *r)
{
	printf("{target=\"");
	label(r->target);
	printf("\",test=\"");
	label(r->test);
	printf("\"}");
}

static int
cmp_target(const void *a, const void *b)
{
	const struct flaky_test_row *x = a, *y = b;
	int	 c = strcmp(x->target, y->target);

	return c ? c : strcmp(x->test, y->test);
}

int
cmd_metrics(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "since", required_argument, NULL, 's' },
		{ "target", required_argument, NULL, 'T' },
		CTL_GLOBAL_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	static const char *const tiers[] = { "critical", "warning", "broken",
	    "noise" };
	struct flaky_store *store = NULL;
	struct flaky_test_row *rows = NULL;
	struct flaky_history hist;
	struct flaky_query q;
	size_t		 nrows = 0;
	const char	*since = "7d";
	char		 err[1024];
	int		 c, ret = EXIT_ERROR;

	memset(&q, 0, sizeof q);
	memset(&hist, 0, sizeof hist);
	while ((c = getopt_long(argc, argv, "s:T:", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			since = optarg;
			break;
		case 'T':
			q.target = optarg;
			break;
		case '?':
			ctl_usage_error("metrics", "unknown option");
			return EXIT_ERROR;
		default:
			if (ctl_global_option(ctl, c, optarg) < 0)
				return EXIT_ERROR;
		}
	}
	if (optind < argc) {
		ctl_usage_error("metrics", "unexpected argument '%s'",
		    argv[optind]);
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "metrics", 1 << FORMAT_TABLE) < 0 ||
	    parse_window("metrics", since, NULL, &q.since_ms, &q.until_ms) < 0)
		return EXIT_ERROR;
	if (flaky_store_open(ctl_db_path(ctl), FLAKY_STORE_READONLY, &store,
	    err, sizeof err) < 0 || flaky_store_test_stats(store, &q, &rows,
	    &nrows, err, sizeof err) < 0 || flaky_store_history(store, &q,
	    &hist, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl metrics: %s\n", err);
		goto out;
	}
	if (nrows > 1)
		qsort(rows, nrows, sizeof *rows, cmp_target);
	printf("# HELP flaky_window_seconds Length of the window the figures "
	    "cover.\n# TYPE flaky_window_seconds gauge\n"
	    "flaky_window_seconds %lld\n", (long long)((q.until_ms -
	    q.since_ms) / 1000));
	/* Per target: runs, tests and tests by tier. */
	printf("# HELP flaky_target_runs Runs of the target in the window.\n"
	    "# TYPE flaky_target_runs gauge\n");
	printf("# HELP flaky_target_tests Tests seen in the window.\n"
	    "# TYPE flaky_target_tests gauge\n");
	printf("# HELP flaky_target_unstable_tests Tests with failures, by "
	    "tier.\n# TYPE flaky_target_unstable_tests gauge\n");
	for (size_t i = 0; i < nrows;) {
		struct flaky_run_counts rc;
		struct flaky_query tq = q;
		size_t	 j, n[4] = { 0, 0, 0, 0 };

		for (j = i; j < nrows && strcmp(rows[j].target,
		    rows[i].target) == 0; j++) {
			int	 t = flaky_tier(rows[j].failures, rows[j].runs);

			n[0] += t == FLAKY_TIER_CRITICAL;
			n[1] += t == FLAKY_TIER_WARNING;
			n[2] += t == FLAKY_TIER_BROKEN;
			n[3] += t == FLAKY_TIER_NOISE;
		}
		tq.target = rows[i].target;
		if (flaky_store_run_counts(store, &tq, &rc, err,
		    sizeof err) < 0) {
			fprintf(stderr, "flakyctl metrics: %s\n", err);
			goto out;
		}
		printf("flaky_target_runs{target=\"");
		label(rows[i].target);
		printf("\"} %lld\nflaky_target_tests{target=\"",
		    (long long)rc.runs);
		label(rows[i].target);
		printf("\"} %zu\n", j - i);
		for (int t = 0; t < 4; t++) {
			printf("flaky_target_unstable_tests{target=\"");
			label(rows[i].target);
			printf("\",tier=\"%s\"} %zu\n", tiers[t], n[t]);
		}
		i = j;
	}
	/* Per unstable test. */
	printf("# HELP flaky_test_failure_rate Failed runs / runs in the "
	    "window.\n# TYPE flaky_test_failure_rate gauge\n");
	printf("# HELP flaky_test_runs Runs of the test in the window.\n"
	    "# TYPE flaky_test_runs gauge\n");
	printf("# HELP flaky_test_failures Failed runs in the window.\n"
	    "# TYPE flaky_test_failures gauge\n");
	printf("# HELP flaky_test_budget_seconds Wall time of the runs in "
	    "which the test failed.\n# TYPE flaky_test_budget_seconds gauge\n");
	printf("# HELP flaky_test_quarantined 1 when the test is in "
	    "quarantine.\n# TYPE flaky_test_quarantined gauge\n");
	for (size_t i = 0; i < nrows; i++) {
		const struct flaky_test_row *r = &rows[i];
		const struct flaky_history_row *h;

		if (r->failures == 0)
			continue;
		h = flaky_history_find(&hist, r->test_id);
		printf("flaky_test_failure_rate");
		test_labels(r);
		printf(" %.6f\nflaky_test_runs", (double)r->failures /
		    (double)r->runs);
		test_labels(r);
		printf(" %lld\nflaky_test_failures", (long long)r->runs);
		test_labels(r);
		printf(" %lld\nflaky_test_budget_seconds",
		    (long long)r->failures);
		test_labels(r);
		printf(" %.3f\nflaky_test_quarantined", h ?
		    (double)h->budget_wall_us / 1e6 : 0.0);
		test_labels(r);
		printf(" %d\n", h ? h->quarantined : 0);
	}
	ret = EXIT_OK;
out:
	flaky_history_free(&hist);
	flaky_test_rows_free(rows, nrows);
	flaky_store_close(store);
	return ret;
}
