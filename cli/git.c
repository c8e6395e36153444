/* git run to its end, for bisect between runs: a worktree added or
 * removed, a revision resolved, a range listed. Never through a shell. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "flakyctl.h"
#include "log.h"
#include "util/util.h"

#define GIT_OUT_MAX	(64 << 20)

/* Run git -C dir with args; its stdout without the last newline in *out
 * (when out is not NULL). Its exit status, or -1 when it did not run. */
int
ctl_git(const char *dir, char **out, const char *const *args)
{
	const char	*argv[16];
	struct flaky_buf b;
	char		 chunk[8192];
	int		 fd[2], status, null;
	size_t		 n = 0;
	ssize_t		 k;
	pid_t		 pid;

	if (out != NULL)
		*out = NULL;
	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = dir;
	for (size_t i = 0; args[i] != NULL && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe2(fd, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		if ((null = open("/dev/null", O_RDWR)) == -1 ||
		    dup2(null, 0) == -1 || dup2(fd[1], 1) == -1 ||
		    dup2(null, 2) == -1)
			_exit(127);
		execvp("git", (char *const *)argv);
		_exit(127);
	}
	close(fd[1]);
	flaky_buf_init(&b);
	while ((k = read(fd[0], chunk, sizeof chunk)) != 0) {
		if (k == -1 && errno == EINTR)
			continue;
		if (k == -1)
			break;
		if (b.len < GIT_OUT_MAX)
			flaky_buf_add(&b, chunk, (size_t)k);
	}
	close(fd[0]);
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return -1;
	if (b.oom)
		fatalx("out of memory");
	while (b.len > 0 && b.data[b.len - 1] == '\n')
		b.len--;
	if (out != NULL) {
		flaky_buf_addc(&b, '\0');
		*out = flaky_buf_steal(&b);
		if (*out == NULL)
			fatalx("out of memory");
	} else
		flaky_buf_free(&b);
	if (!WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status) == 127 ? -1 : WEXITSTATUS(status);
}

/* The full hash of a revision given by the user, or NULL. */
char *
ctl_git_commit(const char *top, const char *rev)
{
	char	*spec, *out;

	xasprintf(&spec, "%s^{commit}", rev);
	if (ctl_git(top, &out, (const char *[]){ "rev-parse", "--verify",
	    "--quiet", "--end-of-options", spec, NULL }) != 0) {
		free(out);
		out = NULL;
	}
	free(spec);
	return out;
}
