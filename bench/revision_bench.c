/* What finding a run's revision costs (docs/performance.md, benchmark (a)):
 * flaky_revision_git() reading .git, against the same call made to spawn
 * `git rev-parse` (an empty GIT_CEILING_DIRECTORIES changes nothing for
 * git but sends us to it). Both must give the same answer.
 *
 * Build: ninja -C build-bench bench/revision_bench
 * Run:   build-bench/bench/revision_bench [DIR [CALLS]]
 */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "util/util.h"

/* Mean microseconds of one call on dir; the last answer into *ret. */
static double
call_us(const char *dir, int calls, char **ret)
{
	int64_t	 t0 = flaky_mono_us();

	*ret = NULL;
	for (int i = 0; i < calls; i++) {
		free(*ret);
		if (flaky_revision_git(dir, ret) != 0)
			return -1;
	}
	return (double)(flaky_mono_us() - t0) / calls;
}

int
main(int argc, char **argv)
{
	const char	*dir = argc > 1 ? argv[1] : ".";
	int		 calls = argc > 2 ? atoi(argv[2]) : 1000;
	char		*fast, *git;
	double		 fast_us, git_us;

	if (calls < 1) {
		fprintf(stderr, "usage: revision_bench [DIR [CALLS]]\n");
		return 2;
	}
	fast_us = call_us(dir, calls, &fast);
	setenv("GIT_CEILING_DIRECTORIES", "", 1);
	/* git is slow: a tenth of the calls is plenty. */
	git_us = call_us(dir, calls / 10 > 0 ? calls / 10 : 1, &git);
	if (fast_us < 0 || git_us < 0) {
		fprintf(stderr, "revision_bench: call failed\n");
		return 2;
	}
	printf("%-24s %12s  %s\n", "how", "per call", "revision");
	printf("%-24s %9.1f us  %s\n", "from .git", fast_us,
	    fast ? fast : "(none)");
	printf("%-24s %9.1f us  %s\n", "git rev-parse", git_us,
	    git ? git : "(none)");
	printf("ratio %.0fx\n", git_us / fast_us);
	if ((fast == NULL) != (git == NULL) ||
	    (fast != NULL && strcmp(fast, git) != 0)) {
		fprintf(stderr, "revision_bench: answers differ\n");
		return 1;
	}
	free(fast);
	free(git);
	return 0;
}
