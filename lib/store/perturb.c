/* Reading perturbed runs back (issue 18): a test's rate per perturbation
 * and the seeds of its failing shuffled runs. */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

/* A column's text, copied; NULL for NULL. *oom set when a copy fails. */
static char *
col_text(struct sql_stmt *st, int i, int *oom)
{
	const unsigned char *t = sql_column_text(st, i);
	char	*c;

	if (t == NULL)
		return NULL;
	if ((c = strdup((const char *)t)) == NULL)
		*oom = 1;
	return c;
}

void
store_bind_window(struct sql_stmt *st, const struct flaky_query *q)
{
	sql_bind_int64(st, 1, q->first_run_id > 0 ? q->first_run_id : 0);
	sql_bind_int64(st, 2, q->last_run_id > 0 ? q->last_run_id :
	    INT64_MAX);
	if (q->target != NULL)
		sql_bind_text(st, 3, q->target, -1, SQL_STATIC);
	sql_bind_int64(st, 4, q->since_ms);
	sql_bind_int64(st, 5, q->until_ms);
}

/* The perturbed targets of the window come first (a scan of runs, not of
 * results; none: the join below reads nothing). */
#define PERTURB_SQL \
	"WITH pt(id) AS (SELECT DISTINCT ru.target_id FROM runs ru " \
	"JOIN targets tg ON tg.id = ru.target_id " \
	"WHERE ru.perturbation IS NOT NULL AND ru.id BETWEEN ?1 AND ?2 " \
	"AND ru.started_ms >= ?4 AND ru.started_ms < ?5 " \
	"AND (tg.name = ?3 OR ?3 IS NULL)) " \
	"SELECT r.test_id, ru.perturbation, " \
	"sum(r.outcome IN (0, 1, 2, 5)), sum(r.outcome IN (1, 2)) " \
	"FROM pt CROSS JOIN runs ru ON ru.target_id = pt.id " \
	"CROSS JOIN results r ON r.run_id = ru.id " \
	"WHERE ru.kind = 'suite' AND ru.incomplete IS NULL " \
	"AND +ru.id BETWEEN ?1 AND ?2 " \
	"AND ru.started_ms >= ?4 AND ru.started_ms < ?5 " \
	"AND (?6 = 0 OR r.test_id = ?6) " \
	"GROUP BY r.test_id, ru.perturbation " \
	"ORDER BY r.test_id, ru.perturbation IS NOT NULL, ru.perturbation"

/* Has the window a perturbed run? 1, 0, or an error. */
static int
perturbed(struct flaky_store *s, const struct flaky_query *q, char *err,
    size_t errlen)
{
	struct sql_stmt	*st;
	int		 rc;

	if (sql_prepare_v2(store_db(s), "SELECT 1 FROM runs ru JOIN targets "
	    "tg ON tg.id = ru.target_id WHERE ru.perturbation IS NOT NULL "
	    "AND ru.id BETWEEN ?1 AND ?2 AND ru.started_ms >= ?4 AND "
	    "ru.started_ms < ?5 AND (tg.name = ?3 OR ?3 IS NULL) LIMIT 1", -1,
	    &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "reading perturbations");
	store_bind_window(st, q);
	rc = sql_step(st);
	sql_finalize(st);
	if (rc != SQL_ROW && rc != SQL_DONE)
		return store_sql_error(s, err, errlen, "reading perturbations");
	return rc == SQL_ROW;
}

int
flaky_store_perturb_stats(struct flaky_store *s, const struct flaky_query *q,
    int64_t test_id, struct flaky_perturb_row **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_perturb_row *v = NULL, *row;
	struct sql_stmt	*st = NULL;
	size_t		 n = 0, cap = 0;
	int		 rc, r = 0, oom = 0;

	*ret = NULL;
	*ret_n = 0;
	/* Most windows have no perturbed run: then no results are read
	 * (PostgreSQL's planner, not knowing pt empty, would scan them). */
	if ((r = perturbed(s, q, err, errlen)) <= 0)
		return r;
	if (sql_prepare_v2(store_db(s), PERTURB_SQL, -1, &st, NULL) !=
	    SQL_OK)
		return store_sql_error(s, err, errlen, "reading perturbations");
	store_bind_window(st, q);
	sql_bind_int64(st, 6, test_id > 0 ? test_id : 0);
	while ((rc = sql_step(st)) == SQL_ROW) {
		if (sql_column_int64(st, 2) == 0)
			continue;
		if ((r = flaky_array_grow(&v, &cap, n, sizeof *v)) < 0)
			goto out;
		row = &v[n++];
		row->test_id = sql_column_int64(st, 0);
		row->perturbation = col_text(st, 1, &oom);
		row->runs = sql_column_int64(st, 2);
		row->failures = sql_column_int64(st, 3);
		if (oom) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading perturbations");
out:
	sql_finalize(st);
	if (r < 0) {
		if (r == -ENOMEM)
			flaky_error(err, errlen, ENOMEM, "out of memory");
		flaky_perturb_rows_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int
flaky_perturb_is_shuffle(const char *perturbation)
{
	return perturbation != NULL && strncmp(perturbation,
	    FLAKY_PERTURB_SHUFFLE, strlen(FLAKY_PERTURB_SHUFFLE)) == 0;
}

void
flaky_perturb_rows_free(struct flaky_perturb_row *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		free(v[i].perturbation);
	free(v);
}

int
flaky_store_failing_seeds(struct flaky_store *s, const struct flaky_query *q,
    int64_t test_id, size_t max, struct flaky_seed_row **ret, size_t *ret_n,
    char *err, size_t errlen)
{
	struct flaky_seed_row *v = NULL, *row;
	struct sql_stmt	*st = NULL;
	size_t		 n = 0, cap = 0;
	int		 rc, r = 0, oom = 0;

	*ret = NULL;
	*ret_n = 0;
	/* the test's results by the results_test index, newest run first */
	if (sql_prepare_v2(store_db(s),
	    "SELECT ru.id, ru.seed, ru.perturbation, ru.started_ms "
	    "FROM results r JOIN runs ru ON ru.id = r.run_id "
	    "WHERE r.test_id = ?6 AND r.outcome IN (1, 2) "
	    "AND ru.seed IS NOT NULL AND ru.id BETWEEN ?1 AND ?2 "
	    "AND ru.started_ms >= ?4 AND ru.started_ms < ?5 "
	    "ORDER BY ru.id DESC LIMIT ?7", -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "reading seeds");
	store_bind_window(st, q);
	sql_bind_int64(st, 6, test_id);
	sql_bind_int64(st, 7, (int64_t)max);
	while ((rc = sql_step(st)) == SQL_ROW) {
		if ((r = flaky_array_grow(&v, &cap, n, sizeof *v)) < 0)
			goto out;
		row = &v[n++];
		row->run_id = sql_column_int64(st, 0);
		row->seed = col_text(st, 1, &oom);
		row->perturbation = col_text(st, 2, &oom);
		row->started_ms = sql_column_int64(st, 3);
		if (oom) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading seeds");
out:
	sql_finalize(st);
	if (r < 0) {
		if (r == -ENOMEM)
			flaky_error(err, errlen, ENOMEM, "out of memory");
		flaky_seed_rows_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

void
flaky_seed_rows_free(struct flaky_seed_row *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++) {
		free(v[i].seed);
		free(v[i].perturbation);
	}
	free(v);
}
