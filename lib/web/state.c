/* A test's state, as the dashboard names it (issue 32, docs/dashboard.md
 * "States"): from the window's counts, its daily series and the window
 * before, and its quarantine:
 *   quarantined  in quarantine, whatever its runs say;
 *   broken       failed every counted run of the window;
 *   fixed        failed in the window, then passed in a row (on the days
 *                after its last failure) as many runs as the rule of
 *                verify and quarantine's release asks at its rate:
 *                ceil(ln 0.05 / ln(1 - p)), about 3/p;
 *   new          failed in the window, not in the window before, first
 *                in the last 7 days;
 *   flaky        failed and passed in the window, none of the above;
 *   stable       no failure in one or more runs;
 *   skipped, no evidence: no counted run (docs/statistics.md). */
#include "buildconf.h"

#include "stats/stats.h"
#include "web_int.h"

static const char *const state_names[WS_COUNT] = {
	"new", "flaky", "fixed", "quarantined", "broken", "stable", "skipped",
	"no evidence",
};

const char *
web_state_name(int s)
{
	return s >= 0 && s < WS_COUNT ? state_names[s] : "unknown";
}

int
web_state_parse(const char *s)
{
	for (int k = 0; k < WS_COUNT; k++)
		if (strcmp(s, state_names[k]) == 0)
			return k;
	return -1;
}

int
web_state(const struct web_state_in *in)
{
	int64_t	 last = -1, after = 0, need;

	if (in->quarantined)
		return WS_QUARANTINED;
	if (in->runs == 0)
		return in->skips > 0 ? WS_SKIPPED : WS_NONE;
	if (in->failures == 0)
		return WS_STABLE;
	if (in->failures == in->runs)
		return WS_BROKEN;
	for (int64_t d = 0; in->day_runs != NULL && d < in->ndays; d++)
		if (in->day_failures[d] > 0)
			last = d;
	for (int64_t d = last + 1; last >= 0 && d < in->ndays; d++)
		after += in->day_runs[d];
	need = flaky_passes_needed((double)in->failures / (double)in->runs,
	    FLAKY_PROOF_ALPHA);
	if (last >= 0 && need > 0 && after >= need)
		return WS_FIXED;
	if (in->prev_failures == 0 && in->first_fail_day >= 0 &&
	    in->first_fail_day >= in->today - 6)
		return WS_NEW;
	return WS_FLAKY;
}

void
web_state_badge(struct flaky_buf *b, int s)
{
	static const char *const cls[WS_COUNT] = {
		"t-critical", "t-warning", "t-stable", "t-noise", "t-broken",
		"t-stable", "t-none", "t-none",
	};

	flaky_buf_printf(b, "<span class=\"state %s\">%s</span>",
	    s >= 0 && s < WS_COUNT ? cls[s] : "t-none", web_state_name(s));
}

/* The first day with a failure in the window's series, or -1. */
int64_t
web_first_fail_day(int64_t first_day, const uint32_t *fails, int64_t ndays)
{
	for (int64_t d = 0; fails != NULL && d < ndays; d++)
		if (fails[d] > 0)
			return first_day + d;
	return -1;
}
