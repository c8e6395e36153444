/* The smallest polluter: delta debugging (ddmin, Zeller and Hildebrandt,
 * "Simplifying and Isolating Failure-Inducing Input", IEEE TSE 2002) over
 * the tests that ran before a victim in one failing run. The oracle runs
 * a subset of them, in their stored order, followed by the victim, and
 * says whether the victim failed; this file knows nothing of runners. */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diagnose.h"

struct ddmin {
	flaky_minimize_oracle	 fn;
	void			*arg;
	size_t			 max_calls;
	size_t			 calls;
	size_t			*tmp;	/* a subset to ask about */
	/* Subsets asked before and their answers: ddmin asks some twice
	 * (a chunk again after its complement narrowed the set). */
	uint64_t		*seen;	/* words bits per subset */
	int			*answer;
	size_t			 words, nseen;
};

/* The answer given for this subset before, or -1. */
static int
ddmin_seen(struct ddmin *dd, const uint64_t *bits)
{
	for (size_t i = 0; i < dd->nseen; i++)
		if (memcmp(dd->seen + i * dd->words, bits,
		    dd->words * sizeof *bits) == 0)
			return dd->answer[i];
	return -1;
}

/* Ask the oracle about idx[0..n): 1 fails, 0 passes, or <0 (-E2BIG when
 * the budget is spent). */
static int
ddmin_ask(struct ddmin *dd, const size_t *idx, size_t n)
{
	uint64_t	*bits = dd->seen + dd->nseen * dd->words;
	int		 r;

	memset(bits, 0, dd->words * sizeof *bits);
	for (size_t i = 0; i < n; i++)
		bits[idx[i] / 64] |= (uint64_t)1 << (idx[i] % 64);
	if ((r = ddmin_seen(dd, bits)) >= 0)
		return r;
	if (dd->calls >= dd->max_calls)
		return -E2BIG;
	dd->calls++;
	if ((r = dd->fn(idx, n, dd->arg)) >= 0)
		dd->answer[dd->nseen++] = r;
	return r;
}

/* The chunk i of n chunks of a set of len: [*lo, *hi). */
static void
ddmin_chunk(size_t len, size_t n, size_t i, size_t *lo, size_t *hi)
{
	*lo = len * i / n;
	*hi = len * (i + 1) / n;
}

/* One round at granularity *gran: narrow set (in place) to a failing
 * chunk or complement. 1: narrowed, 0: none failed, <0: error. */
static int
ddmin_round(struct ddmin *dd, size_t *set, size_t *len, size_t *gran)
{
	size_t	 lo, hi, k;
	int	 r;

	for (size_t i = 0; i < *gran; i++) {
		ddmin_chunk(*len, *gran, i, &lo, &hi);
		if (hi == lo)
			continue;
		if ((r = ddmin_ask(dd, set + lo, hi - lo)) < 0)
			return r;
		if (r == 1) {
			memmove(set, set + lo, (hi - lo) * sizeof *set);
			*len = hi - lo;
			*gran = 2;
			return 1;
		}
	}
	/* With two chunks the complements are the chunks: asked already. */
	for (size_t i = 0; *gran > 2 && i < *gran; i++) {
		ddmin_chunk(*len, *gran, i, &lo, &hi);
		k = 0;
		for (size_t j = 0; j < *len; j++)
			if (j < lo || j >= hi)
				dd->tmp[k++] = set[j];
		if ((r = ddmin_ask(dd, dd->tmp, k)) < 0)
			return r;
		if (r == 1) {
			memcpy(set, dd->tmp, k * sizeof *set);
			*len = k;
			*gran = *gran - 1 > 2 ? *gran - 1 : 2;
			return 1;
		}
	}
	return 0;
}

int
flaky_minimize(size_t ncand, size_t max_calls, flaky_minimize_oracle fn,
    void *arg, struct flaky_minimize *ret)
{
	struct ddmin	 dd = { .fn = fn, .arg = arg, .max_calls = max_calls };
	size_t		*set, len = ncand, gran = 2;
	int		 r, failing;

	memset(ret, 0, sizeof *ret);
	if (ncand == 0)
		return -ENOENT;
	dd.words = (ncand + 63) / 64;
	set = calloc(ncand, sizeof *set);
	dd.tmp = calloc(ncand, sizeof *dd.tmp);
	/* one more slot than calls: the key of the call refused */
	dd.seen = calloc((max_calls + 1) * dd.words, sizeof *dd.seen);
	dd.answer = calloc(max_calls + 1, sizeof *dd.answer);
	if (set == NULL || dd.tmp == NULL || dd.seen == NULL ||
	    dd.answer == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < ncand; i++)
		set[i] = i;
	/* The whole prefix must fail, or there is nothing to narrow. */
	if ((r = ddmin_ask(&dd, set, len)) == 0)
		r = -ENOENT;
	failing = r == 1;
	while (r == 1 && len > 1) {
		if ((r = ddmin_round(&dd, set, &len, &gran)) == 0) {
			if (gran >= len)
				break;	/* 1-minimal */
			gran = gran * 2 < len ? gran * 2 : len;
			r = 1;
		}
	}
	ret->calls = dd.calls;
	if (r < 0 && !(r == -E2BIG && failing))
		goto fail;
	free(dd.tmp);
	free(dd.seen);
	free(dd.answer);
	/* A spent budget still leaves a failing set, maybe not minimal. */
	ret->minimal = r >= 0;
	ret->set = set;
	ret->n = len;
	return r < 0 ? r : 0;
fail:
	free(set);
	free(dd.tmp);
	free(dd.seen);
	free(dd.answer);
	return r;
}

void
flaky_minimize_free(struct flaky_minimize *m)
{
	if (m == NULL)
		return;
	free(m->set);
	memset(m, 0, sizeof *m);
}
