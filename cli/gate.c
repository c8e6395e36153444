/* flakyctl gate: a CI step that fails (exit 1) when the window breaks a
 * limit, with one line per breach. */
#include "buildconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flakyctl.h"
#include "format.h"
#include "output.h"
#include "stats/stats.h"
#include "store/store.h"
#include "util/util.h"

#define NAMES_SHOWN	5

/* One limit: the tests that count against it, named in one line (with
 * --format github, an ::error and an annotation per test), kept in sum
 * for the step summary. */
static int
check(const char *what, long long max, const struct flaky_test_row *v,
    size_t n, const struct flaky_history *hist,
    int (*counts)(const struct flaky_test_row *,
    const struct flaky_history_row *), int gh, struct flaky_buf *sum)
{
	struct flaky_buf line;
	char		 title[64];
	long long	 k = 0;

	if (max < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		k += counts(&v[i], flaky_history_find(hist, v[i].test_id));
	if (k <= max)
		return 0;
	flaky_buf_init(&line);
	flaky_buf_printf(&line, "gate: %lld %s test%s, at most %lld allowed:",
	    k, what, k == 1 ? "" : "s", max);
	for (size_t i = 0, shown = 0; i < n; i++) {
		if (!counts(&v[i], flaky_history_find(hist, v[i].test_id)))
			continue;
		if (shown++ == NAMES_SHOWN) {
			flaky_buf_adds(&line, " ...");
			break;
		}
		flaky_buf_printf(&line, "%s %s", shown > 1 ? "," : "",
		    v[i].test);
	}
	snprintf(title, sizeof title, "flaky gate: %s", what);
	if (gh) {
		github_command(stdout, "error", title, flaky_buf_cstr(&line));
		for (size_t i = 0; i < n; i++)
			if (counts(&v[i], flaky_history_find(hist,
			    v[i].test_id)))
				github_annotate(stdout, "error", title, &v[i],
				    NULL);
	} else
		printf("%s\n", flaky_buf_cstr(&line));
	flaky_buf_printf(sum, "- %s\n", flaky_buf_cstr(&line));
	flaky_buf_free(&line);
	return 1;
}

/* The step summary of a gate: its verdict, the breaches, the tests. */
static void
gate_summary(int breaches, struct flaky_buf *sum,
    const struct flaky_test_row *v, size_t n, const struct flaky_history *h)
{
	FILE	*f;

	if ((f = github_summary_open()) == NULL)
		return;
	fprintf(f, "### flaky gate: %s\n\n%s%s", breaches ? "failed" :
	    "passed", flaky_buf_cstr(sum), breaches ? "\n" : "");
	github_summary_rows(f, v, n, h);
	fclose(f);
}

/* Quarantined tests are known and deselected: they do not count. */
static int
is_critical(const struct flaky_test_row *r, const struct flaky_history_row *h)
{
	return (h == NULL || !h->quarantined) &&
	    flaky_tier(r->failures, r->runs) == FLAKY_TIER_CRITICAL;
}

/* Unstable now, not in the previous window. */
static int
is_new_flaky(const struct flaky_test_row *r, const struct flaky_history_row *h)
{
	return h != NULL && !h->quarantined && h->trend == FLAKY_TREND_NEW &&
	    r->failures > 0 && r->failures < r->runs;
}

/* A higher failure rate than in the previous window. */
static int
is_worse(const struct flaky_test_row *r, const struct flaky_history_row *h)
{
	(void)r;
	return h != NULL && !h->quarantined && h->trend == FLAKY_TREND_WORSE;
}

/* Failing every run of the window. */
static int
is_broken(const struct flaky_test_row *r, const struct flaky_history_row *h)
{
	return (h == NULL || !h->quarantined) &&
	    flaky_tier(r->failures, r->runs) == FLAKY_TIER_BROKEN;
}

static int	cmd_gate(struct ctl *, int, char **);

static const struct cmd_option gate_options[] = {
	{ "since", 's', 0, "D|DATE|all", "the window's start (default 7d, "
	    "not report's 30d: a gate judges the recent state, so a fix "
	    "shows within days; all: from the first run)" },
	{ "until", 'u', 0, "DATE", "the window's end, exclusive (default "
	    "now)" },
	{ "target", 'T', 0, "NAME", "only this target's tests (default "
	    "all targets)" },
	{ "max-critical", 0, 'c', "N", "at most N critical tests (default "
	    "no limit; give at least one --max)" },
	{ "max-new-flaky", 0, 'n', "N", "at most N tests unstable since the "
	    "previous window (default no limit)" },
	{ "max-worse", 0, 'w', "N", "at most N tests worse than in the "
	    "previous window (default no limit)" },
	{ "max-broken", 0, 'b', "N", "at most N broken tests (failing every "
	    "run; default no limit)" },
	CMD_OPTION_KIND,
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_gate_entry = {
	.name = "gate",
	.usage = "gate [--since D|all] [--until DATE] [--target NAME] "
	    "[--max-critical N] [--max-new-flaky N] [--max-worse N] "
	    "[--max-broken N] [--kind K]",
	.summary = "Exit 1 with one line per breach of the limits: a CI step.",
	.example = "flakyctl gate --max-critical 0 --max-new-flaky 0",
	.options = gate_options,
	.exec = cmd_gate,
};

/* flakyctl gate: check the window against the limits given. */
static int
cmd_gate(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct flaky_store *store = NULL;
	struct flaky_test_row *rows = NULL;
	struct flaky_history hist;
	struct flaky_query q;
	size_t		 nrows = 0;
	const char	*since = "7d", *until = NULL;
	struct flaky_buf sum;
	long long	 lim[4] = { -1, -1, -1, -1 };
	int		 c, ret = EXIT_ERROR, breaches = 0, gh;

	flaky_buf_init(&sum);
	memset(&q, 0, sizeof q);
	memset(&hist, 0, sizeof hist);
	cmd_getopt_init(&g, &cmd_gate_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		const char *opt = NULL;
		int	 k = 0;

		switch (c) {
		case 's':
			since = optarg;
			continue;
		case 'u':
			until = optarg;
			continue;
		case 'T':
			q.target = optarg;
			continue;
		case 'c': k = 0; opt = "--max-critical"; break;
		case 'n': k = 1; opt = "--max-new-flaky"; break;
		case 'w': k = 2; opt = "--max-worse"; break;
		case 'b': k = 3; opt = "--max-broken"; break;
		default:
			continue;
		}
		if (flaky_parse_int(optarg, 0, INT32_MAX, &lim[k]) < 0) {
			ctl_usage_error("gate", "%s: expected a count, got "
			    "'%s'", opt, optarg);
			return EXIT_ERROR;
		}
	}
	if (c < 0)
		return g.exit;
	if (optind < argc) {
		ctl_usage_error("gate", "unexpected argument '%s'",
		    argv[optind]);
		return EXIT_ERROR;
	}
	if (lim[0] < 0 && lim[1] < 0 && lim[2] < 0 && lim[3] < 0) {
		ctl_usage_error("gate", "expected at least one of "
		    "--max-critical, --max-new-flaky, --max-worse, --max-broken");
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "gate", 1 << FORMAT_TABLE |
	    1 << FORMAT_GITHUB) < 0 ||
	    parse_window("gate", since, until, &q.since_ms, &q.until_ms) < 0)
		return EXIT_ERROR;
	q.kinds = ctl->kinds;
	if (report_read(ctl, "gate", &q, &store, &rows, &nrows, &hist) < 0)
		goto out;
	sort_rows(rows, nrows);
	gh = ctl->format == FORMAT_GITHUB;
	breaches += check("critical", lim[0], rows, nrows, &hist, is_critical,
	    gh, &sum);
	breaches += check("new flaky", lim[1], rows, nrows, &hist,
	    is_new_flaky, gh, &sum);
	breaches += check("worse", lim[2], rows, nrows, &hist, is_worse, gh,
	    &sum);
	breaches += check("broken", lim[3], rows, nrows, &hist, is_broken, gh,
	    &sum);
	if (breaches == 0)
		printf("gate: ok (%zu test%s in the window)\n", nrows,
		    nrows == 1 ? "" : "s");
	if (gh)
		gate_summary(breaches, &sum, rows, nrows, &hist);
	ret = breaches ? EXIT_FOUND : EXIT_OK;
out:
	flaky_buf_free(&sum);
	flaky_history_free(&hist);
	flaky_test_rows_free(rows, nrows);
	flaky_store_close(store);
	return ret;
}
