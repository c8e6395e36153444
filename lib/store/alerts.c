/* Alerts (docs/alerts.md): which tests' tiers a stored run changed, the
 * events that says (deduplicated by test, kind and the run's time), and
 * their delivery to each receiver with its backoff. flakyd evaluates the
 * runs of each target after its cursor, in order, so a restart misses
 * none and repeats none; what a receiver has not taken stays pending in
 * the database. */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "stats/stats.h"
#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

/* The runs that count for a tier: as the reports count them (never a run
 * alone or an incomplete one), finished. */
#define COUNTED "kind != 'alone' AND incomplete IS NULL AND " \
	"status IN ('done', 'timeout')"

/* The tests of a stored run that could make an event, with their window
 * (the target's last counted runs up to that run, newest first through
 * the index runs_by_target): those that failed in the window, have an
 * open alert (flaky, critical or broken not yet recovered) or are in
 * quarantine. The others are stable and were never told: nothing to say,
 * and counting them all costs more than storing the run. */
const char store_sql_alert_window[] =
    "WITH w(id) AS (SELECT id FROM runs WHERE target_id = ?1 AND "
    "started_ms <= ?4 AND id <= ?2 AND " COUNTED " "
    "ORDER BY started_ms DESC LIMIT ?3), "
    "i(test_id) AS (SELECT test_id FROM results WHERE run_id IN "
    "(SELECT id FROM w) AND outcome IN (1, 2) "
    "UNION SELECT test_id FROM alerts GROUP BY test_id HAVING "
    "max(CASE WHEN kind != 'release' THEN id END) = "
    "max(CASE WHEN kind IN ('flaky', 'critical', 'broken') THEN id END) "
    "UNION SELECT test_id FROM quarantine), "
    "c AS (SELECT r.test_id AS test_id, count(*) AS runs, "
    "sum(r.outcome IN (1, 2)) AS failures, "
    "max(r.run_id = ?2 AND r.outcome IN (1, 2)) AS failed, "
    "max(r.run_id = ?2 AND r.outcome IN (0, 5)) AS passed, "
    "max(r.run_id = ?2) AS here FROM results r "
    "WHERE r.run_id IN (SELECT id FROM w) AND r.test_id IN "
    "(SELECT test_id FROM i) AND r.outcome IN (0, 1, 2, 5) "
    "GROUP BY r.test_id) "
    "SELECT c.test_id, t.name, c.runs, c.failures, c.failed, c.passed, "
    "(SELECT kind FROM alerts a WHERE a.test_id = c.test_id AND "
    "a.kind != 'release' ORDER BY a.id DESC LIMIT 1), q.added_ms, "
    "EXISTS (SELECT 1 FROM alerts a WHERE a.test_id = c.test_id AND "
    "a.kind = 'release' AND a.at_ms >= q.added_ms) "
    "FROM c JOIN tests t ON t.id = c.test_id "
    "LEFT JOIN quarantine q ON q.test_id = c.test_id WHERE c.here";

/* The event a test's tier calls for, against the last tier event it had:
 * escalations (flaky, critical, broken) each once until it recovers,
 * recovered once it is stable again; nothing before min_runs runs, and
 * nothing for noise (under 5%) or a tier already told. -1: none. */
int
flaky_alert_decide(const struct flaky_alert_test *t, int min_runs)
{
	int	 tier, last = t->last_kind;

	if (t->runs < min_runs)
		return -1;
	tier = flaky_tier(t->failures, t->runs);
	switch (tier) {
	case FLAKY_TIER_WARNING:
		return last < 0 || last == FLAKY_ALERT_RECOVERED ?
		    FLAKY_ALERT_FLAKY : -1;
	case FLAKY_TIER_CRITICAL:
		return last < 0 || last == FLAKY_ALERT_RECOVERED ||
		    last == FLAKY_ALERT_FLAKY ? FLAKY_ALERT_CRITICAL : -1;
	case FLAKY_TIER_BROKEN:
		return last != FLAKY_ALERT_BROKEN ? FLAKY_ALERT_BROKEN : -1;
	case FLAKY_TIER_STABLE:
		return last >= 0 && last != FLAKY_ALERT_RECOVERED ?
		    FLAKY_ALERT_RECOVERED : -1;
	default:
		return -1;
	}
}

void
flaky_alert_tests_free(struct flaky_alert_test *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		free(v[i].test);
	free(v);
}

/* One row of sql_window. */
static int
window_row(struct sql_stmt *st, struct flaky_alert_test *t)
{
	const char *kind = (const char *)sql_column_text(st, 6);

	memset(t, 0, sizeof *t);
	t->test_id = sql_column_int64(st, 0);
	if ((t->test = strdup((const char *)sql_column_text(st, 1))) ==
	    NULL)
		return -ENOMEM;
	t->runs = sql_column_int64(st, 2);
	t->failures = sql_column_int64(st, 3);
	t->failed = sql_column_int(st, 4);
	t->passed = sql_column_int(st, 5) && !t->failed;
	t->last_kind = kind != NULL ? flaky_alert_kind_from_name(kind) : -1;
	t->quarantined = sql_column_type(st, 7) != SQL_NULL;
	t->release_told = sql_column_int(st, 8);
	return 0;
}

int
flaky_store_alert_window(struct flaky_store *s, int64_t target_id,
    int64_t run_id, int64_t run_ms, int window,
    struct flaky_alert_test **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_alert_test *v = NULL;
	struct sql_stmt	*st;
	size_t		 n = 0, cap = 0;
	int		 r, rc;

	*ret = NULL;
	*ret_n = 0;
	if ((r = store_prepare(s, store_sql_alert_window, &st, err,
	    errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, target_id);
	sql_bind_int64(st, 2, run_id);
	sql_bind_int(st, 3, window);
	sql_bind_int64(st, 4, run_ms);
	while ((rc = sql_step(st)) == SQL_ROW) {
		if (flaky_array_grow(&v, &cap, n, sizeof *v) < 0 ||
		    window_row(st, &v[n]) < 0) {
			r = flaky_error(err, errlen, ENOMEM, "out of memory");
			goto out;
		}
		n++;
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading a test's window");
out:
	sql_finalize(st);
	if (r < 0) {
		flaky_alert_tests_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int
flaky_store_alert_cursor(struct flaky_store *s, int64_t target_id,
    int64_t *ret, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	/* A target seen for the first time starts at its newest run: alerts
	 * are about what happens from now on, not the history. */
	if ((r = store_prepare(s, "INSERT INTO alert_cursor (target_id, "
	    "run_id) SELECT ?1, coalesce(max(id), 0) FROM runs WHERE "
	    "target_id = ?1 ON CONFLICT (target_id) DO NOTHING", &st, err,
	    errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, target_id);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "starting alerts");
	sql_finalize(st);
	if (r < 0)
		return r;
	return store_scalar(s, "SELECT run_id FROM alert_cursor WHERE "
	    "target_id = ?1", target_id, 0, ret, err, errlen);
}

int
flaky_store_alert_next_run(struct flaky_store *s, int64_t target_id,
    int64_t after, int64_t *ret_run, int64_t *ret_ms, char *err,
    size_t errlen)
{
	struct sql_stmt	*st;
	int		 r, rc;

	/* Not past a run still running: it is looked at once stored. */
	if ((r = store_prepare(s, "SELECT id, started_ms, status = 'running' "
	    "FROM runs WHERE target_id = ?1 AND id > ?2 AND (status = "
	    "'running' OR " COUNTED ") ORDER BY id LIMIT 1", &st, err,
	    errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, target_id);
	sql_bind_int64(st, 2, after);
	if ((rc = sql_step(st)) == SQL_ROW &&
	    sql_column_int(st, 2) == 0) {
		*ret_run = sql_column_int64(st, 0);
		*ret_ms = sql_column_int64(st, 1);
		r = 1;
	} else if (rc != SQL_ROW && rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading runs for alerts");
	sql_finalize(st);
	return r;
}

int
flaky_store_alert_set_cursor(struct flaky_store *s, int64_t target_id,
    int64_t run_id, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	if ((r = store_prepare(s, "UPDATE alert_cursor SET run_id = ?2 "
	    "WHERE target_id = ?1", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, target_id);
	sql_bind_int64(st, 2, run_id);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "moving the alert cursor");
	sql_finalize(st);
	return r;
}

/* One delivery row per receiver of a new event. */
static int
add_deliveries(struct flaky_store *s, int64_t id, const char *const *names,
    size_t n, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	if ((r = store_prepare(s, "INSERT OR IGNORE INTO alert_deliveries "
	    "(alert_id, receiver) VALUES (?1, ?2)", &st, err, errlen)) < 0)
		return r;
	for (size_t i = 0; i < n && r == 0; i++) {
		sql_bind_int64(st, 1, id);
		sql_bind_text(st, 2, names[i], -1, SQL_STATIC);
		if (sql_step(st) != SQL_DONE)
			r = store_sql_error(s, err, errlen,
			    "adding a delivery");
		sql_reset(st);
	}
	sql_finalize(st);
	return r;
}

int
flaky_store_alert_add(struct flaky_store *s, const struct flaky_alert *a,
    const char *const *receivers, size_t nreceivers, char *err,
    size_t errlen)
{
	struct sql_stmt	*st;
	int64_t		 id = 0;
	int		 r;

	if ((r = store_prepare(s, "INSERT INTO alerts (test_id, kind, at_ms, "
	    "run_id, tier, runs, failures, passes, needed, created_ms) VALUES "
	    "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT DO NOTHING",
	    &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, a->test_id);
	sql_bind_text(st, 2, flaky_alert_kind_name(a->kind), -1,
	    SQL_STATIC);
	sql_bind_int64(st, 3, a->at_ms);
	sql_bind_int64(st, 4, a->run_id);
	sql_bind_text(st, 5, flaky_tier_name(flaky_tier(a->failures,
	    a->runs)), -1, SQL_STATIC);
	sql_bind_int64(st, 6, a->runs);
	sql_bind_int64(st, 7, a->failures);
	if (a->kind == FLAKY_ALERT_RELEASE) {
		sql_bind_int64(st, 8, a->passes);
		sql_bind_int64(st, 9, a->needed);
	}
	sql_bind_int64(st, 10, a->created_ms);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "adding an alert");
	else if (sql_changes(store_db(s)) > 0)
		id = sql_last_insert_rowid(store_db(s));
	sql_finalize(st);
	if (r < 0 || id == 0)
		return r;
	if ((r = add_deliveries(s, id, receivers, nreceivers, err,
	    errlen)) < 0)
		return r;
	return 1;
}

/* The columns of an event, its test and target (at offset 0). */
#define ALERT_COLS "a.id, a.test_id, a.kind, a.at_ms, a.run_id, a.runs, " \
	"a.failures, coalesce(a.passes, -1), coalesce(a.needed, -1), " \
	"a.created_ms, t.name, tg.name"
#define ALERT_NCOLS 12

/* An event from the row of ALERT_COLS. */
static int
alert_row(struct sql_stmt *st, struct flaky_alert *a)
{
	memset(a, 0, sizeof *a);
	a->id = sql_column_int64(st, 0);
	a->test_id = sql_column_int64(st, 1);
	a->kind = flaky_alert_kind_from_name(
	    (const char *)sql_column_text(st, 2));
	a->at_ms = sql_column_int64(st, 3);
	a->run_id = sql_column_int64(st, 4);
	a->runs = sql_column_int64(st, 5);
	a->failures = sql_column_int64(st, 6);
	a->passes = sql_column_int64(st, 7);
	a->needed = sql_column_int64(st, 8);
	a->created_ms = sql_column_int64(st, 9);
	a->test = strdup((const char *)sql_column_text(st, 10));
	a->target = strdup((const char *)sql_column_text(st, 11));
	return a->test == NULL || a->target == NULL ? -ENOMEM : 0;
}

void
flaky_alert_clear(struct flaky_alert *a)
{
	if (a == NULL)
		return;
	free(a->test);
	free(a->target);
	for (size_t i = 0; i < a->nd; i++) {
		free(a->d[i].receiver);
		free(a->d[i].error);
	}
	free(a->d);
	memset(a, 0, sizeof *a);
}

int
flaky_store_alert_next(struct flaky_store *s, const char *receiver,
    struct flaky_alert *a, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r, rc;

	memset(a, 0, sizeof *a);
	if ((r = store_prepare(s, "SELECT " ALERT_COLS ", d.attempts, "
	    "d.next_ms FROM alert_deliveries d "
	    "JOIN alerts a ON a.id = d.alert_id "
	    "JOIN tests t ON t.id = a.test_id "
	    "JOIN targets tg ON tg.id = t.target_id "
	    "WHERE d.receiver = ?1 AND d.state = 'pending' "
	    "ORDER BY d.alert_id LIMIT 1", &st, err, errlen)) < 0)
		return r;
	sql_bind_text(st, 1, receiver, -1, SQL_STATIC);
	if ((rc = sql_step(st)) == SQL_ROW) {
		if (alert_row(st, a) < 0) {
			flaky_alert_clear(a);
			r = flaky_error(err, errlen, ENOMEM, "out of memory");
		} else {
			a->attempts = sql_column_int64(st, ALERT_NCOLS);
			a->next_ms = sql_column_int64(st, ALERT_NCOLS + 1);
			r = 1;
		}
	} else if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading alerts");
	sql_finalize(st);
	return r;
}

int
flaky_store_alert_mark(struct flaky_store *s, int64_t alert_id,
    const char *receiver, int state, int64_t attempts, int64_t next_ms,
    const char *error, int64_t now_ms, char *err, size_t errlen)
{
	static const char *const states[] = { "pending", "delivered",
	    "failed" };
	struct sql_stmt	*st;
	int		 r;

	if ((r = store_prepare(s, "UPDATE alert_deliveries SET state = ?3, "
	    "attempts = ?4, next_ms = ?5, last_error = ?6, done_ms = "
	    "CASE WHEN ?3 = 'pending' THEN NULL ELSE ?7 END "
	    "WHERE alert_id = ?1 AND receiver = ?2", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, alert_id);
	sql_bind_text(st, 2, receiver, -1, SQL_STATIC);
	sql_bind_text(st, 3, states[state], -1, SQL_STATIC);
	sql_bind_int64(st, 4, attempts);
	sql_bind_int64(st, 5, next_ms);
	if (error != NULL)
		sql_bind_text(st, 6, error, -1, SQL_STATIC);
	sql_bind_int64(st, 7, now_ms);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "recording a delivery");
	sql_finalize(st);
	return r;
}

/* A delivery's state as stored, as a code. */
static int
state_code(const char *s)
{
	return strcmp(s, "pending") == 0 ? 0 : strcmp(s, "delivered") == 0 ?
	    1 : 2;
}

/* The deliveries of each event of v (sorted by id). */
static int
list_deliveries(struct flaky_store *s, struct flaky_alert *v, size_t n,
    char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r, rc;

	if ((r = store_prepare(s, "SELECT receiver, state, attempts, "
	    "last_error, done_ms FROM alert_deliveries WHERE alert_id = ?1 "
	    "ORDER BY receiver", &st, err, errlen)) < 0)
		return r;
	for (size_t i = 0; i < n && r == 0; i++) {
		size_t	 cap = 0;

		sql_bind_int64(st, 1, v[i].id);
		while ((rc = sql_step(st)) == SQL_ROW) {
			struct flaky_alert_delivery *d;
			const char *e;

			e = (const char *)sql_column_text(st, 3);

			if (flaky_array_grow(&v[i].d, &cap, v[i].nd,
			    sizeof *v[i].d) < 0)
				return flaky_error(err, errlen, ENOMEM,
				    "out of memory");
			d = &v[i].d[v[i].nd++];
			memset(d, 0, sizeof *d);
			d->receiver = strdup((const char *)
			    sql_column_text(st, 0));
			d->state = state_code((const char *)
			    sql_column_text(st, 1));
			d->attempts = sql_column_int64(st, 2);
			d->error = e != NULL ? strdup(e) : NULL;
			d->done_ms = sql_column_int64(st, 4);
			if (d->receiver == NULL || (e != NULL &&
			    d->error == NULL))
				rc = SQL_NOMEM;
		}
		if (rc != SQL_DONE)
			r = store_sql_error(s, err, errlen,
			    "reading deliveries");
		sql_reset(st);
	}
	sql_finalize(st);
	return r;
}

int
flaky_store_alerts_list(struct flaky_store *s, int64_t since_ms,
    struct flaky_alert **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_alert *v = NULL;
	struct sql_stmt	*st;
	size_t		 n = 0, cap = 0;
	int		 r, rc;

	*ret = NULL;
	*ret_n = 0;
	if ((r = store_prepare(s, "SELECT " ALERT_COLS " FROM alerts a "
	    "JOIN tests t ON t.id = a.test_id "
	    "JOIN targets tg ON tg.id = t.target_id "
	    "WHERE a.created_ms >= ?1 ORDER BY a.id", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, since_ms);
	while ((rc = sql_step(st)) == SQL_ROW) {
		if (flaky_array_grow(&v, &cap, n, sizeof *v) < 0 ||
		    alert_row(st, &v[n++]) < 0) {
			r = flaky_error(err, errlen, ENOMEM, "out of memory");
			break;
		}
	}
	if (r == 0 && rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading alerts");
	sql_finalize(st);
	if (r == 0)
		r = list_deliveries(s, v, n, err, errlen);
	if (r < 0) {
		flaky_alerts_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

void
flaky_alerts_free(struct flaky_alert *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		flaky_alert_clear(&v[i]);
	free(v);
}
