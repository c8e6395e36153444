/* flakyctl bisect's TEST in its command (the runner's own selection of
 * the test), and TEST as a user gives it: every other command takes a
 * unique part of an id, or the whole last part ("test_x" for
 * "tests/test_a.py::test_x"), and looks it up among the stored tests.
 * bisect may run a target nothing was stored of yet, and a test may not
 * exist at every revision, so it looks the name up among the ids the
 * suite reports at --bad: when the first run there does not report TEST
 * as given, the suite runs once at --bad (the runs so far were the test
 * selected by that name) and the same resolver (diag.c, find.c) picks
 * the id, or lists the candidates or the closest names (exit 2). */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "diag.h"
#include "log.h"

/* Order of test names (qsort), for the distinct ids of a run. */
static int
cmp_ref_name(const void *a, const void *b)
{
	const struct flaky_test_ref *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* The command with the test selected, when its runner can select one:
 * pytest takes a node id, unittest a dotted name. 1 when it runs alone
 * (*at: the test's word). */
int
bisect_select(struct flaky_command *cmd, const char *test, int *at)
{
	size_t	 n;

	*at = -1;
	if (cmd->runner == NULL || (strcmp(cmd->runner, "pytest") != 0 &&
	    strcmp(cmd->runner, "unittest") != 0))
		return 0;
	for (n = 0; cmd->argv[n] != NULL; n++)
		if (strcmp(cmd->argv[n], "discover") == 0)
			return 0;	/* unittest discover takes no name */
	cmd->argv = xreallocarray(cmd->argv, n + 2, sizeof *cmd->argv);
	cmd->argv[n] = xstrdup(test);
	cmd->argv[n + 1] = NULL;
	*at = (int)n;
	return 1;
}

/* A copy of argv, words and all (suite_argv). */
char **
bisect_argv_copy(char *const *argv)
{
	size_t	 n = 0;
	char	**v;

	while (argv[n] != NULL)
		n++;
	v = xcalloc(n + 1, sizeof *v);
	for (size_t i = 0; i < n; i++)
		v[i] = xstrdup(argv[i]);
	return v;
}

/* Select the full id from now on: in the command, or in $FLAKY_TEST. */
static void
select_full(struct bisect *bs, const char *id)
{
	free(bs->test_owned);
	bs->test_owned = xstrdup(id);
	bs->test = bs->test_owned;
	if (bs->select_at >= 0) {
		free(bs->argv[bs->select_at]);
		bs->argv[bs->select_at] = xstrdup(id);
	}
	if (bs->select_env && setenv("FLAKY_TEST", id, 1) == -1)
		fatal("setenv");
}

/* Look TEST up among the ids of a run of the suite at bad. */
static void
resolve(struct bisect *bs, const struct flaky_results *res)
{
	struct flaky_test_ref *refs;
	size_t	 n = 0, k;

	bs->resolved = 1;
	refs = xcalloc(res->n ? res->n : 1, sizeof *refs);
	for (size_t i = 0; i < res->n; i++) {
		refs[n].name = res->v[i].test;
		refs[n].target = (char *)bs->target_name;
		refs[n].id = (int64_t)n;
		n++;
	}
	/* a test reported twice (a rerun) is one candidate */
	if (n > 1) {
		size_t	 w = 1;

		qsort(refs, n, sizeof *refs, cmp_ref_name);
		for (size_t i = 1; i < n; i++)
			if (strcmp(refs[i].name, refs[w - 1].name) != 0)
				refs[w++] = refs[i];
		n = w;
	}
	if (diag_resolve_among(refs, n, "bisect", bs->target_name, bs->test,
	    "tests in the run at --bad", &k) < 0) {
		bs->unresolved = bs->stopping = 1;
		free(refs);
		return;
	}
	if (strcmp(refs[k].name, bs->test) != 0) {
		if (!bs->ctl->format_set || bs->ctl->format == FORMAT_TABLE)
			fprintf(stderr, "flakyctl: '%s' is %s (the run at "
			    "--bad)\n", bs->test, refs[k].name);
		select_full(bs, refs[k].name);
		/* stored runs of the full id at bad give the rate */
		bisect_stored_rate(bs, bs->target_name, bs->badrev);
	}
	free(refs);
}

int
bisect_seen(struct bisect *bs, long i, const struct flaky_results *res)
{
	if (bs->resolving) {
		/* the suite's run at bad: its ids, not a measure */
		bs->resolving = 0;
		resolve(bs, res);
		return 1;
	}
	if (bs->resolved || i != (long)bs->b.n - 1 || !bs->b.measuring ||
	    bisect_outcome(bs->test, res) >= 0)
		return 0;
	if (!bs->alone) {
		/* this run was the suite: its ids will do, and it counts
		 * for the test it names */
		resolve(bs, res);
		return bs->unresolved;
	}
	/* the test selected by a name the runner did not know: one run of
	 * the suite at bad to look the name up */
	bs->resolved = 1;
	bs->resolving = 1;
	return 1;
}
