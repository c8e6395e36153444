/* Generated co-failure evidence with known clusters (cluster_gen.h). */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify/classify.h"
#include "parse/parse.h"
#include "store/store.h"
#include "cluster_gen.h"

/* 2026-11-01T12:00:00Z; a run every 20 minutes from there. */
#define GEN_T0		1793534400000LL
#define GEN_STEP_MS	(20 * 60 * 1000LL)

static const char *const causes[GEN_CLUSTERS_MAX] = {
	"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
	"hotel", "india", "juliett", "kilo", "lima", "mike", "november",
	"oscar", "papa",
};

/* xorshift64*: a uniform double in [0, 1). */
static double
gen_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return (double)((*s * 2685821657736338717ULL) >> 11) /
	    9007199254740992.0;
}

/* One planted test: its cluster, and its own probabilities. */
struct gen_test {
	int	 cluster;	/* -1: independent or stable */
	double	 p_cause;	/* fails when its cause fires */
	double	 p_alone;	/* fails by itself */
};

void
gen_truth_free(struct gen_truth *t)
{
	for (size_t i = 0; t->names != NULL && i < t->ntests; i++)
		free(t->names[i]);
	free(t->names);
	free(t->cluster);
	memset(t, 0, sizeof *t);
}

/* The tests, their names and what makes each fail. */
static int
gen_tests(const struct gen_spec *sp, uint64_t *seed, struct gen_test **ret,
    struct gen_truth *tr)
{
	struct gen_test *v;
	size_t	 n = (size_t)sp->independent + (size_t)sp->stable, k = 0;
	char	 name[128];

	for (int c = 0; c < sp->nclusters; c++)
		n += (size_t)sp->sizes[c];
	v = calloc(n, sizeof *v);
	tr->ntests = n;
	tr->cluster = calloc(n, sizeof *tr->cluster);
	tr->names = calloc(n, sizeof *tr->names);
	if (v == NULL || tr->cluster == NULL || tr->names == NULL) {
		free(v);
		return -ENOMEM;
	}
	for (int c = 0; c < sp->nclusters; c++)
		for (int j = 0; j < sp->sizes[c]; j++, k++) {
			v[k].cluster = c;
			v[k].p_cause = 0.7 + 0.25 * gen_rand(seed);
			v[k].p_alone = 0.03 * gen_rand(seed);
			snprintf(name, sizeof name, "c%d/test_%s_%d.py::test_%d",
			    c, causes[c], j % 3, j);
			tr->names[k] = strdup(name);
		}
	for (int j = 0; j < sp->independent; j++, k++) {
		v[k].cluster = -1;
		v[k].p_alone = 0.02 + 0.28 * gen_rand(seed);
		snprintf(name, sizeof name, "ind/test_%d.py::test_rate", j);
		tr->names[k] = strdup(name);
	}
	for (int j = 0; j < sp->stable; j++, k++) {
		v[k].cluster = -1;
		snprintf(name, sizeof name, "ok/test_%d.py::test_fine", j);
		tr->names[k] = strdup(name);
	}
	for (size_t i = 0; i < n; i++) {
		tr->cluster[i] = v[i].cluster;
		if (tr->names[i] == NULL) {
			free(v);
			return -ENOMEM;
		}
	}
	*ret = v;
	return 0;
}

/* Which causes fire in run r. */
static void
gen_fire(const struct gen_spec *sp, uint64_t *seed, int r, int *fire)
{
	int64_t	 hour = ((GEN_T0 + r * GEN_STEP_MS) / 3600000) % 24;

	for (int c = 0; c < sp->nclusters; c++) {
		/* cluster 0: a nightly job from 02:00 to 06:00 takes the
		 * service down now and then */
		double	 p = c == 0 ? (hour >= 2 && hour < 6 ? 0.6 : 0) :
		    0.05 + 0.02 * c;

		fire[c] = gen_rand(seed) < p;
	}
}

/* One run's results. */
static int
gen_run(const struct gen_spec *sp, const struct gen_test *v,
    const struct gen_truth *tr, uint64_t *seed, int r,
    struct flaky_results *res)
{
	int	 fire[GEN_CLUSTERS_MAX];
	char	 msg[256];

	gen_fire(sp, seed, r, fire);
	for (size_t i = 0; i < tr->ntests; i++) {
		struct flaky_result *x;
		int	 by_cause = v[i].cluster >= 0 && fire[v[i].cluster] &&
		    gen_rand(seed) < v[i].p_cause;
		int	 alone = gen_rand(seed) < v[i].p_alone;

		if (res->n == res->cap) {
			size_t	 c = res->cap ? res->cap * 2 : 64;
			void	*p = realloc(res->v, c * sizeof *res->v);

			if (p == NULL)
				return -ENOMEM;
			res->v = p;
			res->cap = c;
		}
		x = &res->v[res->n];
		memset(x, 0, sizeof *x);
		x->position = (unsigned)res->n;
		x->duration_us = 1000;
		x->outcome = by_cause || alone ? FLAKY_FAIL : FLAKY_PASS;
		res->n++;
		if ((x->test = strdup(tr->names[i])) == NULL)
			return -ENOMEM;
		if (by_cause)
			snprintf(msg, sizeof msg, "ConnectionError: "
			    "connection refused by service %s",
			    causes[v[i].cluster]);
		else if (alone)
			snprintf(msg, sizeof msg, "AssertionError: wrong "
			    "answer in %s", tr->names[i]);
		else
			continue;
		if ((x->message = strdup(msg)) == NULL)
			return -ENOMEM;
	}
	return flaky_classify_results(NULL, res, NULL);
}

/* Store one run, finished. */
static int
gen_store(struct flaky_store *s, int64_t tid, int r,
    const struct flaky_results *res, char *err, size_t errlen)
{
	struct flaky_run_record rec = { 0 };

	rec.target_id = tid;
	rec.trigger = "analyze";
	rec.started_ms = GEN_T0 + r * GEN_STEP_MS;
	rec.ended_ms = rec.started_ms + 1000;
	rec.duration_us = 1000000;
	rec.loadavg = -1;
	rec.status = FLAKY_RUN_DONE;
	rec.exit_code = 1;
	return flaky_store_run_finish(s, &rec, res, err, errlen);
}

int
gen_write(const char *path, const struct gen_spec *sp, struct gen_truth *tr,
    char *err, size_t errlen)
{
	struct flaky_store *s = NULL;
	struct gen_test *v = NULL;
	struct flaky_results res;
	uint64_t seed = sp->seed * 0x9E3779B97F4A7C15ULL + 1;
	int64_t	 tid;
	int	 r;

	memset(tr, 0, sizeof *tr);
	flaky_results_init(&res);
	if ((r = gen_tests(sp, &seed, &v, tr)) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if ((r = flaky_store_open(path, FLAKY_STORE_BULK, &s, err,
	    errlen)) < 0 || (r = flaky_store_target(s, "gen", "pytest",
	    "/src", &tid, err, errlen)) < 0 ||
	    (r = flaky_store_begin(s, err, errlen)) < 0)
		goto out;
	for (int i = 0; i < sp->runs && r == 0; i++) {
		flaky_results_free(&res);
		flaky_results_init(&res);
		if ((r = gen_run(sp, v, tr, &seed, i, &res)) < 0)
			snprintf(err, errlen, "generating run %d", i);
		else
			r = gen_store(s, tid, i, &res, err, errlen);
	}
	if (r == 0)
		r = flaky_store_commit(s, err, errlen);
	else
		flaky_store_rollback(s);
out:
	flaky_results_free(&res);
	flaky_store_close(s);
	free(v);
	if (r < 0)
		gen_truth_free(tr);
	return r;
}

/* The planted cluster of a test name, or -2 when the name is unknown. */
static int
truth_of(const struct gen_truth *tr, const char *name)
{
	for (size_t i = 0; i < tr->ntests; i++)
		if (strcmp(tr->names[i], name) == 0)
			return tr->cluster[i];
	return -2;
}

void
gen_score(const struct gen_truth *tr, const struct flaky_clusters *cs,
    struct gen_score *sc)
{
	memset(sc, 0, sizeof *sc);
	for (size_t i = 0; i < tr->ntests; i++)
		for (size_t j = i + 1; j < tr->ntests; j++)
			if (tr->cluster[i] >= 0 &&
			    tr->cluster[i] == tr->cluster[j])
				sc->true_pairs++;
	for (size_t k = 0; k < cs->n; k++) {
		const struct flaky_cluster *cl = &cs->v[k];
		int	 first = truth_of(tr, cl->members[0].name), mixed = 0;

		for (size_t a = 0; a < cl->n; a++) {
			int	 ta = truth_of(tr, cl->members[a].name);

			mixed |= ta != first;
			for (size_t b = a + 1; b < cl->n; b++) {
				sc->found_pairs++;
				if (ta >= 0 && ta == truth_of(tr,
				    cl->members[b].name))
					sc->both++;
			}
		}
		sc->mixed += mixed != 0;
	}
	sc->precision = sc->found_pairs ? (double)sc->both /
	    (double)sc->found_pairs : 1.0;
	sc->recall = sc->true_pairs ? (double)sc->both /
	    (double)sc->true_pairs : 1.0;
}
