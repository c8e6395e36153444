/* Ingest as a stream: the JUnit stream hands over what flaky_parse_junit_ex
 * returns whole, in any chunking, with the same errors; the store's ingest
 * writer leaves the rows, messages and rollups flaky_store_run_finish
 * leaves for the same results (duplicate ids numbered alike), and nothing
 * when rolled back. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "parse/parse.h"
#include "store/store.h"
#include "util/util.h"
#include "test_db.h"
#include "test_helper.h"

/* 2026-11-01T12:00:00Z */
#define T0	1793534400000LL

/* What a stream handed over, as flaky_parse_junit_ex would hold it. */
struct got {
	struct flaky_results	 res;
	struct flaky_junit_extra extra;
	int			 stop_at;	/* fail at this case, -1 never */
};

static int
collect(void *arg, const struct flaky_result *r, const struct flaky_attempt *a,
    size_t na, char *err, size_t errlen)
{
	struct got	*g = arg;
	struct flaky_result *v;

	if ((int)g->res.n == g->stop_at)
		return flaky_error(err, errlen, EIO, "stopped at %zu", g->res.n);
	ck_assert_uint_eq(r->position, g->res.n);
	g->res.v = realloc(g->res.v, (g->res.n + 1) * sizeof *g->res.v);
	ck_assert_ptr_nonnull(g->res.v);
	v = &g->res.v[g->res.n];
	*v = *r;
	v->test = strdup(r->test);
	v->message = r->message ? strdup(r->message) : NULL;
	v->signature = NULL;
	for (size_t i = 0; i < na; i++) {
		struct flaky_attempt *e;

		g->extra.attempts = realloc(g->extra.attempts,
		    (g->extra.nattempts + 1) * sizeof *g->extra.attempts);
		e = &g->extra.attempts[g->extra.nattempts++];
		*e = a[i];
		e->result = g->res.n;
		e->message = a[i].message ? strdup(a[i].message) : NULL;
	}
	g->res.n++;
	return 0;
}

/* Stream the file in chunks of `chunk` bytes; 0, or what feed or end
 * returned, with err filled. */
static int
stream_file(const char *rel, size_t chunk, struct got *g,
    struct flaky_junit_info *info, char *err, size_t errlen)
{
	struct flaky_junit_stream *js;
	char		 name[256];
	char		*s;
	size_t		 len, off = 0;
	int		 r = 0;

	snprintf(name, sizeof name, "%s/%s", FIXTURES, rel);
	s = tu_slurp(rel, &len);
	ck_assert_int_eq(flaky_junit_stream_new(&js, name, collect, g), 0);
	do {
		size_t	 n = len - off < chunk ? len - off : chunk;

		r = flaky_junit_stream_feed(js, s + off, n, off + n == len,
		    err, errlen);
		off += n;
	} while (r == 0 && off < len);
	if (r == 0)
		r = flaky_junit_stream_end(js, info, err, errlen);
	flaky_junit_stream_free(js);
	free(s);
	return r;
}

static void
got_free(struct got *g)
{
	flaky_results_free(&g->res);
	flaky_junit_extra_free(&g->extra);
}

/* The id of result i as the whole parse names it: the Nth time an id
 * comes, "ID #N" (the stream leaves that to its caller). */
static const char *
numbered(const struct flaky_results *r, size_t i)
{
	static char	 b[512];
	size_t		 n = 1;

	for (size_t j = 0; j < i; j++)
		n += strcmp(r->v[j].test, r->v[i].test) == 0;
	if (n == 1)
		return r->v[i].test;
	snprintf(b, sizeof b, "%s #%zu", r->v[i].test, n);
	return b;
}

static const char *const good[] = {
	"junit/pytest.xml", "junit/pytest-xunit1.xml", "junit/jest-junit.xml",
	"junit/surefire-flaky.xml", "junit/external-dtd.xml",
};
static const size_t chunks[] = { 1, 7, 4096, 1 << 20 };

/* Every result, message and attempt as the whole parse has them. */
START_TEST(stream_as_whole)
{
	struct flaky_results want;
	struct flaky_junit_extra wx;
	struct flaky_junit_info info;
	char		 path[256], err[512];

	snprintf(path, sizeof path, "%s/%s", FIXTURES, good[_i / 4]);
	ck_assert_msg(flaky_parse_junit_ex(path, &want, &wx, err,
	    sizeof err) == 0, "%s", err);
	{
		struct got g = { .stop_at = -1 };
		size_t	 c = (size_t)_i % 4;

		flaky_results_init(&g.res);
		ck_assert_msg(stream_file(good[_i / 4], chunks[c], &g, &info,
		    err, sizeof err) == 0, "%s", err);
		ck_assert_uint_eq(info.n, want.n);
		ck_assert_uint_eq(g.res.n, want.n);
		ck_assert_str_eq(info.runner, want.runner);
		ck_assert_int_eq(info.summary_total, want.summary_total);
		ck_assert_int_eq(info.timestamp_ms, wx.timestamp_ms);
		ck_assert_uint_eq(info.nattempts, wx.nattempts);
		for (size_t i = 0; i < want.n; i++) {
			ck_assert_str_eq(numbered(&g.res, i), want.v[i].test);
			ck_assert_int_eq(g.res.v[i].outcome,
			    want.v[i].outcome);
			ck_assert_int_eq(g.res.v[i].duration_us,
			    want.v[i].duration_us);
			ck_assert(tu_str_eq(g.res.v[i].message,
			    want.v[i].message));
		}
		ck_assert_uint_eq(g.extra.nattempts, wx.nattempts);
		for (size_t i = 0; i < wx.nattempts; i++) {
			ck_assert_uint_eq(g.extra.attempts[i].result,
			    wx.attempts[i].result);
			ck_assert_int_eq(g.extra.attempts[i].attempt,
			    wx.attempts[i].attempt);
			ck_assert_int_eq(g.extra.attempts[i].outcome,
			    wx.attempts[i].outcome);
			ck_assert(tu_str_eq(g.extra.attempts[i].message,
			    wx.attempts[i].message));
		}
		got_free(&g);
	}
	flaky_results_free(&want);
	flaky_junit_extra_free(&wx);
}
END_TEST

static const char *const bad[] = {
	"junit/billion-laughs.xml", "junit/external-entity.xml",
	"junit/param-entity.xml", "junit/truncated.xml", "junit/deep.xml",
	"junit/not-junit.xml",
};

/* Refused with the message of the whole parse (FILE:LINE:COL: ...). */
START_TEST(stream_refuses_alike)
{
	struct flaky_results want;
	struct flaky_junit_info info;
	struct got	 g = { .stop_at = -1 };
	char		 path[256], werr[512], err[512];
	int		 w, r;

	snprintf(path, sizeof path, "%s/%s", FIXTURES, bad[_i]);
	w = flaky_parse_junit(path, &want, werr, sizeof werr);
	ck_assert_int_lt(w, 0);
	flaky_results_init(&g.res);
	r = stream_file(bad[_i], 4096, &g, &info, err, sizeof err);
	ck_assert_int_eq(r, w);
	ck_assert_str_eq(err, werr);
	got_free(&g);
	flaky_results_free(&want);
}
END_TEST

/* A callback's error stops the parse: its code and message come back. */
START_TEST(stream_callback_stops)
{
	struct flaky_junit_info info;
	struct got	 g = { .stop_at = 2 };
	char		 err[512];

	flaky_results_init(&g.res);
	ck_assert_int_eq(stream_file("junit/pytest.xml", 3, &g, &info, err,
	    sizeof err), -EIO);
	ck_assert_str_eq(err, "stopped at 2");
	ck_assert_uint_eq(g.res.n, 2);
	got_free(&g);
}
END_TEST

static char	 dir[64];

static void
setup(void)
{
	tu_tmpdir(dir, sizeof dir, "ingest");
}

static void
teardown(void)
{
	tu_rmdir(dir);
}

/* The results of one run, ids as the runner gave them ("a" three times). */
static const struct {
	const char	*test;
	int		 outcome;
	int64_t		 us;
	const char	*msg;
} rows[] = {
	{ "a", FLAKY_PASS, 1000, NULL },
	{ "b", FLAKY_FAIL, 2000, "assert 1 == 2 at 0x7f00" },
	{ "a", FLAKY_FAIL, -1, "assert 3 == 4 at 0x7f08" },
	{ "c", FLAKY_SKIP, 0, NULL },
	{ "a", FLAKY_XPASS, 300000, NULL },
	{ "d", FLAKY_ERROR, 5, NULL },
};

static void
one(struct flaky_result *v, size_t i, const char *test)
{
	memset(v, 0, sizeof *v);
	v->test = (char *)test;
	v->outcome = rows[i].outcome;
	v->duration_us = rows[i].us;
	v->message = (char *)rows[i].msg;
	v->signature = FLAKY_FAILED(rows[i].outcome) ? "UNKNOWN" : NULL;
	v->position = (unsigned)i;
}

static struct flaky_store *
open_at(const char *name, int64_t *tid)
{
	struct flaky_store *s;
	char		 p[128], err[512];

	snprintf(p, sizeof p, "%s/%s", dir, name);
	ck_assert_msg(flaky_store_open(p, 0, &s, err, sizeof err) == 0, "%s",
	    err);
	ck_assert_int_eq(flaky_store_begin(s, err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_target(s, "t", NULL, NULL, tid, err,
	    sizeof err), 0);
	return s;
}

static void
record(struct flaky_run_record *rec)
{
	memset(rec, 0, sizeof *rec);
	rec->status = FLAKY_RUN_DONE;
	rec->trigger = "ingest";
	rec->started_ms = T0;
	rec->ended_ms = T0 + 1;
	rec->duration_us = 3000000;
	rec->user_us = 200000;
	rec->sys_us = 100000;
	rec->exit_code = 1;
	rec->loadavg = -1;
	rec->content_hash = "ingest:1";
	rec->kind = FLAKY_KIND_INGESTED;
}

static char *
dump(const char *name)
{
	struct flaky_buf b;
	sqlite3		*db;
	char		 p[128], *t;
	static const char *const q[] = {
		"SELECT id, status, trigger, started_ms, ended_ms, exit_code, "
		"runner, tests, failures, summary_total, content_hash, kind "
		"FROM runs",
		"SELECT id, name FROM tests ORDER BY id",
		"SELECT run_id, position, test_id, outcome, duration_us, "
		"message_id, signature, message FROM results",
		"SELECT id, fingerprint, normalized FROM messages",
		"SELECT test_id, day, runs, failures, skips, pass_us, fail_us, "
		"hex(pass_hist), hex(fail_hist) FROM rollups ORDER BY test_id",
		"SELECT day, test_id, box, runs, failures FROM box_rollups "
		"ORDER BY day, test_id, box",
		"SELECT day, test_id, runs, wall_us, cpu_us FROM budget "
		"ORDER BY day, test_id",
		"SELECT * FROM failure_rollups",
		"SELECT * FROM attempts",
	};

	snprintf(p, sizeof p, "%s/%s", dir, name);
	ck_assert_int_eq(sqlite3_open(p, &db), SQLITE_OK);
	flaky_buf_init(&b);
	for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
		t = tu_rows(db, q[i]);
		flaky_buf_printf(&b, "%s--\n", t);
		free(t);
	}
	sqlite3_close(db);
	return flaky_buf_steal(&b);
}

/* The same rows as flaky_store_run_finish (twice, so the rollups of an
 * existing day are added to). */
START_TEST(writer_as_run_finish)
{
	static const char *const dedup[] = { "a", "b", "a #2", "c", "a #3",
	    "d" };
	struct flaky_store *s;
	struct flaky_store_ingest *w;
	struct flaky_run_record rec;
	struct flaky_results res, meta;
	struct flaky_attempt att[2] = {
		{ 0, 0, FLAKY_FAIL, "first" }, { 0, 1, FLAKY_PASS, NULL },
	};
	int64_t		 tid;
	char		 err[512], *a, *b;
	size_t		 n = sizeof rows / sizeof rows[0];

	flaky_results_init(&res);
	res.v = calloc(n, sizeof *res.v);
	res.n = res.cap = n;
	snprintf(res.runner, sizeof res.runner, "junit");
	res.summary_total = 6;
	for (size_t i = 0; i < n; i++)
		one(&res.v[i], i, dedup[i]);
	s = open_at("whole.db", &tid);
	att[0].result = 1;
	for (int k = 0; k < 2; k++) {
		struct flaky_junit_extra x = { -1, att, 1, 1 };

		record(&rec);
		rec.target_id = tid;
		rec.content_hash = k ? "ingest:2" : "ingest:1";
		ck_assert_msg(flaky_store_run_finish(s, &rec, &res, err,
		    sizeof err) == 0, "%s", err);
		ck_assert_int_eq(flaky_store_add_attempts(s, rec.id, &res, &x,
		    err, sizeof err), 0);
	}
	ck_assert_int_eq(flaky_store_commit(s, err, sizeof err), 0);
	flaky_store_close(s);

	s = open_at("stream.db", &tid);
	meta = res;
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(flaky_store_ingest_start(s, tid, 0, &w, err,
		    sizeof err), 0);
		for (size_t i = 0; i < n; i++) {
			struct flaky_result v;

			one(&v, i, rows[i].test);
			ck_assert_msg(flaky_store_ingest_add(w, &v, att,
			    i == 1 ? 1 : 0, err, sizeof err) == 0, "%s", err);
		}
		record(&rec);
		rec.content_hash = k ? "ingest:2" : "ingest:1";
		ck_assert_msg(flaky_store_ingest_finish(w, &rec, &meta, err,
		    sizeof err) == 0, "%s", err);
		flaky_store_ingest_free(w);
	}
	ck_assert_int_eq(flaky_store_commit(s, err, sizeof err), 0);
	flaky_store_close(s);
	a = dump("whole.db");
	b = dump("stream.db");
	ck_assert_str_eq(b, a);
	ck_assert_ptr_nonnull(strstr(a, "|a #3\n"));
	/* the budget of both runs: b failed in each (3 s wall, 0.3 s CPU),
	 * and so did "a #2" and d */
	ck_assert_ptr_nonnull(strstr(a, "\n20758|2|2|6000000|600000\n"));
	/* and b's failures of one message, in a rates' run, newest run 2 */
	ck_assert_ptr_nonnull(strstr(a, "\n20758|2|1|1|UNKNOWN|2|2\n"));
	free(a);
	free(b);
	for (size_t i = 0; i < n; i++)
		res.v[i].test = res.v[i].message = res.v[i].signature = NULL;
	flaky_results_free(&res);
}
END_TEST

/* A run-level rule sets the signature of classified failures only; a
 * rollback leaves nothing, and start refuses outside a transaction. */
START_TEST(writer_resign_and_rollback)
{
	struct flaky_store *s;
	struct flaky_store_ingest *w;
	struct flaky_run_record rec;
	struct flaky_results meta;
	struct flaky_result v;
	int64_t		 tid;
	char		 err[512], p[128], *t;
	sqlite3		*db;

	s = open_at("r.db", &tid);
	ck_assert_int_eq(flaky_store_ingest_start(s, tid, T0, &w, err,
	    sizeof err), 0);
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		one(&v, i, rows[i].test);
		if (i == 5)
			v.signature = NULL;
		ck_assert_int_eq(flaky_store_ingest_add(w, &v, NULL, 0, err,
		    sizeof err), 0);
	}
	ck_assert_int_eq(flaky_store_ingest_resign(w, "INFRA", err,
	    sizeof err), 0);
	flaky_results_init(&meta);
	record(&rec);
	ck_assert_int_eq(flaky_store_ingest_finish(w, &rec, &meta, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_ingest_run(w), 1);
	flaky_store_ingest_free(w);
	ck_assert_int_eq(flaky_store_commit(s, err, sizeof err), 0);

	ck_assert_int_eq(flaky_store_ingest_start(s, tid, T0, &w, err,
	    sizeof err), -EINVAL);
	ck_assert_ptr_null(w);
	ck_assert_int_eq(flaky_store_begin(s, err, sizeof err), 0);
	ck_assert_int_eq(flaky_store_ingest_start(s, tid, T0, &w, err,
	    sizeof err), 0);
	one(&v, 0, "zz");
	ck_assert_int_eq(flaky_store_ingest_add(w, &v, NULL, 0, err,
	    sizeof err), 0);
	flaky_store_ingest_free(w);
	flaky_store_rollback(s);
	flaky_store_close(s);

	snprintf(p, sizeof p, "%s/r.db", dir);
	ck_assert_int_eq(sqlite3_open(p, &db), SQLITE_OK);
	tu_rows_eq(db, "SELECT position, signature FROM results "
	    "WHERE outcome IN (1, 2) ORDER BY position",
	    "1|INFRA\n2|INFRA\n5|NULL\n");
	tu_rows_eq(db, "SELECT count(*), sum(tests), sum(failures) FROM runs",
	    "1|6|3\n");
	t = tu_rows(db, "SELECT name FROM tests WHERE name = 'zz'");
	ck_assert_str_eq(t, "");
	free(t);
	sqlite3_close(db);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("ingest_stream");
	TCase	*tc = tcase_create("stream");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, stream_as_whole, 0,
	    (int)(sizeof good / sizeof good[0]) * 4);
	tcase_add_loop_test(tc, stream_refuses_alike, 0,
	    (int)(sizeof bad / sizeof bad[0]));
	tcase_add_test(tc, stream_callback_stops);
	suite_add_tcase(s, tc);
	tc = tcase_create("writer");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, writer_as_run_finish);
	tcase_add_test(tc, writer_resign_and_rollback);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
