/* CI retries (issue 30, flakyctl ci): after a suite's first run, the tests
 * that failed are rerun alone (the runner's own selection), each until it
 * passes or has had its retries, and new tests are rerun until one fails or
 * they passed N runs. Each round runs the tests still open together; a
 * round that reports a test it was not asked for, or misses one it was,
 * is refused: a retry must never stand for other tests than the failed
 * ones (docs/ci.md). The state and the rules only: flakyctl ci spawns,
 * stores and keeps time. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipeline.h"
#include "stats/stats.h"
#include "util/util.h"

void
flaky_retry_init(struct flaky_retry *r, int retries, int new_runs)
{
	memset(r, 0, sizeof *r);
	r->retries = retries < 0 ? 0 : retries;
	r->new_runs = new_runs < 0 ? 0 : new_runs;
}

void
flaky_retry_free(struct flaky_retry *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->nt; i++)
		free(r->t[i].name);
	free(r->t);
	memset(r, 0, sizeof *r);
}

/* Tests in name order, for bsearch. */
static int
test_cmp(const void *a, const void *b)
{
	return strcmp(((const struct flaky_retry_test *)a)->name,
	    ((const struct flaky_retry_test *)b)->name);
}

/* The test called name, or NULL. */
static struct flaky_retry_test *
retry_find(const struct flaky_retry *r, const char *name)
{
	struct flaky_retry_test key;

	if (r->nt == 0)
		return NULL;
	key.name = (char *)name;
	return bsearch(&key, r->t, r->nt, sizeof *r->t, test_cmp);
}

/* A new test whose clean runs settle it as --until-settled would (the
 * confidence sequence's bound under the warning tier: 116 runs at the
 * default alpha): more runs cannot change its verdict. */
static int
retry_new_settled(const struct flaky_retry_test *t)
{
	return t->failures == 0 && flaky_cs_settled(0, t->runs,
	    FLAKY_CS_ALPHA, NULL, NULL);
}

/* Is t still to run: a failed test that never passed and has retries
 * left, or a new test that never failed, has runs left and is not
 * settled? */
static int
retry_is_open(const struct flaky_retry *r, const struct flaky_retry_test *t)
{
	if (t->quarantined || t->skipped_out)
		return 0;
	if (t->is_new)
		return t->failures == 0 && t->runs < r->new_runs &&
		    !retry_new_settled(t);
	return t->failures == t->runs && t->runs < 1 + r->retries;
}

int
flaky_retry_first(struct flaky_retry *r, const struct flaky_results *res,
    flaky_retry_pick_fn is_new, flaky_retry_pick_fn quarantined, void *arg)
{
	size_t	 nf = 0, nn = 0;

	for (size_t i = 0; i < res->n; i++) {
		const struct flaky_result *v = &res->v[i];
		int	 o = v->outcome, failed = FLAKY_FAILED(o), fresh;
		struct flaky_retry_test *t;

		if (!failed && o != FLAKY_PASS && o != FLAKY_XPASS)
			continue;
		fresh = r->new_runs > 0 && is_new != NULL &&
		    is_new(v->test, arg);
		if (!failed && !fresh)
			continue;
		if (r->nt == r->cap) {
			size_t	 n = r->cap ? r->cap * 2 : 16;

			if ((t = reallocarray(r->t, n, sizeof *t)) == NULL)
				return -ENOMEM;
			r->t = t;
			r->cap = n;
		}
		t = &r->t[r->nt];
		memset(t, 0, sizeof *t);
		if ((t->name = strdup(v->test)) == NULL)
			return -ENOMEM;
		r->nt++;
		t->first = o;
		t->is_new = fresh;
		t->runs = 1;
		t->failures = failed;
		t->quarantined = failed && quarantined != NULL &&
		    quarantined(v->test, arg);
		/* past the bounds: recorded, not rerun (too many failures
		 * at once are no flakiness a retry would show) */
		if (failed && !t->quarantined && ++nf > FLAKY_RETRY_MAX_FAILED)
			r->too_many = 1;
		if (fresh && !failed && ++nn > FLAKY_RETRY_MAX_NEW) {
			t->skipped_out = 1;
			r->new_unchecked++;
		}
	}
	if (r->too_many)
		for (size_t i = 0; i < r->nt; i++)
			if (r->t[i].failures > 0 && !r->t[i].is_new)
				r->t[i].skipped_out = 1;
	if (r->nt > 1)
		qsort(r->t, r->nt, sizeof *r->t, test_cmp);
	/* one id twice in a run (" #2" is not selectable): keep the first */
	for (size_t i = 1; i < r->nt; i++)
		if (strcmp(r->t[i].name, r->t[i - 1].name) == 0)
			r->t[i].skipped_out = 1;
	return 0;
}

size_t
flaky_retry_open_tests(struct flaky_retry *r, const char **v, size_t cap)
{
	size_t	 n = 0;

	for (size_t i = 0; i < r->nt; i++) {
		r->t[i].in_round = 0;
		if (n < cap && retry_is_open(r, &r->t[i])) {
			r->t[i].in_round = 1;
			v[n++] = r->t[i].name;
		}
	}
	return n;
}

/* Is name a go subtest of a test in the round ("pkg/TestX/sub" of
 * "pkg/TestX"): go test -run selects top-level tests, and their subtests
 * run with them. */
static int
go_subtest(const struct flaky_retry *r, const char *name)
{
	for (size_t i = 0; i < r->nt; i++) {
		size_t	 n = strlen(r->t[i].name);

		if (r->t[i].in_round && strncmp(name, r->t[i].name, n) == 0 &&
		    name[n] == '/')
			return 1;
	}
	return 0;
}

int
flaky_retry_count(struct flaky_retry *r, const struct flaky_results *res,
    char *err, size_t errlen)
{
	int	 go = strcmp(res->runner, "gotest") == 0, asked = 0, ran = 0;
	struct flaky_retry_test *t;

	for (size_t i = 0; i < r->nt; i++)
		asked += r->t[i].in_round;
	/* first, whether the round ran what it was asked for, and only
	 * that: nothing is counted from a round that did not */
	for (size_t i = 0; i < res->n; i++) {
		int	 o = res->v[i].outcome;

		if (o == FLAKY_SKIP || o == FLAKY_XFAIL)
			continue;	/* filtered out, not run (Jest -t) */
		if ((t = retry_find(r, res->v[i].test)) != NULL &&
		    t->in_round) {
			ran++;
			continue;
		}
		if (go && go_subtest(r, res->v[i].test))
			continue;
		return flaky_error(err, errlen, EPROTO, "the retry ran '%s', "
		    "which it was not asked for (%d test%s asked for, %zu "
		    "reported)", res->v[i].test, asked, asked == 1 ? "" : "s",
		    res->n);
	}
	for (size_t i = 0; i < r->nt; i++) {
		int	 seen = 0;

		if (!r->t[i].in_round)
			continue;
		for (size_t k = 0; k < res->n && !seen; k++)
			seen = strcmp(res->v[k].test, r->t[i].name) == 0;
		if (!seen)
			return flaky_error(err, errlen, EPROTO, "the retry did "
			    "not report '%s', which it was asked for (%d "
			    "asked for, %d ran)", r->t[i].name, asked, ran);
	}
	if (res->summary_total >= 0 && (size_t)res->summary_total != res->n)
		return flaky_error(err, errlen, EPROTO, "the runner counted "
		    "%ld test%s in the retry, %zu were reported",
		    res->summary_total, res->summary_total == 1 ? "" : "s",
		    res->n);
	r->rounds++;
	for (size_t i = 0; i < res->n; i++) {
		int	 o = res->v[i].outcome;

		if ((t = retry_find(r, res->v[i].test)) == NULL ||
		    !t->in_round)
			continue;
		t->in_round = 0;	/* a " #2" of it counts once */
		if (o == FLAKY_SKIP || o == FLAKY_XFAIL) {
			/* skipped now: no answer, and none will come */
			t->skips++;
			t->skipped_out = 1;
			continue;
		}
		t->runs++;
		if (FLAKY_FAILED(o))
			t->failures++;
		else if (t->passed_on == 0 && t->failures > 0)
			t->passed_on = t->runs - 1;
	}
	for (size_t i = 0; i < r->nt; i++)
		r->t[i].in_round = 0;
	return 0;
}

int
flaky_retry_verdict(const struct flaky_retry *r,
    const struct flaky_retry_test *t)
{
	if (t->quarantined)
		return FLAKY_RETRY_QUARANTINED;
	if (t->is_new) {
		if (t->failures > 0)
			return FLAKY_RETRY_NEW_FAILED;
		return t->runs >= r->new_runs || retry_new_settled(t) ?
		    FLAKY_RETRY_NEW_PASSED : FLAKY_RETRY_NEW_UNCHECKED;
	}
	if (t->failures < t->runs)
		return FLAKY_RETRY_FLAKY;
	return t->runs > 1 ? FLAKY_RETRY_BROKEN :
	    FLAKY_RETRY_NOT_RETRIED;
}

const char *
flaky_retry_verdict_name(int v)
{
	static const char *const names[] = {
		[FLAKY_RETRY_FLAKY] = "flaky",
		[FLAKY_RETRY_BROKEN] = "broken",
		[FLAKY_RETRY_NOT_RETRIED] = "not retried",
		[FLAKY_RETRY_QUARANTINED] = "quarantined",
		[FLAKY_RETRY_NEW_FAILED] = "new failed",
		[FLAKY_RETRY_NEW_PASSED] = "new passed",
		[FLAKY_RETRY_NEW_UNCHECKED] = "new unchecked",
	};

	return v >= 0 && v < (int)FLAKY_ARRAY_SIZE(names) && names[v] ?
	    names[v] : "?";
}

int
flaky_retry_fails_step(int verdict)
{
	return verdict == FLAKY_RETRY_BROKEN ||
	    verdict == FLAKY_RETRY_NOT_RETRIED ||
	    verdict == FLAKY_RETRY_NEW_FAILED;
}

int
flaky_retry_done(const struct flaky_retry *r)
{
	for (size_t i = 0; i < r->nt; i++)
		if (retry_is_open(r, &r->t[i]))
			return 0;
	return 1;
}
