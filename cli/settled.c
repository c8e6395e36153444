/* analyze --until-settled: how many runs it took, why it stopped and the
 * failing tests whose tier is still open (docs/statistics.md). */
#include "buildconf.h"

#include <stdio.h>

#include "flakyctl.h"
#include "output.h"
#include "pipeline/pipeline.h"
#include "stats/stats.h"

int
settled_option(int c, const char *arg, int *until, int *runs,
    int64_t *budget_ms, int *runs_set)
{
	long long	 v;
	int64_t		 ms;

	switch (c) {
	case 'U':
		*until = 1;
		break;
	case 'M':
		if (flaky_parse_int(arg, 1, 1000000, &v) < 0) {
			ctl_usage_error("analyze", "--max-runs: expected a "
			    "number from 1 to 1000000, got '%s'", arg);
			return -1;
		}
		*runs = (int)v;
		*runs_set |= 2;
		break;
	default:
		if (flaky_parse_duration(arg, &ms) < 0 || ms <= 0) {
			ctl_usage_error("analyze", "--budget: expected a "
			    "duration such as 90s, 10m or 1h30m, got '%s'",
			    arg);
			return -1;
		}
		*budget_ms = ms;
		break;
	}
	return 0;
}

int
settled_check(int until, int runs_set, int *runs)
{
	if ((runs_set & 2) && !until) {
		ctl_usage_error("analyze", "--max-runs: expected "
		    "--until-settled with it (--runs N for a fixed count)");
		return -1;
	}
	if ((runs_set & 1) && until) {
		ctl_usage_error("analyze", "--runs: --until-settled decides "
		    "how many runs; give --max-runs N to bound it");
		return -1;
	}
	if (until && !(runs_set & 2))
		*runs = FLAKY_SETTLE_MAX_RUNS;
	return 0;
}

/* The tier a failing test has so far: broken when it failed every run. */
static const char *
settled_tier(const struct flaky_settle_test *t)
{
	return flaky_tier_name(flaky_tier(t->failures, t->runs));
}

/* Failing tests, and how many of them are open. */
static size_t
settled_failing(const struct flaky_settle *s)
{
	size_t	 n = 0;

	for (size_t i = 0; i < s->nt; i++)
		n += s->t[i].failures > 0;
	return n;
}

void
settled_table(const struct settled_report *r)
{
	const struct flaky_settle *s = r->settle;
	size_t	 failing = settled_failing(s);

	printf("\nuntil settled: %d run%s", s->runs, s->runs == 1 ? "" : "s");
	if (r->selected_runs > 0)
		printf(", %d of only some tests", r->selected_runs);
	printf(" (at most %d", r->max_runs);
	if (r->budget_ms > 0)
		printf(", budget %llds", (long long)(r->budget_ms / 1000));
	printf("), stopped: %s; %zu of %zu failing test%s open\n", r->stopped,
	    s->open, failing, failing == 1 ? "" : "s");
	if (s->open == 0)
		return;
	printf("%-8s  %9s  %-15s  %s\n", "TIER", "FAILED", "95% CS", "OPEN TEST");
	for (size_t i = 0; i < s->nt; i++) {
		const struct flaky_settle_test *t = &s->t[i];
		char	 failed[32];

		if (!flaky_settle_is_open(t))
			continue;
		snprintf(failed, sizeof failed, "%lld/%lld",
		    (long long)t->failures, (long long)t->runs);
		printf("%-8s  %9s  %5.1f%% - %5.1f%%  %s\n", settled_tier(t),
		    failed, t->lo * 100, t->hi * 100, t->name);
	}
}

void
settled_json(const struct settled_report *r)
{
	const struct flaky_settle *s = r->settle;
	int	 first = 1;

	printf(",\n \"until_settled\": {\"runs\": %d, \"max_runs\": %d, "
	    "\"budget_s\": ", s->runs, r->max_runs);
	if (r->budget_ms > 0)
		printf("%lld", (long long)(r->budget_ms / 1000));
	else
		printf("null");
	printf(", \"selected_runs\": %d, \"stopped\": ", r->selected_runs);
	json_string(stdout, r->stopped);
	printf(", \"method\": \"robbins-mixture\", \"alpha\": ");
	json_double(stdout, s->alpha);
	printf(", \"open\": %zu, \"tests\": [", s->open);
	for (size_t i = 0; i < s->nt; i++) {
		const struct flaky_settle_test *t = &s->t[i];

		if (t->failures == 0)
			continue;
		printf("%s\n  {\"test\": ", first ? "" : ",");
		first = 0;
		json_string(stdout, t->name);
		printf(", \"runs\": %lld, \"failures\": %lld, \"tier\": \"%s\", "
		    "\"settled\": %s, \"cs_low\": ", (long long)t->runs,
		    (long long)t->failures, settled_tier(t),
		    t->settled ? "true" : "false");
		json_double(stdout, t->lo);
		printf(", \"cs_high\": ");
		json_double(stdout, t->hi);
		printf("}");
	}
	printf("]}");
}
