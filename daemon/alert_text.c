/* The sentence an alert is told in, for people: who sends it, the test
 * and its target (quoted: a target named "flaky" or "critical" reads as
 * a name), then what happened, the kind said once and every count with
 * its noun (docs/alerts.md). Slack's mrkdwn escaping, as Slack and
 * Mattermost show the text as it is. */
#include "buildconf.h"

#include <stdint.h>

#include "flakyd.h"
#include "store/store.h"
#include "util/util.h"

/* A Slack mrkdwn text: &, < and > are its control characters. */
static void
slack_add(struct flaky_buf *b, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '&')
			flaky_buf_adds(b, "&amp;");
		else if (*s == '<')
			flaky_buf_adds(b, "&lt;");
		else if (*s == '>')
			flaky_buf_adds(b, "&gt;");
		else
			flaky_buf_addc(b, *s);
	}
}

/* "its last 20 runs", "its last run". */
static void
last_runs(struct flaky_buf *b, int64_t n)
{
	if (n == 1)
		flaky_buf_adds(b, "its last run");
	else
		flaky_buf_printf(b, "its last %lld runs", (long long)n);
}

/* The text of alert a into b. */
void
alert_text(const struct flaky_alert *a, double lo, double hi,
    struct flaky_buf *b)
{
	double	 rate = a->runs > 0 ? (double)a->failures / a->runs : 0;

	flaky_buf_adds(b, "flakyd: ");
	slack_add(b, a->test);
	flaky_buf_adds(b, " (target \"");
	slack_add(b, a->target);
	flaky_buf_adds(b, "\") ");
	switch (a->kind) {
	case FLAKY_ALERT_RECOVERED:
		flaky_buf_adds(b, "is stable again: no failure in ");
		last_runs(b, a->runs);
		break;
	case FLAKY_ALERT_BROKEN:
		flaky_buf_adds(b, a->runs == 1 ? "is broken: it failed " :
		    "is broken: it failed all of ");
		last_runs(b, a->runs);
		break;
	case FLAKY_ALERT_RELEASE:
		flaky_buf_printf(b, "is ready to leave quarantine: %lld "
		    "passing run%s in a row, %lld needed", (long long)a->passes,
		    flaky_plural(a->passes), (long long)a->needed);
		break;
	default:
		flaky_buf_printf(b, "is now %s: %lld of ",
		    a->kind == FLAKY_ALERT_FLAKY ? "flaky" : "critical",
		    (long long)a->failures);
		last_runs(b, a->runs);
		flaky_buf_printf(b, " failed (%.1f%%, 95%% interval %.1f%% to "
		    "%.1f%%)", rate * 100, lo * 100, hi * 100);
		break;
	}
}
