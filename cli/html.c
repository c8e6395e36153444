/* flakyctl report --html: one self-contained HTML file (no scripts, no
 * network), inline SVG: a heat map of the unstable tests by day and the
 * daily failure-rate lines of the top ones, then the table. */
#include "buildconf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "stats/stats.h"
#include "store/store.h"
#include "util/util.h"

#define HEAT_ROWS	40	/* tests in the heat map */
#define LINE_TESTS	5	/* tests drawn as lines */
#define CELL		12	/* px per day in the heat map */
#define LABEL_W		360	/* px of test names */

static const char *const line_colors[LINE_TESTS] = {
	"#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"
};

/* Text for HTML and SVG. */
static void
esc(FILE *f, const char *s)
{
	for (; s != NULL && *s != '\0'; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\t')
				fputc(' ', f);
			else
				fputc(*s, f);
		}
	}
}

/* A test name cut to fit a label. */
static void
esc_cut(FILE *f, const char *s, size_t max)
{
	char	*c;

	if (strlen(s) <= max) {
		esc(f, s);
		return;
	}
	/* Keep the end: the test's own name is at the end of its id. */
	if ((c = malloc(max + 4)) == NULL)
		return;
	snprintf(c, max + 4, "...%s", s + strlen(s) - (max - 3));
	esc(f, c);
	free(c);
}

/* White through yellow to dark red by failure rate; grey for no runs,
 * green for runs without failures. */
static void
heat_color(uint32_t n, uint32_t k, char *buf, size_t len)
{
	double	 r;

	if (n == 0) {
		snprintf(buf, len, "#eeeeee");
		return;
	}
	if (k == 0) {
		snprintf(buf, len, "#c7e9c0");
		return;
	}
	r = sqrt((double)k / (double)n);	/* low rates stay visible */
	snprintf(buf, len, "#%02x%02x%02x", 255 - (int)(80 * r),
	    (int)(220 * (1 - r)), (int)(120 * (1 - r)));
}

/* The rows worth drawing: those with failures in the window, in the
 * report's order. */
static size_t
pick(const struct report_head *h, const struct flaky_test_row *v, size_t n,
    const struct flaky_history_row **out, size_t max)
{
	size_t	 m = 0;

	for (size_t i = 0; i < n && m < max; i++) {
		const struct flaky_history_row *hr;

		if (v[i].failures == 0)
			continue;
		if ((hr = flaky_history_find(h->hist, v[i].test_id)) != NULL)
			out[m++] = hr;
	}
	return m;
}

/* Tests with failures in the window. */
static size_t
failing(const struct flaky_test_row *v, size_t n)
{
	size_t	 k = 0;

	for (size_t i = 0; i < n; i++)
		k += v[i].failures > 0;
	return k;
}

static void
heat_map(FILE *f, const struct report_head *h,
    const struct flaky_history_row **sel, size_t m)
{
	int64_t	 nd = h->hist->ndays;
	int	 w = LABEL_W + (int)nd * CELL + 10;
	int	 ht = (int)m * CELL + 40;
	char	 color[16], day[16];

	fprintf(f, "<h2>Failure rate by day</h2>\n<svg id=\"heatmap\" "
	    "xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	    "font-family=\"monospace\" font-size=\"10\">\n", w, ht);
	for (int64_t d = 0; d < nd; d += 7)
		fprintf(f, "<text x=\"%d\" y=\"10\">%s</text>\n",
		    LABEL_W + (int)d * CELL, flaky_format_day((h->hist->
		    first_day + d) * FLAKY_DAY_MS, day, sizeof day) + 5);
	for (size_t i = 0; i < m; i++) {
		const struct flaky_history_row *r = sel[i];
		int	 y = 16 + (int)i * CELL;

		fprintf(f, "<text class=\"test\" x=\"%d\" y=\"%d\" "
		    "text-anchor=\"end\">", LABEL_W - 4, y + CELL - 3);
		esc_cut(f, r->test, 56);
		fprintf(f, "</text>\n");
		for (int64_t d = 0; d < nd; d++) {
			heat_color(r->day_runs[d], r->day_failures[d], color,
			    sizeof color);
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" "
			    "height=\"%d\" fill=\"%s\"><title>", LABEL_W +
			    (int)d * CELL, y, CELL - 1, CELL - 1, color);
			esc(f, r->test);
			fprintf(f, " %s: %u/%u failed</title></rect>\n",
			    flaky_format_day((h->hist->first_day + d) *
			    FLAKY_DAY_MS, day, sizeof day),
			    r->day_failures[d], r->day_runs[d]);
		}
	}
	if (m == 0)
		fprintf(f, "<text x=\"10\" y=\"30\">no failures in this "
		    "window</text>\n");
	fprintf(f, "</svg>\n");
}

static void
rate_lines(FILE *f, const struct report_head *h,
    const struct flaky_history_row **sel, size_t m)
{
	int64_t	 nd = h->hist->ndays;
	int	 pw = 720, ph = 240, x0 = 50, y0 = 20;
	double	 dx = nd > 1 ? (double)pw / (double)(nd - 1) : 0;

	if (m > LINE_TESTS)
		m = LINE_TESTS;
	fprintf(f, "<h2>Daily failure rate of the top tests</h2>\n<svg "
	    "id=\"lines\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	    "height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n",
	    x0 + pw + 20, y0 + ph + 30 + (int)m * 16);
	for (int p = 0; p <= 100; p += 25) {
		int	 y = y0 + ph - ph * p / 100;

		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
		    "stroke=\"#ddd\"/><text x=\"%d\" y=\"%d\" "
		    "text-anchor=\"end\">%d%%</text>\n", x0, y, x0 + pw, y,
		    x0 - 4, y + 4, p);
	}
	for (size_t i = 0; i < m; i++) {
		const struct flaky_history_row *r = sel[i];
		int	 open = 0;

		/* Days without runs break the line. */
		for (int64_t d = 0; d < nd; d++) {
			double	 rate, x, y;

			if (r->day_runs[d] == 0) {
				if (open)
					fprintf(f, "\"/>\n");
				open = 0;
				continue;
			}
			rate = (double)r->day_failures[d] /
			    (double)r->day_runs[d];
			x = x0 + dx * (double)d;
			y = y0 + ph - ph * rate;
			if (!open)
				fprintf(f, "<polyline class=\"rate\" "
				    "fill=\"none\" stroke=\"%s\" "
				    "stroke-width=\"2\" points=\"",
				    line_colors[i]);
			fprintf(f, "%.1f,%.1f ", x, y);
			open = 1;
		}
		if (open)
			fprintf(f, "\"/>\n");
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" "
		    "fill=\"%s\"/><text class=\"legend\" x=\"%d\" y=\"%d\">",
		    x0, y0 + ph + 20 + (int)i * 16, line_colors[i], x0 + 16,
		    y0 + ph + 29 + (int)i * 16);
		esc(f, r->test);
		fprintf(f, "</text>\n");
	}
	fprintf(f, "</svg>\n");
}

static void
table(FILE *f, const struct report_head *h, const struct flaky_test_row *v,
    size_t n)
{
	char	 day[16];

	fprintf(f, "<h2>Tests</h2>\n<table id=\"tests\">\n<tr><th>tier</th>"
	    "<th>test</th><th>target</th><th>fail rate</th><th>failures/runs"
	    "</th><th>95%% interval</th><th>trend</th><th>since</th>"
	    "<th>budget (s)</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		const struct flaky_test_row *r = &v[i];
		const struct flaky_history_row *hr;
		double	 lo, hi;
		int	 t = flaky_tier(r->failures, r->runs);

		if (t == FLAKY_TIER_STABLE)
			continue;
		hr = flaky_history_find(h->hist, r->test_id);
		flaky_wilson(r->failures, r->runs, FLAKY_Z95, &lo, &hi);
		fprintf(f, "<tr class=\"%s\"><td>%s</td><td>",
		    flaky_tier_name(t), flaky_tier_name(t));
		esc(f, r->test);
		if (hr != NULL && hr->quarantined)
			fprintf(f, " <em>(quarantined)</em>");
		fprintf(f, "</td><td>");
		esc(f, r->target);
		fprintf(f, "</td><td>%.1f%%</td><td>%lld/%lld</td>"
		    "<td>%.1f%%&ndash;%.1f%%</td><td>%s</td><td>%s</td>"
		    "<td>%.1f</td></tr>\n", r->runs ? 100.0 * (double)
		    r->failures / (double)r->runs : 0.0, (long long)r->failures,
		    (long long)r->runs, 100 * lo, 100 * hi,
		    flaky_trend_name(hr ? hr->trend : FLAKY_TREND_SAME),
		    hr && hr->change_day >= 0 ? flaky_format_day(hr->change_day *
		    FLAKY_DAY_MS, day, sizeof day) : "",
		    hr ? (double)hr->budget_wall_us / 1e6 : 0.0);
	}
	fprintf(f, "</table>\n");
}

int
html_report(const char *path, const struct report_head *h,
    const struct flaky_test_row *v, size_t n, char *err, size_t errlen)
{
	const struct flaky_history_row *sel[HEAT_ROWS];
	FILE	*f;
	char	 a[32], b[32];
	size_t	 m;

	if ((f = fopen(path, "w")) == NULL)
		return flaky_error(err, errlen, errno, "%s: %s", path,
		    strerror(errno));
	m = pick(h, v, n, sel, HEAT_ROWS);
	flaky_format_day(h->hist->first_day * FLAKY_DAY_MS, a, sizeof a);
	flaky_format_day((h->hist->first_day + h->hist->ndays - 1) *
	    FLAKY_DAY_MS, b, sizeof b);
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
	    "charset=\"utf-8\">\n<title>flaky report %s to %s</title>\n"
	    "<style>body{font-family:sans-serif;margin:1.5em}"
	    "table{border-collapse:collapse}td,th{border:1px solid #ccc;"
	    "padding:2px 6px;font-size:13px}tr.critical td:first-child"
	    "{color:#b00}tr.warning td:first-child{color:#b60}"
	    "</style></head>\n<body>\n<h1>Flaky tests, %s to %s</h1>\n",
	    a, b, a, b);
	fprintf(f, "<p id=\"summary\">%lld runs", (long long)h->runs.runs);
	if (h->target != NULL) {
		fprintf(f, " of ");
		esc(f, h->target);
	}
	fprintf(f, "; %zu tests with failures.</p>\n", failing(v, n));
	heat_map(f, h, sel, m);
	rate_lines(f, h, sel, m);
	table(f, h, v, n);
	fprintf(f, "</body></html>\n");
	if (ferror(f) | (fclose(f) != 0))
		return flaky_error(err, errlen, EIO, "%s: write error", path);
	return 0;
}
