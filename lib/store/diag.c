/* The SQL behind diagnosis: a test's results with their runs, the order
 * of every run of a target, signature counts. Everything here reads. */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

/* The window's run-id bounds as the queries bind them. */
static void
bind_window(struct sql_stmt *st, int first, const struct flaky_query *q)
{
	sql_bind_int64(st, first, q->since_ms);
	sql_bind_int64(st, first + 1, q->until_ms);
	sql_bind_int64(st, first + 2, q->first_run_id > 0 ?
	    q->first_run_id : 0);
	sql_bind_int64(st, first + 3, q->last_run_id > 0 ?
	    q->last_run_id : INT64_MAX);
}

/* A text column copied, or NULL when it is NULL; *oom set on failure. */
static char *
col_text(struct sql_stmt *st, int i, int *oom)
{
	const unsigned char *t = sql_column_text(st, i);
	char	*s;

	if (t == NULL)
		return NULL;
	if ((s = strdup((const char *)t)) == NULL)
		*oom = 1;
	return s;
}

/* Free a list of tests; NULL is fine. */
void
flaky_test_refs_free(struct flaky_test_ref *v, size_t n)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		free(v[i].target);
		free(v[i].name);
	}
	free(v);
}

/* Every test (of one target), ordered by target and name. */
int
flaky_store_tests(struct flaky_store *s, const char *target,
    struct flaky_test_ref **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_test_ref *v = NULL;
	struct sql_stmt	*st = NULL;
	size_t		 n = 0, cap = 0;
	int		 rc, r = 0, oom = 0;

	if (sql_prepare_v2(store_db(s),
	    "SELECT t.id, tg.id, tg.name, t.name FROM tests t "
	    "JOIN targets tg ON tg.id = t.target_id "
	    "WHERE tg.name = ?1 OR ?1 IS NULL ORDER BY tg.name, t.name",
	    -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "listing tests");
	if (target != NULL)
		sql_bind_text(st, 1, target, -1, SQL_STATIC);
	while ((rc = sql_step(st)) == SQL_ROW) {
		if (flaky_array_grow(&v, &cap, n, sizeof *v) < 0) {
			r = -ENOMEM;
			goto out;
		}
		v[n].id = sql_column_int64(st, 0);
		v[n].target_id = sql_column_int64(st, 1);
		v[n].target = col_text(st, 2, &oom);
		v[n].name = col_text(st, 3, &oom);
		n++;
		if (oom) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "listing tests");
out:
	sql_finalize(st);
	if (r < 0) {
		flaky_test_refs_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Every target's name, sorted: a NULL-terminated array. */
int
flaky_store_target_names(struct flaky_store *s, char ***ret, size_t *ret_n,
    char *err, size_t errlen)
{
	struct sql_stmt	*st = NULL;
	char		**v = NULL;
	size_t		 n = 0, cap = 0;
	int		 rc, r = 0, oom = 0;

	if (sql_prepare_v2(store_db(s), "SELECT name FROM targets "
	    "ORDER BY name", -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "listing targets");
	while ((rc = sql_step(st)) == SQL_ROW) {
		if (flaky_array_grow(&v, &cap, n + 1, sizeof *v) < 0) {
			r = -ENOMEM;
			goto out;
		}
		v[n++] = col_text(st, 0, &oom);
		v[n] = NULL;
		if (oom) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "listing targets");
	if (r == 0 && v == NULL && (v = calloc(1, sizeof *v)) == NULL)
		r = -ENOMEM;
out:
	sql_finalize(st);
	if (r < 0) {
		flaky_store_names_free(v);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

void
flaky_store_names_free(char **v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* A target's command and directory. */
int
flaky_store_target_info(struct flaky_store *s, int64_t target_id,
    char **command, char **dir, char *err, size_t errlen)
{
	struct sql_stmt	*st = NULL;
	int		 rc, oom = 0;

	*command = *dir = NULL;
	if (sql_prepare_v2(store_db(s),
	    "SELECT command, dir FROM targets WHERE id = ?", -1, &st,
	    NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "reading the target");
	sql_bind_int64(st, 1, target_id);
	rc = sql_step(st);
	if (rc == SQL_ROW) {
		*command = col_text(st, 0, &oom);
		*dir = col_text(st, 1, &oom);
	}
	sql_finalize(st);
	if (oom) {
		free(*command);
		free(*dir);
		*command = *dir = NULL;
		return -ENOMEM;
	}
	if (rc != SQL_ROW && rc != SQL_DONE)
		return store_sql_error(s, err, errlen, "reading the target");
	return 0;
}

/* Free result rows and their strings; NULL is fine. */
void
flaky_result_rows_free(struct flaky_result_row *v, size_t n)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		free(v[i].revision);
		free(v[i].seed);
		free(v[i].runner);
		free(v[i].signature);
		free(v[i].normalized);
		free(v[i].message);
		free(v[i].box);
		free(v[i].perturbation);
	}
	free(v);
}

/* bsearch order of test ids. */
static int
cmp_i64(const void *a, const void *b)
{
	int64_t	 x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The normalized text of a message id, through a one-entry cache. */
static int
message_text(struct flaky_store *s, struct sql_stmt **st, int64_t id,
    int64_t *last, int64_t *fp, char **norm)
{
	const unsigned char *t;

	if (id == *last)
		return 0;
	free(*norm);
	*norm = NULL;
	*fp = 0;
	*last = id;
	if (*st == NULL && sql_prepare_v2(store_db(s),
	    "SELECT fingerprint, normalized FROM messages WHERE id = ?", -1,
	    st, NULL) != SQL_OK)
		return -EIO;
	sql_reset(*st);
	sql_bind_int64(*st, 1, id);
	if (sql_step(*st) == SQL_ROW) {
		*fp = sql_column_int64(*st, 0);
		if ((t = sql_column_text(*st, 1)) != NULL &&
		    (*norm = strdup((const char *)t)) == NULL)
			return -ENOMEM;
	}
	return 0;
}

/* One pass over a target's results in the window, by run and position. */
int
flaky_store_scan_target(struct flaky_store *s, int64_t target_id,
    const struct flaky_query *q, const int64_t *wanted, size_t nwanted,
    int (*fn)(const struct flaky_scan_row *, void *), void *arg,
    char *err, size_t errlen)
{
	struct flaky_scan_row x;
	struct sql_stmt	*st = NULL, *msg = NULL;
	int64_t		 last_msg = -1, last_fp = 0;
	char		*norm = NULL, sql[1024];
	int		 rc, r = 0;

	/* +target_id: walk runs by id (the rows come in order, no sort) */
	snprintf(sql, sizeof sql,
	    "SELECT ru.id, ru.started_ms, ru.duration_us, ru.status, "
	    "ru.exit_code, ru.signal, ru.revision, ru.seed, ru.runner, "
	    "ru.trigger, r.test_id, r.position, r.outcome, r.duration_us, "
	    "r.message_id, r.signature, r.message, ru.kind, %s, "
	    "ru.perturbation "
	    "FROM runs ru CROSS JOIN results r ON r.run_id = ru.id "
	    "WHERE +ru.target_id = ?1 AND ru.started_ms >= ?2 "
	    "AND ru.started_ms < ?3 AND ru.id BETWEEN ?4 AND ?5 "
	    "AND ru.status IN ('done', 'timeout') AND ru.incomplete IS NULL "
	    "ORDER BY ru.id, r.position", store_box_column(s, "ru.box"));
	if (sql_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "reading results");
	sql_bind_int64(st, 1, target_id);
	bind_window(st, 2, q);
	while ((rc = sql_step(st)) == SQL_ROW) {
		const unsigned char *t;

		memset(&x, 0, sizeof x);
		x.r.run_id = sql_column_int64(st, 0);
		x.r.started_ms = sql_column_int64(st, 1);
		x.r.run_duration_us = sql_column_type(st, 2) ==
		    SQL_NULL ? -1 : sql_column_int64(st, 2);
		x.test_id = sql_column_int64(st, 10);
		x.r.position = sql_column_int64(st, 11);
		x.r.outcome = sql_column_int(st, 12);
		x.r.duration_us = sql_column_type(st, 13) == SQL_NULL ?
		    -1 : sql_column_int64(st, 13);
		x.wanted = bsearch(&x.test_id, wanted, nwanted,
		    sizeof *wanted, cmp_i64) != NULL;
		if (x.wanted) {
			if ((t = sql_column_text(st, 3)) != NULL)
				snprintf(x.r.status, sizeof x.r.status, "%s",
				    t);
			if ((t = sql_column_text(st, 9)) != NULL)
				snprintf(x.r.trigger, sizeof x.r.trigger, "%s",
				    t);
			t = sql_column_text(st, 17);
			x.r.kind = t == NULL ? FLAKY_KIND_SUITE :
			    strcmp((const char *)t, "alone") == 0 ?
			    FLAKY_KIND_ALONE : strcmp((const char *)t,
			    "ingested") == 0 ? FLAKY_KIND_INGESTED :
			    FLAKY_KIND_SUITE;
			x.r.exit_code = sql_column_type(st, 4) ==
			    SQL_NULL ? -1 : sql_column_int(st, 4);
			x.r.signal = sql_column_int(st, 5);
			x.r.revision = (char *)sql_column_text(st, 6);
			x.r.seed = (char *)sql_column_text(st, 7);
			x.r.runner = (char *)sql_column_text(st, 8);
			x.r.signature = (char *)sql_column_text(st, 15);
			x.r.message = (char *)sql_column_text(st, 16);
			x.r.box = (char *)sql_column_text(st, 18);
			x.r.perturbation = (char *)sql_column_text(st, 19);
			if (sql_column_type(st, 14) != SQL_NULL) {
				r = message_text(s, &msg,
				    sql_column_int64(st, 14), &last_msg,
				    &last_fp, &norm);
				if (r == -EIO) {
					r = store_sql_error(s, err, errlen,
					    "reading messages");
					goto out;
				}
				if (r < 0)
					goto out;
				x.r.fingerprint = last_fp;
				x.r.normalized = norm;
			}
		}
		if ((r = fn(&x, arg)) < 0)
			goto out;
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading results");
out:
	free(norm);
	sql_finalize(msg);
	sql_finalize(st);
	return r;
}

/* The smallest run id among the newest max_runs finished runs. */
static int
first_of_newest(struct flaky_store *s, int64_t target_id,
    const struct flaky_query *q, size_t max_runs, int64_t *ret)
{
	struct sql_stmt	*st = NULL;
	int		 rc;

	*ret = 0;
	if (sql_prepare_v2(store_db(s),
	    "SELECT id FROM runs WHERE target_id = ?1 AND started_ms >= ?2 "
	    "AND started_ms < ?3 AND id BETWEEN ?4 AND ?5 "
	    "AND status IN ('done', 'timeout') AND incomplete IS NULL "
	    "ORDER BY id DESC LIMIT 1 OFFSET ?6", -1, &st, NULL) != SQL_OK)
		return -EIO;
	sql_bind_int64(st, 1, target_id);
	bind_window(st, 2, q);
	sql_bind_int64(st, 6, (int64_t)max_runs - 1);
	rc = sql_step(st);
	if (rc == SQL_ROW)
		*ret = sql_column_int64(st, 0);
	sql_finalize(st);
	return rc == SQL_ROW || rc == SQL_DONE ? 0 : -EIO;
}

/* Run orders of a target, one callback per run. */
int
flaky_store_run_orders(struct flaky_store *s, int64_t target_id,
    const struct flaky_query *q, size_t max_runs,
    int (*fn)(const struct flaky_run_order *, void *), void *arg,
    char *err, size_t errlen)
{
	struct flaky_run_order o = { 0 };
	struct sql_stmt	*st = NULL;
	size_t		 cap = 0;
	int64_t		 first = 0;
	int		 rc, r = 0;

	if (max_runs > 0 && first_of_newest(s, target_id, q, max_runs,
	    &first) < 0)
		return store_sql_error(s, err, errlen, "reading run orders");
	if (sql_prepare_v2(store_db(s),
	    "SELECT ru.id, r.test_id, r.outcome "
	    "FROM runs ru CROSS JOIN results r ON r.run_id = ru.id "
	    "WHERE +ru.target_id = ?1 AND ru.started_ms >= ?2 "
	    "AND ru.started_ms < ?3 AND ru.id BETWEEN ?4 AND ?5 "
	    "AND ru.id >= ?6 AND ru.status IN ('done', 'timeout') "
	    "AND ru.incomplete IS NULL "
	    "ORDER BY ru.id, r.position", -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "reading run orders");
	sql_bind_int64(st, 1, target_id);
	bind_window(st, 2, q);
	sql_bind_int64(st, 6, first);
	while ((rc = sql_step(st)) == SQL_ROW) {
		int64_t	 run = sql_column_int64(st, 0);

		if (o.n > 0 && run != o.run_id) {
			if ((r = fn(&o, arg)) < 0)
				goto out;
			o.n = 0;
		}
		o.run_id = run;
		if (o.n == cap) {
			size_t	 c = cap ? cap * 2 : 256;
			void	*p1, *p2;

			if ((p1 = realloc(o.test_ids, c * sizeof *o.test_ids))
			    == NULL) {
				r = -ENOMEM;
				goto out;
			}
			o.test_ids = p1;
			if ((p2 = realloc(o.outcomes, c * sizeof *o.outcomes))
			    == NULL) {
				r = -ENOMEM;
				goto out;
			}
			o.outcomes = p2;
			cap = c;
		}
		o.test_ids[o.n] = sql_column_int64(st, 1);
		o.outcomes[o.n] = sql_column_int(st, 2);
		o.n++;
	}
	if (rc != SQL_DONE) {
		r = store_sql_error(s, err, errlen, "reading run orders");
		goto out;
	}
	if (o.n > 0)
		r = fn(&o, arg);
out:
	sql_finalize(st);
	free(o.test_ids);
	free(o.outcomes);
	return r;
}

/* Durations of some tests' results: the runs as flaky_store_run_orders
 * reads them (by run id, the results of a run are neighbours), the tests
 * picked out here rather than through an index that does not exist. */
int
flaky_store_durations(struct flaky_store *s, int64_t target_id,
    const struct flaky_query *q, size_t max_runs, const int64_t *wanted,
    size_t nwanted, int (*fn)(int64_t, int, int64_t, void *), void *arg,
    char *err, size_t errlen)
{
	struct sql_stmt	*st = NULL;
	int64_t		 first = 0;
	int		 rc, r = 0;

	if (nwanted == 0)
		return 0;
	if (max_runs > 0 && first_of_newest(s, target_id, q, max_runs,
	    &first) < 0)
		return store_sql_error(s, err, errlen, "reading durations");
	if (sql_prepare_v2(store_db(s),
	    "SELECT r.test_id, r.outcome, r.duration_us "
	    "FROM runs ru CROSS JOIN results r ON r.run_id = ru.id "
	    "WHERE +ru.target_id = ?1 AND ru.started_ms >= ?2 "
	    "AND ru.started_ms < ?3 AND ru.id BETWEEN ?4 AND ?5 "
	    "AND ru.id >= ?6 AND ru.status IN ('done', 'timeout') "
	    "AND ru.incomplete IS NULL "
	    "AND r.outcome IN (0, 1, 2, 5) AND r.duration_us >= 0", -1, &st,
	    NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "reading durations");
	sql_bind_int64(st, 1, target_id);
	bind_window(st, 2, q);
	sql_bind_int64(st, 6, first);
	while ((rc = sql_step(st)) == SQL_ROW) {
		int64_t	 id = sql_column_int64(st, 0);

		if (bsearch(&id, wanted, nwanted, sizeof *wanted,
		    cmp_i64) == NULL)
			continue;
		if ((r = fn(id, sql_column_int(st, 1),
		    sql_column_int64(st, 2), arg)) < 0)
			goto out;
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading durations");
out:
	sql_finalize(st);
	return r;
}

/* Free signature counts; NULL is fine. */
void
flaky_sig_counts_free(struct flaky_sig_count *v, size_t n)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i].signature);
	free(v);
}

/* Do failure_rollups hold the failures of q's window exactly
 * (schema/0016-failrollups15.sql)? For a window of whole UTC days, as a
 * report widens its own to; not for runs by id, nor for days whose
 * failed results prune removed (their messages are gone, and the
 * results tell no failure there). every_run: of every run (signature
 * counts), else only of the rates' runs (default kinds, every box). */
int
store_failure_rollups_hold(struct flaky_store *s, const struct flaky_query *q,
    int every_run)
{
	int64_t	 horizon = 0, from, to;
	char	 err[8];

	if (q->first_run_id > 0 || q->last_run_id > 0 || (!every_run &&
	    (q->box != NULL || flaky_query_kinds(q) != FLAKY_KINDS_DEFAULT)))
		return 0;
	if ((q->since_ms != INT64_MIN && q->since_ms % FLAKY_DAY_MS != 0) ||
	    (q->until_ms != INT64_MAX && q->until_ms % FLAKY_DAY_MS != 0))
		return 0;
	if (store_scalar(s, "SELECT value FROM store_meta WHERE key = "
	    "'pruned_before_ms'", 0, 0, &horizon, err, sizeof err) < 0)
		return 0;
	store_window_days(q, &from, &to);
	return horizon <= 0 || from >= (horizon + FLAKY_DAY_MS - 1) / FLAKY_DAY_MS;
}

/* Stored signatures of some tests' failures, through the partial index:
 * one statement for all (on a server, one round trip, not one a test).
 * When the window's run ids hold no other run (ids grow with time), the
 * failures are counted from the index alone, without each one's run. */
#define SIG_SQL \
	"SELECT r.test_id, coalesce(r.signature, 'UNKNOWN'), count(*) " \
	"FROM results r %s " \
	"WHERE r.test_id IN (SELECT value FROM json_each(?1)) " \
	"AND r.outcome IN (1, 2) AND r.run_id BETWEEN ?4 AND ?5 %s " \
	"GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2"

/* The same from failure_rollups (?2, ?3: the window's days) when they
 * hold the window: their signature is already UNKNOWN for none. */
#define SIG_ROLLUP_SQL \
	"SELECT f.test_id, f.signature, sum(f.failures) " \
	"FROM failure_rollups f " \
	"WHERE f.test_id IN (SELECT value FROM json_each(?1)) " \
	"AND f.day >= ?2 AND f.day < ?3 " \
	"GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2"

int
flaky_store_signature_counts(struct flaky_store *s, const int64_t *ids,
    size_t nids, const struct flaky_query *q, struct flaky_sig_count **ret,
    size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_sig_count *v = NULL;
	struct sql_stmt	*st = NULL;
	size_t		 n = 0, cap = 0;
	int64_t		 lo, hi;
	char		*list, sql[512];
	int		 rc, r = 0, oom = 0, exact = 0, rolled;

	*ret = NULL;
	*ret_n = 0;
	if (nids == 0)
		return 0;
	if ((rolled = store_failure_rollups_hold(s, q, 1)))
		store_window_days(q, &lo, &hi);
	else if (store_run_range(s, q, "1 = 1", &lo, &hi, &exact) < 0)
		return store_sql_error(s, err, errlen, "counting signatures");
	if (lo > hi)
		return 0;
	if ((list = store_ids_json(ids, nids)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	if (rolled)
		snprintf(sql, sizeof sql, "%s", SIG_ROLLUP_SQL);
	else
		snprintf(sql, sizeof sql, SIG_SQL, exact ? "" :
		    "JOIN runs ru ON ru.id = r.run_id", exact ? "" :
		    "AND ru.started_ms >= ?2 AND ru.started_ms < ?3");
	if (sql_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQL_OK) {
		free(list);
		return store_sql_error(s, err, errlen, "counting signatures");
	}
	sql_bind_text(st, 1, list, -1, SQL_STATIC);
	if (rolled) {
		sql_bind_int64(st, 2, lo);
		sql_bind_int64(st, 3, hi);
	} else {
		if (!exact)
			bind_window(st, 2, q);
		sql_bind_int64(st, 4, lo);
		sql_bind_int64(st, 5, hi);
	}
	while ((rc = sql_step(st)) == SQL_ROW) {
		if (flaky_array_grow(&v, &cap, n, sizeof *v) < 0) {
			r = -ENOMEM;
			goto out;
		}
		v[n].test_id = sql_column_int64(st, 0);
		v[n].signature = col_text(st, 1, &oom);
		v[n].count = sql_column_int64(st, 2);
		n++;
		if (oom) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "counting signatures");
out:
	sql_finalize(st);
	free(list);
	if (r < 0) {
		flaky_sig_counts_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int
flaky_store_order_varies(struct flaky_store *s, int64_t target_id,
    const struct flaky_query *q, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	if (sql_prepare_v2(store_db(s),
	    "SELECT count(*) FROM (SELECT DISTINCT seed FROM runs "
	    "WHERE target_id = ?1 AND seed IS NOT NULL AND started_ms >= ?2 "
	    "AND started_ms < ?3 LIMIT 2) AS s", -1, &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen, "reading run orders");
	sql_bind_int64(st, 1, target_id);
	sql_bind_int64(st, 2, q->since_ms);
	sql_bind_int64(st, 3, q->until_ms);
	if (sql_step(st) == SQL_ROW)
		r = sql_column_int(st, 0) >= 2;
	else
		r = store_sql_error(s, err, errlen, "reading run orders");
	sql_finalize(st);
	return r;
}
