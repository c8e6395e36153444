/* store_daemon: what flakyd asks of the store beyond a run's writes: the
 * last trigger time per target (catch-up) and the last finished run per
 * target (status), with exact values. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "util/util.h"

#define T0	1793534400000LL		/* 2026-11-01T12:00:00Z */

static char	 dir[64];
static char	 path[128];
static struct flaky_store *st;
static char	 err[512];

static void
setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/flaky-stored-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/flaky.db", dir);
	ck_assert_int_eq(flaky_store_open(path, 0, &st, err, sizeof err), 0);
}

static void
teardown(void)
{
	char	 cmd[128];

	flaky_store_close(st);
	st = NULL;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

/* A finished run of target with this status and start time. */
static int64_t
add_run(int64_t target, int status, int64_t started, int64_t ntests,
    int nfail)
{
	struct flaky_run_record rec;
	struct flaky_results	 res;

	memset(&rec, 0, sizeof rec);
	rec.target_id = target;
	rec.status = status;
	rec.trigger = "schedule";
	rec.started_ms = started;
	rec.ended_ms = started + 1000;
	rec.duration_us = 1000000;
	rec.exit_code = 0;
	rec.loadavg = -1;
	flaky_results_init(&res);
	strcpy(res.runner, "unittest");
	res.v = calloc((size_t)ntests + 1, sizeof *res.v);
	ck_assert_ptr_nonnull(res.v);
	res.cap = (size_t)ntests + 1;
	for (int64_t i = 0; i < ntests; i++) {
		struct flaky_result *r = &res.v[res.n++];
		char	 name[32];

		snprintf(name, sizeof name, "t%lld", (long long)i);
		r->test = strdup(name);
		r->outcome = i < nfail ? FLAKY_FAIL : FLAKY_PASS;
		r->duration_us = 1000;
		r->message = i < nfail ? strdup("boom") : NULL;
		r->position = (unsigned)i;
	}
	ck_assert_int_eq(flaky_store_run_finish(st, &rec, &res, err,
	    sizeof err), 0);
	flaky_results_free(&res);
	return rec.id;
}

START_TEST(last_fire_roundtrip)
{
	int64_t	 id, other, ms;

	ck_assert_int_eq(flaky_store_target(st, "a", "true", "/", &id, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_target(st, "b", "true", "/", &other, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_last_fire(st, id, &ms, err, sizeof err),
	    0);
	ck_assert(ms == FLAKY_NO_FIRE);
	ck_assert_int_eq(flaky_store_set_last_fire(st, id, T0, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_last_fire(st, id, &ms, err, sizeof err),
	    0);
	ck_assert_int_eq(ms, T0);
	ck_assert_int_eq(flaky_store_last_fire(st, other, &ms, err,
	    sizeof err), 0);
	ck_assert(ms == FLAKY_NO_FIRE);
	/* An unknown target has none either. */
	ck_assert_int_eq(flaky_store_last_fire(st, 999, &ms, err, sizeof err),
	    0);
	ck_assert(ms == FLAKY_NO_FIRE);
	/* Saving the target again keeps the time. */
	ck_assert_int_eq(flaky_store_target(st, "a", "false", NULL, &id, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_last_fire(st, id, &ms, err, sizeof err),
	    0);
	ck_assert_int_eq(ms, T0);
}
END_TEST

START_TEST(last_run)
{
	struct flaky_last_run lr;
	struct flaky_run_record rec;
	int64_t	 id, newest;

	ck_assert_int_eq(flaky_store_target(st, "a", "true", "/", &id, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_last_run(st, id, &lr, err, sizeof err),
	    0);
	ck_assert_int_eq(lr.run_id, 0);
	ck_assert_int_eq(lr.target_id, id);
	add_run(id, FLAKY_RUN_DONE, T0, 3, 0);
	newest = add_run(id, FLAKY_RUN_DONE, T0 + 60000, 4, 2);
	add_run(id, FLAKY_RUN_TIMEOUT, T0 + 30000, 1, 1);
	/* A run still going is not the last result. */
	memset(&rec, 0, sizeof rec);
	rec.target_id = id;
	rec.trigger = "schedule";
	rec.started_ms = T0 + 120000;
	rec.loadavg = -1;
	ck_assert_int_eq(flaky_store_run_start(st, &rec, err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_last_run(st, id, &lr, err, sizeof err),
	    0);
	ck_assert_int_eq(lr.run_id, newest);
	ck_assert_int_eq(lr.status, FLAKY_RUN_DONE);
	ck_assert_int_eq(lr.started_ms, T0 + 60000);
	ck_assert_int_eq(lr.ended_ms, T0 + 61000);
	ck_assert_int_eq(lr.tests, 4);
	ck_assert_int_eq(lr.failures, 2);
	/* Once marked interrupted it is the last one. */
	ck_assert_int_eq(flaky_store_mark_interrupted(st, id, err, sizeof err),
	    1);
	ck_assert_int_eq(flaky_store_last_run(st, id, &lr, err, sizeof err),
	    0);
	ck_assert_int_eq(lr.run_id, rec.id);
	ck_assert_int_eq(lr.status, FLAKY_RUN_INTERRUPTED);
}
END_TEST

START_TEST(skipped_run)
{
	struct flaky_run_record rec;
	struct flaky_last_run lr;
	int64_t	 id;

	/* flakyd records a skipped trigger through run_finish, no results. */
	ck_assert_int_eq(flaky_store_target(st, "a", "true", "/", &id, err,
	    sizeof err), 0);
	memset(&rec, 0, sizeof rec);
	rec.target_id = id;
	rec.status = FLAKY_RUN_SKIPPED;
	rec.trigger = "schedule";
	rec.started_ms = rec.ended_ms = T0;
	rec.exit_code = -1;
	rec.loadavg = -1;
	rec.error = "skipped";
	ck_assert_int_eq(flaky_store_run_finish(st, &rec, NULL, err,
	    sizeof err), 0);
	ck_assert_int_gt(rec.id, 0);
	ck_assert_int_eq(flaky_store_last_run(st, id, &lr, err, sizeof err),
	    0);
	ck_assert_int_eq(lr.status, FLAKY_RUN_SKIPPED);
	ck_assert_int_eq(lr.tests, 0);
}
END_TEST

START_TEST(status_names)
{
	for (int i = FLAKY_RUN_RUNNING; i <= FLAKY_RUN_SKIPPED; i++)
		ck_assert_int_eq(flaky_run_status_parse(
		    flaky_run_status_name(i)), i);
	ck_assert_int_eq(flaky_run_status_parse("nope"), -1);
	ck_assert_int_eq(flaky_run_status_parse(NULL), -1);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("store_daemon");
	TCase	*tc = tcase_create("store_daemon");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, last_fire_roundtrip);
	tcase_add_test(tc, last_run);
	tcase_add_test(tc, skipped_run);
	tcase_add_test(tc, status_names);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
