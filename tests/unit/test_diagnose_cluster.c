/* Co-failure clusters (lib/diagnose/cluster.c, lib/store/cluster.c): the
 * proof of issue 19 on generated evidence written through the store.
 * 300 runs, five planted clusters of 3 to 15 tests among 40 independent
 * flaky tests and 20 stable ones: recovered with precision and recall
 * over pairs of at least 0.95 for each seed; and a database of
 * independent tests only gives no cluster. Seeded, so it never flakes. */
#include "buildconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "diagnose/diagnose.h"
#include "store/store.h"
#include "store/store_int.h"
#include "cluster_gen.h"
#include "test_db.h"
#include "test_helper.h"

#define SEEDS	5

static char	 dir[64];
static char	 path[128];

static void
setup(void)
{
	tu_tmpdir(dir, sizeof dir, "cluster");
	snprintf(path, sizeof path, "%s/flaky.db", dir);
}

static void
teardown(void)
{
	tu_rmdir(dir);
}

/* A fresh database of the spec, and its clusters over every run. */
static void
generate_opts(const struct gen_spec *sp, const struct flaky_cluster_opts *o,
    struct gen_truth *tr, struct flaky_clusters *cs)
{
	struct flaky_store *s;
	struct flaky_query q = { 0 };
	char	 err[512];

	unlink(path);
	ck_assert_msg(gen_write(path, sp, tr, err, sizeof err) == 0, "%s",
	    err);
	ck_assert_msg(flaky_store_open(path, FLAKY_STORE_READONLY, &s, err,
	    sizeof err) == 0, "%s", err);
	q.since_ms = INT64_MIN;
	q.until_ms = INT64_MAX;
	ck_assert_msg(flaky_clusters_from_store(s, &q, o, cs, err,
	    sizeof err) == 0, "%s", err);
	flaky_store_close(s);
}

static void
generate(const struct gen_spec *sp, struct gen_truth *tr,
    struct flaky_clusters *cs)
{
	generate_opts(sp, NULL, tr, cs);
}

static const struct gen_spec planted = {
	.runs = 300, .nclusters = 5, .sizes = { 8, 3, 5, 12, 15 },
	.independent = 40, .stable = 20,
};

/* The cluster whose first member's name starts with prefix, or NULL. */
static const struct flaky_cluster *
cluster_named(const struct flaky_clusters *cs, const char *prefix)
{
	for (size_t k = 0; k < cs->n; k++)
		if (strncmp(cs->v[k].members[0].name, prefix,
		    strlen(prefix)) == 0)
			return &cs->v[k];
	return NULL;
}

START_TEST(planted_recovered)
{
	struct gen_spec sp = planted;
	struct gen_truth tr;
	struct flaky_clusters cs;
	struct gen_score sc;

	sp.seed = (uint64_t)_i + 1;
	generate(&sp, &tr, &cs);
	gen_score(&tr, &cs, &sc);
	if (getenv("CLUSTER_DEBUG") != NULL)
		for (size_t k = 0; k < cs.n; k++) {
			fprintf(stderr, "cluster %d: %zu, J %.2f-%.2f\n",
			    cs.v[k].id, cs.v[k].n, cs.v[k].min_jaccard,
			    cs.v[k].mean_jaccard);
			for (size_t m = 0; m < cs.v[k].n; m++)
				fprintf(stderr, "  %s %lld\n",
				    cs.v[k].members[m].name,
				    (long long)cs.v[k].members[m].failures);
		}
	ck_assert_msg(sc.precision >= 0.95 && sc.recall >= 0.95,
	    "seed %d: precision %.3f recall %.3f (%zu clusters, %llu of "
	    "%llu pairs found, %llu true)", _i + 1, sc.precision, sc.recall,
	    cs.n, (unsigned long long)sc.both,
	    (unsigned long long)sc.found_pairs,
	    (unsigned long long)sc.true_pairs);
	ck_assert_uint_eq(cs.n, 5);
	ck_assert_uint_eq(sc.mixed, 0);
	/* biggest first; each eligible pair counted once */
	ck_assert_uint_eq(cs.v[0].n, 15);
	ck_assert_uint_eq(cs.v[0].id, 1);
	ck_assert_uint_eq(cs.pairs, cs.tests * (cs.tests - 1) / 2);
	ck_assert_int_eq(cs.runs, 300);
	gen_truth_free(&tr);
	flaky_clusters_free(&cs);
}
END_TEST

/* What a cluster shares: the message, the signature, the file, and for
 * cluster 0 (a cause that fires from 02:00 to 06:00 UTC only) the hours. */
START_TEST(planted_hints)
{
	struct gen_spec sp = planted;
	struct gen_truth tr;
	struct flaky_clusters cs;
	const struct flaky_cluster *c0, *c4;

	sp.seed = 1;
	generate(&sp, &tr, &cs);
	ck_assert_ptr_nonnull(c0 = cluster_named(&cs, "c0/"));
	ck_assert_int_ge(c0->peak_hour, 1);
	ck_assert_int_le(c0->peak_hour, 3);
	ck_assert_int_ge((c0->hours[2] + c0->hours[3] + c0->hours[4] +
	    c0->hours[5]) * 10, c0->shared_runs * 9);
	ck_assert_int_ge(c0->peak_shared * 10, c0->shared_runs * 9);
	/* the 4 hours hold a sixth of the runs, 90% of the shared ones */
	ck_assert_int_le(c0->peak_runs * 5, c0->runs);
	ck_assert_int_eq(c0->run_hours[12], 15);
	ck_assert_int_eq(c0->hours_hint, 1);
	ck_assert_ptr_nonnull(c0->message.value);
	ck_assert_msg(strstr(c0->message.value, "alpha") != NULL, "%s",
	    c0->message.value);
	ck_assert_int_eq(c0->message.tests, 8);
	ck_assert_int_ge(c0->message.count * 10, c0->message.total * 9);
	ck_assert_str_eq(c0->signature.value, "INFRA");
	ck_assert_str_eq(c0->target, "gen");
	ck_assert_ptr_nonnull(c4 = cluster_named(&cs, "c4/"));
	ck_assert_msg(strstr(c4->message.value, "echo") != NULL, "%s",
	    c4->message.value);
	ck_assert_msg(strncmp(c4->file.value, "c4/test_echo_", 13) == 0,
	    "%s", c4->file.value);
	ck_assert_int_eq(c4->file.total, 15);
	ck_assert_int_eq(c4->file.count, 5);
	ck_assert(c4->min_jaccard >= FLAKY_CLUSTER_MIN_JACCARD * 0.5);
	/* its cause fires at any hour */
	ck_assert_int_eq(c4->hours_hint, 0);
	ck_assert(c4->p_max < FLAKY_CLUSTER_ALPHA / (double)cs.pairs);
	ck_assert_ptr_eq(flaky_cluster_of(&cs, c4->members[3].test_id), c4);
	ck_assert_ptr_null(flaky_cluster_of(&cs, -1));
	gen_truth_free(&tr);
	flaky_clusters_free(&cs);
}
END_TEST

/* 60 independent flaky tests at 2% to 30%: no cluster, whatever the
 * seed. */
START_TEST(independent_none)
{
	struct gen_spec sp = { .runs = 300, .independent = 60, .stable = 20 };
	struct gen_truth tr;
	struct flaky_clusters cs;

	sp.seed = (uint64_t)_i + 1;
	generate(&sp, &tr, &cs);
	ck_assert_msg(cs.n == 0, "seed %d: %zu clusters, the first of %zu "
	    "(%s ...)", _i + 1, cs.n, cs.n ? cs.v[0].n : 0,
	    cs.n ? cs.v[0].members[0].name : "");
	ck_assert_uint_eq(cs.tests, 60);
	ck_assert_uint_eq(cs.pairs, 60 * 59 / 2);
	gen_truth_free(&tr);
	flaky_clusters_free(&cs);
}
END_TEST

/* The same with no bound on the overlap: the correction alone keeps
 * chance out (without it, 7 to 11 of the 1,770 pairs link at alpha 0.01
 * in these seeds). */
START_TEST(independent_corrected)
{
	struct gen_spec sp = { .runs = 300, .independent = 60, .stable = 20 };
	struct flaky_cluster_opts o = { .min_jaccard = 1e-9 };
	struct gen_truth tr;
	struct flaky_clusters cs;

	sp.seed = (uint64_t)_i + 1;
	generate_opts(&sp, &o, &tr, &cs);
	ck_assert_msg(cs.n == 0, "seed %d: %zu clusters (%llu links of "
	    "%llu tested)", _i + 1, cs.n, (unsigned long long)cs.links,
	    (unsigned long long)cs.tested);
	ck_assert_uint_gt(cs.tested, 1000);
	gen_truth_free(&tr);
	flaky_clusters_free(&cs);
}
END_TEST

/* A window without the runs, and another target's name: nothing. */
START_TEST(window_and_target)
{
	struct gen_spec sp = planted;
	struct gen_truth tr;
	struct flaky_clusters cs;
	struct flaky_store *s;
	struct flaky_query q = { 0 };
	char	 err[512];

	sp.seed = 2;
	sp.runs = 120;
	generate(&sp, &tr, &cs);
	flaky_clusters_free(&cs);
	ck_assert_msg(flaky_store_open(path, FLAKY_STORE_READONLY, &s, err,
	    sizeof err) == 0, "%s", err);
	q.since_ms = INT64_MIN;
	q.until_ms = INT64_MAX;
	q.target = "other";
	ck_assert_int_eq(flaky_clusters_from_store(s, &q, NULL, &cs, err,
	    sizeof err), 0);
	ck_assert_uint_eq(cs.n, 0);
	ck_assert_int_eq(cs.runs, 0);
	q.target = "gen";
	q.until_ms = 1000;
	ck_assert_int_eq(flaky_clusters_from_store(s, &q, NULL, &cs, err,
	    sizeof err), 0);
	ck_assert_uint_eq(cs.n, 0);
	q.until_ms = INT64_MAX;
	ck_assert_int_eq(flaky_clusters_from_store(s, &q, NULL, &cs, err,
	    sizeof err), 0);
	ck_assert_uint_ge(cs.n, 3);
	ck_assert_int_eq(cs.runs, 120);
	flaky_clusters_free(&cs);
	flaky_store_close(s);
	gen_truth_free(&tr);
}
END_TEST

/* The failures are read through the partial index, not the results. */
START_TEST(fails_plan)
{
	struct gen_spec sp = planted;
	struct gen_truth tr;
	struct flaky_clusters cs;
	sqlite3	*db;
	char	 sql[1024], *plan;

	sp.seed = 3;
	sp.runs = 20;
	generate(&sp, &tr, &cs);
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE,
	    NULL), SQLITE_OK);
	snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN %s",
	    store_sql_cofail_fails);
	for (int pass = 0; pass < 2; pass++) {
		plan = tu_rows(db, sql);
		ck_assert_msg(strstr(plan, "USING INDEX results_failed") !=
		    NULL || strstr(plan, "USING COVERING INDEX "
		    "results_failed") != NULL, "%s", plan);
		ck_assert_msg(strstr(plan, "TEMP B-TREE") == NULL, "%s", plan);
		free(plan);
		ck_assert_int_eq(sqlite3_exec(db, "ANALYZE", NULL, NULL, NULL),
		    SQLITE_OK);
	}
	sqlite3_close(db);
	gen_truth_free(&tr);
	flaky_clusters_free(&cs);
}
END_TEST

START_TEST(test_group)
{
	char	 b[64];

	flaky_test_group("tests/test_net.py::TestApi::test_get[1]", b,
	    sizeof b);
	ck_assert_str_eq(b, "tests/test_net.py");
	flaky_test_group("src/a.test.js \xe2\x80\xba api \xe2\x80\xba gets",
	    b, sizeof b);
	ck_assert_str_eq(b, "src/a.test.js");
	flaky_test_group("pkg.mod.TestCase.test_x", b, sizeof b);
	ck_assert_str_eq(b, "pkg.mod.TestCase");
	flaky_test_group("github.com/x/y/TestZ", b, sizeof b);
	ck_assert_str_eq(b, "github.com");
	flaky_test_group("plain", b, sizeof b);
	ck_assert_str_eq(b, "plain");
	flaky_test_group("tests/test_net.py::t", b, 5);
	ck_assert_str_eq(b, "test");
}
END_TEST

/* Hand-made evidence: two tests that fail in the same 10 of 100 runs,
 * a third that fails in 10 others. */
START_TEST(pure_find)
{
	struct flaky_cofail_run runs[100];
	struct flaky_cofail_test t[3];
	struct flaky_cofail_fail f[3][10];
	uint32_t ran[100];
	struct flaky_cofail c = { runs, 100, t, 3 };
	struct flaky_clusters cs;
	char	*names[3] = { "a.py::x", "a.py::y", "b.py::z" };

	memset(t, 0, sizeof t);
	memset(f, 0, sizeof f);
	for (uint32_t r = 0; r < 100; r++) {
		runs[r].id = r + 1;
		runs[r].target_id = 1;
		runs[r].started_ms = (int64_t)r * 3600000;
		ran[r] = r;
	}
	for (int k = 0; k < 3; k++) {
		t[k].test_id = k + 1;
		t[k].target_id = 1;
		t[k].target = "demo";
		t[k].name = names[k];
		t[k].ran = ran;
		t[k].nran = 100;
		t[k].fails = f[k];
		t[k].nfails = 10;
		for (int j = 0; j < 10; j++)
			f[k][j].run = (uint32_t)(k < 2 ? j * 10 : j * 10 + 5);
	}
	ck_assert_int_eq(flaky_clusters_find(&c, NULL, &cs), 0);
	ck_assert_uint_eq(cs.n, 1);
	ck_assert_uint_eq(cs.v[0].n, 2);
	ck_assert_int_eq(cs.v[0].shared_runs, 10);
	ck_assert_str_eq(cs.v[0].file.value, "a.py");
	ck_assert_ptr_null(cs.v[0].message.value);
	ck_assert_uint_eq(cs.pairs, 3);
	ck_assert_uint_eq(cs.links, 1);
	ck_assert(cs.v[0].mean_jaccard == 1.0);
	flaky_clusters_free(&cs);
	/* the same overlap in another target is no link */
	t[1].target_id = 2;
	ck_assert_int_eq(flaky_clusters_find(&c, NULL, &cs), 0);
	ck_assert_uint_eq(cs.n, 0);
	ck_assert_uint_eq(cs.pairs, 1);
	flaky_clusters_free(&cs);
}
END_TEST

static Suite *
cluster_suite(void)
{
	Suite	*s = suite_create("diagnose_cluster");
	TCase	*tc = tcase_create("cluster");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, planted_recovered, 0, SEEDS);
	tcase_add_test(tc, planted_hints);
	tcase_add_loop_test(tc, independent_none, 0, SEEDS);
	tcase_add_loop_test(tc, independent_corrected, 0, SEEDS);
	tcase_add_test(tc, window_and_target);
	tcase_add_test(tc, fails_plan);
	tcase_add_test(tc, test_group);
	tcase_add_test(tc, pure_find);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(cluster_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
