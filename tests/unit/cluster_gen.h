/* Generated co-failure evidence with known clusters (cluster_gen.c), for
 * the unit test of clusters and bench/cluster_bench.c: runs written into
 * a database through the store, seeded, so every figure repeats. */
#ifndef FLAKY_TEST_CLUSTER_GEN_H
#define FLAKY_TEST_CLUSTER_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "diagnose/diagnose.h"
#include "store/store.h"

#define GEN_CLUSTERS_MAX	16

/* What to plant. Each cluster has a hidden cause that fires in a run
 * with its own probability (cluster 0's only in runs started between
 * 02:00 and 06:00 UTC); when it fires each member fails with a
 * probability of its own from 0.7 to 0.95 (with the cluster's message),
 * and every member also fails alone at 0 to 3% (a message of its own).
 * The independent tests fail at rates from 2% to 30%; the stable ones
 * never. */
struct gen_spec {
	uint64_t	 seed;
	int		 runs;
	int		 nclusters;
	int		 sizes[GEN_CLUSTERS_MAX];
	int		 independent;
	int		 stable;
};

/* Test i's planted cluster (0-based) or -1, by the order tests are
 * named: "c<k>/test_<j>.py::test_m" for members, "ind/test_<j>.py::t"
 * and "ok/..." for the others. */
struct gen_truth {
	size_t		 ntests;
	int		*cluster;	/* ntests */
	char		**names;
};

/* Write the runs into a new database at path (target "gen"); 0 or a
 * negative errno with err filled. */
int	 gen_write(const char *path, const struct gen_spec *,
	    struct gen_truth *ret, char *err, size_t errlen);
void	 gen_truth_free(struct gen_truth *);

/* Precision and recall over pairs: a pair of tests is together in the
 * truth when planted in one cluster, found together when one cluster
 * holds both. precision = pairs found that are true / pairs found (1 when
 * none found), recall = true pairs found / true pairs. */
struct gen_score {
	uint64_t	 true_pairs, found_pairs, both;
	double		 precision, recall;
	size_t		 mixed;		/* clusters with members of two */
};
void	 gen_score(const struct gen_truth *, const struct flaky_clusters *,
	    struct gen_score *);

#endif
