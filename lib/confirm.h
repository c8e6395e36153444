/* Confirming (issue 4): rerun unsettled tests alone, through the target's
 * isolate: template, until each one's interval settles or a budget ends.
 * A test that passes alone but fails in the suite is order dependent; one
 * that fails alone too is not. The state and the rules only: the caller
 * (flakyctl confirm, flakyd's confirm: true) spawns, stores and keeps time.
 * See docs/triage.md. */
#ifndef FLAKY_CONFIRM_H
#define FLAKY_CONFIRM_H

#include <stddef.h>
#include <stdint.h>

#include "diagnose.h"
#include "parse.h"

#define FLAKY_CONFIRM_MAX_TESTS	50	/* per call or trigger */
#define FLAKY_CONFIRM_MAX_RUNS	100	/* alone, per test, default */

struct flaky_confirm_test {
	int64_t		 id, target_id;
	char		*name, *target, *dir, *isolate, *revision;
	int64_t		 runs, failures;	/* all, in the window */
	int64_t		 suite_runs, suite_failures;
	int64_t		 alone_runs, alone_failures;	/* stored before too */
	int		 alone, alone_failed;	/* this call */
	int		 settled;
	int		 start_error;	/* did not start or not reported */
};

struct flaky_confirm {
	struct flaky_confirm_test *t;
	size_t		 nt, next;
	int		 max_runs;	/* alone, per test */
	char		*argv[4];	/* /bin/sh -c COMMAND */
	char		**envp;		/* the run's: FLAKY_TEST=the id */
};

void	 flaky_confirm_init(struct flaky_confirm *, int max_runs);
void	 flaky_confirm_free(struct flaky_confirm *);
/* Add the test of a diagnosis with its target's isolate: template. The
 * revision is what the reruns test: NULL means git HEAD of the target's
 * directory, else the newest one its runs saw. A broken test (it fails
 * every time) or a settled one is added as settled. -ENOSPC past
 * FLAKY_CONFIRM_MAX_TESTS. */
int	 flaky_confirm_add(struct flaky_confirm *,
	    const struct flaky_diagnosis *, const char *isolate,
	    const char *revision);
/* The isolate: template of a target (malloc'd), or NULL to leave the
 * target's tests out. */
typedef char	*(*flaky_isolate_fn)(const char *target, void *arg);
/* Choose what to confirm: the unstable tests of the window (failed in
 * some runs, not all), most failing first, at most
 * FLAKY_CONFIRM_MAX_TESTS, each with its target's template. *ret_open:
 * how many of them are not settled yet. flakyd and flakyctl confirm both
 * choose here. */
struct flaky_store;
struct flaky_query;
int	 flaky_confirm_choose(struct flaky_confirm *, struct flaky_store *,
	    const struct flaky_query *, flaky_isolate_fn, void *arg,
	    const char *revision, size_t *ret_open, char *err, size_t errlen);
/* The next unsettled test, round robin, the command that runs it alone
 * and its environment: base_envp (NULL: ours) with FLAKY_TEST set to the
 * test's id, which the command reads (valid until the next call); NULL
 * when every test is settled (or out of memory). */
struct flaky_confirm_test *flaky_confirm_next(struct flaky_confirm *,
	    char *const *base_envp, char *const **argv, char *const **envp);
/* Count a run alone of t from its results. Returns 0, or -ENOENT when the
 * run did not report the test (the template is wrong: t is settled, with
 * start_error, since more runs would not report it either). */
int	 flaky_confirm_count(struct flaky_confirm *,
	    struct flaky_confirm_test *, const struct flaky_results *);
/* The isolate template as a /bin/sh command: each {test} becomes a
 * reference to $FLAKY_TEST quoted for where it stands (outside quotes,
 * inside double or single quotes), so a test id is never part of the
 * command's text; NULL when out of memory. */
char	*flaky_confirm_expand(const char *tmpl);

#endif
