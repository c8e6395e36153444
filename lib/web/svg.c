/* Inline SVG charts, each with its legend: a test's daily rate with its
 * 95% band and a date axis that reads with one day of data as with a
 * year, tests by tier, and the small trend of a table cell. The text in
 * them is dates and numbers only; no stored string reaches an SVG. */
#include "buildconf.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "stats/stats.h"
#include "web_int.h"

#define CH_W	860	/* plot width */
#define CH_H	220	/* plot height */
#define CH_L	56	/* left margin: the percent labels */
#define CH_R	56	/* right margin: room for the last date */
#define CH_T	12
#define CH_B	86	/* dates, then the legend */

static const char *const tier_color[] = {
	[FLAKY_TIER_STABLE] = "#4a9a4a",
	[FLAKY_TIER_NOISE] = "#999999",
	[FLAKY_TIER_WARNING] = "#e08a00",
	[FLAKY_TIER_CRITICAL] = "#c62828",
	[FLAKY_TIER_BROKEN] = "#7b1fa2",
};

/* "2026-11-01" of a day number. */
static const char *
day_text(int64_t day, char *buf, size_t len)
{
	return flaky_format_day(day * FLAKY_DAY_MS, buf, len);
}

/* The x of a day's centre: days are slots, so one day sits in the middle
 * instead of at an edge. */
static double
day_x(int64_t d, int64_t ndays)
{
	return CH_L + ((double)d + 0.5) * CH_W / (double)ndays;
}

static double
rate_y(double r)
{
	return CH_T + CH_H - r * CH_H;
}

/* Grid lines with percent labels, and about six dated ticks. */
static void
rate_axes(struct flaky_buf *b, int64_t first_day, int64_t ndays)
{
	int64_t	 step = (ndays + 5) / 6;
	char	 day[16];

	for (int p = 0; p <= 100; p += 25)
		flaky_buf_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
		    "y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
		    "text-anchor=\"end\">%d%%</text>\n", CH_L, rate_y(p /
		    100.0), CH_L + CH_W, rate_y(p / 100.0), CH_L - 6,
		    rate_y(p / 100.0) + 4, p);
	flaky_buf_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
	    "stroke=\"#888\"/>\n", CH_L, CH_T + CH_H, CH_L + CH_W,
	    CH_T + CH_H);
	for (int64_t d = 0; d < ndays; d += step > 0 ? step : 1) {
		double	 x = day_x(d, ndays);

		flaky_buf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
		    "y2=\"%d\" stroke=\"#888\"/><text class=\"date\" "
		    "x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
		    x, CH_T + CH_H, x, CH_T + CH_H + 5, x, CH_T + CH_H + 19,
		    day_text(first_day + d, day, sizeof day));
	}
}

/* One stretch of days with runs [a, e): its band and its line. */
static void
rate_segment(struct flaky_buf *b, int64_t a, int64_t e, int64_t ndays,
    const uint32_t *runs, const uint32_t *failures)
{
	double	 lo, hi, half = e - a == 1 ? 5 : 0;

	flaky_buf_adds(b, "<polygon class=\"band\" fill=\"#90caf9\" "
	    "fill-opacity=\"0.6\" points=\"");
	for (int64_t d = a; d < e; d++) {
		flaky_wilson(failures[d], runs[d], FLAKY_Z95, &lo, &hi);
		flaky_buf_printf(b, "%.1f,%.1f ", day_x(d, ndays) - half,
		    rate_y(hi));
		if (half > 0)
			flaky_buf_printf(b, "%.1f,%.1f ", day_x(d, ndays) +
			    half, rate_y(hi));
	}
	for (int64_t d = e - 1; d >= a; d--) {
		flaky_wilson(failures[d], runs[d], FLAKY_Z95, &lo, &hi);
		if (half > 0)
			flaky_buf_printf(b, "%.1f,%.1f ", day_x(d, ndays) +
			    half, rate_y(lo));
		flaky_buf_printf(b, "%.1f,%.1f ", day_x(d, ndays) - half,
		    rate_y(lo));
	}
	flaky_buf_adds(b, "\"/>\n<polyline class=\"rate\" fill=\"none\" "
	    "stroke=\"#c62828\" stroke-width=\"2\" points=\"");
	for (int64_t d = a; d < e; d++)
		flaky_buf_printf(b, "%.1f,%.1f ", day_x(d, ndays),
		    rate_y((double)failures[d] / runs[d]));
	flaky_buf_adds(b, "\"/>\n");
}

/* A point per day with runs, its figures in its title. */
static void
rate_points(struct flaky_buf *b, int64_t first_day, int64_t ndays,
    const uint32_t *runs, const uint32_t *failures)
{
	char	 day[16];

	for (int64_t d = 0; d < ndays; d++) {
		if (runs[d] == 0)
			continue;
		flaky_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
		    "fill=\"#c62828\"><title>%s: %u of %u runs failed"
		    "</title></circle>\n", day_x(d, ndays),
		    rate_y((double)failures[d] / runs[d]),
		    day_text(first_day + d, day, sizeof day), failures[d],
		    runs[d]);
	}
}

void
svg_rate_chart(struct flaky_buf *b, int64_t first_day, int64_t ndays,
    const uint32_t *runs, const uint32_t *failures)
{
	int	 ly = CH_T + CH_H + 44;

	if (ndays < 1)
		ndays = 1;
	flaky_buf_printf(b, "<svg class=\"chart\" id=\"rate-chart\" "
	    "role=\"img\" aria-label=\"daily failure rate\" "
	    "viewBox=\"0 0 %d %d\" "
	    "width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
	    "font-size=\"12\">\n", CH_L + CH_W + CH_R, CH_T + CH_H + CH_B,
	    CH_L + CH_W + CH_R, CH_T + CH_H + CH_B);
	rate_axes(b, first_day, ndays);
	for (int64_t d = 0, e; d < ndays; d = e) {
		if (runs[d] == 0) {
			e = d + 1;
			continue;
		}
		for (e = d; e < ndays && runs[e] > 0; e++)
			;
		rate_segment(b, d, e, ndays, runs, failures);
	}
	rate_points(b, first_day, ndays, runs, failures);
	flaky_buf_printf(b, "<g class=\"legend\"><line x1=\"%d\" y1=\"%d\" "
	    "x2=\"%d\" y2=\"%d\" stroke=\"#c62828\" stroke-width=\"2\"/>"
	    "<text x=\"%d\" y=\"%d\">daily failure rate (UTC days)</text>"
	    "<rect x=\"%d\" y=\"%d\" width=\"20\" height=\"10\" "
	    "fill=\"#90caf9\"/><text x=\"%d\" y=\"%d\">95%% interval "
	    "(Wilson)</text><text x=\"%d\" y=\"%d\" fill=\"#666\">no line: "
	    "no runs that day</text></g>\n</svg>\n", CH_L, ly, CH_L + 20, ly,
	    CH_L + 26, ly + 4, CH_L + 250, ly - 5, CH_L + 276, ly + 4,
	    CH_L + 470, ly + 4);
}

void
svg_tier_bars(struct flaky_buf *b, const size_t *counts)
{
	static const int order[] = { FLAKY_TIER_CRITICAL, FLAKY_TIER_WARNING,
	    FLAKY_TIER_BROKEN, FLAKY_TIER_NOISE, FLAKY_TIER_STABLE };
	size_t	 max = 1;
	int	 bw = 300;

	for (size_t i = 0; i < 5; i++)
		if (counts[order[i]] > max)
			max = counts[order[i]];
	flaky_buf_printf(b, "<svg class=\"chart\" id=\"tier-chart\" "
	    "role=\"img\" aria-label=\"tests by tier\" "
	    "viewBox=\"0 0 480 %d\" "
	    "width=\"480\" height=\"%d\" font-family=\"sans-serif\" "
	    "font-size=\"12\">\n", 5 * 22 + 24, 5 * 22 + 24);
	for (size_t i = 0; i < 5; i++) {
		int	 t = order[i], y = 4 + (int)i * 22;
		double	 w = (double)bw * (double)counts[t] / (double)max;

		flaky_buf_printf(b, "<text x=\"90\" y=\"%d\" "
		    "text-anchor=\"end\">%s</text><rect x=\"96\" y=\"%d\" "
		    "width=\"%.1f\" height=\"16\" fill=\"%s\"/><text x=\"%.1f\" "
		    "y=\"%d\">%zu</text>\n", y + 13, flaky_tier_name(t), y,
		    w, tier_color[t], 100 + w, y + 13, counts[t]);
	}
	flaky_buf_printf(b, "<text class=\"legend\" x=\"96\" y=\"%d\" "
	    "fill=\"#666\">tests per tier in the window; critical above 20%%, "
	    "warning 5-20%%</text>\n</svg>\n", 5 * 22 + 18);
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

		flaky_buf_printf(b, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
		    "height=\"%.1f\" fill=\"%s\"/>", d * w, 18 - h,
		    w > 1.5 ? w - 0.5 : w, h, runs[d] == 0 ? "#ddd" :
		    failures[d] ? "#c62828" : "#4a9a4a");
	}
	flaky_buf_adds(b, "</svg>");
}
