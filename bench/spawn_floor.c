/* The floor under benchmark (a) (docs/performance.md): 200 runs of
 * /bin/true through posix_spawn with what flakyctl asks of it, and no
 * more, in steps:
 *
 *   bare      posix_spawn, waitpid
 *   attrs     + own process group, signals reset, mask cleared
 *   pipes     + stdin /dev/null, stdout and stderr to pipes, closefrom(3)
 *   pidfd     + the end seen through a pidfd in epoll
 *   work      + 1 MiB of memory touched by the parent while the child
 *               runs (what parent work overlapping a run costs here)
 *
 * Build: ninja -C build-bench bench/spawn_floor
 * Run:   hyperfine -N "sh -c 'for i in \$(seq 200); do /bin/true; done'" \
 *            "build-bench/bench/spawn_floor pipes" ...
 */
#include "buildconf.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define RUNS	200

extern char **environ;

static const char *const steps[] = { "bare", "attrs", "pipes", "pidfd",
    "work" };

int
main(int argc, char **argv)
{
	static volatile char	 mem[1 << 20];
	char *const		 args[] = { "true", NULL };
	int			 step = -1, ep = -1;

	for (size_t i = 0; argc == 2 && i < sizeof steps / sizeof *steps; i++)
		if (strcmp(argv[1], steps[i]) == 0)
			step = (int)i;
	if (step < 0) {
		fprintf(stderr, "usage: spawn_floor bare|attrs|pipes|pidfd|"
		    "work\n");
		return 2;
	}
	if (step >= 3 && (ep = epoll_create1(EPOLL_CLOEXEC)) == -1) {
		perror("epoll_create1");
		return 1;
	}
	for (int i = 0; i < RUNS; i++) {
		posix_spawn_file_actions_t fa;
		posix_spawnattr_t at;
		sigset_t	 all, none;
		int		 out[2] = { -1, -1 }, err[2] = { -1, -1 }, st;
		pid_t		 pid;

		posix_spawn_file_actions_init(&fa);
		posix_spawnattr_init(&at);
		if (step >= 1) {
			sigfillset(&all);
			sigemptyset(&none);
			posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
			    POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
			posix_spawnattr_setpgroup(&at, 0);
			posix_spawnattr_setsigdefault(&at, &all);
			posix_spawnattr_setsigmask(&at, &none);
		}
		if (step >= 2) {
			if (pipe2(out, O_CLOEXEC) == -1 ||
			    pipe2(err, O_CLOEXEC) == -1) {
				perror("pipe2");
				return 1;
			}
			posix_spawn_file_actions_addopen(&fa, 0, "/dev/null",
			    O_RDONLY, 0);
			posix_spawn_file_actions_adddup2(&fa, out[1], 1);
			posix_spawn_file_actions_adddup2(&fa, err[1], 2);
			posix_spawn_file_actions_addclosefrom_np(&fa, 3);
		}
		if ((st = posix_spawn(&pid, "/bin/true", &fa, &at, args,
		    environ)) != 0) {
			fprintf(stderr, "posix_spawn: %s\n", strerror(st));
			return 1;
		}
		if (step >= 4)
			for (size_t k = 0; k < sizeof mem; k += 64)
				mem[k]++;
		if (step >= 3) {
			struct epoll_event ev = { .events = EPOLLIN }, got;
			int pfd = (int)syscall(SYS_pidfd_open, pid, 0);

			if (pfd == -1 ||
			    epoll_ctl(ep, EPOLL_CTL_ADD, pfd, &ev) == -1 ||
			    epoll_wait(ep, &got, 1, -1) != 1) {
				perror("pidfd");
				return 1;
			}
			epoll_ctl(ep, EPOLL_CTL_DEL, pfd, NULL);
			close(pfd);
		}
		waitpid(pid, &st, 0);
		for (int k = 0; k < 2; k++) {
			if (out[k] != -1)
				close(out[k]);
			if (err[k] != -1)
				close(err[k]);
		}
		posix_spawn_file_actions_destroy(&fa);
		posix_spawnattr_destroy(&at);
	}
	return 0;
}
