/* Two ways a process of a hung run gives its stacks (issue 33): Python's
 * faulthandler, asked by a signal, writes every thread's traceback to the
 * file the run's sitecustomize opened; anything else native is read by
 * gdb (or eu-stack), every thread's backtrace, with symbols when present.
 * Both are bounded in time and bytes, and neither leaves a process
 * stopped. On the capture's thread. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stacks_int.h"

/* One poll interval, on the capture's thread (never the loop's). */
void
stacks_nap(void)
{
	struct timespec	 ts = { 0, STACKS_POLL_MS * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Append at most room bytes of fd's content from off to its end. */
static void
read_from(int fd, off_t off, off_t end, size_t room, struct flaky_buf *out)
{
	char	 buf[8192];
	ssize_t	 n;

	while (off < end && room > 0) {
		size_t	 want = sizeof buf;

		if ((off_t)want > end - off)
			want = (size_t)(end - off);
		if (want > room)
			want = room;
		if ((n = pread(fd, buf, want, off)) <= 0)
			break;
		flaky_buf_add(out, buf, (size_t)n);
		off += n;
		room -= (size_t)n;
	}
}

/* Python: the signal its faulthandler is registered for, then the file
 * read once it grew and settled. 0 with out filled, or -errno with note
 * saying why not. */
int
stacks_python(const char *dir, pid_t pid, int64_t deadline_us,
    atomic_int *cancel, struct flaky_buf *out, char *note, size_t notelen)
{
	char		 path[4096];
	struct stat	 st;
	off_t		 start, last;
	int64_t		 still_since = 0;
	int		 fd, r = -ETIMEDOUT;

	snprintf(path, sizeof path, "%s/py-%d", dir, (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(note, notelen, "no faulthandler file of this "
		    "process");
		return -ENOENT;
	}
	if (fstat(fd, &st) == -1) {
		close(fd);
		return -errno;
	}
	start = last = st.st_size;
	if (kill(pid, STACKS_PY_SIGNAL) == -1) {
		r = -errno;
		snprintf(note, notelen, "signal: %s", strerror(errno));
		close(fd);
		return r;
	}
	while (flaky_mono_us() < deadline_us && !atomic_load(cancel)) {
		stacks_nap();
		if (fstat(fd, &st) == -1)
			break;
		if (st.st_size != last) {
			last = st.st_size;
			still_since = flaky_mono_us();
		} else if (last > start && flaky_mono_us() - still_since >=
		    STACKS_QUIET_MS * 1000) {
			r = 0;
			break;
		}
	}
	if (last > start)
		read_from(fd, start, last, FLAKY_STACKS_PROC_BYTES, out);
	if (r < 0 && last > start) {
		snprintf(note, notelen, "the dump was still growing at the "
		    "bound");
		r = 0;
	} else if (r < 0)
		snprintf(note, notelen, "no answer to the faulthandler "
		    "signal within the bound");
	close(fd);
	return r;
}

/* argv of the tool for pid: gdb, every thread's backtrace (the innermost
 * 64 frames each) and the symbol at each contended mutex; or eu-stack. */
static int
tool_argv(const char *tool, int gdb, pid_t pid,
    const struct stacks_lockwait *w, size_t nw, char ***ret)
{
	char	**v;
	size_t	 n = 0;
	char	 buf[128];

	if ((v = calloc(16 + 4 * nw, sizeof *v)) == NULL)
		return -ENOMEM;
#define ADD(s)	do { if ((v[n++] = strdup(s)) == NULL) goto oom; } while (0)
	ADD(tool);
	if (gdb) {
		ADD("-nx");
		ADD("-batch");
		snprintf(buf, sizeof buf, "%d", (int)pid);
		ADD("-p");
		ADD(buf);
		ADD("-ex");
		ADD("set debuginfod enabled off");
		ADD("-ex");
		ADD("thread apply all bt 64");
		for (size_t i = 0; i < nw; i++) {
			snprintf(buf, sizeof buf, "echo flaky-lock 0x%" PRIx64
			    ": \n", w[i].addr);
			ADD("-ex");
			ADD(buf);
			snprintf(buf, sizeof buf, "info symbol 0x%" PRIx64,
			    w[i].addr);
			ADD("-ex");
			ADD(buf);
		}
	} else {
		ADD("-s");
		ADD("-i");
		ADD("-n");
		ADD("64");
		snprintf(buf, sizeof buf, "%d", (int)pid);
		ADD("-p");
		ADD(buf);
	}
#undef ADD
	*ret = v;
	return 0;
oom:
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return -ENOMEM;
}

/* Start argv with its stdout and stderr into a pipe, in a group of its
 * own, a plain environment; its pid, or -errno. */
static pid_t
tool_start(char **argv, int *rfd)
{
	static char *const envp[] = { "PATH=/usr/bin:/bin", "LC_ALL=C",
	    "HOME=/nonexistent",
	    NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t	 all, none;
	pid_t		 pid;
	int		 p[2], r;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	sigfillset(&all);
	sigemptyset(&none);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	r = posix_spawn(&pid, argv[0], &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(p[1]);
	if (r != 0) {
		close(p[0]);
		return -r;
	}
	*rfd = p[0];
	return pid;
}

/* argv's output (its stdout and stderr), read until it ends or the
 * deadline (then it is killed with its group); a pid it left stopped (a
 * tracer killed while attached can) is continued. 0, or -ETIMEDOUT with
 * note saying so. */
static int
run_argv(char **argv, pid_t pid, int64_t deadline_us, atomic_int *cancel,
    struct flaky_buf *out, char *note, size_t notelen)
{
	char	 buf[8192];
	char	 before = stacks_state(pid);
	size_t	 kept = 0;
	pid_t	 tp;
	int	 fd = -1, ended = 0;

	if ((tp = tool_start(argv, &fd)) < 0) {
		snprintf(note, notelen, "%s: %s", argv[0], strerror((int)-tp));
		return (int)tp;
	}
	while (!atomic_load(cancel)) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int64_t	 left = (deadline_us - flaky_mono_us()) / 1000;
		ssize_t	 n;

		if (left <= 0)
			break;
		if (poll(&pfd, 1, left > STACKS_POLL_MS * 5 ?
		    STACKS_POLL_MS * 5 : (int)left) <= 0)
			continue;
		if ((n = read(fd, buf, sizeof buf)) == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			ended = 1;
			break;
		}
		/* past the bound: drained, not kept */
		if (kept < FLAKY_STACKS_PROC_BYTES) {
			size_t m = (size_t)n;

			if (m > FLAKY_STACKS_PROC_BYTES - kept)
				m = FLAKY_STACKS_PROC_BYTES - kept;
			flaky_buf_add(out, buf, m);
			kept += m;
		}
	}
	if (!ended) {
		kill(-tp, SIGKILL);
		snprintf(note, notelen, "%s did not end within the bound",
		    argv[0]);
	}
	close(fd);
	while (waitpid(tp, NULL, 0) == -1 && errno == EINTR)
		;
	if (before != 'T' && before != 't' && stacks_state(pid) == 'T')
		kill(pid, SIGCONT);
	return ended ? 0 : -ETIMEDOUT;
}

/* Native: gdb's or eu-stack's backtraces of pid's threads. */
int
stacks_tool(const char *tool, int gdb, pid_t pid,
    const struct stacks_lockwait *w, size_t nw, int64_t deadline_us,
    atomic_int *cancel, struct flaky_buf *out, char *note, size_t notelen)
{
	char	**argv = NULL;
	int	 r;

	if ((r = tool_argv(tool, gdb, pid, w, nw, &argv)) < 0)
		return r;
	r = run_argv(argv, pid, deadline_us, cancel, out, note, notelen);
	for (size_t i = 0; argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
	return r;
}

/* The JVM: jcmd's Thread.print, through the attach mechanism, so the dump
 * comes to us whoever reads the JVM's stdout (ctest, Maven, Gradle hold
 * it until the test ends). */
int
stacks_jcmd(const char *jcmd, pid_t pid, int64_t deadline_us,
    atomic_int *cancel, struct flaky_buf *out, char *note, size_t notelen)
{
	char	 ps[24], *argv[5];

	snprintf(ps, sizeof ps, "%d", (int)pid);
	argv[0] = (char *)jcmd;
	argv[1] = ps;
	argv[2] = (char *)"Thread.print";
	argv[3] = (char *)"-l";
	argv[4] = NULL;
	return run_argv(argv, pid, deadline_us, cancel, out, note, notelen);
}
