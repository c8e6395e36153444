/* Co-failure clusters: tests of one target that fail in the same runs more
 * often than chance allows, and what their failures share as a hint of
 * the common cause. The measure, the test and the correction are argued
 * in docs/triage.md; the evidence comes from flaky_store_cofail. */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose_int.h"
#include "stats/stats.h"

/* A pair of tests linked by the evidence. */
struct edge {
	uint32_t	 i, j;
	double		 p, jaccard;
};

/* Each test's runs as bit sets over the runs read. */
struct bits {
	size_t		 words;
	uint64_t	*ran, *fail;	/* ntests * words each */
};

/* One failure in a shared run, for the hints. */
struct item {
	int64_t		 key;	/* fingerprint; 0 for plain strings */
	const char	*s;
	size_t		 member;
};

static int
popcount_and(const uint64_t *a, const uint64_t *b, size_t lo, size_t hi)
{
	int	 n = 0;

	for (size_t w = lo; w < hi; w++)
		n += __builtin_popcountll(a[w] & b[w]);
	return n;
}

/* The bit sets of every test. */
static int
bits_fill(const struct flaky_cofail *c, struct bits *b)
{
	b->words = (c->nruns + 63) / 64;
	b->ran = calloc(c->ntests * b->words + 1, sizeof *b->ran);
	b->fail = calloc(c->ntests * b->words + 1, sizeof *b->fail);
	if (b->ran == NULL || b->fail == NULL)
		return -ENOMEM;
	for (size_t t = 0; t < c->ntests; t++) {
		const struct flaky_cofail_test *x = &c->tests[t];
		uint64_t *r = b->ran + t * b->words;
		uint64_t *f = b->fail + t * b->words;

		for (size_t k = 0; k < x->nran; k++)
			r[x->ran[k] / 64] |= 1ULL << (x->ran[k] % 64);
		/* a failure is a run it ran in, whatever was read */
		for (size_t k = 0; k < x->nfails; k++) {
			f[x->fails[k].run / 64] |= 1ULL <<
			    (x->fails[k].run % 64);
			r[x->fails[k].run / 64] |= 1ULL <<
			    (x->fails[k].run % 64);
		}
	}
	return 0;
}

/* A test index with the key it is grouped by (target, or component). */
struct keyed {
	int64_t		 key;
	size_t		 idx;
};

static int
cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int
cmp_edge_p(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	if (x->i != y->i)
		return x->i < y->i ? -1 : 1;
	return x->j < y->j ? -1 : x->j > y->j;
}

/* The words [lo, hi) that hold a group's runs. */
static void
group_words(const struct flaky_cofail *c, const size_t *idx, size_t n,
    size_t *lo, size_t *hi)
{
	uint32_t a = UINT32_MAX, z = 0;

	for (size_t k = 0; k < n; k++) {
		const struct flaky_cofail_test *t = &c->tests[idx[k]];

		if (t->nran > 0) {
			a = t->ran[0] < a ? t->ran[0] : a;
			z = t->ran[t->nran - 1] > z ? t->ran[t->nran - 1] : z;
		}
		if (t->nfails > 0) {
			a = t->fails[0].run < a ? t->fails[0].run : a;
			z = t->fails[t->nfails - 1].run > z ?
			    t->fails[t->nfails - 1].run : z;
		}
	}
	*lo = a == UINT32_MAX ? 0 : a / 64;
	*hi = a == UINT32_MAX ? 0 : z / 64 + 1;
}

/* Test one pair; append it to *e when it meets the Jaccard bound. */
static int
pair_test(const struct bits *b, size_t i, size_t j, size_t lo, size_t hi,
    const struct flaky_cluster_opts *o, struct edge **e, size_t *ne,
    size_t *cap)
{
	const uint64_t *ri = b->ran + i * b->words, *rj = b->ran + j * b->words;
	const uint64_t *fi = b->fail + i * b->words;
	const uint64_t *fj = b->fail + j * b->words;
	int64_t	 a, ki, nj, n;
	double	 jac;

	a = popcount_and(fi, fj, lo, hi);
	if (a < o->min_failures)
		return 0;
	ki = popcount_and(fi, rj, lo, hi);
	nj = popcount_and(fj, ri, lo, hi);
	jac = (double)a / (double)(ki + nj - a);
	if (jac < o->min_jaccard)
		return 0;
	n = popcount_and(ri, rj, lo, hi);
	if (*ne == *cap) {
		size_t	 c = *cap ? *cap * 2 : 64;
		void	*p = realloc(*e, c * sizeof **e);

		if (p == NULL)
			return -ENOMEM;
		*e = p;
		*cap = c;
	}
	(*e)[*ne].i = (uint32_t)i;
	(*e)[*ne].j = (uint32_t)j;
	(*e)[*ne].p = flaky_fisher_greater(a, nj, ki, n);
	(*e)[*ne].jaccard = jac;
	(*ne)++;
	return 0;
}

/* Every eligible pair of the same target: counted in ret->pairs, tested
 * when its failures overlap enough. */
static int
pairs_test(const struct flaky_cofail *c, const struct bits *b,
    const struct flaky_cluster_opts *o, struct flaky_clusters *ret,
    struct edge **e, size_t *ne)
{
	struct keyed *v;
	size_t	*idx, cap = 0, nv = 0;
	int	 r = 0;

	v = malloc(c->ntests * sizeof *v);
	idx = malloc(c->ntests * sizeof *idx);
	if (v == NULL || idx == NULL) {
		free(v);
		free(idx);
		return -ENOMEM;
	}
	for (size_t k = 0; k < c->ntests; k++) {
		if ((int64_t)c->tests[k].nfails < o->min_failures)
			continue;
		v[nv].key = c->tests[k].target_id;
		v[nv++].idx = k;
	}
	qsort(v, nv, sizeof *v, cmp_keyed);
	for (size_t k = 0; k < nv; k++)
		idx[k] = v[k].idx;
	for (size_t g = 0, h; g < nv && r == 0; g = h) {
		size_t	 lo, hi;

		for (h = g; h < nv && v[h].key == v[g].key; h++)
			;
		group_words(c, idx + g, h - g, &lo, &hi);
		for (size_t x = g; x < h && r == 0; x++)
			for (size_t y = x + 1; y < h && r == 0; y++) {
				ret->pairs++;
				r = pair_test(b, idx[x], idx[y], lo, hi, o,
				    e, ne, &cap);
			}
	}
	free(v);
	free(idx);
	return r;
}

/* Union-find with path halving. */
static size_t
uf_find(size_t *parent, size_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

/* Holm's step-down over the eligible pairs: the k-th smallest p-value
 * (from 0) is significant when it and every smaller one lies below
 * alpha / (pairs - k). Pairs not tested count as p = 1. Returns how many
 * edges (the first ones once sorted) are links. */
static size_t
holm(struct edge *e, size_t ne, uint64_t pairs, double alpha)
{
	size_t	 k;

	if (ne > 0)
		qsort(e, ne, sizeof *e, cmp_edge_p);
	for (k = 0; k < ne; k++)
		if (e[k].p > alpha / (double)(pairs - k))
			break;
	return k;
}

static int
cmp_member(const void *a, const void *b)
{
	const struct flaky_cluster_member *x = a, *y = b;

	if (x->failures != y->failures)
		return x->failures > y->failures ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int
cmp_cluster(const void *a, const void *b)
{
	const struct flaky_cluster *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	if (x->shared_runs != y->shared_runs)
		return x->shared_runs > y->shared_runs ? -1 : 1;
	return x->members[0].test_id < y->members[0].test_id ? -1 :
	    x->members[0].test_id > y->members[0].test_id;
}

static int
cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int	 d;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->s != y->s) {
		if (x->s == NULL || y->s == NULL)
			return x->s == NULL ? -1 : 1;
		if ((d = strcmp(x->s, y->s)) != 0)
			return d;
	}
	return x->member < y->member ? -1 : x->member > y->member;
}

/* The most common value among items (NULL values never win), with how
 * many items and distinct members show it. */
static int
hint_top(struct item *v, size_t n, struct flaky_cluster_hint *h,
    int64_t *key)
{
	size_t	 best = 0, bestn = 0, bestm = 0;

	qsort(v, n, sizeof *v, cmp_item);
	for (size_t g = 0, k; g < n; g = k) {
		size_t	 members = 0;

		for (k = g; k < n && v[k].key == v[g].key && (v[k].s ==
		    v[g].s || (v[k].s && v[g].s && strcmp(v[k].s,
		    v[g].s) == 0)); k++)
			if (k == g || v[k].member != v[k - 1].member)
				members++;
		if (v[g].s != NULL && k - g > bestn) {
			best = g;
			bestn = k - g;
			bestm = members;
		}
	}
	h->total = (int64_t)n;
	if (bestn == 0)
		return 0;
	if ((h->value = strdup(v[best].s)) == NULL)
		return -ENOMEM;
	h->count = (int64_t)bestn;
	h->tests = (int64_t)bestm;
	if (key != NULL)
		*key = v[best].key;
	return 0;
}

/* The hours of the day that hold the most shared runs. */
static void
peak_hours(struct flaky_cluster *cl)
{
	cl->peak_hour = -1;
	for (int h = 0; h < 24; h++) {
		int64_t	 shared = 0, runs = 0;

		for (int k = 0; k < FLAKY_CLUSTER_HOURS; k++) {
			shared += cl->hours[(h + k) % 24];
			runs += cl->run_hours[(h + k) % 24];
		}
		if (shared > 0 && (cl->peak_hour < 0 ||
		    shared > cl->peak_shared)) {
			cl->peak_hour = h;
			cl->peak_shared = shared;
			cl->peak_runs = runs;
		}
	}
	cl->peak_p = cl->peak_hour < 0 ? 1.0 : flaky_fisher_greater(
	    cl->peak_shared, cl->shared_runs, cl->peak_runs, cl->runs);
	cl->hours_hint = cl->peak_hour >= 0 &&
	    cl->peak_p * 24 < FLAKY_CLUSTER_ALPHA;
}

/* Per run of the cluster's target, how many members failed in it. */
static int
shared_counts(const struct flaky_cofail *c, struct flaky_cluster *cl,
    const size_t *mem, uint16_t *cnt)
{
	memset(cnt, 0, c->nruns * sizeof *cnt);
	for (size_t m = 0; m < cl->n; m++) {
		const struct flaky_cofail_test *t = &c->tests[mem[m]];

		for (size_t k = 0; k < t->nfails; k++)
			if (cnt[t->fails[k].run] < UINT16_MAX)
				cnt[t->fails[k].run]++;
	}
	for (size_t r = 0; r < c->nruns; r++) {
		int	 hour = (int)((c->runs[r].started_ms / 3600000) % 24);

		if (hour < 0)
			hour += 24;
		if (c->runs[r].target_id == cl->target_id) {
			cl->runs++;
			cl->run_hours[hour]++;
		}
		if (cnt[r] >= 1)
			cl->any_runs++;
		if (cnt[r] >= 2) {
			cl->shared_runs++;
			cl->hours[hour]++;
		}
	}
	peak_hours(cl);
	return 0;
}

/* Message and signature hints from the members' failures in shared
 * runs; the file hint from the members' ids. */
static int
hints(const struct flaky_cofail *c, struct flaky_cluster *cl,
    const size_t *mem, const uint16_t *cnt)
{
	struct item *msg, *sig, *file;
	char	(*groups)[256];
	size_t	 nm = 0, ns = 0, total = 0;
	int	 r = -ENOMEM;

	for (size_t m = 0; m < cl->n; m++)
		total += c->tests[mem[m]].nfails;
	msg = calloc(total + 1, sizeof *msg);
	sig = calloc(total + 1, sizeof *sig);
	file = calloc(cl->n, sizeof *file);
	groups = calloc(cl->n, sizeof *groups);
	if (msg == NULL || sig == NULL || file == NULL || groups == NULL)
		goto out;
	for (size_t m = 0; m < cl->n; m++) {
		const struct flaky_cofail_test *t = &c->tests[mem[m]];

		for (size_t k = 0; k < t->nfails; k++) {
			const struct flaky_cofail_fail *f = &t->fails[k];

			if (cnt[f->run] < 2)
				continue;
			msg[nm].key = f->fingerprint;
			msg[nm].s = f->normalized;
			msg[nm++].member = m;
			sig[ns].s = f->signature;
			sig[ns++].member = m;
		}
		flaky_test_group(t->name, groups[m], sizeof groups[m]);
		file[m].s = groups[m];
		file[m].member = m;
	}
	if (hint_top(msg, nm, &cl->message, &cl->fingerprint) < 0 ||
	    hint_top(sig, ns, &cl->signature, NULL) < 0 ||
	    hint_top(file, cl->n, &cl->file, NULL) < 0)
		goto out;
	r = 0;
out:
	free(msg);
	free(sig);
	free(file);
	free(groups);
	return r;
}

/* Jaccard of the members' failing runs, pair by pair. */
static void
member_jaccard(const struct bits *b, struct flaky_cluster *cl,
    const size_t *mem)
{
	double	 sum = 0;
	size_t	 pairs = 0;

	cl->min_jaccard = 1;
	for (size_t x = 0; x < cl->n; x++)
		for (size_t y = x + 1; y < cl->n; y++) {
			const uint64_t *fi = b->fail + mem[x] * b->words;
			const uint64_t *fj = b->fail + mem[y] * b->words;
			int	 a = popcount_and(fi, fj, 0, b->words);
			int	 u = popcount_and(fi, fi, 0, b->words) +
			    popcount_and(fj, fj, 0, b->words) - a;
			double	 jac = u > 0 ? (double)a / u : 0;

			sum += jac;
			pairs++;
			if (jac < cl->min_jaccard)
				cl->min_jaccard = jac;
		}
	cl->mean_jaccard = pairs ? sum / (double)pairs : 0;
}

/* Fill one cluster from its members (test indexes). */
static int
cluster_fill(const struct flaky_cofail *c, const struct bits *b,
    struct flaky_cluster *cl, size_t *mem, size_t n, uint16_t *cnt)
{
	const struct flaky_cofail_test *t0 = &c->tests[mem[0]];

	cl->n = n;
	cl->target_id = t0->target_id;
	if ((cl->target = strdup(t0->target ? t0->target : "")) == NULL ||
	    (cl->members = calloc(n, sizeof *cl->members)) == NULL)
		return -ENOMEM;
	for (size_t m = 0; m < n; m++) {
		const struct flaky_cofail_test *t = &c->tests[mem[m]];

		cl->members[m].test_id = t->test_id;
		cl->members[m].runs = (int64_t)t->nran;
		cl->members[m].failures = (int64_t)t->nfails;
		if ((cl->members[m].name = strdup(t->name ? t->name : ""))
		    == NULL)
			return -ENOMEM;
	}
	shared_counts(c, cl, mem, cnt);
	member_jaccard(b, cl, mem);
	if (hints(c, cl, mem, cnt) < 0)
		return -ENOMEM;
	qsort(cl->members, n, sizeof *cl->members, cmp_member);
	return 0;
}

/* The connected components of the links with two members or more. */
static int
components(const struct flaky_cofail *c, const struct bits *b,
    const struct edge *e, size_t links, struct flaky_clusters *ret)
{
	struct keyed *v = NULL;
	size_t	*parent, *mem = NULL;
	uint16_t *cnt = NULL;
	int	 r = -ENOMEM;

	if ((parent = malloc(c->ntests * sizeof *parent)) == NULL ||
	    (mem = malloc(c->ntests * sizeof *mem)) == NULL ||
	    (v = malloc(c->ntests * sizeof *v)) == NULL ||
	    (cnt = malloc((c->nruns + 1) * sizeof *cnt)) == NULL ||
	    (ret->v = calloc(c->ntests / 2 + 1, sizeof *ret->v)) == NULL)
		goto out;
	for (size_t k = 0; k < c->ntests; k++)
		parent[k] = k;
	for (size_t k = 0; k < links; k++)
		parent[uf_find(parent, e[k].i)] = uf_find(parent, e[k].j);
	for (size_t k = 0; k < c->ntests; k++) {
		v[k].key = (int64_t)uf_find(parent, k);
		v[k].idx = k;
	}
	qsort(v, c->ntests, sizeof *v, cmp_keyed);
	for (size_t g = 0, h; g < c->ntests; g = h) {
		struct flaky_cluster *cl;
		size_t	 n = 0;

		for (h = g; h < c->ntests && v[h].key == v[g].key; h++)
			mem[n++] = v[h].idx;
		if (n < 2)
			continue;
		cl = &ret->v[ret->n++];
		if (cluster_fill(c, b, cl, mem, n, cnt) < 0)
			goto out;
		for (size_t k = 0; k < links; k++)
			if ((int64_t)uf_find(parent, e[k].i) == v[g].key &&
			    e[k].p > cl->p_max)
				cl->p_max = e[k].p;
	}
	qsort(ret->v, ret->n, sizeof *ret->v, cmp_cluster);
	for (size_t k = 0; k < ret->n; k++)
		ret->v[k].id = (int)k + 1;
	r = 0;
out:
	free(parent);
	free(mem);
	free(v);
	free(cnt);
	return r;
}

int
flaky_clusters_find(const struct flaky_cofail *c,
    const struct flaky_cluster_opts *opts, struct flaky_clusters *ret)
{
	struct flaky_cluster_opts o = { 0 };
	struct bits b = { 0 };
	struct edge *e = NULL;
	size_t	 ne = 0, links;
	int	 r;

	memset(ret, 0, sizeof *ret);
	if (opts != NULL)
		o = *opts;
	if (o.min_failures <= 0)
		o.min_failures = FLAKY_CLUSTER_MIN_FAILS;
	if (o.min_jaccard <= 0)
		o.min_jaccard = FLAKY_CLUSTER_MIN_JACCARD;
	if (o.alpha <= 0)
		o.alpha = FLAKY_CLUSTER_ALPHA;
	ret->runs = (int64_t)c->nruns;
	for (size_t k = 0; k < c->ntests; k++)
		if ((int64_t)c->tests[k].nfails >= o.min_failures)
			ret->tests++;
	if (c->ntests < 2)
		return 0;
	if ((r = bits_fill(c, &b)) < 0)
		goto out;
	if ((r = pairs_test(c, &b, &o, ret, &e, &ne)) < 0)
		goto out;
	ret->tested = ne;
	links = holm(e, ne, ret->pairs, o.alpha);
	ret->links = links;
	r = components(c, &b, e, links, ret);
out:
	free(e);
	free(b.ran);
	free(b.fail);
	if (r < 0)
		flaky_clusters_free(ret);
	return r;
}

int
flaky_clusters_from_store(struct flaky_store *s, const struct flaky_query *q,
    const struct flaky_cluster_opts *opts, struct flaky_clusters *ret,
    char *err, size_t errlen)
{
	struct flaky_cofail c;
	int64_t	 k = opts && opts->min_failures > 0 ? opts->min_failures :
	    FLAKY_CLUSTER_MIN_FAILS;
	int	 r;

	memset(ret, 0, sizeof *ret);
	if ((r = flaky_store_cofail(s, q, k, FLAKY_CLUSTER_RUNS_MAX, &c, err,
	    errlen)) < 0)
		return r;
	if ((r = flaky_clusters_find(&c, opts, ret)) < 0)
		snprintf(err, errlen, "out of memory finding clusters");
	flaky_cofail_free(&c);
	return r;
}

void
flaky_clusters_free(struct flaky_clusters *cs)
{
	if (cs == NULL)
		return;
	for (size_t k = 0; k < cs->n; k++) {
		struct flaky_cluster *cl = &cs->v[k];

		for (size_t m = 0; cl->members != NULL && m < cl->n; m++)
			free(cl->members[m].name);
		free(cl->members);
		free(cl->target);
		free(cl->message.value);
		free(cl->signature.value);
		free(cl->file.value);
	}
	free(cs->v);
	memset(cs, 0, sizeof *cs);
}

const struct flaky_cluster *
flaky_cluster_of(const struct flaky_clusters *cs, int64_t test_id)
{
	for (size_t k = 0; cs != NULL && k < cs->n; k++)
		for (size_t m = 0; m < cs->v[k].n; m++)
			if (cs->v[k].members[m].test_id == test_id)
				return &cs->v[k];
	return NULL;
}

/* The file or class of a test id. */
void
flaky_test_group(const char *test, char *buf, size_t len)
{
	const char *end;

	if (len == 0)
		return;
	if ((end = strstr(test, "::")) == NULL &&
	    (end = strstr(test, " \xe2\x80\xba ")) == NULL) {
		/* unittest: module.Class.test; go: pkg/Test/sub */
		const char *sl = strchr(test, '/');
		const char *dot = strrchr(test, '.');

		end = sl != NULL ? sl : dot != NULL ? dot : test +
		    strlen(test);
	}
	snprintf(buf, len, "%.*s", (int)(end - test), test);
}
