/* What one run's own TMPDIR costs (docs/performance.md, benchmark (a)):
 * mkdtemp + rmdir of an empty directory, 200 times, under each parent
 * given (default /tmp and /dev/shm); and what handing an untouched one to
 * the next run costs instead (lib/spawn.c, reuse_take): waitid for any
 * child, then open, fstat, getdents64 to the end and close.
 *
 * Build: ninja -C build-bench bench/tmpdir_bench
 * Run:   build-bench/bench/tmpdir_bench [DIR...]
 */
#include "buildconf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/util.h"

#define PAIRS	200

/* Mean microseconds of a mkdtemp + rmdir pair under parent, or -1. */
static double
pair_us(const char *parent)
{
	char	 dir[4096];
	int64_t	 t0 = flaky_mono_us();

	for (int i = 0; i < PAIRS; i++) {
		if (snprintf(dir, sizeof dir, "%s/flaky-bench-XXXXXX",
		    parent) >= (int)sizeof dir || mkdtemp(dir) == NULL)
			return -1;
		if (rmdir(dir) == -1)
			return -1;
	}
	return (double)(flaky_mono_us() - t0) / PAIRS;
}

/* Mean microseconds of the reuse check of an empty directory under
 * parent, or -1. */
static double
check_us(const char *parent)
{
	char		 dir[4096], buf[2048];
	struct stat	 st;
	siginfo_t	 si;
	int64_t		 t0;
	ssize_t		 n;
	int		 fd, ok = 1;

	if (snprintf(dir, sizeof dir, "%s/flaky-bench-XXXXXX", parent) >=
	    (int)sizeof dir || mkdtemp(dir) == NULL)
		return -1;
	t0 = flaky_mono_us();
	for (int i = 0; i < PAIRS && ok; i++) {
		memset(&si, 0, sizeof si);
		ok = waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == -1 &&
		    errno == ECHILD;
		if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC)) == -1 || fstat(fd, &st) == -1)
			ok = 0;
		while (ok && (n = getdents64(fd, buf, sizeof buf)) > 0)
			;
		if (fd != -1)
			close(fd);
	}
	t0 = flaky_mono_us() - t0;
	rmdir(dir);
	return ok ? (double)t0 / PAIRS : -1;
}

int
main(int argc, char **argv)
{
	static char *const dflt[] = { "/tmp", "/dev/shm" };
	char *const	*v = argc > 1 ? argv + 1 : dflt;
	int		 n = argc > 1 ? argc - 1 : 2;

	printf("%-24s %14s %14s\n", "parent", "mkdtemp+rmdir",
	    "reuse check");
	for (int i = 0; i < n; i++) {
		double	 us = pair_us(v[i]), cu = check_us(v[i]);

		printf("%-24s", v[i]);
		if (us < 0)
			printf(" %14s", "failed");
		else
			printf(" %11.0f us", us);
		if (cu < 0)
			printf(" %14s\n", "failed");
		else
			printf(" %11.1f us\n", cu);
	}
	return 0;
}
