/* analyze's runs of only some tests (issue 18): the open tests of
 * --until-settled after its first whole runs, the tests with scan
 * findings of --risky (docs/statistics.md, "Rerunning only the open
 * tests"). */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flakyctl.h"
#include "log.h"
#include "subset.h"

int
subset_check(struct subset *s, const struct flaky_command *cmd,
    const char *dir, int until, int risky)
{
	char	*one[] = { (char *)"t", NULL }, **argv, **envp, err[256];
	const char *r = cmd->runner ? cmd->runner : cmd->argv[0];

	memset(s, 0, sizeof *s);
	s->cmd = cmd;
	s->dir = dir;
	s->until = until;
	s->risky = risky;
	s->base_argv = cmd->argv;
	s->base_envp = cmd->envp;
	if (!until && !risky)
		return 0;
	if (risky && (cmd->runner == NULL || (strcmp(cmd->runner, "pytest") &&
	    strcmp(cmd->runner, "unittest")))) {
		fprintf(stderr, "flakyctl: analyze: --risky: %s%s is not a "
		    "Python runner: the scan reads Python tests (pytest, "
		    "unittest)\n", r, cmd->runner ? "" : " (not recognized)");
		return -1;
	}
	if (flaky_command_select(cmd, dir, one, 1, &argv, &envp, err,
	    sizeof err) < 0) {
		if (risky) {
			fprintf(stderr, "flakyctl: analyze: --risky: %s\n",
			    err);
			return -1;
		}
		log_warnx("%s: reruns the whole suite: %s", r, err);
		return 0;
	}
	flaky_command_free_vec(argv);
	flaky_command_free_vec(envp);
	s->can = 1;
	return 0;
}

void
subset_replays(struct subset *s)
{
	char	*one[] = { (char *)"t", NULL }, **argv, **envp, err[256];

	if (s->can || flaky_command_select(s->cmd, s->dir, one, 1, &argv,
	    &envp, err, sizeof err) < 0)
		return;
	flaky_command_free_vec(argv);
	flaky_command_free_vec(envp);
	s->can = 1;
}

int
subset_risky(struct subset *s, struct flaky_store *st, int64_t target_id,
    const char *target, const char *path)
{
	struct flaky_scan_summary sum;
	char		 err[1024], *p = (char *)path;

	if (flaky_store_scan(st, target_id, s->dir, &p, 1, NULL, NULL, &sum,
	    err, sizeof err) < 0 || flaky_risky_tests(st, target,
	    s->cmd->runner, &s->risky_tests, &s->nrisky, err,
	    sizeof err) < 0) {
		fprintf(stderr, "flakyctl: analyze: --risky: %s\n", err);
		return -1;
	}
	if (s->nrisky == 0) {
		fprintf(stderr, "flakyctl: analyze: --risky: %s: %zu file%s "
		    "scanned, %zu finding%s, none in a test: nothing to rerun "
		    "(flakyctl scan %s shows them)\n", path, sum.files,
		    sum.files == 1 ? "" : "s", sum.findings,
		    sum.findings == 1 ? "" : "s", path);
		return -1;
	}
	fprintf(stderr, "flakyctl: --risky: %zu test%s with approximate "
	    "assertions in %s: only they are rerun\n", s->nrisky,
	    s->nrisky == 1 ? "" : "s", path);
	return 0;
}

/* The tests a run runs: the open ones once the first whole runs are in
 * (--until-settled), else the risky ones; NULL (n 0) for the whole
 * suite. */
static char *const *
subset_tests(struct subset *s, const struct flaky_settle *st, size_t *n)
{
	*n = 0;
	if (s->until && st->runs >= FLAKY_SETTLE_MIN_RUNS && st->open > 0) {
		if (s->capopen < st->open) {
			free(s->open);
			s->capopen = st->open;
			s->open = xcalloc(s->capopen, sizeof *s->open);
		}
		*n = flaky_settle_open_tests(st, s->open, s->capopen);
		return (char *const *)s->open;
	}
	if (s->risky) {
		*n = s->nrisky;
		return s->risky_tests;
	}
	return NULL;
}

void
subset_job(struct subset *s, struct flaky_job *job,
    const struct flaky_settle *st, char *const *only, size_t nonly)
{
	struct flaky_command c;
	char *const	*tests;
	char		 err[256];
	size_t		 n;
	int		 r;

	job->selected = 0;
	if (nonly > 0) {
		tests = only;
		n = nonly;
	} else
		tests = subset_tests(s, st, &n);
	if (!s->can || tests == NULL || n == 0)
		return;
	c = *s->cmd;
	c.argv = (char **)job->spec.argv;
	c.envp = (char **)job->spec.envp;
	r = flaky_command_select(&c, s->dir, tests, n, &s->argv, &s->envp, err,
	    sizeof err);
	if (r == -ENOMEM)
		fatalx("out of memory");
	if (r < 0) {
		if (!s->told)
			log_warnx("%s: reruns the whole suite: %s",
			    s->cmd->runner, err);
		s->told = 1;
		return;
	}
	job->spec.argv = s->argv;
	job->spec.envp = s->envp;
	job->selected = (int)n;
}

void
subset_started(struct subset *s, struct flaky_job *job)
{
	if (s->argv != NULL && job->spec.argv == s->argv) {
		job->spec.argv = s->base_argv;
		job->spec.envp = s->base_envp;
	}
	flaky_command_free_vec(s->argv);
	flaky_command_free_vec(s->envp);
	s->argv = s->envp = NULL;
}

void
subset_free(struct subset *s)
{
	flaky_command_free_vec(s->argv);
	flaky_command_free_vec(s->envp);
	flaky_risky_tests_free(s->risky_tests, s->nrisky);
	free(s->open);
	memset(s, 0, sizeof *s);
}
