/* The one place that turns per-test statistics into text, so analyze and
 * report print the same thing. */
#include "buildconf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "output.h"
#include "store/store.h"
#include "stats/stats.h"
#include "util/util.h"

int
parse_fail_on(const char *cmd, const char *list, int *mask)
{
	char	*copy, *tok, *save = NULL;
	int	 m = 0, t;

	if ((copy = strdup(list)) == NULL)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		t = flaky_tier_from_name(tok);
		if (t != FLAKY_TIER_CRITICAL && t != FLAKY_TIER_WARNING &&
		    t != FLAKY_TIER_BROKEN) {
			ctl_usage_error(cmd, "--fail-on: unknown tier '%s' "
			    "(expected critical, warning or broken)", tok);
			free(copy);
			return -1;
		}
		m |= 1 << t;
		/* "warning" means warning or worse. */
		if (t == FLAKY_TIER_WARNING)
			m |= 1 << FLAKY_TIER_CRITICAL;
	}
	free(copy);
	if (m == 0) {
		ctl_usage_error(cmd, "--fail-on: empty tier list");
		return -1;
	}
	*mask = m;
	return 0;
}

int
gate_tripped(const struct flaky_test_row *v, size_t n, int mask)
{
	for (size_t i = 0; i < n; i++)
		if (mask & (1 << flaky_tier(v[i].failures, v[i].runs)))
			return 1;
	return 0;
}

void
sort_rows(struct flaky_test_row *v, size_t n)
{
	flaky_test_rows_sort(v, n);
}

/* Most urgent trend first: new, worse, same, better. */
static int
trend_rank(int t)
{
	switch (t) {
	case FLAKY_TREND_NEW: return 0;
	case FLAKY_TREND_WORSE: return 1;
	case FLAKY_TREND_SAME: return 2;
	default: return 3;
	}
}

struct sort_arg {
	int				 how;
	const struct flaky_history	*hist;
};

/* --sort budget: the most rerun time first; --sort trend: by trend, then
 * both by the usual order. */
static int
cmp_rows_by(const void *a, const void *b, void *arg)
{
	const struct sort_arg *sa = arg;
	const struct flaky_test_row *x = a, *y = b;
	const struct flaky_history_row *hx, *hy;
	int64_t	 bx, by;
	int	 c;

	hx = flaky_history_find(sa->hist, x->test_id);
	hy = flaky_history_find(sa->hist, y->test_id);
	if (sa->how == SORT_BUDGET) {
		bx = hx ? hx->budget_wall_us : 0;
		by = hy ? hy->budget_wall_us : 0;
		if (bx != by)
			return bx > by ? -1 : 1;
	} else if (sa->how == SORT_TREND) {
		c = trend_rank(hx ? hx->trend : FLAKY_TREND_SAME) -
		    trend_rank(hy ? hy->trend : FLAKY_TREND_SAME);
		if (c != 0)
			return c;
	}
	return flaky_test_row_cmp(a, b);
}

void
sort_rows_by(struct flaky_test_row *v, size_t n, int how,
    const struct flaky_history *hist)
{
	struct sort_arg	 sa = { how, hist };

	if (how == SORT_RATE || hist == NULL)
		sort_rows(v, n);
	else if (n > 1)
		qsort_r(v, n, sizeof *v, cmp_rows_by, &sa);
}

void
sparkline(struct flaky_buf *b, const uint32_t *runs,
    const uint32_t *failures, size_t nd, size_t width, int unicode)
{
	static const char *const blocks[] = {
		"\u2581", "\u2582", "\u2583", "\u2584", "\u2585",
		"\u2586", "\u2587", "\u2588"
	};
	static const char ascii[] = "_.-~=+*#";
	size_t	 per, cols;

	if (nd == 0 || width == 0)
		return;
	per = (nd + width - 1) / width;
	cols = (nd + per - 1) / per;
	for (size_t c = 0; c < cols; c++) {
		uint64_t n = 0, k = 0;
		int	 level;

		for (size_t d = c * per; d < nd && d < (c + 1) * per; d++) {
			n += runs[d];
			k += failures[d];
		}
		if (n == 0) {
			flaky_buf_addc(b, ' ');
			continue;
		}
		/* 0% is the lowest mark, any failure at least the second; a
		 * square-root scale keeps 5% and 15% apart. */
		level = k == 0 ? 0 : 1 + (int)(sqrt((double)k / (double)n) *
		    6.999);
		if (level > 7)
			level = 7;
		if (unicode)
			flaky_buf_adds(b, blocks[level]);
		else
			flaky_buf_addc(b, ascii[level]);
	}
}

/* The first line of a message, cut to len bytes (never inside a UTF-8
 * character). */
void
msg_first_line(const char *s, char *buf, size_t len)
{
	size_t	 n;

	while (*s == ' ' || *s == '\n')
		s++;
	n = strcspn(s, "\n");
	if (n >= len) {
		n = len - 4;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
		snprintf(buf, len, "%.*s...", (int)n, s);
	} else
		snprintf(buf, len, "%.*s", (int)n, s);
}

static void
json_ms(const char *key, double v)
{
	printf(", \"%s\": ", key);
	json_double(stdout, v);
}

static void
json_time(int64_t ms)
{
	char	 buf[32];

	if (ms == INT64_MIN || ms == INT64_MAX)
		printf("null");
	else
		printf("\"%s\"", flaky_format_time(ms, buf, sizeof buf));
}

/* report: trend, since, budget_s, budget_cpu_s, quarantined, sparkline. */
static void
json_history(const struct report_head *h, const struct flaky_test_row *r)
{
	const struct flaky_history_row *hr;
	struct flaky_buf b;
	char	 day[16];

	if (h->hist == NULL)
		return;
	hr = flaky_history_find(h->hist, r->test_id);
	printf(", \"trend\": \"%s\"", flaky_trend_name(hr ? hr->trend :
	    FLAKY_TREND_SAME));
	if (hr != NULL && hr->change_day >= 0)
		printf(", \"since\": \"%s\"", flaky_format_day(hr->change_day *
		    FLAKY_DAY_MS, day, sizeof day));
	else
		printf(", \"since\": null");
	printf(", \"budget_s\": %.3f, \"budget_cpu_s\": %.3f, "
	    "\"budget_runs\": %lld, \"quarantined\": %s",
	    hr ? (double)hr->budget_wall_us / 1e6 : 0.0,
	    hr ? (double)hr->budget_cpu_us / 1e6 : 0.0,
	    hr ? (long long)hr->budget_runs : 0LL,
	    hr && hr->quarantined ? "true" : "false");
	printf(", \"previous\": {\"runs\": %lld, \"failures\": %lld}",
	    hr ? (long long)hr->prev_runs : 0LL,
	    hr ? (long long)hr->prev_failures : 0LL);
	/* Only tests with a failure in either window have a history. */
	flaky_buf_init(&b);
	printf(", \"sparkline\": ");
	if (hr != NULL && hr->failures > 0) {
		sparkline(&b, hr->day_runs, hr->day_failures,
		    (size_t)h->hist->ndays, 60, 0);
		json_string(stdout, flaky_buf_cstr(&b));
	} else
		printf("null");
	flaky_buf_free(&b);
}

static int
print_json(const struct report_head *h, const struct report_evidence *ev,
    const struct flaky_test_row *v, size_t n)
{
	printf("{\"target\": ");
	json_string(stdout, h->target);
	printf(", \"command\": ");
	json_string(stdout, h->command);
	printf(", \"since\": ");
	json_time(h->since_ms);
	printf(", \"until\": ");
	json_time(h->until_ms);
	if (h->revision != NULL) {
		printf(", \"revision\": ");
		json_string(stdout, h->revision);
	}
	printf(",\n \"runs\": {\"total\": %lld, \"done\": %lld, \"timeout\": "
	    "%lld, \"error\": %lld, \"interrupted\": %lld, \"skipped\": %lld",
	    (long long)h->runs.runs, (long long)h->runs.done,
	    (long long)h->runs.timeout, (long long)h->runs.error,
	    (long long)h->runs.interrupted, (long long)h->runs.skipped);
	printf(", \"stopped\": %lld, \"incomplete\": %lld, \"replays\": "
	    "%lld, \"by_kind\": {\"suite\": %lld, \"alone\": %lld, "
	    "\"ingested\": %lld}}",
	    (long long)h->runs.stopped, (long long)h->runs.incomplete,
	    (long long)h->runs.replays,
	    (long long)h->runs.suite, (long long)h->runs.alone,
	    (long long)h->runs.ingested);
	if (h->hist != NULL) {
		char	 day[16];

		printf(",\n \"first_day\": \"%s\", \"days\": %lld",
		    flaky_format_day(h->hist->first_day * FLAKY_DAY_MS, day,
		    sizeof day), (long long)h->hist->ndays);
		printf(", \"pruned_before\": ");
		json_time(h->hist->pruned_before_ms > 0 ?
		    h->hist->pruned_before_ms : INT64_MIN);
		printf(", \"messages_available\": %s",
		    h->hist->pruned_before_ms > 0 &&
		    h->since_ms < h->hist->pruned_before_ms ? "false" : "true");
	}
	if (h->settled != NULL)
		settled_json(h->settled);
	printf(",\n \"tests\": [");
	for (size_t i = 0; i < n; i++) {
		const struct flaky_test_row *r = &v[i];
		double	 lo, hi;
		int64_t	 need;

		flaky_wilson(r->failures, r->runs, FLAKY_Z95, &lo, &hi);
		need = flaky_runs_needed(r->failures, r->runs);
		printf("%s\n  {\"target\": ", i ? "," : "");
		json_string(stdout, r->target);
		printf(", \"test\": ");
		json_string(stdout, r->test);
		printf(", \"runs\": %lld, \"failures\": %lld, \"skips\": %lld",
		    (long long)r->runs, (long long)r->failures,
		    (long long)r->skips);
		printf(", \"fail_rate\": ");
		json_double(stdout, r->runs ? (double)r->failures /
		    (double)r->runs : 0);
		printf(", \"ci_low\": ");
		json_double(stdout, lo);
		printf(", \"ci_high\": ");
		json_double(stdout, hi);
		printf(", \"tier\": \"%s\"", flaky_tier_name(
		    flaky_tier_skips(r->failures, r->runs, r->skips)));
		evidence_json_sig(stdout, evidence_sig(ev, r->test_id));
		json_ms("median_ms_pass", r->median_ms_pass);
		json_ms("median_ms_fail", r->median_ms_fail);
		json_ms("p90_ms_pass", r->p90_ms_pass);
		json_ms("p90_ms_fail", r->p90_ms_fail);
		printf(", \"top_message\": ");
		json_string(stdout, r->top_message);
		printf(", \"top_message_count\": %lld",
		    (long long)r->top_message_count);
		if (r->alone_runs > 0)
			printf(", \"alone\": {\"runs\": %lld, \"failures\": "
			    "%lld}", (long long)r->alone_runs,
			    (long long)r->alone_failures);
		else
			printf(", \"alone\": null");
		evidence_json_risks(stdout, ev, r);
		evidence_json_cluster(stdout, ev, r);
		evidence_json_perturbs(stdout, ev, r->test_id);
		evidence_json_boxes(stdout, ev, r->test_id);
		evidence_json_flips(stdout, ev, r->test_id);
		evidence_json_seeds(stdout, ev, r->test_id);
		if (need < 0)
			printf(", \"runs_needed\": null");
		else
			printf(", \"runs_needed\": %lld", (long long)need);
		printf(", \"first_seen\": ");
		json_time(r->first_ms);
		printf(", \"last_seen\": ");
		json_time(r->last_ms);
		json_history(h, r);
		printf("}");
	}
	printf("\n ]}\n");
	return 0;
}

/* A CSV field, quoted when needed (RFC 4180). */
static void
csv_field(const char *s)
{
	if (s == NULL)
		return;
	if (strpbrk(s, ",\"\n\r") == NULL) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

/* A Markdown table cell: pipes escaped, one line. */
static void
md_cell(const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			fputs("\\|", stdout);
		else if (*s == '\n' || *s == '\r')
			putchar(' ');
		else
			putchar(*s);
	}
}

/* The trend, since and budget_s cells of CSV (0) or Markdown (1). */
static void
flat_history(int md, const struct report_head *h,
    const struct flaky_test_row *r, char *day, size_t daylen)
{
	const struct flaky_history_row *hr;

	hr = flaky_history_find(h->hist, r->test_id);
	day[0] = '\0';
	if (hr != NULL && hr->change_day >= 0)
		flaky_format_day(hr->change_day * FLAKY_DAY_MS, day, daylen);
	printf(md ? " %s | %s | %.1f |" : ",%s,%s,%.3f",
	    flaky_trend_name(hr ? hr->trend : FLAKY_TREND_SAME), day,
	    hr ? (double)hr->budget_wall_us / 1e6 : 0.0);
}

static int
print_rows_flat(int md, const struct report_head *h,
    const struct flaky_test_row *v, size_t n)
{
	char	 msg[160], day[16];

	if (md) {
		printf("| tier | test | target | fail rate | failures | runs "
		    "| 95%% interval | median pass ms | median fail ms "
		    "| top message |%s\n", h->hist ? " trend | since | "
		    "budget s |" : "");
		printf("|---|---|---|---:|---:|---:|---|---:|---:|---|%s\n",
		    h->hist ? "---|---|---:|" : "");
	} else
		printf("tier,target,test,runs,failures,skips,fail_rate,ci_low,"
		    "ci_high,median_ms_pass,median_ms_fail,runs_needed,"
		    "top_message%s\n", h->hist ? ",trend,since,budget_s" : "");
	for (size_t i = 0; i < n; i++) {
		const struct flaky_test_row *r = &v[i];
		const char *tier = flaky_tier_name(flaky_tier_skips(
		    r->failures, r->runs, r->skips));
		double	 lo, hi, rate = r->runs ? (double)r->failures /
		    (double)r->runs : 0;
		int64_t	 need = flaky_runs_needed(r->failures, r->runs);

		flaky_wilson(r->failures, r->runs, FLAKY_Z95, &lo, &hi);
		msg[0] = '\0';
		if (r->top_message != NULL)
			msg_first_line(r->top_message, msg, sizeof msg);
		if (md) {
			printf("| %s | ", tier);
			md_cell(r->test);
			printf(" | ");
			md_cell(r->target);
			printf(" | %.1f%% | %lld | %lld | %.1f%%-%.1f%% | ",
			    100 * rate, (long long)r->failures,
			    (long long)r->runs, 100 * lo, 100 * hi);
			if (!isnan(r->median_ms_pass))
				printf("%.0f", r->median_ms_pass);
			printf(" | ");
			if (!isnan(r->median_ms_fail))
				printf("%.0f", r->median_ms_fail);
			printf(" | ");
			md_cell(msg);
			printf(" |");
			if (h->hist != NULL)
				flat_history(1, h, r, day, sizeof day);
			printf("\n");
			continue;
		}
		printf("%s,", tier);
		csv_field(r->target);
		putchar(',');
		csv_field(r->test);
		printf(",%lld,%lld,%lld,%.6f,%.6f,%.6f,", (long long)r->runs,
		    (long long)r->failures, (long long)r->skips, rate, lo, hi);
		if (!isnan(r->median_ms_pass))
			printf("%.3f", r->median_ms_pass);
		putchar(',');
		if (!isnan(r->median_ms_fail))
			printf("%.3f", r->median_ms_fail);
		putchar(',');
		if (need >= 0)
			printf("%lld", (long long)need);
		putchar(',');
		csv_field(msg);
		if (h->hist != NULL)
			flat_history(0, h, r, day, sizeof day);
		putchar('\n');
	}
	return 0;
}

int
print_report(struct ctl *ctl, const struct report_head *h,
    const struct flaky_test_row *v, size_t n)
{
	struct report_evidence ev;
	struct flaky_query q;
	int	 r;

	memset(&ev, 0, sizeof ev);
	if (h->query != NULL)
		q = *h->query;
	else {
		memset(&q, 0, sizeof q);
		q.since_ms = h->since_ms;
		q.until_ms = h->until_ms;
		q.target = h->target;
	}
	/* The table shows critical, warning and broken tests, JSON every
	 * test. */
	if (ctl->format == FORMAT_JSON || ctl->format == FORMAT_TABLE ||
	    ctl->format == FORMAT_GITHUB || ctl->format == FORMAT_JUNIT)
	{
		evidence_load(&ev, h->store, &q, h->target,
		    ctl->format == FORMAT_JSON || ctl->format == FORMAT_JUNIT,
		    v, n);
		evidence_load_flips(&ev, h->store, &q, v, n);
	}
	switch (ctl->format) {
	case FORMAT_JSON:
		r = print_json(h, &ev, v, n);
		break;
	case FORMAT_CSV:
		r = print_rows_flat(0, h, v, n);
		break;
	case FORMAT_MARKDOWN:
		r = print_rows_flat(1, h, v, n);
		break;
	case FORMAT_GITHUB:
		r = print_github(h, &ev, v, n);
		break;
	case FORMAT_JUNIT:
		r = print_junit(h, &ev, v, n);
		break;
	default:
		r = report_table(ctl, h, &ev, v, n);
		if (h->settled != NULL)
			settled_table(h->settled);
	}
	evidence_free(&ev);
	return r;
}
