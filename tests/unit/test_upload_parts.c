/* An upload stored in parts (lib/ingest/upload.c, u->parts): the upload
 * worker of flakyd commits whenever another writer of the process waits
 * for SQLite's one write lock, so the daemon's loop never waits for a
 * whole upload. Here a thread stores a large JUnit file in parts while
 * this one keeps writing through another store of the same file: each of
 * its writes gets in far sooner than the upload takes, the upload still
 * lands whole and once, and while it is in flight the same key is "being
 * stored" (2), not stored. Without the parts, a write that starts after
 * the upload's transaction waits for all of it. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "ingest/ingest.h"
#include "store/store.h"
#include "util/util.h"
#include "test_db.h"
#include "test_helper.h"

#define CASES	60000

static char	 dir[128], db_path[256], xml[256];

/* A JUnit file of CASES passing tests. */
static void
write_junit(const char *path)
{
	FILE	*f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fprintf(f, "<testsuites><testsuite name=\"s\" tests=\"%d\">\n", CASES);
	for (int i = 0; i < CASES; i++)
		fprintf(f, "<testcase classname=\"pkg.mod%d\" name=\"test_%d\" "
		    "time=\"0.001\"/>\n", i / 100, i);
	fprintf(f, "</testsuite></testsuites>\n");
	ck_assert_int_eq(fclose(f), 0);
}

struct job {
	atomic_int		 done;
	struct flaky_store	*st;
	struct flaky_upload	 u;
	int			 rc;
	int64_t			 took_us;
	char			 err[512];
};

/* The upload worker's part: one upload of the file, in parts. */
static void *
upload(void *arg)
{
	struct job	*j = arg;
	struct flaky_ingest_file f;
	char		*buf = malloc(FLAKY_INGEST_CHUNK);
	int64_t		 t0 = flaky_mono_us();

	memset(&f, 0, sizeof f);
	f.path = xml;
	f.fd = -1;
	j->rc = flaky_upload_store(&j->u, &f, 1, buf, j->err, sizeof j->err);
	j->took_us = flaky_mono_us() - t0;
	flaky_ingest_file_close(&f);
	free(buf);
	atomic_store(&j->done, 1);
	return NULL;
}

START_TEST(loop_writes_get_in_while_an_upload_is_stored)
{
	struct flaky_store *worker, *loop;
	struct job	 j;
	pthread_t	 t;
	struct timespec	 ts = { 0, 5 * 1000 * 1000 };
	int64_t		 max_wait = 0, id, *runs = NULL, up;
	size_t		 n = 0, writes = 0;
	char		 err[512], name[32];
	sqlite3		*db;
	int		 seen_in_flight = 0;

	ck_assert_int_eq(flaky_store_open(db_path, 0, &worker, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_open(db_path, 0, &loop, err, sizeof err),
	    0);
	flaky_store_set_yielding(worker, 1);
	memset(&j, 0, sizeof j);
	j.st = worker;
	j.u.in.store = worker;
	j.u.in.target = "ci";
	j.u.in.now_ms = 1764000000000LL;
	j.u.in.at_ms = -1;
	j.u.in.hash_salt = "unit\n1\n";
	j.u.key = "parts-1";
	j.u.parts = 1;
	ck_assert_int_eq(pthread_create(&t, NULL, upload, &j), 0);
	/* the loop's writes, one every 5 ms while the upload goes on */
	for (;;) {
		int64_t	 t0 = flaky_mono_us(), w;
		int	 r;

		snprintf(name, sizeof name, "loop-%zu", writes++);
		ck_assert_int_eq(flaky_store_target(loop, name, NULL, NULL, &id,
		    err, sizeof err), 0);
		w = flaky_mono_us() - t0;
		if (w > max_wait)
			max_wait = w;
		r = flaky_store_upload_find(loop, "parts-1", &up, &runs, &n,
		    err, sizeof err);
		free(runs);
		runs = NULL;
		if (r == 2)
			seen_in_flight = 1;
		if (r == 1 || atomic_load(&j.done))
			break;
		ck_assert_int_ge(r, 0);
		nanosleep(&ts, NULL);
	}
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_msg(j.rc == 0, "%s", j.err);
	ck_assert_int_eq(j.u.nruns, 1);
	/* it yielded, and the loop never waited for most of it */
	ck_assert(j.u.committed);
	ck_assert(seen_in_flight);
	ck_assert_msg(max_wait < j.took_us / 2, "the loop waited %lld us of "
	    "an upload of %lld us", (long long)max_wait,
	    (long long)j.took_us);
	ck_assert_int_gt(writes, 2);
	/* whole, and once */
	ck_assert_int_eq(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY,
	    NULL), SQLITE_OK);
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM results"), CASES);
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM uploads WHERE "
	    "stored_ms IS NOT NULL"), 1);
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM runs WHERE status "
	    "= 'done' AND kind = 'ingested'"), 1);
	sqlite3_close(db);
	flaky_upload_clear(&j.u);
	flaky_store_close(loop);
	flaky_store_close(worker);
}
END_TEST

static void
setup(void)
{
	tu_tmpdir(dir, sizeof dir, "parts");
	snprintf(db_path, sizeof db_path, "%s/flaky.db", dir);
	snprintf(xml, sizeof xml, "%s/big.xml", dir);
	write_junit(xml);
}

static void
teardown(void)
{
	tu_rmdir(dir);
}

int
main(void)
{
	Suite	*s = suite_create("upload_parts");
	TCase	*tc = tcase_create("upload_parts");
	SRunner	*sr;
	int	 failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, loop_writes_get_in_while_an_upload_is_stored);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
