/* Co-failure clusters on generated evidence (docs/triage.md): precision
 * and recall over pairs against the planted clusters, seed by seed, and
 * the time flaky_clusters_from_store takes as the tests grow.
 *
 * cluster_bench [--seeds N] [--runs R] [--scale K] [--jaccard J] [--dir D]
 *	N seeds (default 20) of the unit test's evidence: R runs (300),
 *	five clusters of 3 to 15 tests and 40 independent flaky tests, all
 *	of it K times over (1: 103 tests with 20 stable ones), then the
 *	same runs of independent tests only. Prints one line per seed and
 *	the worst precision and recall, and exits 1 when either is under
 *	0.95 or a database of independent tests had a cluster.
 *
 * cluster_bench --write DB [--seed S] [--independent 1]
 *	Only write seed S's database of planted clusters (default 1) to DB,
 *	for a look with flakyctl clusters, triage and ticket --cluster; or
 *	with --independent 1 the database of independent tests only that
 *	the seed compares with.
 *
 * Build: meson setup build-bench -Dbuildtype=release && ninja -C build-bench
 */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "diagnose/diagnose.h"
#include "store/store.h"
#include "cluster_gen.h"	/* tests/unit: the unit test's generator */

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Generate, find, score one database; the seconds finding took. */
static int
one(const char *path, const struct gen_spec *sp, double jaccard,
    struct gen_score *sc, size_t *nclusters, size_t *ntests, double *secs)
{
	struct flaky_cluster_opts o = { 0 };
	struct flaky_store *s;
	struct flaky_query q = { 0 };
	struct flaky_clusters cs;
	struct gen_truth tr;
	char	 err[512];
	double	 t0;

	unlink(path);
	if (gen_write(path, sp, &tr, err, sizeof err) < 0 ||
	    flaky_store_open(path, FLAKY_STORE_READONLY, &s, err,
	    sizeof err) < 0) {
		fprintf(stderr, "cluster_bench: %s\n", err);
		return -1;
	}
	q.since_ms = INT64_MIN;
	q.until_ms = INT64_MAX;
	o.min_jaccard = jaccard;
	t0 = now_s();
	if (flaky_clusters_from_store(s, &q, &o, &cs, err, sizeof err) < 0) {
		fprintf(stderr, "cluster_bench: %s\n", err);
		return -1;
	}
	*secs = now_s() - t0;
	gen_score(&tr, &cs, sc);
	*nclusters = cs.n;
	*ntests = tr.ntests;
	flaky_clusters_free(&cs);
	flaky_store_close(s);
	gen_truth_free(&tr);
	return 0;
}

int
main(int argc, char **argv)
{
	struct gen_spec sp = { .runs = 300, .nclusters = 5,
	    .sizes = { 8, 3, 5, 12, 15 }, .independent = 40, .stable = 20 };
	struct gen_score sc;
	const char *dir = "/tmp", *write = NULL;
	double	 jaccard = 0, pmin = 1, rmin = 1, secs;
	int	 seeds = 20, scale = 1, bad = 0, indep = 0;
	size_t	 ncl, nt;
	char	 path[1024];

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--seeds") == 0)
			seeds = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--runs") == 0)
			sp.runs = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--scale") == 0)
			scale = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--jaccard") == 0)
			jaccard = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--dir") == 0)
			dir = argv[i + 1];
		else if (strcmp(argv[i], "--write") == 0)
			write = argv[i + 1];
		else if (strcmp(argv[i], "--independent") == 0)
			indep = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--seed") == 0)
			sp.seed = (uint64_t)atoi(argv[i + 1]);
		else {
			fprintf(stderr, "cluster_bench: unknown %s\n",
			    argv[i]);
			return 2;
		}
	}
	if (scale > 3)
		scale = 3;	/* 16 clusters at most */
	sp.nclusters = 5 * scale;
	for (int c = 5; c < sp.nclusters; c++)
		sp.sizes[c] = sp.sizes[c % 5];
	sp.independent *= scale;
	sp.stable *= scale;
	if (write != NULL) {
		struct gen_truth tr;
		char	 err[512];

		if (sp.seed == 0)
			sp.seed = 1;
		if (indep) {
			sp.independent += 43 * scale / 2;
			sp.nclusters = 0;
		}
		if (gen_write(write, &sp, &tr, err, sizeof err) < 0) {
			fprintf(stderr, "cluster_bench: %s\n", err);
			return 2;
		}
		gen_truth_free(&tr);
		return 0;
	}
	snprintf(path, sizeof path, "%s/cluster_bench.db", dir);
	printf("seed tests runs clusters precision recall seconds | "
	    "independent: clusters seconds\n");
	for (int i = 1; i <= seeds; i++) {
		struct gen_spec ind = sp;
		size_t	 ncl2;
		double	 secs2;
		struct gen_score sc2;

		sp.seed = (uint64_t)i;
		if (one(path, &sp, jaccard, &sc, &ncl, &nt, &secs) < 0)
			return 2;
		ind.seed = (uint64_t)i;
		ind.nclusters = 0;
		ind.independent = sp.independent + 43 * scale / 2;
		if (one(path, &ind, jaccard, &sc2, &ncl2, &nt, &secs2) < 0)
			return 2;
		printf("%4d %5zu %4d %8zu %9.3f %6.3f %7.3f | %zu %.3f\n", i,
		    (size_t)sp.independent + sp.stable + 43 * scale, sp.runs,
		    ncl, sc.precision, sc.recall, secs, ncl2, secs2);
		pmin = sc.precision < pmin ? sc.precision : pmin;
		rmin = sc.recall < rmin ? sc.recall : rmin;
		bad += ncl2 != 0;
	}
	printf("worst precision %.3f, worst recall %.3f; %d of %d databases "
	    "of independent tests had a cluster\n", pmin, rmin, bad, seeds);
	unlink(path);
	return pmin >= 0.95 && rmin >= 0.95 && bad == 0 ? 0 : 1;
}
