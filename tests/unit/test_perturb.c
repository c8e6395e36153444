/* Issue 18: stress threads, the runners' shuffling, runs.perturbation and
 * the seed in the store, the rates per perturbation and the stress
 * evidence (lib/run/stress.c, command.c, store/perturb.c,
 * diagnose/stress.c). */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "config/config.h"
#include "diagnose/diagnose.h"
#include "run/run.h"
#include "store/store.h"
#include "test_db.h"
#include "test_helper.h"

#define T0	1793534400000LL

static char	 dir[64];
static char	 path[128];

static void
setup(void)
{
	tu_tmpdir(dir, sizeof dir, "perturb");
	snprintf(path, sizeof path, "%s/flaky.db", dir);
}

static void
teardown(void)
{
	tu_rmdir(dir);
}

/* Threads of this process, from /proc/self/status. */
static int
threads(void)
{
	FILE	*f = fopen("/proc/self/status", "r");
	char	 line[256];
	int	 n = -1;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

START_TEST(stress_parse)
{
	struct flaky_stress_spec s;
	char	 err[256];

	ck_assert_int_eq(flaky_stress_parse("cpu:3", &s, err, sizeof err), 0);
	ck_assert_int_eq(s.kinds, FLAKY_STRESS_CPU);
	ck_assert_int_eq(s.level, 3);
	ck_assert_str_eq(s.name, "cpu:3");
	ck_assert_int_eq(flaky_stress_parse("all:1", &s, err, sizeof err), 0);
	ck_assert_int_eq(s.kinds, FLAKY_STRESS_CPU | FLAKY_STRESS_MEMORY |
	    FLAKY_STRESS_IO);
	ck_assert_int_eq(flaky_stress_parse("memory", &s, err, sizeof err), 0);
	ck_assert_int_ge(s.level, 1);
	ck_assert_int_eq(strncmp(s.name, "memory:", 7), 0);
	/* refused, with what was expected */
	ck_assert_int_eq(flaky_stress_parse("gpu", &s, err, sizeof err),
	    -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "expected cpu, memory, io or all"));
	ck_assert_int_eq(flaky_stress_parse("cpuu:1", &s, err, sizeof err),
	    -EINVAL);
	ck_assert_int_eq(flaky_stress_parse("cpu:0", &s, err, sizeof err),
	    -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "from 1 to 64"));
	ck_assert_int_eq(flaky_stress_parse("io:65", &s, err, sizeof err),
	    -EINVAL);
	ck_assert_int_eq(flaky_stress_parse("io:", &s, err, sizeof err),
	    -EINVAL);
	ck_assert_int_eq(flaky_stress_parse("", &s, err, sizeof err),
	    -EINVAL);
}
END_TEST

/* The workers are threads of ours, started and joined with the run. */
START_TEST(stress_threads)
{
	struct flaky_stress_spec spec;
	struct flaky_stress *s;
	char	 err[256];
	int	 before = threads();

	ck_assert_int_eq(flaky_stress_parse("all:2", &spec, err, sizeof err),
	    0);
	ck_assert_msg(flaky_stress_start(&spec, dir, &s, err, sizeof err) ==
	    0, "%s", err);
	ck_assert_int_eq(threads(), before + 6);
	flaky_stress_stop(s);
	ck_assert_int_eq(threads(), before);
	flaky_stress_stop(NULL);
}
END_TEST

/* argv and PYTEST_ADDOPTS of a shuffled run, joined by spaces. */
static int
shuffle(const char *words, const char *runner, char *argv_out, size_t alen,
    char *addopts, size_t olen, char *err, size_t errlen)
{
	struct flaky_command c = { 0 };
	char	*copy = strdup(words), *w, *save = NULL, *av[16], **a, **e;
	char	*envp[] = { (char *)"PYTEST_ADDOPTS=-v", (char *)"X=1", NULL };
	size_t	 n = 0;
	int	 r;

	for (w = strtok_r(copy, " ", &save); w && n < 15;
	    w = strtok_r(NULL, " ", &save))
		av[n++] = w;
	av[n] = NULL;
	c.argv = av;
	c.envp = envp;
	c.runner = (char *)runner;
	argv_out[0] = addopts[0] = '\0';
	if ((r = flaky_command_shuffle(&c, "1234", &a, &e, err, errlen)) < 0) {
		free(copy);
		return r;
	}
	for (size_t i = 0; a[i] != NULL; i++)
		snprintf(argv_out + strlen(argv_out), alen - strlen(argv_out),
		    "%s%s", i ? " " : "", a[i]);
	for (size_t i = 0; e[i] != NULL; i++)
		if (strncmp(e[i], "PYTEST_ADDOPTS=", 15) == 0)
			snprintf(addopts, olen, "%s", e[i] + 15);
	flaky_command_free_vec(a);
	flaky_command_free_vec(e);
	free(copy);
	return 0;
}

START_TEST(command_shuffle)
{
	char	 a[512], o[256], err[256];

	ck_assert_int_eq(shuffle("python3 -m pytest tests", "pytest", a,
	    sizeof a, o, sizeof o, err, sizeof err), 0);
	ck_assert_str_eq(a, "python3 -m pytest tests");
	ck_assert_str_eq(o, "-v -p random_order --random-order-seed=1234");
	ck_assert_int_eq(shuffle("npx jest --verbose -- extra", "jest", a,
	    sizeof a, o, sizeof o, err, sizeof err), 0);
	ck_assert_str_eq(a, "npx jest --verbose --randomize --seed=1234 -- "
	    "extra");
	ck_assert_str_eq(o, "-v");
	ck_assert_int_eq(shuffle("go test -v ./... -args -x", "go", a,
	    sizeof a, o, sizeof o, err, sizeof err), 0);
	ck_assert_str_eq(a, "go test -v ./... -shuffle=1234 -args -x");
	ck_assert_int_eq(shuffle("go test ./...", "go", a, sizeof a, o,
	    sizeof o, err, sizeof err), 0);
	ck_assert_str_eq(a, "go test ./... -shuffle=1234");
	/* runners that cannot shuffle are refused, not ignored */
	ck_assert_int_eq(shuffle("python3 -m unittest -v", "unittest", a,
	    sizeof a, o, sizeof o, err, sizeof err), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(err, "unittest cannot shuffle"));
	ck_assert_int_eq(shuffle("./run-tests.sh", NULL, a, sizeof a, o,
	    sizeof o, err, sizeof err), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(err, "not recognized"));
}
END_TEST

START_TEST(stress_evidence)
{
	struct flaky_perturb_row v[3] = {
		{ 1, NULL, 50, 1 }, { 1, (char *)"cpu:2", 48, 15 },
		{ 1, (char *)"io:1", 40, 2 },
	};
	struct flaky_stress_evidence ev;

	ck_assert_int_eq(flaky_stress_sensitive(v, 3, &ev), 1);
	ck_assert_str_eq(ev.perturbation, "cpu:2");
	ck_assert_int_eq(ev.calm_runs, 50);
	ck_assert_int_eq(ev.failures, 15);
	ck_assert(ev.p < 1e-4);
	/* as often calm as under stress: no evidence */
	v[1].failures = 2;
	ck_assert_int_eq(flaky_stress_sensitive(v, 3, &ev), 0);
	ck_assert_ptr_null(ev.perturbation);
	/* twice the rate, but too few runs for the test */
	{
		struct flaky_perturb_row w[2] = {
			{ 1, NULL, 4, 1 }, { 1, (char *)"cpu:2", 4, 3 },
		};

		ck_assert_int_eq(flaky_stress_sensitive(w, 2, &ev), 0);
	}
	/* no calm runs: nothing to compare with */
	ck_assert_int_eq(flaky_stress_sensitive(v + 1, 2, &ev), 0);
	/* failing shuffled is order, not stress: no RACE from it */
	{
		struct flaky_perturb_row w[3] = {
			{ 1, NULL, 50, 0 }, { 1, (char *)"shuffle", 50, 20 },
			{ 1, (char *)"shuffle+cpu:2", 50, 25 },
		};

		ck_assert_int_eq(flaky_stress_sensitive(w, 3, &ev), 0);
		ck_assert(flaky_perturb_is_shuffle("shuffle+cpu:2"));
		ck_assert(!flaky_perturb_is_shuffle("cpu:2"));
		ck_assert(!flaky_perturb_is_shuffle(NULL));
	}
	ck_assert_str_eq(flaky_stress_signature("UNKNOWN"), "RACE");
	ck_assert_str_eq(flaky_stress_signature(NULL), "RACE");
	ck_assert_str_eq(flaky_stress_signature("TIMEOUT"), "TIMEOUT");
	ck_assert_str_eq(flaky_stress_signature("INFRA"), "INFRA");
}
END_TEST

/* One run of target tid: a fails when fail_a, b passes. */
static int64_t
run(struct flaky_store *s, int64_t tid, int64_t started, int fail_a,
    const char *perturbation, const char *seed)
{
	struct flaky_run_record rec = { 0 };
	struct flaky_results r;
	char	 err[512];

	flaky_results_init(&r);
	strcpy(r.runner, "pytest");
	r.seed = strdup("999");		/* as if the runner printed one */
	r.cap = 2;
	ck_assert_ptr_nonnull(r.v = calloc(2, sizeof *r.v));
	r.v[0].test = strdup("a");
	r.v[0].outcome = fail_a ? FLAKY_FAIL : FLAKY_PASS;
	r.v[0].duration_us = 100;
	if (fail_a) {
		r.v[0].message = strdup("AssertionError");
		r.v[0].signature = strdup("UNKNOWN");
	}
	r.v[1].test = strdup("b");
	r.v[1].position = 1;
	r.v[1].duration_us = 100;
	r.n = 2;
	rec.target_id = tid;
	rec.kind = FLAKY_KIND_SUITE;
	rec.trigger = "analyze";
	rec.started_ms = started;
	rec.loadavg = -1;
	rec.perturbation = perturbation;
	rec.seed = seed;
	ck_assert_msg(flaky_store_run_start(s, &rec, err, sizeof err) == 0,
	    "%s", err);
	rec.status = FLAKY_RUN_DONE;
	rec.ended_ms = started + 10;
	ck_assert_msg(flaky_store_run_finish(s, &rec, &r, err, sizeof err) ==
	    0, "%s", err);
	flaky_results_free(&r);
	return rec.id;
}

START_TEST(store_rates_and_seeds)
{
	struct flaky_store *s;
	struct flaky_perturb_row *v;
	struct flaky_seed_row *sd;
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0, 0 };
	struct flaky_diagnosis *d;
	sqlite3	*db;
	size_t	 n;
	int64_t	 tid, calm_tid, a_id = 0;
	char	 err[512];

	ck_assert_msg(flaky_store_open(path, 0, &s, err, sizeof err) == 0,
	    "%s", err);
	ck_assert_int_eq(flaky_store_target(s, "t", "pytest -v", "/src", &tid,
	    err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_target(s, "calm", "pytest", "/src",
	    &calm_tid, err, sizeof err), 0);
	/* calm: a fails 1 in 20; under cpu:2, 16 in 20 (shuffled, seeded) */
	for (int i = 0; i < 20; i++) {
		char	 seed[16];

		snprintf(seed, sizeof seed, "%d", 100 + i);
		run(s, tid, T0 + i, i == 0, NULL, NULL);
		run(s, tid, T0 + 100 + i, i < 16, "cpu:2", seed);
		run(s, calm_tid, T0 + i, i < 5, NULL, NULL);
	}
	/* a seed the runner printed does not replace the one we gave */
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	tu_rows_eq(db, "SELECT perturbation, count(*), count(DISTINCT seed), "
	    "min(seed) FROM runs WHERE target_id = 1 GROUP BY 1 ORDER BY 1",
	    "NULL|20|1|999\ncpu:2|20|20|100\n");
	/* the query of lib/store/perturb.c (copied): the perturbed targets
	 * from runs, their runs by target, the results by the primary key;
	 * never a scan of every result */
	for (int pass = 0; pass < 2; pass++) {
		char	*plan = tu_rows(db, "EXPLAIN QUERY PLAN "
		    "WITH pt(id) AS (SELECT DISTINCT ru.target_id FROM runs ru "
		    "JOIN targets tg ON tg.id = ru.target_id "
		    "WHERE ru.perturbation IS NOT NULL AND ru.id BETWEEN ?1 AND "
		    "?2 AND ru.started_ms >= ?4 AND ru.started_ms < ?5 "
		    "AND (?3 IS NULL OR tg.name = ?3)) "
		    "SELECT r.test_id, ru.perturbation, "
		    "sum(r.outcome IN (0, 1, 2, 5)), sum(r.outcome IN (1, 2)) "
		    "FROM pt CROSS JOIN runs ru ON ru.target_id = pt.id "
		    "CROSS JOIN results r ON r.run_id = ru.id "
		    "WHERE ru.kind = 'suite' AND ru.incomplete IS NULL "
		    "AND +ru.id BETWEEN ?1 AND ?2 "
		    "AND ru.started_ms >= ?4 AND ru.started_ms < ?5 "
		    "AND (?6 = 0 OR r.test_id = ?6) "
		    "GROUP BY r.test_id, ru.perturbation "
		    "ORDER BY r.test_id, ru.perturbation IS NOT NULL, "
		    "ru.perturbation");

		ck_assert_msg(strstr(plan, "SEARCH r USING PRIMARY KEY "
		    "(run_id=?)") != NULL, "%s", plan);
		ck_assert_msg(strstr(plan, "SEARCH ru USING INDEX "
		    "runs_by_target (target_id=?") != NULL, "%s", plan);
		free(plan);
		ck_assert_int_eq(sqlite3_exec(db, "ANALYZE", NULL, NULL, NULL),
		    SQLITE_OK);
	}
	sqlite3_close(db);

	ck_assert_int_eq(flaky_store_perturb_stats(s, &q, 0, &v, &n, err,
	    sizeof err), 0);
	/* test a and b of target t only: calm first */
	ck_assert_uint_eq(n, 4);
	ck_assert_ptr_null(v[0].perturbation);
	ck_assert_int_eq(v[0].runs, 20);
	ck_assert_int_eq(v[0].failures, 1);
	ck_assert_str_eq(v[1].perturbation, "cpu:2");
	ck_assert_int_eq(v[1].failures, 16);
	ck_assert_int_eq(v[3].failures, 0);
	a_id = v[0].test_id;
	flaky_perturb_rows_free(v, n);
	/* one test, and a window with no perturbed run: nothing */
	ck_assert_int_eq(flaky_store_perturb_stats(s, &q, a_id, &v, &n, err,
	    sizeof err), 0);
	ck_assert_uint_eq(n, 2);
	flaky_perturb_rows_free(v, n);
	q.until_ms = T0 + 100;	/* the calm runs only */
	ck_assert_int_eq(flaky_store_perturb_stats(s, &q, 0, &v, &n, err,
	    sizeof err), 0);
	ck_assert_uint_eq(n, 0);
	q.until_ms = INT64_MAX;

	ck_assert_int_eq(flaky_store_failing_seeds(s, &q, a_id, 3, &sd, &n,
	    err, sizeof err), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(sd[0].seed, "115");
	ck_assert_str_eq(sd[0].perturbation, "cpu:2");
	ck_assert_str_eq(sd[2].seed, "113");
	flaky_seed_rows_free(sd, n);

	/* the diagnosis: RACE from stress, with its evidence */
	ck_assert_msg(flaky_diagnose_test(s, a_id, &q, &d, err, sizeof err) ==
	    0, "%s", err);
	ck_assert_str_eq(d->signature, "RACE");
	ck_assert_int_eq(d->stress_race, 1);
	ck_assert_str_eq(d->stress.perturbation, "cpu:2");
	ck_assert_uint_eq(d->nperturbs, 2);
	flaky_diagnosis_free(d);
	flaky_store_close(s);
}
END_TEST

/* A database of the version before the migration (built by the
 * migrations before the one that adds the column, found by its text so
 * that later migrations change nothing here) keeps its runs, which read
 * as calm. */
START_TEST(migrate)
{
	struct flaky_store *s;
	sqlite3	*db;
	char	 sql[64], err[512];
	int	 from;

	db = tu_db_before(path, "ADD COLUMN perturbation", &from);
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", from);
	ck_assert_msg(sqlite3_exec(db,
	    "INSERT INTO targets (id, name, created_ms) VALUES (1, 'demo', 0);"
	    "INSERT INTO runs (id, target_id, status, trigger, started_ms, "
	    "  seed, kind) VALUES (5, 1, 'done', 'schedule', 1, '77', 'suite');",
	    NULL, NULL, NULL) == SQLITE_OK, "%s", sqlite3_errmsg(db));
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	ck_assert_msg(flaky_store_open(path, 0, &s, err, sizeof err) == 0,
	    "%s", err);
	flaky_store_close(s);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(sql, sizeof sql, "%d\n", flaky_store_schema_version());
	tu_rows_eq(db, "PRAGMA user_version", sql);
	tu_rows_eq(db, "SELECT id, seed, perturbation FROM runs",
	    "5|77|NULL\n");
	tu_rows_eq(db, "PRAGMA integrity_check", "ok\n");
	sqlite3_close(db);
}
END_TEST

/* stress: for a target in the YAML, checked as analyze checks it. */
START_TEST(config_stress)
{
	static const char good[] = "targets:\n  - name: a\n"
	    "    command: [sh]\n    stress: cpu:2\n  - name: b\n"
	    "    command: [sh]\n";
	static const char *const bad[] = { "gpu", "cpu:0", "io:x", "all:65",
	    "\"\"" };
	struct flaky_config *cfg;
	char	 buf[256], err[512];

	ck_assert_msg(flaky_config_parse_buffer("x.yaml", good,
	    sizeof good - 1, FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_str_eq(cfg->targets[0].stress, "cpu:2");
	ck_assert_ptr_null(cfg->targets[1].stress);
	flaky_config_free(cfg);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(buf, sizeof buf, "targets:\n  - name: a\n"
		    "    command: [sh]\n    stress: %s\n", bad[i]);
		ck_assert_int_eq(flaky_config_parse_buffer("x.yaml", buf,
		    strlen(buf), FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err,
		    sizeof err), -EINVAL);
		ck_assert_msg(strstr(err, "x.yaml:4:13: stress: expected cpu, "
		    "memory, io or all") != NULL, "%s", err);
	}
}
END_TEST

/* perturb: a cycle of calm, shuffle, seed and stress:KIND[:LEVEL] steps,
 * kept in order with duplicates (weights); a bad step, an empty or overlong
 * cycle, and stress:, until_settled: or risky: beside it are refused at their
 * place. Fresh seeds are numbers from 1 to 2^31-1 and differ. */
START_TEST(config_perturb)
{
	static const char good[] = "targets:\n  - name: a\n"
	    "    command: [sh]\n"
	    "    perturb: [calm, stress:cpu, calm, shuffle, stress:io:3, "
	    "seed]\n";
	static const struct { const char *yaml, *err; } bad[] = {
		{ "    perturb: [calm, stress]\n", "x.yaml:4:21: perturb: "
		    "expected calm, shuffle, seed or stress:KIND[:LEVEL] (KIND cpu, "
		    "memory, io or all, LEVEL 1 to 64), got \"stress\"" },
		{ "    perturb: [stress:cpu:0]\n", "x.yaml:4:15: perturb: "
		    "expected calm, shuffle, seed or stress:KIND" },
		{ "    perturb: [cpu]\n", "x.yaml:4:15: perturb: expected" },
		{ "    perturb: []\n", "x.yaml:4:14: perturb: expected 1 to "
		    "64 steps, got 0" },
		{ "    perturb: shuffle\n", "x.yaml:4:14: perturb: expected "
		    "a list of calm" },
		{ "    stress: cpu:2\n    perturb: [calm, shuffle]\n",
		    "x.yaml:5:14: perturb: expected no stress: beside it (line "
		    "4 stresses every run; put stress:cpu:2 in the cycle" },
		{ "    until_settled: true\n    perturb: [calm]\n",
		    "x.yaml:5:14: perturb: expected no until_settled: true "
		    "beside it (line 4)" },
		{ "    risky: true\n    perturb: [calm, shuffle]\n",
		    "x.yaml:5:14: perturb: expected no risky: true beside it "
		    "(line 4)" },
	};
	struct flaky_config *cfg;
	const struct flaky_target *t;
	char	 buf[512], err[512], s1[16], s2[16];
	long long v;

	ck_assert_msg(flaky_config_parse_buffer("x.yaml", good,
	    sizeof good - 1, FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err,
	    sizeof err) == 0, "%s", err);
	t = &cfg->targets[0];
	ck_assert_uint_eq(t->nperturb, 6);
	ck_assert_str_eq(t->perturb[0], "calm");
	ck_assert_str_eq(t->perturb[1], "cpu");
	ck_assert_str_eq(t->perturb[2], "calm");
	ck_assert_str_eq(t->perturb[3], "shuffle");
	ck_assert_str_eq(t->perturb[4], "io:3");
	ck_assert_str_eq(t->perturb[5], "seed");
	ck_assert_int_eq(t->perturb_line, 4);
	ck_assert_int_eq(t->perturb_col, 39);
	ck_assert_int_eq(t->seed_line, 4);
	ck_assert_int_eq(t->seed_col, 61);
	ck_assert_ptr_null(t->stress);
	flaky_config_free(cfg);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(buf, sizeof buf, "targets:\n  - name: a\n"
		    "    command: [sh]\n%s", bad[i].yaml);
		ck_assert_int_eq(flaky_config_parse_buffer("x.yaml", buf,
		    strlen(buf), FLAKY_CONFIG_NO_FS_CHECKS, &cfg, err,
		    sizeof err), -EINVAL);
		ck_assert_msg(strstr(err, bad[i].err) == err, "%s", err);
	}
	flaky_shuffle_seed(s1, sizeof s1);
	flaky_shuffle_seed(s2, sizeof s2);
	ck_assert_int_eq(flaky_parse_int(s1, 1, 0x7fffffff, &v), 0);
	ck_assert_int_eq(flaky_parse_int(s2, 1, 0x7fffffff, &v), 0);
	ck_assert_str_ne(s1, s2);	/* equal: 2^-31 */
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("perturb");
	TCase	*tc = tcase_create("perturb");
	SRunner	*sr;
	int	 failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, stress_parse);
	tcase_add_test(tc, stress_threads);
	tcase_add_test(tc, command_shuffle);
	tcase_add_test(tc, stress_evidence);
	tcase_add_test(tc, store_rates_and_seeds);
	tcase_add_test(tc, migrate);
	tcase_add_test(tc, config_stress);
	tcase_add_test(tc, config_perturb);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
