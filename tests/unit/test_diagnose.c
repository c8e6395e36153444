/* diagnose from the store: synthetic runs stored for real, then each
 * test diagnosed (order dependence, polluter named) and the per-test
 * signatures of a report read back. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classify/classify.h"
#include "diagnose/diagnose.h"
#include "parse/parse.h"
#include "store/store.h"
#include "util/util.h"
#include "diagnose_test.h"

static struct flaky_store *
open_store(char *dir, size_t len)
{
	struct flaky_store *s;
	char	 path[1100], err[512];

	snprintf(dir, len, "/tmp/flaky-diag-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/flaky.db", dir);
	ck_assert_msg(flaky_store_open(path, 0, &s, err, sizeof err) == 0,
	    "%s", err);
	return s;
}

static void
close_store(struct flaky_store *s, const char *dir)
{
	char	 path[1100];

	flaky_store_close(s);
	snprintf(path, sizeof path, "%s/flaky.db", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/flaky.db-wal", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/flaky.db-shm", dir);
	unlink(path);
	rmdir(dir);
}

static void
store_one(struct flaky_store *s, int64_t tid, int64_t started,
    const char *rev, const struct flaky_results *res)
{
	struct flaky_run_record rec = { 0 };
	char	 err[512];

	rec.target_id = tid;
	rec.trigger = "analyze";
	rec.started_ms = started;
	rec.loadavg = -1;
	rec.revision = rev;
	rec.status = FLAKY_RUN_DONE;
	rec.ended_ms = started + 1000;
	rec.duration_us = 1000000;
	rec.exit_code = 1;
	ck_assert_msg(flaky_store_run_finish(s, &rec, res, err, sizeof err) ==
	    0, "%s", err);
}

static const char *const names[] = {
	NULL, "t.py::test_a", "t.py::test_victim", "t.py::test_c",
	"t.py::test_sched", "t.py::test_broken", "t.py::test_f",
	"t.py::test_polluter", "t.py::test_h", "t.py::test_i",
	"t.py::test_j", "t.py::test_k", "t.py::test_l",
};

/* Synthetic runs stored for real, then diagnosed from the database. */
START_TEST(order_stored)
{
	struct flaky_store *s;
	struct flaky_results res;
	struct flaky_diagnosis *d = NULL;
	struct flaky_test_sig *sigs = NULL;
	struct flaky_test_ref *refs = NULL;
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0 };
	const struct flaky_test_sig *ts;
	char	 dir[64], err[512], msg[64];
	int64_t	 tid, ids[12], victim = 0, broken = 0, needy, sched;
	int	 out[12];
	uint64_t seed = 999;
	size_t	 nsigs = 0, nrefs = 0, m[5], nm;

	s = open_store(dir, sizeof dir);
	ck_assert_int_eq(flaky_store_target(s, "demo", "pytest -p random_order",
	    "/src", &tid, err, sizeof err), 0);
	for (int run = 0; run < 40; run++) {
		synthetic_run(&seed, run, ids, out, 12);
		flaky_results_init(&res);
		snprintf(res.runner, sizeof res.runner, "pytest");
		snprintf(msg, sizeof msg, "%d", 1000 + run);
		res.seed = strdup(msg);
		res.n = res.cap = 12;
		ck_assert_ptr_nonnull(res.v = calloc(12, sizeof *res.v));
		for (size_t i = 0; i < 12; i++) {
			res.v[i].test = strdup(names[ids[i]]);
			res.v[i].outcome = out[i];
			res.v[i].position = (unsigned)i;
			res.v[i].duration_us = FLAKY_FAILED(out[i]) ? 2000 :
			    100000;
			if (FLAKY_FAILED(out[i])) {
				snprintf(msg, sizeof msg, "assert %d == 0",
				    run);
				res.v[i].message = strdup(msg);
			}
		}
		store_one(s, tid, 1700000000000LL + run * 60000LL, "abc123",
		    &res);
		flaky_results_free(&res);
	}
	ck_assert_int_eq(flaky_store_tests(s, NULL, &refs, &nrefs, err,
	    sizeof err), 0);
	ck_assert_uint_eq(nrefs, 12);
	ck_assert_int_eq(flaky_find_test(refs, nrefs, "victim", m, 5, &nm),
	    FLAKY_FIND_ONE);
	victim = refs[m[0]].id;
	ck_assert_int_eq(flaky_find_test(refs, nrefs, "test_broken", m, 5,
	    &nm), FLAKY_FIND_ONE);
	broken = refs[m[0]].id;

	ck_assert_msg(flaky_diagnose_test(s, victim, &q, &d, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_str_eq(d->test, "t.py::test_victim");
	ck_assert_str_eq(d->target, "demo");
	ck_assert_int_eq(d->runs, 40);
	ck_assert_ptr_nonnull(d->polluter);
	ck_assert_str_eq(d->polluter, "t.py::test_polluter");
	ck_assert_str_eq(d->signature, "ORDER_DEPENDENT");
	ck_assert_int_eq(d->order.k_without, 0);
	ck_assert_int_eq(d->order.k_before, d->failures);
	ck_assert_int_eq(d->verdict, FLAKY_VERDICT_FLAKY);
	ck_assert_uint_eq(d->nmodes, 1);	/* "assert N == N" */
	ck_assert_str_eq(d->modes[0].normalized, "assert N == N");
	ck_assert_int_eq(d->modes[0].count, d->failures);
	ck_assert_uint_eq(d->nfailed, (size_t)d->failures);
	ck_assert_str_eq(d->command, "pytest -p random_order");
	ck_assert_ptr_nonnull(d->seed);
	ck_assert(d->timing.early);	/* 2 ms against 100 ms */
	ck_assert_double_eq_tol(d->timing.median_fail, 2.0, 1e-9);
	ck_assert_double_eq_tol(d->timing.median_pass, 100.0, 1e-9);
	flaky_diagnosis_free(d);

	ck_assert_int_eq(flaky_diagnose_test(s, broken, &q, &d, err,
	    sizeof err), 0);
	ck_assert_int_eq(d->verdict, FLAKY_VERDICT_BROKEN);
	ck_assert_ptr_null(d->polluter);
	ck_assert_str_eq(d->signature, "UNKNOWN");
	flaky_diagnosis_free(d);

	/* test_c needs test_h to run first; test_sched fails on a schedule,
	 * at once (2 ms) where passes take 100 ms, with UNKNOWN messages:
	 * RACE from timing */
	ck_assert_int_eq(flaky_find_test(refs, nrefs, "test_c", m, 5, &nm),
	    FLAKY_FIND_ONE);
	needy = refs[m[0]].id;
	ck_assert_int_eq(flaky_find_test(refs, nrefs, "test_sched", m, 5,
	    &nm), FLAKY_FIND_ONE);
	sched = refs[m[0]].id;
	ck_assert_int_eq(flaky_diagnose_test(s, needy, &q, &d, err,
	    sizeof err), 0);
	ck_assert_str_eq(d->signature, "ORDER_DEPENDENT");
	ck_assert_ptr_null(d->polluter);
	ck_assert_str_eq(d->depends_on, "t.py::test_h");
	ck_assert_int_eq(d->order.k_without, d->failures);
	ck_assert_int_eq(d->order.n_without, d->failures);
	ck_assert_int_eq(d->order.k_before, 0);
	ck_assert(!d->race_timing);	/* the order wins over timing */
	flaky_diagnosis_free(d);
	ck_assert_int_eq(flaky_diagnose_test(s, sched, &q, &d, err,
	    sizeof err), 0);
	ck_assert_str_eq(d->signature, "RACE");
	ck_assert(d->race_timing);
	ck_assert_ptr_null(d->polluter);
	ck_assert_ptr_null(d->depends_on);
	ck_assert_int_eq(d->timing.n_fail, 14);	/* runs 0, 3, ..., 39 */
	ck_assert_int_eq(d->timing.n_pass, 26);
	ck_assert_double_eq_tol(d->timing.mw_p, 4.729053956741775e-10,
	    1e-20);
	flaky_diagnosis_free(d);
	{
		int64_t	 want[4], vic[3];

		want[0] = broken;
		want[1] = vic[0] = victim;
		want[2] = vic[1] = sched;
		want[3] = vic[2] = needy;
		ck_assert_int_eq(flaky_test_signatures(s, &q, want, 4, vic, 3,
		    &sigs, &nsigs, err, sizeof err), 0);
	}
	ck_assert_uint_eq(nsigs, 4);	/* victim, sched, broken, test_c */
	ts = flaky_test_sig_find(sigs, nsigs, victim);
	ck_assert_ptr_nonnull(ts);
	ck_assert_str_eq(ts->signature, "ORDER_DEPENDENT");
	ck_assert_str_eq(ts->polluter, "t.py::test_polluter");
	ck_assert_ptr_null(ts->depends_on);
	ck_assert(!ts->race_timing);
	ck_assert_str_eq(ts->sigs[0].name, "UNKNOWN");
	ts = flaky_test_sig_find(sigs, nsigs, needy);
	ck_assert_ptr_nonnull(ts);
	ck_assert_str_eq(ts->signature, "ORDER_DEPENDENT");
	ck_assert_ptr_null(ts->polluter);
	ck_assert_str_eq(ts->depends_on, "t.py::test_h");
	ts = flaky_test_sig_find(sigs, nsigs, sched);
	ck_assert_ptr_nonnull(ts);
	ck_assert_str_eq(ts->signature, "RACE");
	ck_assert(ts->race_timing);
	ck_assert_int_eq(ts->timing.n_fail, 14);
	ck_assert_int_eq(ts->timing.n_pass, 26);
	ck_assert_double_eq_tol(ts->timing.mw_p, 4.729053956741775e-10,
	    1e-20);
	ck_assert_str_eq(ts->sigs[0].name, "UNKNOWN");
	ts = flaky_test_sig_find(sigs, nsigs, broken);
	ck_assert_ptr_nonnull(ts);
	ck_assert_ptr_null(ts->polluter);
	ck_assert_ptr_null(ts->depends_on);
	ck_assert_str_eq(ts->signature, "UNKNOWN");	/* no passes */
	ck_assert(!ts->race_timing);
	ck_assert_int_eq(ts->timing.n_fail, 40);
	ck_assert_int_eq(ts->sigs[0].count, 40);
	flaky_test_sigs_free(sigs, nsigs);
	flaky_test_refs_free(refs, nrefs);
	close_store(s, dir);
}
END_TEST

/* Flips in words (issue 29): jobs with attempts, run ids without CI, a
 * long hash cut to 7, other revisions whole, the newest few spelt out. */
START_TEST(flip_words)
{
	struct flaky_flip v[4] = {
		{ .revision = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
		  .fail_job = "unit", .fail_attempt = 2, .pass_job = "unit",
		  .pass_attempt = 3, .fail_run = 5, .pass_run = 6 },
		{ .revision = "v2.0-rc1", .fail_run = 12, .pass_run = 14 },
		{ .revision = "abc", .fail_run = 1, .pass_job = "lint",
		  .pass_run = 2 },
		{ .revision = "def", .fail_run = 3, .pass_run = 4 },
	};
	struct flaky_buf b;
	int64_t	 until = 20 * FLAKY_DAY_MS, since = until - 14 * FLAKY_DAY_MS;

	flaky_buf_init(&b);
	flaky_flip_words(v, 1, since, until, 3, &b);
	ck_assert_str_eq(flaky_buf_cstr(&b), "flipped on 1 revision in 14 "
	    "days: a1b2c3d failed in job unit#2, passed in unit#3");
	flaky_buf_reset(&b);
	flaky_flip_words(v, 4, INT64_MIN, until, 3, &b);
	ck_assert_str_eq(flaky_buf_cstr(&b), "flipped on 4 revisions since "
	    "the first run: a1b2c3d failed in job unit#2, passed in unit#3; "
	    "v2.0-rc1 failed in run 12, passed in run 14; abc failed in run "
	    "1, passed in job lint; and 1 more");
	flaky_buf_reset(&b);
	flaky_flip_words(v, 0, since, until, 3, &b);
	ck_assert_uint_eq(b.len, 0);
	flaky_flip_revision("0123456789ab", &b);
	flaky_buf_adds(&b, " ");
	flaky_flip_revision("0123456789a", &b);
	ck_assert_str_eq(flaky_buf_cstr(&b), "0123456 0123456789a");
	flaky_buf_free(&b);
}
END_TEST

static Suite *
suite(void)
{
	Suite	*s = suite_create("diagnose");
	TCase	*tc = tcase_create("diagnose");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, order_stored);
	tcase_add_test(tc, flip_words);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
