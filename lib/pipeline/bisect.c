/* Bisecting: the first revision at which a test turned flaky, and how
 * many runs tell a revision from the bad one (lib/pipeline/pipeline.h). */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipeline.h"
#include "stats/stats.h"

int
flaky_bisect_init(struct flaky_bisect *b, char *const *revs, size_t n,
    int64_t max_runs)
{
	memset(b, 0, sizeof *b);
	if (n == 0 || n > FLAKY_BISECT_MAX_REVS)
		return -EINVAL;
	if ((b->v = calloc(n, sizeof *b->v)) == NULL)
		return -ENOMEM;
	b->n = n;
	for (size_t i = 0; i < n; i++)
		if ((b->v[i].rev = strdup(revs[i])) == NULL) {
			flaky_bisect_free(b);
			return -ENOMEM;
		}
	b->lo = -1;
	b->hi = (long)n - 1;
	b->measuring = 1;
	b->max_runs = max_runs > 0 ? max_runs : FLAKY_BISECT_MAX_RUNS;
	return 0;
}

void
flaky_bisect_free(struct flaky_bisect *b)
{
	if (b == NULL)
		return;
	for (size_t i = 0; b->v != NULL && i < b->n; i++)
		free(b->v[i].rev);
	free(b->v);
	memset(b, 0, sizeof *b);
}

int
flaky_bisect_set_rate(struct flaky_bisect *b, int64_t failures, int64_t runs)
{
	if (failures <= 0 || runs < failures)
		return -EINVAL;
	b->bad_failures = failures;
	b->bad_runs = runs;
	b->p = (double)failures / (double)runs;
	b->need = flaky_passes_needed(b->p, FLAKY_PROOF_ALPHA);
	b->measuring = 0;
	b->v[b->n - 1].verdict = FLAKY_BISECT_FLAKY;
	return 0;
}

/* Measuring at bad: done after enough failures, or at the bound. */
static void
measured(struct flaky_bisect *b)
{
	struct flaky_bisect_rev *bad = &b->v[b->n - 1];

	if (bad->verdict == FLAKY_BISECT_ABSENT)
		b->measuring = 0;
	else if (bad->failures >= FLAKY_BISECT_BAD_FAILURES ||
	    bad->runs >= b->max_runs) {
		b->measuring = 0;
		if (bad->failures > 0)
			flaky_bisect_set_rate(b, bad->failures, bad->runs);
	}
}

long
flaky_bisect_next(struct flaky_bisect *b)
{
	long	 mid;

	if (b->measuring) {
		measured(b);
		if (b->measuring)
			return (long)b->n - 1;
	}
	if (b->need <= 0 || b->hi - b->lo <= 1)
		return -1;
	mid = b->lo + (b->hi - b->lo) / 2;
	if (b->v[mid].order == 0)
		b->v[mid].order = ++b->tested;
	return mid;
}

void
flaky_bisect_count(struct flaky_bisect *b, size_t i, int outcome)
{
	struct flaky_bisect_rev *r;

	if (i >= b->n)
		return;
	r = &b->v[i];
	if (r->order == 0)
		r->order = ++b->tested;
	if (outcome < 0) {
		/* Not there yet (or the run broke before it): not flaky
		 * here, so later. */
		r->verdict = FLAKY_BISECT_ABSENT;
		if (!b->measuring && (long)i > b->lo && (long)i < b->hi)
			b->lo = (long)i;
		return;
	}
	r->runs++;
	if (outcome > 0) {
		r->failures++;
		r->in_row = 0;
	} else
		r->in_row++;
	if (b->measuring || i == b->n - 1)
		return;
	if (r->failures > 0) {
		r->verdict = FLAKY_BISECT_FLAKY;
		if ((long)i < b->hi)
			b->hi = (long)i;
	} else if (r->in_row >= b->need) {
		r->verdict = FLAKY_BISECT_CLEAN;
		if ((long)i > b->lo)
			b->lo = (long)i;
	}
}

long
flaky_bisect_result(const struct flaky_bisect *b)
{
	if (b->v[b->n - 1].verdict == FLAKY_BISECT_ABSENT)
		return -2;
	if (b->need <= 0)
		return -1;
	return b->hi;
}

int64_t
flaky_bisect_runs(const struct flaky_bisect *b)
{
	int64_t	 n = 0;

	for (size_t i = 0; i < b->n; i++)
		n += b->v[i].runs;
	return n;
}

int64_t
flaky_bisect_fixed_runs(const struct flaky_bisect *b, int64_t runs_each)
{
	return runs_each * b->tested;
}

const char *
flaky_bisect_verdict_name(int v)
{
	switch (v) {
	case FLAKY_BISECT_FLAKY:
		return "flaky";
	case FLAKY_BISECT_CLEAN:
		return "not flaky";
	case FLAKY_BISECT_ABSENT:
		return "absent";
	default:
		return "untested";
	}
}
