/* Flips: a test that failed and passed on one revision (issue 29,
 * docs/schema.md "revision_outcomes"). The same code with both outcomes
 * is flaky evidence that needs no rate: CI jobs and their reruns find it
 * (Trunk, BuildPulse and Datadog detect flakiness so), and so do flakyd's
 * reruns of one HEAD.
 *
 * revision_outcomes holds, for each test that failed at a revision, how
 * many counted runs of that revision it failed and passed in. Each stored
 * run adds to it in its own transaction:
 *   - its outcome of every test that has a row at its revision;
 *   - a row for each test that fails at its revision for the first time,
 *     with the earlier runs of the revision in which it passed.
 * The second needs the test's outcome in earlier runs, and results are
 * kept by run and position (no index by test, which would cost every
 * insert): it is read at the test's position in this run, where a rerun
 * of one revision has it unless the order changed, and else from the
 * whole earlier run, read once. The earlier runs read are the newest
 * FLIPS_PRIOR_MAX of the revision. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

#define FLIPS_PRIOR_MAX	100	/* earlier runs of a revision read */

/* A run's outcomes by test id: open addressing, test id 0 is empty. */
struct omap {
	int64_t		*tid;
	unsigned char	*out;		/* 1 failed, 2 passed, 0 other */
	int64_t		*pos;
	size_t		 size, n;	/* size: a power of two */
	int		 loaded;
};

/* The slot of tid (its own, or the empty one it would take). */
static size_t
omap_slot(const struct omap *m, int64_t tid)
{
	size_t	 i = (size_t)((uint64_t)tid * 0x9e3779b97f4a7c15ULL) &
	    (m->size - 1);

	while (m->tid[i] != 0 && m->tid[i] != tid)
		i = (i + 1) & (m->size - 1);
	return i;
}

/* Add tid; 0 or -ENOMEM. */
static int
omap_put(struct omap *m, int64_t tid, int out, int64_t pos)
{
	size_t	 i;

	if (2 * (m->n + 1) > m->size) {
		struct omap	 g = { 0 };

		g.size = m->size ? m->size * 2 : 1024;
		if ((g.tid = calloc(g.size, sizeof *g.tid)) == NULL ||
		    (g.out = calloc(g.size, 1)) == NULL ||
		    (g.pos = calloc(g.size, sizeof *g.pos)) == NULL) {
			free(g.tid);
			free(g.out);
			return -ENOMEM;
		}
		for (size_t k = 0; k < m->size; k++)
			if (m->tid[k] != 0) {
				i = omap_slot(&g, m->tid[k]);
				g.tid[i] = m->tid[k];
				g.out[i] = m->out[k];
				g.pos[i] = m->pos[k];
				g.n++;
			}
		free(m->tid);
		free(m->out);
		free(m->pos);
		g.loaded = m->loaded;
		*m = g;
	}
	i = omap_slot(m, tid);
	if (m->tid[i] == 0)
		m->n++;
	m->tid[i] = tid;
	m->out[i] = (unsigned char)out;
	m->pos[i] = pos;
	return 0;
}

/* tid's outcome (1 failed, 2 passed, 0 other), -1 when not in the run;
 * its position into *pos. */
static int
omap_get(const struct omap *m, int64_t tid, int64_t *pos)
{
	size_t	 i;

	if (m->size == 0)
		return -1;
	i = omap_slot(m, tid);
	if (m->tid[i] == 0)
		return -1;
	if (pos != NULL)
		*pos = m->pos[i];
	return m->out[i];
}

static void
omap_free(struct omap *m)
{
	free(m->tid);
	free(m->out);
	free(m->pos);
	memset(m, 0, sizeof *m);
}

/* 1 failed, 2 passed (pass or xpass), 0 anything else. */
static int
kind_of(int64_t outcome)
{
	return outcome == FLAKY_FAIL || outcome == FLAKY_ERROR ? 1 :
	    outcome == FLAKY_PASS || outcome == FLAKY_XPASS ? 2 : 0;
}

/* Every result of run into m. */
static int
omap_load(struct flaky_store *s, int64_t run, struct omap *m, char *err,
    size_t errlen)
{
	struct sql_stmt	*st;
	int		 r, rc;

	if ((r = store_prepare(s, "SELECT test_id, outcome, position FROM "
	    "results WHERE run_id = ?1", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, run);
	while ((rc = sql_step(st)) == SQL_ROW)
		if (omap_put(m, sql_column_int64(st, 0),
		    kind_of(sql_column_int64(st, 1)),
		    sql_column_int64(st, 2)) < 0) {
			sql_finalize(st);
			return flaky_error(err, errlen, ENOMEM,
			    "out of memory");
		}
	sql_finalize(st);
	if (rc != SQL_DONE)
		return store_sql_error(s, err, errlen, "reading a run's results");
	m->loaded = 1;
	return 0;
}

/* The earlier counted runs of the revision, newest first. */
static int
prior_runs(struct flaky_store *s, int64_t run, int64_t target,
    const char *rev, int64_t *v, size_t *n, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r, rc;

	*n = 0;
	if ((r = store_prepare(s, "SELECT id FROM runs WHERE target_id = ?1 "
	    "AND revision = ?2 AND id <> ?3 AND kind <> 'alone' AND "
	    "incomplete IS NULL AND status <> 'running' ORDER BY id DESC "
	    "LIMIT ?4", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, target);
	sql_bind_text(st, 2, rev, -1, SQL_STATIC);
	sql_bind_int64(st, 3, run);
	sql_bind_int64(st, 4, FLIPS_PRIOR_MAX);
	while ((rc = sql_step(st)) == SQL_ROW && *n < FLIPS_PRIOR_MAX)
		v[(*n)++] = sql_column_int64(st, 0);
	sql_finalize(st);
	return rc == SQL_DONE ? 0 : store_sql_error(s, err, errlen,
	    "reading the runs of a revision");
}

/* tid's outcome in an earlier run u: at its position in this run when
 * the run has it there, else from u's results, read whole once. */
static int
prior_outcome(struct flaky_store *s, int64_t u, struct omap *um,
    int64_t tid, int64_t pos, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r, o = -1;

	if (!um->loaded) {
		if ((r = store_prepare(s, "SELECT test_id, outcome FROM results "
		    "WHERE run_id = ?1 AND position = ?2", &st, err,
		    errlen)) < 0)
			return r;
		sql_bind_int64(st, 1, u);
		sql_bind_int64(st, 2, pos);
		if (sql_step(st) == SQL_ROW && sql_column_int64(st, 0) == tid)
			o = kind_of(sql_column_int64(st, 1));
		sql_finalize(st);
		if (o >= 0)
			return o;
		if ((r = omap_load(s, u, um, err, errlen)) < 0)
			return r;
	}
	o = omap_get(um, tid, NULL);
	return o < 0 ? 0 : o;
}

/* The rows of the revision's tests (of this target) that failed there
 * before, with this run's outcome of each added; marks them done in
 * seen. */
static int
update_rows(struct flaky_store *s, int64_t run, int64_t target,
    const char *rev, int64_t started, const struct omap *x,
    struct omap *seen, char *err, size_t errlen)
{
	struct sql_stmt	*st, *up;
	int		 r, rc;

	if ((r = store_prepare(s, "SELECT o.test_id FROM revision_outcomes o "
	    "JOIN tests t ON t.id = o.test_id WHERE o.revision = ?1 AND "
	    "t.target_id = ?2", &st, err, errlen)) < 0)
		return r;
	if ((r = store_prepare(s, "UPDATE revision_outcomes SET fails = fails "
	    "+ ?3, passes = passes + ?4, pass_run = coalesce(pass_run, ?5), "
	    "last_ms = CASE WHEN last_ms > ?6 THEN last_ms ELSE ?6 END, "
	    "first_ms = CASE WHEN first_ms < ?6 THEN first_ms ELSE ?6 END "
	    "WHERE test_id = ?1 AND revision = ?2", &up, err, errlen)) < 0) {
		sql_finalize(st);
		return r;
	}
	sql_bind_text(st, 1, rev, -1, SQL_STATIC);
	sql_bind_int64(st, 2, target);
	while ((rc = sql_step(st)) == SQL_ROW) {
		int64_t	 tid = sql_column_int64(st, 0);
		int	 o = omap_get(x, tid, NULL);

		if (omap_put(seen, tid, 0, 0) < 0) {
			r = flaky_error(err, errlen, ENOMEM, "out of memory");
			break;
		}
		if (o <= 0)
			continue;
		sql_reset(up);
		sql_bind_int64(up, 1, tid);
		sql_bind_text(up, 2, rev, -1, SQL_STATIC);
		sql_bind_int64(up, 3, o == 1);
		sql_bind_int64(up, 4, o == 2);
		if (o == 2)
			sql_bind_int64(up, 5, run);
		else
			sql_bind_null(up, 5);
		sql_bind_int64(up, 6, started);
		if (sql_step(up) != SQL_DONE) {
			r = store_sql_error(s, err, errlen, "counting a "
			    "revision's outcomes");
			break;
		}
	}
	if (r == 0 && rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading a revision's "
		    "outcomes");
	sql_finalize(st);
	sql_finalize(up);
	return r;
}

/* A row for a test failing at the revision for the first time: its
 * passes in the earlier runs. */
static int
new_row(struct flaky_store *s, int64_t run, const char *rev, int64_t started,
    int64_t tid, int64_t pos, const int64_t *prior, struct omap *pm,
    size_t np, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int64_t		 passes = 0, pass_run = 0;
	int		 r, o;

	/* oldest first, for the first run it passed in */
	for (size_t k = np; k-- > 0;) {
		if ((o = prior_outcome(s, prior[k], &pm[k], tid, pos, err,
		    errlen)) < 0)
			return o;
		if (o == 2) {
			passes++;
			if (pass_run == 0)
				pass_run = prior[k];
		}
	}
	if ((r = store_prepare(s, "INSERT INTO revision_outcomes (test_id, "
	    "revision, fails, passes, fail_run, pass_run, first_ms, last_ms) "
	    "VALUES (?1, ?2, 1, ?3, ?4, ?5, ?6, ?6)", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, tid);
	sql_bind_text(st, 2, rev, -1, SQL_STATIC);
	sql_bind_int64(st, 3, passes);
	sql_bind_int64(st, 4, run);
	if (pass_run > 0)
		sql_bind_int64(st, 5, pass_run);
	sql_bind_int64(st, 6, started);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "adding a revision's "
		    "outcomes");
	sql_finalize(st);
	return r;
}

/* Has the revision rows of this target's tests? 1, 0, or -errno. */
static int
has_rows(struct flaky_store *s, int64_t target, const char *rev, char *err,
    size_t errlen)
{
	struct sql_stmt	*st;
	int		 r, rc;

	if ((r = store_prepare(s, "SELECT 1 FROM revision_outcomes o JOIN "
	    "tests t ON t.id = o.test_id WHERE o.revision = ?1 AND "
	    "t.target_id = ?2 LIMIT 1", &st, err, errlen)) < 0)
		return r;
	sql_bind_text(st, 1, rev, -1, SQL_STATIC);
	sql_bind_int64(st, 2, target);
	rc = sql_step(st);
	sql_finalize(st);
	if (rc != SQL_ROW && rc != SQL_DONE)
		return store_sql_error(s, err, errlen, "reading a revision's "
		    "outcomes");
	return rc == SQL_ROW;
}

/* A stored run's part of the flips (store_ci.h): nothing to do for a run
 * without failures at a revision where no test failed before. */
int
store_flips_run(struct flaky_store *s, int64_t run, int64_t target,
    const char *rev, int64_t started, int64_t failures, char *err,
    size_t errlen)
{
	struct omap	 x = { 0 }, seen = { 0 }, *pm = NULL;
	int64_t		 prior[FLIPS_PRIOR_MAX];
	size_t		 np = 0;
	int		 r;

	if (rev == NULL || *rev == '\0')
		return 0;
	if (target == 0 && (r = store_scalar(s, "SELECT target_id FROM runs "
	    "WHERE id = ?1", run, 0, &target, err, errlen)) < 0)
		return r;
	if (failures == 0 && (r = has_rows(s, target, rev, err, errlen)) <= 0)
		return r;
	if ((r = omap_load(s, run, &x, err, errlen)) < 0)
		goto out;
	if ((r = update_rows(s, run, target, rev, started, &x, &seen, err,
	    errlen)) < 0)
		goto out;
	for (size_t i = 0; i < x.size; i++) {
		if (x.tid[i] == 0 || x.out[i] != 1 ||
		    omap_get(&seen, x.tid[i], NULL) >= 0)
			continue;
		/* the earlier runs, once a new failure needs them */
		if (pm == NULL) {
			if ((r = prior_runs(s, run, target, rev, prior, &np,
			    err, errlen)) < 0)
				goto out;
			if ((pm = calloc(np + 1, sizeof *pm)) == NULL) {
				r = flaky_error(err, errlen, ENOMEM,
				    "out of memory");
				goto out;
			}
		}
		if ((r = new_row(s, run, rev, started, x.tid[i], x.pos[i],
		    prior, pm, np, err, errlen)) < 0)
			goto out;
	}
	r = 0;
out:
	for (size_t k = 0; pm != NULL && k < np; k++)
		omap_free(&pm[k]);
	free(pm);
	omap_free(&x);
	omap_free(&seen);
	return r;
}

/* A test's flips seen in the window (store_ci.h). */
int
flaky_store_test_flips(struct flaky_store *s, int64_t test_id,
    int64_t since_ms, int64_t until_ms, struct flaky_flip **ret,
    size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_flip *v = NULL;
	struct sql_stmt	*st;
	size_t		 n = 0, cap = 0;
	int		 r, rc, oom = 0;

	*ret = NULL;
	*ret_n = 0;
	if ((r = store_prepare(s, "SELECT o.revision, o.fails, o.passes, "
	    "o.first_ms, o.last_ms, o.fail_run, o.pass_run, fc.job, "
	    "coalesce(fc.attempt, 0), pc.job, coalesce(pc.attempt, 0) FROM "
	    "revision_outcomes o LEFT JOIN run_ci fc ON fc.run_id = o.fail_run "
	    "LEFT JOIN run_ci pc ON pc.run_id = o.pass_run WHERE o.test_id = "
	    "?1 AND o.fails > 0 "
	    "AND o.passes > 0 AND o.last_ms >= ?2 AND o.last_ms < ?3 ORDER BY "
	    "o.last_ms DESC, o.revision", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, test_id);
	sql_bind_int64(st, 2, since_ms);
	sql_bind_int64(st, 3, until_ms);
	while (!oom && (rc = sql_step(st)) == SQL_ROW) {
		struct flaky_flip *f;

		if (flaky_array_grow(&v, &cap, n, sizeof *v) < 0) {
			oom = 1;
			break;
		}
		f = &v[n++];
		memset(f, 0, sizeof *f);
		f->revision = store_col_dup(st, 0, &oom);
		f->fails = sql_column_int64(st, 1);
		f->passes = sql_column_int64(st, 2);
		f->first_ms = sql_column_int64(st, 3);
		f->last_ms = sql_column_int64(st, 4);
		f->fail_run = sql_column_int64(st, 5);
		f->pass_run = sql_column_int64(st, 6);
		f->fail_job = store_col_dup(st, 7, &oom);
		f->fail_attempt = (int)sql_column_int64(st, 8);
		f->pass_job = store_col_dup(st, 9, &oom);
		f->pass_attempt = (int)sql_column_int64(st, 10);
	}
	sql_finalize(st);
	if (oom || rc != SQL_DONE) {
		flaky_flips_free(v, n);
		return oom ? flaky_error(err, errlen, ENOMEM, "out of memory") :
		    store_sql_error(s, err, errlen, "reading flips");
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* How many revisions each test flipped on in the window. */
int
flaky_store_flip_counts(struct flaky_store *s, int64_t target_id,
    int64_t since_ms, int64_t until_ms, struct flaky_flip_count **ret,
    size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_flip_count *v = NULL;
	struct sql_stmt	*st;
	size_t		 n = 0, cap = 0;
	int		 r, rc;

	*ret = NULL;
	*ret_n = 0;
	if ((r = store_prepare(s, "SELECT o.test_id, count(*), max(o.last_ms) "
	    "FROM revision_outcomes o JOIN tests t ON t.id = o.test_id WHERE "
	    "o.passes > 0 AND o.fails > 0 AND o.last_ms >= ?2 AND o.last_ms < "
	    "?3 AND (?1 = 0 OR t.target_id = ?1) GROUP BY o.test_id ORDER BY "
	    "o.test_id", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, target_id);
	sql_bind_int64(st, 2, since_ms);
	sql_bind_int64(st, 3, until_ms);
	while ((rc = sql_step(st)) == SQL_ROW) {
		if (flaky_array_grow(&v, &cap, n, sizeof *v) < 0) {
			sql_finalize(st);
			free(v);
			return flaky_error(err, errlen, ENOMEM, "out of memory");
		}
		v[n].test_id = sql_column_int64(st, 0);
		v[n].revisions = sql_column_int64(st, 1);
		v[n].last_ms = sql_column_int64(st, 2);
		n++;
	}
	sql_finalize(st);
	if (rc != SQL_DONE) {
		free(v);
		return store_sql_error(s, err, errlen, "counting flips");
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

void
flaky_flips_free(struct flaky_flip *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++) {
		free(v[i].revision);
		free(v[i].fail_job);
		free(v[i].pass_job);
	}
	free(v);
}
