/* flakyctl trend TEST: one test week by week, from the daily rollups. */
#include "buildconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "flakyctl.h"
#include "log.h"
#include "output.h"
#include "stats/stats.h"
#include "store/store.h"
#include "util/util.h"

#define WEEKS_MAX	520

static int	cmd_trend(struct ctl *, int, char **);

static const struct cmd_option trend_options[] = {
	{ "weeks", 'w', 0, "N", "how many weeks back (default 8)" },
	{ "target", 'T', 0, "NAME", "the test's target, when several have "
	    "it (default the one that has it)" },
	{ "until", 'u', 0, "DATE", "the last week ends with this day "
	    "(default today)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_trend_entry = {
	.name = "trend",
	.usage = "trend TEST [--weeks N] [--target NAME] [--until DATE]",
	.summary = "One test week by week: runs, failures, rate, "
	    "sparkline.",
	.example = "flakyctl trend test_login_retry --weeks 12",
	.options = trend_options,
	.exec = cmd_trend,
};

/* flakyctl trend TEST: whole weeks from the daily rollups. */
static int
cmd_trend(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct flaky_store *store = NULL;
	struct flaky_buf spark;
	uint32_t	*runs = NULL, *fails = NULL, wr[WEEKS_MAX], wf[WEEKS_MAX];
	const char	*target = NULL, *query, *until = NULL;
	char		*test = NULL, *tname = NULL;
	long long	 weeks = 8;
	int64_t		 u, to, first, id;
	char		 err[1024], day[16];
	int		 c, ret = EXIT_ERROR;

	flaky_buf_init(&spark);
	cmd_getopt_init(&g, &cmd_trend_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		switch (c) {
		case 'w':
			if (flaky_parse_int(optarg, 1, WEEKS_MAX, &weeks) < 0) {
				ctl_usage_error("trend", "--weeks: expected a "
				    "number from 1 to %d, got '%s'", WEEKS_MAX,
				    optarg);
				return EXIT_ERROR;
			}
			break;
		case 'T':
			target = optarg;
			break;
		case 'u':
			until = optarg;
			break;
		}
	}
	if (c < 0)
		return g.exit;
	if (optind != argc - 1) {
		ctl_usage_error("trend", "expected one TEST");
		return EXIT_ERROR;
	}
	query = argv[optind];
	if (ctl_check_format(ctl, "trend", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON) < 0)
		return EXIT_ERROR;
	u = flaky_now_ms();
	if (until != NULL && flaky_parse_time(until, &u) < 0) {
		ctl_usage_error("trend", "--until: expected a date (2026-11-01) "
		    "or an ISO 8601 time, got '%s'", until);
		return EXIT_ERROR;
	}
	/* Whole weeks that end with the day of until. */
	to = (u - 1) / FLAKY_DAY_MS + 1;
	first = to - 7 * weeks;
	runs = xcalloc((size_t)weeks * 7, sizeof *runs);
	fails = xcalloc((size_t)weeks * 7, sizeof *fails);
	if (flaky_store_open(ctl_db_path(ctl), FLAKY_STORE_READONLY, &store,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl trend: %s\n", err);
		goto out;
	}
	/* the same forms of TEST as show, triage and ticket take */
	if (diag_resolve_name(store, "trend", target, query, &id, &test,
	    &tname) < 0)
		goto out;
	if (flaky_store_test_days(store, id, first, weeks * 7, runs, fails,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl trend: %s\n", err);
		goto out;
	}
	for (long long w = 0; w < weeks; w++) {
		wr[w] = wf[w] = 0;
		for (int d = 0; d < 7; d++) {
			wr[w] += runs[w * 7 + d];
			wf[w] += fails[w * 7 + d];
		}
	}
	sparkline(&spark, wr, wf, (size_t)weeks, (size_t)weeks,
	    ctl->format == FORMAT_TABLE && ctl->tty);
	if (ctl->format == FORMAT_JSON) {
		printf("{\"test\": ");
		json_string(stdout, test);
		printf(", \"target\": ");
		json_string(stdout, tname);
		printf(", \"weeks\": [");
	} else
		printf("%s, by week\n%-10s  %7s  %8s  %7s  %s\n", test,
		    "week of", "runs", "failures", "rate", "95% interval");
	for (long long w = 0; w < weeks; w++) {
		double	 lo, hi, rate = wr[w] ? (double)wf[w] / wr[w] : 0;

		flaky_wilson(wf[w], wr[w], FLAKY_Z95, &lo, &hi);
		flaky_format_day((first + w * 7) * FLAKY_DAY_MS, day,
		    sizeof day);
		if (ctl->format == FORMAT_JSON) {
			printf("%s\n  {\"start\": \"%s\", \"runs\": %u, "
			    "\"failures\": %u, \"fail_rate\": ", w ? "," : "",
			    day, wr[w], wf[w]);
			if (wr[w] == 0)
				printf("null, \"ci_low\": null, "
				    "\"ci_high\": null}");
			else
				printf("%.6f, \"ci_low\": %.6f, "
				    "\"ci_high\": %.6f}", rate, lo, hi);
			continue;
		}
		if (wr[w] == 0)
			printf("%-10s  %7u  %8s  %7s\n", day, 0u, "-", "-");
		else
			printf("%-10s  %7u  %8u  %6.1f%%  [%.1f%%-%.1f%%]\n",
			    day, wr[w], wf[w], 100 * rate, 100 * lo,
			    100 * hi);
	}
	if (ctl->format == FORMAT_JSON) {
		printf("\n ], \"sparkline\": ");
		json_string(stdout, flaky_buf_cstr(&spark));
		printf("}\n");
	} else
		printf("%s\n", flaky_buf_cstr(&spark));
	ret = EXIT_OK;
out:
	flaky_buf_free(&spark);
	free(runs);
	free(fails);
	free(test);
	free(tname);
	flaky_store_close(store);
	return ret;
}
