/* store_flips (lib/store/flips.c, ci.c, tokens.c): a test that failed and
 * passed on one revision is a flip, whichever came first and wherever it
 * ran in each run; a break and its fix is none; runs alone and incomplete
 * runs do not count. A generated history of 40 revisions in which 3 tests
 * flip and 1 breaks and is fixed flags exactly the 3. Tokens and uploads
 * round trip. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "test_db.h"
#include "test_helper.h"
#include "test_store_fixture.h"

/* One run of target tid at rev: the tests in order with their outcomes
 * ("a+b-c+": pass, fail), its kind and incomplete reason, its job. */
static int64_t
run_rev(struct flaky_store *s, int64_t tid, const char *rev, int64_t at,
    const char *spec, int kind, const char *incomplete, const char *job,
    int attempt)
{
	struct flaky_results r;
	struct flaky_run_record rec;
	struct flaky_ci_meta m = { 0 };
	char	 name[2] = { 0 }, err[512];

	flaky_results_init(&r);
	strcpy(r.runner, "pytest");
	for (const char *p = spec; p[0] && p[1]; p += 2) {
		name[0] = p[0];
		add(&r, name, p[1] == '+' ? FLAKY_PASS : p[1] == '-' ?
		    FLAKY_FAIL : FLAKY_SKIP, 1000, p[1] == '-' ? "boom" : NULL);
	}
	memset(&rec, 0, sizeof rec);
	rec.target_id = tid;
	rec.status = FLAKY_RUN_DONE;
	rec.kind = kind;
	rec.incomplete = incomplete;
	rec.trigger = "test";
	rec.started_ms = at;
	rec.ended_ms = at + 1;
	rec.revision = rev;
	rec.loadavg = -1;
	ck_assert_msg(flaky_store_run_finish(s, &rec, &r, err, sizeof err) ==
	    0, "%s", err);
	if (job != NULL) {
		m.job = job;
		m.attempt = attempt;
		ck_assert_msg(flaky_store_run_ci(s, rec.id, &m, 0, err,
		    sizeof err) == 0, "%s", err);
	}
	flaky_results_free(&r);
	return rec.id;
}

START_TEST(flips_both_ways)
{
	struct flaky_store *s = open_store();
	sqlite3		*db = raw_open();
	int64_t		 t = target(s, "t");

	/* rev1: a fails then passes; b passes then fails, at another
	 * position (the order changed); c skipped, then fails */
	run_rev(s, t, "rev1", T0, "a-b+c.d+", 0, NULL, "unit", 1);
	run_rev(s, t, "rev1", T0 + 1000, "b-a+d+c-", 0, NULL, "unit", 2);
	/* rev2: d fails in every run; rev3 it passes: a break, a fix */
	run_rev(s, t, "rev2", T0 + 2000, "a+b+c+d-", 0, NULL, "unit", 1);
	run_rev(s, t, "rev2", T0 + 3000, "a+b+c+d-", 0, NULL, "unit", 2);
	run_rev(s, t, "rev3", T0 + 4000, "a+b+c+d+", 0, NULL, "unit", 1);
	/* rev4: a fails; its passes alone or in an incomplete run do not
	 * count */
	run_rev(s, t, "rev4", T0 + 5000, "a-", 0, NULL, NULL, 0);
	run_rev(s, t, "rev4", T0 + 6000, "a+", FLAKY_KIND_ALONE, NULL, NULL,
	    0);
	run_rev(s, t, "rev4", T0 + 7000, "a+", 0, "cut", NULL, 0);
	tu_rows_eq(db, "SELECT test, revision, fails, passes, failed_job, "
	    "failed_attempt, passed_job, passed_attempt FROM flips ORDER BY "
	    "revision, test",
	    "a|rev1|1|1|unit|1|unit|2\n"
	    "b|rev1|1|1|unit|2|unit|1\n");
	tu_rows_eq(db, "SELECT t.name, o.revision, o.fails, o.passes FROM "
	    "revision_outcomes o JOIN tests t ON t.id = o.test_id WHERE "
	    "o.passes = 0 ORDER BY 2, 1",
	    "c|rev1|1|0\nd|rev2|2|0\na|rev4|1|0\n");
	/* a third run at rev1 counts on */
	run_rev(s, t, "rev1", T0 + 8000, "a-b-c+d+", 0, NULL, "unit", 3);
	tu_rows_eq(db, "SELECT test, fails, passes FROM flips ORDER BY test",
	    "a|2|1\nb|2|1\nc|1|1\n");
	sqlite3_close(db);
	flaky_store_close(s);
}
END_TEST

/* 40 revisions, 4 jobs each; tests f1-f3 flip on a few revisions, b
 * breaks at revision 20 and is fixed at 23: the flips name f1-f3 only. */
START_TEST(flips_history)
{
	struct flaky_store *s = open_store();
	sqlite3		*db = raw_open();
	int64_t		 t = target(s, "t");
	struct flaky_flip_count *c;
	struct flaky_flip *f;
	size_t		 n, nf;
	char		 err[512];

	for (int rev = 0; rev < 40; rev++) {
		char	 r[16];

		snprintf(r, sizeof r, "%08x", 0xa1b2c300 + rev);
		for (int job = 0; job < 4; job++) {
			char	 spec[32], name[16];
			int	 f1 = rev % 7 == 3 && job == 1;
			int	 f2 = rev % 11 == 5 && job == 2;
			int	 f3 = rev == 30 && job == 0;
			int	 br = rev >= 20 && rev < 23;

			snprintf(spec, sizeof spec, "x+1%c2%c3%cb%cy+",
			    f1 ? '-' : '+', f2 ? '-' : '+', f3 ? '-' : '+',
			    br ? '-' : '+');
			snprintf(name, sizeof name, "unit %d", job);
			run_rev(s, t, r, T0 + (rev * 4 + job) * 1000LL, spec,
			    0, NULL, name, 1);
		}
	}
	ck_assert_int_eq(flaky_store_flip_counts(s, t, T0, T0 + 86400000,
	    &c, &n, err, sizeof err), 0);
	ck_assert_uint_eq(n, 3);
	/* f1 at revisions 3, 10, 17, 24, 31, 38; f2 at 5, 16, 27, 38; f3
	 * at 30 */
	ck_assert_int_eq(c[0].revisions, 6);
	ck_assert_int_eq(c[1].revisions, 4);
	ck_assert_int_eq(c[2].revisions, 1);
	tu_rows_eq(db, "SELECT count(*) FROM revision_outcomes o JOIN tests t "
	    "ON t.id = o.test_id WHERE t.name = 'b' AND o.passes = 0",
	    "3\n");
	ck_assert_int_eq(flaky_store_test_flips(s, c[2].test_id, T0,
	    T0 + 86400000, &f, &nf, err, sizeof err), 0);
	ck_assert_uint_eq(nf, 1);
	ck_assert_str_eq(f[0].revision, "a1b2c31e");
	ck_assert_str_eq(f[0].fail_job, "unit 0");
	ck_assert_str_eq(f[0].pass_job, "unit 1");
	ck_assert_int_eq(f[0].fails, 1);
	ck_assert_int_eq(f[0].passes, 3);
	flaky_flips_free(f, nf);
	free(c);
	/* outside the window: none */
	ck_assert_int_eq(flaky_store_flip_counts(s, t, T0 + 86400000,
	    T0 + 2 * 86400000LL, &c, &n, err, sizeof err), 0);
	ck_assert_uint_eq(n, 0);
	free(c);
	sqlite3_close(db);
	flaky_store_close(s);
}
END_TEST

/* A token is shown once and kept as its hash; revoked by name or prefix;
 * names are unique among valid tokens. Uploads by key. */
START_TEST(tokens_and_uploads)
{
	struct flaky_store *s = open_store();
	sqlite3		*db = raw_open();
	struct flaky_token_row *v;
	char		*tok, *tok2, hash[FLAKY_TOKEN_HASH], err[512], q[256];
	int64_t		 id, up, *runs;
	size_t		 n;

	ck_assert_int_eq(flaky_store_token_create(s, "gha", FLAKY_SCOPE_UPLOAD,
	    T0, &tok, &id, err, sizeof err), 0);
	ck_assert_uint_eq(strlen(tok), FLAKY_TOKEN_LEN);
	ck_assert_int_eq(strncmp(tok, "flaky_", 6), 0);
	flaky_token_hash(tok, strlen(tok), hash);
	snprintf(q, sizeof q, "SELECT scope, prefix = substr('%s', 1, 10), "
	    "hash = '%s', instr(hash, '%s') FROM tokens", tok, hash, tok + 6);
	tu_rows_eq(db, q, "upload|1|1|0\n");
	ck_assert_int_eq(flaky_store_token_create(s, "gha", FLAKY_SCOPE_READ,
	    T0, &tok2, NULL, err, sizeof err), -EEXIST);
	ck_assert_int_eq(flaky_store_token_create(s, "dash", FLAKY_SCOPE_READ,
	    T0, &tok2, NULL, err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_token_hashes(s, &v, &n, err, sizeof err),
	    0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[0].name, hash);
	ck_assert_int_eq(v[0].scope, FLAKY_SCOPE_UPLOAD);
	flaky_token_rows_free(v, n);
	/* "flaky_" is every token's prefix: too short to name one */
	ck_assert_int_eq(flaky_store_token_revoke(s, "flaky_", T0, err,
	    sizeof err), -ENOENT);
	tok2[10] = '\0';
	ck_assert_int_eq(flaky_store_token_revoke(s, tok2, T0, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_token_revoke(s, "gha", T0, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_token_revoke(s, "gha", T0, err,
	    sizeof err), -ENOENT);
	ck_assert_int_eq(flaky_store_token_hashes(s, &v, &n, err, sizeof err),
	    0);
	ck_assert_uint_eq(n, 0);
	flaky_token_rows_free(v, n);
	free(tok2);
	ck_assert_int_eq(flaky_store_token_create(s, "gha", FLAKY_SCOPE_UPLOAD,
	    T0, &tok2, NULL, err, sizeof err) == 0 ? 0 : 1, 0);
	free(tok);
	free(tok2);

	ck_assert_int_eq(flaky_store_upload_find(s, "k1", &up, &runs, &n, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_upload_add(s, "k1", id, T0, 10, 1, &up,
	    err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_upload_add(s, "k1", id, T0, 10, 1, &up,
	    err, sizeof err), -EEXIST);
	ck_assert_int_eq(flaky_store_upload_done(s, up, T0, err, sizeof err),
	    0);
	ck_assert_int_eq(flaky_store_upload_find(s, "k1", &id, &runs, &n, err,
	    sizeof err), 1);
	ck_assert_int_eq(id, up);
	ck_assert_uint_eq(n, 0);
	free(runs);
	/* one never stored whole, with no run still running (its writer
	 * gone): forgotten, so that it may be stored again */
	ck_assert_int_eq(flaky_store_upload_add(s, "k2", 0, T0, 10, 1, &up,
	    err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_upload_find(s, "k2", &id, &runs, &n, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_upload_done(s, up, T0, err, sizeof err),
	    -ESTALE);
	ck_assert_int_eq(flaky_store_upload_add(s, "k2", 0, T0, 10, 1, &up,
	    err, sizeof err), 0);
	sqlite3_close(db);
	flaky_store_close(s);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("store_flips");
	TCase	*tc = tcase_create("store_flips");
	SRunner	*sr;
	int	 failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, flips_both_ways);
	tcase_add_test(tc, flips_history);
	tcase_add_test(tc, tokens_and_uploads);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
