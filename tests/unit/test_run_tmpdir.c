/* tmpdir: each run's private TMPDIR, made, handed in the environment,
 * removed whatever the test left in it (off the event loop), made ahead
 * for the runs that follow, and handed on to the next run when untouched.
 * Polled with a deadline, never a bare sleep. */
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

/* Wait for path to go, up to ms; the spawner's thread removes it. */
static int
gone_within(const char *path, int ms)
{
	struct stat	 st;
	int64_t		 end = flaky_mono_us() + (int64_t)ms * 1000;

	while (stat(path, &st) == 0) {
		if (flaky_mono_us() > end)
			return 0;
		usleep(1000);
	}
	return errno == ENOENT;
}

/* The spawner left nothing under parent, which goes too. */
static void
parent_gone(const char *parent)
{
	struct dirent	*e;
	DIR		*d;

	ck_assert_ptr_nonnull(d = opendir(parent));
	while ((e = readdir(d)) != NULL)
		ck_assert_msg(e->d_name[0] == '.', "left behind: %s",
		    e->d_name);
	closedir(d);
	ck_assert_int_eq(rmdir(parent), 0);
}

START_TEST(tmpdir)
{
	char		 parent[] = "/tmp/flaky-test-XXXXXX", path[512];
	char *const	 argv[] = { "/bin/sh", "-c",
	    "echo \"$TMPDIR\"; ls -A \"$TMPDIR\" | wc -l; "
	    "stat -c %a \"$TMPDIR\"; mkdir \"$TMPDIR/d\"; "
	    "touch \"$TMPDIR/d/f\" \"$TMPDIR/g\"", NULL };
	struct flaky_spawn_opts o = { .argv = argv, .tmp_parent = parent };
	struct flaky_proc *p;
	struct ctx	 c;
	struct stat	 st;
	char		*s, want[600];

	ck_assert_ptr_nonnull(mkdtemp(parent));
	ctx_init(&c);
	p = run(&c, &o);
	snprintf(path, sizeof path, "%s", flaky_proc_tmpdir(p));
	ck_assert_msg(strncmp(path, parent, strlen(parent)) == 0 &&
	    path[strlen(parent)] == '/', "%s", path);
	s = output(p, FLAKY_STDOUT);
	snprintf(want, sizeof want, "%s\n0\n700\n", path);
	ck_assert_str_eq(s, want);
	free(s);
	ck_assert_int_eq(flaky_proc_info(p)->exit_code, 0);
	ck_assert_int_eq(stat(path, &st), 0);
	/* Freed, it goes soon, by the spawner's thread, with what the test
	 * left in it. */
	flaky_proc_free(p);
	ck_assert_msg(gone_within(path, DEADLINE_MS), "%s still there", path);
	ctx_free(&c);
	ck_assert_int_eq(rmdir(parent), 0);
}
END_TEST

/* On tmpfs a run's directory is made and removed in place: gone as soon
 * as the proc is freed, no thread involved. */
START_TEST(tmpdir_tmpfs)
{
	char		 parent[] = "/dev/shm/flaky-test-XXXXXX", path[512];
	char *const	 argv[] = { "/bin/sh", "-c", "touch \"$TMPDIR/f\"",
	    NULL };
	struct flaky_spawn_opts o = { .argv = argv, .tmp_parent = parent,
	    .more = 1 };
	struct flaky_proc *p;
	struct statfs	 f;
	struct stat	 st;
	struct ctx	 c;

	ck_assert_ptr_nonnull(mkdtemp(parent));
	ck_assert_int_eq(statfs(parent, &f), 0);
	ck_assert_msg(f.f_type == TMPFS_MAGIC, "/dev/shm is not tmpfs here");
	/* not a subreaper (as an earlier test may have made this process,
	 * under CK_FORK=no): a subreaper keeps it for the next run's check */
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	ctx_init(&c);
	p = run(&c, &o);
	snprintf(path, sizeof path, "%s", flaky_proc_tmpdir(p));
	ck_assert_int_eq(stat(path, &st), 0);
	flaky_proc_free(p);
	ck_assert_int_eq(stat(path, &st), -1);
	ck_assert_int_eq(errno, ENOENT);
	ctx_free(&c);
	ck_assert_int_eq(rmdir(parent), 0);
}
END_TEST

/* Runs that say more follow get directories made ahead: each one new,
 * empty and private, and none left behind by the spawner's free. */
START_TEST(tmpdir_ahead)
{
	char		 parent[PATH_MAX];
	char *const	 argv[] = { "/bin/sh", "-c",
	    "ls -A \"$TMPDIR\" | wc -l; stat -c %a \"$TMPDIR\"; "
	    "touch \"$TMPDIR/left\"", NULL };
	struct flaky_spawn_opts o = { .argv = argv, .tmp_parent = parent };
	struct flaky_proc *p;
	struct ctx	 c;
	char		 seen[12][512], *s;

	/* Under the build directory, not /tmp: on tmpfs (where /tmp often
	 * is) directories are made in place, and this is about the thread. */
	ck_assert_ptr_nonnull(getcwd(parent, sizeof parent - 32));
	strcat(parent, "/flaky-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(parent));
	ctx_init(&c);
	for (int i = 0; i < 12; i++) {
		o.more = 11 - i;
		p = run(&c, &o);
		snprintf(seen[i], sizeof seen[i], "%s", flaky_proc_tmpdir(p));
		for (int j = 0; j < i; j++)
			ck_assert_str_ne(seen[i], seen[j]);
		s = output(p, FLAKY_STDOUT);
		ck_assert_str_eq(s, "0\n700\n");
		free(s);
		flaky_proc_free(p);
	}
	ctx_free(&c);
	parent_gone(parent);
}
END_TEST

/* In a subreaper an ended run's TMPDIR serves the next run when it is as
 * safe as a new one: the run left it empty and nothing of the run lives on.
 * A file left, or a process that escaped the run's group, and the next run
 * gets a new one. Each run sees an empty TMPDIR, and none is left behind. */
START_TEST(tmpdir_reuse)
{
	char		 parent[PATH_MAX];
	char *const	 clean[] = { "/bin/sh", "-c",
	    "ls -A \"$TMPDIR\" | wc -l", NULL };
	char *const	 leave[] = { "/bin/sh", "-c",
	    "ls -A \"$TMPDIR\" | wc -l; touch \"$TMPDIR/left\"", NULL };
	char *const	 escape[] = { "/bin/sh", "-c",
	    "ls -A \"$TMPDIR\" | wc -l; "
	    "setsid sleep 1000 </dev/null >/dev/null 2>&1 & p=$!; " ESCAPED
	    "echo $p", NULL };
	char *const	*argv[] = { clean, leave, escape, clean };
	struct flaky_spawn_opts o = { .tmp_parent = parent };
	struct flaky_proc *p;
	struct ctx	 c;
	char		 seen[4][512], *s;
	pid_t		 stray = 0;

	/* _i 0: under the build directory, on disk (the thread's case); 1:
	 * under /dev/shm, tmpfs where Linux has it (made in place) */
	if (_i == 0) {
		ck_assert_ptr_nonnull(getcwd(parent, sizeof parent - 32));
		strcat(parent, "/flaky-test-XXXXXX");
	} else
		snprintf(parent, sizeof parent, "/dev/shm/flaky-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(parent));
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	ctx_init(&c);
	for (int i = 0; i < 4; i++) {
		o.argv = argv[i];
		o.more = 3 - i;
		p = run(&c, &o);
		snprintf(seen[i], sizeof seen[i], "%s", flaky_proc_tmpdir(p));
		s = output(p, FLAKY_STDOUT);
		ck_assert_msg(strncmp(s, "0\n", 2) == 0,
		    "run %d: TMPDIR not empty: %s", i, s);
		if (argv[i] == escape)
			stray = (pid_t)atoi(s + 2);
		free(s);
		flaky_proc_free(p);
	}
	ck_assert_int_gt(stray, 1);
	kill(stray, SIGKILL);
	waitpid(stray, NULL, 0);
	/* clean: the next run had it; a file left: a new one */
	ck_assert_str_eq(seen[1], seen[0]);
	ck_assert_str_ne(seen[2], seen[1]);
	/* a process outlived the run: a new one */
	ck_assert_str_ne(seen[3], seen[2]);
	ck_assert_str_ne(seen[3], seen[1]);
	ctx_free(&c);
	parent_gone(parent);
}
END_TEST

/* A given environment's own TMPDIR is replaced, not doubled. */
START_TEST(tmpdir_env)
{
	char *const	 env[] = { "TMPDIR=/bogus", "PATH=/usr/bin:/bin",
	    "KEEP=1", NULL };
	char *const	 argv[] = { "/bin/sh", "-c",
	    "env | grep -c '^TMPDIR='; echo \"$TMPDIR\" $KEEP", NULL };
	struct flaky_spawn_opts o = { .argv = argv, .envp = env,
	    .tmp_parent = "/tmp" };
	struct flaky_proc *p;
	struct ctx	 c;
	char		*s, want[512];

	ctx_init(&c);
	p = run(&c, &o);
	s = output(p, FLAKY_STDOUT);
	snprintf(want, sizeof want, "1\n%s 1\n", flaky_proc_tmpdir(p));
	ck_assert_str_eq(s, want);
	free(s);
	flaky_proc_free(p);
	ctx_free(&c);
}
END_TEST

/* What a test leaves in its TMPDIR goes, also directories it made
 * read-only or unreadable (tests of permission errors do that): on tmpfs
 * at the run's free (in place), elsewhere by the spawner's thread, at the
 * latest at its free. Both kinds of parent: /tmp is tmpfs in a container
 * (systemd-nspawn, where the package builds), not here. Run as an
 * unprivileged user in a child: root removes anything anyway. */
static void
readonly_under(const char *base)
{
	char		 parent[64];
	int		 status;
	pid_t		 pid;

	snprintf(parent, sizeof parent, "%s/flaky-test-XXXXXX", base);
	ck_assert_ptr_nonnull(mkdtemp(parent));
	ck_assert_int_eq(chmod(parent, 0777), 0);
	if ((pid = fork()) == 0) {
		char *const	 argv[] = { "/bin/sh", "-c",
		    "cd \"$TMPDIR\" && mkdir -p ro/sub nr/sub && "
		    "touch ro/f ro/sub/g nr/h && chmod 500 ro ro/sub && "
		    "chmod 000 nr", NULL };
		struct flaky_spawn_opts o = { .argv = argv,
		    .tmp_parent = parent };
		struct flaky_proc *p;
		struct ctx	 c;
		char		 path[512];
		struct statfs	 f;
		struct stat	 st;
		int		 tmpfs;

		if (geteuid() == 0 && (setgid(65534) == -1 ||
		    setuid(65534) == -1))
			_exit(99);
		tmpfs = statfs(parent, &f) == 0 && f.f_type == TMPFS_MAGIC;
		ctx_init(&c);
		p = run(&c, &o);
		if (flaky_proc_info(p)->exit_code != 0)
			_exit(98);
		snprintf(path, sizeof path, "%s", flaky_proc_tmpdir(p));
		flaky_proc_free(p);
		if ((stat(path, &st) == -1) != tmpfs)
			_exit(97);
		/* The spawner's free removes what the loop did not. */
		ctx_free(&c);
		_exit(stat(path, &st) == -1 && errno == ENOENT ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "%s: status %d", base, status);
	ck_assert_int_eq(rmdir(parent), 0);
}

START_TEST(tmpdir_readonly)
{
	readonly_under("/tmp");
	readonly_under("/dev/shm");
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("tmpdir");
	TCase	*tc = tcase_create("tmpdir");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, tmpdir);
	tcase_add_test(tc, tmpdir_ahead);
	tcase_add_loop_test(tc, tmpdir_reuse, 0, 2);
	tcase_add_test(tc, tmpdir_tmpfs);
	tcase_add_test(tc, tmpdir_env);
	tcase_add_test(tc, tmpdir_readonly);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
