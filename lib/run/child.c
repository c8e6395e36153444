/* The child of a run, from clone to exec: its environment made ready by
 * the parent, then signals reset, its own process group, the three
 * streams, every other descriptor closed. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn_int.h"

/* Is st (of a directory) our working directory? */
int
is_cwd(const struct stat *st)
{
	struct stat	 cwd;

	return stat(".", &cwd) == 0 && cwd.st_dev == st->st_dev &&
	    cwd.st_ino == st->st_ino;
}

/* The child's environment: envp with TMPDIR replaced (TMP and TEMP, which
 * some tools read on other systems, are passed on as they are). */
char **
make_env(char *const *envp, const char *tmpdir)
{
	size_t	 n = 0, k = 0;
	char	**v;

	for (n = 0; envp[n] != NULL; n++)
		;
	if ((v = calloc(n + 2, sizeof *v)) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(envp[i], "TMPDIR=", 7) != 0)
			v[k++] = envp[i];
	if (asprintf(&v[k], "TMPDIR=%s", tmpdir) == -1) {
		free(v);
		return NULL;
	}
	v[k + 1] = NULL;
	return v;
}

void
free_env(char **v)
{
	size_t	 i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		;
	if (i > 0)
		free(v[i - 1]);		/* our TMPDIR= string */
	free(v);
}

const char *
env_get(char *const *envp, const char *name)
{
	size_t	 n = strlen(name);

	for (size_t i = 0; envp[i] != NULL; i++)
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

#define CHILD_STACK	(64 * 1024)	/* a child's until it execs */

/* Not instrumented by AddressSanitizer: the child runs on the spawner's
 * stack and never returns, so the poison of its frames would stay behind
 * in the shadow of that stack for the next child to trip on. */
#define CHILD_CODE	__attribute__((no_sanitize_address))

static void	child_exec(struct child_plan *) CHILD_CODE
		    __attribute__((noreturn));

/* Dispositions to default, then its own group, the three streams, the
 * working directory, every other descriptor closed, no signal blocked,
 * exec (STYLE.md, tmux job.c): a suite behaves as in a terminal even when
 * we run under nohup. The signals were all blocked by the parent before
 * the clone, so no handler of ours runs in the child before it is reset.
 * glibc refuses its two internal signals (32, 33) to sigaction, and exec
 * keeps them ignored when they were (GNU make's commands have both
 * ignored: the package's build runs the unit suites so): they are set
 * through the system call, a zeroed kernel sigaction being SIG_DFL. */
static void
child_exec(struct child_plan *c)
{
	static const unsigned long ksa_dfl[8];
	struct sigaction sa;
	sigset_t	 none;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);
	for (int sig = __SIGRTMIN; sig < SIGRTMIN; sig++)
		syscall(SYS_rt_sigaction, sig, ksa_dfl, NULL, (NSIG - 1) / 8);
	if (setpgid(0, 0) == -1)
		goto fail;
	for (int i = 0; i < 3; i++)
		if (dup2(c->fd[i], i) == -1)
			goto fail;
	if (c->dir != NULL && chdir(c->dir) == -1)
		goto fail;
	if (close_range(3, ~0U, 0) == -1)
		for (int fd = 3; fd < c->maxfd; fd++)
			close(fd);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(c->path, c->argv, c->envp);
fail:
	c->err = errno;
	_exit(127);
}

static int	child_main(void *) CHILD_CODE;

static int
child_main(void *arg)
{
	child_exec(arg);
}

/* Start the child of plan c: its pid, or a negative errno (the child, if
 * one was made, is reaped). clone with CLONE_VM and CLONE_VFORK, as
 * glibc's posix_spawn does, on a stack of the spawner's kept for all its
 * children: posix_spawn maps and unmaps one, and allocates its file
 * actions, for each call, 1.8 ms of benchmark (a)'s 146 here. We resume
 * once the child has exec'd or exited, so the stack is free again. (Under
 * valgrind, which runs the child on a copy of our memory, an exec that
 * fails shows as the run's exit status 127.) */
pid_t
child_start(struct flaky_spawner *sp, struct child_plan *c)
{
	sigset_t	 all, old;
	long		 pg = sysconf(_SC_PAGESIZE);
	void		*st;
	pid_t		 pid;

	if (sp->stack == NULL) {
		/* a guard page below it */
		st = mmap(NULL, CHILD_STACK + (size_t)pg, PROT_READ |
		    PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (st == MAP_FAILED)
			return -errno;
		if (mprotect(st, (size_t)pg, PROT_NONE) == -1) {
			munmap(st, CHILD_STACK + (size_t)pg);
			return -errno;
		}
		sp->stack = st;
		sp->stack_len = CHILD_STACK + (size_t)pg;
	}
	c->err = 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = clone(child_main, (char *)sp->stack + sp->stack_len,
	    CLONE_VM | CLONE_VFORK | SIGCHLD, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid == -1)
		return -errno;
	if (c->err != 0) {
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
			;
		return -c->err;
	}
	return pid;
}

/* fd, moved above the standard streams (only when ours were closed): the
 * child's dup2 onto 0, 1 and 2 must not overwrite one it still needs. */
int
above_streams(int *fd)
{
	int	 nfd;

	if (*fd > 2)
		return 0;
	if ((nfd = fcntl(*fd, F_DUPFD_CLOEXEC, 3)) == -1)
		return -1;
	close(*fd);
	*fd = nfd;
	return 0;
}
