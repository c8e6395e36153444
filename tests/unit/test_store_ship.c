/* store ship: the outbox. Runs are queued in the order they finish, not
 * by id (a long run started first ends after a later one); a batch is
 * read whole with its results, tests and messages; only ship_done takes
 * it off the queue (read again until then); pruned runs are skipped; the
 * backlog counts what waits; the box id is made once, per database. */
#include "buildconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "parse/parse.h"
#include "store/store.h"
#include "util/util.h"
#include "test_db.h"
#include "test_helper.h"

#define T0	1793534400000LL

static char	 dir[64];
static char	 path[128];

static void
setup(void)
{
	tu_tmpdir(dir, sizeof dir, "ship");
	snprintf(path, sizeof path, "%s/flaky.db", dir);
}

static void
teardown(void)
{
	tu_rmdir(dir);
}

/* What a sink saw: run ids in order, results, tests, messages, and the
 * attempts as "run:position:attempt:outcome:message " each. */
struct seen {
	char	 runs[256];
	int	 results, tests, msgs;
	char	 attempts[256];
	char	 polluters[256];	/* "victim:run:made " each */
};

static int
on_run(void *arg, const char *const *v, const size_t *len, char *err,
    size_t errlen)
{
	struct seen *s = arg;

	(void)len;
	(void)err;
	(void)errlen;
	ck_assert_str_eq(v[1], "t");
	strcat(s->runs, v[0]);
	strcat(s->runs, " ");
	return 0;
}

static int
on_result(void *arg, const char *const *v, const size_t *len, char *err,
    size_t errlen)
{
	struct seen *s = arg;

	(void)v;
	(void)len;
	(void)err;
	(void)errlen;
	s->results++;
	return 0;
}

static int
on_test(void *arg, const char *const *v, const size_t *len, char *err,
    size_t errlen)
{
	struct seen *s = arg;

	(void)len;
	(void)err;
	(void)errlen;
	if (v[0] == NULL)
		s->msgs++;
	else
		s->tests++;
	return 0;
}

static int
on_attempt(void *arg, const char *const *v, const size_t *len, char *err,
    size_t errlen)
{
	struct seen *s = arg;
	size_t	 n = strlen(s->attempts);

	(void)len;
	(void)err;
	(void)errlen;
	snprintf(s->attempts + n, sizeof s->attempts - n, "%s:%s:%s:%s:%s ",
	    v[0], v[1], v[2], v[3], v[4] != NULL ? v[4] : "-");
	return 0;
}

static int
on_polluter(void *arg, const char *const *v, const size_t *len, char *err,
    size_t errlen)
{
	struct seen *s = arg;
	size_t	 n = strlen(s->polluters);

	(void)len;
	(void)err;
	(void)errlen;
	ck_assert_str_eq(v[3], "a\n");
	snprintf(s->polluters + n, sizeof s->polluters - n, "%s:%s:%s ",
	    v[0], v[1], v[7]);
	return 0;
}

/* A finished run of two tests, one failed. */
static void
finish(struct flaky_store *st, struct flaky_run_record *rec)
{
	struct flaky_result v[2];
	struct flaky_results r;
	char	 err[256];

	memset(v, 0, sizeof v);
	memset(&r, 0, sizeof r);
	v[0].test = "a";
	v[0].outcome = FLAKY_PASS;
	v[1].test = "b";
	v[1].outcome = FLAKY_FAIL;
	v[1].position = 1;
	v[1].message = "AssertionError: 1 != 2";
	v[1].signature = "UNKNOWN";
	r.v = v;
	r.n = 2;
	rec->status = FLAKY_RUN_DONE;
	rec->ended_ms = rec->started_ms + 1000;
	ck_assert_int_eq(flaky_store_run_finish(st, rec, &r, err,
	    sizeof err), 0);
}

static void
read_batch(struct flaky_store *st, size_t max_runs, struct seen *s,
    struct flaky_ship_batch *b)
{
	struct flaky_ship_sink k = { on_run, on_result, on_test, on_attempt,
	    on_polluter, s };
	char	 err[256];

	memset(s, 0, sizeof *s);
	ck_assert_int_eq(flaky_store_ship_read(st, max_runs, 100000, &k, b,
	    err, sizeof err), 0);
}

START_TEST(test_queue_order_and_done)
{
	struct flaky_store *st;
	struct flaky_run_record a, b, c;
	struct flaky_ship_batch batch;
	struct flaky_ship_backlog bl;
	struct seen s;
	char	 err[256];
	int64_t	 target;

	ck_assert_int_eq(flaky_store_open(path, 0, &st, err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_target(st, "t", "true", "/", &target,
	    err, sizeof err), 0);
	memset(&a, 0, sizeof a);
	a.target_id = target;
	a.started_ms = T0;
	b = c = a;
	/* a starts first and ends last; c is written whole. */
	ck_assert_int_eq(flaky_store_run_start(st, &a, err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_run_start(st, &b, err, sizeof err), 0);
	finish(st, &b);
	ck_assert_int_eq(flaky_store_ship_backlog(st, &bl, err, sizeof err),
	    0);
	ck_assert_int_eq(bl.runs, 1);
	ck_assert_int_eq(bl.oldest_ms, T0 + 1000);
	finish(st, &c);
	finish(st, &a);
	read_batch(st, 2, &s, &batch);
	ck_assert_str_eq(s.runs, "2 3 ");
	ck_assert_int_eq(batch.runs, 2);
	ck_assert_int_eq(s.results, 4);
	ck_assert_int_eq(s.tests, 2);
	ck_assert_int_eq(s.msgs, 1);
	/* Not done: the same batch again. */
	read_batch(st, 2, &s, &batch);
	ck_assert_str_eq(s.runs, "2 3 ");
	ck_assert_int_eq(flaky_store_ship_done(st, &batch, err, sizeof err),
	    0);
	read_batch(st, 10, &s, &batch);
	ck_assert_str_eq(s.runs, "1 ");
	ck_assert_int_eq(flaky_store_ship_done(st, &batch, err, sizeof err),
	    0);
	read_batch(st, 10, &s, &batch);
	ck_assert_int_eq(batch.runs, 0);
	ck_assert_int_eq(flaky_store_ship_backlog(st, &bl, err, sizeof err),
	    0);
	ck_assert_int_eq(bl.runs, 0);
	ck_assert_int_eq(bl.oldest_ms, 0);
	ck_assert_int_eq(bl.shipped, 3);
	flaky_store_close(st);
}
END_TEST

/* A rerun's attempts (as ingest stores them) go with their run, in
 * order, and a run without attempts brings none. */
START_TEST(test_attempts_ride_with_their_run)
{
	struct flaky_store *st;
	struct flaky_run_record a, b;
	struct flaky_ship_batch batch;
	struct flaky_attempt att[2];
	struct flaky_junit_extra ex;
	struct flaky_result rv[2];
	struct flaky_results res;
	struct seen s;
	char	 err[256];
	int64_t	 target;

	ck_assert_int_eq(flaky_store_open(path, 0, &st, err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_target(st, "t", "true", "/", &target,
	    err, sizeof err), 0);
	memset(&a, 0, sizeof a);
	a.target_id = target;
	a.started_ms = T0;
	b = a;
	ck_assert_int_eq(flaky_store_run_start(st, &a, err, sizeof err), 0);
	finish(st, &a);
	ck_assert_int_eq(flaky_store_run_start(st, &b, err, sizeof err), 0);
	finish(st, &b);
	/* b's test at position 1 failed, then passed on its rerun. */
	memset(att, 0, sizeof att);
	memset(rv, 0, sizeof rv);
	memset(&res, 0, sizeof res);
	rv[1].position = 1;
	res.v = rv;
	res.n = 2;
	att[0].result = 1;
	att[0].outcome = FLAKY_FAIL;
	att[0].message = "AssertionError: 1 != 2";
	att[1].result = 1;
	att[1].attempt = 1;
	att[1].outcome = FLAKY_PASS;
	ex.timestamp_ms = -1;
	ex.attempts = att;
	ex.nattempts = ex.cap = 2;
	ck_assert_int_eq(flaky_store_begin(st, err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_add_attempts(st, b.id, &res, &ex, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_commit(st, err, sizeof err), 0);
	read_batch(st, 10, &s, &batch);
	ck_assert_str_eq(s.runs, "1 2 ");
	ck_assert_int_eq(batch.attempts, 2);
	ck_assert_str_eq(s.attempts, "2:1:0:1:AssertionError: 1 != 2 "
	    "2:1:1:0:- ");
	flaky_store_close(st);
}
END_TEST

/* A polluter found (flakyctl polluter) rides with the next batch of
 * runs, once; found again, it is queued again; without runs, it waits. */
START_TEST(test_polluters_ride_with_runs)
{
	struct flaky_store *st;
	struct flaky_run_record a;
	struct flaky_ship_batch batch;
	struct flaky_polluter_row p;
	struct seen s;
	char	 err[256];
	int64_t	 target;

	ck_assert_int_eq(flaky_store_open(path, 0, &st, err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_target(st, "t", "true", "/", &target,
	    err, sizeof err), 0);
	memset(&a, 0, sizeof a);
	a.target_id = target;
	a.started_ms = T0;
	ck_assert_int_eq(flaky_store_run_start(st, &a, err, sizeof err), 0);
	finish(st, &a);
	/* b (test 2) fails after a, as run 1 showed. */
	memset(&p, 0, sizeof p);
	p.test_id = 2;
	p.from_run_id = a.id;
	p.candidates = 1;
	p.members = "a\n";
	p.reruns = 4;
	p.minimal = 1;
	p.command = "python3 -m pytest a b";
	p.made_ms = T0 + 5000;
	ck_assert_int_eq(flaky_store_polluter_put(st, &p, err, sizeof err),
	    0);
	read_batch(st, 10, &s, &batch);
	ck_assert_str_eq(s.polluters, "2:1:1793534405000 ");
	ck_assert_int_eq(batch.polluters, 1);
	ck_assert_int_eq(flaky_store_ship_done(st, &batch, err, sizeof err),
	    0);
	/* Found again: queued again, but no batch without a run. */
	p.made_ms += 1000;
	ck_assert_int_eq(flaky_store_polluter_put(st, &p, err, sizeof err),
	    0);
	read_batch(st, 10, &s, &batch);
	ck_assert_int_eq(batch.runs, 0);
	ck_assert_str_eq(s.polluters, "");
	a.id = 0;
	ck_assert_int_eq(flaky_store_run_start(st, &a, err, sizeof err), 0);
	finish(st, &a);
	read_batch(st, 10, &s, &batch);
	ck_assert_str_eq(s.polluters, "2:1:1793534406000 ");
	/* The victim, named by results too, comes once among the tests. */
	ck_assert_int_eq(s.tests, 2);
	ck_assert_int_eq(flaky_store_ship_done(st, &batch, err, sizeof err),
	    0);
	a.id = 0;
	ck_assert_int_eq(flaky_store_run_start(st, &a, err, sizeof err), 0);
	finish(st, &a);
	read_batch(st, 10, &s, &batch);
	ck_assert_int_eq(batch.runs, 1);
	ck_assert_str_eq(s.polluters, "");
	flaky_store_close(st);
}
END_TEST

/* A database from before polluters shipped: what was found ships too,
 * once, also when the migration runs again over its own result. */
START_TEST(test_polluters_found_before_ship)
{
	struct flaky_store *st;
	struct flaky_ship_batch batch;
	struct seen s;
	sqlite3	*db;
	char	 sql[64], err[256];
	int	 from;

	db = tu_db_before(path, "TABLE IF NOT EXISTS ship_polluters", &from);
	ck_assert_msg(sqlite3_exec(db,
	    "INSERT INTO targets (id, name, created_ms) VALUES (1, 't', 0);"
	    "INSERT INTO tests (id, target_id, name) VALUES (2, 1, 'b');"
	    "INSERT INTO runs (id, target_id, status, trigger, started_ms, "
	    "  kind) VALUES (5, 1, 'done', 'schedule', 1, 'suite');"
	    "INSERT INTO polluters (test_id, from_run_id, candidates, members, "
	    "  reruns, minimal, command, made_ms) VALUES (2, 5, 1, 'a' || "
	    "  char(10), 3, 1, 'pytest a b', 7);",
	    NULL, NULL, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(db));
	for (int pass = 0; pass < 2; pass++) {
		snprintf(sql, sizeof sql, "PRAGMA user_version = %d", from);
		ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL),
		    SQLITE_OK);
		ck_assert_msg(flaky_store_open(path, 0, &st, err,
		    sizeof err) == 0, "%s", err);
		flaky_store_close(st);
	}
	sqlite3_close(db);
	ck_assert_int_eq(flaky_store_open(path, 0, &st, err, sizeof err), 0);
	read_batch(st, 10, &s, &batch);
	ck_assert_str_eq(s.runs, "5 ");
	ck_assert_str_eq(s.polluters, "2:5:7 ");
	flaky_store_close(st);
}
END_TEST

START_TEST(test_box_id_per_database)
{
	struct flaky_store *st;
	char	 err[256], id1[64], id2[64], id3[64], other[128];

	ck_assert_int_eq(flaky_store_open(path, 0, &st, err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_box_id(st, id1, sizeof id1, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_box_id(st, id2, sizeof id2, err,
	    sizeof err), 0);
	ck_assert_int_eq((int)strlen(id1), 32);
	ck_assert_str_eq(id1, id2);
	flaky_store_close(st);
	/* Another database, made from the same image: another id. */
	snprintf(other, sizeof other, "%s/other.db", dir);
	ck_assert_int_eq(flaky_store_open(other, 0, &st, err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_box_id(st, id3, sizeof id3, err,
	    sizeof err), 0);
	ck_assert_str_ne(id1, id3);
	flaky_store_close(st);
}
END_TEST

static Suite *
suite(void)
{
	Suite	*s = suite_create("store_ship");
	TCase	*tc = tcase_create("ship");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_queue_order_and_done);
	tcase_add_test(tc, test_attempts_ride_with_their_run);
	tcase_add_test(tc, test_polluters_ride_with_runs);
	tcase_add_test(tc, test_polluters_found_before_ship);
	tcase_add_test(tc, test_box_id_per_database);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
