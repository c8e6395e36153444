/* Reading the evidence back: per-test statistics over a window, from the
 * daily rollups (days) or the raw results (one analyze call's runs). */
#include "buildconf.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

#define DAY_MS	86400000LL

void
flaky_test_rows_free(struct flaky_test_row *v, size_t n)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		free(v[i].target);
		free(v[i].test);
		free(v[i].top_message);
	}
	free(v);
}

unsigned
flaky_query_kinds(const struct flaky_query *q)
{
	unsigned k = q->kinds & (FLAKY_KIND_MASK(FLAKY_KIND_SUITE) |
	    FLAKY_KIND_MASK(FLAKY_KIND_ALONE) |
	    FLAKY_KIND_MASK(FLAKY_KIND_INGESTED));

	return k == 0 ? FLAKY_KINDS_DEFAULT : k;
}

/* The SQL condition on the runs (alias ru) a query counts: complete runs of
 * the query's kinds. Runs alone by themselves get a plain comparison, so
 * that the runs_alone index serves them. */
static const char *
kinds_sql(const struct flaky_query *q)
{
	switch (flaky_query_kinds(q)) {
	case FLAKY_KIND_MASK(FLAKY_KIND_ALONE):
		return "ru.kind = 'alone' AND ru.incomplete IS NULL";
	case FLAKY_KIND_MASK(FLAKY_KIND_SUITE):
		return "ru.kind = 'suite' AND ru.incomplete IS NULL";
	case FLAKY_KIND_MASK(FLAKY_KIND_INGESTED):
		return "ru.kind = 'ingested' AND ru.incomplete IS NULL";
	case FLAKY_KINDS_DEFAULT:
		return "ru.kind != 'alone' AND ru.incomplete IS NULL";
	case FLAKY_KIND_MASK(FLAKY_KIND_SUITE) |
	    FLAKY_KIND_MASK(FLAKY_KIND_ALONE):
		return "ru.kind != 'ingested' AND ru.incomplete IS NULL";
	case FLAKY_KIND_MASK(FLAKY_KIND_ALONE) |
	    FLAKY_KIND_MASK(FLAKY_KIND_INGESTED):
		return "ru.kind != 'suite' AND ru.incomplete IS NULL";
	default:
		return "ru.incomplete IS NULL";
	}
}

const char *
store_runs_sql(struct flaky_store *s, const struct flaky_query *q, char *buf,
    size_t len)
{
	char	 box[2 * FLAKY_BOX_MAX + 64];

	store_box_sql(s, q, box, sizeof box);
	snprintf(buf, len, "%s%s", kinds_sql(q), box);
	return buf;
}

void
store_window_days(const struct flaky_query *q, int64_t *from, int64_t *to)
{
	*from = q->since_ms == INT64_MIN ? INT64_MIN / 2 :
	    (q->since_ms >= 0 ? q->since_ms / DAY_MS :
	    -((-q->since_ms + DAY_MS - 1) / DAY_MS));
	*to = q->until_ms == INT64_MAX ? INT64_MAX / 2 :
	    (q->until_ms > 0 ? (q->until_ms - 1) / DAY_MS + 1 : 0);
}

struct rows {
	struct flaky_test_row	*v;
	size_t			 n, cap;
};

static struct flaky_test_row *
rows_add(struct rows *r)
{
	if (r->n == r->cap) {
		size_t	 cap = r->cap ? r->cap * 2 : 256;
		void	*p = realloc(r->v, cap * sizeof *r->v);

		if (p == NULL)
			return NULL;
		r->v = p;
		r->cap = cap;
	}
	memset(&r->v[r->n], 0, sizeof r->v[r->n]);
	r->v[r->n].median_ms_pass = r->v[r->n].median_ms_fail = NAN;
	r->v[r->n].p90_ms_pass = r->v[r->n].p90_ms_fail = NAN;
	return &r->v[r->n++];
}

static char *
col_strdup(struct sql_stmt *st, int i)
{
	const unsigned char *t = sql_column_text(st, i);

	return strdup(t ? (const char *)t : "");
}

/* The most common failure of each failing test of rows in the window and
 * one real message of that kind (its newest), in one statement for all of
 * them: a statement per test was most of a report's time on a server, a
 * round trip each. The window's runs are first turned into a range of run
 * ids; when no run outside the window has an id inside that range (the
 * usual case: ids grow with time), the failed results are counted from
 * the index alone, without looking each one's run up. A tie goes to the
 * lower message id, none (NULL) first, on either backend. */
#define TOP_SQL \
	"SELECT g.test_id, g.message_id, g.c, (SELECT m.message " \
	"FROM results m WHERE m.test_id = g.test_id " \
	"AND m.message_id = g.message_id AND m.outcome IN (1, 2) " \
	"AND m.run_id <= g.mr ORDER BY m.run_id DESC LIMIT 1) " \
	"FROM (SELECT r.test_id, r.message_id, count(*) AS c, " \
	"max(r.run_id) AS mr, row_number() OVER (PARTITION BY r.test_id " \
	"ORDER BY count(*) DESC, r.message_id IS NOT NULL, r.message_id) " \
	"AS k FROM results r %s " \
	"WHERE r.test_id IN (SELECT value FROM json_each(?6)) " \
	"AND r.outcome IN (1, 2) AND r.run_id BETWEEN ?4 AND ?5 %s " \
	"GROUP BY r.test_id, r.message_id) AS g " \
	"WHERE g.k = 1 ORDER BY g.test_id"

/* The same from failure_rollups (?2, ?3: the window's days), when they
 * hold the window: a few rows a day instead of every failed result. */
#define TOP_ROLLUP_SQL \
	"SELECT g.test_id, g.message_id, g.c, (SELECT m.message " \
	"FROM results m WHERE m.test_id = g.test_id " \
	"AND m.message_id = g.message_id AND m.outcome IN (1, 2) " \
	"AND m.run_id <= g.mr ORDER BY m.run_id DESC LIMIT 1) " \
	"FROM (SELECT f.test_id, nullif(f.message_id, 0) AS message_id, " \
	"sum(f.failures) AS c, max(f.last_run_id) AS mr, " \
	"row_number() OVER (PARTITION BY f.test_id " \
	"ORDER BY sum(f.failures) DESC, f.message_id <> 0, f.message_id) " \
	"AS k FROM failure_rollups f " \
	"WHERE f.test_id IN (SELECT value FROM json_each(?6)) " \
	"AND f.counted = 1 AND f.day >= ?2 AND f.day < ?3 " \
	"GROUP BY f.test_id, f.message_id) AS g " \
	"WHERE g.k = 1 ORDER BY g.test_id"

int
store_run_range(struct flaky_store *s, const struct flaky_query *q,
    const char *runs, int64_t *lo, int64_t *hi, int *exact)
{
	struct sql_stmt	*st;
	int64_t		 n = 0, m = -1;
	int		 rc;
	char		 sql[1024];

	*lo = 1;
	*hi = 0;
	*exact = 0;
	snprintf(sql, sizeof sql, "SELECT min(id), max(id), count(*) FROM "
	    "runs ru WHERE started_ms >= ?1 AND started_ms < ?2 AND id "
	    "BETWEEN ?3 AND ?4 AND %s", runs);
	if (sql_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQL_OK)
		return -EIO;
	sql_bind_int64(st, 1, q->since_ms);
	sql_bind_int64(st, 2, q->until_ms);
	sql_bind_int64(st, 3, q->first_run_id > 0 ? q->first_run_id : 0);
	sql_bind_int64(st, 4, q->last_run_id > 0 ? q->last_run_id :
	    INT64_MAX);
	if ((rc = sql_step(st)) == SQL_ROW &&
	    sql_column_type(st, 0) != SQL_NULL) {
		*lo = sql_column_int64(st, 0);
		*hi = sql_column_int64(st, 1);
		n = sql_column_int64(st, 2);
	}
	sql_finalize(st);
	if (rc != SQL_ROW)
		return -EIO;
	if (*lo > *hi)
		return 0;
	if (sql_prepare_v2(store_db(s), "SELECT count(*) FROM runs "
	    "WHERE id BETWEEN ?1 AND ?2", -1, &st, NULL) != SQL_OK)
		return -EIO;
	sql_bind_int64(st, 1, *lo);
	sql_bind_int64(st, 2, *hi);
	if (sql_step(st) == SQL_ROW)
		m = sql_column_int64(st, 0);
	sql_finalize(st);
	/* exact: every run in [lo, hi] is one the query counts */
	*exact = m == n;
	return 0;
}

/* top_message and top_message_count of the rows (sorted by test id) that
 * have failures. */
static int
top_messages(struct flaky_store *s, const struct flaky_query *q,
    struct rows *rows)
{
	struct sql_stmt	*st = NULL;
	int64_t		*ids = NULL, lo, hi;
	size_t		 n = 0, i = 0;
	char		*sql = NULL, *list = NULL, runs[320], cond[400];
	int		 exact, rolled, rc, r;

	if ((ids = calloc(rows->n + 1, sizeof *ids)) == NULL)
		return -ENOMEM;
	for (size_t k = 0; k < rows->n; k++)
		if (rows->v[k].failures > 0)
			ids[n++] = rows->v[k].test_id;
	if (n == 0) {
		free(ids);
		return 0;
	}
	if ((rolled = store_failure_rollups_hold(s, q, 0))) {
		store_window_days(q, &lo, &hi);
		exact = 1;
	} else {
		store_runs_sql(s, q, runs, sizeof runs);
		if ((r = store_run_range(s, q, runs, &lo, &hi, &exact)) < 0 ||
		    lo > hi) {
			free(ids);
			return r;
		}
		snprintf(cond, sizeof cond, "AND ru.started_ms >= ?2 "
		    "AND ru.started_ms < ?3 AND %s", runs);
	}
	r = -ENOMEM;
	if ((list = store_ids_json(ids, n)) == NULL || (rolled ?
	    (sql = strdup(TOP_ROLLUP_SQL)) == NULL :
	    asprintf(&sql, TOP_SQL, exact ? "" :
	    "JOIN runs ru ON ru.id = r.run_id", exact ? "" : cond) < 0)) {
		sql = NULL;
		goto out;
	}
	r = -EIO;
	if (sql_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQL_OK)
		goto out;
	if (rolled) {
		sql_bind_int64(st, 2, lo);
		sql_bind_int64(st, 3, hi);
	} else if (!exact) {
		sql_bind_int64(st, 2, q->since_ms);
		sql_bind_int64(st, 3, q->until_ms);
	}
	if (!rolled) {
		sql_bind_int64(st, 4, lo);
		sql_bind_int64(st, 5, hi);
	}
	sql_bind_text(st, 6, list, -1, SQL_STATIC);
	r = 0;
	while (r == 0 && (rc = sql_step(st)) == SQL_ROW) {
		int64_t	 id = sql_column_int64(st, 0);
		const unsigned char *text = sql_column_text(st, 3);

		while (i < rows->n && rows->v[i].test_id < id)
			i++;
		if (i == rows->n || rows->v[i].test_id != id)
			continue;
		rows->v[i].top_message_count = sql_column_int64(st, 2);
		if (text != NULL && sql_column_type(st, 1) != SQL_NULL &&
		    (rows->v[i].top_message = strdup((const char *)text)) ==
		    NULL)
			r = -ENOMEM;
	}
	if (r == 0 && rc != SQL_DONE)
		r = -EIO;
out:
	sql_finalize(st);
	free(sql);
	free(list);
	free(ids);
	return r;
}

/* A test's quantiles and counts of known durations from its histograms. */
static void
hist_finish(struct flaky_test_row *row, const uint64_t *ph,
    const uint64_t *fh)
{
	row->pass_n = row->fail_n = 0;
	for (int i = 0; i < FLAKY_HIST_BUCKETS; i++) {
		row->pass_n += (int64_t)ph[i];
		row->fail_n += (int64_t)fh[i];
	}
	row->median_ms_pass = flaky_hist_quantile(ph, .5);
	row->p90_ms_pass = flaky_hist_quantile(ph, .9);
	row->median_ms_fail = flaky_hist_quantile(fh, .5);
	row->p90_ms_fail = flaky_hist_quantile(fh, .9);
}

/* The rollup rows of a window of days [?1, ?2) and a target (?3, NULL:
 * all), by test. */
const char store_sql_test_stats_rollups[] =
    "SELECT ru.test_id, t.name, tg.name, ru.day, ru.runs, "
    "ru.failures, ru.skips, ru.pass_hist, ru.fail_hist "
    "FROM rollups ru JOIN tests t ON t.id = ru.test_id "
    "JOIN targets tg ON tg.id = t.target_id "
    "WHERE ru.day >= ?1 AND ru.day < ?2 "
    "AND (tg.name = ?3 OR ?3 IS NULL) "
    "ORDER BY ru.test_id, ru.day";

/* From the rollups: one row per (test, day), folded per test. */
static int
stats_rollups(struct flaky_store *s, const struct flaky_query *q,
    struct rows *rows, char *err, size_t errlen)
{
	uint64_t	 ph[FLAKY_HIST_BUCKETS], fh[FLAKY_HIST_BUCKETS];
	struct sql_stmt	*st = NULL;
	struct flaky_test_row *row = NULL;
	int64_t		 from, to;
	int		 rc, r = 0;

	store_window_days(q, &from, &to);
	if (sql_prepare_v2(store_db(s), store_sql_test_stats_rollups, -1,
	    &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "reading the rollups");
	sql_bind_int64(st, 1, from);
	sql_bind_int64(st, 2, to);
	if (q->target != NULL)
		sql_bind_text(st, 3, q->target, -1, SQL_STATIC);
	while ((rc = sql_step(st)) == SQL_ROW) {
		int64_t	 tid = sql_column_int64(st, 0);
		int64_t	 day = sql_column_int64(st, 3);

		if (row == NULL || row->test_id != tid) {
			if (row != NULL)
				hist_finish(row, ph, fh);
			memset(ph, 0, sizeof ph);
			memset(fh, 0, sizeof fh);
			if ((row = rows_add(rows)) == NULL) {
				r = -ENOMEM;
				goto out;
			}
			row->test_id = tid;
			row->test = col_strdup(st, 1);
			row->target = col_strdup(st, 2);
			if (row->test == NULL || row->target == NULL) {
				r = -ENOMEM;
				goto out;
			}
			row->first_ms = day * DAY_MS;
		}
		row->last_ms = day * DAY_MS;
		row->runs += sql_column_int64(st, 4);
		row->failures += sql_column_int64(st, 5);
		row->skips += sql_column_int64(st, 6);
		store_hist_merge_col(st, 7, ph);
		store_hist_merge_col(st, 8, fh);
	}
	if (rc != SQL_DONE) {
		r = store_sql_error(s, err, errlen, "reading the rollups");
		goto out;
	}
	if (row != NULL)
		hist_finish(row, ph, fh);
out:
	sql_finalize(st);
	return r;
}

struct durs {
	int64_t	*v;
	size_t	 n, cap;
};

static int
durs_add(struct durs *d, int64_t us)
{
	if (d->n == d->cap) {
		size_t	 cap = d->cap ? d->cap * 2 : 16;
		void	*p = realloc(d->v, cap * sizeof *d->v);

		if (p == NULL)
			return -ENOMEM;
		d->v = p;
		d->cap = cap;
	}
	d->v[d->n++] = us;
	return 0;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t	 x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile by the nearest-rank rule, in ms; NAN when empty. */
static double
quantile(struct durs *d, double q)
{
	size_t	 rank;

	if (d->n == 0)
		return NAN;
	rank = (size_t)ceil(q * (double)d->n);
	if (rank == 0)
		rank = 1;
	return (double)d->v[rank - 1] / 1000.0;
}

static int
cmp_test_id(const void *a, const void *b)
{
	const struct flaky_test_row *x = a, *y = b;

	return x->test_id < y->test_id ? -1 : x->test_id > y->test_id;
}

/* From the raw results of a range of runs (one analyze call). */
static int
stats_raw(struct flaky_store *s, const struct flaky_query *q,
    struct rows *rows, char *err, size_t errlen)
{
	struct sql_stmt	*st = NULL;
	struct durs	*pass = NULL, *fail = NULL;
	int		 rc, r = 0;
	size_t		 cap = 0;
	char		 sql[1024], runs[320];
	int		 byid;

	/* Only complete runs of the asked kinds: a run with outcomes
	 * missing would make its remaining tests look worse than they are.
	 * The join order is fixed (CROSS JOIN): after ANALYZE the planner
	 * may walk runs alone and search every one's results by the id
	 * range it carried over from the window. A run-id window reads its
	 * results as one range (they are clustered by run), each run by
	 * its id (NOT INDEXED: not through runs_alone by time, as ANALYZE's
	 * figures of a small database suggest); a window by time finds the runs first, not by ids ("+"),
	 * and their results by the primary key. */
	byid = q->first_run_id > 0 || q->last_run_id > 0;
	snprintf(sql, sizeof sql,
	    "SELECT r.test_id, t.name, tg.name, r.outcome, r.duration_us, "
	    "ru.started_ms FROM %s ON r.run_id = ru.id "
	    "CROSS JOIN tests t ON t.id = r.test_id "
	    "CROSS JOIN targets tg ON tg.id = t.target_id "
	    "WHERE %s BETWEEN ?1 AND ?2 AND ru.started_ms >= ?4 "
	    "AND ru.started_ms < ?5 AND (tg.name = ?3 OR ?3 IS NULL) "
	    "AND %s ORDER BY r.test_id",
	    byid ? "results r CROSS JOIN runs ru NOT INDEXED" :
	    "runs ru CROSS JOIN results r", byid ? "r.run_id" : "+ru.id",
	    store_runs_sql(s, q, runs, sizeof runs));
	if (sql_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "reading the results");
	sql_bind_int64(st, 1, q->first_run_id > 0 ? q->first_run_id : 0);
	sql_bind_int64(st, 2, q->last_run_id > 0 ? q->last_run_id :
	    INT64_MAX);
	if (q->target != NULL)
		sql_bind_text(st, 3, q->target, -1, SQL_STATIC);
	sql_bind_int64(st, 4, q->since_ms);
	sql_bind_int64(st, 5, q->until_ms);
	while ((rc = sql_step(st)) == SQL_ROW) {
		struct flaky_test_row *row;
		int64_t	 tid = sql_column_int64(st, 0);
		int	 o = sql_column_int(st, 3);
		int	 known = sql_column_type(st, 4) != SQL_NULL;
		int64_t	 us = sql_column_int64(st, 4);
		int64_t	 t = sql_column_int64(st, 5);
		size_t	 i;

		if (rows->n == 0 || rows->v[rows->n - 1].test_id != tid) {
			if ((row = rows_add(rows)) == NULL) {
				r = -ENOMEM;
				goto out;
			}
			row->test_id = tid;
			row->test = col_strdup(st, 1);
			row->target = col_strdup(st, 2);
			row->first_ms = t;
			if (rows->n > cap) {
				size_t	 nc = rows->cap;
				void	*p1 = realloc(pass, nc * sizeof *pass);
				void	*p2;

				if (p1 == NULL) {
					r = -ENOMEM;
					goto out;
				}
				pass = p1;
				if ((p2 = realloc(fail, nc * sizeof *fail)) ==
				    NULL) {
					r = -ENOMEM;
					goto out;
				}
				fail = p2;
				memset(pass + cap, 0,
				    (nc - cap) * sizeof *pass);
				memset(fail + cap, 0,
				    (nc - cap) * sizeof *fail);
				cap = nc;
			}
			if (row->test == NULL || row->target == NULL) {
				r = -ENOMEM;
				goto out;
			}
		}
		i = rows->n - 1;
		row = &rows->v[i];
		if (t < row->first_ms)
			row->first_ms = t;
		if (t > row->last_ms)
			row->last_ms = t;
		if (FLAKY_FAILED(o)) {
			row->runs++;
			row->failures++;
			if (known && durs_add(&fail[i], us) < 0) {
				r = -ENOMEM;
				goto out;
			}
		} else if (o == FLAKY_PASS || o == FLAKY_XPASS) {
			row->runs++;
			if (known && durs_add(&pass[i], us) < 0) {
				r = -ENOMEM;
				goto out;
			}
		} else
			row->skips++;
	}
	if (rc != SQL_DONE) {
		r = store_sql_error(s, err, errlen, "reading the results");
		goto out;
	}
	for (size_t i = 0; i < rows->n; i++) {
		struct flaky_test_row *row = &rows->v[i];

		if (pass[i].n > 1)
			qsort(pass[i].v, pass[i].n, sizeof *pass[i].v, cmp_i64);
		if (fail[i].n > 1)
			qsort(fail[i].v, fail[i].n, sizeof *fail[i].v, cmp_i64);
		row->pass_n = (int64_t)pass[i].n;
		row->fail_n = (int64_t)fail[i].n;
		row->median_ms_pass = quantile(&pass[i], .5);
		row->p90_ms_pass = quantile(&pass[i], .9);
		row->median_ms_fail = quantile(&fail[i], .5);
		row->p90_ms_fail = quantile(&fail[i], .9);
	}
out:
	for (size_t i = 0; i < cap; i++) {
		free(pass[i].v);
		free(fail[i].v);
	}
	free(pass);
	free(fail);
	sql_finalize(st);
	return r;
}

/* The verdict alone of each row's test (rows sorted by test id). */
static int
add_alone(struct flaky_store *s, const struct flaky_query *q,
    struct rows *rows, char *err, size_t errlen)
{
	struct flaky_alone_row *v = NULL;
	size_t		 n = 0, j = 0;
	int		 r;

	if (rows->n == 0)
		return 0;
	if ((r = flaky_store_alone_stats(s, q, &v, &n, err, errlen)) < 0)
		return r;
	for (size_t i = 0; i < rows->n && j < n; i++) {
		while (j < n && v[j].test_id < rows->v[i].test_id)
			j++;
		if (j < n && v[j].test_id == rows->v[i].test_id) {
			rows->v[i].alone_runs = v[j].runs;
			rows->v[i].alone_failures = v[j].failures;
		}
	}
	flaky_alone_rows_free(v, n);
	return 0;
}

void
flaky_alone_rows_free(struct flaky_alone_row *v, size_t n)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		free(v[i].target);
		free(v[i].test);
	}
	free(v);
}

/* ?1 to ?5 of a windowed statement: since, until, first and last run id,
 * and the target (NULL: every target). */
static void
bind_window(struct sql_stmt *st, const struct flaky_query *q)
{
	sql_bind_int64(st, 1, q->since_ms);
	sql_bind_int64(st, 2, q->until_ms);
	sql_bind_int64(st, 3, q->first_run_id > 0 ? q->first_run_id : 0);
	sql_bind_int64(st, 4, q->last_run_id > 0 ? q->last_run_id :
	    INT64_MAX);
	if (q->target != NULL)
		sql_bind_text(st, 5, q->target, -1, SQL_STATIC);
}

int
flaky_store_alone_stats(struct flaky_store *s, const struct flaky_query *q,
    struct flaky_alone_row **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_alone_row *v = NULL, *row;
	struct sql_stmt	*st = NULL;
	size_t		 n = 0, cap = 0;
	int		 rc, r = 0;

	*ret = NULL;
	*ret_n = 0;
	/* runs_alone finds the runs (CROSS JOIN: runs first; +ru.id: not
	 * by a range of ids, which the planner would carry over to a scan
	 * of the results); their results are neighbours (the primary key
	 * starts with the run id) */
	if (sql_prepare_v2(store_db(s),
	    "SELECT r.test_id, t.name, tg.name, "
	    "sum(r.outcome IN (0, 1, 2, 5)), sum(r.outcome IN (1, 2)), "
	    "max(ru.started_ms) FROM runs ru "
	    "CROSS JOIN results r ON r.run_id = ru.id "
	    "CROSS JOIN tests t ON t.id = r.test_id "
	    "CROSS JOIN targets tg ON tg.id = t.target_id "
	    "WHERE ru.kind = 'alone' AND ru.incomplete IS NULL "
	    "AND ru.started_ms >= ?1 AND ru.started_ms < ?2 "
	    "AND +ru.id BETWEEN ?3 AND ?4 AND (tg.name = ?5 OR ?5 IS NULL) "
	    "GROUP BY r.test_id, t.name, tg.name ORDER BY r.test_id", -1,
	    &st, NULL) !=
	    SQL_OK)
		return store_sql_error(s, err, errlen, "reading runs alone");
	bind_window(st, q);
	while ((rc = sql_step(st)) == SQL_ROW) {
		if (flaky_array_grow(&v, &cap, n, sizeof *v) < 0) {
			r = -ENOMEM;
			goto out;
		}
		row = &v[n++];
		memset(row, 0, sizeof *row);
		row->test_id = sql_column_int64(st, 0);
		row->test = col_strdup(st, 1);
		row->target = col_strdup(st, 2);
		row->runs = sql_column_int64(st, 3);
		row->failures = sql_column_int64(st, 4);
		row->last_ms = sql_column_int64(st, 5);
		if (row->test == NULL || row->target == NULL) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading runs alone");
out:
	sql_finalize(st);
	if (r < 0) {
		if (r == -ENOMEM)
			flaky_error(err, errlen, ENOMEM, "out of memory");
		flaky_alone_rows_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int
flaky_store_test_stats(struct flaky_store *s, const struct flaky_query *q,
    struct flaky_test_row **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct rows	 rows = { 0 };
	int		 r;

	/* The rollups hold exactly the complete suite and ingested runs,
	 * of every box. */
	if (q->first_run_id > 0 || q->last_run_id > 0 || q->box != NULL ||
	    flaky_query_kinds(q) != FLAKY_KINDS_DEFAULT)
		r = stats_raw(s, q, &rows, err, errlen);
	else
		r = stats_rollups(s, q, &rows, err, errlen);
	if (r < 0)
		goto fail;
	if (rows.n > 1)
		qsort(rows.v, rows.n, sizeof *rows.v, cmp_test_id);
	if ((r = add_alone(s, q, &rows, err, errlen)) < 0)
		goto fail;
	if ((r = top_messages(s, q, &rows)) == -ENOMEM) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto fail;
	}
	if (r < 0) {
		r = store_sql_error(s, err, errlen,
		    "reading failure messages");
		goto fail;
	}
	*ret = rows.v;
	*ret_n = rows.n;
	return 0;
fail:
	flaky_test_rows_free(rows.v, rows.n);
	return r;
}

int
flaky_store_run_counts(struct flaky_store *s, const struct flaky_query *q,
    struct flaky_run_counts *c, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 rc;
	char		 sql[768], box[2 * FLAKY_BOX_MAX + 64];

	unsigned	 kinds = flaky_query_kinds(q);

	memset(c, 0, sizeof *c);
	store_box_sql(s, q, box, sizeof box);
	snprintf(sql, sizeof sql,
	    "SELECT ru.status, count(*), min(ru.started_ms), "
	    "max(ru.started_ms), ru.kind, ru.incomplete IS NOT NULL, "
	    "CASE WHEN ru.perturbation = 'seed:replay' THEN 1 ELSE 0 END "
	    "FROM runs ru JOIN targets tg "
	    "ON tg.id = ru.target_id WHERE ru.started_ms >= ?1 AND "
	    "ru.started_ms < ?2 AND ru.id BETWEEN ?3 AND ?4 AND "
	    "(tg.name = ?5 OR ?5 IS NULL)%s GROUP BY ru.status, ru.kind, "
	    "ru.incomplete IS NOT NULL, "
	    "CASE WHEN ru.perturbation = 'seed:replay' THEN 1 ELSE 0 END", box);
	if (sql_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "counting runs");
	bind_window(st, q);
	c->first_ms = INT64_MAX;
	c->last_ms = INT64_MIN;
	while ((rc = sql_step(st)) == SQL_ROW) {
		const char *status = (const char *)sql_column_text(st, 0);
		int64_t	 n = sql_column_int64(st, 1);
		int64_t	 lo = sql_column_int64(st, 2);
		int64_t	 hi = sql_column_int64(st, 3);
		const char *kn = (const char *)sql_column_text(st, 4);
		int	 kind = FLAKY_KIND_SUITE;

		if (kn != NULL && strcmp(kn, "alone") == 0)
			kind = FLAKY_KIND_ALONE;
		else if (kn != NULL && strcmp(kn, "ingested") == 0)
			kind = FLAKY_KIND_INGESTED;
		if (kind == FLAKY_KIND_ALONE)
			c->alone += n;
		else if (kind == FLAKY_KIND_INGESTED)
			c->ingested += n;
		else
			c->suite += n;
		if (!(kinds & FLAKY_KIND_MASK(kind)))
			continue;
		c->runs += n;
		/* a seed's replay is evidence only, not a run gone wrong */
		if (sql_column_int(st, 6))
			c->replays += n;
		else if (sql_column_int(st, 5))
			c->incomplete += n;
		if (strcmp(status, "done") == 0)
			c->done += n;
		else if (strcmp(status, "timeout") == 0)
			c->timeout += n;
		else if (strcmp(status, "error") == 0)
			c->error += n;
		else if (strcmp(status, "interrupted") == 0)
			c->interrupted += n;
		else if (strcmp(status, "skipped") == 0)
			c->skipped += n;
		else if (strcmp(status, "stopped") == 0)
			c->stopped += n;
		if (lo < c->first_ms)
			c->first_ms = lo;
		if (hi > c->last_ms)
			c->last_ms = hi;
	}
	sql_finalize(st);
	if (rc != SQL_DONE)
		return store_sql_error(s, err, errlen, "counting runs");
	return 0;
}
