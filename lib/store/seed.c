/* Seed sweeps and tolerance headroom (issue 34): the margins a seeded
 * run's approximate assertions used, written with the run, and read back
 * per test; the outcomes of the replays of failing seeds. */
#include "buildconf.h"
/* its own header first: it must stand alone */
#include "store/store.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "util/util.h"

int
flaky_perturb_is_seed(const char *p)
{
	return p != NULL && (strcmp(p, FLAKY_PERTURB_SEED) == 0 ||
	    strcmp(p, FLAKY_PERTURB_REPLAY) == 0);
}

/* A double or NULL for NAN. */
static void
bind_num(struct sql_stmt *st, int i, double v)
{
	if (isnan(v))
		sql_bind_null(st, i);
	else
		sql_bind_double(st, i, v);
}

/* A column's double, NAN for NULL. */
static double
col_num(struct sql_stmt *st, int i)
{
	return sql_column_type(st, i) == SQL_NULL ? NAN :
	    sql_column_double(st, i);
}

int
store_add_headroom(struct flaky_store *s, int64_t run_id,
    const struct flaky_results *res, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	/* the test's id through its result (the primary key of results) */
	if ((r = store_prepare(s, "INSERT INTO headroom (test_id, path, line, "
	    "kind, run_id, quantity, bound, calls, abs_err, rel_err, "
	    "tolerance, assertion) SELECT r.test_id, ?2, ?3, ?4, ?1, ?5, ?6, "
	    "?7, ?8, ?9, ?10, ?11 FROM results r WHERE r.run_id = ?1 AND "
	    "r.position = ?12 ON CONFLICT DO NOTHING", &st, err, errlen)) < 0)
		return r;
	for (size_t i = 0; i < res->nheadroom; i++) {
		const struct flaky_headroom_obs *o = &res->headroom[i];

		if (o->result >= res->n)
			continue;
		sql_reset(st);
		sql_bind_int64(st, 1, run_id);
		sql_bind_text(st, 2, o->path, -1, SQL_STATIC);
		sql_bind_int(st, 3, o->line);
		sql_bind_text(st, 4, o->kind, -1, SQL_STATIC);
		sql_bind_double(st, 5, o->quantity);
		sql_bind_double(st, 6, o->bound);
		sql_bind_int(st, 7, o->calls);
		bind_num(st, 8, o->abs_err);
		bind_num(st, 9, o->rel_err);
		if (o->tolerance != NULL)
			sql_bind_text(st, 10, o->tolerance, -1, SQL_STATIC);
		else
			sql_bind_null(st, 10);
		if (o->assertion != NULL)
			sql_bind_text(st, 11, o->assertion, -1, SQL_STATIC);
		else
			sql_bind_null(st, 11);
		sql_bind_int64(st, 12, res->v[o->result].position);
		if (sql_step(st) != SQL_DONE) {
			r = store_sql_error(s, err, errlen, "adding headroom");
			break;
		}
	}
	sql_finalize(st);
	return r;
}

/* The window's runs (?1 ?2 ids, ?3 target, ?4 ?5 times) of a seed sweep,
 * complete, not replays. */
#define SEEDED_RUNS \
	"ru.perturbation = 'seed' AND ru.incomplete IS NULL AND " \
	"ru.kind = 'suite' AND ru.id BETWEEN ?1 AND ?2 AND " \
	"ru.started_ms >= ?4 AND ru.started_ms < ?5 AND " \
	"(tg.name = ?3 OR ?3 IS NULL)"

int
flaky_store_seeded(struct flaky_store *s, const struct flaky_query *q,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 rc;

	if (sql_prepare_v2(store_db(s), "SELECT 1 FROM runs ru JOIN targets "
	    "tg ON tg.id = ru.target_id WHERE " SEEDED_RUNS " LIMIT 1", -1,
	    &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "reading seed sweeps");
	store_bind_window(st, q);
	rc = sql_step(st);
	sql_finalize(st);
	if (rc != SQL_ROW && rc != SQL_DONE)
		return store_sql_error(s, err, errlen, "reading seed sweeps");
	return rc == SQL_ROW;
}

int
flaky_store_headroom(struct flaky_store *s, const struct flaky_query *q,
    int64_t test_id, struct flaky_headroom_row **ret, size_t *ret_n,
    char *err, size_t errlen)
{
	struct flaky_headroom_row *v = NULL, *row;
	struct sql_stmt	*st;
	size_t		 n = 0, cap = 0;
	int		 rc, r = 0, oom = 0;

	*ret = NULL;
	*ret_n = 0;
	/* the test's rows by the primary key, its runs by theirs */
	if (sql_prepare_v2(store_db(s), "SELECT h.run_id, h.path, h.line, "
	    "h.kind, h.quantity, h.bound, h.abs_err, h.rel_err, h.tolerance, "
	    "h.assertion FROM headroom h JOIN runs ru ON ru.id = h.run_id "
	    "JOIN targets tg ON tg.id = ru.target_id WHERE h.test_id = ?6 AND "
	    SEEDED_RUNS " ORDER BY h.path, h.line, h.kind, h.run_id", -1, &st,
	    NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "reading headroom");
	store_bind_window(st, q);
	sql_bind_int64(st, 6, test_id);
	while ((rc = sql_step(st)) == SQL_ROW) {
		if ((r = flaky_array_grow(&v, &cap, n, sizeof *v)) < 0)
			goto out;
		row = &v[n++];
		memset(row, 0, sizeof *row);
		row->run_id = sql_column_int64(st, 0);
		row->path = store_col_dup(st, 1, &oom);
		row->line = sql_column_int(st, 2);
		snprintf(row->kind, sizeof row->kind, "%s",
		    (const char *)sql_column_text(st, 3));
		row->quantity = col_num(st, 4);
		row->bound = col_num(st, 5);
		row->abs_err = col_num(st, 6);
		row->rel_err = col_num(st, 7);
		row->tolerance = store_col_dup(st, 8, &oom);
		row->assertion = store_col_dup(st, 9, &oom);
		if (oom || row->path == NULL) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading headroom");
out:
	sql_finalize(st);
	if (r < 0) {
		if (r == -ENOMEM)
			flaky_error(err, errlen, ENOMEM, "out of memory");
		flaky_headroom_rows_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

void
flaky_headroom_rows_free(struct flaky_headroom_row *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++) {
		free(v[i].path);
		free(v[i].tolerance);
		free(v[i].assertion);
	}
	free(v);
}

int
flaky_store_seed_replays(struct flaky_store *s, const struct flaky_query *q,
    int64_t test_id, struct flaky_replay_row **ret, size_t *ret_n,
    char *err, size_t errlen)
{
	struct flaky_replay_row *v = NULL, *row;
	struct sql_stmt	*st;
	size_t		 n = 0, cap = 0;
	int		 rc, r = 0, oom = 0;

	*ret = NULL;
	*ret_n = 0;
	/* replays are few and small (the tests of one seed each) */
	if (sql_prepare_v2(store_db(s), "SELECT r.test_id, ru.id, ru.seed, "
	    "CASE WHEN r.outcome IN (1, 2) THEN 1 ELSE 0 END FROM runs ru JOIN targets tg ON tg.id = "
	    "ru.target_id CROSS JOIN results r ON r.run_id = ru.id WHERE "
	    "ru.perturbation = 'seed:replay' AND ru.kind = 'suite' AND "
	    "ru.id BETWEEN ?1 AND ?2 AND ru.started_ms >= ?4 AND "
	    "ru.started_ms < ?5 AND (tg.name = ?3 OR ?3 IS NULL) AND "
	    "r.outcome IN (0, 1, 2, 5) AND (?6 = 0 OR r.test_id = ?6) "
	    "ORDER BY r.test_id, ru.id", -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "reading replays");
	store_bind_window(st, q);
	sql_bind_int64(st, 6, test_id > 0 ? test_id : 0);
	while ((rc = sql_step(st)) == SQL_ROW) {
		if ((r = flaky_array_grow(&v, &cap, n, sizeof *v)) < 0)
			goto out;
		row = &v[n++];
		row->test_id = sql_column_int64(st, 0);
		row->run_id = sql_column_int64(st, 1);
		row->seed = store_col_dup(st, 2, &oom);
		row->failed = sql_column_int(st, 3) != 0;
		if (oom) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading replays");
out:
	sql_finalize(st);
	if (r < 0) {
		if (r == -ENOMEM)
			flaky_error(err, errlen, ENOMEM, "out of memory");
		flaky_replay_rows_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

void
flaky_replay_rows_free(struct flaky_replay_row *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		free(v[i].seed);
	free(v);
}
