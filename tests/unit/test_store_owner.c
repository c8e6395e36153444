/* store_owner: running rows name their owner, and only the rows whose owner
 * is gone become interrupted: a live other process's rows never, a dead
 * pid's, another boot's, a reused pid's (another start time) and rows with
 * no owner always; this process's own only when it asks. Opening for
 * writing does it; opening read-only does not. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

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
	tu_tmpdir(dir, sizeof dir, "owner");
	snprintf(path, sizeof path, "%s/flaky.db", dir);
}

static void
teardown(void)
{
	tu_rmdir(dir);
}

static struct flaky_store *
open_store(int flags)
{
	struct flaky_store *s;
	char		 err[512];

	ck_assert_msg(flaky_store_open(path, flags, &s, err, sizeof err) == 0,
	    "%s", err);
	return s;
}

static const char *
status_of(sqlite3 *db, int64_t id)
{
	static char	 buf[32];
	sqlite3_stmt	*st;

	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT status FROM runs "
	    "WHERE id = ?", -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_int64(st, 1, id);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	snprintf(buf, sizeof buf, "%s", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return buf;
}

/* A running row of this process. */
static int64_t
start_run(struct flaky_store *s, int64_t tid)
{
	struct flaky_run_record rec = { 0 };
	char	 err[512];

	rec.target_id = tid;
	rec.trigger = "analyze";
	rec.started_ms = T0;
	rec.loadavg = -1;
	ck_assert_msg(flaky_store_run_start(s, &rec, err, sizeof err) == 0,
	    "%s", err);
	return rec.id;
}

static int64_t
target(struct flaky_store *s)
{
	int64_t	 id;
	char	 err[512];

	ck_assert_msg(flaky_store_target(s, "demo", "pytest -v", "/src", &id,
	    err, sizeof err) == 0, "%s", err);
	return id;
}

/* This process's start time as the store records it. */
static int64_t
my_start(void)
{
	char	 buf[1024], *p;
	FILE	*f = fopen("/proc/self/stat", "r");
	long long v = -1;
	int	 field = 2;

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof buf, f));
	fclose(f);
	p = strrchr(buf, ')');
	for (; *p != '\0' && field < 22; p++)
		if (*p == ' ')
			field++;
	ck_assert_int_eq(sscanf(p, "%lld", &v), 1);
	return v;
}

/* The row names this process: boot id, pid, start time. */
START_TEST(owner_recorded)
{
	struct flaky_store *s = open_store(0);
	sqlite3		*db;
	char		 boot[64] = "", sql[256];
	FILE		*f = fopen("/proc/sys/kernel/random/boot_id", "r");
	int64_t		 id = start_run(s, target(s));

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(boot, sizeof boot, f));
	fclose(f);
	boot[strcspn(boot, "\n")] = '\0';
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(sql, sizeof sql, "SELECT count(*) FROM runs WHERE id = %lld "
	    "AND owner_boot = '%s' AND owner_pid = %ld AND owner_start = %lld",
	    (long long)id, boot, (long)getpid(), (long long)my_start());
	ck_assert_int_eq(tu_q1(db, sql), 1);
	sqlite3_close(db);
	flaky_store_close(s);
}
END_TEST

/* A child that started a run and waits: alive, its row is left alone by
 * every other process; once it is dead, the row is marked. */
START_TEST(live_then_dead)
{
	struct flaky_store *s, *t;
	int		 ready[2], hold[2], status;
	sqlite3		*db;
	char		 err[512], c;
	int64_t		 tid, id;
	pid_t		 pid;

	s = open_store(0);
	tid = target(s);
	flaky_store_close(s);
	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(hold), 0);
	if ((pid = fork()) == 0) {
		close(ready[0]);
		close(hold[1]);
		s = NULL;
		if (flaky_store_open(path, 0, &s, err, sizeof err) < 0)
			_exit(1);
		{
			struct flaky_run_record rec = { 0 };

			rec.target_id = tid;
			rec.started_ms = T0;
			rec.loadavg = -1;
			if (flaky_store_run_start(s, &rec, err, sizeof err) < 0)
				_exit(1);
			if (write(ready[1], &rec.id, sizeof rec.id) !=
			    (ssize_t)sizeof rec.id)
				_exit(1);
		}
		/* until the parent closes its end */
		(void)read(hold[0], &c, 1);
		_exit(0);	/* no close: a crash leaves the row running */
	}
	close(ready[1]);
	close(hold[0]);
	ck_assert_int_eq(read(ready[0], &id, sizeof id), (ssize_t)sizeof id);
	ck_assert_int_gt(id, 0);

	/* an open for writing, the explicit calls, even "ours too" */
	t = open_store(0);
	ck_assert_int_eq(flaky_store_mark_orphans(t, 0, err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_mark_interrupted(t, 0, err, sizeof err),
	    0);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_str_eq(status_of(db, id), "running");

	close(hold[1]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(flaky_store_mark_orphans(t, 0, err, sizeof err), 1);
	ck_assert_str_eq(status_of(db, id), "interrupted");
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM runs WHERE error = "
	    "'interrupted: the run did not finish'"), 1);
	sqlite3_close(db);
	flaky_store_close(t);
	close(ready[0]);
}
END_TEST

/* Rows written by hand: another boot, a live pid with another start time
 * (a reused pid), no owner at all. All are gone; this process's own row is
 * not, unless it asks. Opening for writing marks them; read-only not. */
START_TEST(gone_rules)
{
	struct flaky_store *s = open_store(0), *ro;
	sqlite3		*db;
	char		 sql[512], err[512];
	int64_t		 tid = target(s), mine = start_run(s, tid);

	flaky_store_close(s);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(sql, sizeof sql,
	    "INSERT INTO runs (id, target_id, started_ms, owner_boot, "
	    "owner_pid, owner_start) VALUES "
	    "(10, %lld, 1, 'another-boot', %ld, %lld), "
	    "(11, %lld, 1, (SELECT owner_boot FROM runs WHERE id = %lld), "
	    "%ld, %lld), "
	    "(12, %lld, 1, NULL, NULL, NULL)",
	    (long long)tid, (long)getpid(), (long long)my_start(),
	    (long long)tid, (long long)mine, (long)getpid(),
	    (long long)my_start() - 1, (long long)tid);
	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK,
	    "%s", sqlite3_errmsg(db));

	/* read-only: nothing changes */
	ro = open_store(FLAKY_STORE_READONLY);
	flaky_store_close(ro);
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM runs WHERE status = "
	    "'running'"), 4);

	/* for writing: the three gone, not ours */
	s = open_store(0);
	ck_assert_str_eq(status_of(db, 10), "interrupted");
	ck_assert_str_eq(status_of(db, 11), "interrupted");
	ck_assert_str_eq(status_of(db, 12), "interrupted");
	ck_assert_str_eq(status_of(db, mine), "running");
	ck_assert_int_eq(flaky_store_mark_orphans(s, 0, err, sizeof err), 0);
	ck_assert_str_eq(status_of(db, mine), "running");
	/* another target only: ours stays */
	ck_assert_int_eq(flaky_store_mark_interrupted(s, tid + 1, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_mark_interrupted(s, tid, err,
	    sizeof err), 1);
	ck_assert_str_eq(status_of(db, mine), "interrupted");
	sqlite3_close(db);
	flaky_store_close(s);
}
END_TEST

/* Finding the running rows reads the partial index, not the runs. */
START_TEST(running_plan)
{
	struct flaky_store *s = open_store(0);
	sqlite3		*db;
	sqlite3_stmt	*st;
	int		 found = 0;

	flaky_store_close(s);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "EXPLAIN QUERY PLAN SELECT "
	    "id, owner_boot, owner_pid, owner_start FROM runs "
	    "WHERE status = 'running' AND (?1 = 0 OR target_id = ?1)", -1,
	    &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		if (strstr((const char *)sqlite3_column_text(st, 3),
		    "runs_running") != NULL)
			found = 1;
	sqlite3_finalize(st);
	ck_assert_msg(found, "the running rows are not read through "
	    "runs_running");
	sqlite3_close(db);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("store_owner");
	TCase	*tc = tcase_create("store_owner");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, owner_recorded);
	tcase_add_test(tc, live_then_dead);
	tcase_add_test(tc, gone_rules);
	tcase_add_test(tc, running_plan);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
