/* The runs as the dashboard shows them (lib/web): one run with its kept
 * output, a run's results in their order, the newest runs, a test's
 * newest results, and the report's order of test rows. Everything here
 * reads. */
#include "buildconf.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"
#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

/* The columns of a run, in the order view_fill reads them. */
#define RUN_COLUMNS \
	"r.id, r.target_id, t.name, r.status, r.kind, r.trigger, " \
	"r.started_ms, r.ended_ms, r.duration_us, r.exit_code, r.signal, " \
	"r.revision, r.runner, r.seed, r.error, r.incomplete, " \
	"r.perturbation, r.tests, r.failures, r.user_us, r.sys_us, " \
	"r.maxrss_kb, r.loadavg, r.output_bytes, r.output_dropped, "

/* A text column, copied; NULL stays NULL. -ENOMEM sticks in *r. */
static char *
dup_col(struct sql_stmt *st, int i, int *r)
{
	const char	*t = (const char *)sql_column_text(st, i);
	char		*c;

	if (t == NULL)
		return NULL;
	if ((c = strdup(t)) == NULL)
		*r = -ENOMEM;
	return c;
}

/* An integer column, or def for NULL. */
static int64_t
int_col(struct sql_stmt *st, int i, int64_t def)
{
	if (sql_column_type(st, i) == SQL_NULL)
		return def;
	return sql_column_int64(st, i);
}

/* A short text column into a fixed field. */
static void
word_col(struct sql_stmt *st, int i, char *buf, size_t len)
{
	const unsigned char *t = sql_column_text(st, i);

	snprintf(buf, len, "%s", t != NULL ? (const char *)t : "");
}

int
flaky_store_has_boxes(struct flaky_store *s)
{
	int64_t		 n = 0;
	char		 err[128];

	if (sql_is_pg(store_db(s)))	/* schema/pg has had it from 0001 */
		return 1;
	if (store_scalar(s, "SELECT count(*) FROM pragma_table_info('runs') "
	    "WHERE name = 'box'", 0, 0, &n, err, sizeof err) < 0)
		return 0;
	return n > 0;
}

const char *
store_box_column(struct flaky_store *s, const char *col)
{
	return flaky_store_has_boxes(s) ? col : "NULL";
}

/* One row of RUN_COLUMNS into v. */
static int
view_fill(struct sql_stmt *st, struct flaky_run_view *v)
{
	int	 r = 0;

	memset(v, 0, sizeof *v);
	v->id = sql_column_int64(st, 0);
	v->target_id = sql_column_int64(st, 1);
	v->target = dup_col(st, 2, &r);
	word_col(st, 3, v->status, sizeof v->status);
	word_col(st, 4, v->kind, sizeof v->kind);
	word_col(st, 5, v->trigger, sizeof v->trigger);
	v->started_ms = int_col(st, 6, 0);
	v->ended_ms = int_col(st, 7, 0);
	v->duration_us = int_col(st, 8, -1);
	v->exit_code = (int)int_col(st, 9, -1);
	v->signal = (int)int_col(st, 10, 0);
	v->revision = dup_col(st, 11, &r);
	v->runner = dup_col(st, 12, &r);
	v->seed = dup_col(st, 13, &r);
	v->error = dup_col(st, 14, &r);
	v->incomplete = dup_col(st, 15, &r);
	v->perturbation = dup_col(st, 16, &r);
	v->tests = int_col(st, 17, 0);
	v->failures = int_col(st, 18, 0);
	v->user_us = int_col(st, 19, -1);
	v->sys_us = int_col(st, 20, -1);
	v->maxrss_kb = int_col(st, 21, -1);
	v->loadavg = sql_column_type(st, 22) == SQL_NULL ? -1 :
	    sql_column_double(st, 22);
	v->output_bytes = int_col(st, 23, 0);
	v->output_dropped = int_col(st, 24, 0);
	v->box = dup_col(st, 25, &r);
	return r;
}

/* Free what a run view holds; the struct itself is the caller's. */
void
flaky_run_view_clear(struct flaky_run_view *v)
{
	if (v == NULL)
		return;
	free(v->target);
	free(v->revision);
	free(v->runner);
	free(v->seed);
	free(v->error);
	free(v->incomplete);
	free(v->perturbation);
	free(v->out);
	free(v->err);
	free(v->box);
	memset(v, 0, sizeof *v);
}

/* Free a list of run views; NULL is fine. */
void
flaky_run_views_free(struct flaky_run_view *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		flaky_run_view_clear(&v[i]);
	free(v);
}

/* The kept output of a run (redacted when it was stored). */
static int
view_output(struct flaky_store *s, struct flaky_run_view *v, char *err,
    size_t errlen)
{
	struct sql_stmt	*st;
	int		 rc, r = 0;

	if (store_prepare(s, "SELECT stdout, stderr FROM run_output "
	    "WHERE run_id = ?", &st, err, errlen) < 0)
		return -EIO;
	sql_bind_int64(st, 1, v->id);
	if ((rc = sql_step(st)) == SQL_ROW) {
		v->out = dup_col(st, 0, &r);
		v->err = dup_col(st, 1, &r);
	} else if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading a run's output");
	sql_finalize(st);
	if (r == -ENOMEM)
		flaky_error(err, errlen, ENOMEM, "out of memory");
	return r;
}

int
flaky_store_run_view(struct flaky_store *s, int64_t id,
    struct flaky_run_view *ret, char *err, size_t errlen)
{
	char		 sql[1024];
	struct sql_stmt	*st;
	int		 rc, r;

	memset(ret, 0, sizeof *ret);
	snprintf(sql, sizeof sql, "SELECT " RUN_COLUMNS "%s FROM runs r JOIN "
	    "targets t ON t.id = r.target_id WHERE r.id = ?",
	    store_box_column(s, "r.box"));
	if (store_prepare(s, sql, &st, err, errlen) < 0)
		return -EIO;
	sql_bind_int64(st, 1, id);
	rc = sql_step(st);
	if (rc == SQL_ROW)
		r = view_fill(st, ret);
	else if (rc == SQL_DONE)
		r = flaky_error(err, errlen, ENOENT, "no run %lld",
		    (long long)id);
	else
		r = store_sql_error(s, err, errlen, "reading a run");
	sql_finalize(st);
	if (r == 0)
		r = view_output(s, ret, err, errlen);
	if (r < 0)
		flaky_run_view_clear(ret);
	return r;
}

int
flaky_store_runs_recent(struct flaky_store *s, int64_t target_id,
    const char *box, size_t max, struct flaky_run_view **ret, size_t *ret_n,
    char *err, size_t errlen)
{
	struct flaky_run_view *v = NULL;
	const char	*cond = "";
	char		 sql[1024];
	int		 bind_box = 0;
	struct sql_stmt	*st;
	size_t		 n = 0, cap = 0;
	int		 rc, r = 0;

	*ret = NULL;
	*ret_n = 0;
	/* one box: its runs (runs.box NULL: the store's own; without the
	 * column every run is the store's) */
	if (box != NULL && (bind_box = flaky_store_has_boxes(s)))
		cond = " AND coalesce(r.box, ?3) = ?4";
	else if (box != NULL && strcmp(box, flaky_store_box(s)) != 0)
		cond = " AND 0";
	snprintf(sql, sizeof sql, "SELECT " RUN_COLUMNS "%s FROM runs r JOIN "
	    "targets t ON t.id = r.target_id WHERE (?1 = 0 OR r.target_id = ?1)"
	    "%s ORDER BY r.started_ms DESC, r.id DESC LIMIT ?2",
	    store_box_column(s, "r.box"), cond);
	if (store_prepare(s, sql, &st, err, errlen) < 0)
		return -EIO;
	sql_bind_int64(st, 1, target_id);
	sql_bind_int64(st, 2, (int64_t)max);
	if (bind_box) {
		sql_bind_text(st, 3, flaky_store_box(s), -1, SQL_STATIC);
		sql_bind_text(st, 4, box, -1, SQL_STATIC);
	}
	while (r == 0 && (rc = sql_step(st)) == SQL_ROW) {
		if ((r = flaky_array_grow(&v, &cap, n + 1, sizeof *v)) < 0)
			break;
		r = view_fill(st, &v[n++]);
	}
	if (r == 0 && rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading runs");
	sql_finalize(st);
	if (r == -ENOMEM)
		flaky_error(err, errlen, ENOMEM, "out of memory");
	if (r < 0) {
		flaky_run_views_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Free a run's results; NULL is fine. */
void
flaky_run_results_free(struct flaky_run_result *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++) {
		free(v[i].test);
		free(v[i].signature);
		free(v[i].message);
	}
	free(v);
}

int
flaky_store_run_results(struct flaky_store *s, int64_t run_id,
    struct flaky_run_result **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_run_result *v = NULL, *x;
	struct sql_stmt	*st;
	size_t		 n = 0, cap = 0;
	int		 rc, r = 0;

	*ret = NULL;
	*ret_n = 0;
	if (store_prepare(s, "SELECT res.position, res.test_id, t.name, "
	    "res.outcome, res.duration_us, res.signature, res.message "
	    "FROM results res JOIN tests t ON t.id = res.test_id "
	    "WHERE res.run_id = ? ORDER BY res.position", &st, err,
	    errlen) < 0)
		return -EIO;
	sql_bind_int64(st, 1, run_id);
	while (r == 0 && (rc = sql_step(st)) == SQL_ROW) {
		if ((r = flaky_array_grow(&v, &cap, n + 1, sizeof *v)) < 0)
			break;
		x = &v[n++];
		memset(x, 0, sizeof *x);
		x->position = sql_column_int64(st, 0);
		x->test_id = sql_column_int64(st, 1);
		x->test = dup_col(st, 2, &r);
		x->outcome = sql_column_int(st, 3);
		x->duration_us = int_col(st, 4, -1);
		x->signature = dup_col(st, 5, &r);
		x->message = dup_col(st, 6, &r);
	}
	if (r == 0 && rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading a run's results");
	sql_finalize(st);
	if (r == -ENOMEM)
		flaky_error(err, errlen, ENOMEM, "out of memory");
	if (r < 0) {
		flaky_run_results_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* One row of a test's results (flaky_store_test_results) into x. */
static int
result_fill(struct sql_stmt *st, struct flaky_result_row *x)
{
	const char *kind;
	int	 r = 0;

	memset(x, 0, sizeof *x);
	x->run_id = sql_column_int64(st, 0);
	x->started_ms = sql_column_int64(st, 1);
	x->run_duration_us = int_col(st, 2, -1);
	word_col(st, 3, x->status, sizeof x->status);
	word_col(st, 4, x->trigger, sizeof x->trigger);
	kind = (const char *)sql_column_text(st, 5);
	x->kind = kind == NULL ? FLAKY_KIND_SUITE : strcmp(kind, "alone") ==
	    0 ? FLAKY_KIND_ALONE : strcmp(kind, "ingested") == 0 ?
	    FLAKY_KIND_INGESTED : FLAKY_KIND_SUITE;
	x->exit_code = (int)int_col(st, 6, -1);
	x->revision = dup_col(st, 7, &r);
	x->runner = dup_col(st, 8, &r);
	x->position = sql_column_int64(st, 9);
	x->outcome = sql_column_int(st, 10);
	x->duration_us = int_col(st, 11, -1);
	x->signature = dup_col(st, 12, &r);
	x->message = dup_col(st, 13, &r);
	x->fingerprint = int_col(st, 14, 0);
	x->normalized = dup_col(st, 15, &r);
	x->box = dup_col(st, 16, &r);
	return r;
}

int
flaky_store_test_results(struct flaky_store *s, int64_t test_id, size_t max,
    struct flaky_result_row **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_result_row *v = NULL;
	char		 sql[1024];
	struct sql_stmt	*st;
	size_t		 n = 0, cap = 0;
	int		 rc, r = 0;

	*ret = NULL;
	*ret_n = 0;
	/* The test's target's runs newest first (runs_by_target), each
	 * run's results by its primary key. */
	snprintf(sql, sizeof sql, "SELECT ru.id, ru.started_ms, "
	    "ru.duration_us, ru.status, ru.trigger, ru.kind, ru.exit_code, "
	    "ru.revision, ru.runner, res.position, res.outcome, "
	    "res.duration_us, res.signature, res.message, m.fingerprint, "
	    "m.normalized, %s FROM tests t JOIN runs ru ON ru.target_id = "
	    "t.target_id JOIN results res ON res.run_id = ru.id AND "
	    "res.test_id = t.id LEFT JOIN messages m ON m.id = res.message_id "
	    "WHERE t.id = ?1 ORDER BY ru.started_ms DESC, ru.id DESC "
	    "LIMIT ?2", store_box_column(s, "ru.box"));
	if (store_prepare(s, sql, &st, err, errlen) < 0)
		return -EIO;
	sql_bind_int64(st, 1, test_id);
	sql_bind_int64(st, 2, (int64_t)max);
	while (r == 0 && (rc = sql_step(st)) == SQL_ROW) {
		if ((r = flaky_array_grow(&v, &cap, n + 1, sizeof *v)) < 0)
			break;
		r = result_fill(st, &v[n++]);
	}
	if (r == 0 && rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading a test's results");
	sql_finalize(st);
	if (r == -ENOMEM)
		flaky_error(err, errlen, ENOMEM, "out of memory");
	if (r < 0) {
		flaky_result_rows_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Free a list of targets; NULL is fine. */
void
flaky_target_views_free(struct flaky_target_view *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++) {
		free(v[i].name);
		free(v[i].command);
	}
	free(v);
}

int
flaky_store_target_views(struct flaky_store *s,
    struct flaky_target_view **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_target_view *v = NULL, *x;
	struct sql_stmt	*st;
	size_t		 n = 0, cap = 0;
	int		 rc, r = 0;

	*ret = NULL;
	*ret_n = 0;
	if (store_prepare(s, "SELECT id, name, command, last_fire_ms "
	    "FROM targets ORDER BY name", &st, err, errlen) < 0)
		return -EIO;
	while (r == 0 && (rc = sql_step(st)) == SQL_ROW) {
		if ((r = flaky_array_grow(&v, &cap, n + 1, sizeof *v)) < 0)
			break;
		x = &v[n++];
		memset(x, 0, sizeof *x);
		x->id = sql_column_int64(st, 0);
		x->name = dup_col(st, 1, &r);
		x->command = dup_col(st, 2, &r);
		x->last_fire_ms = int_col(st, 3, FLAKY_NO_FIRE);
	}
	if (r == 0 && rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading targets");
	sql_finalize(st);
	if (r == -ENOMEM)
		flaky_error(err, errlen, ENOMEM, "out of memory");
	if (r < 0) {
		flaky_target_views_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Rank of a tier in the report's order: the most urgent first. */
static int
tier_rank(int t)
{
	switch (t) {
	case FLAKY_TIER_CRITICAL: return 0;
	case FLAKY_TIER_WARNING: return 1;
	case FLAKY_TIER_BROKEN: return 2;
	case FLAKY_TIER_NOISE: return 3;
	case FLAKY_TIER_STABLE: return 4;
	case FLAKY_TIER_SKIPPED: return 5;
	default: return 6;	/* no evidence */
	}
}

int
flaky_test_row_cmp(const void *a, const void *b)
{
	const struct flaky_test_row *x = a, *y = b;
	int	 tx = tier_rank(flaky_tier_skips(x->failures, x->runs,
	    x->skips));
	int	 ty = tier_rank(flaky_tier_skips(y->failures, y->runs,
	    y->skips));
	double	 rx, ry;
	int	 c;

	if (tx != ty)
		return tx - ty;
	rx = x->runs ? (double)x->failures / (double)x->runs : 0;
	ry = y->runs ? (double)y->failures / (double)y->runs : 0;
	if (rx != ry)
		return rx > ry ? -1 : 1;
	if (x->runs != y->runs)
		return x->runs > y->runs ? -1 : 1;
	if ((c = strcmp(x->target, y->target)) != 0)
		return c;
	return strcmp(x->test, y->test);
}

void
flaky_test_rows_sort(struct flaky_test_row *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof *v, flaky_test_row_cmp);
}

/* The rollups of the window summed per test in one pass in key order (a
 * GROUP BY would sort 30 rows of every test first: ten times slower);
 * at[test id] is the row's index + 1. */
static int
counts_sum(struct flaky_store *s, const struct flaky_query *q,
    struct flaky_test_row **v, size_t *n, uint32_t *at, int64_t max_id,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;
	size_t		 cap = 0;
	int		 rc, r = 0;

	if (store_prepare(s, "SELECT test_id, day, runs, failures, skips "
	    "FROM rollups WHERE day >= ?1 AND day < ?2", &st, err,
	    errlen) < 0)
		return -EIO;
	/* whole days, as test_stats counts them */
	sql_bind_int64(st, 1, q->since_ms >= 0 ? q->since_ms /
	    FLAKY_DAY_MS : -((-q->since_ms + FLAKY_DAY_MS - 1) / FLAKY_DAY_MS));
	sql_bind_int64(st, 2, q->until_ms > 0 ? (q->until_ms - 1) /
	    FLAKY_DAY_MS + 1 : 0);
	while (r == 0 && (rc = sql_step(st)) == SQL_ROW) {
		int64_t	 id = sql_column_int64(st, 0);
		int64_t	 day = sql_column_int64(st, 1);
		struct flaky_test_row *x;

		if (id < 1 || id > max_id)
			continue;
		if (at[id] == 0) {
			if ((r = flaky_array_grow(v, &cap, *n + 1,
			    sizeof **v)) < 0)
				break;
			x = &(*v)[(*n)++];
			memset(x, 0, sizeof *x);
			x->test_id = id;
			x->first_ms = day * FLAKY_DAY_MS;
			x->median_ms_pass = x->median_ms_fail = NAN;
			x->p90_ms_pass = x->p90_ms_fail = NAN;
			at[id] = (uint32_t)*n;
		}
		x = &(*v)[at[id] - 1];
		x->runs += sql_column_int64(st, 2);
		x->failures += sql_column_int64(st, 3);
		x->skips += sql_column_int64(st, 4);
		x->last_ms = day * FLAKY_DAY_MS;
	}
	if (r == 0 && rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading the rollups");
	sql_finalize(st);
	return r;
}

/* The names of the rows' tests and targets; rows of other targets than
 * q's dropped. */
static int
counts_names(struct flaky_store *s, const struct flaky_query *q,
    struct flaky_test_row *v, size_t *n, const uint32_t *at, int64_t max_id,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;
	size_t		 k = 0;
	int		 rc, r = 0;

	if (store_prepare(s, "SELECT t.id, t.name, tg.name FROM tests t "
	    "JOIN targets tg ON tg.id = t.target_id "
	    "WHERE tg.name = ?1 OR ?1 IS NULL", &st, err, errlen) < 0)
		return -EIO;
	if (q->target != NULL)
		sql_bind_text(st, 1, q->target, -1, SQL_STATIC);
	while (r == 0 && (rc = sql_step(st)) == SQL_ROW) {
		int64_t	 id = sql_column_int64(st, 0);
		struct flaky_test_row *x;

		if (id < 1 || id > max_id || at[id] == 0)
			continue;
		x = &v[at[id] - 1];
		x->test = dup_col(st, 1, &r);
		x->target = dup_col(st, 2, &r);
	}
	if (r == 0 && rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading tests");
	sql_finalize(st);
	/* keep the named rows, in order */
	for (size_t i = 0; i < *n; i++) {
		if (v[i].test == NULL || v[i].target == NULL) {
			free(v[i].test);
			free(v[i].target);
			continue;
		}
		v[k++] = v[i];
	}
	*n = k;
	return r;
}

int
flaky_store_test_counts(struct flaky_store *s, const struct flaky_query *q,
    struct flaky_test_row **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_test_row *v = NULL;
	uint32_t	*at = NULL;
	int64_t		 max_id;
	size_t		 n = 0;
	int		 r;

	/* what the rollups do not hold (one box's runs among them):
	 * test_stats reads the raw results */
	if (q->first_run_id > 0 || q->last_run_id > 0 || q->box != NULL ||
	    flaky_query_kinds(q) != FLAKY_KINDS_DEFAULT ||
	    q->since_ms == INT64_MIN || q->until_ms == INT64_MAX)
		return flaky_store_test_stats(s, q, ret, ret_n, err, errlen);
	*ret = NULL;
	*ret_n = 0;
	if ((r = store_scalar(s, "SELECT max(id) FROM tests", 0, 0, &max_id,
	    err, errlen)) < 0)
		return r;
	if ((at = calloc((size_t)max_id + 1, sizeof *at)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	if ((r = counts_sum(s, q, &v, &n, at, max_id, err, errlen)) == 0)
		r = counts_names(s, q, v, &n, at, max_id, err, errlen);
	free(at);
	if (r == -ENOMEM)
		flaky_error(err, errlen, ENOMEM, "out of memory");
	if (r < 0) {
		flaky_test_rows_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}
