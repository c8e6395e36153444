/* A test's whole story for its dashboard page (issue 32): its first and
 * last failure, its durations passing and failing as two distributions,
 * its rates per branch; and what the overview and the tests page read of
 * branches and of the newest flips. */
#include "buildconf.h"

#include <math.h>

#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

/* The window's whole days, as the rollups count them. */
static void
window_days(const struct flaky_query *q, int64_t *from, int64_t *to)
{
	*from = q->since_ms == INT64_MIN ? INT64_MIN / FLAKY_DAY_MS :
	    q->since_ms >= 0 ? q->since_ms / FLAKY_DAY_MS :
	    -((-q->since_ms + FLAKY_DAY_MS - 1) / FLAKY_DAY_MS);
	*to = q->until_ms == INT64_MAX ? INT64_MAX / FLAKY_DAY_MS :
	    q->until_ms > 0 ? (q->until_ms - 1) / FLAKY_DAY_MS + 1 : 0;
}

int
flaky_store_test_failed_span(struct flaky_store *s, int64_t test_id,
    int64_t *first_ms, int64_t *last_ms, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	*first_ms = *last_ms = 0;
	/* the partial index of failed results: two seeks; a run alone
	 * (confirm) is evidence too, but not of the test in the suite */
	if ((r = store_prepare(s, "SELECT (SELECT min(ru.started_ms) FROM runs "
	    "ru WHERE ru.id = (SELECT min(r.run_id) FROM results r JOIN runs "
	    "u ON u.id = r.run_id WHERE r.test_id = ?1 AND r.outcome IN (1, 2) "
	    "AND u.kind <> 'alone')), (SELECT max(ru.started_ms) FROM runs ru "
	    "WHERE ru.id = (SELECT max(r.run_id) FROM results r JOIN runs u ON "
	    "u.id = r.run_id WHERE r.test_id = ?1 AND r.outcome IN (1, 2) AND "
	    "u.kind <> 'alone'))", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, test_id);
	if (sql_step(st) == SQL_ROW) {
		*first_ms = sql_column_int64(st, 0);
		*last_ms = sql_column_int64(st, 1);
	} else
		r = store_sql_error(s, err, errlen, "reading failures");
	sql_finalize(st);
	return r;
}

int
flaky_store_test_hists(struct flaky_store *s, int64_t test_id,
    const struct flaky_query *q, uint64_t *pass, uint64_t *fail, char *err,
    size_t errlen)
{
	struct sql_stmt	*st;
	int64_t		 from, to;
	int		 r, rc;

	memset(pass, 0, FLAKY_HIST_BUCKETS * sizeof *pass);
	memset(fail, 0, FLAKY_HIST_BUCKETS * sizeof *fail);
	window_days(q, &from, &to);
	if ((r = store_prepare(s, "SELECT pass_hist, fail_hist FROM rollups "
	    "WHERE test_id = ?1 AND day >= ?2 AND day < ?3", &st, err,
	    errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, test_id);
	sql_bind_int64(st, 2, from);
	sql_bind_int64(st, 3, to);
	while ((rc = sql_step(st)) == SQL_ROW) {
		store_hist_merge_col(st, 0, pass);
		store_hist_merge_col(st, 1, fail);
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading durations");
	sql_finalize(st);
	return r;
}

void
flaky_branch_rows_free(struct flaky_branch_row *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		free(v[i].branch);
	free(v);
}

/* A statement over branch_rollups with q's window of days bound to ?1
 * and ?2 and its target to ?4 (?3 the caller's). */
static int
branch_prepare(struct flaky_store *s, const struct flaky_query *q,
    const char *sql, struct sql_stmt **st, char *err, size_t errlen)
{
	int64_t	 from, to;
	int	 r;

	window_days(q, &from, &to);
	if ((r = store_prepare(s, sql, st, err, errlen)) < 0)
		return r;
	sql_bind_int64(*st, 1, from);
	sql_bind_int64(*st, 2, to);
	if (q->target != NULL)
		sql_bind_text(*st, 4, q->target, -1, SQL_STATIC);
	return 0;
}

/* A test's runs on a branch, of flaky_store_branch_stats' statement. */
static void
branch_fill(struct sql_stmt *st, void *p, int *oom)
{
	struct flaky_branch_row *x = p;

	x->test_id = sql_column_int64(st, 0);
	x->branch = store_col_dup(st, 1, oom);
	x->runs = sql_column_int64(st, 2);
	x->failures = sql_column_int64(st, 3);
}

int
flaky_store_branch_stats(struct flaky_store *s, const struct flaky_query *q,
    int64_t test_id, struct flaky_branch_row **ret, size_t *ret_n,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	*ret = NULL;
	*ret_n = 0;
	if ((r = branch_prepare(s, q, "SELECT b.test_id, b.branch, "
	    "sum(b.runs), sum(b.failures) FROM branch_rollups b JOIN tests t "
	    "ON t.id = b.test_id JOIN targets tg ON tg.id = t.target_id WHERE "
	    "b.day >= ?1 AND b.day < ?2 AND (?3 = 0 OR b.test_id = ?3) AND "
	    "(tg.name = ?4 OR ?4 IS NULL) GROUP BY b.test_id, b.branch ORDER BY "
	    "b.test_id, b.branch", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 3, test_id);
	if ((r = store_rows(s, st, sizeof **ret, branch_fill, "reading "
	    "branches", ret, ret_n, err, errlen)) < 0) {
		flaky_branch_rows_free(*ret, *ret_n);
		*ret = NULL;
		*ret_n = 0;
	}
	return r;
}

int
flaky_store_branch_names(struct flaky_store *s, int64_t since_ms,
    char ***ret, size_t *ret_n, char *err, size_t errlen)
{
	/* runs_by_time holds the window; few branches have rollups */
	return store_names(s, "SELECT DISTINCT c.branch FROM runs ru JOIN "
	    "run_ci c ON c.run_id = ru.id WHERE ru.started_ms >= ?2 AND "
	    "c.branch IS NOT NULL AND c.branch <> ?1 ORDER BY c.branch", "",
	    since_ms, "listing branches", ret, ret_n, err, errlen);
}

int
flaky_store_branch_known(struct flaky_store *s, const char *branch,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r, rc;

	if ((r = store_prepare(s, "SELECT 1 FROM run_ci WHERE branch = ?1 "
	    "LIMIT 1", &st, err, errlen)) < 0)
		return r;
	sql_bind_text(st, 1, branch, -1, SQL_STATIC);
	rc = sql_step(st);
	sql_finalize(st);
	if (rc != SQL_ROW && rc != SQL_DONE)
		return store_sql_error(s, err, errlen, "reading branches");
	return rc == SQL_ROW;
}

/* A test's counts on a branch, of flaky_store_branch_counts'. */
static void
branch_count_fill(struct sql_stmt *st, void *p, int *oom)
{
	struct flaky_test_row *x = p;

	x->test_id = sql_column_int64(st, 0);
	x->test = store_col_dup(st, 1, oom);
	x->target = store_col_dup(st, 2, oom);
	x->runs = sql_column_int64(st, 3);
	x->failures = sql_column_int64(st, 4);
	x->first_ms = sql_column_int64(st, 5) * FLAKY_DAY_MS;
	x->last_ms = sql_column_int64(st, 6) * FLAKY_DAY_MS;
	x->median_ms_pass = x->median_ms_fail = NAN;
	x->p90_ms_pass = x->p90_ms_fail = NAN;
}

int
flaky_store_branch_counts(struct flaky_store *s, const struct flaky_query *q,
    const char *branch, struct flaky_test_row **ret, size_t *ret_n,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	*ret = NULL;
	*ret_n = 0;
	if ((r = branch_prepare(s, q, "SELECT b.test_id, t.name, tg.name, "
	    "sum(b.runs), sum(b.failures), min(b.day), max(b.day) FROM "
	    "branch_rollups b JOIN tests t ON t.id = b.test_id JOIN targets tg "
	    "ON tg.id = t.target_id WHERE b.day >= ?1 AND b.day < ?2 AND "
	    "b.branch = ?3 AND (tg.name = ?4 OR ?4 IS NULL) GROUP BY "
	    "b.test_id, t.name, tg.name ORDER BY b.test_id", &st, err,
	    errlen)) < 0)
		return r;
	sql_bind_text(st, 3, branch, -1, SQL_STATIC);
	if ((r = store_rows(s, st, sizeof **ret, branch_count_fill, "reading "
	    "a branch's rates", ret, ret_n, err, errlen)) < 0) {
		flaky_test_rows_free(*ret, *ret_n);
		*ret = NULL;
		*ret_n = 0;
	}
	return r;
}

void
flaky_flip_rows_free(struct flaky_flip_row *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++) {
		free(v[i].target);
		free(v[i].test);
		free(v[i].f.revision);
		free(v[i].f.fail_job);
		free(v[i].f.pass_job);
	}
	free(v);
}

/* A flip of flaky_store_flips_recent's statement. */
static void
flip_row_fill(struct sql_stmt *st, void *p, int *oom)
{
	struct flaky_flip_row *x = p;

	x->test_id = sql_column_int64(st, 0);
	x->target = store_col_dup(st, 1, oom);
	x->test = store_col_dup(st, 2, oom);
	x->f.revision = store_col_dup(st, 3, oom);
	x->f.fails = sql_column_int64(st, 4);
	x->f.passes = sql_column_int64(st, 5);
	x->f.first_ms = sql_column_int64(st, 6);
	x->f.last_ms = sql_column_int64(st, 7);
	x->f.fail_run = sql_column_int64(st, 8);
	x->f.pass_run = sql_column_int64(st, 9);
	x->f.fail_job = store_col_dup(st, 10, oom);
	x->f.fail_attempt = (int)sql_column_int64(st, 11);
	x->f.pass_job = store_col_dup(st, 12, oom);
	x->f.pass_attempt = (int)sql_column_int64(st, 13);
}

int
flaky_store_flips_recent(struct flaky_store *s, const char *target,
    int64_t until_ms, size_t max, struct flaky_flip_row **ret,
    size_t *ret_n, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	*ret = NULL;
	*ret_n = 0;
	/* revision_outcomes_by_time, newest first */
	if ((r = store_prepare(s, "SELECT o.test_id, tg.name, t.name, "
	    "o.revision, o.fails, o.passes, o.first_ms, o.last_ms, o.fail_run, "
	    "o.pass_run, fc.job, coalesce(fc.attempt, 0), pc.job, "
	    "coalesce(pc.attempt, 0) FROM revision_outcomes o JOIN tests t ON "
	    "t.id = o.test_id JOIN targets tg ON tg.id = t.target_id "
	    "LEFT JOIN run_ci fc ON fc.run_id = o.fail_run LEFT JOIN run_ci pc "
	    "ON pc.run_id = o.pass_run WHERE o.passes > 0 AND o.fails > 0 AND "
	    "o.last_ms < ?1 AND (tg.name = ?2 OR ?2 IS NULL) ORDER BY "
	    "o.last_ms DESC LIMIT ?3", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, until_ms);
	if (target != NULL)
		sql_bind_text(st, 2, target, -1, SQL_STATIC);
	sql_bind_int64(st, 3, (int64_t)max);
	if ((r = store_rows(s, st, sizeof **ret, flip_row_fill, "reading "
	    "flips", ret, ret_n, err, errlen)) < 0) {
		flaky_flip_rows_free(*ret, *ret_n);
		*ret = NULL;
		*ret_n = 0;
	}
	return r;
}

int
flaky_store_test_exists(struct flaky_store *s, int64_t test_id,
    int64_t *found, char *err, size_t errlen)
{
	return store_scalar(s, "SELECT count(*) FROM tests WHERE id = ?1",
	    test_id, 0, found, err, errlen);
}
