/* The charts, each with its legend: a test's daily rate with its 95% band
 * and a date axis that reads with one day of data as with a year (an
 * inline SVG plot with its axes and legend in HTML around it), tests by
 * tier (HTML bars), and the small trend of a table cell (SVG). The text
 * in them is dates and numbers only; no stored string reaches a chart. */
#include "buildconf.h"

#include "stats/stats.h"
#include "web_int.h"

/* The plot's days are its x units, its percent its y units: the plot
 * stretches to its box at any width (preserveAspectRatio none), its lines
 * keep their width (non-scaling-stroke), and every text around it is
 * HTML at the page's size, so nothing reads smaller on a narrow screen. */
#define CH_TICKS	6	/* dated ticks at most */

/* The fill of a tier's bar: a colour and, for warning and broken, a
 * pattern (style.c), so that no tier is told by its colour alone. */
static const char *const tier_fill[] = {
	[FLAKY_TIER_STABLE] = "fill-stable",
	[FLAKY_TIER_NOISE] = "fill-noise",
	[FLAKY_TIER_WARNING] = "fill-warning",
	[FLAKY_TIER_CRITICAL] = "fill-critical",
	[FLAKY_TIER_BROKEN] = "fill-broken",
};

/* "2026-11-01" of a day number. */
static const char *
day_text(int64_t day, char *buf, size_t len)
{
	return flaky_format_day(day * FLAKY_DAY_MS, buf, len);
}

/* Where a day's centre is, in percent of the plot's width: days are
 * slots, so one day sits in the middle instead of at an edge. */
static double
day_pct(int64_t d, int64_t ndays)
{
	return 100.0 * ((double)d + 0.5) / (double)ndays;
}

/* The percent labels and about six dated ticks, as HTML around the plot;
 * every other date is "alt", left out on a narrow screen. */
static void
rate_axes(struct flaky_buf *b, int64_t first_day, int64_t ndays)
{
	int64_t	 step = (ndays + CH_TICKS - 1) / CH_TICKS;
	char	 day[16];
	int	 k = 0;

	for (int p = 0; p <= 100; p += 25)
		flaky_buf_printf(b, "<span class=\"ylab\" style=\"top:%d%%\">"
		    "%d%%</span>", 100 - p, p);
	for (int64_t d = 0; d < ndays; d += step > 0 ? step : 1, k++)
		flaky_buf_printf(b, "<span class=\"date%s\" style=\"left:"
		    "%.2f%%\">%s</span>", k % 2 == 1 && ndays > 3 * step ?
		    " alt" : "", day_pct(d, ndays), day_text(first_day + d,
		    day, sizeof day));
	flaky_buf_addc(b, '\n');
}

/* One stretch of days with runs [a, e): its band and its line, in the
 * plot's units (x: days, y: 100 - percent). */
static void
rate_segment(struct flaky_buf *b, int64_t a, int64_t e, int64_t ndays,
    const uint32_t *runs, const uint32_t *failures)
{
	/* a lone day's band is as wide as 10 px of an 860 px plot */
	double	 lo, hi, half = e - a == 1 ? 5.0 * (double)ndays / 860 : 0;

	flaky_buf_adds(b, "<polygon class=\"band\" points=\"");
	for (int64_t d = a; d < e; d++) {
		flaky_wilson(failures[d], runs[d], FLAKY_Z95, &lo, &hi);
		flaky_buf_printf(b, "%.4f,%.2f ", d + 0.5 - half,
		    100 - 100 * hi);
		if (half > 0)
			flaky_buf_printf(b, "%.4f,%.2f ", d + 0.5 + half,
			    100 - 100 * hi);
	}
	for (int64_t d = e - 1; d >= a; d--) {
		flaky_wilson(failures[d], runs[d], FLAKY_Z95, &lo, &hi);
		if (half > 0)
			flaky_buf_printf(b, "%.4f,%.2f ", d + 0.5 + half,
			    100 - 100 * lo);
		flaky_buf_printf(b, "%.4f,%.2f ", d + 0.5 - half,
		    100 - 100 * lo);
	}
	flaky_buf_adds(b, "\"/>\n<polyline class=\"rl\" fill=\"none\" "
	    "stroke-width=\"2\" vector-effect=\"non-scaling-stroke\" "
	    "points=\"");
	for (int64_t d = a; d < e; d++)
		flaky_buf_printf(b, "%.1f,%.2f ", d + 0.5,
		    100 - 100.0 * failures[d] / runs[d]);
	flaky_buf_adds(b, "\"/>\n");
}

/* A point per day with runs, its figures in its title: HTML, so that a
 * point stays round however the plot is stretched. */
static void
rate_points(struct flaky_buf *b, int64_t first_day, int64_t ndays,
    const uint32_t *runs, const uint32_t *failures)
{
	char	 day[16];

	for (int64_t d = 0; d < ndays; d++) {
		if (runs[d] == 0)
			continue;
		flaky_buf_printf(b, "<span class=\"pt\" style=\"left:%.2f%%;"
		    "top:%.2f%%\" title=\"%s: %u of %u run%s failed\"></span>",
		    day_pct(d, ndays), 100 - 100.0 * failures[d] / runs[d],
		    day_text(first_day + d, day, sizeof day), failures[d],
		    runs[d], flaky_plural(runs[d]));
	}
	flaky_buf_addc(b, '\n');
}

void
svg_rate_chart(struct flaky_buf *b, int64_t first_day, int64_t ndays,
    const uint32_t *runs, const uint32_t *failures)
{
	if (ndays < 1)
		ndays = 1;
	flaky_buf_adds(b, "<figure class=\"chart rate\" id=\"rate-chart\" "
	    "role=\"img\" aria-label=\"daily failure rate with its 95% "
	    "interval\">\n<div class=\"plot\">\n");
	rate_axes(b, first_day, ndays);
	flaky_buf_printf(b, "<svg class=\"area\" viewBox=\"0 0 %" PRId64
	    " 100\" preserveAspectRatio=\"none\" aria-hidden=\"true\">\n",
	    ndays);
	for (int p = 25; p <= 100; p += 25)
		flaky_buf_printf(b, "<line class=\"grid\" x1=\"0\" y1=\"%d\" "
		    "x2=\"%" PRId64 "\" y2=\"%d\" "
		    "vector-effect=\"non-scaling-stroke\"/>\n", 100 - p, ndays,
		    100 - p);
	for (int64_t d = 0, e; d < ndays; d = e) {
		if (runs[d] == 0) {
			e = d + 1;
			continue;
		}
		for (e = d; e < ndays && runs[e] > 0; e++)
			;
		rate_segment(b, d, e, ndays, runs, failures);
	}
	flaky_buf_adds(b, "</svg>\n");
	rate_points(b, first_day, ndays, runs, failures);
	flaky_buf_adds(b, "</div>\n<figcaption class=\"legend\"><span><i "
	    "class=\"key line\"></i>daily failure rate (UTC days)</span>"
	    "<span><i class=\"key band\"></i>95% interval (Wilson)</span>"
	    "<span>no line: no runs that day</span></figcaption>\n"
	    "</figure>\n");
}

void
svg_tier_bars(struct flaky_buf *b, const size_t *counts)
{
	static const int order[] = { FLAKY_TIER_CRITICAL, FLAKY_TIER_WARNING,
	    FLAKY_TIER_BROKEN, FLAKY_TIER_NOISE, FLAKY_TIER_STABLE };
	size_t	 max = 1;

	for (size_t i = 0; i < 5; i++)
		if (counts[order[i]] > max)
			max = counts[order[i]];
	flaky_buf_adds(b, "<div class=\"chart tiers\" id=\"tier-chart\" "
	    "role=\"img\" aria-label=\"tests by tier\">\n");
	for (size_t i = 0; i < 5; i++) {
		int	 t = order[i];

		flaky_buf_adds(b, "<div class=\"bar\"><span class=\"tl\">");
		web_tier_badge(b, t);
		flaky_buf_printf(b, "</span><span class=\"tb\"><span class="
		    "\"%s\" style=\"width:%.1f%%\"></span></span><span "
		    "class=\"tn\">%zu</span></div>\n", tier_fill[t], 100.0 *
		    (double)counts[t] / (double)max, counts[t]);
	}
	flaky_buf_adds(b, "<p class=\"legend\">tests per tier in the window; "
	    "critical above 20%, warning 5-20%</p>\n</div>\n");
}

void
svg_spark(struct flaky_buf *b, int64_t first_day, int64_t ndays,
    const uint32_t *runs, const uint32_t *failures)
{
	char	 a[16], e[16];
	double	 w;

	if (ndays < 1 || runs == NULL)
		return;
	w = 90.0 / (double)ndays;
	flaky_buf_printf(b, "<svg class=\"spark\" viewBox=\"0 0 90 18\" "
	    "width=\"90\" height=\"18\">"
	    "<title>daily failure rate, %s to %s: bar height is the rate, "
	    "grey: no runs</title>", day_text(first_day, a, sizeof a),
	    day_text(first_day + ndays - 1, e, sizeof e));
	for (int64_t d = 0; d < ndays; d++) {
		double	 h = runs[d] ? 2 + 16.0 * failures[d] / runs[d] : 2;

		flaky_buf_printf(b, "<rect class=\"%s\" x=\"%.2f\" "
		    "y=\"%.1f\" width=\"%.2f\" height=\"%.1f\"/>",
		    runs[d] == 0 ? "sn" : failures[d] ? "sf" : "sp", d * w,
		    18 - h, w > 1.5 ? w - 0.5 : w, h);
	}
	flaky_buf_adds(b, "</svg>");
}
