/* The current figures in the Prometheus text format: flakyctl metrics
 * writes them for node_exporter's textfile collector, /metrics serves them
 * for scraping. One writer for both. */
#include "buildconf.h"

#include "stats/stats.h"
#include "web_int.h"

/* A label value: backslash, quote and newline escaped. */
static void
label(struct flaky_buf *b, const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		if (*s == '\\' || *s == '"') {
			flaky_buf_addc(b, '\\');
			flaky_buf_addc(b, *s);
		} else if (*s == '\n')
			flaky_buf_adds(b, "\\n");
		else
			flaky_buf_addc(b, *s);
	}
}

/* The labels of one test's samples. */
static void
test_labels(struct flaky_buf *b, const struct flaky_test_row *r)
{
	flaky_buf_adds(b, "{target=\"");
	label(b, r->target);
	flaky_buf_adds(b, "\",test=\"");
	label(b, r->test);
	flaky_buf_adds(b, "\"}");
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

/* Per target: runs, tests and tests by tier. */
static int
group_targets(struct flaky_store *store, const struct flaky_query *q,
    const struct flaky_test_row *rows, size_t nrows, struct target_group *g,
    size_t *ng, char *err, size_t errlen)
{
	for (size_t i = 0, j; i < nrows; i = j) {
		struct flaky_query tq = *q;
		struct target_group *x = &g[(*ng)++];

		x->first = i;
		for (j = i; j < nrows && strcmp(rows[j].target,
		    rows[i].target) == 0; j++) {
			int	 t = flaky_tier(rows[j].failures, rows[j].runs);

			x->tiers[0] += t == FLAKY_TIER_CRITICAL;
			x->tiers[1] += t == FLAKY_TIER_WARNING;
			x->tiers[2] += t == FLAKY_TIER_BROKEN;
			x->tiers[3] += t == FLAKY_TIER_NOISE;
		}
		x->tests = j - i;
		tq.target = rows[i].target;
		if (flaky_store_run_counts(store, &tq, &x->runs, err,
		    errlen) < 0)
			return -1;
	}
	return 0;
}

/* The per-target families, each family's samples together as the text
 * format requires. */
static void
target_families(struct flaky_buf *b, const struct flaky_test_row *rows,
    const struct target_group *g, size_t ng)
{
	static const char *const tiers[] = { "critical", "warning", "broken",
	    "noise" };

	flaky_buf_adds(b, "# HELP flaky_target_runs Runs of the target in "
	    "the window.\n# TYPE flaky_target_runs gauge\n");
	for (size_t i = 0; i < ng; i++) {
		flaky_buf_adds(b, "flaky_target_runs{target=\"");
		label(b, rows[g[i].first].target);
		flaky_buf_printf(b, "\"} %lld\n", (long long)g[i].runs.runs);
	}
	flaky_buf_adds(b, "# HELP flaky_target_tests Tests seen in the "
	    "window.\n# TYPE flaky_target_tests gauge\n");
	for (size_t i = 0; i < ng; i++) {
		flaky_buf_adds(b, "flaky_target_tests{target=\"");
		label(b, rows[g[i].first].target);
		flaky_buf_printf(b, "\"} %zu\n", g[i].tests);
	}
	flaky_buf_adds(b, "# HELP flaky_target_unstable_tests Tests with "
	    "failures, by tier.\n# TYPE flaky_target_unstable_tests gauge\n");
	for (size_t i = 0; i < ng; i++)
		for (int t = 0; t < 4; t++) {
			flaky_buf_adds(b, "flaky_target_unstable_tests{"
			    "target=\"");
			label(b, rows[g[i].first].target);
			flaky_buf_printf(b, "\",tier=\"%s\"} %zu\n", tiers[t],
			    g[i].tiers[t]);
		}
}

/* The outbox (docs/fleet.md): finished runs not yet on the fleet's
 * server, and how long the oldest has waited. Read from the database, so
 * it is right whether or not flakyd runs. */
static int
backlog_families(struct flaky_store *store, struct flaky_buf *b, char *err,
    size_t errlen)
{
	struct flaky_ship_backlog bl;

	if (flaky_store_ship_backlog(store, &bl, err, errlen) < 0)
		return -1;
	flaky_buf_printf(b, "# HELP flaky_fleet_backlog_runs Finished runs "
	    "not yet shipped to the fleet's server.\n"
	    "# TYPE flaky_fleet_backlog_runs gauge\n"
	    "flaky_fleet_backlog_runs %lld\n"
	    "# HELP flaky_fleet_backlog_oldest_seconds Age of the oldest "
	    "finished run not yet shipped (0: none).\n"
	    "# TYPE flaky_fleet_backlog_oldest_seconds gauge\n"
	    "flaky_fleet_backlog_oldest_seconds %.3f\n"
	    "# HELP flaky_fleet_shipped_runs Runs shipped so far.\n"
	    "# TYPE flaky_fleet_shipped_runs counter\n"
	    "flaky_fleet_shipped_runs %lld\n", (long long)bl.runs,
	    bl.oldest_ms > 0 ? (double)(flaky_now_ms() - bl.oldest_ms) / 1e3 :
	    0.0, (long long)bl.shipped);
	return 0;
}

/* Per unstable test, one family at a time. */
static void
test_families(struct flaky_buf *b, const struct flaky_test_row *rows,
    size_t nrows, const struct flaky_history *hist)
{
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

	for (int m = 0; m < 5; m++) {
		flaky_buf_printf(b, "# HELP flaky_test_%s %s\n# TYPE "
		    "flaky_test_%s gauge\n", families[m].name,
		    families[m].help, families[m].name);
		for (size_t i = 0; i < nrows; i++) {
			const struct flaky_test_row *r = &rows[i];
			const struct flaky_history_row *h;
			double	 v;

			if (r->failures == 0)
				continue;
			h = flaky_history_find(hist, r->test_id);
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
			flaky_buf_printf(b, "flaky_test_%s", families[m].name);
			test_labels(b, r);
			flaky_buf_printf(b, " %.10g\n", v);
		}
	}
}

int
flaky_web_metrics(struct flaky_store *store, const struct flaky_query *q,
    struct flaky_buf *b, char *err, size_t errlen)
{
	struct flaky_test_row *rows = NULL;
	struct target_group *groups = NULL;
	struct flaky_history hist;
	size_t	 nrows = 0, ng = 0;
	int	 r = -1;

	memset(&hist, 0, sizeof hist);
	if (flaky_store_test_stats(store, q, &rows, &nrows, err, errlen) < 0 ||
	    flaky_store_history(store, q, &hist, err, errlen) < 0)
		goto out;
	if (nrows > 1)
		qsort(rows, nrows, sizeof *rows, cmp_target);
	flaky_buf_printf(b, "# HELP flaky_window_seconds Length of the window "
	    "the figures cover.\n# TYPE flaky_window_seconds gauge\n"
	    "flaky_window_seconds %lld\n", (long long)((q->until_ms -
	    window_start(store, q)) / 1000));
	if ((groups = calloc(nrows + 1, sizeof *groups)) == NULL) {
		flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	if (group_targets(store, q, rows, nrows, groups, &ng, err,
	    errlen) < 0)
		goto out;
	target_families(b, rows, groups, ng);
	test_families(b, rows, nrows, &hist);
	if (backlog_families(store, b, err, errlen) < 0)
		goto out;
	r = b->oom ? flaky_error(err, errlen, ENOMEM, "out of memory") : 0;
out:
	free(groups);
	flaky_history_free(&hist);
	flaky_test_rows_free(rows, nrows);
	return r;
}

/* /metrics: the last 7 days, as flakyctl metrics by default. */
int
web_metrics(struct web_ctx *c)
{
	struct flaky_query q;

	memset(&q, 0, sizeof q);
	q.until_ms = c->o->now_ms;
	q.since_ms = q.until_ms - 7 * FLAKY_DAY_MS;
	if (flaky_web_metrics(c->st, &q, c->b, c->err, sizeof c->err) < 0)
		return web_fail(c, 500, c->err);
	return 0;
}
