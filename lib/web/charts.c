/* The overview's trend charts and a test's duration distributions (issue
 * 32): columns drawn as HTML boxes (heights in percent, so they stretch
 * to any width), each chart with a legend of a swatch, a pattern and a
 * word per series (no series is told by its colour alone), its axis and
 * dates as HTML text at 12 px, and its numbers as a table under it for
 * screen readers and for anyone who wants the figures. Only dates and
 * numbers go into a chart; no stored string reaches one. */
#include "buildconf.h"

#include "json/json.h"
#include "stats/stats.h"
#include "web_int.h"

/* The tiers of a trend, bottom to top, with their fills and words. */
static const struct {
	const char	*fill, *word;
	int		 k;	/* index in flaky_trends.tiers' rows */
} tier_series[] = {
	{ "fill-broken", "broken", 3 },
	{ "fill-critical", "critical", 2 },
	{ "fill-warning", "warning", 1 },
	{ "fill-noise", "noise", 0 },
};

/* "2026-11-01" of a day number. */
static const char *
day_text(int64_t day, char *buf, size_t len)
{
	return flaky_format_day(day * FLAKY_DAY_MS, buf, len);
}

/* A swatch and its word in a legend. */
static void
key(struct flaky_buf *b, const char *fill, const char *word)
{
	flaky_buf_printf(b, "<span><i class=\"ic-key %s\"></i>%s</span>", fill,
	    word);
}

/* The top of the axis and about five dated ticks under the columns
 * (every other one left out on a narrow screen). */
static void
axis(struct flaky_buf *b, const char *top, int64_t first_day, int64_t n,
    int64_t per)
{
	int64_t	 step = (n + 4) / 5;
	char	 day[16];

	flaky_buf_printf(b, "<span class=\"ymax\">%s</span><span "
	    "class=\"ymax y0\">0</span>", top);
	for (int64_t i = 0, k = 0; i < n; i += step > 0 ? step : 1, k++)
		flaky_buf_printf(b, "<span class=\"date%s\" style=\"left:%.2f%%\">"
		    "%s</span>", k % 2 ? " alt" : "", 100.0 * ((double)i + 0.5) /
		    (double)n, day_text(first_day + i * per, day, sizeof day));
}

void
web_chart_tiers(struct flaky_buf *b, const struct flaky_trends *t)
{
	uint32_t max = 1;
	char	 day[16], top[16];

	for (int64_t d = 0; d < t->ndays; d++) {
		uint32_t s = 0;

		for (int k = 0; k < FLAKY_TREND_TIERS; k++)
			s += t->tiers[d][k];
		max = s > max ? s : max;
	}
	snprintf(top, sizeof top, "%u", max);
	flaky_buf_adds(b, "<figure class=\"chart cols\" id=\"tier-trend\">"
	    "<div class=\"plot\" aria-hidden=\"true\">");
	axis(b, top, t->first_day, t->ndays, 1);
	for (int64_t d = 0; d < t->ndays; d++) {
		flaky_buf_printf(b, "<span class=\"col\" title=\"%s: %u "
		    "critical, %u warning, %u broken, %u noise\">",
		    day_text(t->first_day + d, day, sizeof day),
		    t->tiers[d][2], t->tiers[d][1], t->tiers[d][3],
		    t->tiers[d][0]);
		for (size_t s = 0; s < FLAKY_ARRAY_SIZE(tier_series); s++) {
			uint32_t v = t->tiers[d][tier_series[s].k];

			if (v > 0)
				flaky_buf_printf(b, "<span class=\"%s\" "
				    "style=\"height:%.2f%%\"></span>",
				    tier_series[s].fill, 100.0 * v / max);
		}
		flaky_buf_adds(b, "</span>");
	}
	flaky_buf_adds(b, "</div>\n<figcaption class=\"legend\">");
	for (size_t s = 0; s < FLAKY_ARRAY_SIZE(tier_series); s++)
		key(b, tier_series[s].fill, tier_series[s].word);
	flaky_buf_adds(b, "<span>tests per tier each day, as report --since "
	    "30d ranked them that day; stable tests are not drawn</span>"
	    "</figcaption>\n<details class=\"data\"><summary>the numbers"
	    "</summary><div class=\"scroll\" tabindex=\"0\" role=\"region\" "
	    "aria-label=\"tests per tier per day\"><table><thead><tr>"
	    "<th scope=\"col\">day</th><th scope=\"col\">critical</th>"
	    "<th scope=\"col\">warning</th><th scope=\"col\">broken</th>"
	    "<th scope=\"col\">noise</th></tr></thead><tbody>");
	for (int64_t d = 0; d < t->ndays; d++)
		flaky_buf_printf(b, "<tr><td>%s</td><td class=\"num\">%u</td>"
		    "<td class=\"num\">%u</td><td class=\"num\">%u</td><td "
		    "class=\"num\">%u</td></tr>", day_text(t->first_day + d,
		    day, sizeof day), t->tiers[d][2], t->tiers[d][1],
		    t->tiers[d][3], t->tiers[d][0]);
	flaky_buf_adds(b, "</tbody></table></div></details></figure>\n");
}

void
web_chart_weeks(struct flaky_buf *b, const struct flaky_trends *t)
{
	uint32_t max = 1;
	char	 day[16], top[16];

	for (int64_t k = 0; k < t->nweeks; k++) {
		max = t->introduced[k] > max ? t->introduced[k] : max;
		max = t->fixed[k] > max ? t->fixed[k] : max;
		max = t->breaks[k] > max ? t->breaks[k] : max;
	}
	snprintf(top, sizeof top, "%u", max);
	flaky_buf_adds(b, "<figure class=\"chart cols\" id=\"week-trend\">"
	    "<div class=\"plot\" aria-hidden=\"true\">");
	axis(b, top, t->first_day, t->nweeks, 7);
	for (int64_t k = 0; k < t->nweeks; k++)
		flaky_buf_printf(b, "<span class=\"pair\" title=\"week of %s: "
		    "%u introduced, %u fixed, %u breaks\"><span class=\"fill-intro"
		    "\" style=\"height:%.2f%%\"></span><span class=\"fill-fixed\" "
		    "style=\"height:%.2f%%\"></span><span class=\"fill-break\" "
		    "style=\"height:%.2f%%\"></span></span>", day_text(
		    t->first_day + 7 * k, day, sizeof day), t->introduced[k],
		    t->fixed[k], t->breaks[k], 100.0 * t->introduced[k] / max,
		    100.0 * t->fixed[k] / max, 100.0 * t->breaks[k] / max);
	flaky_buf_adds(b, "</div>\n<figcaption class=\"legend\">");
	key(b, "fill-intro", "introduced (left)");
	key(b, "fill-fixed", "fixed (middle)");
	key(b, "fill-break", "breaks and their fixes (right), not flaky");
	flaky_buf_adds(b, "</figcaption>\n<details class=\"data\"><summary>the "
	    "numbers</summary><div class=\"scroll\" tabindex=\"0\" "
	    "role=\"region\" aria-label=\"flaky tests per week\"><table><thead>"
	    "<tr><th scope=\"col\">week of</th><th scope=\"col\">introduced</th>"
	    "<th scope=\"col\">fixed</th><th scope=\"col\">breaks</th></tr>"
	    "</thead><tbody>");
	for (int64_t k = 0; k < t->nweeks; k++)
		flaky_buf_printf(b, "<tr><td>%s</td><td class=\"num\">%u</td>"
		    "<td class=\"num\">%u</td><td class=\"num\">%u</td></tr>",
		    day_text(t->first_day + 7 * k, day, sizeof day),
		    t->introduced[k], t->fixed[k], t->breaks[k]);
	flaky_buf_adds(b, "</tbody></table></div></details></figure>\n");
}

/* "35 s", "2.5 min", "1.2 h" of microseconds. */
static void
lost_text(char *buf, size_t len, int64_t us)
{
	double	 s = (double)us / 1e6;

	if (s < 120)
		snprintf(buf, len, "%.0f s", s);
	else if (s < 7200)
		snprintf(buf, len, "%.1f min", s / 60);
	else
		snprintf(buf, len, "%.1f h", s / 3600);
}

void
web_chart_lost(struct flaky_buf *b, const struct flaky_trends *t)
{
	int64_t	 max = 1;
	char	 day[16], top[16], v[16];

	for (int64_t d = 0; d < t->ndays; d++)
		max = t->lost_us[d] > max ? t->lost_us[d] : max;
	lost_text(top, sizeof top, max);
	flaky_buf_adds(b, "<figure class=\"chart cols\" id=\"lost-trend\">"
	    "<div class=\"plot\" aria-hidden=\"true\">");
	axis(b, top, t->first_day, t->ndays, 1);
	for (int64_t d = 0; d < t->ndays; d++) {
		lost_text(v, sizeof v, t->lost_us[d]);
		flaky_buf_printf(b, "<span class=\"col\" title=\"%s: %s in %u "
		    "failed run%s\"><span class=\"fill-lost\" style=\"height:"
		    "%.2f%%\"></span></span>", day_text(t->first_day + d, day,
		    sizeof day), v, t->lost_runs[d], flaky_plural(
		    t->lost_runs[d]), 100.0 * (double)t->lost_us[d] /
		    (double)max);
	}
	flaky_buf_adds(b, "</div>\n<figcaption class=\"legend\">");
	key(b, "fill-lost", "wall time of the runs in which a test failed, "
	    "each run once (the rerun budget)");
	flaky_buf_adds(b, "</figcaption>\n<details class=\"data\"><summary>the "
	    "numbers</summary><div class=\"scroll\" tabindex=\"0\" "
	    "role=\"region\" aria-label=\"time lost per day\"><table><thead>"
	    "<tr><th scope=\"col\">day</th><th scope=\"col\">time lost</th>"
	    "<th scope=\"col\">failed runs</th></tr></thead><tbody>");
	for (int64_t d = 0; d < t->ndays; d++) {
		lost_text(v, sizeof v, t->lost_us[d]);
		flaky_buf_printf(b, "<tr><td>%s</td><td class=\"num\">%s</td>"
		    "<td class=\"num\">%u</td></tr>", day_text(t->first_day + d,
		    day, sizeof day), v, t->lost_runs[d]);
	}
	flaky_buf_adds(b, "</tbody></table></div></details></figure>\n");
}

/* The buckets with counts, from the first to the last of either. */
static void
hist_span(const uint64_t *p, const uint64_t *f, int *lo, int *hi)
{
	*lo = FLAKY_HIST_BUCKETS;
	*hi = -1;
	for (int k = 0; k < FLAKY_HIST_BUCKETS; k++)
		if (p[k] > 0 || f[k] > 0) {
			*lo = *lo < k ? *lo : k;
			*hi = k;
		}
}

/* "35 ms", "2.3 s" of a bucket's upper bound. */
static void
ms_text(char *buf, size_t len, double ms)
{
	if (ms < 10)
		snprintf(buf, len, "%.1f ms", ms);
	else if (ms < 1000)
		snprintf(buf, len, "%.0f ms", ms);
	else
		snprintf(buf, len, "%.1f s", ms / 1000);
}

void
web_chart_durations(struct flaky_buf *b, const uint64_t *pass,
    const uint64_t *fail)
{
	uint64_t np = 0, nf = 0;
	double	 max = 0;
	char	 v[24], w[24];
	int	 lo, hi;

	hist_span(pass, fail, &lo, &hi);
	if (hi < 0) {
		flaky_buf_adds(b, "<p id=\"durations\">No duration was "
		    "recorded in the window (the runner printed none).</p>\n");
		return;
	}
	for (int k = lo; k <= hi; k++) {
		np += pass[k];
		nf += fail[k];
	}
	/* each a share of its own outcome's results: the shapes compare */
	for (int k = lo; k <= hi; k++) {
		double	 a = np ? (double)pass[k] / np : 0;
		double	 c = nf ? (double)fail[k] / nf : 0;

		max = a > max ? a : max;
		max = c > max ? c : max;
	}
	flaky_buf_adds(b, "<figure class=\"chart cols hist\" id=\"durations\">"
	    "<div class=\"plot\" aria-hidden=\"true\">");
	ms_text(v, sizeof v, flaky_hist_value_ms(lo));
	ms_text(w, sizeof w, flaky_hist_value_ms(hi));
	flaky_buf_printf(b, "<span class=\"ymax\">%.0f%%</span><span "
	    "class=\"ymax y0\">0</span><span class=\"date\" style=\"left:"
	    "5%%\">%s</span><span class=\"date\" style=\"left:92%%\">%s</span>",
	    100 * max, v, w);
	for (int k = lo; k <= hi; k++) {
		ms_text(v, sizeof v, flaky_hist_value_ms(k));
		flaky_buf_printf(b, "<span class=\"pair\" title=\"about %s: "
		    "%" PRIu64 " passed, %" PRIu64 " failed\"><span "
		    "class=\"fill-stable\" style=\"height:%.2f%%\"></span><span "
		    "class=\"fill-critical\" style=\"height:%.2f%%\"></span>"
		    "</span>", v, pass[k], fail[k], np ? 100.0 * pass[k] / np /
		    max : 0, nf ? 100.0 * fail[k] / nf / max : 0);
	}
	ms_text(v, sizeof v, flaky_hist_quantile(pass, 0.5));
	ms_text(w, sizeof w, flaky_hist_quantile(fail, 0.5));
	flaky_buf_adds(b, "</div>\n<figcaption class=\"legend\">");
	key(b, "fill-stable", "passed (left of each pair)");
	key(b, "fill-critical", "failed (right)");
	flaky_buf_printf(b, "<span>share of each outcome's results by duration "
	    "(log scale): %" PRIu64 " passed, median %s; %" PRIu64 " failed, "
	    "median %s</span></figcaption>\n</figure>\n", np, np ? v : "-", nf,
	    nf ? w : "-");
}

/* One outcome's durations as JSON. */
static void
jw_hist(struct flaky_jw *w, const char *key_, const uint64_t *h)
{
	uint64_t n = 0;

	for (int k = 0; k < FLAKY_HIST_BUCKETS; k++)
		n += h[k];
	flaky_jw_key(w, key_);
	flaky_jw_object_begin(w);
	web_jw_int(w, "results", (long long)n);
	web_jw_num(w, "median_ms", flaky_hist_quantile(h, 0.5));
	web_jw_num(w, "p90_ms", flaky_hist_quantile(h, 0.9));
	flaky_jw_key(w, "buckets");
	flaky_jw_array_begin(w);
	for (int k = 0; k < FLAKY_HIST_BUCKETS; k++) {
		if (h[k] == 0)
			continue;
		flaky_jw_object_begin(w);
		web_jw_num(w, "ms", flaky_hist_value_ms(k));
		web_jw_int(w, "count", (long long)h[k]);
		flaky_jw_object_end(w);
	}
	flaky_jw_array_end(w);
	flaky_jw_object_end(w);
}

void
web_jw_durations(struct flaky_jw *w, const uint64_t *pass,
    const uint64_t *fail)
{
	flaky_jw_key(w, "durations");
	flaky_jw_object_begin(w);
	jw_hist(w, "pass", pass);
	jw_hist(w, "fail", fail);
	flaky_jw_object_end(w);
}
