/* The per-test signature for reports: the dominant stored signature, RACE
 * from timing for UNKNOWN ones, ORDER_DEPENDENT when a polluter is named. */
#include "buildconf.h"

#include <math.h>

#include "classify/classify.h"
#include "diagnose_int.h"

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
		if ((e.polluter_id != 0 && (t->polluter = diag_ref_name(refs,
		    nrefs, e.polluter_id)) == NULL) ||
		    (e.provider_id != 0 && (t->depends_on = diag_ref_name(refs,
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
	return diag_cmp_i64(&((const struct durations *)a)->id,
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
		if (diag_race_from_timing(t->signature, &t->timing)) {
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

/* The first of the counts (by test id) of test id, or n. */
static size_t
sig_first(const struct flaky_sig_count *c, size_t n, int64_t id)
{
	size_t	 lo = 0, hi = n;

	while (lo < hi) {
		size_t	 mid = lo + (hi - lo) / 2;

		if (c[mid].test_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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
	if ((r = flaky_store_signature_counts(s, ids, nids, q, &c, &nc, err,
	    errlen)) < 0)
		goto fail;
	for (size_t i = 0; i < nids; i++) {
		struct flaky_test_sig *t = &v[n++];
		size_t	 k = sig_first(c, nc, ids[i]);

		t->test_id = ids[i];
		for (; k < nc && c[k].test_id == ids[i]; k++)
			if (diag_tally_add(&t->sigs, &t->nsigs, c[k].signature,
			    c[k].count) < 0)
				goto oom;
		t->signature = t->nsigs > 0 ? t->sigs[0].name : NULL;
	}
	flaky_sig_counts_free(c, nc);
	c = NULL;
	nc = 0;
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
