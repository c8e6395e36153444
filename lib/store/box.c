/* The box as a dimension (issue 15): the condition that keeps a query to
 * one box's runs, and a test's rate per box ("30% on box-a (9/30), 0% on
 * box-b (0/30)") for the tests a report lists, in one grouped query: from
 * box_rollups for a window of whole days, else from the results. */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

void
store_box_sql(struct flaky_store *s, const struct flaky_query *q, char *buf,
    size_t len)
{
	const char	*local = flaky_store_box(s);

	if (q->box == NULL) {
		snprintf(buf, len, "%s", "");
		return;
	}
	/* only checked names go into the SQL: no quote can be in one */
	if (flaky_box_check(q->box, NULL, 0) < 0 ||
	    flaky_box_check(local, NULL, 0) < 0) {
		snprintf(buf, len, "%s", " AND 0");
		return;
	}
	snprintf(buf, len, " AND coalesce(ru.box, '%s') = '%s'", local,
	    q->box);
}

/* The targets of the window with runs of more than one box come first (a
 * look at the runs only: with one box, no result is read), each with how
 * many of its newest runs hold about ?8 results (20 to 500; ?8 <= 0: all
 * of them); then those runs (runs_by_target), each run's results by the
 * primary key, kept to the listed tests. */
#define BOX_SQL \
	"WITH bt(id, k) AS (SELECT ru.target_id, " \
	"max(20, min(500, ?8 / max(1, avg(ru.tests)))) FROM runs ru " \
	"JOIN targets tg ON tg.id = ru.target_id " \
	"WHERE ru.id BETWEEN ?1 AND ?2 " \
	"AND ru.started_ms >= ?4 AND ru.started_ms < ?5 " \
	"AND (tg.name = ?3 OR ?3 IS NULL) AND %s " \
	"GROUP BY ru.target_id HAVING count(DISTINCT coalesce(ru.box, ?6)) > 1), " \
	"wr(id) AS (SELECT id FROM (SELECT ru.id, bt.k, row_number() OVER " \
	"(PARTITION BY ru.target_id ORDER BY ru.started_ms DESC, ru.id DESC) " \
	"AS n FROM bt CROSS JOIN runs ru ON ru.target_id = bt.id " \
	"WHERE %s AND +ru.id BETWEEN ?1 AND ?2 " \
	"AND ru.started_ms >= ?4 AND ru.started_ms < ?5) AS w " \
	"WHERE ?8 <= 0 OR n <= k) " \
	"SELECT r.test_id, coalesce(ru.box, ?6) AS b, " \
	"sum(r.outcome IN (0, 1, 2, 5)), sum(r.outcome IN (1, 2)) " \
	"FROM wr CROSS JOIN runs ru ON ru.id = wr.id " \
	"CROSS JOIN results r ON r.run_id = ru.id " \
	"WHERE r.test_id IN (SELECT value FROM json_each(?7)) " \
	"AND r.run_id BETWEEN (SELECT min(id) FROM wr) " \
	"AND (SELECT max(id) FROM wr) " \
	"GROUP BY r.test_id, b ORDER BY r.test_id, b"

/* The same from box_rollups (schema/0014-boxrollups15.sql) over the
 * window's whole days ?9 to ?10, as the report's rates are counted: the
 * targets of more than one box in those days, then one seek per (day,
 * test) of the listed tests into the rollups' primary key. */
#define BOX_ROLLUP_SQL \
	"WITH RECURSIVE d(x) AS (SELECT ?9 UNION ALL SELECT x + 1 FROM d " \
	"WHERE x + 1 < ?10), " \
	"bt(id) AS (SELECT ru.target_id FROM runs ru " \
	"JOIN targets tg ON tg.id = ru.target_id " \
	"WHERE ru.started_ms >= ?9 * 86400000 " \
	"AND ru.started_ms < ?10 * 86400000 " \
	"AND (tg.name = ?3 OR ?3 IS NULL) AND %s " \
	"GROUP BY ru.target_id HAVING count(DISTINCT coalesce(ru.box, ?6)) > 1), " \
	"k(id) AS (SELECT t.id FROM tests t JOIN bt ON bt.id = t.target_id " \
	"WHERE t.id IN (SELECT value FROM json_each(?7))) " \
	"SELECT b.test_id, coalesce(nullif(b.box, ''), ?6) AS bx, " \
	"sum(b.runs), sum(b.failures) " \
	"FROM d CROSS JOIN k ON true CROSS JOIN box_rollups b " \
	"ON b.day = d.x AND b.test_id = k.id " \
	"GROUP BY b.test_id, bx ORDER BY b.test_id, bx"

/* Do box_rollups hold q's window? As the rollups do (runs.c): q's whole
 * days, of the default kinds and not some runs by id. */
static int
box_rollups_hold(const struct flaky_query *q)
{
	return q->first_run_id <= 0 && q->last_run_id <= 0 &&
	    flaky_query_kinds(q) == FLAKY_KINDS_DEFAULT &&
	    q->since_ms != INT64_MIN && q->until_ms != INT64_MAX;
}

/* The SQL of flaky_store_box_stats, for its query plan in the tests. */
char *
store_box_stats_sql(struct flaky_store *s, const struct flaky_query *q)
{
	struct flaky_query all = *q;
	char	 runs[320];
	char	*sql;
	int	 n;

	/* the breakdown is across boxes, whatever box q is kept to */
	all.box = NULL;
	store_runs_sql(s, &all, runs, sizeof runs);
	if (box_rollups_hold(q))
		n = asprintf(&sql, BOX_ROLLUP_SQL, runs);
	else
		n = asprintf(&sql, BOX_SQL, runs, runs);
	return n < 0 ? NULL : sql;
}

char *
store_ids_json(const int64_t *ids, size_t n)
{
	return store_ids_json_of(ids, n, sizeof *ids, 0);
}

char *
store_ids_json_of(const void *v, size_t n, size_t size, size_t off)
{
	const unsigned char *p = v;
	struct flaky_buf b;
	int64_t		 id;

	flaky_buf_init(&b);
	flaky_buf_addc(&b, '[');
	for (size_t i = 0; i < n; i++) {
		memcpy(&id, p + i * size + off, sizeof id);
		flaky_buf_printf(&b, "%s%lld", i ? "," : "", (long long)id);
	}
	flaky_buf_addc(&b, ']');
	if (b.oom) {
		flaky_buf_free(&b);
		return NULL;
	}
	return flaky_buf_steal(&b);
}

/* The statement's row at the end of *v. */
static int
add_row(struct sql_stmt *st, struct flaky_box_row **v, size_t *cap, size_t *n)
{
	struct flaky_box_row *row;

	if (flaky_array_grow(v, cap, *n, sizeof **v) < 0)
		return -ENOMEM;
	row = &(*v)[(*n)++];
	row->test_id = sql_column_int64(st, 0);
	snprintf(row->box, sizeof row->box, "%s",
	    (const char *)sql_column_text(st, 1));
	row->runs = sql_column_int64(st, 2);
	row->failures = sql_column_int64(st, 3);
	return 0;
}

int
flaky_store_box_stats(struct flaky_store *s, const struct flaky_query *q,
    const int64_t *ids, size_t nids, int64_t budget,
    struct flaky_box_row **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_box_row *v = NULL;
	struct sql_stmt	*st = NULL;
	char		*sql = NULL, *list = NULL;
	size_t		 n = 0, cap = 0;
	int		 rc, r = 0;

	*ret = NULL;
	*ret_n = 0;
	if (nids == 0)
		return 0;
	if ((sql = store_box_stats_sql(s, q)) == NULL ||
	    (list = store_ids_json(ids, nids)) == NULL) {
		r = -ENOMEM;
		goto out;
	}
	if (sql_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQL_OK) {
		r = store_sql_error(s, err, errlen, "reading boxes");
		goto out;
	}
	store_bind_window(st, q);
	sql_bind_text(st, 6, flaky_store_box(s), -1, SQL_STATIC);
	sql_bind_text(st, 7, list, -1, SQL_STATIC);
	if (box_rollups_hold(q)) {
		int64_t	 from, to;

		/* whole days, as the rollups are read */
		store_window_days(q, &from, &to);
		sql_bind_int64(st, 9, from);
		sql_bind_int64(st, 10, to);
	} else
		sql_bind_int64(st, 8, budget);
	while ((rc = sql_step(st)) == SQL_ROW)
		if (sql_column_int64(st, 2) > 0 &&
		    (r = add_row(st, &v, &cap, &n)) < 0)
			goto out;
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading boxes");
out:
	sql_finalize(st);
	free(sql);
	free(list);
	if (r < 0) {
		if (r == -ENOMEM)
			flaky_error(err, errlen, ENOMEM, "out of memory");
		free(v);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* The local box's runs are those whose runs.box is NULL too. */
#define BOX_LOCAL_SQL	"(box = ?1 OR box IS NULL)"

int
store_names(struct flaky_store *s, const char *sql, const char *text,
    int64_t since_ms, const char *what, char ***ret, size_t *ret_n,
    char *err, size_t errlen)
{
	struct sql_stmt	*st = NULL;
	const char	*t;
	char		**v = NULL;
	size_t		 n = 0, cap = 0;
	int		 rc = SQL_DONE, r = 0;

	*ret = NULL;
	*ret_n = 0;
	if (sql != NULL && (r = store_prepare(s, sql, &st, err, errlen)) < 0)
		return r;
	if (st != NULL) {
		sql_bind_text(st, 1, text, -1, SQL_STATIC);
		sql_bind_int64(st, 2, since_ms);
	}
	while (r == 0 && (st != NULL ? (rc = sql_step(st)) == SQL_ROW :
	    n == 0)) {
		t = st != NULL ? (const char *)sql_column_text(st, 0) : text;
		if (flaky_array_grow(&v, &cap, n + 2, sizeof *v) < 0 ||
		    (v[n] = strdup(t != NULL ? t : text)) == NULL)
			r = -ENOMEM;
		else
			v[++n] = NULL;
	}
	if (r == 0 && rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, what);
	if (r == 0 && v == NULL && (v = calloc(1, sizeof *v)) == NULL)
		r = -ENOMEM;
	sql_finalize(st);
	if (r < 0) {
		if (r == -ENOMEM)
			flaky_error(err, errlen, ENOMEM, "out of memory");
		flaky_store_names_free(v);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int
flaky_store_box_names(struct flaky_store *s, int64_t since_ms, char ***ret,
    size_t *ret_n, char *err, size_t errlen)
{
	/* runs_by_time holds the window; DISTINCT is of a few boxes */
	return store_names(s, flaky_store_has_boxes(s) ? "SELECT DISTINCT "
	    "coalesce(box, ?1) AS b FROM runs WHERE started_ms >= ?2 ORDER BY "
	    "b" : NULL, flaky_store_box(s), since_ms, "listing boxes", ret,
	    ret_n, err, errlen);
}

int
flaky_store_box_known(struct flaky_store *s, const char *box, char *err,
    size_t errlen)
{
	struct sql_stmt	*st = NULL;
	int		 local = strcmp(box, flaky_store_box(s)) == 0;
	int		 rc, r;

	if (!flaky_store_has_boxes(s))
		return local;
	/* the first run of the box ends the look (PostgreSQL: the index of
	 * UNIQUE (box, local_id)) */
	if ((r = store_prepare(s, local ? "SELECT 1 FROM runs WHERE "
	    BOX_LOCAL_SQL " LIMIT 1" : "SELECT 1 FROM runs WHERE box = ?1 "
	    "LIMIT 1", &st, err, errlen)) < 0)
		return r;
	sql_bind_text(st, 1, box, -1, SQL_STATIC);
	rc = sql_step(st);
	r = rc == SQL_ROW ? 1 : rc == SQL_DONE ? 0 :
	    store_sql_error(s, err, errlen, "looking for a box");
	sql_finalize(st);
	return r;
}

/* A run of the box's budget: when it started and what it cost. */
struct box_run {
	int64_t		 id, day, wall_us, cpu_us;
};

static int
cmp_box_run(const void *a, const void *b)
{
	const struct box_run *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The runs of q's box that started in days [from, to), by id. */
static int
box_runs(struct flaky_store *s, const struct flaky_query *q, int64_t from,
    int64_t to, struct box_run **ret, size_t *ret_n, char *err,
    size_t errlen)
{
	struct flaky_query only = { .box = q->box };
	struct box_run	*v = NULL;
	struct sql_stmt	*st = NULL;
	char		 cond[2 * FLAKY_BOX_MAX + 64], *sql = NULL;
	size_t		 n = 0, cap = 0;
	int		 rc, r = 0;

	store_box_sql(s, &only, cond, sizeof cond);
	if (asprintf(&sql, "SELECT ru.id, ru.started_ms, "
	    "coalesce(ru.duration_us, 0), coalesce(ru.user_us, 0) + "
	    "coalesce(ru.sys_us, 0) FROM runs ru WHERE ru.started_ms >= ?1 "
	    "AND ru.started_ms < ?2%s ORDER BY ru.id", cond) < 0)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	if ((r = store_prepare(s, sql, &st, err, errlen)) < 0)
		goto out;
	sql_bind_int64(st, 1, from * FLAKY_DAY_MS);
	sql_bind_int64(st, 2, to * FLAKY_DAY_MS);
	while ((rc = sql_step(st)) == SQL_ROW) {
		if ((r = flaky_array_grow(&v, &cap, n + 1, sizeof *v)) < 0) {
			r = flaky_error(err, errlen, ENOMEM, "out of memory");
			goto out;
		}
		v[n].id = sql_column_int64(st, 0);
		v[n].day = sql_column_int64(st, 1) / FLAKY_DAY_MS;
		v[n].wall_us = sql_column_int64(st, 2);
		v[n].cpu_us = sql_column_int64(st, 3);
		n++;
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading the box's runs");
out:
	sql_finalize(st);
	free(sql);
	if (r < 0) {
		free(v);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int
store_box_budget(struct flaky_store *s, const struct flaky_query *q,
    int64_t from, int64_t to, store_budget_fn add, void *arg, char *err,
    size_t errlen)
{
	struct box_run	*v = NULL, key, *run;
	struct sql_stmt	*st = NULL;
	size_t		 n = 0;
	int		 rc, r;

	if ((r = box_runs(s, q, from, to, &v, &n, err, errlen)) < 0 ||
	    n == 0)
		goto out;
	/* Every failure within the runs' ids, from the covering partial
	 * index of failed results; the "+" keeps the planner off the
	 * primary key, where a range of runs is every result of them. */
	if ((r = store_prepare(s, "SELECT test_id, run_id FROM results "
	    "WHERE outcome IN (1, 2) AND +run_id BETWEEN ?1 AND ?2", &st,
	    err, errlen)) < 0)
		goto out;
	sql_bind_int64(st, 1, v[0].id);
	sql_bind_int64(st, 2, v[n - 1].id);
	while ((rc = sql_step(st)) == SQL_ROW) {
		key.id = sql_column_int64(st, 1);
		if ((run = bsearch(&key, v, n, sizeof *v, cmp_box_run)) != NULL)
			add(arg, sql_column_int64(st, 0), run->day, 1,
			    run->wall_us, run->cpu_us);
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading the box's failures");
out:
	sql_finalize(st);
	free(v);
	return r;
}
