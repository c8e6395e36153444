/* store_ci_tests (lib/store/ci_tests.c): the tests a target's branch knows,
 * from its newest runs on that branch and the runs with no branch, for
 * flakyctl ci --new-tests; and the plan that reads them without a scan. */
#include "buildconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "test_db.h"
#include "test_helper.h"
#include "test_store_fixture.h"

/* A run of target tid with the tests named by the letters of spec, on
 * branch (NULL: no run_ci row). */
static int64_t
run_on(struct flaky_store *s, int64_t tid, int64_t at, const char *spec,
    const char *branch)
{
	struct flaky_results r;
	struct flaky_ci_meta m = { 0 };
	char	 name[8], err[512];
	int64_t	 id;

	flaky_results_init(&r);
	strcpy(r.runner, "pytest");
	for (const char *p = spec; *p; p++) {
		snprintf(name, sizeof name, "t_%c", *p);
		add(&r, name, FLAKY_PASS, 1000, NULL);
	}
	id = store_run(s, tid, at, &r);
	if (branch != NULL) {
		m.branch = branch;
		ck_assert_msg(flaky_store_run_ci(s, id, &m, 0, err,
		    sizeof err) == 0, "%s", err);
	}
	flaky_results_free(&r);
	return id;
}

/* The names as one string, "t_a t_b". */
static void
names_eq(const struct flaky_branch_tests *b, const char *want)
{
	char	 got[256] = "";

	for (size_t i = 0; i < b->n; i++)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s",
		    i ? " " : "", b->names[i]);
	ck_assert_str_eq(got, want);
}

START_TEST(branch_tests)
{
	struct flaky_store *s = open_store();
	struct flaky_branch_tests b;
	int64_t	 t = target(s, "shop"), o = target(s, "other");
	char	 err[512];

	run_on(s, t, T0, "ab", "main");
	run_on(s, t, T0 + 1000, "c", NULL);	/* flakyd's, analyze's */
	run_on(s, t, T0 + 2000, "abn", "feature");	/* n: new there */
	run_on(s, o, T0 + 3000, "xy", "main");	/* another target */
	ck_assert_int_eq(flaky_store_branch_tests(s, "shop", "main", 50, &b,
	    err, sizeof err), 0);
	ck_assert_int_eq(b.runs, 2);
	names_eq(&b, "t_a t_b t_c");
	ck_assert(flaky_branch_tests_has(&b, "t_b"));
	ck_assert(!flaky_branch_tests_has(&b, "t_n"));
	flaky_branch_tests_free(&b);
	/* the feature branch knows its own runs too */
	ck_assert_int_eq(flaky_store_branch_tests(s, "shop", "feature", 50, &b,
	    err, sizeof err), 0);
	ck_assert_int_eq(b.runs, 2);
	names_eq(&b, "t_a t_b t_c t_n");
	flaky_branch_tests_free(&b);
	/* the newest runs only: here the one without a branch */
	ck_assert_int_eq(flaky_store_branch_tests(s, "shop", "main", 1, &b,
	    err, sizeof err), 0);
	names_eq(&b, "t_c");
	flaky_branch_tests_free(&b);
	/* a target with no run is no error: nothing known */
	ck_assert_int_eq(flaky_store_branch_tests(s, "nosuch", "main", 50, &b,
	    err, sizeof err), 0);
	ck_assert_int_eq(b.runs, 0);
	ck_assert_uint_eq(b.n, 0);
	ck_assert(!flaky_branch_tests_has(&b, "t_a"));
	flaky_branch_tests_free(&b);
	flaky_store_close(s);
}
END_TEST

/* The runs come newest first from runs_by_target, each run's tests from
 * its range of results: no scan of either table, no sort. */
START_TEST(plan)
{
	struct flaky_store *s = open_store();
	sqlite3	*db;
	char	*p;

	target(s, "shop");
	flaky_store_close(s);
	db = raw_open();
	ck_assert_int_eq(sqlite3_exec(db, "ANALYZE", NULL, NULL, NULL),
	    SQLITE_OK);
	p = tu_rows(db, "EXPLAIN QUERY PLAN SELECT ru.id FROM runs ru JOIN "
	    "targets tg ON tg.id = ru.target_id LEFT JOIN run_ci c ON "
	    "c.run_id = ru.id WHERE tg.name = 'shop' AND ru.tests > 0 AND "
	    "(c.branch IS NULL OR c.branch = 'main') ORDER BY ru.started_ms "
	    "DESC, ru.id DESC LIMIT 50");
	ck_assert_msg(strstr(p, "runs_by_target") != NULL, "%s", p);
	ck_assert_msg(strstr(p, "SCAN ru") == NULL, "%s", p);
	free(p);
	p = tu_rows(db, "EXPLAIN QUERY PLAN SELECT t.name FROM results r JOIN "
	    "tests t ON t.id = r.test_id WHERE r.run_id = 1");
	ck_assert_msg(strstr(p, "SCAN") == NULL, "%s", p);
	free(p);
	sqlite3_close(db);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("store_ci_tests");
	TCase	*tc = tcase_create("core");
	SRunner	*sr;
	int	 failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, branch_tests);
	tcase_add_test(tc, plan);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
