/* spawn and run: exit codes and signals, capture within the bound, the
 * child's environment (stdin, signals, process group, descriptors, TMPDIR),
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
#include <sys/types.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include <event2/event.h>

#include "run/run.h"
#include "util/util.h"

#define DEADLINE_MS	20000

/* sh: wait until process $p has its own session (setsid has run), so that
 * it has left the run's group before the run ends; else the group kill at
 * the reap may end it first, and a test of escapees would race. */
#define ESCAPED \
	"until [ \"$(cut -d' ' -f6 /proc/$p/stat)\" = $p ]; do :; done; "

struct ctx {
	struct event_base	*base;
	struct flaky_spawner	*sp;
	int			 done;		/* runs finished */
	int			 expired;
	uint64_t		 seen[2];	/* bytes through data_cb */
};

static void
on_data(void *arg, int stream, const char *s, size_t n)
{
	struct ctx	*c = arg;

	(void)s;
	c->seen[stream] += n;
}

static void
on_done(void *arg, struct flaky_proc *p)
{
	struct ctx	*c = arg;

	(void)p;
	c->done++;
}

static void
on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct ctx	*c = arg;

	(void)fd;
	(void)what;
	c->expired = 1;
	event_base_loopbreak(c->base);
}

static void
ctx_init(struct ctx *c)
{
	memset(c, 0, sizeof *c);
	ck_assert_ptr_nonnull(c->base = event_base_new());
	ck_assert_int_eq(flaky_spawner_new(c->base, &c->sp), 0);
}

static void
ctx_free(struct ctx *c)
{
	ck_assert_int_eq(flaky_spawner_running(c->sp), 0);
	ck_assert_int_eq(flaky_spawner_free(c->sp), 0);
	event_base_free(c->base);
}

/* Run the loop until *flag reaches want or the deadline passed. */
static void
drive(struct ctx *c, int *flag, int want, int64_t ms)
{
	struct event	*t = evtimer_new(c->base, on_deadline, c);
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	c->expired = 0;
	evtimer_add(t, &tv);
	while (*flag < want && !c->expired)
		event_base_loop(c->base, EVLOOP_ONCE);
	event_free(t);
	ck_assert_msg(*flag >= want, "deadline of %lld ms passed",
	    (long long)ms);
}

/* Spawn argv and wait for it to end; returns the finished proc. */
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

static struct flaky_proc *
run(struct ctx *c, struct flaky_spawn_opts *o)
{
	struct flaky_proc *p;
	char		 err[256];
	int		 before = c->done;

	ck_assert_msg(flaky_spawn(c->sp, o, on_data, on_done, c, &p, err,
	    sizeof err) == 0, "%s", err);
	drive(c, &c->done, before + 1, DEADLINE_MS);
	return p;
}

static char *
output(struct flaky_proc *p, int stream)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	ck_assert_int_eq(flaky_proc_output(p, stream, &b), 0);
	return flaky_buf_steal(&b);
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

START_TEST(streams)
{
	char *const	 argv[] = { "/bin/sh", "-c",
	    "printf 'out 1\\n'; printf 'err 1\\n' >&2; printf 'out 2'", NULL };
	struct flaky_spawn_opts o = { .argv = argv };
	struct flaky_proc *p;
	struct ctx	 c;
	char		*s;

	ctx_init(&c);
	p = run(&c, &o);
	s = output(p, FLAKY_STDOUT);
	ck_assert_str_eq(s, "out 1\nout 2");
	free(s);
	s = output(p, FLAKY_STDERR);
	ck_assert_str_eq(s, "err 1\n");
	free(s);
	ck_assert_int_eq(flaky_proc_info(p)->bytes[0], 11);
	ck_assert_int_eq(flaky_proc_info(p)->bytes[1], 6);
	ck_assert_int_eq(flaky_proc_info(p)->dropped[0], 0);
	ck_assert_int_eq(c.seen[0], 11);
	ck_assert_int_eq(c.seen[1], 6);
	flaky_proc_free(p);
	ctx_free(&c);
}
END_TEST

/* 50 MB of numbered lines: the head and tail are kept exactly, the
 * rest counted, and the data callback saw every byte. */
START_TEST(flood)
{
	const long	 last = 6500000;
	char		 lastarg[32];
	char *const	 argv[] = { "seq", "1", lastarg, NULL };
	struct flaky_spawn_opts o = { .argv = argv };
	const struct flaky_proc_info *pi;
	struct flaky_buf want;
	struct flaky_proc *p;
	struct ctx	 c;
	size_t		 half = FLAKY_CAPTURE_DEFAULT / 4, total = 0;
	struct flaky_buf head, tail;
	char		*s, num[32];
	long		 i;
	size_t		 n;

	/* The expected text without holding 50 MB: the length by digits,
	 * the head forwards, the tail from the number it starts in. */
	snprintf(lastarg, sizeof lastarg, "%ld", last);
	for (long lo = 1, d = 1; lo <= last; lo *= 10, d++)
		total += (size_t)((last < lo * 10 - 1 ? last : lo * 10 - 1) -
		    lo + 1) * (size_t)(d + 1);
	ck_assert_uint_gt(total, 50 * 1000 * 1000);
	flaky_buf_init(&head);
	flaky_buf_init(&tail);
	for (i = 1; head.len < half; i++)
		flaky_buf_printf(&head, "%ld\n", i);
	for (i = last, n = 0; n < half; i--)
		n += (size_t)snprintf(num, sizeof num, "%ld\n", i);
	for (i++; i <= last; i++)
		flaky_buf_printf(&tail, "%ld\n", i);
	flaky_buf_init(&want);
	flaky_buf_add(&want, head.data, half);
	flaky_buf_printf(&want, "\n[... %zu bytes not kept ...]\n",
	    total - 2 * half);
	flaky_buf_add(&want, tail.data + tail.len - half, half);
	ck_assert(!want.oom && !head.oom && !tail.oom);
	flaky_buf_free(&head);
	flaky_buf_free(&tail);

	ctx_init(&c);
	p = run(&c, &o);
	pi = flaky_proc_info(p);
	ck_assert_int_eq(pi->exit_code, 0);
	ck_assert_uint_eq(pi->bytes[0], total);
	ck_assert_uint_eq(pi->dropped[0], total - 2 * half);
	ck_assert_uint_eq(c.seen[0], total);
	s = output(p, FLAKY_STDOUT);
	ck_assert_uint_eq(strlen(s), want.len);
	ck_assert(memcmp(s, want.data, want.len) == 0);
	free(s);
	flaky_buf_free(&want);
	flaky_proc_free(p);
	ctx_free(&c);
}
END_TEST

/* A small bound over many small writes: the tail ring wraps many times. */
START_TEST(small_bound)
{
	char *const	 argv[] = { "/bin/sh", "-c",
	    "i=1; while [ $i -le 3000 ]; do echo $i; echo e$i >&2; "
	    "i=$((i + 1)); done", NULL };
	struct flaky_spawn_opts o = { .argv = argv, .capture_max = 101 };
	const struct flaky_proc_info *pi;
	struct flaky_buf all, want;
	struct flaky_proc *p;
	struct ctx	 c;
	char		*s;

	/* stdout keeps 50 (25 + 25), stderr 51 (25 + 26) */
	ctx_init(&c);
	p = run(&c, &o);
	pi = flaky_proc_info(p);
	for (int stream = 0; stream < 2; stream++) {
		size_t	 cap = stream ? 51 : 50, head = cap / 2;

		flaky_buf_init(&all);
		flaky_buf_init(&want);
		for (int i = 1; i <= 3000; i++)
			flaky_buf_printf(&all, stream ? "e%d\n" : "%d\n", i);
		flaky_buf_add(&want, all.data, head);
		flaky_buf_printf(&want, "\n[... %zu bytes not kept ...]\n",
		    all.len - cap);
		flaky_buf_add(&want, all.data + all.len - (cap - head),
		    cap - head);
		ck_assert_uint_eq(pi->bytes[stream], all.len);
		ck_assert_uint_eq(pi->dropped[stream], all.len - cap);
		s = output(p, stream);
		ck_assert_str_eq(s, flaky_buf_cstr(&want));
		free(s);
		flaky_buf_free(&all);
		flaky_buf_free(&want);
	}
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
	sigset_t	 set, old;
	struct sigaction sa, o_int, o_term, o_pipe;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, &o_int);
	sigaction(SIGTERM, &sa, &o_term);
	sigaction(SIGPIPE, &sa, &o_pipe);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	/* exec: grep sees what the spawn left (a shell may clear its mask) */
	sh_out("exec grep -E '^Sig(Ign|Blk)' /proc/self/status",
	    "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
	sigprocmask(SIG_SETMASK, &old, NULL);
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
 * read-only or unreadable (tests of permission errors do that). Run as an
 * unprivileged user in a child: root removes anything anyway. */
START_TEST(tmpdir_readonly)
{
	char		 parent[] = "/tmp/flaky-test-XXXXXX";
	int		 status;
	pid_t		 pid;

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
		struct stat	 st;

		if (geteuid() == 0 && (setgid(65534) == -1 ||
		    setuid(65534) == -1))
			_exit(99);
		ctx_init(&c);
		p = run(&c, &o);
		if (flaky_proc_info(p)->exit_code != 0)
			_exit(98);
		snprintf(path, sizeof path, "%s", flaky_proc_tmpdir(p));
		flaky_proc_free(p);
		if (stat(path, &st) == -1)
			_exit(97);
		/* The spawner's free removes what the loop did not. */
		ctx_free(&c);
		_exit(stat(path, &st) == -1 && errno == ENOENT ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "status %d", status);
	ck_assert_int_eq(rmdir(parent), 0);
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

/* git HEAD of a work tree; nothing outside one; also when SIGCHLD is
 * ignored (inherited through exec), so the child is reaped by the kernel
 * and waitpid() has no status to give. */
START_TEST(revision)
{
	char		 dir[] = "/tmp/flaky-git-XXXXXX", cmd[256];
	char		*rev = (char *)"x", *again = NULL;
	struct sigaction sa, old;
	FILE		*f;
	char		 want[64] = "";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(flaky_revision_git(dir, &rev), 0);
	ck_assert_ptr_null(rev);
	snprintf(cmd, sizeof cmd, "cd %s && git init -q . && "
	    "git -c user.name=t -c user.email=t@t commit -q --allow-empty "
	    "-m x && git rev-parse HEAD", dir);
	ck_assert_ptr_nonnull(f = popen(cmd, "r"));
	ck_assert_ptr_nonnull(fgets(want, sizeof want, f));
	ck_assert_int_eq(pclose(f), 0);
	want[strcspn(want, "\n")] = '\0';
	ck_assert_uint_eq(strlen(want), 40);
	ck_assert_int_eq(flaky_revision_git(dir, &rev), 0);
	ck_assert_str_eq(rev, want);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGCHLD, &sa, &old);
	ck_assert_int_eq(flaky_revision_git(dir, &again), 0);
	sigaction(SIGCHLD, &old, NULL);
	ck_assert_ptr_nonnull(again);
	ck_assert_str_eq(again, want);
	free(rev);
	free(again);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

#define GITC	"git -c user.name=t -c user.email=t@t"

/* A shell command of a revision test; it must succeed. */
static void
rev_sh(const char *fmt, ...)
{
	char	 cmd[2048];
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	ck_assert_int_lt(n, (int)sizeof cmd);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

/* git's own answer for dir, "" when rev-parse fails. */
static void
rev_want(const char *dir, char *want, size_t size)
{
	char	 cmd[1024];
	FILE	*f;

	snprintf(cmd, sizeof cmd,
	    "git -C '%s' rev-parse --verify -q HEAD 2>/dev/null", dir);
	want[0] = '\0';
	ck_assert_ptr_nonnull(f = popen(cmd, "r"));
	if (fgets(want, (int)size, f) == NULL)
		want[0] = '\0';
	pclose(f);
	want[strcspn(want, "\n")] = '\0';
}

/* flaky_revision_git() with PATH an empty directory: git cannot be
 * spawned, so only the files can give the answer. */
static char *
rev_nogit(const char *dir)
{
	char	 empty[] = "/tmp/flaky-nopath-XXXXXX", *old, *rev = NULL;

	ck_assert_ptr_nonnull(mkdtemp(empty));
	ck_assert_ptr_nonnull(old = strdup(getenv("PATH")));
	setenv("PATH", empty, 1);
	ck_assert_int_eq(flaky_revision_git(dir, &rev), 0);
	setenv("PATH", old, 1);
	free(old);
	ck_assert_int_eq(rmdir(empty), 0);
	return rev;
}

/* Our answer equals git's, with git on PATH and, when fast, without it;
 * returns git's answer into want. */
static void
rev_check(const char *dir, int fast, char *want, size_t size)
{
	char	*rev = (char *)"x";

	rev_want(dir, want, size);
	ck_assert_int_eq(flaky_revision_git(dir, &rev), 0);
	if (want[0] == '\0')
		ck_assert_ptr_null(rev);
	else
		ck_assert_str_eq(rev, want);
	free(rev);
	if (!fast)
		return;
	rev = rev_nogit(dir);
	if (want[0] == '\0')
		ck_assert_ptr_null(rev);
	else
		ck_assert_str_eq(rev, want);
	free(rev);
}

/* rev_check, fast path too, where git finds a SHA-1 revision. */
static void
rev_found(const char *dir, char *want, size_t size)
{
	rev_check(dir, 1, want, size);
	ck_assert_uint_eq(strlen(want), 40);
}

/* A new repository with branch main and n commits in dir/sub. */
static void
rev_repo(const char *dir, const char *sub, int n)
{
	rev_sh("git init -q -b main '%s/%s'", dir, sub);
	for (int i = 0; i < n; i++)
		rev_sh("cd '%s/%s' && " GITC " commit -q --allow-empty -m c%d",
		    dir, sub, i);
}

/* A loose branch ref, and a chain of symbolic refs to it. */
START_TEST(revision_loose)
{
	char		 dir[] = "/tmp/flaky-git-XXXXXX", path[512];
	char		 want[128], first[128];
	struct stat	 st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_repo(dir, "r", 2);
	snprintf(path, sizeof path, "%s/r/.git/refs/heads/main", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	snprintf(path, sizeof path, "%s/r", dir);
	rev_found(path, want, sizeof want);
	rev_sh("cd '%s' && git branch -q old HEAD~1 && "
	    "git symbolic-ref refs/heads/alias refs/heads/old && "
	    "git symbolic-ref HEAD refs/heads/alias", path);
	memcpy(first, want, sizeof first);
	rev_found(path, want, sizeof want);
	ck_assert_str_ne(want, first);
	rev_sh("rm -rf '%s'", dir);
}
END_TEST

/* A branch only in packed-refs, after pack-refs removed its loose file. */
START_TEST(revision_packed)
{
	char		 dir[] = "/tmp/flaky-git-XXXXXX", path[512];
	char		 want[128];
	struct stat	 st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_repo(dir, "r", 1);
	rev_sh("cd '%s/r' && git tag -a -m t v1 && git branch -q other && "
	    "git pack-refs --all", dir);
	snprintf(path, sizeof path, "%s/r/.git/refs/heads/main", dir);
	ck_assert_int_eq(stat(path, &st), -1);
	ck_assert_int_eq(errno, ENOENT);
	snprintf(path, sizeof path, "%s/r", dir);
	rev_found(path, want, sizeof want);
	rev_sh("rm -rf '%s'", dir);
}
END_TEST

/* A detached HEAD holds the id itself. */
START_TEST(revision_detached)
{
	char	 dir[] = "/tmp/flaky-git-XXXXXX", path[512];
	char	 want[128], tip[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_repo(dir, "r", 2);
	snprintf(path, sizeof path, "%s/r", dir);
	rev_want(path, tip, sizeof tip);
	rev_sh("cd '%s' && git checkout -q --detach HEAD~1", path);
	rev_found(path, want, sizeof want);
	ck_assert_str_ne(want, tip);
	rev_sh("rm -rf '%s'", dir);
}
END_TEST

/* A linked worktree: its own HEAD, the branches of the common dir, loose
 * and then packed. */
START_TEST(revision_worktree)
{
	char	 dir[] = "/tmp/flaky-git-XXXXXX", path[512], wt[512];
	char	 want[128], mainrev[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_repo(dir, "r", 1);
	snprintf(path, sizeof path, "%s/r", dir);
	snprintf(wt, sizeof wt, "%s/wt", dir);
	rev_sh("cd '%s' && git worktree add -q '%s' 2>/dev/null && "
	    "cd '%s' && " GITC " commit -q --allow-empty -m w && "
	    "mkdir sub", path, wt, wt);
	rev_check(path, 1, mainrev, sizeof mainrev);
	rev_found(wt, want, sizeof want);
	ck_assert_str_ne(want, mainrev);
	rev_sh("git -C '%s' pack-refs --all", path);
	rev_found(wt, want, sizeof want);
	snprintf(wt, sizeof wt, "%s/wt/sub", dir);
	rev_found(wt, want, sizeof want);
	rev_sh("rm -rf '%s'", dir);
}
END_TEST

/* A .git file naming the git dir elsewhere, absolute and relative. */
START_TEST(revision_gitfile)
{
	char	 dir[] = "/tmp/flaky-git-XXXXXX", path[512];
	char	 want[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_sh("cd '%s' && git init -q -b main --separate-git-dir store wt && "
	    "cd wt && " GITC " commit -q --allow-empty -m x && "
	    "grep -q '^gitdir: /' .git", dir);
	snprintf(path, sizeof path, "%s/wt", dir);
	rev_found(path, want, sizeof want);
	rev_sh("printf 'gitdir: ../store\\n' >'%s/.git'", path);
	rev_found(path, want, sizeof want);
	rev_sh("rm -rf '%s'", dir);
}
END_TEST

/* From a subdirectory of the work tree, also through a symlink from
 * outside it (git -C works from the physical path). */
START_TEST(revision_subdir)
{
	char	 dir[] = "/tmp/flaky-git-XXXXXX", path[512];
	char	 want[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_repo(dir, "r", 1);
	rev_sh("mkdir -p '%s/r/a/b/c' '%s/out' && "
	    "ln -s '%s/r/a/b' '%s/out/link'", dir, dir, dir, dir);
	snprintf(path, sizeof path, "%s/r/a/b/c", dir);
	rev_found(path, want, sizeof want);
	snprintf(path, sizeof path, "%s/out/link", dir);
	rev_found(path, want, sizeof want);
	rev_sh("rm -rf '%s'", dir);
}
END_TEST

/* No revision: an unborn branch, a directory outside any repository, one
 * that does not exist. */
START_TEST(revision_none)
{
	char	 dir[] = "/tmp/flaky-git-XXXXXX", path[512];
	char	 want[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_repo(dir, "r", 0);
	snprintf(path, sizeof path, "%s/r", dir);
	rev_check(path, 1, want, sizeof want);
	ck_assert_str_eq(want, "");
	rev_check(dir, 1, want, sizeof want);
	ck_assert_str_eq(want, "");
	snprintf(path, sizeof path, "%s/missing", dir);
	rev_check(path, 1, want, sizeof want);
	ck_assert_str_eq(want, "");
	rev_sh("rm -rf '%s'", dir);
}
END_TEST

/* What the files do not settle goes to git: environment that moves the
 * repository (also with SIGCHLD ignored), a bare git dir, a reftable
 * directory, an id git accepts but does not write. Without git on PATH
 * these give no revision, which shows git was asked, not guessed for. */
START_TEST(revision_fallback)
{
	char		 dir[] = "/tmp/flaky-git-XXXXXX", path[512];
	char		 gitdir[512], want[128], tip[128], *rev;
	struct sigaction sa, old;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	rev_repo(dir, "r", 1);
	snprintf(path, sizeof path, "%s/r", dir);
	snprintf(gitdir, sizeof gitdir, "%s/r/.git", dir);
	rev_want(path, tip, sizeof tip);
	ck_assert_uint_eq(strlen(tip), 40);

	/* dir itself is no repository; GIT_DIR names one */
	setenv("GIT_DIR", gitdir, 1);
	rev_check(dir, 0, want, sizeof want);
	ck_assert_str_eq(want, tip);
	ck_assert_ptr_null(rev_nogit(dir));
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGCHLD, &sa, &old);
	ck_assert_int_eq(flaky_revision_git(dir, &rev), 0);
	sigaction(SIGCHLD, &old, NULL);
	ck_assert_ptr_nonnull(rev);
	ck_assert_str_eq(rev, tip);
	free(rev);
	unsetenv("GIT_DIR");
	ck_assert_ptr_null(rev_nogit(dir));

	/* inside the git dir */
	rev_check(gitdir, 0, want, sizeof want);
	ck_assert_str_eq(want, tip);
	ck_assert_ptr_null(rev_nogit(gitdir));

	/* upper-case hex: git reads it, we do not */
	rev_sh("tr a-f A-F <'%s/refs/heads/main' >'%s/up' && "
	    "mv '%s/up' '%s/refs/heads/main'", gitdir, gitdir, gitdir, gitdir);
	rev_check(path, 0, want, sizeof want);
	ck_assert_str_eq(want, tip);
	ck_assert_ptr_null(rev_nogit(path));

	/* a reftable directory (git 2.39 ignores it without the extension) */
	rev_sh("printf '%%s\\n' '%s' >'%s/refs/heads/main' && "
	    "mkdir '%s/reftable'", tip, gitdir, gitdir);
	rev_check(path, 0, want, sizeof want);
	ck_assert_str_eq(want, tip);
	ck_assert_ptr_null(rev_nogit(path));
	rev_sh("rm -rf '%s'", dir);
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
	tcase_add_test(tc, streams);
	tcase_add_test(tc, flood);
	tcase_add_test(tc, small_bound);
	tcase_add_test(tc, stdin_null);
	tcase_add_test(tc, signals_reset);
	tcase_add_test(tc, process_group);
	tcase_add_test(tc, descriptors);
	tcase_add_test(tc, timeout_group);
	tcase_add_test(tc, grandchild_pipe);
	tcase_add_test(tc, bad_commands);
	tcase_add_test(tc, tmpdir);
	tcase_add_test(tc, tmpdir_ahead);
	tcase_add_loop_test(tc, tmpdir_reuse, 0, 2);
	tcase_add_test(tc, tmpdir_tmpfs);
	tcase_add_test(tc, tmpdir_env);
	tcase_add_test(tc, working_dir);
	tcase_add_test(tc, exec_fails);
	tcase_add_test(tc, tmpdir_readonly);
	tcase_add_test(tc, parallel);
	tcase_add_test(tc, stop);
	tcase_add_test(tc, stop_after_exit);
	tcase_add_test(tc, run_record);
	tcase_add_test(tc, revision);
	tcase_add_test(tc, revision_loose);
	tcase_add_test(tc, revision_packed);
	tcase_add_test(tc, revision_detached);
	tcase_add_test(tc, revision_worktree);
	tcase_add_test(tc, revision_gitfile);
	tcase_add_test(tc, revision_subdir);
	tcase_add_test(tc, revision_none);
	tcase_add_test(tc, revision_fallback);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
