/* Why a test fails: the evidence of its stored runs folded into failure
 * modes, a signature, a suspected polluter, a verdict per revision and
 * timing. What needs many runs is decided here, at query time, over the
 * window (DESIGN.md "Data flow"). */
#include "buildconf.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "classify/classify.h"
#include "diagnose/diagnose.h"
#include "stats/stats.h"
#include "util/util.h"

/* ---- order dependence ---- */

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
static int
cmp_i64(const void *a, const void *b)
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
		qsort(a->sorted, n, sizeof *a->sorted, cmp_i64);
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
		    sizeof *a->sorted, cmp_i64);
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

/* log of n choose k */
static double
lchoose(int64_t n, int64_t k)
{
	return lgamma((double)n + 1) - lgamma((double)k + 1) -
	    lgamma((double)(n - k) + 1);
}

/* Chance of k or more of K failures among n of N runs (hypergeometric). */
double
flaky_fisher_greater(int64_t k, int64_t n, int64_t K, int64_t N)
{
	double	 p = 0, den;
	int64_t	 hi = n < K ? n : K;

	if (N <= 0 || n <= 0 || n > N || K > N || k <= 0)
		return 1.0;
	den = lchoose(N, n);
	for (int64_t i = k; i <= hi; i++) {
		if (n - i > N - K)
			continue;
		p += exp(lchoose(K, i) + lchoose(N - K, n - i) - den);
	}
	return p > 1.0 ? 1.0 : p;
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

/* ---- revisions, timing, modes ---- */

/* Name of an enum flaky_rev_state. */
const char *
flaky_rev_state_name(int s)
{
	switch (s) {
	case FLAKY_REV_FLAKY: return "flaky";
	case FLAKY_REV_BROKEN: return "broken";
	default: return "stable";
	}
}

/* Name of an enum flaky_transition, NULL for none. */
const char *
flaky_transition_name(int t)
{
	switch (t) {
	case FLAKY_TRANS_FIXED: return "fixed";
	case FLAKY_TRANS_REGRESSED: return "regressed";
	default: return NULL;
	}
}

/* Name of an enum flaky_verdict. */
const char *
flaky_verdict_name(int v)
{
	switch (v) {
	case FLAKY_VERDICT_FLAKY: return "flaky";
	case FLAKY_VERDICT_BROKEN: return "broken";
	case FLAKY_VERDICT_FIXED: return "fixed";
	default: return "stable";
	}
}

/* Two revisions are the same (NULL only equals NULL). */
static int
same_rev(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Outcomes that count as a run of the test (not skips). */
static int
counts(int outcome)
{
	return FLAKY_FAILED(outcome) || outcome == FLAKY_PASS ||
	    outcome == FLAKY_XPASS;
}

/* Per revision, in the order first seen (rows come oldest run first). */
static int
fold_revisions(struct flaky_diagnosis *d, const struct flaky_result_row *rows,
    size_t n)
{
	struct flaky_rev_stat *prev = NULL, *last = NULL;
	size_t	 cap = 0;
	int	 ever_failed = 0;

	for (size_t i = 0; i < n; i++) {
		struct flaky_rev_stat *rs = NULL;

		if (!counts(rows[i].outcome))
			continue;
		/* the newest revision first: runs come in order */
		for (size_t k = d->nrevs; k-- > 0; )
			if (same_rev(d->revs[k].revision, rows[i].revision)) {
				rs = &d->revs[k];
				break;
			}
		if (rs == NULL) {
			if (d->nrevs == cap) {
				size_t	 c = cap ? cap * 2 : 8;
				void	*p = realloc(d->revs, c * sizeof *d->revs);

				if (p == NULL)
					return -ENOMEM;
				d->revs = p;
				cap = c;
			}
			rs = &d->revs[d->nrevs++];
			memset(rs, 0, sizeof *rs);
			if (rows[i].revision != NULL && (rs->revision =
			    strdup(rows[i].revision)) == NULL)
				return -ENOMEM;
			rs->first_ms = rows[i].started_ms;
		}
		rs->runs++;
		rs->failures += FLAKY_FAILED(rows[i].outcome);
		rs->last_ms = rows[i].started_ms;
	}
	for (size_t k = 0; k < d->nrevs; k++) {
		struct flaky_rev_stat *rs = &d->revs[k];

		rs->state = rs->failures == 0 ? FLAKY_REV_STABLE :
		    rs->failures == rs->runs ? FLAKY_REV_BROKEN :
		    FLAKY_REV_FLAKY;
		flaky_wilson(rs->failures, rs->runs, FLAKY_Z95, &rs->ci_low,
		    &rs->ci_high);
		if (prev != NULL && prev->state != FLAKY_REV_STABLE &&
		    rs->state == FLAKY_REV_STABLE)
			rs->transition = FLAKY_TRANS_FIXED;
		else if (prev != NULL && prev->state == FLAKY_REV_STABLE &&
		    rs->state != FLAKY_REV_STABLE)
			rs->transition = FLAKY_TRANS_REGRESSED;
		if (rs->failures > 0)
			ever_failed = 1;
		prev = last = rs;
	}
	if (last == NULL || !ever_failed)
		d->verdict = FLAKY_VERDICT_STABLE;
	else if (last->state == FLAKY_REV_BROKEN)
		d->verdict = FLAKY_VERDICT_BROKEN;
	else if (last->state == FLAKY_REV_FLAKY)
		d->verdict = FLAKY_VERDICT_FLAKY;
	else
		d->verdict = FLAKY_VERDICT_FIXED;
	return 0;
}

/* The q-quantile of sorted values by the nearest-rank rule, in ms. */
static double
quantile_ms(const int64_t *v, size_t n, double q)
{
	size_t	 rank;

	if (n == 0)
		return NAN;
	rank = (size_t)ceil(q * (double)n);
	if (rank == 0)
		rank = 1;
	return (double)v[rank - 1] / 1000.0;
}

/* Mann-Whitney over two sorted samples, merged: ranks need no copy. */
double
flaky_mann_whitney(const int64_t *a, size_t na, const int64_t *b, size_t nb,
    double *u)
{
	double	 ra = 0, ties = 0, n, ua, mu, var, z, p;
	size_t	 i = 0, j = 0, rank = 0;

	if (u != NULL)
		*u = NAN;
	if (na == 0 || nb == 0)
		return 1.0;
	/* Rank sum of a: a group of equal values shares the mean of its
	 * ranks; t^3 - t per group corrects the variance for the ties. */
	while (i < na || j < nb) {
		int64_t	 v;
		size_t	 ta = 0, tb = 0;
		double	 t;

		if (j >= nb || (i < na && a[i] <= b[j]))
			v = a[i];
		else
			v = b[j];
		while (i < na && a[i] == v) {
			i++;
			ta++;
		}
		while (j < nb && b[j] == v) {
			j++;
			tb++;
		}
		t = (double)(ta + tb);
		ra += (double)ta * ((double)rank + (t + 1) / 2);
		ties += t * t * t - t;
		rank += ta + tb;
	}
	n = (double)(na + nb);
	ua = ra - (double)na * ((double)na + 1) / 2;
	if (u != NULL)
		*u = ua;
	mu = (double)na * (double)nb / 2;
	var = (double)na * (double)nb / 12 * ((n + 1) - ties / (n * (n - 1)));
	if (!(var > 0))
		return 1.0;	/* every value ties */
	z = (fabs(ua - mu) - 0.5) / sqrt(var);
	if (z < 0)
		z = 0;
	p = erfc(z / sqrt(2.0));
	return p > 1.0 ? 1.0 : p;
}

/* Median and p90 of failing and passing durations; early or near a limit;
 * whether the outcome goes with the duration. */
void
flaky_timing_fold(struct flaky_timing *t, int64_t *pass, size_t np,
    int64_t *fail, size_t nf)
{
	/* either may be NULL when empty (a report's test with no pass) */
	if (np > 0)
		qsort(pass, np, sizeof *pass, cmp_i64);
	if (nf > 0)
		qsort(fail, nf, sizeof *fail, cmp_i64);
	t->n_pass = (int64_t)np;
	t->n_fail = (int64_t)nf;
	t->median_pass = quantile_ms(pass, np, .5);
	t->p90_pass = quantile_ms(pass, np, .9);
	t->median_fail = quantile_ms(fail, nf, .5);
	t->p90_fail = quantile_ms(fail, nf, .9);
	t->min_fail = nf ? (double)fail[0] / 1000.0 : NAN;
	t->max_fail = nf ? (double)fail[nf - 1] / 1000.0 : NAN;
	/* Early: failures are over before a typical pass is half done (an
	 * assertion or a refused connection, not a wait). */
	t->early = np > 0 && nf > 0 && t->median_pass >= 5 &&
	    t->p90_fail * 2 <= t->median_pass;
	/* Near a limit: failures take about one time, at least 50 ms and as
	 * long as 90% of passes or longer (a timeout fired). The median and
	 * p90 rather than min and max: on a loaded machine a timer fires late
	 * now and then, and one late failure must not hide the cluster. */
	t->near_limit = nf >= 2 && t->median_fail >= 50 &&
	    t->p90_fail <= 2 * t->median_fail &&
	    (np == 0 || t->median_fail >= t->p90_pass);
	/* Varies with timing: failing and passing durations differ beyond
	 * chance (a few of each say nothing), and not because a limit cut the
	 * failures off (that is a timeout, not a race). */
	t->mw_p = NAN;
	t->varies = 0;
	if (np >= FLAKY_TIMING_MIN && nf >= FLAKY_TIMING_MIN) {
		t->mw_p = flaky_mann_whitney(fail, nf, pass, np, NULL);
		t->varies = t->mw_p < FLAKY_TIMING_ALPHA && !t->near_limit;
	}
}

/* The known durations of passing and failing results into d->timing. */
static int
fold_timing(struct flaky_diagnosis *d, const struct flaky_result_row *rows,
    size_t n)
{
	int64_t	*pass, *fail;
	size_t	 np = 0, nf = 0;

	pass = malloc((n ? n : 1) * sizeof *pass);
	fail = malloc((n ? n : 1) * sizeof *fail);
	if (pass == NULL || fail == NULL) {
		free(pass);
		free(fail);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (rows[i].duration_us < 0)
			continue;
		if (FLAKY_FAILED(rows[i].outcome))
			fail[nf++] = rows[i].duration_us;
		else if (rows[i].outcome == FLAKY_PASS ||
		    rows[i].outcome == FLAKY_XPASS)
			pass[np++] = rows[i].duration_us;
	}
	flaky_timing_fold(&d->timing, pass, np, fail, nf);
	free(pass);
	free(fail);
	return 0;
}

/* RACE from timing: no message said more than UNKNOWN, but the failures
 * go with their durations (DESIGN.md: "outcome varies with timing"). */
static int
race_from_timing(const char *dominant, const struct flaky_timing *t)
{
	return dominant != NULL && strcmp(dominant,
	    flaky_signature_name(FLAKY_SIG_UNKNOWN)) == 0 && t->varies;
}

/* Failure modes, most frequent first, then the newest. */
static int
cmp_modes(const void *a, const void *b)
{
	const struct flaky_failure_mode *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->last_run_id > y->last_run_id ? -1 :
	    x->last_run_id < y->last_run_id;
}

/* Signatures, most frequent first, then by name. */
static int
cmp_tally(const void *a, const void *b)
{
	const struct flaky_sig_tally *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Add n to a signature's count in a tally list. */
static int
tally_add(struct flaky_sig_tally **v, size_t *nv, const char *name,
    int64_t n)
{
	void	*p;

	for (size_t i = 0; i < *nv; i++)
		if (strcmp((*v)[i].name, name) == 0) {
			(*v)[i].count += n;
			return 0;
		}
	if ((p = realloc(*v, (*nv + 1) * sizeof **v)) == NULL)
		return -ENOMEM;
	*v = p;
	if (((*v)[*nv].name = strdup(name)) == NULL)
		return -ENOMEM;
	(*v)[(*nv)++].count = n;
	return 0;
}

/* Failure modes by fingerprint and signatures with counts. */
static int
fold_modes(struct flaky_diagnosis *d, const struct flaky_result_row *rows,
    size_t n)
{
	size_t	 cap = 0;
	int	 r;

	for (size_t i = 0; i < n; i++) {
		const struct flaky_result_row *x = &rows[i];
		struct flaky_failure_mode *m = NULL;
		const char *sig = x->signature ? x->signature : "UNKNOWN";

		if (!FLAKY_FAILED(x->outcome))
			continue;
		if ((r = tally_add(&d->sigs, &d->nsigs, sig, 1)) < 0)
			return r;
		for (size_t k = 0; k < d->nmodes; k++)
			if (d->modes[k].fingerprint == x->fingerprint) {
				m = &d->modes[k];
				break;
			}
		if (m == NULL) {
			if (d->nmodes == cap) {
				size_t	 c = cap ? cap * 2 : 8;
				void	*p = realloc(d->modes, c *
				    sizeof *d->modes);

				if (p == NULL)
					return -ENOMEM;
				d->modes = p;
				cap = c;
			}
			m = &d->modes[d->nmodes++];
			memset(m, 0, sizeof *m);
			m->fingerprint = x->fingerprint;
			if (x->normalized != NULL && (m->normalized =
			    strdup(x->normalized)) == NULL)
				return -ENOMEM;
		}
		m->count++;
		m->last_run_id = x->run_id;
		free(m->signature);
		free(m->example);
		m->signature = strdup(sig);
		m->example = x->message ? strdup(x->message) : NULL;
		if (m->signature == NULL || (x->message && m->example == NULL))
			return -ENOMEM;
		free(d->seed);
		free(d->runner);
		d->seed = x->seed ? strdup(x->seed) : NULL;
		d->runner = x->runner ? strdup(x->runner) : NULL;
	}
	if (d->nmodes > 1)
		qsort(d->modes, d->nmodes, sizeof *d->modes, cmp_modes);
	if (d->nsigs > 1)
		qsort(d->sigs, d->nsigs, sizeof *d->sigs, cmp_tally);
	d->signature = d->nsigs > 0 ? d->sigs[0].name : NULL;
	d->race_timing = 0;
	if (race_from_timing(d->signature, &d->timing)) {
		d->signature = flaky_signature_name(FLAKY_SIG_RACE);
		d->race_timing = 1;
	}
	if (d->passes_alone || d->fails_alone) {
		d->signature = flaky_signature_name(FLAKY_SIG_ORDER_DEPENDENT);
		d->race_timing = 0;
	}
	return 0;
}

/* Fold one test's results (oldest first) into d. */
int
flaky_diagnose_rows(struct flaky_diagnosis *d,
    const struct flaky_result_row *rows, size_t n)
{
	int	 r;

	d->runs = d->failures = d->skips = 0;
	for (size_t i = 0; i < n; i++) {
		if (counts(rows[i].outcome)) {
			d->runs++;
			d->failures += FLAKY_FAILED(rows[i].outcome);
		} else
			d->skips++;
		if (i == 0 || rows[i].started_ms < d->first_ms)
			d->first_ms = rows[i].started_ms;
		if (i == 0 || rows[i].started_ms > d->last_ms)
			d->last_ms = rows[i].started_ms;
	}
	/* Alone (flakyctl confirm) against in the suite: passing alone every
	 * time while failing with the others is order dependence. */
	d->alone_runs = d->alone_failures = 0;
	for (size_t i = 0; i < n; i++) {
		if (!counts(rows[i].outcome))
			continue;
		if (rows[i].kind == FLAKY_KIND_ALONE) {
			d->alone_runs++;
			d->alone_failures += FLAKY_FAILED(rows[i].outcome);
		}
	}
	d->suite_runs = d->runs - d->alone_runs;
	d->suite_failures = d->failures - d->alone_failures;
	d->alone_p = flaky_fisher_greater(d->suite_failures, d->suite_runs,
	    d->failures, d->runs);
	d->passes_alone = d->alone_runs > 0 && d->alone_failures == 0 &&
	    d->suite_failures > 0 && d->alone_p < FLAKY_ALONE_ALPHA;
	/* Failing alone every time while passing with the others: all the
	 * passes in the suite's runs by chance? */
	d->alone_pass_p = flaky_fisher_greater(d->suite_runs -
	    d->suite_failures, d->suite_runs, d->runs - d->failures, d->runs);
	d->fails_alone = d->alone_runs > 0 &&
	    d->alone_failures == d->alone_runs &&
	    d->suite_failures < d->suite_runs &&
	    d->alone_pass_p < FLAKY_ALONE_ALPHA;
	if ((r = fold_revisions(d, rows, n)) < 0 ||
	    (r = fold_timing(d, rows, n)) < 0 ||
	    (r = fold_modes(d, rows, n)) < 0)
		return r;
	return 0;
}

/* Free a diagnosis; NULL is fine. */
void
flaky_diagnosis_free(struct flaky_diagnosis *d)
{
	if (d == NULL)
		return;
	free(d->target);
	free(d->test);
	for (size_t i = 0; i < d->nsigs; i++)
		free(d->sigs[i].name);
	free(d->sigs);
	for (size_t i = 0; i < d->nmodes; i++) {
		free(d->modes[i].signature);
		free(d->modes[i].normalized);
		free(d->modes[i].example);
	}
	free(d->modes);
	free(d->polluter);
	free(d->depends_on);
	for (size_t i = 0; i < d->nrevs; i++)
		free(d->revs[i].revision);
	free(d->revs);
	free(d->seed);
	free(d->runner);
	free(d->command);
	free(d->dir);
	flaky_result_rows_free(d->failed, d->nfailed);
	free(d);
}

/* The name of a test id, or NULL. */
static char *
ref_name(const struct flaky_test_ref *refs, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (refs[i].id == id)
			return strdup(refs[i].name);
	return NULL;
}

/* Keep only the failed rows (moved into d->failed); frees the rest. */
static int
keep_failed(struct flaky_diagnosis *d, struct flaky_result_row *rows,
    size_t n)
{
	struct flaky_result_row *f;
	size_t	 k = 0;

	if ((f = calloc(d->failures ? (size_t)d->failures : 1,
	    sizeof *f)) == NULL) {
		flaky_result_rows_free(rows, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (FLAKY_FAILED(rows[i].outcome) &&
		    k < (size_t)d->failures) {
			f[k++] = rows[i];
			memset(&rows[i], 0, sizeof rows[i]);
		}
	}
	flaky_result_rows_free(rows, n);
	d->failed = f;
	d->nfailed = k;
	return 0;
}

/* What one pass over a target's results collects. */
struct scan_state {
	struct flaky_order_acc	*acc;
	struct flaky_run_order	 o;	/* the run being read */
	size_t			 cap;
	const int64_t		*wanted;	/* sorted */
	size_t			 nwanted;
	struct rowvec {
		struct flaky_result_row	*v;
		size_t			 n, cap;
	}			*rows;	/* per wanted test */
};

/* A copy of s, or NULL; *oom set when the copy failed. */
static char *
dup_or_null(const char *s, int *oom)
{
	char	*d;

	if (s == NULL)
		return NULL;
	if ((d = strdup(s)) == NULL)
		*oom = 1;
	return d;
}

/* flaky_store_scan_target callback: the run order and the wanted rows. */
static int
scan_cb(const struct flaky_scan_row *x, void *arg)
{
	struct scan_state *st = arg;
	struct flaky_result_row *c;
	struct rowvec *rv;
	const int64_t *hit;
	int	 r, oom = 0;

	if (st->o.n > 0 && x->r.run_id != st->o.run_id) {
		if ((r = flaky_order_add_run(st->acc, &st->o)) < 0)
			return r;
		st->o.n = 0;
	}
	st->o.run_id = x->r.run_id;
	if (st->o.n == st->cap) {
		size_t	 cap = st->cap ? st->cap * 2 : 256;
		void	*p;

		if ((p = realloc(st->o.test_ids, cap * sizeof *st->o.test_ids))
		    == NULL)
			return -ENOMEM;
		st->o.test_ids = p;
		if ((p = realloc(st->o.outcomes, cap * sizeof *st->o.outcomes))
		    == NULL)
			return -ENOMEM;
		st->o.outcomes = p;
		st->cap = cap;
	}
	st->o.test_ids[st->o.n] = x->test_id;
	st->o.outcomes[st->o.n++] = x->r.outcome;
	if (!x->wanted || (hit = bsearch(&x->test_id, st->wanted, st->nwanted,
	    sizeof *st->wanted, cmp_i64)) == NULL)
		return 0;
	rv = &st->rows[hit - st->wanted];
	if (rv->n == rv->cap) {
		size_t	 cap = rv->cap ? rv->cap * 2 : 64;
		void	*p = realloc(rv->v, cap * sizeof *rv->v);

		if (p == NULL)
			return -ENOMEM;
		rv->v = p;
		rv->cap = cap;
	}
	c = &rv->v[rv->n++];
	*c = x->r;
	c->revision = dup_or_null(x->r.revision, &oom);
	c->seed = dup_or_null(x->r.seed, &oom);
	c->runner = dup_or_null(x->r.runner, &oom);
	c->signature = FLAKY_FAILED(x->r.outcome) ?
	    dup_or_null(x->r.signature, &oom) : NULL;
	c->normalized = FLAKY_FAILED(x->r.outcome) ?
	    dup_or_null(x->r.normalized, &oom) : NULL;
	c->message = FLAKY_FAILED(x->r.outcome) ?
	    dup_or_null(x->r.message, &oom) : NULL;
	return oom ? -ENOMEM : 0;
}

/* One pass over a target's results for up to FLAKY_ORDER_VICTIMS_MAX of
 * its tests (sorted ids): their evidence and their polluters. */
static int
diagnose_target(struct flaky_store *s, int64_t target_id,
    const struct flaky_query *q, const int64_t *ids, size_t n,
    struct flaky_diagnosis **d, const struct flaky_test_ref *refs,
    size_t nrefs, char *err, size_t errlen)
{
	struct scan_state st;
	int	 r;

	memset(&st, 0, sizeof st);
	st.wanted = ids;
	st.nwanted = n;
	if ((st.rows = calloc(n, sizeof *st.rows)) == NULL ||
	    flaky_order_new(ids, n, &st.acc) < 0) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	r = flaky_store_scan_target(s, target_id, q, ids, n, scan_cb, &st,
	    err, errlen);
	if (r == 0 && st.o.n > 0)
		r = flaky_order_add_run(st.acc, &st.o);
	if (r == -ENOMEM)
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
	if (r < 0)
		goto out;
	for (size_t k = 0; k < n; k++) {
		struct flaky_diagnosis *x = d[k];

		if (flaky_diagnose_rows(x, st.rows[k].v, st.rows[k].n) < 0) {
			r = flaky_error(err, errlen, ENOMEM, "out of memory");
			goto out;
		}
		/* keep_failed takes the rows whatever it returns */
		r = keep_failed(x, st.rows[k].v, st.rows[k].n);
		st.rows[k].v = NULL;
		st.rows[k].n = 0;
		if (r < 0) {
			r = flaky_error(err, errlen, ENOMEM, "out of memory");
			goto out;
		}
		if (x->failures > 0 && x->failures < x->runs &&
		    flaky_order_result(st.acc, k, &x->order) == 1) {
			/* the order is the more specific evidence: it wins
			 * over RACE from timing */
			if (x->order.polluter_id != 0)
				x->polluter = ref_name(refs, nrefs,
				    x->order.polluter_id);
			else
				x->depends_on = ref_name(refs, nrefs,
				    x->order.provider_id);
			x->signature = flaky_signature_name(
			    FLAKY_SIG_ORDER_DEPENDENT);
			x->race_timing = 0;
		}
	}
out:
	for (size_t k = 0; st.rows != NULL && k < n; k++)
		flaky_result_rows_free(st.rows[k].v, st.rows[k].n);
	free(st.rows);
	free(st.o.test_ids);
	free(st.o.outcomes);
	flaky_order_free(st.acc);
	return r;
}

struct by_id {
	int64_t	 id, target_id;
	size_t	 at;	/* index in the caller's array */
};

/* Tests grouped by target, then by id. */
static int
cmp_by_target(const void *a, const void *b)
{
	const struct by_id *x = a, *y = b;

	if (x->target_id != y->target_id)
		return x->target_id < y->target_id ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Diagnose n tests, one pass per target and chunk of tests. */
int
flaky_diagnose_tests(struct flaky_store *s, const int64_t *ids, size_t n,
    const struct flaky_query *q, struct flaky_diagnosis **ret, char *err,
    size_t errlen)
{
	struct flaky_test_ref *refs = NULL;
	struct by_id	*b = NULL;
	struct flaky_diagnosis *chunk_d[FLAKY_ORDER_VICTIMS_MAX];
	int64_t		 chunk_id[FLAKY_ORDER_VICTIMS_MAX];
	size_t		 nrefs = 0;
	int		 r;

	memset(ret, 0, n * sizeof *ret);
	if ((r = flaky_store_tests(s, NULL, &refs, &nrefs, err, errlen)) < 0)
		return r;
	if ((b = calloc(n ? n : 1, sizeof *b)) == NULL)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		const struct flaky_test_ref *t = NULL;
		struct flaky_diagnosis *d;

		for (size_t k = 0; k < nrefs && t == NULL; k++)
			if (refs[k].id == ids[i])
				t = &refs[k];
		if (t == NULL) {
			r = flaky_error(err, errlen, ENOENT, "no test with id "
			    "%lld", (long long)ids[i]);
			goto fail;
		}
		if ((d = ret[i] = calloc(1, sizeof *d)) == NULL)
			goto oom;
		d->test_id = ids[i];
		d->target_id = t->target_id;
		if ((d->target = strdup(t->target)) == NULL ||
		    (d->test = strdup(t->name)) == NULL)
			goto oom;
		if ((r = flaky_store_target_info(s, d->target_id, &d->command,
		    &d->dir, err, errlen)) < 0)
			goto fail;
		b[i].id = ids[i];
		b[i].target_id = t->target_id;
		b[i].at = i;
	}
	if (n > 1)
		qsort(b, n, sizeof *b, cmp_by_target);
	/* one pass per target and up to FLAKY_ORDER_VICTIMS_MAX tests */
	for (size_t i = 0; i < n; ) {
		size_t	 k = 0;

		while (i + k < n && k < FLAKY_ORDER_VICTIMS_MAX &&
		    b[i + k].target_id == b[i].target_id &&
		    (k == 0 || b[i + k].id != b[i + k - 1].id)) {
			chunk_id[k] = b[i + k].id;
			chunk_d[k] = ret[b[i + k].at];
			k++;
		}
		if (k == 0) {
			/* the same test asked twice: diagnose it again */
			chunk_id[0] = b[i].id;
			chunk_d[0] = ret[b[i].at];
			k = 1;
		}
		if ((r = diagnose_target(s, b[i].target_id, q, chunk_id, k,
		    chunk_d, refs, nrefs, err, errlen)) < 0)
			goto fail;
		i += k;
	}
	free(b);
	flaky_test_refs_free(refs, nrefs);
	return 0;
oom:
	r = flaky_error(err, errlen, ENOMEM, "out of memory");
fail:
	for (size_t i = 0; i < n; i++) {
		flaky_diagnosis_free(ret[i]);
		ret[i] = NULL;
	}
	free(b);
	flaky_test_refs_free(refs, nrefs);
	return r;
}

/* Diagnose one test. */
int
flaky_diagnose_test(struct flaky_store *s, int64_t test_id,
    const struct flaky_query *q, struct flaky_diagnosis **ret, char *err,
    size_t errlen)
{
	return flaky_diagnose_tests(s, &test_id, 1, q, ret, err, errlen);
}

/* ---- per-test signatures for reports ---- */

/* Free a list from flaky_test_signatures; NULL is fine. */
void
flaky_test_sigs_free(struct flaky_test_sig *v, size_t n)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < v[i].nsigs; k++)
			free(v[i].sigs[k].name);
		free(v[i].sigs);
		free(v[i].polluter);
		free(v[i].depends_on);
	}
	free(v);
}

/* Binary search by test id. */
const struct flaky_test_sig *
flaky_test_sig_find(const struct flaky_test_sig *v, size_t n, int64_t id)
{
	size_t	 lo = 0, hi = n;

	/* sorted by test id */
	while (lo < hi) {
		size_t	 mid = lo + (hi - lo) / 2;

		if (v[mid].test_id == id)
			return &v[mid];
		if (v[mid].test_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Report signatures by test id, for flaky_test_sig_find. */
static int
cmp_sig_id(const void *a, const void *b)
{
	const struct flaky_test_sig *x = a, *y = b;

	return x->test_id < y->test_id ? -1 : x->test_id > y->test_id;
}

/* Order dependence for the victims of one target: names polluters and
 * set-up tests. */
static int
target_polluters(struct flaky_store *s, const struct flaky_query *q,
    int64_t target_id, struct flaky_test_sig *v, size_t n,
    const int64_t *victims, size_t nvictims,
    const struct flaky_test_ref *refs, size_t nrefs, char *err,
    size_t errlen)
{
	struct flaky_order_acc *acc = NULL;
	int64_t	 mine[FLAKY_ORDER_VICTIMS_MAX];
	size_t	 nv = 0;
	int	 r;

	for (size_t i = 0; i < nvictims && nv < FLAKY_ORDER_VICTIMS_MAX; i++)
		for (size_t k = 0; k < nrefs; k++)
			if (refs[k].id == victims[i] &&
			    refs[k].target_id == target_id) {
				mine[nv++] = victims[i];
				break;
			}
	if (nv == 0)
		return 0;
	/* Runs in one fixed order cannot tell a polluter from a neighbour:
	 * the report looks only where the runner shuffled (triage and show
	 * look everywhere). */
	if ((r = flaky_store_order_varies(s, target_id, q, err, errlen)) <= 0)
		return r;
	if ((r = flaky_order_from_store(s, target_id, q, mine, nv,
	    FLAKY_ORDER_RUNS_REPORT, &acc, err, errlen)) < 0)
		return r;
	for (size_t k = 0; k < nv; k++) {
		struct flaky_order_evidence e;
		struct flaky_test_sig *t;

		if (flaky_order_result(acc, k, &e) != 1 ||
		    (t = (struct flaky_test_sig *)flaky_test_sig_find(v, n,
		    mine[k])) == NULL)
			continue;
		free(t->polluter);
		free(t->depends_on);
		t->polluter = t->depends_on = NULL;
		if ((e.polluter_id != 0 && (t->polluter = ref_name(refs,
		    nrefs, e.polluter_id)) == NULL) ||
		    (e.provider_id != 0 && (t->depends_on = ref_name(refs,
		    nrefs, e.provider_id)) == NULL)) {
			flaky_order_free(acc);
			return flaky_error(err, errlen, ENOMEM,
			    "out of memory");
		}
		t->signature = (char *)flaky_signature_name(
		    FLAKY_SIG_ORDER_DEPENDENT);
		t->race_timing = 0;
	}
	flaky_order_free(acc);
	return 0;
}

/* Durations of the tests whose timing a report reads, per test. */
struct durations {
	int64_t		 id;
	int64_t		*pass, *fail;
	size_t		 np, nf, pcap, fcap;
};

/* The tests of one target whose durations are read, by test id. */
struct durations_set {
	struct durations	*v;
	size_t			 n;
};

/* qsort and bsearch order of struct durations. */
static int
cmp_durations(const void *a, const void *b)
{
	return cmp_i64(&((const struct durations *)a)->id,
	    &((const struct durations *)b)->id);
}

/* flaky_store_durations callback: one duration to its test. */
static int
durations_cb(int64_t id, int outcome, int64_t us, void *arg)
{
	struct durations_set *all = arg;
	struct durations key, *x;
	int64_t	**v;
	size_t	*n, *cap;

	key.id = id;
	if ((x = bsearch(&key, all->v, all->n, sizeof *all->v,
	    cmp_durations)) == NULL)
		return 0;
	if (FLAKY_FAILED(outcome)) {
		v = &x->fail;
		n = &x->nf;
		cap = &x->fcap;
	} else {
		v = &x->pass;
		n = &x->np;
		cap = &x->pcap;
	}
	if (*n == *cap) {
		size_t	 c = *cap ? *cap * 2 : 64;
		void	*p = realloc(*v, c * sizeof **v);

		if (p == NULL)
			return -ENOMEM;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = us;
	return 0;
}

/* RACE from timing for the tests of one target whose signature is
 * UNKNOWN with enough failures: their durations from the newest
 * FLAKY_ORDER_RUNS_REPORT runs, as the order is read. */
static int
target_timing(struct flaky_store *s, const struct flaky_query *q,
    int64_t target_id, struct flaky_test_sig *v, size_t n,
    const struct flaky_test_ref *refs, size_t nrefs, char *err,
    size_t errlen)
{
	struct durations_set all = { NULL, 0 };
	int64_t	*ids = NULL;
	size_t	 ntests = 0, runs;
	int	 r = 0;

	if ((all.v = calloc(n ? n : 1, sizeof *all.v)) == NULL ||
	    (ids = calloc(n ? n : 1, sizeof *ids)) == NULL) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t	 fails = 0;
		int	 mine = 0;

		for (size_t k = 0; k < v[i].nsigs; k++)
			fails += v[i].sigs[k].count;
		if (v[i].signature == NULL || strcmp(v[i].signature,
		    flaky_signature_name(FLAKY_SIG_UNKNOWN)) != 0 ||
		    fails < FLAKY_TIMING_MIN)
			continue;
		for (size_t k = 0; k < nrefs && !mine; k++)
			mine = refs[k].id == v[i].test_id &&
			    refs[k].target_id == target_id;
		if (mine) {
			ids[all.n] = all.v[all.n].id = v[i].test_id;
			all.n++;
		}
	}
	if (all.n == 0)
		goto out;
	/* A bound on what a report reads: the newest runs holding about
	 * FLAKY_TIMING_ROWS_REPORT results of the target (its tests in the
	 * report stand for a run's size), between 20 and 500 runs. Without
	 * it a 10,000-test target read 5 M rows and the report took 1 s. */
	for (size_t k = 0; k < nrefs; k++)
		ntests += refs[k].target_id == target_id;
	runs = FLAKY_TIMING_ROWS_REPORT / (ntests ? ntests : 1);
	if (runs < 20)
		runs = 20;
	if (runs > FLAKY_ORDER_RUNS_REPORT)
		runs = FLAKY_ORDER_RUNS_REPORT;
	/* v is sorted by test id, so ids and all.v are too */
	if ((r = flaky_store_durations(s, target_id, q, runs, ids, all.n,
	    durations_cb, &all, err, errlen)) < 0) {
		if (r == -ENOMEM)
			r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < all.n; i++) {
		struct durations *x = &all.v[i];
		struct flaky_test_sig *t;

		t = (struct flaky_test_sig *)flaky_test_sig_find(v, n, x->id);
		if (t == NULL)
			continue;
		flaky_timing_fold(&t->timing, x->pass, x->np, x->fail, x->nf);
		if (race_from_timing(t->signature, &t->timing)) {
			t->signature = (char *)flaky_signature_name(
			    FLAKY_SIG_RACE);
			t->race_timing = 1;
		}
	}
out:
	for (size_t i = 0; all.v != NULL && i < all.n; i++) {
		free(all.v[i].pass);
		free(all.v[i].fail);
	}
	free(all.v);
	free(ids);
	return r;
}

/* Timing not read: counts zero, the rest unknown. */
static void
timing_unknown(struct flaky_timing *t)
{
	memset(t, 0, sizeof *t);
	t->median_pass = t->p90_pass = t->median_fail = t->p90_fail = NAN;
	t->min_fail = t->max_fail = t->mw_p = NAN;
}

/* Signatures of the tests asked about, polluters of the victims. */
int
flaky_test_signatures(struct flaky_store *s, const struct flaky_query *q,
    const int64_t *ids, size_t nids, const int64_t *victims,
    size_t nvictims, struct flaky_test_sig **ret, size_t *ret_n, char *err,
    size_t errlen)
{
	struct flaky_sig_count *c = NULL;
	struct flaky_test_sig *v = NULL;
	struct flaky_test_ref *refs = NULL;
	int64_t	*targets = NULL;
	size_t	 nc = 0, n = 0, nrefs = 0, nt = 0, unknown = 0;
	int	 r;

	if ((v = calloc(nids ? nids : 1, sizeof *v)) == NULL)
		goto oom;
	for (size_t i = 0; i < nids; i++) {
		struct flaky_test_sig *t = &v[n++];

		t->test_id = ids[i];
		if ((r = flaky_store_signature_counts(s, ids[i], q, &c, &nc,
		    err, errlen)) < 0)
			goto fail;
		for (size_t k = 0; k < nc; k++)
			if (tally_add(&t->sigs, &t->nsigs, c[k].signature,
			    c[k].count) < 0)
				goto oom;
		flaky_sig_counts_free(c, nc);
		c = NULL;
		nc = 0;
		t->signature = t->nsigs > 0 ? t->sigs[0].name : NULL;
	}
	if (n > 1)
		qsort(v, n, sizeof *v, cmp_sig_id);
	for (size_t i = 0; i < n; i++) {
		timing_unknown(&v[i].timing);
		if (v[i].signature != NULL && strcmp(v[i].signature,
		    flaky_signature_name(FLAKY_SIG_UNKNOWN)) == 0)
			unknown++;
	}
	if (nvictims > 0 || unknown > 0) {
		if ((r = flaky_store_tests(s, q->target, &refs, &nrefs, err,
		    errlen)) < 0)
			goto fail;
		if ((targets = calloc(nrefs ? nrefs : 1, sizeof *targets)) ==
		    NULL)
			goto oom;
		for (size_t i = 0; i < nrefs; i++) {
			size_t	 k;

			for (k = 0; k < nt && targets[k] != refs[i].target_id;
			    k++)
				;
			if (k == nt)
				targets[nt++] = refs[i].target_id;
		}
		/* timing first: order dependence wins over it */
		for (size_t k = 0; k < nt && unknown > 0; k++)
			if ((r = target_timing(s, q, targets[k], v, n, refs,
			    nrefs, err, errlen)) < 0)
				goto fail;
		for (size_t k = 0; k < nt && nvictims > 0; k++)
			if ((r = target_polluters(s, q, targets[k], v, n,
			    victims, nvictims, refs, nrefs, err, errlen)) < 0)
				goto fail;
	}
	free(targets);
	flaky_test_refs_free(refs, nrefs);
	*ret = v;
	*ret_n = n;
	return 0;
oom:
	r = flaky_error(err, errlen, ENOMEM, "out of memory");
fail:
	free(targets);
	flaky_test_refs_free(refs, nrefs);
	flaky_sig_counts_free(c, nc);
	flaky_test_sigs_free(v, n);
	return r;
}

/* ---- finding a test by name ---- */

/* Levenshtein distance in one row, inputs cut at FLAKY_EDIT_MAX bytes. */
size_t
flaky_edit_distance(const char *a, const char *b)
{
	size_t	 row[FLAKY_EDIT_MAX + 1], la = strlen(a), lb = strlen(b);

	if (la > FLAKY_EDIT_MAX)
		la = FLAKY_EDIT_MAX;
	if (lb > FLAKY_EDIT_MAX)
		lb = FLAKY_EDIT_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t	 diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t	 up = row[j], best;

			best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* The last part of a test id: after "::", '.', '/', '>' or a space. */
static const char *
base_name(const char *s)
{
	const char *b = s;

	for (const char *p = s; *p; p++)
		if (*p == ':' || *p == '.' || *p == '/' || *p == '>' ||
		    *p == ' ')
			b = p + 1;
	return *b ? b : s;
}

struct near {
	size_t	 i, dist;
};

/* Closest names first, then in list order. */
static int
cmp_near(const void *a, const void *b)
{
	const struct near *x = a, *y = b;

	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Exact id, unique part, whole last part; else candidates or closest. */
int
flaky_find_test(const struct flaky_test_ref *refs, size_t n,
    const char *query, size_t *matches, size_t max, size_t *nmatches)
{
	size_t	 nsub = 0, nbase = 0, nexact = 0, first_sub = 0;
	size_t	 first_base = 0, first_exact = 0;
	struct near *near;

	*nmatches = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(refs[i].name, query) == 0 && nexact++ == 0)
			first_exact = i;
		if (strstr(refs[i].name, query) == NULL)
			continue;
		if (nsub++ == 0)
			first_sub = i;
		if (strcmp(base_name(refs[i].name), query) == 0 &&
		    nbase++ == 0)
			first_base = i;
	}
	if (nexact == 1 || (nexact == 0 && nsub == 1) ||
	    (nexact == 0 && nbase == 1)) {
		matches[0] = nexact ? first_exact : nbase == 1 ? first_base :
		    first_sub;
		*nmatches = 1;
		return FLAKY_FIND_ONE;
	}
	if (nsub > 1) {
		for (size_t i = 0; i < n && *nmatches < max; i++)
			if (strstr(refs[i].name, query) != NULL &&
			    (nexact == 0 || strcmp(refs[i].name, query) == 0))
				matches[(*nmatches)++] = i;
		return FLAKY_FIND_AMBIGUOUS;
	}
	if (n == 0 || max == 0)
		return FLAKY_FIND_NONE;
	if ((near = calloc(n, sizeof *near)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t	 d1 = flaky_edit_distance(query, refs[i].name);
		size_t	 d2 = flaky_edit_distance(query,
		    base_name(refs[i].name));

		near[i].i = i;
		near[i].dist = d1 < d2 ? d1 : d2;
	}
	if (n > 1)
		qsort(near, n, sizeof *near, cmp_near);
	for (size_t i = 0; i < n && *nmatches < max; i++)
		matches[(*nmatches)++] = near[i].i;
	free(near);
	return FLAKY_FIND_NONE;
}
