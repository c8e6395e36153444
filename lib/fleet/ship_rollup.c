/* The sums a batch adds to the server's rollups, made on the box
 * (docs/fleet.md). The rollup trigger of schema/pg (0002, 0008) would
 * group the batch's results again on the server, for about a third of
 * the server's work per shipped result; the box knows them already. The
 * sums are the trigger's, row for row:
 *   - rollups and box_rollups: per UTC day and test, the results of the
 *     runs the rates count (kind not 'alone', complete): runs, failures,
 *     skips, time passing and failing, and histograms of those times;
 *   - failure_rollups and budget: per day, test, whether counted,
 *     message and signature, the failed results of every run, the newest
 *     run and the runs' wall and CPU time.
 * tests/integration/fleet/test_ship.py checks them against the trigger's
 * on the same results. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "fleet_ship.h"
#include "util/util.h"

static int
cmp64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

/* By day and test; within, failed results by their failure_rollups key. */
static int
roll_cmp(const void *pa, const void *pb)
{
	const struct ship_roll *a = pa, *b = pb;
	int	 c, fa = a->outcome == 1 || a->outcome == 2;
	int	 fb = b->outcome == 1 || b->outcome == 2;
	size_t	 n;

	if ((c = cmp64(a->day, b->day)) != 0 ||
	    (c = cmp64(a->test, b->test)) != 0 || (c = fa - fb) != 0 ||
	    !fa)
		return c;
	if ((c = a->counted - b->counted) != 0 ||
	    (c = cmp64(a->msg, b->msg)) != 0)
		return c;
	/* no signature ('UNKNOWN' on the server) apart from an empty one */
	if ((c = (a->sig != NULL) - (b->sig != NULL)) != 0 || a->sig == NULL)
		return c;
	n = a->siglen < b->siglen ? a->siglen : b->siglen;
	if (n > 0 && (c = memcmp(a->sig, b->sig, n)) != 0)
		return c;
	return cmp64((int64_t)a->siglen, (int64_t)b->siglen);
}

static int
same_failure(const struct ship_roll *a, const struct ship_roll *b)
{
	return a->day == b->day && a->test == b->test &&
	    a->counted == b->counted && a->msg == b->msg &&
	    (a->sig == NULL) == (b->sig == NULL) && a->siglen == b->siglen &&
	    (a->siglen == 0 || memcmp(a->sig, b->sig, a->siglen) == 0);
}

/* A histogram as an integer[] whose index is bucket + 1 (schema/pg
 * 0002): NULL when empty, NULL elements between counts. */
static int
put_hist(struct flaky_buf *b, const int64_t *h, int lo, int hi)
{
	int	 r;

	if (lo > hi)
		return flaky_buf_add(b, "\\N", 2);
	if ((r = flaky_buf_printf(b, "[%d:%d]={", lo + 1, hi + 1)) < 0)
		return r;
	for (int i = lo; i <= hi && r == 0; i++) {
		if (i > lo && (r = flaky_buf_addc(b, ',')) < 0)
			break;
		r = h[i] > 0 ? flaky_buf_printf(b, "%lld", (long long)h[i]) :
		    flaky_buf_add(b, "NULL", 4);
	}
	return r < 0 ? r : flaky_buf_addc(b, '}');
}

struct hist {
	int64_t	 n[FLAKY_HIST_BUCKETS];
	int	 lo, hi;
};

static void
hist_put(struct hist *h, int64_t us)
{
	int	 b = flaky_hist_bucket(us);

	h->n[b]++;
	if (b < h->lo)
		h->lo = b;
	if (b > h->hi)
		h->hi = b;
}

static void
hist_clear(struct hist *h)
{
	if (h->lo <= h->hi)
		memset(h->n + h->lo, 0, (size_t)(h->hi - h->lo + 1) *
		    sizeof h->n[0]);
	h->lo = FLAKY_HIST_BUCKETS;
	h->hi = -1;
}

/* The rollups row of v[0 .. n - 1], one day and test. */
static int
put_rollup(struct flaky_buf *b, const struct ship_roll *v, size_t n,
    struct hist *ph, struct hist *fh)
{
	int64_t	 runs = 0, failures = 0, skips = 0, pass_us = 0, fail_us = 0;
	size_t	 counted = 0;
	int	 r;

	hist_clear(ph);
	hist_clear(fh);
	for (size_t i = 0; i < n; i++) {
		const struct ship_roll *x = &v[i];
		int	 pass = x->outcome == 0 || x->outcome == 5;
		int	 fail = x->outcome == 1 || x->outcome == 2;

		if (!x->counted)
			continue;
		counted++;
		runs += pass || fail;
		failures += fail;
		skips += x->outcome == 3 || x->outcome == 4;
		if (!x->has_dur || !(pass || fail))
			continue;
		if (pass) {
			pass_us += x->dur;
			hist_put(ph, x->dur);
		} else {
			fail_us += x->dur;
			hist_put(fh, x->dur);
		}
	}
	if (counted == 0)
		return 0;
	if ((r = flaky_buf_printf(b, "%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t"
	    "%lld\t", (long long)v[0].day, (long long)v[0].test,
	    (long long)runs, (long long)failures, (long long)skips,
	    (long long)pass_us, (long long)fail_us)) < 0 ||
	    (r = put_hist(b, ph->n, ph->lo, ph->hi)) < 0 ||
	    (r = flaky_buf_addc(b, '\t')) < 0 ||
	    (r = put_hist(b, fh->n, fh->lo, fh->hi)) < 0)
		return r;
	return flaky_buf_addc(b, '\n');
}

/* The failure_rollups rows of v[0 .. n - 1], one day and test. */
static int
put_failures(struct flaky_buf *b, const struct ship_roll *v, size_t n)
{
	size_t	 i = 0, j;
	int	 r = 0;

	while (i < n && r == 0) {
		int64_t	 count = 0, last = 0, wall = 0, cpu = 0;

		if (v[i].outcome != 1 && v[i].outcome != 2) {
			i++;
			continue;
		}
		for (j = i; j < n && same_failure(&v[i], &v[j]); j++) {
			count++;
			last = v[j].run > last ? v[j].run : last;
			wall += v[j].wall;
			cpu += v[j].cpu;
		}
		if ((r = flaky_buf_printf(b, "%lld\t%lld\t%d\t%lld\t",
		    (long long)v[i].day, (long long)v[i].test, v[i].counted,
		    (long long)v[i].msg)) < 0 ||
		    (r = v[i].sig != NULL ? fleet_ship_put_text(b,
		    (const unsigned char *)v[i].sig, v[i].siglen) :
		    flaky_buf_adds(b, "UNKNOWN")) < 0 ||
		    (r = flaky_buf_printf(b, "\t%lld\t%lld\t%lld\t%lld\n",
		    (long long)count, (long long)last, (long long)wall,
		    (long long)cpu)) < 0)
			return r;
		i = j;
	}
	return r;
}

int
fleet_ship_sums(struct ship_roll *v, size_t n, struct flaky_buf *rollups,
    struct flaky_buf *failures)
{
	struct hist	*h;
	size_t		 i = 0, j;
	int		 r = 0;

	if ((h = malloc(2 * sizeof *h)) == NULL)
		return -1;
	memset(h, 0, 2 * sizeof *h);
	h[0].lo = h[1].lo = FLAKY_HIST_BUCKETS;
	h[0].hi = h[1].hi = -1;
	qsort(v, n, sizeof *v, roll_cmp);
	while (i < n && r == 0) {
		for (j = i; j < n && v[j].day == v[i].day &&
		    v[j].test == v[i].test; j++)
			;
		if ((r = put_rollup(rollups, v + i, j - i, &h[0],
		    &h[1])) == 0)
			r = put_failures(failures, v + i, j - i);
		i = j;
	}
	free(h);
	return r < 0 ? -1 : 0;
}
