/* Order dependence: which test, run before a victim in the same process,
 * goes with its failures (a polluter), or with its passes (a set-up test
 * it relies on), from the run orders of the window. */
#include "buildconf.h"

#include "diagnose_int.h"
#include "stats/stats.h"

struct victim {
	int64_t		 id;
	int64_t		 runs, fails;
	int64_t		*nb;	/* per candidate: runs with it before */
	int64_t		*kb;	/* ... of which failed */
};

struct flaky_order_acc {
	struct victim	*v;
	size_t		 nv;
	int64_t		*sorted;	/* victim ids, sorted */
	size_t		*sorted_at;	/* their index in v */
	int64_t		*cand;		/* dense index -> test id */
	size_t		 ncand, arrcap;
	int64_t		*hkey;		/* test id -> dense index + 1 */
	size_t		*hval;
	size_t		 hcap;
	size_t		*dense;		/* scratch: per position */
	ssize_t		*vpos;		/* scratch: per victim */
	size_t		 scap;
};

/* qsort and bsearch order of test ids. */
int
diag_cmp_i64(const void *a, const void *b)
{
	int64_t	 x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* An accumulator for these victims (at most FLAKY_ORDER_VICTIMS_MAX). */
int
flaky_order_new(const int64_t *victims, size_t n, struct flaky_order_acc **ret)
{
	struct flaky_order_acc *a;

	if (n > FLAKY_ORDER_VICTIMS_MAX)
		n = FLAKY_ORDER_VICTIMS_MAX;
	if ((a = calloc(1, sizeof *a)) == NULL)
		return -ENOMEM;
	a->nv = n;
	a->v = calloc(n ? n : 1, sizeof *a->v);
	a->sorted = calloc(n ? n : 1, sizeof *a->sorted);
	a->sorted_at = calloc(n ? n : 1, sizeof *a->sorted_at);
	a->vpos = calloc(n ? n : 1, sizeof *a->vpos);
	if (a->v == NULL || a->sorted == NULL || a->sorted_at == NULL ||
	    a->vpos == NULL) {
		flaky_order_free(a);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		a->v[i].id = victims[i];
		a->sorted[i] = victims[i];
	}
	if (n > 1)
		qsort(a->sorted, n, sizeof *a->sorted, diag_cmp_i64);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			if (a->v[j].id == a->sorted[i])
				a->sorted_at[i] = j;
	*ret = a;
	return 0;
}

/* Free an accumulator; NULL is fine. */
void
flaky_order_free(struct flaky_order_acc *a)
{
	if (a == NULL)
		return;
	for (size_t i = 0; i < a->nv && a->v != NULL; i++) {
		free(a->v[i].nb);
		free(a->v[i].kb);
	}
	free(a->v);
	free(a->sorted);
	free(a->sorted_at);
	free(a->cand);
	free(a->hkey);
	free(a->hval);
	free(a->dense);
	free(a->vpos);
	free(a);
}

/* Slot of a test id in the open-addressing table. */
static size_t
hash_id(int64_t id, size_t mask)
{
	uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 17) & mask;
}

/* The dense index of a candidate test, added when new. */
static int
cand_index(struct flaky_order_acc *a, int64_t id, size_t *ret)
{
	size_t	 i, mask;

	if ((a->ncand + 1) * 2 > a->hcap) {
		size_t	 cap = a->hcap ? a->hcap * 2 : 1024;
		int64_t	*k = calloc(cap, sizeof *k);
		size_t	*v = calloc(cap, sizeof *v);

		if (k == NULL || v == NULL) {
			free(k);
			free(v);
			return -ENOMEM;
		}
		for (size_t j = 0; j < a->hcap; j++) {
			if (a->hval[j] == 0)
				continue;
			for (i = hash_id(a->hkey[j], cap - 1); v[i] != 0;
			    i = (i + 1) & (cap - 1))
				;
			k[i] = a->hkey[j];
			v[i] = a->hval[j];
		}
		free(a->hkey);
		free(a->hval);
		a->hkey = k;
		a->hval = v;
		a->hcap = cap;
	}
	mask = a->hcap - 1;
	for (i = hash_id(id, mask); a->hval[i] != 0; i = (i + 1) & mask)
		if (a->hkey[i] == id) {
			*ret = a->hval[i] - 1;
			return 0;
		}
	if (a->ncand == a->arrcap) {
		size_t	 cap = a->arrcap ? a->arrcap * 2 : 256;
		void	*p;

		if ((p = realloc(a->cand, cap * sizeof *a->cand)) == NULL)
			return -ENOMEM;
		a->cand = p;
		for (size_t k = 0; k < a->nv; k++) {
			struct victim *v = &a->v[k];

			if ((p = realloc(v->nb, cap * sizeof *v->nb)) == NULL)
				return -ENOMEM;
			v->nb = p;
			if ((p = realloc(v->kb, cap * sizeof *v->kb)) == NULL)
				return -ENOMEM;
			v->kb = p;
			memset(v->nb + a->arrcap, 0, (cap - a->arrcap) *
			    sizeof *v->nb);
			memset(v->kb + a->arrcap, 0, (cap - a->arrcap) *
			    sizeof *v->kb);
		}
		a->arrcap = cap;
	}
	a->cand[a->ncand] = id;
	a->hkey[i] = id;
	a->hval[i] = a->ncand + 1;
	*ret = a->ncand++;
	return 0;
}

/* Count one run: for each victim in it, the tests that ran before it. */
int
flaky_order_add_run(struct flaky_order_acc *a, const struct flaky_run_order *o)
{
	int	 r;

	if (o->n > a->scap) {
		void	*p = realloc(a->dense, o->n * sizeof *a->dense);

		if (p == NULL)
			return -ENOMEM;
		a->dense = p;
		a->scap = o->n;
	}
	for (size_t k = 0; k < a->nv; k++)
		a->vpos[k] = -1;
	for (size_t j = 0; j < o->n; j++) {
		int64_t	*hit;

		if ((r = cand_index(a, o->test_ids[j], &a->dense[j])) < 0)
			return r;
		hit = bsearch(&o->test_ids[j], a->sorted, a->nv,
		    sizeof *a->sorted, diag_cmp_i64);
		if (hit != NULL && a->vpos[a->sorted_at[hit - a->sorted]] < 0)
			a->vpos[a->sorted_at[hit - a->sorted]] = (ssize_t)j;
	}
	for (size_t k = 0; k < a->nv; k++) {
		struct victim *v = &a->v[k];
		ssize_t	 p = a->vpos[k];
		int	 out, failed;

		if (p < 0)
			continue;
		out = o->outcomes[p];
		failed = FLAKY_FAILED(out);
		if (!failed && out != FLAKY_PASS && out != FLAKY_XPASS)
			continue;	/* skipped: no evidence */
		v->runs++;
		v->fails += failed;
		for (ssize_t j = 0; j < p; j++) {
			v->nb[a->dense[j]]++;
			v->kb[a->dense[j]] += failed;
		}
	}
	return 0;
}

/* The candidate with the strongest evidence, named when it holds. Each
 * test is two hypotheses: the victim fails after it (a polluter), or
 * fails unless it ran first (a set-up test the victim relies on). The
 * second is the same one-sided test on the complementary counts. */
int
flaky_order_result(const struct flaky_order_acc *a, size_t i,
    struct flaky_order_evidence *e)
{
	const struct victim *v;
	double	 best = 2.0, best_gap = 0;
	size_t	 cands = 0, bi = 0;
	int	 best_missing = 0;

	memset(e, 0, sizeof *e);
	e->p = 1.0;
	if (i >= a->nv)
		return 0;
	v = &a->v[i];
	if (v->fails == 0 || v->fails == v->runs)
		return 0;
	for (size_t d = 0; d < a->ncand; d++) {
		int64_t	 nb = v->nb[d], kb = v->kb[d];
		int64_t	 nw = v->runs - nb, kw = v->fails - kb;

		/* A test that never or always ran before it tells nothing. */
		if (nb == 0 || nb == v->runs || a->cand[d] == v->id)
			continue;
		cands++;
		for (int missing = 0; missing < 2; missing++) {
			int64_t	 k = missing ? kw : kb, n = missing ? nw : nb;
			double	 p, gap;

			if (k < FLAKY_ORDER_MIN_FAILS)
				continue;
			p = flaky_fisher_greater(k, n, v->fails, v->runs);
			gap = (double)k / (double)n - (double)(v->fails - k) /
			    (double)(v->runs - n);
			if (p < best || (p == best && gap > best_gap)) {
				best = p;
				best_gap = gap;
				bi = d;
				best_missing = missing;
			}
		}
	}
	e->candidates = cands;
	if (best > 1.0)
		return 0;
	e->k_before = v->kb[bi];
	e->n_before = v->nb[bi];
	e->k_without = v->fails - v->kb[bi];
	e->n_without = v->runs - v->nb[bi];
	e->p = best;
	/* Bonferroni over the candidates both ways, and a real difference in
	 * rate. */
	if (best * 2.0 * (double)cands > FLAKY_ORDER_ALPHA || best_gap < 0.3)
		return 0;
	if (best_missing)
		e->provider_id = a->cand[bi];
	else
		e->polluter_id = a->cand[bi];
	return 1;
}

/* flaky_store_run_orders callback: one run into the accumulator. */
static int
order_cb(const struct flaky_run_order *o, void *arg)
{
	return flaky_order_add_run(arg, o);
}

/* Run orders of a target (the newest max_runs) into an accumulator. */
int
flaky_order_from_store(struct flaky_store *s, int64_t target_id,
    const struct flaky_query *q, const int64_t *victims, size_t n,
    size_t max_runs, struct flaky_order_acc **ret, char *err, size_t errlen)
{
	struct flaky_order_acc *a;
	int	 r;

	if ((r = flaky_order_new(victims, n, &a)) < 0)
		return flaky_error(err, errlen, -r, "out of memory");
	if ((r = flaky_store_run_orders(s, target_id, q, max_runs,
	    order_cb, a, err, errlen)) < 0) {
		if (r == -ENOMEM)
			flaky_error(err, errlen, ENOMEM, "out of memory");
		flaky_order_free(a);
		return r;
	}
	*ret = a;
	return 0;
}
