/* run: spawn -> parse -> record, as flakyd and flakyctl analyze run a
 * target; driven by the event loop up to a deadline, never a sleep. */
#include "buildconf.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include <event2/event.h>

#include "run/run.h"
#include "util/util.h"
#include "run_test.h"

struct run_ctx {
	int	 done;
};

static void
run_done_cb(struct flaky_run *run, void *arg)
{
	(void)run;
	((struct run_ctx *)arg)->done++;
}

/* spawn -> parse -> record: TAP output becomes results; a timeout and a
 * missing command are recorded as such. */
START_TEST(run_record)
{
	char *const	 a1[] = { "/bin/sh", "-c",
	    "echo 1..2; echo 'ok 1 - a'; echo 'not ok 2 - b'; exit 1", NULL };
	char *const	 a2[] = { "sleep", "1000", NULL };
	char *const	 a3[] = { "no-such-command-xyz", NULL };
	struct flaky_run_spec spec = { .argv = a1 };
	struct flaky_run *run;
	struct run_ctx	 rc = { 0 };
	struct ctx	 c;
	char		 err[256];

	ctx_init(&c);
	ck_assert_int_eq(flaky_run_start(c.sp, &spec, run_done_cb, &rc, &run,
	    err, sizeof err), 0);
	ck_assert_int_eq(run->rec.status, FLAKY_RUN_RUNNING);
	drive(&c, &rc.done, 1, DEADLINE_MS);
	ck_assert_int_eq(run->rec.status, FLAKY_RUN_DONE);
	ck_assert_int_eq(run->rec.exit_code, 1);
	ck_assert_str_eq(run->results.runner, "tap");
	ck_assert_uint_eq(run->results.n, 2);
	ck_assert_str_eq(run->results.v[0].test, "a");
	ck_assert_int_eq(run->results.v[0].outcome, FLAKY_PASS);
	ck_assert_int_eq(run->results.v[1].outcome, FLAKY_FAIL);
	ck_assert_uint_eq(run->rec.out_len, strlen(run->rec.out));
	ck_assert_ptr_nonnull(strstr(run->rec.out, "not ok 2 - b"));
	flaky_run_free(run);

	spec.argv = a2;
	spec.timeout_ms = 200;
	ck_assert_int_eq(flaky_run_start(c.sp, &spec, run_done_cb, &rc, &run,
	    err, sizeof err), 0);
	drive(&c, &rc.done, 2, DEADLINE_MS);
	ck_assert_int_eq(run->rec.status, FLAKY_RUN_TIMEOUT);
	ck_assert_int_eq(run->rec.signal, SIGTERM);
	ck_assert_ptr_nonnull(run->rec.error);
	ck_assert_ptr_nonnull(strstr(run->rec.error,
	    "killed at its time limit"));
	flaky_run_free(run);

	/* shutdown: the run ends as interrupted */
	spec.timeout_ms = 0;
	ck_assert_int_eq(flaky_run_start(c.sp, &spec, run_done_cb, &rc, &run,
	    err, sizeof err), 0);
	flaky_run_stop(run);
	drive(&c, &rc.done, 3, DEADLINE_MS);
	ck_assert_int_eq(run->rec.status, FLAKY_RUN_INTERRUPTED);
	ck_assert_int_eq(run->rec.signal, SIGTERM);
	/* says why there are no results, not that the runner was unknown */
	ck_assert_str_eq(run->rec.error, "interrupted: stopped before it "
	    "ended");
	flaky_run_free(run);

	spec.argv = a3;
	ck_assert_int_eq(flaky_run_start(c.sp, &spec, run_done_cb, &rc, &run,
	    err, sizeof err), -ENOENT);
	ck_assert_ptr_nonnull(run);
	ck_assert_int_eq(run->rec.status, FLAKY_RUN_ERROR);
	ck_assert_str_eq(run->rec.error,
	    "no-such-command-xyz: command not found");
	flaky_run_free(run);
	ck_assert_int_eq(rc.done, 3);
	ctx_free(&c);
}
END_TEST

/* A run whose output could not be kept for want of memory says so in its
 * error; its results come from the parsers, which saw every byte. */
START_TEST(run_capture_oom)
{
	char *const	 argv[] = { "/bin/sh", "-c",
	    "echo 1..1; echo 'ok 1 - a'", NULL };
	struct flaky_run_spec spec = { .argv = argv,
	    .capture_max = CAPTURE_NO_MEMORY };
	struct flaky_run *run;
	struct run_ctx	 rc = { 0 };
	struct ctx	 c;
	char		 err[256];

	ctx_init(&c);
	ck_assert_int_eq(flaky_run_start(c.sp, &spec, run_done_cb, &rc, &run,
	    err, sizeof err), 0);
	drive(&c, &rc.done, 1, DEADLINE_MS);
	ck_assert_int_eq(run->rec.status, FLAKY_RUN_DONE);
	ck_assert_uint_eq(run->results.n, 1);
	ck_assert_int_eq(run->results.v[0].outcome, FLAKY_PASS);
	ck_assert_uint_eq(run->rec.output_bytes, 14);
	ck_assert_uint_eq(run->rec.output_dropped, 14);
	ck_assert_str_eq(run->rec.out,
	    "\n[... 14 bytes not kept (out of memory) ...]\n");
	ck_assert_ptr_nonnull(run->rec.error);
	ck_assert_str_eq(run->rec.error,
	    "output not all kept: out of memory");
	flaky_run_free(run);
	ctx_free(&c);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("run");
	TCase	*tc = tcase_create("run");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, run_record);
	tcase_add_test(tc, run_capture_oom);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
