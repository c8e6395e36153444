/* A short command run to its end for what it prints: git rev-parse when
 * the files of .git do not settle HEAD, a Python runner's count of the
 * tests it would run. Synchronous and bounded in time: the command runs in
 * its own process group, so that a command hung on a lock, a network file
 * system or an import is killed whole at the deadline. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/run.h"
#include "util/util.h"

extern char **environ;

/* Milliseconds left until deadline (monotonic us), at least 0. */
static int
probe_left(int64_t deadline)
{
	int64_t	 left = (deadline - flaky_mono_us()) / 1000;

	return left < 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

/* Read the pipe until EOF or the deadline; the first bytes are kept, the
 * rest drained. 0 at EOF, -ETIMEDOUT. */
static int
probe_read(int fd, int64_t deadline, char *buf, size_t size,
    size_t *ret_len)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	char		 junk[512];
	ssize_t		 n;
	int		 r;

	*ret_len = 0;
	for (;;) {
		if ((r = poll(&pfd, 1, probe_left(deadline))) == -1 &&
		    errno == EINTR)
			continue;
		if (r == 0)
			return -ETIMEDOUT;
		if (*ret_len < size - 1)
			n = read(fd, buf + *ret_len, size - 1 - *ret_len);
		else
			n = read(fd, junk, sizeof junk);
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return 0;
		if (*ret_len < size - 1)
			*ret_len += (size_t)n;
	}
}

/* Wait for pid until the deadline: 0 with *status, -ECHILD when SIGCHLD
 * is ignored (the kernel reaped it), -ETIMEDOUT. Through a pidfd; a
 * kernel without pidfds waits for the exit that follows the EOF. */
static int
probe_wait(pid_t pid, int64_t deadline, int *status)
{
	struct pollfd	 pfd;
	int		 fd, r;

	if ((fd = (int)syscall(SYS_pidfd_open, pid, 0)) >= 0) {
		pfd = (struct pollfd){ fd, POLLIN, 0 };
		while ((r = poll(&pfd, 1, probe_left(deadline))) == -1 &&
		    errno == EINTR)
			;
		close(fd);
		if (r == 0)
			return -ETIMEDOUT;
	}
	while ((r = waitpid(pid, status, 0)) == -1 && errno == EINTR)
		;
	return r == -1 ? -ECHILD : 0;
}

/* PATH of envp (NULL: ours). */
static const char *
probe_path(char *const *envp)
{
	if (envp == NULL)
		return getenv("PATH");
	for (size_t i = 0; envp[i] != NULL; i++)
		if (strncmp(envp[i], "PATH=", 5) == 0)
			return envp[i] + 5;
	return NULL;
}

/* Run the probe (run.h). */
int
flaky_probe_run(const struct flaky_probe *pr, char *buf, size_t size,
    size_t *ret_len, int *exit_code)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char		 path[PATH_MAX];
	int		 p[2], status = 0, r, timedout;
	int64_t		 deadline;
	pid_t		 pid;

	*ret_len = 0;
	*exit_code = -1;
	if (size > 0)
		buf[0] = '\0';
	if (size < 2)
		return -EINVAL;
	if (pipe2(p, O_CLOEXEC) == -1)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	if (pr->stderr_too)
		posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	else
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null",
		    O_WRONLY, 0);
	if (pr->dir != NULL)
		posix_spawn_file_actions_addchdir_np(&fa, pr->dir);
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&at, 0);
	/* looked up in the PATH of the environment it runs with */
	if ((r = -flaky_path_find(pr->argv[0], pr->dir, probe_path(pr->envp),
	    path, sizeof path)) == 0)
		r = posix_spawn(&pid, path, &fa, &at, (char *const *)pr->argv,
		    pr->envp != NULL ? pr->envp : environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (r != 0) {
		close(p[0]);
		return -r;
	}
	deadline = flaky_mono_us() + pr->timeout_ms * 1000;
	timedout = probe_read(p[0], deadline, buf, size, ret_len) < 0;
	buf[*ret_len] = '\0';
	close(p[0]);
	if (!timedout && (r = probe_wait(pid, deadline, &status)) ==
	    -ETIMEDOUT)
		timedout = 1;
	if (timedout) {
		kill(-pid, SIGKILL);
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			;
		return -ETIMEDOUT;
	}
	/* With SIGCHLD ignored (inherited through exec) there is no status:
	 * the caller judges by the output. */
	if (r == -ECHILD)
		*exit_code = 0;
	else
		*exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	return 0;
}
