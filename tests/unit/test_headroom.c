/* Issue 34: the seed hook's file of margins read into a run's results
 * (lib/parse/headroom.c), written with the run and read back per test
 * (lib/store/seed.c), replays of failing seeds, and pruning. */
#include "buildconf.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "diagnose/diagnose.h"
#include "parse/parse.h"
#include "store/store.h"
#include "test_db.h"
#include "test_helper.h"
#include "test_store_fixture.h"

/* A file of margins in the test's directory. */
static void
write_file(const char *name, const char *text)
{
	char	 p[256];
	FILE	*f;

	snprintf(p, sizeof p, "%s/%s", dir, name);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
}

START_TEST(parse_lines)
{
	struct flaky_results r;
	char	 p[256], err[256];

	flaky_results_init(&r);
	add(&r, "t/test_a.py::test_fit", 0, 10, NULL);
	add(&r, "t/test_a.py::test_b[x\ty]", 1, 10, "boom");
	/* the run's directory is /src: its files become relative */
	write_file("m.tsv",
	    "t/test_a.py::test_fit\t/src/t/test_a.py\t12\ttol\t0.25\t1.0\t3\t"
	    "2.5e-07\t2.5e-07\trtol=1e-06, atol=0\tassert_allclose\n"
	    "t/test_a.py::test_b[x\\ty]\t/src/t/test_a.py\t20\tgt\t0.85\t0.9"
	    "\t1\t\t\t\tcompare\n"
	    /* a test the results do not hold, bad fields: passed over */
	    "t/test_a.py::gone\t/src/t/test_a.py\t30\ttol\t0.1\t1\t1\t\t\t\t"
	    "x\n"
	    "t/test_a.py::test_fit\t/src/t/test_a.py\t0\ttol\t0.1\t1\t1\t\t\t"
	    "\tx\n"
	    "t/test_a.py::test_fit\t/src/t/test_a.py\t31\tneq\t0.1\t1\t1\t\t"
	    "\t\tx\n"
	    "t/test_a.py::test_fit\t/src/t/test_a.py\t32\ttol\tnan\t1\t1\t\t"
	    "\t\tx\n"
	    "t/test_a.py::test_fit\t/src/t/test_a.py\t33\ttol\t0.1\n"
	    /* a mismatched NaN: the whole tolerance and more */
	    "t/test_a.py::test_fit\t/elsewhere/u.py\t7\ttol\tinf\t1\t1\t\t\t"
	    "\tisclose\n");
	snprintf(p, sizeof p, "%s/m.tsv", dir);
	ck_assert_msg(flaky_parse_headroom(p, "/src", &r, err, sizeof err) ==
	    0, "%s", err);
	ck_assert_uint_eq(r.nheadroom, 3);
	ck_assert_uint_eq(r.headroom[0].result, 0);
	ck_assert_str_eq(r.headroom[0].path, "t/test_a.py");
	ck_assert_int_eq(r.headroom[0].line, 12);
	ck_assert_str_eq(r.headroom[0].kind, "tol");
	ck_assert_double_eq(r.headroom[0].quantity, 0.25);
	ck_assert_int_eq(r.headroom[0].calls, 3);
	ck_assert_double_eq(r.headroom[0].abs_err, 2.5e-7);
	ck_assert_str_eq(r.headroom[0].tolerance, "rtol=1e-06, atol=0");
	ck_assert_str_eq(r.headroom[0].assertion, "assert_allclose");
	ck_assert_uint_eq(r.headroom[1].result, 1);
	ck_assert_str_eq(r.headroom[1].kind, "gt");
	ck_assert(isnan(r.headroom[1].abs_err));
	ck_assert_ptr_null(r.headroom[1].tolerance);
	ck_assert_str_eq(r.headroom[2].path, "/elsewhere/u.py");
	ck_assert(isinf(r.headroom[2].quantity));
	flaky_results_free(&r);

	/* no file: no assertion measured, no error */
	flaky_results_init(&r);
	add(&r, "a", 0, 1, NULL);
	snprintf(p, sizeof p, "%s/none.tsv", dir);
	ck_assert_int_eq(flaky_parse_headroom(p, "/src", &r, err, sizeof err),
	    0);
	ck_assert_uint_eq(r.nheadroom, 0);
	flaky_results_free(&r);
}
END_TEST

START_TEST(fails)
{
	ck_assert(!flaky_headroom_fails("tol", 1.0, 1.0));
	ck_assert(flaky_headroom_fails("tol", 1.0001, 1.0));
	ck_assert(flaky_headroom_fails("lt", 0.1, 0.1));
	ck_assert(!flaky_headroom_fails("le", 0.1, 0.1));
	ck_assert(flaky_headroom_fails("gt", 0.9, 0.9));
	ck_assert(!flaky_headroom_fails("ge", 0.9, 0.9));
	ck_assert(!flaky_headroom_fails("gt", 0.95, 0.9));
	ck_assert(flaky_headroom_fails("ge", 0.85, 0.9));
}
END_TEST

/* One run of a sweep with the given perturbation and seed. */
static int64_t
seeded_run(struct flaky_store *s, int64_t tid, int64_t started,
    const char *perturbation, const char *seed, const char *incomplete,
    struct flaky_results *res)
{
	struct flaky_run_record rec = { 0 };
	char	 err[512];

	rec.target_id = tid;
	rec.trigger = "analyze";
	rec.started_ms = started;
	rec.ended_ms = started + 100;
	rec.loadavg = -1;
	rec.status = FLAKY_RUN_DONE;
	rec.exit_code = 0;
	rec.perturbation = perturbation;
	rec.seed = seed;
	rec.incomplete = incomplete;
	ck_assert_msg(flaky_store_run_finish(s, &rec, res, err, sizeof err) ==
	    0, "%s", err);
	return rec.id;
}

/* An observation of the first result. */
static void
obs(struct flaky_results *r, const char *file, int line, const char *kind,
    double q, double b)
{
	struct flaky_headroom_obs *o;

	r->headroom = realloc(r->headroom, (r->nheadroom + 1) * sizeof *o);
	ck_assert_ptr_nonnull(r->headroom);
	o = &r->headroom[r->nheadroom++];
	memset(o, 0, sizeof *o);
	o->path = strdup(file);
	o->line = line;
	snprintf(o->kind, sizeof o->kind, "%s", kind);
	o->quantity = q;
	o->bound = b;
	o->calls = 1;
	o->abs_err = o->rel_err = NAN;
	o->tolerance = strdup("rtol=1e-06, atol=0");
}

START_TEST(store_round_trip)
{
	struct flaky_store *s = open_store();
	struct flaky_query q;
	struct flaky_headroom_row *h;
	struct flaky_replay_row *rp;
	struct flaky_results r;
	struct flaky_prune_stats ps;
	size_t	 n;
	int64_t	 tid = target(s, "ml"), run[4];
	char	 err[512];
	sqlite3	*db;

	memset(&q, 0, sizeof q);
	q.since_ms = INT64_MIN;
	q.until_ms = INT64_MAX;
	ck_assert_int_eq(flaky_store_seeded(s, &q, err, sizeof err), 0);
	for (int i = 0; i < 4; i++) {
		char	 seed[16];

		flaky_results_init(&r);
		add(&r, "t.py::test_fit", i == 2 ? 1 : 0, 10, i == 2 ?
		    "AssertionError" : NULL);
		add(&r, "t.py::test_other", 0, 10, NULL);
		obs(&r, "t.py", 12, "tol", 0.2 + 0.3 * i, 1);
		obs(&r, "t.py", 20, "gt", 0.95, 0.9);
		snprintf(seed, sizeof seed, "%d", 100 + i);
		/* the last one replays seed 102: evidence only */
		run[i] = seeded_run(s, tid, T0 + i * 1000, i == 3 ?
		    FLAKY_PERTURB_REPLAY : FLAKY_PERTURB_SEED, i == 3 ?
		    "102" : seed, i == 3 ? "a replay" : NULL, &r);
		flaky_results_free(&r);
	}
	ck_assert_int_eq(flaky_store_seeded(s, &q, err, sizeof err), 1);
	db = raw_open();
	tu_rows_eq(db, "SELECT test, path, line, kind, quantity, used, failed, "
	    "seed FROM headroom_runs WHERE line = 12 ORDER BY run_id",
	    "t.py::test_fit|t.py|12|tol|0.2|0.2|0|100\n"
	    "t.py::test_fit|t.py|12|tol|0.5|0.5|0|101\n"
	    "t.py::test_fit|t.py|12|tol|0.8|0.8|0|102\n"
	    "t.py::test_fit|t.py|12|tol|1.1|1.1|1|102\n");
	tu_rows_eq(db, "SELECT round(used, 4), failed FROM headroom_runs "
	    "WHERE line = 20 LIMIT 1", "0.9474|0\n");
	/* the first result only: test_other has none */
	tu_rows_eq(db, "SELECT count(*) FROM headroom h JOIN tests t ON "
	    "t.id = h.test_id WHERE t.name = 't.py::test_other'", "0\n");
	/* read back: the sweep's runs, not the replay */
	ck_assert_int_eq(flaky_store_headroom(s, &q, tu_q1(db, "SELECT id "
	    "FROM tests WHERE name = 't.py::test_fit'"), &h, &n, err,
	    sizeof err), 0);
	ck_assert_uint_eq(n, 6);
	ck_assert_int_eq(h[0].line, 12);
	ck_assert_double_eq(h[2].quantity, 0.8);
	ck_assert_int_eq(h[3].line, 20);
	ck_assert_str_eq(h[3].kind, "gt");
	ck_assert_str_eq(h[0].tolerance, "rtol=1e-06, atol=0");
	flaky_headroom_rows_free(h, n);
	ck_assert_int_eq(flaky_store_seed_replays(s, &q, 0, &rp, &n, err,
	    sizeof err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(rp[0].seed, "102");
	ck_assert_int_eq(rp[0].run_id, run[3]);
	ck_assert_int_eq(rp[0].failed, 0);
	flaky_replay_rows_free(rp, n);
	/* pruned with its run */
	ck_assert_msg(flaky_store_prune(s, T0 + 2500, &ps, err, sizeof err) ==
	    0, "%s", err);
	tu_rows_eq(db, "SELECT count(*), min(run_id) FROM headroom", "2|4\n");
	sqlite3_close(db);
	flaky_store_close(s);
}
END_TEST

/* SEED from a sweep's counts and its replays: a failing seed that fails
 * again is SEED; one replay that passes is randomness no seed controls;
 * failing for every seed, or no sweep at all, is not SEED. */
START_TEST(seed_evidence)
{
	struct flaky_perturb_row v[] = {
		{ 1, NULL, 10, 0 }, { 1, (char *)"seed", 20, 3 },
	};
	struct flaky_replay_row rp[] = {
		{ 1, 50, (char *)"7", 1 }, { 1, 51, (char *)"9", 1 },
	};
	struct flaky_seed_evidence ev;

	ck_assert_int_eq(flaky_seed_evidence(v, 2, rp, 2, &ev), 1);
	ck_assert(ev.sensitive && !ev.not_seed);
	ck_assert_int_eq(ev.runs, 20);
	ck_assert_int_eq(ev.failures, 3);
	ck_assert_str_eq(ev.seed, "7");
	ck_assert(ev.lo < 0.15 && 0.15 < ev.hi);
	ck_assert_str_eq(flaky_seed_signature("UNKNOWN"), "SEED");
	ck_assert_str_eq(flaky_seed_signature("TIMEOUT"), "TIMEOUT");
	rp[1].failed = 0;
	ck_assert_int_eq(flaky_seed_evidence(v, 2, rp, 2, &ev), 0);
	ck_assert(ev.not_seed && !ev.sensitive);
	/* no replay made (flakyd): the sweep alone */
	ck_assert_int_eq(flaky_seed_evidence(v, 2, NULL, 0, &ev), 1);
	v[1].failures = 20;
	ck_assert_int_eq(flaky_seed_evidence(v, 2, NULL, 0, &ev), 0);
	ck_assert_int_eq(flaky_seed_evidence(v, 1, NULL, 0, &ev), 0);
	ck_assert_int_eq(ev.runs, 0);
}
END_TEST

/* Sites from rows: a tolerance whose margins spread is fitted (Gumbel's,
 * a rate and a wider bound than the one it nearly crosses), one the test
 * seeds itself is constant, a comparison of few values is not fitted. */
START_TEST(headroom_sites)
{
	struct flaky_headroom_row r[70];
	struct flaky_headroom_site *v;
	size_t	 n;

	memset(r, 0, sizeof r);
	for (int i = 0; i < 30; i++) {
		/* a share of the tolerance used: Gumbel quantiles, 0.3 to
		 * about 0.9 */
		double	 p = (i + 0.5) / 30;

		r[i].run_id = i + 1;
		r[i].path = (char *)"t.py";
		r[i].line = 10;
		memcpy(r[i].kind, "tol", 4);
		r[i].quantity = 0.4 - 0.1 * log(-log(p));
		r[i].bound = 1;
		r[i].tolerance = (char *)"rtol=0.05, atol=0";
		r[i].abs_err = r[i].rel_err = NAN;
	}
	for (int i = 30; i < 50; i++) {
		r[i] = r[0];
		r[i].run_id = i + 1;
		r[i].line = 20;
		r[i].quantity = 0.25;
	}
	for (int i = 50; i < 70; i++) {
		r[i] = r[0];
		r[i].run_id = i + 1;
		r[i].line = 30;
		memcpy(r[i].kind, "gt", 3);
		r[i].quantity = 0.93 + 0.005 * (i % 5);
		r[i].bound = 0.9;
		r[i].tolerance = NULL;
	}
	ck_assert_int_eq(flaky_headroom_sites(r, 70, &v, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert(v[0].fitted && !v[0].counted && !v[0].constant);
	ck_assert_double_eq(v[0].gev.xi, 0);
	ck_assert(v[0].rate > 0 && v[0].rate < 1e-2);
	ck_assert(v[0].rate_lo <= v[0].rate && v[0].rate <= v[0].rate_hi);
	ck_assert(v[0].suggest > 1);
	ck_assert_msg(strncmp(v[0].suggest_text, "rtol=", 5) == 0, "%s",
	    v[0].suggest_text);
	ck_assert(v[0].used_median > 0.4 && v[0].used_median < 0.5);
	ck_assert(v[1].constant && v[1].rate == 0 && !v[1].at_risk);
	ck_assert(!v[2].fitted && v[2].distinct == 5 && isnan(v[2].rate));
	ck_assert(!v[2].at_risk);
	flaky_headroom_sites_free(v, n);
}
END_TEST

int
main(void)
{
	Suite	*su = suite_create("headroom");
	TCase	*tc = tcase_create("headroom");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, parse_lines);
	tcase_add_test(tc, fails);
	tcase_add_test(tc, store_round_trip);
	tcase_add_test(tc, seed_evidence);
	tcase_add_test(tc, headroom_sites);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
