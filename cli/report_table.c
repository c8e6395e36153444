/* The ranked table of analyze and report, for a person: a header row,
 * columns sized by display width, ids shortened in the middle to fit a
 * terminal (whole in a pipe or with --wide), a legend of the marks under
 * it, tier colours on a terminal. */
#include "buildconf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"
#include "stats/stats.h"
#include "store/store.h"
#include "table.h"
#include "util/util.h"

#define COLOR_RED	"\033[1;31m"
#define COLOR_YELLOW	"\033[1;33m"
#define COLOR_MAGENTA	"\033[1;35m"
#define COLOR_DIM	"\033[2m"
#define COLOR_OFF	"\033[0m"

/* Where the lines under a row start: under the TEST column. */
#define INDENT		10
/* The narrowest a shortened id gets, however narrow the terminal. */
#define TEST_MIN	12
/* The sparkline's marks in the table. */
#define SPARK_WIDTH	30

enum { C_TIER, C_TEST, C_RATE, C_FAILED, C_CI, C_SIG, C_TREND, C_MAX };

static const struct {
	const char	*head;
	int		 right;
} col_def[C_MAX] = {
	{ "TIER", 0 }, { "TEST", 0 }, { "RATE", 1 }, { "FAILED", 1 },
	{ "95% CI", 1 }, { "SIGNATURE", 0 }, { "TREND", 0 },
};

struct table {
	struct ctl			*ctl;
	const struct report_head	*h;
	const struct report_evidence	*ev;
	size_t				 cols;	/* 0: no limit */
	size_t				 w[C_MAX];
	int				 on[C_MAX];
	struct flaky_buf		 b;
};

/* One row's cells; the strings live as long as the row and s. */
struct cells {
	const char	*v[C_MAX];
	char		 rate[16], failed[48], ci[24];
};

/* Is the row one the table lists: unstable (not noise, not stable, not
 * a test without a counted run), or noise that flipped on a revision
 * (issue 29: failed and passed on the same code, flaky whatever its
 * rate)? */
static int
row_listed(const struct report_evidence *ev, const struct flaky_test_row *r)
{
	int	 t = flaky_tier(r->failures, r->runs);

	return t == FLAKY_TIER_CRITICAL || t == FLAKY_TIER_WARNING ||
	    t == FLAKY_TIER_BROKEN || (t == FLAKY_TIER_NOISE &&
	    evidence_flips(ev, r->test_id) != NULL);
}

static const char *
tier_word(int t)
{
	return t == FLAKY_TIER_CRITICAL ? "CRITICAL" :
	    t == FLAKY_TIER_WARNING ? "WARNING" :
	    t == FLAKY_TIER_NOISE ? "NOISE" : "BROKEN";
}

static void
row_cells(const struct table *t, const struct flaky_test_row *r,
    struct cells *c)
{
	const struct flaky_test_sig *s = evidence_sig(t->ev, r->test_id);
	const struct flaky_history_row *hr = NULL;
	int	 tier = flaky_tier(r->failures, r->runs);
	double	 lo, hi;

	if (t->h->hist != NULL)
		hr = flaky_history_find(t->h->hist, r->test_id);
	snprintf(c->rate, sizeof c->rate, "%.1f%%", r->runs ? 100.0 *
	    (double)r->failures / (double)r->runs : 0.0);
	snprintf(c->failed, sizeof c->failed, "%lld/%lld",
	    (long long)r->failures, (long long)r->runs);
	flaky_wilson(r->failures, r->runs, FLAKY_Z95, &lo, &hi);
	if (tier == FLAKY_TIER_BROKEN)
		snprintf(c->ci, sizeof c->ci, "-");
	else
		snprintf(c->ci, sizeof c->ci, "%.0f-%.0f%%", 100 * lo,
		    100 * hi);
	c->v[C_TIER] = tier_word(tier);
	c->v[C_TEST] = r->test;
	c->v[C_RATE] = c->rate;
	c->v[C_FAILED] = c->failed;
	c->v[C_CI] = c->ci;
	c->v[C_SIG] = s != NULL && s->signature != NULL ? s->signature : "-";
	c->v[C_TREND] = flaky_trend_name(hr ? hr->trend : FLAKY_TREND_SAME);
}

/* The columns' widths from what they hold; on a terminal the TEST column
 * gives way so that a row fits. */
static void
size_columns(struct table *t, const struct flaky_test_row *v, size_t n)
{
	struct cells	 c;
	size_t		 other = 0, w;

	for (int k = 0; k < C_MAX; k++) {
		t->on[k] = k != C_TREND || t->h->hist != NULL;
		t->w[k] = table_width(col_def[k].head);
	}
	/* the tier column is as wide as its widest word, whatever the rows:
	 * the lines under the rows and "noise", "stable" line up with it */
	t->w[C_TIER] = INDENT - 2;
	for (size_t i = 0; i < n; i++) {
		if (!row_listed(t->ev, &v[i]))
			continue;
		row_cells(t, &v[i], &c);
		for (int k = 0; k < C_MAX; k++)
			if ((w = table_width(c.v[k])) > t->w[k])
				t->w[k] = w;
	}
	if (t->cols == 0)
		return;
	for (int k = 0; k < C_MAX; k++)
		if (t->on[k] && k != C_TEST)
			other += t->w[k] + 2;
	if (other + t->w[C_TEST] > t->cols)
		t->w[C_TEST] = t->cols > other + TEST_MIN ? t->cols - other :
		    TEST_MIN;
}

/* Print the line in t->b without its trailing blanks, and empty it. */
static void
flush_line(struct table *t)
{
	size_t	 n = t->b.len;
	const char *s = flaky_buf_cstr(&t->b);

	while (n > 0 && s[n - 1] == ' ')
		n--;
	fwrite(s, 1, n, stdout);
	putchar('\n');
	flaky_buf_reset(&t->b);
}

/* A row of cells; color around the tier. */
static void
put_row(struct table *t, const char *const *v, const char *color)
{
	for (int k = 0; k < C_MAX; k++) {
		if (!t->on[k])
			continue;
		if (k > 0)
			flaky_buf_adds(&t->b, "  ");
		if (k == C_TIER && *color)
			flaky_buf_adds(&t->b, color);
		table_cell(&t->b, v[k], t->w[k], col_def[k].right);
		if (k == C_TIER && *color)
			flaky_buf_adds(&t->b, COLOR_OFF);
	}
	flush_line(t);
}

/* An indented line under a row, dim on a terminal, cut to its width. */
static void
put_note(struct table *t, const char *s)
{
	int	 dim = t->ctl->color;

	if (dim)
		flaky_buf_adds(&t->b, COLOR_DIM);
	flaky_buf_printf(&t->b, "%*s", INDENT, "");
	if (t->cols > INDENT + 1)
		table_cut(&t->b, s, t->cols - INDENT);
	else
		flaky_buf_adds(&t->b, s);
	if (dim)
		flaky_buf_adds(&t->b, COLOR_OFF);
	flush_line(t);
}

/* "1.5 h", "12 min", "40 s" */
static void
fmt_budget(int64_t us, char *buf, size_t len)
{
	double	 s = (double)us / 1e6;

	if (s >= 5400)
		snprintf(buf, len, "%.1f h", s / 3600);
	else if (s >= 90)
		snprintf(buf, len, "%.0f min", s / 60);
	else
		snprintf(buf, len, "%.0f s", s);
}

/* report: the sparkline, change point, budget and quarantine of a row,
 * as pieces separated by \037. */
static void
history_pieces(struct table *t, const struct flaky_test_row *r,
    struct flaky_buf *p)
{
	const struct flaky_history_row *hr;
	char	 day[16], bud[32];

	if (t->h->hist == NULL ||
	    (hr = flaky_history_find(t->h->hist, r->test_id)) == NULL)
		return;
	sparkline(p, hr->day_runs, hr->day_failures,
	    (size_t)t->h->hist->ndays, SPARK_WIDTH, t->ctl->tty);
	if (hr->change_day >= 0)
		flaky_buf_printf(p, "\037%s since %s",
		    flaky_trend_name(hr->trend), flaky_format_day(
		    hr->change_day * FLAKY_DAY_MS, day, sizeof day));
	if (hr->budget_wall_us > 0) {
		fmt_budget(hr->budget_wall_us, bud, sizeof bud);
		flaky_buf_printf(p, "\037budget %s", bud);
	}
	if (hr->quarantined)
		flaky_buf_adds(p, "\037[quarantined]");
}

/* The facts under a row that have no column, wrapped at the width. */
static void
put_details(struct table *t, const struct flaky_test_row *r)
{
	struct flaky_buf p;
	char	 fm[32], pm[32];
	int	 tier = flaky_tier(r->failures, r->runs);

	flaky_buf_init(&p);
	history_pieces(t, r, &p);
	if (tier != FLAKY_TIER_BROKEN && !isnan(r->median_ms_fail) &&
	    !isnan(r->median_ms_pass)) {
		flaky_format_ms(r->median_ms_fail, fm, sizeof fm);
		flaky_format_ms(r->median_ms_pass, pm, sizeof pm);
		flaky_buf_printf(&p, "\037fails in ~%s, passes in ~%s", fm,
		    pm);
	}
	if (r->alone_runs > 0)
		flaky_buf_printf(&p, "\037%s alone %lld/%lld",
		    r->alone_failures ? "fails" : "passes", (long long)
		    (r->alone_failures ? r->alone_failures : r->alone_runs),
		    (long long)r->alone_runs);
	if (t->h->target == NULL)
		flaky_buf_printf(&p, "\037target %s", r->target);
	if (p.len > 0) {
		flaky_buf_printf(&t->b, "%*s", INDENT, "");
		table_wrap(&t->b, flaky_buf_cstr(&p), '\037', "  ", INDENT,
		    t->cols);
		fputs(flaky_buf_cstr(&t->b), stdout);
		flaky_buf_reset(&t->b);
	}
	flaky_buf_free(&p);
}

/* Under a row: the test its order dependence points at, if any. */
static void
put_order(struct table *t, const struct flaky_test_row *r)
{
	const struct flaky_test_sig *s = evidence_sig(t->ev, r->test_id);
	char	*line;

	if (s == NULL || (s->polluter == NULL && s->depends_on == NULL))
		return;
	if (asprintf(&line, "%s %s %s", s->polluter ? "fails after" :
	    "fails unless", s->polluter ? s->polluter : s->depends_on,
	    s->polluter ? "ran before it" : "ran first") < 0)
		return;
	put_note(t, line);
	free(line);
}

/* Under a row: its rates calm and under each stress, if it had both;
 * its rates per box, if it ran on more than one (issue 15). */
static void
put_perturbs(struct table *t, const struct flaky_test_row *r)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	if (evidence_perturb_words(t->ev, r->test_id, &b))
		put_note(t, flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	if (evidence_box_words(t->ev, r->test_id, &b))
		put_note(t, flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	if (evidence_flip_words(t->ev, r->test_id, &b))
		put_note(t, flaky_buf_cstr(&b));
	flaky_buf_free(&b);
}

/* Under a row (issue 34): its seed sweep when it failed in one, and its
 * headroom sites at risk. */
static void
put_seeds(struct table *t, const struct flaky_test_row *r)
{
	const struct flaky_headroom_site *v;
	struct flaky_buf b;
	size_t	 n = evidence_headroom(t->ev, r->test_id, &v);

	flaky_buf_init(&b);
	if (evidence_seed_words(t->ev, r->test_id, &b))
		put_note(t, flaky_buf_cstr(&b));
	for (size_t i = 0; i < n; i++) {
		if (!v[i].at_risk)
			continue;
		flaky_buf_reset(&b);
		flaky_buf_adds(&b, "headroom: ");
		flaky_headroom_words(&v[i], &b);
		put_note(t, flaky_buf_cstr(&b));
	}
	flaky_buf_free(&b);
}

/* After the table: tests that passed every run, though an assertion of
 * theirs is estimated to fail now and then (passing by luck). */
static void
put_lucky(struct table *t, const struct flaky_test_row *v, size_t n)
{
	const struct flaky_headroom_site *h;
	struct flaky_buf b;
	size_t	 shown = 0, k;

	flaky_buf_init(&b);
	for (size_t i = 0; i < n; i++) {
		if (v[i].failures > 0)
			continue;
		k = evidence_headroom(t->ev, v[i].test_id, &h);
		for (size_t j = 0; j < k; j++) {
			if (!h[j].at_risk)
				continue;
			if (shown++ == 0)
				printf("passed every run, but an assertion's "
				    "headroom says it will fail:\n");
			flaky_buf_reset(&b);
			flaky_buf_printf(&b, "%s: ", v[i].test);
			flaky_headroom_words(&h[j], &b);
			fputs("  ", stdout);
			table_wrap(&t->b, flaky_buf_cstr(&b), ' ', " ", 4,
			    t->cols);
			fputs(flaky_buf_cstr(&t->b), stdout);
			flaky_buf_reset(&t->b);
		}
	}
	flaky_buf_free(&b);
}

/* Under a row: the co-failure cluster it belongs to, if any. */
static void
put_cluster(struct table *t, const struct flaky_test_row *r)
{
	const struct flaky_cluster *c = flaky_cluster_of(&t->ev->clusters,
	    r->test_id);
	char	 line[160];

	if (c == NULL)
		return;
	snprintf(line, sizeof line, "cluster %d: fails with %zu other test%s "
	    "(flakyctl clusters; ticket --cluster %d)", c->id, c->n - 1,
	    plural((long long)c->n - 1), c->id);
	put_note(t, line);
}

/* "approximate assertion at tests/t.py:12 (rtol=1e-6), unseeded" */
static void
put_risks(struct table *t, const struct flaky_test_row *r)
{
	struct flaky_buf b;
	size_t	 first, n = evidence_risks(t->ev, r, &first);
	char	 more[64];

	flaky_buf_init(&b);
	for (size_t i = first; i < first + n && i < first + 2; i++) {
		flaky_buf_reset(&b);
		flaky_risk_words(&t->ev->risks[i], &b);
		put_note(t, flaky_buf_cstr(&b));
	}
	flaky_buf_free(&b);
	if (n > 2) {
		snprintf(more, sizeof more, "and %zu more approximate "
		    "assertion%s", n - 2, plural((long long)n - 2));
		put_note(t, more);
	}
}

/* One listed test: its row and the lines under it. */
static void
put_test(struct table *t, const struct flaky_test_row *r)
{
	struct cells	 c;
	char		 msg[1024];
	const char	*color = "";
	int		 tier = flaky_tier(r->failures, r->runs);

	row_cells(t, r, &c);
	if (t->ctl->color)
		color = tier == FLAKY_TIER_CRITICAL ? COLOR_RED :
		    tier == FLAKY_TIER_WARNING ? COLOR_YELLOW :
		    tier == FLAKY_TIER_NOISE ? COLOR_DIM : COLOR_MAGENTA;
	put_row(t, c.v, color);
	put_details(t, r);
	if (r->top_message != NULL) {
		msg_first_line(r->top_message, msg, t->cols ? sizeof msg :
		    160);
		put_note(t, msg);
	}
	put_order(t, r);
	put_perturbs(t, r);
	put_seeds(t, r);
	put_cluster(t, r);
	put_risks(t, r);
}

/* "30 done, 1 timed out, 2 errors": the runs' ends, when not all done. */
static void
head_counts(struct ctl *ctl, const struct report_head *h,
    struct flaky_buf *b)
{
	const struct flaky_run_counts *c = &h->runs;

	if (c->timeout || c->error || c->interrupted || c->skipped)
		flaky_buf_printf(b, ": %lld done, %lld timed out, %lld "
		    "error%s, %lld interrupted, %lld skipped",
		    (long long)c->done, (long long)c->timeout,
		    (long long)c->error, plural(c->error),
		    (long long)c->interrupted, (long long)c->skipped);
	if (c->stopped)
		flaky_buf_printf(b, ", %lld stopped", (long long)c->stopped);
	if (c->incomplete)
		flaky_buf_printf(b, "; %lld incomplete (some outcomes "
		    "missing), counted in no rate", (long long)c->incomplete);
	if (c->replays)
		flaky_buf_printf(b, "; %lld replay%s of failing seeds, "
		    "evidence only", (long long)c->replays,
		    plural(c->replays));
	/* runs alone never count in the rates unless --kind asks */
	if (c->alone && !(ctl->kinds & FLAKY_KIND_MASK(FLAKY_KIND_ALONE)))
		flaky_buf_printf(b, "; and %lld run%s alone, shown beside the "
		    "rates", (long long)c->alone, plural(c->alone));
}

/* "from 2026-11-01 to 2026-11-30 (30 days, UTC)": whole days when the
 * window is whole days (report's always is), else the times. */
static void
head_window(const struct report_head *h, struct flaky_buf *b)
{
	char	 a[32], z[32];
	int64_t	 days;

	if (h->until_ms % FLAKY_DAY_MS == 0 && (h->since_ms == INT64_MIN ||
	    h->since_ms % FLAKY_DAY_MS == 0)) {
		flaky_format_day(h->until_ms - 1, z, sizeof z);
		if (h->since_ms == INT64_MIN) {
			flaky_buf_printf(b, " from the first run to %s (UTC)",
			    z);
			return;
		}
		days = (h->until_ms - h->since_ms) / FLAKY_DAY_MS;
		flaky_buf_printf(b, " from %s to %s (%lld day%s, UTC)",
		    flaky_format_day(h->since_ms, a, sizeof a), z,
		    (long long)days, plural(days));
		return;
	}
	if (h->since_ms == INT64_MIN)
		snprintf(a, sizeof a, "the beginning");
	else
		flaky_format_time(h->since_ms, a, sizeof a);
	flaky_buf_printf(b, " from %s to %s", a,
	    flaky_format_time(h->until_ms, z, sizeof z));
}

/* The sentence above the table, wrapped at the terminal's width. */
static void
put_head(struct table *t)
{
	const struct report_head *h = t->h;
	struct flaky_buf s;
	char	 d[32];

	flaky_buf_init(&s);
	if (h->command != NULL) {
		flaky_format_ms((double)h->wall_us / 1000.0, d, sizeof d);
		flaky_buf_printf(&s, "%lld run%s of %s (target %s) in %s",
		    (long long)h->runs.runs, plural(h->runs.runs), h->command,
		    h->target, d);
	} else {
		flaky_buf_printf(&s, "%lld run%s%s%s", (long long)h->runs.runs,
		    plural(h->runs.runs), h->target ? " of " : "",
		    h->target ? h->target : "");
		head_window(h, &s);
	}
	head_counts(t->ctl, h, &s);
	table_wrap(&t->b, flaky_buf_cstr(&s), ' ', " ", 2, t->cols);
	fputs(flaky_buf_cstr(&t->b), stdout);
	flaky_buf_reset(&t->b);
	flaky_buf_free(&s);
}

/* What the marks and the trend words mean, under a report's table. */
static void
put_legend(struct table *t)
{
	struct flaky_buf s;
	int64_t	 nd = t->h->hist->ndays;
	int64_t	 per = (nd + SPARK_WIDTH - 1) / SPARK_WIDTH;

	flaky_buf_init(&s);
	if (per <= 1)
		flaky_buf_adds(&s, "marks: one a day, ");
	else
		flaky_buf_printf(&s, "marks: one per %lld day%s, ",
		    (long long)per, plural(per));
	flaky_buf_printf(&s, "%s no failure, %s a rising failure rate, "
	    "blank no runs. trend: new, worse, same or better than the %lld "
	    "day%s before.", t->ctl->tty ? "\u2581" : "_", t->ctl->tty ?
	    "\u2582\u2583\u2584\u2585\u2586\u2587\u2588" : ".-~=+*#",
	    (long long)nd, plural(nd));
	table_wrap(&t->b, flaky_buf_cstr(&s), ' ', " ", 0, t->cols);
	fputs(flaky_buf_cstr(&t->b), stdout);
	flaky_buf_reset(&t->b);
	flaky_buf_free(&s);
}

int
report_table(struct ctl *ctl, const struct report_head *h,
    const struct report_evidence *ev, const struct flaky_test_row *v,
    size_t n)
{
	struct table	 t;
	size_t		 noise = 0, stable = 0, skipped = 0, none = 0;
	size_t		 listed = 0;

	memset(&t, 0, sizeof t);
	t.ctl = ctl;
	t.h = h;
	t.ev = ev;
	t.cols = ctl->tty && !ctl->wide ? table_columns(STDOUT_FILENO) : 0;
	flaky_buf_init(&t.b);
	put_head(&t);
	size_columns(&t, v, n);
	for (size_t i = 0; i < n; i++) {
		int	 tier = flaky_tier_skips(v[i].failures, v[i].runs,
		    v[i].skips);

		if (tier == FLAKY_TIER_NOISE && !row_listed(ev, &v[i]))
			noise++;
		else if (tier == FLAKY_TIER_STABLE)
			stable++;
		else if (tier == FLAKY_TIER_SKIPPED)
			skipped++;
		else if (tier == FLAKY_TIER_NONE)
			none++;
		else {
			if (listed++ == 0)
				put_row(&t, (const char *const [C_MAX]){
				    col_def[0].head, col_def[1].head,
				    col_def[2].head, col_def[3].head,
				    col_def[4].head, col_def[5].head,
				    col_def[6].head }, "");
			put_test(&t, &v[i]);
		}
	}
	if (noise > 0)
		printf("noise     %zu test%s under 5%%\n", noise,
		    plural((long long)noise));
	if (stable > 0)
		printf("stable    %zu test%s\n", stable,
		    plural((long long)stable));
	/* no counted run: not stable, whatever they are (docs/statistics.md) */
	if (skipped > 0)
		printf("skipped   %zu test%s in every run: no evidence either "
		    "way\n", skipped, plural((long long)skipped));
	if (none > 0)
		printf("no evidence %zu test%s: no complete run reported "
		    "%s\n", none, plural((long long)none), none == 1 ? "it" :
		    "them");
	if (n == 0)
		printf("no test results in this window\n");
	put_lucky(&t, v, n);
	if (listed > 0 && h->hist != NULL)
		put_legend(&t);
	if (h->hist != NULL && h->hist->pruned_before_ms > 0 &&
	    h->since_ms < h->hist->pruned_before_ms) {
		char	 a[32];

		printf("messages unavailable before %s (raw results pruned; "
		    "counts and trends come from the daily rollups)\n",
		    flaky_format_time(h->hist->pruned_before_ms, a, sizeof a));
	}
	flaky_buf_free(&t.b);
	return 0;
}
