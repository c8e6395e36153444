/* spawn: exit codes and signals, capture within the bound, the child's
 * environment (stdin, signals, process group, descriptors, TMPDIR),
 * timeouts that end the whole group, and the bad-command errors. No test
 * sleeps: each drives the event loop until the run's callback fired, with a
 * timer that breaks the loop at a deadline. */
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
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include <event2/event.h>

#include "run/run.h"
#include "util/util.h"
#include "run_test.h"

/* Run sh -c script; stdout must be want. */
static void
sh_out(const char *script, const char *want)
{
	char *const	 argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	struct flaky_spawn_opts o = { .argv = argv };
	struct ctx	 c;
	struct flaky_proc *p;
	char		*s;

	ctx_init(&c);
	p = run(&c, &o);
	s = output(p, FLAKY_STDOUT);
	ck_assert_msg(strcmp(s, want) == 0, "%s: '%s', expected '%s'",
	    script, s, want);
	ck_assert_int_eq(flaky_proc_info(p)->exit_code, 0);
	free(s);
	flaky_proc_free(p);
	ctx_free(&c);
}

START_TEST(exit_and_signal)
{
	char *const	 a1[] = { "/bin/sh", "-c", "exit 3", NULL };
	char *const	 a2[] = { "/bin/sh", "-c", "kill -KILL $$", NULL };
	char *const	 a3[] = { "true", NULL };
	struct flaky_spawn_opts o = { .argv = a1 };
	const struct flaky_proc_info *pi;
	struct flaky_proc *p;
	struct ctx	 c;

	ctx_init(&c);
	p = run(&c, &o);
	pi = flaky_proc_info(p);
	ck_assert_int_eq(pi->end, FLAKY_PROC_EXITED);
	ck_assert_int_eq(pi->exit_code, 3);
	ck_assert_int_eq(pi->signal, 0);
	ck_assert_int_gt(pi->pid, 0);
	ck_assert_int_ge(pi->end_ms, pi->start_ms);
	ck_assert_int_gt(pi->wall_us, 0);
	ck_assert_int_eq(pi->in_flight, 1);
	flaky_proc_free(p);

	o.argv = a2;
	p = run(&c, &o);
	pi = flaky_proc_info(p);
	ck_assert_int_eq(pi->end, FLAKY_PROC_EXITED);
	ck_assert_int_eq(pi->exit_code, -1);
	ck_assert_int_eq(pi->signal, SIGKILL);
	flaky_proc_free(p);

	/* found through PATH */
	o.argv = a3;
	p = run(&c, &o);
	ck_assert_int_eq(flaky_proc_info(p)->exit_code, 0);
	flaky_proc_free(p);
	ctx_free(&c);
}
END_TEST

START_TEST(stdin_null)
{
	sh_out("readlink /proc/self/fd/0; cat; echo end", "/dev/null\nend\n");
}
END_TEST

/* Started from a parent that ignores and blocks signals (as under nohup),
 * the child still sees none ignored or blocked. */
START_TEST(signals_reset)
{
	/* a kernel sigaction: handler, flags, restorer, mask (x86-64) */
	unsigned long	 ign[8] = { (unsigned long)SIG_IGN }, o_rt[2][8];
	sigset_t	 set, old;
	struct sigaction sa, o_int, o_term, o_pipe;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, &o_int);
	sigaction(SIGTERM, &sa, &o_term);
	sigaction(SIGPIPE, &sa, &o_pipe);
	/* glibc's own two, ignored as GNU make leaves them in its commands
	 * (sigaction refuses them) */
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(syscall(SYS_rt_sigaction, __SIGRTMIN + i, ign,
		    o_rt[i], (NSIG - 1) / 8), 0);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	/* exec: grep sees what the spawn left (a shell may clear its mask) */
	sh_out("exec grep -E '^Sig(Ign|Blk)' /proc/self/status",
	    "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (int i = 0; i < 2; i++)
		syscall(SYS_rt_sigaction, __SIGRTMIN + i, o_rt[i], NULL,
		    (NSIG - 1) / 8);
	sigaction(SIGINT, &o_int, NULL);
	sigaction(SIGTERM, &o_term, NULL);
	sigaction(SIGPIPE, &o_pipe, NULL);
}
END_TEST

START_TEST(process_group)
{
	char *const	 argv[] = { "/bin/sh", "-c",
	    "echo $$; cut -d' ' -f5 /proc/$$/stat", NULL };
	struct flaky_spawn_opts o = { .argv = argv };
	struct flaky_proc *p;
	struct ctx	 c;
	char		*s, want[64];

	ctx_init(&c);
	p = run(&c, &o);
	s = output(p, FLAKY_STDOUT);
	snprintf(want, sizeof want, "%d\n%d\n", (int)flaky_proc_info(p)->pid,
	    (int)flaky_proc_info(p)->pid);
	ck_assert_str_eq(s, want);
	ck_assert_int_ne(flaky_proc_info(p)->pid, getpgrp());
	free(s);
	flaky_proc_free(p);
	ctx_free(&c);
}
END_TEST

/* Descriptors we hold without O_CLOEXEC do not reach the child. */
START_TEST(descriptors)
{
	int	 fd1 = open("/dev/null", O_RDONLY);
	int	 fd2 = dup(fd1);
	int	 pfd[2];

	ck_assert_int_ge(fd2, 0);
	ck_assert_int_eq(pipe(pfd), 0);
	/* ls opens the directory itself as 3 */
	sh_out("exec ls /proc/self/fd", "0\n1\n2\n3\n");
	close(fd1);
	close(fd2);
	close(pfd[0]);
	close(pfd[1]);
}
END_TEST

/* Has pid gone (or become a zombie nobody reaped yet)? */
static int
gone(pid_t pid)
{
	char	 path[64], buf[256], *p;
	FILE	*f;
	int	 zombie = 0;

	if (kill(pid, 0) == -1 && errno == ESRCH)
		return 1;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 1;
	if (fgets(buf, sizeof buf, f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL)
		zombie = p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
	fclose(f);
	return zombie;
}

/* Wait (driving the loop, which reaps) until pid is gone. */
static void
wait_gone(struct ctx *c, pid_t pid)
{
	int64_t	 end = flaky_mono_us() + 5 * 1000000;

	while (!gone(pid) && flaky_mono_us() < end)
		event_base_loop(c->base, EVLOOP_NONBLOCK);
	ck_assert_msg(gone(pid), "process %d survived its run", (int)pid);
}

/* The run ignores SIGTERM, and so does a grandchild holding the pipe: at
 * the limit the group gets SIGTERM, after the grace SIGKILL, and no process
 * of it survives. */
START_TEST(timeout_group)
{
	char *const	 argv[] = { "/bin/sh", "-c",
	    "trap '' TERM; sh -c 'echo $$; exec sleep 1000' & wait", NULL };
	struct flaky_spawn_opts o = { .argv = argv, .timeout_ms = 300,
	    .grace_ms = 500 };
	const struct flaky_proc_info *pi;
	struct flaky_proc *p;
	struct ctx	 c;
	int64_t		 t0;
	char		*s;
	pid_t		 g;

	/* orphans come to us, so they are reaped and kill(pid, 0) tells */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	ctx_init(&c);
	t0 = flaky_mono_us();
	p = run(&c, &o);
	t0 = flaky_mono_us() - t0;
	pi = flaky_proc_info(p);
	ck_assert_int_eq(pi->end, FLAKY_PROC_TIMEOUT);
	ck_assert_int_eq(pi->signal, SIGKILL);
	/* libevent's clock is CLOCK_MONOTONIC_COARSE (a few ms steps) */
	ck_assert_int_ge(t0, (300 + 500 - 20) * 1000);
	ck_assert_int_lt(t0, (300 + 500 + 3000) * 1000);
	s = output(p, FLAKY_STDOUT);
	g = (pid_t)atoi(s);
	ck_assert_int_gt(g, 1);
	free(s);
	wait_gone(&c, g);
	flaky_proc_free(p);
	ctx_free(&c);
}
END_TEST

/* A grandchild in the group that keeps the pipe after the child exited is
 * ended with the group; one that left the group only holds the run for the
 * short drain. */
START_TEST(grandchild_pipe)
{
	char *const	 a1[] = { "/bin/sh", "-c",
	    "sleep 1000 & echo $!; exit 4", NULL };
	char *const	 a2[] = { "/bin/sh", "-c",
	    "setsid sleep 1000 & p=$!; " ESCAPED "echo $p; exit 5", NULL };
	struct flaky_spawn_opts o = { .argv = a1 };
	struct flaky_proc *p;
	struct ctx	 c;
	int64_t		 t0;
	char		*s;
	pid_t		 g;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	ctx_init(&c);
	t0 = flaky_mono_us();
	p = run(&c, &o);
	t0 = flaky_mono_us() - t0;
	ck_assert_int_eq(flaky_proc_info(p)->end, FLAKY_PROC_EXITED);
	ck_assert_int_eq(flaky_proc_info(p)->exit_code, 4);
	ck_assert_int_lt(t0, (FLAKY_DRAIN_MS + 2000) * 1000);
	s = output(p, FLAKY_STDOUT);
	g = (pid_t)atoi(s);
	free(s);
	wait_gone(&c, g);
	flaky_proc_free(p);

	o.argv = a2;
	t0 = flaky_mono_us();
	p = run(&c, &o);
	t0 = flaky_mono_us() - t0;
	ck_assert_int_eq(flaky_proc_info(p)->exit_code, 5);
	ck_assert_int_lt(t0, (FLAKY_DRAIN_MS + 2000) * 1000);
	s = output(p, FLAKY_STDOUT);
	g = (pid_t)atoi(s);
	free(s);
	/* out of our reach by design; clean up after the test */
	ck_assert_int_gt(g, 1);
	kill(g, SIGKILL);
	wait_gone(&c, g);
	flaky_proc_free(p);
	ctx_free(&c);
}
END_TEST

START_TEST(bad_commands)
{
	char		 dir[] = "/tmp/flaky-test-XXXXXX";
	char		 file[64], err[256];
	char *const	 a1[] = { "no-such-command-xyz", NULL };
	char *const	 a2[] = { file, NULL };
	char *const	 a3[] = { dir, NULL };
	char *const	 a4[] = { "./sub", NULL };
	struct flaky_spawn_opts o = { .argv = a1 };
	struct flaky_proc *p = NULL;
	struct ctx	 c;
	char		 want[256];
	int		 fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof file, "%s/script.sh", dir);
	ck_assert_int_ge(fd = open(file, O_WRONLY | O_CREAT, 0644), 0);
	ck_assert_int_eq(write(fd, "#!/bin/sh\n", 10), 10);
	close(fd);
	ctx_init(&c);
	ck_assert_int_eq(flaky_spawn(c.sp, &o, NULL, on_done, &c, &p, err,
	    sizeof err), -ENOENT);
	ck_assert_str_eq(err, "no-such-command-xyz: command not found");
	o.argv = a2;
	ck_assert_int_eq(flaky_spawn(c.sp, &o, NULL, on_done, &c, &p, err,
	    sizeof err), -EACCES);
	snprintf(want, sizeof want, "%s: not executable (permission denied)",
	    file);
	ck_assert_str_eq(err, want);
	o.argv = a3;
	ck_assert_int_eq(flaky_spawn(c.sp, &o, NULL, on_done, &c, &p, err,
	    sizeof err), -EISDIR);
	snprintf(want, sizeof want, "%s: is a directory, not a command", dir);
	ck_assert_str_eq(err, want);
	/* relative to the working directory */
	ck_assert_int_eq(mkdir(strcat(strcpy(want, dir), "/sub"), 0755), 0);
	o.argv = a4;
	o.dir = dir;
	ck_assert_int_eq(flaky_spawn(c.sp, &o, NULL, on_done, &c, &p, err,
	    sizeof err), -EISDIR);
	ck_assert_str_eq(err, "./sub: is a directory, not a command");
	/* through PATH: not executable wins over not found, as in a shell */
	{
		char	 pathenv[200];
		char *const env[] = { pathenv, NULL };
		char *const a5[] = { "script.sh", NULL };

		snprintf(pathenv, sizeof pathenv, "PATH=/nonexistent:%s", dir);
		o.argv = a5;
		o.envp = env;
		o.dir = NULL;
		ck_assert_int_eq(flaky_spawn(c.sp, &o, NULL, on_done, &c, &p,
		    err, sizeof err), -EACCES);
		ck_assert_str_eq(err,
		    "script.sh: not executable (permission denied)");
		o.envp = NULL;
		o.argv = a4;
	}
	o.dir = "/nonexistent-dir-xyz";
	ck_assert_int_eq(flaky_spawn(c.sp, &o, NULL, on_done, &c, &p, err,
	    sizeof err), -ENOENT);
	ck_assert_str_eq(err,
	    "/nonexistent-dir-xyz: working directory does not exist");
	ck_assert_ptr_null(p);
	ck_assert_int_eq(c.done, 0);
	ctx_free(&c);
	rmdir(want);
	unlink(file);
	rmdir(dir);
}
END_TEST

/* The run starts in its working directory: another one, or ours (where no
 * chdir is needed). */
START_TEST(working_dir)
{
	char *const	 argv[] = { "/bin/pwd", "-P", NULL };
	struct flaky_spawn_opts o = { .argv = argv, .dir = "/" };
	struct flaky_proc *p;
	struct ctx	 c;
	char		 here[PATH_MAX], want[PATH_MAX + 2], *s;

	ck_assert_ptr_nonnull(realpath(".", here));
	ctx_init(&c);
	p = run(&c, &o);
	s = output(p, FLAKY_STDOUT);
	ck_assert_str_eq(s, "/\n");
	free(s);
	flaky_proc_free(p);
	o.dir = here;
	p = run(&c, &o);
	s = output(p, FLAKY_STDOUT);
	snprintf(want, sizeof want, "%s\n", here);
	ck_assert_str_eq(s, want);
	free(s);
	flaky_proc_free(p);
	ctx_free(&c);
}
END_TEST

/* An exec that fails in the child (here a path resolved earlier and gone
 * since) is the spawn's error, and the child it made is reaped. */
START_TEST(exec_fails)
{
	char *const	 argv[] = { "gone", NULL };
	struct flaky_spawn_opts o = { .argv = argv, .path = "/nonexistent/gone" };
	struct flaky_proc *p = NULL;
	struct ctx	 c;
	siginfo_t	 si;
	char		 err[256];

	ctx_init(&c);
	if (getenv("FLAKY_VALGRIND") != NULL) {
		/* valgrind runs the child on a copy of our memory: the
		 * failure is the run's exit status (lib/spawn.c) */
		p = run(&c, &o);
		ck_assert_int_eq(flaky_proc_info(p)->exit_code, 127);
		flaky_proc_free(p);
		ctx_free(&c);
		return;
	}
	ck_assert_int_eq(flaky_spawn(c.sp, &o, NULL, on_done, &c, &p, err,
	    sizeof err), -ENOENT);
	ck_assert_str_eq(err, "gone: No such file or directory");
	ck_assert_ptr_null(p);
	memset(&si, 0, sizeof si);
	ck_assert_int_eq(waitid(P_ALL, 0, &si, WEXITED | WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
	ctx_free(&c);
}
END_TEST

START_TEST(parallel)
{
	char *const	 argv[] = { "/bin/sh", "-c", "echo $$", NULL };
	struct flaky_spawn_opts o = { .argv = argv };
	struct flaky_proc *p[4];
	struct ctx	 c;
	char		 err[256], want[32], *s;

	ctx_init(&c);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(flaky_spawn(c.sp, &o, NULL, on_done, &c,
		    &p[i], err, sizeof err), 0);
		ck_assert_int_eq(flaky_proc_info(p[i])->in_flight, i + 1);
	}
	ck_assert_int_eq(flaky_spawner_running(c.sp), 4);
	ck_assert_int_eq(flaky_spawner_free(c.sp), -EBUSY);
	drive(&c, &c.done, 4, DEADLINE_MS);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(flaky_proc_info(p[i])->exit_code, 0);
		s = output(p[i], FLAKY_STDOUT);
		snprintf(want, sizeof want, "%d\n",
		    (int)flaky_proc_info(p[i])->pid);
		ck_assert_str_eq(s, want);
		free(s);
		flaky_proc_free(p[i]);
	}
	ctx_free(&c);
}
END_TEST

START_TEST(stop)
{
	char *const	 argv[] = { "sleep", "1000", NULL };
	struct flaky_spawn_opts o = { .argv = argv, .grace_ms = 5000 };
	struct flaky_proc *p;
	struct ctx	 c;
	char		 err[256];
	int64_t		 t0 = flaky_mono_us();

	ctx_init(&c);
	ck_assert_int_eq(flaky_spawn(c.sp, &o, NULL, on_done, &c, &p, err,
	    sizeof err), 0);
	flaky_proc_stop(p);
	drive(&c, &c.done, 1, DEADLINE_MS);
	ck_assert_int_eq(flaky_proc_info(p)->end, FLAKY_PROC_STOPPED);
	ck_assert_int_eq(flaky_proc_info(p)->signal, SIGTERM);
	ck_assert_int_lt(flaky_mono_us() - t0, 4000000);
	flaky_proc_free(p);
	/* freeing a live run ends it too */
	ck_assert_int_eq(flaky_spawn(c.sp, &o, NULL, on_done, &c, &p, err,
	    sizeof err), 0);
	flaky_proc_free(p);
	ck_assert_int_eq(c.done, 1);
	ctx_free(&c);
}
END_TEST

/* A stop that comes after the run exited on its own (while a grandchild
 * outside the group holds the pipe for the drain) does not relabel it. */
START_TEST(stop_after_exit)
{
	char *const	 argv[] = { "/bin/sh", "-c",
	    "setsid sleep 1000 & p=$!; " ESCAPED "echo $p; exit 0", NULL };
	struct flaky_spawn_opts o = { .argv = argv };
	const struct flaky_proc_info *pi;
	struct flaky_proc *p;
	struct ctx	 c;
	char		 err[256], *s;
	int64_t		 end = flaky_mono_us() + 10 * 1000000;

	ctx_init(&c);
	ck_assert_int_eq(flaky_spawn(c.sp, &o, NULL, on_done, &c, &p, err,
	    sizeof err), 0);
	pi = flaky_proc_info(p);
	/* reaped (end_ms set), still draining */
	while (pi->end_ms == 0 && flaky_mono_us() < end)
		event_base_loop(c.base, EVLOOP_ONCE);
	ck_assert_int_ne(pi->end_ms, 0);
	ck_assert_int_eq(c.done, 0);
	flaky_proc_stop(p);
	drive(&c, &c.done, 1, DEADLINE_MS);
	ck_assert_int_eq(pi->end, FLAKY_PROC_EXITED);
	ck_assert_int_eq(pi->exit_code, 0);
	s = output(p, FLAKY_STDOUT);
	kill((pid_t)atoi(s), SIGKILL);
	free(s);
	flaky_proc_free(p);
	ctx_free(&c);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("spawn");
	TCase	*tc = tcase_create("spawn");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, exit_and_signal);
	tcase_add_test(tc, stdin_null);
	tcase_add_test(tc, signals_reset);
	tcase_add_test(tc, process_group);
	tcase_add_test(tc, descriptors);
	tcase_add_test(tc, timeout_group);
	tcase_add_test(tc, grandchild_pipe);
	tcase_add_test(tc, bad_commands);
	tcase_add_test(tc, working_dir);
	tcase_add_test(tc, exec_fails);
	tcase_add_test(tc, parallel);
	tcase_add_test(tc, stop);
	tcase_add_test(tc, stop_after_exit);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
