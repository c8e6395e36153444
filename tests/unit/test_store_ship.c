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

#include "parse/parse.h"
#include "store/store.h"
#include "util/util.h"
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

/* What a sink saw: run ids in order, results, tests, messages. */
struct seen {
	char	 runs[256];
	int	 results, tests, msgs;
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
	struct flaky_ship_sink k = { on_run, on_result, on_test, s };
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
