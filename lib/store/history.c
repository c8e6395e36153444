/* History over weeks: daily series from the rollups, trends decided with
 * Wilson intervals, change points, the rerun budget, one test's days and
 * ingest's attempts. Quarantine is in quarantine.c, retention and the
 * database's statistics in maint.c. */
#include "buildconf.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"
#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

/* The daily arrays cover at most this many days of a window (and as many
 * before it): a report over all time still needs bounded memory. */
#define HISTORY_DAYS_MAX	366

const char *
flaky_trend_name(int t)
{
	switch (t) {
	case FLAKY_TREND_WORSE: return "worse";
	case FLAKY_TREND_BETTER: return "better";
	case FLAKY_TREND_NEW: return "new";
	default: return "same";
	}
}

/* Failed and total runs, with their Wilson interval. */
int
flaky_trend(int64_t k, int64_t n, int64_t pk, int64_t pn)
{
	double	 lo, hi, plo, phi;

	if (n == 0)
		return FLAKY_TREND_SAME;
	if (pn == 0)
		return k > 0 ? FLAKY_TREND_NEW : FLAKY_TREND_SAME;
	flaky_wilson(k, n, FLAKY_Z95, &lo, &hi);
	flaky_wilson(pk, pn, FLAKY_Z95, &plo, &phi);
	if (lo > phi)
		return pk == 0 ? FLAKY_TREND_NEW : FLAKY_TREND_WORSE;
	if (hi < plo)
		return FLAKY_TREND_BETTER;
	return FLAKY_TREND_SAME;
}

/* The binomial log-likelihood of k failures in n at its own rate. */
static double
loglik(int64_t k, int64_t n)
{
	double	 p;

	if (n == 0 || k == 0 || k == n)
		return 0;
	p = (double)k / (double)n;
	return (double)k * log(p) + (double)(n - k) * log(1 - p);
}

/* The one split of the series that best explains it as two rates, the
 * later higher (maximum likelihood), kept only when the two 95% Wilson
 * intervals do not overlap and the later part holds at least two failures.
 * Returns the first day of the later part that has runs, or -1. */
long
flaky_change_point(const uint32_t *runs, const uint32_t *fails, size_t nd)
{
	int64_t	 n = 0, k = 0, bn = 0, bk = 0, an, ak;
	double	 all, g, best_g = 0, lo, hi, plo, phi;
	long	 best = -1;

	for (size_t i = 0; i < nd; i++) {
		n += runs[i];
		k += fails[i];
	}
	if (k == 0 || n == 0)
		return -1;
	all = loglik(k, n);
	for (size_t i = 0; i + 1 < nd; i++) {
		bn += runs[i];
		bk += fails[i];
		/* Split only just before a day with runs. */
		if (runs[i + 1] == 0 || bn == 0)
			continue;
		an = n - bn;
		ak = k - bk;
		if (ak * bn <= bk * an)
			continue;	/* the later part is not worse */
		g = loglik(bk, bn) + loglik(ak, an) - all;
		if (g > best_g) {
			best_g = g;
			best = (long)i + 1;
		}
	}
	if (best < 0)
		return -1;
	bn = bk = 0;
	for (long i = 0; i < best; i++) {
		bn += runs[i];
		bk += fails[i];
	}
	/* One failure is never a change, however clean the days before. */
	if (k - bk < 2)
		return -1;
	flaky_wilson(bk, bn, FLAKY_Z95, &plo, &phi);
	flaky_wilson(k - bk, n - bn, FLAKY_Z95, &lo, &hi);
	return lo > phi ? best : -1;
}

void
flaky_history_free(struct flaky_history *h)
{
	if (h == NULL)
		return;
	for (size_t i = 0; i < h->nnames; i++)
		free(h->names[i]);
	free(h->names);
	free(h->v);
	free(h->days);
	memset(h, 0, sizeof *h);
}

static int
cmp_row_id(const void *a, const void *b)
{
	const int64_t	*k = a;
	const struct flaky_history_row *r = b;

	return *k < r->test_id ? -1 : *k > r->test_id;
}

const struct flaky_history_row *
flaky_history_find(const struct flaky_history *h, int64_t id)
{
	if (h == NULL || h->n == 0)
		return NULL;
	return bsearch(&id, h->v, h->n, sizeof *h->v, cmp_row_id);
}

/* Every test (of the target) as an empty row, sorted by id. */
static int
history_tests(struct flaky_store *s, const char *target,
    struct flaky_history *h, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	size_t		 cap = 0;
	int		 r, rc;

	if ((r = store_prepare(s, "SELECT t.id, tg.name, t.name FROM tests t "
	    "JOIN targets tg ON tg.id = t.target_id "
	    "WHERE tg.name = ?1 OR ?1 IS NULL ORDER BY t.id", &st, err,
	    errlen)) < 0)
		return r;
	if (target != NULL)
		sql_bind_text(st, 1, target, -1, SQL_STATIC);
	while ((rc = sql_step(st)) == SQL_ROW) {
		struct flaky_history_row *row;

		if (h->n == cap) {
			size_t	 nc = cap ? cap * 2 : 256;
			void	*v = reallocarray(h->v, nc, sizeof *h->v);
			void	*w = v == NULL ? NULL :
			    reallocarray(h->names, nc * 2, sizeof *h->names);

			if (v != NULL)
				h->v = v;
			if (w == NULL) {
				r = -ENOMEM;
				goto out;
			}
			h->names = w;
			cap = nc;
		}
		row = &h->v[h->n];
		memset(row, 0, sizeof *row);
		row->test_id = sql_column_int64(st, 0);
		row->change_day = -1;
		h->names[h->nnames] = strdup((const char *)
		    sql_column_text(st, 1));
		h->names[h->nnames + 1] = strdup((const char *)
		    sql_column_text(st, 2));
		h->nnames += 2;
		if (h->names[h->nnames - 1] == NULL ||
		    h->names[h->nnames - 2] == NULL) {
			r = -ENOMEM;
			goto out;
		}
		row->target = h->names[h->nnames - 2];
		row->test = h->names[h->nnames - 1];
		h->n++;
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading the tests");
out:
	sql_finalize(st);
	return r;
}

/* Add a day's failed runs to a row: marked as having failed in either
 * window, budget counted in the window itself. */
static void
budget_add(struct flaky_history *h, int64_t id, int64_t day, int64_t n,
    int64_t wall, int64_t cpu)
{
	struct flaky_history_row *row;

	row = bsearch(&id, h->v, h->n, sizeof *h->v, cmp_row_id);
	if (row == NULL)
		return;		/* another target */
	row->trend = -1;	/* marked */
	if (day >= h->first_day && day < h->first_day + h->ndays) {
		row->budget_runs += n;
		row->budget_wall_us += wall;
		row->budget_cpu_us += cpu;
	}
}

/* budget_add as store_box_budget calls it. */
static void
budget_add_fn(void *arg, int64_t id, int64_t day, int64_t n, int64_t wall,
    int64_t cpu)
{
	budget_add(arg, id, day, n, wall, cpu);
}

/* The budget of the window, and which tests failed in it or in the one
 * before, from the budget table: every run adds its share there when it
 * is stored (schema/0015-budget15.sql), a few rows a day where the
 * window's failed results and runs were read and joined in memory. The
 * table is of every box: for one box (report --box) the budget is read
 * from that box's runs and failed results, as its rates are. Tests that
 * never failed in both windows have nothing to tell (trend same, no
 * change point, no budget) and are not marked. */
static int
history_budget(struct flaky_store *s, const struct flaky_query *q,
    struct flaky_history *h, char *err, size_t errlen)
{
	struct sql_stmt	*st = NULL;
	int64_t		 from = h->first_day - h->ndays;
	int64_t		 to = h->first_day + h->ndays;
	int		 r, rc;

	if (q->box != NULL) {
		if ((r = store_box_budget(s, q, from, to, budget_add_fn, h,
		    err, errlen)) < 0)
			return r;
		goto quarantine;
	}
	if ((r = store_prepare(s, "SELECT day, test_id, runs, wall_us, cpu_us "
	    "FROM budget WHERE day >= ?1 AND day < ?2", &st, err,
	    errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, from);
	sql_bind_int64(st, 2, to);
	while ((rc = sql_step(st)) == SQL_ROW)
		budget_add(h, sql_column_int64(st, 1),
		    sql_column_int64(st, 0), sql_column_int64(st, 2),
		    sql_column_int64(st, 3), sql_column_int64(st, 4));
	if (rc != SQL_DONE) {
		r = store_sql_error(s, err, errlen, "reading the budget");
		goto out;
	}
	sql_finalize(st);
	st = NULL;
quarantine:
	if ((r = store_prepare(s, "SELECT test_id FROM quarantine", &st, err,
	    errlen)) < 0)
		goto out;
	while ((rc = sql_step(st)) == SQL_ROW) {
		int64_t	 id = sql_column_int64(st, 0);
		struct flaky_history_row *row;

		row = bsearch(&id, h->v, h->n, sizeof *h->v, cmp_row_id);
		if (row != NULL)
			row->quarantined = 1;
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading the quarantine");
out:
	sql_finalize(st);
	return r;
}

/* The days of both windows of every kept test in one statement (a
 * statement per test was a round trip each on a server), by test id as
 * h->v is sorted: one seek per day and test (the rollups are keyed by
 * day, test). */
static const char history_sql[] =
    "WITH RECURSIVE d(x) AS (SELECT ?2 UNION ALL SELECT x + 1 FROM d "
    "WHERE x + 1 < ?3), k(id) AS (SELECT value FROM json_each(?1)) "
    "SELECT r.test_id, r.day, r.runs, r.failures FROM k "
    "CROSS JOIN d ON true CROSS JOIN rollups r "
    "ON r.day = d.x AND r.test_id = k.id ORDER BY r.test_id, r.day";

/* The same of one box's runs (report --box), from box_rollups: ?4 the
 * box, ?5 '' when it is the store's own (its runs of before boxes were
 * recorded are stored as ''), else the box again. */
static const char history_box_sql[] =
    "WITH RECURSIVE d(x) AS (SELECT ?2 UNION ALL SELECT x + 1 FROM d "
    "WHERE x + 1 < ?3), k(id) AS (SELECT value FROM json_each(?1)) "
    "SELECT r.test_id, r.day, sum(r.runs), sum(r.failures) FROM k "
    "CROSS JOIN d ON true CROSS JOIN box_rollups r "
    "ON r.day = d.x AND r.test_id = k.id WHERE r.box IN (?4, ?5) "
    "GROUP BY r.test_id, r.day ORDER BY r.test_id, r.day";

/* A row's series, counts, trend and change point from its days of both
 * windows, oldest first: runs in chain[2 nd], failures in chain + 2 nd. */
static void
history_row(struct flaky_history *h, struct flaky_history_row *row,
    const uint32_t *chain)
{
	int64_t	 nd = h->ndays;
	long	 cp;

	memcpy(row->day_runs, chain + nd, nd * sizeof *chain);
	memcpy(row->day_failures, chain + 3 * nd, nd * sizeof *chain);
	for (int64_t d = 0; d < nd; d++) {
		row->prev_runs += chain[d];
		row->prev_failures += chain[2 * nd + d];
		row->runs += chain[nd + d];
		row->failures += chain[3 * nd + d];
	}
	row->trend = flaky_trend(row->failures, row->runs,
	    row->prev_failures, row->prev_runs);
	row->change_day = -1;
	if (row->failures > 0 &&
	    (cp = flaky_change_point(chain, chain + 2 * nd,
	    (size_t)(2 * nd))) >= 0)
		row->change_day = h->first_day - nd + cp;
}

/* Every kept row's days, read in one statement. */
static int
history_days(struct flaky_store *s, const struct flaky_query *q,
    struct flaky_history *h, uint32_t *chain, char *err, size_t errlen)
{
	struct sql_stmt	*st = NULL;
	int64_t		 nd = h->ndays, from = h->first_day - nd;
	char		*list;
	size_t		 i = 0;
	int		 rc, r;

	if ((list = store_ids_json_of(h->v, h->n, sizeof *h->v,
	    offsetof(struct flaky_history_row, test_id))) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	if ((r = store_prepare(s, q->box != NULL ? history_box_sql :
	    history_sql, &st, err, errlen)) < 0) {
		free(list);
		return r;
	}
	sql_bind_text(st, 1, list, -1, SQL_STATIC);
	sql_bind_int64(st, 2, from);
	sql_bind_int64(st, 3, h->first_day + nd);
	if (q->box != NULL) {
		sql_bind_text(st, 4, q->box, -1, SQL_STATIC);
		sql_bind_text(st, 5, strcmp(q->box, flaky_store_box(s)) == 0 ?
		    "" : q->box, -1, SQL_STATIC);
	}
	memset(chain, 0, 4 * (size_t)nd * sizeof *chain);
	while ((rc = sql_step(st)) == SQL_ROW) {
		int64_t	 id = sql_column_int64(st, 0);
		int64_t	 d = sql_column_int64(st, 1) - from;

		/* the rows before this one's test are complete */
		for (; i < h->n && h->v[i].test_id < id; i++) {
			history_row(h, &h->v[i], chain);
			memset(chain, 0, 4 * (size_t)nd * sizeof *chain);
		}
		if (i == h->n || h->v[i].test_id != id || d < 0 ||
		    d >= 2 * nd)
			continue;
		chain[d] = (uint32_t)sql_column_int64(st, 2);
		chain[2 * nd + d] = (uint32_t)sql_column_int64(st, 3);
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading the rollups");
	else
		for (; i < h->n; i++) {
			history_row(h, &h->v[i], chain);
			memset(chain, 0, 4 * (size_t)nd * sizeof *chain);
		}
	sql_finalize(st);
	free(list);
	return r;
}

int
flaky_store_history(struct flaky_store *s, const struct flaky_query *q,
    struct flaky_history *h, char *err, size_t errlen)
{
	uint32_t	*chain = NULL;
	int64_t		 from, to, nd;
	size_t		 keep = 0;
	int		 r;

	memset(h, 0, sizeof *h);
	to = q->until_ms == INT64_MAX ? flaky_now_ms() / FLAKY_DAY_MS + 1 :
	    q->until_ms > 0 ? (q->until_ms - 1) / FLAKY_DAY_MS + 1 : 0;
	from = q->since_ms == INT64_MIN ? to - HISTORY_DAYS_MAX :
	    q->since_ms >= 0 ? q->since_ms / FLAKY_DAY_MS :
	    -((-q->since_ms + FLAKY_DAY_MS - 1) / FLAKY_DAY_MS);
	if (to - from > HISTORY_DAYS_MAX)
		from = to - HISTORY_DAYS_MAX;
	if (to <= from)
		from = to - 1;
	nd = to - from;
	h->first_day = from;
	h->ndays = nd;
	if ((r = store_scalar(s, "SELECT value FROM store_meta WHERE key = "
	    "'pruned_before_ms'", 0, 0, &h->pruned_before_ms, err,
	    errlen)) < 0)
		goto fail;
	if ((r = history_tests(s, q->target, h, err, errlen)) < 0 ||
	    (r = history_budget(s, q, h, err, errlen)) < 0)
		goto fail;
	for (size_t i = 0; i < h->n; i++)
		if (h->v[i].trend == -1 || h->v[i].quarantined)
			h->v[keep++] = h->v[i];
	h->n = keep;
	if (h->n == 0)
		return 0;
	/* The window's days for every row kept, then a scratch series of
	 * both windows. */
	h->days = calloc(h->n * 2 * (size_t)nd, sizeof *h->days);
	chain = calloc(4 * (size_t)nd, sizeof *chain);
	if (h->days == NULL || chain == NULL) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < h->n; i++) {
		h->v[i].day_runs = h->days + i * 2 * (size_t)nd;
		h->v[i].day_failures = h->v[i].day_runs + nd;
	}
	if ((r = history_days(s, q, h, chain, err, errlen)) < 0)
		goto fail;
	free(chain);
	return 0;
fail:
	free(chain);
	flaky_history_free(h);
	return r;
}

int
flaky_store_find_test(struct flaky_store *s, const char *target,
    const char *test, int64_t *ret_id, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r, rc, n = 0;

	/* Targets first: each is one seek in tests' (target_id, name). */
	if ((r = store_prepare(s, "SELECT t.id FROM targets tg "
	    "CROSS JOIN tests t ON t.target_id = tg.id AND t.name = ?1 WHERE "
	    "tg.name = ?2 OR ?2 IS NULL LIMIT 2", &st, err, errlen)) < 0)
		return r;
	sql_bind_text(st, 1, test, -1, SQL_STATIC);
	if (target != NULL)
		sql_bind_text(st, 2, target, -1, SQL_STATIC);
	while ((rc = sql_step(st)) == SQL_ROW) {
		if (n++ == 0)
			*ret_id = sql_column_int64(st, 0);
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "finding the test");
	else if (n == 0)
		r = flaky_error(err, errlen, ENOENT, "no test named '%s'%s%s",
		    test, target ? " in target " : "", target ? target : "");
	else if (n > 1)
		r = flaky_error(err, errlen, EEXIST, "test '%s' is in more "
		    "than one target: name one with --target", test);
	sql_finalize(st);
	return r;
}

int
flaky_store_test_days(struct flaky_store *s, int64_t test_id,
    int64_t first_day, int64_t ndays, uint32_t *runs, uint32_t *failures,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r, rc;

	memset(runs, 0, (size_t)ndays * sizeof *runs);
	memset(failures, 0, (size_t)ndays * sizeof *failures);
	/* The rollups are keyed by (day, test_id): one seek per day, not a
	 * scan of every test's rows of the range. */
	if ((r = store_prepare(s, "WITH RECURSIVE d(x) AS (SELECT ?2 UNION ALL "
	    "SELECT x + 1 FROM d WHERE x + 1 < ?3) SELECT r.day, r.runs, "
	    "r.failures FROM d JOIN rollups r ON r.day = d.x AND "
	    "r.test_id = ?1", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, test_id);
	sql_bind_int64(st, 2, first_day);
	sql_bind_int64(st, 3, first_day + ndays);
	while ((rc = sql_step(st)) == SQL_ROW) {
		int64_t	 d = sql_column_int64(st, 0) - first_day;

		runs[d] = (uint32_t)sql_column_int64(st, 1);
		failures[d] = (uint32_t)sql_column_int64(st, 2);
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading the rollups");
	sql_finalize(st);
	return r;
}

int
flaky_store_run_by_hash(struct flaky_store *s, const char *hash,
    int64_t *ret_id, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r, rc;

	if ((r = store_prepare(s, "SELECT id FROM runs WHERE content_hash = ?1",
	    &st, err, errlen)) < 0)
		return r;
	sql_bind_text(st, 1, hash, -1, SQL_STATIC);
	rc = sql_step(st);
	if (rc == SQL_ROW) {
		*ret_id = sql_column_int64(st, 0);
		r = 1;
	} else if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "looking up the hash");
	sql_finalize(st);
	return r;
}

int
flaky_store_add_attempts(struct flaky_store *s, int64_t run_id,
    const struct flaky_results *res, const struct flaky_junit_extra *x,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	if (x == NULL || x->nattempts == 0)
		return 0;
	if ((r = store_prepare(s, "INSERT INTO attempts (run_id, position, "
	    "attempt, outcome, message) VALUES (?1, ?2, ?3, ?4, ?5)", &st,
	    err, errlen)) < 0)
		return r;
	for (size_t i = 0; i < x->nattempts; i++) {
		const struct flaky_attempt *a = &x->attempts[i];

		if (a->result >= res->n)
			continue;
		sql_reset(st);
		sql_bind_int64(st, 1, run_id);
		sql_bind_int64(st, 2, res->v[a->result].position);
		sql_bind_int(st, 3, a->attempt);
		sql_bind_int(st, 4, a->outcome);
		if (a->message != NULL)
			sql_bind_text(st, 5, a->message, -1,
			    SQL_STATIC);
		else
			sql_bind_null(st, 5);
		if (sql_step(st) != SQL_DONE) {
			r = store_sql_error(s, err, errlen,
			    "adding an attempt");
			break;
		}
	}
	sql_finalize(st);
	return r;
}
