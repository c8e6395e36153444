/* What one run's own TMPDIR costs (docs/performance.md, benchmark (a)):
 * mkdtemp + rmdir of an empty directory, 200 times, under each parent
 * given (default /tmp and /dev/shm).
 *
 * Build: ninja -C build-bench bench/tmpdir_bench
 * Run:   build-bench/bench/tmpdir_bench [DIR...]
 */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

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

int
main(int argc, char **argv)
{
	static char *const dflt[] = { "/tmp", "/dev/shm" };
	char *const	*v = argc > 1 ? argv + 1 : dflt;
	int		 n = argc > 1 ? argc - 1 : 2;

	printf("%-24s %14s\n", "parent", "mkdtemp+rmdir");
	for (int i = 0; i < n; i++) {
		double	 us = pair_us(v[i]);

		if (us < 0)
			printf("%-24s %14s\n", v[i], "failed");
		else
			printf("%-24s %11.0f us\n", v[i], us);
	}
	return 0;
}
