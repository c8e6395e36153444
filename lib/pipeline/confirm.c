/* Confirming: which tests to rerun alone, the command for each and when a
 * test is settled (lib/confirm.h). */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipeline.h"
#include "run/run.h"
#include "store/store.h"
#include "stats/stats.h"
#include "util/util.h"

static void	confirm_envp_free(char **);

void
flaky_confirm_init(struct flaky_confirm *c, int max_runs)
{
	memset(c, 0, sizeof *c);
	c->max_runs = max_runs > 0 ? max_runs : FLAKY_CONFIRM_MAX_RUNS;
}

void
flaky_confirm_free(struct flaky_confirm *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->nt; i++) {
		free(c->t[i].name);
		free(c->t[i].target);
		free(c->t[i].dir);
		free(c->t[i].isolate);
		free(c->t[i].revision);
	}
	free(c->t);
	free(c->argv[2]);
	confirm_envp_free(c->envp);
	memset(c, 0, sizeof *c);
}

char *
flaky_confirm_expand(const char *tmpl)
{
	struct flaky_buf b;
	int		 sq = 0, dq = 0;

	/* The test id never enters the command's text: it comes from the
	 * code under test and from CI files, and a name such as
	 * `x $(touch PWNED)` or `d" ; rm -rf ~ ; echo "` must stay a name.
	 * {test} becomes a reference to $FLAKY_TEST, quoted for where it
	 * stands in the template, so the shell expands it as one word and
	 * never evaluates what it holds. */
	flaky_buf_init(&b);
	for (const char *p = tmpl; *p; ) {
		if (strncmp(p, "{test}", 6) == 0) {
			if (sq)
				flaky_buf_adds(&b, "'\"$FLAKY_TEST\"'");
			else if (dq)
				flaky_buf_adds(&b, "${FLAKY_TEST}");
			else
				flaky_buf_adds(&b, "\"$FLAKY_TEST\"");
			p += 6;
			continue;
		}
		if (*p == '\\' && !sq && p[1] != '\0') {
			flaky_buf_add(&b, p, 2);
			p += 2;
			continue;
		}
		if (*p == '\'' && !dq)
			sq = !sq;
		else if (*p == '"' && !sq)
			dq = !dq;
		flaky_buf_addc(&b, *p++);
	}
	if (b.oom) {
		flaky_buf_free(&b);
		return NULL;
	}
	return flaky_buf_steal(&b);
}

/* The environment of a run alone: base (or ours) with FLAKY_TEST set to
 * the test's id. */
static char **
confirm_envp(char *const *base, const char *test)
{
	extern char	**environ;
	char		**v;
	size_t		 n = 0, k = 0;

	if (base == NULL)
		base = environ;
	while (base[n] != NULL)
		n++;
	if ((v = calloc(n + 2, sizeof *v)) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(base[i], "FLAKY_TEST=", 11) != 0)
			v[k++] = base[i];
	if (asprintf(&v[k], "FLAKY_TEST=%s", test) < 0) {
		free(v);
		return NULL;
	}
	return v;
}

/* Free what confirm_envp made (only the FLAKY_TEST entry is ours). */
static void
confirm_envp_free(char **v)
{
	if (v == NULL)
		return;
	for (size_t i = 0; v[i] != NULL; i++)
		if (strncmp(v[i], "FLAKY_TEST=", 11) == 0)
			free(v[i]);
	free(v);
}

/* Done with a test. One that passes alone so far, while failing in the
 * suite, is done once chance is ruled out (its failures all in the suite
 * runs, p < FLAKY_ALONE_ALPHA): it is order dependent, and more runs alone
 * would only dilute the suite's failure rate. The mirror, failing alone
 * every time while passing in the suite (it relies on a test that runs
 * first), likewise. Any other is done when its interval lies in one tier.
 * Either way at most max_runs alone. */
static int
settled(const struct flaky_confirm *c, const struct flaky_confirm_test *t)
{
	if (t->alone >= c->max_runs)
		return 1;
	if (t->suite_failures > 0 && t->alone_failures == 0)
		return flaky_fisher_greater(t->suite_failures, t->suite_runs,
		    t->suite_failures, t->suite_runs + t->alone_runs) <
		    FLAKY_ALONE_ALPHA;
	if (t->alone_runs > 0 && t->alone_failures == t->alone_runs &&
	    t->suite_failures < t->suite_runs)
		return flaky_fisher_greater(t->suite_runs - t->suite_failures,
		    t->suite_runs, t->suite_runs - t->suite_failures,
		    t->suite_runs + t->alone_runs) < FLAKY_ALONE_ALPHA;
	return flaky_runs_needed(t->failures, t->runs) == 0;
}

int
flaky_confirm_add(struct flaky_confirm *c, const struct flaky_diagnosis *d,
    const char *isolate, const char *revision)
{
	struct flaky_confirm_test *t;
	int	 r;

	if (c->nt >= FLAKY_CONFIRM_MAX_TESTS)
		return -ENOSPC;
	if (c->t == NULL && (c->t = calloc(FLAKY_CONFIRM_MAX_TESTS,
	    sizeof *c->t)) == NULL)
		return -ENOMEM;
	t = &c->t[c->nt];
	memset(t, 0, sizeof *t);
	t->id = d->test_id;
	t->target_id = d->target_id;
	t->name = strdup(d->test);
	t->target = strdup(d->target);
	t->dir = strdup(d->dir ? d->dir : ".");
	t->isolate = strdup(isolate);
	if (revision != NULL)
		t->revision = strdup(revision);
	else if (t->dir != NULL) {
		/* The code under test is the one the suite runs saw,
		 * unless git says otherwise. */
		r = c->files_only ? flaky_revision_files(t->dir,
		    &t->revision) : flaky_revision_git(t->dir, &t->revision);
		if (r < 0 && r != -ETIMEDOUT)
			goto fail;
		if (t->revision == NULL && d->nrevs > 0 &&
		    d->revs[d->nrevs - 1].revision != NULL)
			t->revision = strdup(d->revs[d->nrevs - 1].revision);
	}
	if (t->name == NULL || t->target == NULL || t->dir == NULL ||
	    t->isolate == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	t->runs = d->runs;
	t->failures = d->failures;
	t->suite_runs = d->suite_runs;
	t->suite_failures = d->suite_failures;
	t->alone_runs = d->alone_runs;
	t->alone_failures = d->alone_failures;
	t->settled = d->verdict == FLAKY_VERDICT_BROKEN || settled(c, t);
	c->nt++;
	return 0;
fail:
	free(t->name);
	free(t->target);
	free(t->dir);
	free(t->isolate);
	free(t->revision);
	memset(t, 0, sizeof *t);
	return r;
}

struct flaky_confirm_test *
flaky_confirm_next(struct flaky_confirm *c, char *const *base_envp,
    char *const **argv, char *const **envp)
{
	struct flaky_confirm_test *t = NULL;
	char	*cmd;

	for (size_t k = 0; k < c->nt; k++) {
		struct flaky_confirm_test *x = &c->t[(c->next + k) % c->nt];

		if (!x->settled) {
			t = x;
			c->next = (size_t)(x - c->t) + 1;
			break;
		}
	}
	if (t == NULL)
		return NULL;
	if ((cmd = flaky_confirm_expand(t->isolate)) == NULL)
		return NULL;
	confirm_envp_free(c->envp);
	if ((c->envp = confirm_envp(base_envp, t->name)) == NULL) {
		free(cmd);
		return NULL;
	}
	free(c->argv[2]);
	c->argv[0] = (char *)"/bin/sh";
	c->argv[1] = (char *)"-c";
	c->argv[2] = cmd;
	c->argv[3] = NULL;
	*argv = c->argv;
	*envp = c->envp;
	return t;
}

int
flaky_confirm_count(struct flaky_confirm *c, struct flaky_confirm_test *t,
    const struct flaky_results *res)
{
	int	 seen = 0, failed = 0;

	for (size_t i = 0; res != NULL && i < res->n; i++) {
		const struct flaky_result *r = &res->v[i];

		if (strcmp(r->test, t->name) != 0)
			continue;
		if (FLAKY_FAILED(r->outcome) || r->outcome == FLAKY_PASS ||
		    r->outcome == FLAKY_XPASS) {
			seen = 1;
			failed = FLAKY_FAILED(r->outcome);
		}
	}
	if (!seen) {
		t->start_error = 1;
		t->settled = 1;
		return -ENOENT;
	}
	t->alone++;
	t->alone_failed += failed;
	t->alone_runs++;
	t->alone_failures += failed;
	t->runs++;
	t->failures += failed;
	t->settled = settled(c, t);
	return 0;
}

/* Most failing first, then by id: the order tests are confirmed in. */
static int
by_rate(const void *a, const void *b)
{
	const struct flaky_test_row *x = a, *y = b;
	double	 rx = (double)x->failures / (double)x->runs;
	double	 ry = (double)y->failures / (double)y->runs;

	if (rx != ry)
		return rx > ry ? -1 : 1;
	return x->test_id < y->test_id ? -1 : x->test_id > y->test_id;
}

int
flaky_confirm_choose(struct flaky_confirm *c, struct flaky_store *s,
    const struct flaky_query *q, flaky_isolate_fn isolate, void *arg,
    const char *revision, size_t *ret_open, char *err, size_t errlen)
{
	struct flaky_test_row	 *rows = NULL;
	struct flaky_diagnosis	**diag = NULL;
	int64_t			  ids[FLAKY_CONFIRM_MAX_TESTS];
	size_t			  nrows = 0, nids = 0, open = 0;
	int			  r;

	*ret_open = 0;
	if ((r = flaky_store_test_stats(s, q, &rows, &nrows, err,
	    errlen)) < 0)
		return r;
	/* Unstable: failed in some runs, not in all. */
	qsort(rows, nrows, sizeof *rows, by_rate);
	for (size_t i = 0; i < nrows && nids < FLAKY_CONFIRM_MAX_TESTS; i++)
		if (rows[i].runs > 0 && rows[i].failures > 0 &&
		    rows[i].failures < rows[i].runs)
			ids[nids++] = rows[i].test_id;
	flaky_test_rows_free(rows, nrows);
	if (nids == 0)
		return 0;
	/* One pass over the results for all of them. */
	if ((diag = calloc(nids, sizeof *diag)) == NULL)
		return -ENOMEM;
	if ((r = flaky_diagnose_tests(s, ids, nids, q, diag, err,
	    errlen)) < 0)
		goto out;
	for (size_t i = 0; i < nids; i++) {
		char	*tmpl;

		if (diag[i] == NULL ||
		    (tmpl = isolate(diag[i]->target, arg)) == NULL)
			continue;
		r = flaky_confirm_add(c, diag[i], tmpl, revision);
		free(tmpl);
		if (r == -ENOMEM)
			goto out;
		if (r == 0 && !c->t[c->nt - 1].settled)
			open++;
	}
	r = 0;
	*ret_open = open;
out:
	for (size_t i = 0; i < nids; i++)
		flaky_diagnosis_free(diag[i]);
	free(diag);
	return r;
}
