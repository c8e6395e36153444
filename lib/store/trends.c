/* The overview's trends (issue 32, docs/dashboard.md "Trends"): tests per
 * tier per day, flaky tests introduced and fixed per week, and the wall
 * time of failed runs per day, by target, box or branch.
 *
 * Only tests that failed in the span can be in a tier other than stable,
 * and the budget table (one row per day and test with a failed result)
 * names them in a few rows. Their days are then read with one seek per
 * day and test in the rollups (keyed by day, test), as history.c reads
 * its series: the cost grows with the unstable tests, not with every
 * test or result. */
#include "buildconf.h"

#include "stats/stats.h"
#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

/* Days read before the first day shown: the 30 days of a tier's window
 * before it, and 30 days without a failure before a period can begin. */
#define TREND_WINDOW	30
#define TREND_BEFORE	(2 * TREND_WINDOW)

/* The tests that failed in [from, to] (of a target), by id. */
static const char failing_sql[] =
    "SELECT DISTINCT b.test_id FROM budget b JOIN tests t ON t.id = "
    "b.test_id JOIN targets tg ON tg.id = t.target_id WHERE b.day >= ?1 "
    "AND b.day <= ?2 AND (tg.name = ?3 OR ?3 IS NULL) ORDER BY b.test_id";

/* Their days: one seek per day and test. ?4: box (?5 '' for the store's
 * own box, whose runs of before boxes are stored so), or branch. */
static const char days_sql[] =
    "WITH RECURSIVE d(x) AS (SELECT ?2 UNION ALL SELECT x + 1 FROM d "
    "WHERE x + 1 <= ?3), k(id) AS (SELECT value FROM json_each(?1)) "
    "SELECT r.test_id, r.day, r.runs, r.failures FROM k "
    "CROSS JOIN d ON true CROSS JOIN rollups r "
    "ON r.day = d.x AND r.test_id = k.id ORDER BY r.test_id, r.day";
static const char days_box_sql[] =
    "WITH RECURSIVE d(x) AS (SELECT ?2 UNION ALL SELECT x + 1 FROM d "
    "WHERE x + 1 <= ?3), k(id) AS (SELECT value FROM json_each(?1)) "
    "SELECT r.test_id, r.day, sum(r.runs), sum(r.failures) FROM k "
    "CROSS JOIN d ON true CROSS JOIN box_rollups r "
    "ON r.day = d.x AND r.test_id = k.id WHERE r.box IN (?4, ?5) "
    "GROUP BY r.test_id, r.day ORDER BY r.test_id, r.day";
static const char days_branch_sql[] =
    "WITH RECURSIVE d(x) AS (SELECT ?2 UNION ALL SELECT x + 1 FROM d "
    "WHERE x + 1 <= ?3), k(id) AS (SELECT value FROM json_each(?1)) "
    "SELECT r.test_id, r.day, r.runs, r.failures FROM k "
    "CROSS JOIN d ON true CROSS JOIN branch_rollups r "
    "ON r.day = d.x AND r.test_id = k.id AND r.branch = ?4 "
    "ORDER BY r.test_id, r.day";

/* The days the failing tests flipped on a revision (its newest run). */
static const char flips_sql[] =
    "SELECT o.test_id, o.last_ms / 86400000 FROM revision_outcomes o "
    "WHERE o.passes > 0 AND o.fails > 0 AND o.last_ms >= ?1 AND "
    "o.test_id IN (SELECT value FROM json_each(?2)) ORDER BY o.test_id";

/* The counted runs with a failure, by day: each run once. A parameter is
 * compared before it is tested for NULL: PostgreSQL takes its type from
 * its first use. */
static const char lost_sql[] =
    "SELECT ru.started_ms / 86400000, sum(coalesce(ru.duration_us, 0)), "
    "count(*) FROM runs ru WHERE ru.started_ms >= ?1 AND ru.started_ms < "
    "?2 AND ru.failures > 0 AND ru.kind <> 'alone' AND ru.incomplete IS "
    "NULL AND ru.status <> 'running' AND (ru.target_id IN (SELECT id FROM "
    "targets WHERE name = ?3) OR ?3 IS NULL) AND (coalesce(ru.box, ?5) = "
    "?4 OR ?4 IS NULL) AND (ru.id IN (SELECT run_id FROM run_ci WHERE "
    "branch = ?6) OR ?6 IS NULL) GROUP BY ru.started_ms / 86400000";

int
flaky_trend_tier_index(int tier)
{
	switch (tier) {
	case FLAKY_TIER_NOISE:		return 0;
	case FLAKY_TIER_WARNING:	return 1;
	case FLAKY_TIER_CRITICAL:	return 2;
	case FLAKY_TIER_BROKEN:		return 3;
	}
	return -1;
}

void
flaky_trends_free(struct flaky_trends *t)
{
	free(t->tiers);
	free(t->introduced);
	free(t->fixed);
	free(t->breaks);
	free(t->lost_us);
	free(t->lost_runs);
	memset(t, 0, sizeof *t);
}

/* The passes that end a period: one for a break so far (every run since
 * it began failed, and no flip), else flaky_passes_needed of the rate of
 * the 30 days up to its last failure (fs of rs), as quarantine's release
 * asks (docs/history.md). */
static int64_t
passes_needed(int brk, int64_t fs, int64_t rs)
{
	if (brk || rs <= 0)
		return 1;
	return flaky_passes_needed((double)fs / (double)rs, FLAKY_PROOF_ALPHA);
}

/* A test's series from the first day read (span days) and the days it
 * flipped on a revision: its tiers each shown day, and its periods'
 * starts and fixes (trends in store_dash.h). A period's break or flake
 * is decided by its runs: every run of it failed and it never flipped on
 * a revision is a break (a flake with one failure and a pass at the next
 * revision looks the same: the rule of issue 29, not a flake). */
static void
fold_test(struct flaky_trends *t, int64_t span, const uint32_t *runs,
    const uint32_t *fails, const unsigned char *flipped)
{
	int64_t	 off = TREND_BEFORE, rs = 0, fs = 0, start = -1;
	int64_t	 prun = 0, pfail = 0, passes = 0, need = 0, wf = 0, wr = 0;
	int	 fixed_before = 0, pflip = 0, brk;

	for (int64_t d = 0; d < span; d++) {
		rs += runs[d];
		fs += fails[d];
		if (d >= TREND_WINDOW) {
			rs -= runs[d - TREND_WINDOW];
			fs -= fails[d - TREND_WINDOW];
		}
		if (d >= off) {
			int	 k = flaky_trend_tier_index(flaky_tier(fs, rs));

			if (k >= 0)
				t->tiers[d - off][k]++;
		}
		if (fails[d] > 0) {
			if (start < 0) {
				/* a period begins: after 30 days known to
				 * be clean, or after the last one's fix */
				start = d >= TREND_WINDOW || fixed_before ? d :
				    -2 - d;
				prun = pfail = 0;
				pflip = 0;
			}
			prun += runs[d] + passes;
			pfail += fails[d];
			pflip |= flipped[d];
			passes = 0;
			wf = fs;
			wr = rs;
			need = passes_needed(pfail == prun && !pflip, wf, wr);
			continue;
		}
		if (start == -1)
			continue;
		if (flipped[d] && !pflip) {
			/* it passed on a revision it failed on */
			pflip = 1;
			need = passes_needed(0, wf, wr);
		}
		passes += runs[d];
		if (passes < need)
			continue;
		/* fixed today */
		brk = pfail == prun && !pflip;
		if (start >= 0 && start >= off)
			(brk ? t->breaks : t->introduced)[(start - off) / 7]++;
		if (!brk && d >= off)
			t->fixed[(d - off) / 7]++;
		start = -1;
		fixed_before = 1;
	}
	if (start >= off)
		(pfail == prun && !pflip ? t->breaks :
		    t->introduced)[(start - off) / 7]++;
}

/* The failing tests of the span, as a JSON array of ids. */
static int
failing_tests(struct flaky_store *s, const struct flaky_query *q,
    int64_t from, int64_t to, char **list, size_t *n, char *err,
    size_t errlen)
{
	struct sql_stmt	*st;
	int64_t		*v = NULL;
	size_t		 cap = 0;
	int		 r, rc;

	*n = 0;
	*list = NULL;
	if ((r = store_prepare(s, failing_sql, &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, from);
	sql_bind_int64(st, 2, to);
	if (q->target != NULL)
		sql_bind_text(st, 3, q->target, -1, SQL_STATIC);
	while ((rc = sql_step(st)) == SQL_ROW) {
		if (flaky_array_grow(&v, &cap, *n + 1, sizeof *v) < 0) {
			r = -ENOMEM;
			break;
		}
		v[(*n)++] = sql_column_int64(st, 0);
	}
	if (r == 0 && rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading failed tests");
	sql_finalize(st);
	if (r == 0 && (*list = store_ids_json(v, *n)) == NULL)
		r = -ENOMEM;
	free(v);
	if (r == -ENOMEM)
		flaky_error(err, errlen, ENOMEM, "out of memory");
	return r;
}

/* A test's flip days: pairs of (test id, day), by test id. */
struct flip_day {
	int64_t		 test_id, day;
};

/* A flip day of flip_days' statement. */
static void
flip_day_fill(struct sql_stmt *st, void *p, int *oom)
{
	struct flip_day	*x = p;

	x->test_id = sql_column_int64(st, 0);
	x->day = sql_column_int64(st, 1);
	(void)oom;
}

/* The flip days of the listed tests since from. */
static int
flip_days(struct flaky_store *s, const char *list, int64_t from,
    struct flip_day **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	*ret = NULL;
	*ret_n = 0;
	if ((r = store_prepare(s, flips_sql, &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, from * FLAKY_DAY_MS);
	sql_bind_text(st, 2, list, -1, SQL_STATIC);
	if ((r = store_rows(s, st, sizeof **ret, flip_day_fill, "reading "
	    "flips", ret, ret_n, err, errlen)) < 0) {
		free(*ret);
		*ret = NULL;
		*ret_n = 0;
	}
	return r;
}

/* Fold the test whose days are in runs and fails, with its flips from
 * *fi on (they are by test id, as the tests come), then clear. */
static void
fold_one(struct flaky_trends *t, int64_t id, int64_t from, int64_t span,
    uint32_t *runs, uint32_t *fails, unsigned char *flipped,
    const struct flip_day *fd, size_t nfd, size_t *fi)
{
	while (*fi < nfd && fd[*fi].test_id < id)
		(*fi)++;
	for (; *fi < nfd && fd[*fi].test_id == id; (*fi)++)
		if (fd[*fi].day >= from && fd[*fi].day < from + span)
			flipped[fd[*fi].day - from] = 1;
	fold_test(t, span, runs, fails, flipped);
	memset(runs, 0, (size_t)span * sizeof *runs);
	memset(fails, 0, (size_t)span * sizeof *fails);
	memset(flipped, 0, (size_t)span);
	t->tests++;
}

/* Every failing test's days, folded one test at a time. */
static int
fold_days(struct flaky_store *s, const struct flaky_query *q,
    const char *branch, const char *list, int64_t from, int64_t to,
    struct flaky_trends *t, char *err, size_t errlen)
{
	struct sql_stmt	*st = NULL;
	struct flip_day	*fd = NULL;
	int64_t		 span = to - from + 1, cur = 0;
	uint32_t	*runs, *fails;
	unsigned char	*flipped;
	size_t		 nfd = 0, fi = 0;
	int		 r, rc;

	runs = calloc((size_t)span, sizeof *runs);
	fails = calloc((size_t)span, sizeof *fails);
	flipped = calloc((size_t)span, 1);
	if (runs == NULL || fails == NULL || flipped == NULL) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	if ((r = flip_days(s, list, from, &fd, &nfd, err, errlen)) < 0 ||
	    (r = store_prepare(s, branch != NULL ? days_branch_sql :
	    q->box != NULL ? days_box_sql : days_sql, &st, err, errlen)) < 0)
		goto out;
	sql_bind_text(st, 1, list, -1, SQL_STATIC);
	sql_bind_int64(st, 2, from);
	sql_bind_int64(st, 3, to);
	if (branch != NULL)
		sql_bind_text(st, 4, branch, -1, SQL_STATIC);
	else if (q->box != NULL) {
		sql_bind_text(st, 4, q->box, -1, SQL_STATIC);
		sql_bind_text(st, 5, strcmp(q->box, flaky_store_box(s)) == 0 ?
		    "" : q->box, -1, SQL_STATIC);
	}
	while ((rc = sql_step(st)) == SQL_ROW) {
		int64_t	 id = sql_column_int64(st, 0);
		int64_t	 d = sql_column_int64(st, 1) - from;

		if (id != cur && cur != 0)
			fold_one(t, cur, from, span, runs, fails, flipped, fd,
			    nfd, &fi);
		cur = id;
		if (d < 0 || d >= span)
			continue;
		runs[d] = (uint32_t)sql_column_int64(st, 2);
		fails[d] = (uint32_t)sql_column_int64(st, 3);
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading the rollups");
	else if (cur != 0)
		fold_one(t, cur, from, span, runs, fails, flipped, fd, nfd,
		    &fi);
out:
	sql_finalize(st);
	free(fd);
	free(runs);
	free(fails);
	free(flipped);
	return r;
}

/* The rerun budget per day: the counted runs in which a test failed. */
static int
lost_time(struct flaky_store *s, const struct flaky_query *q,
    const char *branch, struct flaky_trends *t, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r, rc;

	if ((r = store_prepare(s, lost_sql, &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, t->first_day * FLAKY_DAY_MS);
	sql_bind_int64(st, 2, (t->first_day + t->ndays) * FLAKY_DAY_MS);
	if (q->target != NULL)
		sql_bind_text(st, 3, q->target, -1, SQL_STATIC);
	if (q->box != NULL) {
		sql_bind_text(st, 4, q->box, -1, SQL_STATIC);
		sql_bind_text(st, 5, flaky_store_box(s), -1, SQL_STATIC);
	}
	if (branch != NULL)
		sql_bind_text(st, 6, branch, -1, SQL_STATIC);
	while ((rc = sql_step(st)) == SQL_ROW) {
		int64_t	 d = sql_column_int64(st, 0) - t->first_day;

		if (d < 0 || d >= t->ndays)
			continue;
		t->lost_us[d] += sql_column_int64(st, 1);
		t->lost_runs[d] += (uint32_t)sql_column_int64(st, 2);
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading failed runs");
	sql_finalize(st);
	return r;
}

int
flaky_store_trends(struct flaky_store *s, const struct flaky_query *q,
    const char *branch, int ndays, struct flaky_trends *t, char *err,
    size_t errlen)
{
	int64_t	 last, from;
	char	*list = NULL;
	size_t	 n;
	int	 r;

	memset(t, 0, sizeof *t);
	if (ndays < 7 || ndays > 366)
		return flaky_error(err, errlen, EINVAL, "days: expected 7 to "
		    "366, got %d", ndays);
	last = (q->until_ms == INT64_MAX ? flaky_now_ms() : q->until_ms - 1) /
	    FLAKY_DAY_MS;
	t->ndays = ndays;
	t->first_day = last - ndays + 1;
	t->nweeks = (ndays + 6) / 7;
	from = t->first_day - TREND_BEFORE;
	t->tiers = calloc((size_t)ndays, sizeof *t->tiers);
	t->introduced = calloc((size_t)t->nweeks, sizeof *t->introduced);
	t->fixed = calloc((size_t)t->nweeks, sizeof *t->fixed);
	t->breaks = calloc((size_t)t->nweeks, sizeof *t->breaks);
	t->lost_us = calloc((size_t)ndays, sizeof *t->lost_us);
	t->lost_runs = calloc((size_t)ndays, sizeof *t->lost_runs);
	if (t->tiers == NULL || t->introduced == NULL || t->fixed == NULL ||
	    t->breaks == NULL || t->lost_us == NULL || t->lost_runs == NULL) {
		flaky_trends_free(t);
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	}
	if ((r = failing_tests(s, q, from, last, &list, &n, err,
	    errlen)) == 0 && n > 0)
		r = fold_days(s, q, branch, list, from, last, t, err, errlen);
	free(list);
	if (r == 0)
		r = lost_time(s, q, branch, t, err, errlen);
	if (r < 0)
		flaky_trends_free(t);
	return r;
}
