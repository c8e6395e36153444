/* The SQL behind co-failure clusters (lib/diagnose/cluster.c): which runs
 * of the window count, which tests failed in them (through the partial
 * index of failures) and which runs each of those tests ran in (one range
 * scan of the window's results, clustered by run). Everything here reads. */
#include "buildconf.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

/* The runs that count: finished, complete, not alone (one test by itself
 * fails with nothing) nor of only some tests (issue 18: the others were
 * not there to fail with it), of the window and target, newest first. */
static const char sql_runs[] =
    "SELECT ru.id, ru.target_id, ru.started_ms FROM runs ru "
    "JOIN targets tg ON tg.id = ru.target_id "
    "WHERE (tg.name = ?1 OR ?1 IS NULL) AND ru.started_ms >= ?2 "
    "AND ru.started_ms < ?3 AND ru.id BETWEEN ?4 AND ?5 "
    "AND ru.status IN ('done', 'timeout') AND ru.incomplete IS NULL "
    "AND ru.kind != 'alone' AND ru.selected IS NULL "
    "ORDER BY ru.id DESC LIMIT ?6";

/* Every failure in a range of run ids, by test: the partial index
 * results_failed holds exactly these rows. */
const char store_sql_cofail_fails[] =
    "SELECT r.test_id, r.run_id, m.fingerprint, m.normalized, r.signature "
    "FROM results r INDEXED BY results_failed "
    "LEFT JOIN messages m ON m.id = r.message_id "
    "WHERE r.outcome IN (1, 2) AND r.run_id BETWEEN ?1 AND ?2 "
    "ORDER BY r.test_id, r.run_id";

/* Who ran in a range of runs: the results' own order (run, position).
 * On PostgreSQL only the kept tests' rows (?3), which are a few of the
 * suite's: every row there crosses the network. */
static const char sql_ran[] =
    "SELECT run_id, test_id FROM results "
    "WHERE run_id BETWEEN ?1 AND ?2 AND outcome IN (0, 1, 2, 5)";
static const char sql_ran_kept[] =
    "SELECT run_id, test_id FROM results "
    "WHERE run_id BETWEEN ?1 AND ?2 AND outcome IN (0, 1, 2, 5) "
    "AND test_id IN (SELECT value FROM json_each(?3))";

static const char sql_names[] =
    "SELECT t.id, t.name, tg.id, tg.name FROM tests t "
    "JOIN targets tg ON tg.id = t.target_id "
    "WHERE t.id IN (SELECT value FROM json_each(?1)) ORDER BY t.id";

/* A text column copied (NULL stays NULL); -ENOMEM on failure. */
static int
dup_col(struct sql_stmt *st, int i, char **ret)
{
	const unsigned char *t = sql_column_text(st, i);

	*ret = NULL;
	if (t != NULL && (*ret = strdup((const char *)t)) == NULL)
		return -ENOMEM;
	return 0;
}

/* The index of run id among the runs (sorted), or -1. */
static long
run_index(const struct flaky_cofail *c, int64_t id)
{
	size_t	 lo = 0, hi = c->nruns;

	while (lo < hi) {
		size_t	 mid = lo + (hi - lo) / 2;

		if (c->runs[mid].id == id)
			return (long)mid;
		if (c->runs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The test of an id among the tests kept (sorted), or NULL. */
static struct flaky_cofail_test *
test_find(const struct flaky_cofail *c, int64_t id)
{
	size_t	 lo = 0, hi = c->ntests;

	while (lo < hi) {
		size_t	 mid = lo + (hi - lo) / 2;

		if (c->tests[mid].test_id == id)
			return &c->tests[mid];
		if (c->tests[mid].test_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Free one test's arrays and strings. */
static void
test_clear(struct flaky_cofail_test *t)
{
	for (size_t i = 0; i < t->nfails; i++) {
		free(t->fails[i].normalized);
		free(t->fails[i].signature);
	}
	free(t->fails);
	free(t->ran);
	free(t->target);
	free(t->name);
	memset(t, 0, sizeof *t);
}

void
flaky_cofail_free(struct flaky_cofail *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->ntests; i++)
		test_clear(&c->tests[i]);
	free(c->tests);
	free(c->runs);
	memset(c, 0, sizeof *c);
}

/* The runs of the window, oldest first. */
static int
read_runs(struct flaky_store *s, const struct flaky_query *q,
    size_t max_runs, struct flaky_cofail *c)
{
	struct sql_stmt	*st;
	size_t		 cap = 0;
	int		 rc;

	if (sql_prepare_v2(store_db(s), sql_runs, -1, &st, NULL) !=
	    SQL_OK)
		return -EIO;
	if (q->target != NULL)
		sql_bind_text(st, 1, q->target, -1, SQL_STATIC);
	sql_bind_int64(st, 2, q->since_ms);
	sql_bind_int64(st, 3, q->until_ms);
	sql_bind_int64(st, 4, q->first_run_id > 0 ? q->first_run_id : 0);
	sql_bind_int64(st, 5, q->last_run_id > 0 ? q->last_run_id :
	    INT64_MAX);
	sql_bind_int64(st, 6, max_runs > 0 ? (int64_t)max_runs : -1);
	while ((rc = sql_step(st)) == SQL_ROW) {
		if (flaky_array_grow(&c->runs, &cap, c->nruns,
		    sizeof *c->runs) < 0) {
			sql_finalize(st);
			return -ENOMEM;
		}
		c->runs[c->nruns].id = sql_column_int64(st, 0);
		c->runs[c->nruns].target_id = sql_column_int64(st, 1);
		c->runs[c->nruns].started_ms = sql_column_int64(st, 2);
		c->nruns++;
	}
	sql_finalize(st);
	if (rc != SQL_DONE)
		return -EIO;
	for (size_t i = 0; i < c->nruns / 2; i++) {
		struct flaky_cofail_run t = c->runs[i];

		c->runs[i] = c->runs[c->nruns - 1 - i];
		c->runs[c->nruns - 1 - i] = t;
	}
	return 0;
}

/* Keep the test read (cur) when it failed often enough, else drop it. */
static int
settle_test(struct flaky_cofail *c, size_t *cap,
    struct flaky_cofail_test *cur, int64_t min_failures)
{
	if (cur->test_id == 0 || (int64_t)cur->nfails < min_failures) {
		test_clear(cur);
		return 0;
	}
	if (flaky_array_grow(&c->tests, cap, c->ntests, sizeof *c->tests) < 0) {
		test_clear(cur);
		return -ENOMEM;
	}
	c->tests[c->ntests++] = *cur;
	memset(cur, 0, sizeof *cur);
	return 0;
}

/* Add one failure row to the test being read. */
static int
add_fail(struct flaky_cofail_test *t, size_t *cap, struct sql_stmt *st,
    uint32_t run)
{
	struct flaky_cofail_fail *f;

	if (t->nfails > 0 && t->fails[t->nfails - 1].run == run)
		return 0;	/* a test id twice in a run */
	if (flaky_array_grow(&t->fails, cap, t->nfails, sizeof *t->fails) < 0)
		return -ENOMEM;
	f = &t->fails[t->nfails++];
	memset(f, 0, sizeof *f);
	f->run = run;
	f->fingerprint = sql_column_int64(st, 2);
	if (dup_col(st, 3, &f->normalized) < 0 ||
	    dup_col(st, 4, &f->signature) < 0)
		return -ENOMEM;
	return 0;
}

/* The failures of the window's runs; tests with fewer than min_failures
 * are not kept. */
static int
read_fails(struct flaky_store *s, int64_t min_failures,
    struct flaky_cofail *c)
{
	struct flaky_cofail_test cur = { 0 };
	struct sql_stmt	*st;
	size_t		 tcap = 0, fcap = 0;
	int		 rc, r = 0;

	if (sql_prepare_v2(store_db(s), store_sql_cofail_fails, -1, &st,
	    NULL) != SQL_OK)
		return -EIO;
	sql_bind_int64(st, 1, c->runs[0].id);
	sql_bind_int64(st, 2, c->runs[c->nruns - 1].id);
	while ((rc = sql_step(st)) == SQL_ROW) {
		int64_t	 id = sql_column_int64(st, 0);
		long	 run = run_index(c, sql_column_int64(st, 1));

		if (run < 0)
			continue;
		if (id != cur.test_id) {
			if ((r = settle_test(c, &tcap, &cur,
			    min_failures)) < 0)
				break;
			cur.test_id = id;
			fcap = 0;
		}
		if ((r = add_fail(&cur, &fcap, st, (uint32_t)run)) < 0)
			break;
	}
	sql_finalize(st);
	if (r == 0 && rc != SQL_DONE)
		r = -EIO;
	if (r == 0)
		r = settle_test(c, &tcap, &cur, min_failures);
	test_clear(&cur);
	return r;
}

/* The kept tests' ids as a JSON array, for json_each(); NULL: no memory. */
static char *
kept_json(const struct flaky_cofail *c)
{
	return store_ids_json_of(c->tests, c->ntests, sizeof *c->tests,
	    offsetof(struct flaky_cofail_test, test_id));
}

/* The names of the tests kept (sorted by id), in one statement. */
static int
read_names(struct flaky_store *s, struct flaky_cofail *c)
{
	struct sql_stmt	*st = NULL;
	char		*list;
	size_t		 i = 0, named = 0;
	int		 rc, r = 0;

	if ((list = kept_json(c)) == NULL)
		return -ENOMEM;
	if (sql_prepare_v2(store_db(s), sql_names, -1, &st, NULL) !=
	    SQL_OK) {
		free(list);
		return -EIO;
	}
	sql_bind_text(st, 1, list, -1, SQL_STATIC);
	while (r == 0 && (rc = sql_step(st)) == SQL_ROW) {
		int64_t	 id = sql_column_int64(st, 0);
		struct flaky_cofail_test *t;

		while (i < c->ntests && c->tests[i].test_id < id)
			i++;
		if (i == c->ntests || c->tests[i].test_id != id)
			continue;
		t = &c->tests[i];
		t->target_id = sql_column_int64(st, 2);
		if (dup_col(st, 1, &t->name) < 0 ||
		    dup_col(st, 3, &t->target) < 0)
			r = -ENOMEM;
		named++;
	}
	/* every kept test has its row */
	if (r == 0 && (rc != SQL_DONE || named != c->ntests))
		r = -EIO;
	sql_finalize(st);
	free(list);
	return r;
}

/* Test ids to kept tests, straight by id when the ids are dense enough
 * (they are rowids: 1, 2, 3 ...), else NULL and test_find's search. */
#define SLOTS_MAX	(1 << 24)

static int32_t *
test_slots(const struct flaky_cofail *c, int64_t *max)
{
	int32_t	*slot;

	*max = c->tests[c->ntests - 1].test_id;
	if (*max < 0 || *max >= SLOTS_MAX ||
	    (slot = malloc(((size_t)*max + 1) * sizeof *slot)) == NULL)
		return NULL;
	for (int64_t i = 0; i <= *max; i++)
		slot[i] = -1;
	for (size_t i = 0; i < c->ntests; i++)
		if (c->tests[i].test_id >= 0)
			slot[c->tests[i].test_id] = (int32_t)i;
	return slot;
}

/* The runs each kept test ran in. The rows come by run id: a run's index
 * is looked up once per run, a test's by its slot. */
static int
read_ran(struct flaky_store *s, struct flaky_cofail *c, size_t *caps)
{
	struct flaky_cofail_test *t;
	struct sql_stmt	*st;
	int32_t		*slot;
	int64_t		 max, last_id = -1, id;
	long		 run = -1;
	int		 rc, r = 0;

	int		 pg = sql_is_pg(store_db(s));
	char		*kept = NULL;

	if (pg && (kept = kept_json(c)) == NULL)
		return -ENOMEM;
	if (sql_prepare_v2(store_db(s), pg ? sql_ran_kept : sql_ran, -1, &st,
	    NULL) != SQL_OK) {
		free(kept);
		return -EIO;
	}
	slot = test_slots(c, &max);
	sql_bind_int64(st, 1, c->runs[0].id);
	sql_bind_int64(st, 2, c->runs[c->nruns - 1].id);
	if (kept != NULL)
		sql_bind_text(st, 3, kept, -1, SQL_STATIC);
	while ((rc = sql_step(st)) == SQL_ROW) {
		if ((id = sql_column_int64(st, 0)) != last_id) {
			last_id = id;
			run = run_index(c, id);
		}
		if (run < 0)
			continue;
		id = sql_column_int64(st, 1);
		if (slot != NULL)
			t = id >= 0 && id <= max && slot[id] >= 0 ?
			    &c->tests[slot[id]] : NULL;
		else
			t = test_find(c, id);
		if (t == NULL)
			continue;
		if (t->nran > 0 && t->ran[t->nran - 1] == (uint32_t)run)
			continue;	/* a test id twice in a run */
		if (flaky_array_grow(&t->ran, &caps[t - c->tests], t->nran,
		    sizeof *t->ran) < 0) {
			r = -ENOMEM;
			break;
		}
		t->ran[t->nran++] = (uint32_t)run;
	}
	sql_finalize(st);
	free(slot);
	free(kept);
	if (r == 0 && rc != SQL_DONE)
		r = -EIO;
	return r;
}

/* Co-failure evidence of the window. */
int
flaky_store_cofail(struct flaky_store *s, const struct flaky_query *q,
    int64_t min_failures, size_t max_runs, struct flaky_cofail *ret,
    char *err, size_t errlen)
{
	size_t	*caps = NULL;
	int	 r;

	memset(ret, 0, sizeof *ret);
	if (min_failures < 1)
		min_failures = 1;
	if ((r = read_runs(s, q, max_runs, ret)) < 0 || ret->nruns == 0)
		goto out;
	if ((r = read_fails(s, min_failures, ret)) < 0 || ret->ntests == 0)
		goto out;
	if ((r = read_names(s, ret)) < 0)
		goto out;
	if ((caps = calloc(ret->ntests, sizeof *caps)) == NULL) {
		r = -ENOMEM;
		goto out;
	}
	r = read_ran(s, ret, caps);
out:
	free(caps);
	if (r == -EIO)
		r = store_sql_error(s, err, errlen, "reading co-failures");
	else if (r == -ENOMEM)
		snprintf(err, errlen, "out of memory reading co-failures");
	if (r < 0)
		flaky_cofail_free(ret);
	return r;
}
