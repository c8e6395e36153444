/* store and web, issue 33: a hung run's stacks stored with it (the fold
 * in run_stacks, each process's text compressed in stack_dumps), read
 * back whole, grouped by place over a test's timeouts, and shown on the
 * run and test pages and in the API. */
#include "buildconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify/classify.h"
#include "diagnose/diagnose.h"
#include "json/json.h"
#include "parse/parse.h"
#include "store/store.h"
#include "test_helper.h"
#include "test_store_fixture.h"
#include "web/web.h"

static struct flaky_store *st;
static int64_t	 tid, run_hung[3], run_calm, test_id;
static char	*big;		/* a dump worth compressing */
static struct flaky_web_opts opts = { T0 + 3600000, NULL, 0 };

/* A timeout of test_reply at started, its stacks hung in func (NULL:
 * only the call is known) and capture_ms to take. */
static int64_t
store_hung(int64_t started, const char *func, const char *call,
    int64_t capture_ms)
{
	struct flaky_run_record rec = { 0 };
	struct flaky_results r;
	struct flaky_stacks k = { 0 };
	struct flaky_stack_dump d[2] = { { 0 } };
	char	 err[512];

	flaky_results_init(&r);
	add(&r, "test_ping", FLAKY_PASS, 1000, NULL);
	add(&r, "test_reply", FLAKY_FAIL, 2000000, "no outcome: killed at "
	    "its time limit");
	d[0].pid = 100;
	d[0].ppid = 1;
	snprintf(d[0].runtime, sizeof d[0].runtime, "python");
	snprintf(d[0].tool, sizeof d[0].tool, "faulthandler");
	d[0].command = "python3 -m pytest";
	d[0].text = big;
	d[0].len = strlen(big);
	d[0].ms = capture_ms;
	d[1].pid = 101;
	snprintf(d[1].runtime, sizeof d[1].runtime, "native");
	d[1].note = "waits for its children";
	k.v = d;
	k.n = 2;
	k.ms = capture_ms;
	k.bound_ms = 10000;
	k.procs = 2;
	k.test = "test_reply";
	k.hang.kind = "blocked";
	k.hang.func = (char *)func;
	k.hang.file = func ? "test_client.py" : NULL;
	k.hang.line = func ? 27 : 0;
	k.hang.call = (char *)call;
	k.hang.code = func ? "return sock.recv(64)" : NULL;
	k.hang.site = func ? "wait_for_reply@test_client.py" : NULL;
	k.hang.frames = "> wait_for_reply (test_client.py:27)\n> test_reply "
	    "(test_client.py:48)\n  main (pytest.py:3)\n";
	k.hang.thread = "MainThread";
	rec.target_id = tid;
	rec.trigger = "analyze";
	rec.started_ms = started;
	rec.loadavg = -1;
	ck_assert_msg(flaky_store_run_start(st, &rec, err, sizeof err) == 0,
	    "%s", err);
	rec.status = FLAKY_RUN_TIMEOUT;
	rec.ended_ms = started + 3000;
	rec.duration_us = 3000000;
	rec.exit_code = -1;
	rec.signal = 9;
	rec.stacks = &k;
	ck_assert_int_eq(flaky_classify_results(NULL, &r, NULL), 0);
	ck_assert_msg(flaky_store_run_finish(st, &rec, &r, err, sizeof err) ==
	    0, "%s", err);
	flaky_results_free(&r);
	return rec.id;
}

static void
fixture(void)
{
	struct flaky_results r;
	struct flaky_buf b;
	char	 err[256];

	setup();
	st = open_store();
	tid = target(st, "t");
	flaky_buf_init(&b);
	for (int i = 0; i < 400; i++)
		flaky_buf_printf(&b, "  File \"/usr/lib/python3.11/x.py\", "
		    "line %d in f\n", i);
	big = strdup(flaky_buf_cstr(&b));
	flaky_buf_free(&b);
	run_hung[0] = store_hung(T0, "wait_for_reply", NULL, 80);
	flaky_results_init(&r);
	add(&r, "test_ping", FLAKY_PASS, 1000, NULL);
	add(&r, "test_reply", FLAKY_PASS, 1000, NULL);
	run_calm = store_run(st, tid, T0 + 60000, &r);
	flaky_results_free(&r);
	run_hung[1] = store_hung(T0 + 120000, "wait_for_reply", NULL, 120);
	run_hung[2] = store_hung(T0 + 180000, NULL, "socket.recv", 900);
	ck_assert_msg(flaky_store_find_test(st, "t", "test_reply", &test_id,
	    err, sizeof err) == 0, "%s", err);
}

static void
unfixture(void)
{
	flaky_store_close(st);
	free(big);
	teardown();
}

/* A run's stacks read back as stored: the fold, the test, every dump. */
START_TEST(run_stacks_round_trip)
{
	struct flaky_stacks *k;
	char	 err[256];
	sqlite3	*db;
	sqlite3_stmt *q;

	ck_assert_int_eq(flaky_store_run_stacks(st, run_hung[0], &k, err,
	    sizeof err), 0);
	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(k->ms, 80);
	ck_assert_int_eq(k->bound_ms, 10000);
	ck_assert_int_eq(k->procs, 2);
	ck_assert_str_eq(k->test_name, "test_reply");
	ck_assert_str_eq(k->hang.func, "wait_for_reply");
	ck_assert_int_eq(k->hang.line, 27);
	ck_assert_str_eq(k->hang.code, "return sock.recv(64)");
	ck_assert_str_eq(k->hang.thread, "MainThread");
	ck_assert_uint_eq(k->n, 2);
	ck_assert_int_eq(k->v[0].pid, 100);
	ck_assert_str_eq(k->v[0].tool, "faulthandler");
	ck_assert_str_eq(k->v[0].command, "python3 -m pytest");
	ck_assert_uint_eq(k->v[0].len, strlen(big));
	ck_assert_str_eq(k->v[0].text, big);
	ck_assert_ptr_null(k->v[1].text);
	ck_assert_str_eq(k->v[1].note, "waits for its children");
	flaky_stacks_free(k);
	/* a run without stacks has none */
	ck_assert_int_eq(flaky_store_run_stacks(st, run_calm, &k, err,
	    sizeof err), 0);
	ck_assert_ptr_null(k);
	/* compressed as outputs are: smaller than the text */
	db = raw_open();
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT length(data), size "
	    "FROM stack_dumps WHERE run_id = ?1 AND pid = 100", -1, &q, NULL),
	    SQLITE_OK);
	sqlite3_bind_int64(q, 1, run_hung[0]);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	ck_assert_int_lt(sqlite3_column_int64(q, 0), sqlite3_column_int64(q,
	    1) / 4);
	sqlite3_finalize(q);
	sqlite3_close(db);
}
END_TEST

/* Over the window: each place with its count, most first; the capture's
 * cost; the newest hung thread. */
START_TEST(test_hangs_grouped)
{
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0, 0, NULL };
	struct flaky_hangs h;
	struct flaky_buf b;
	char	 err[256];

	ck_assert_int_eq(flaky_store_test_hangs(st, test_id, &q, &h, err,
	    sizeof err), 0);
	ck_assert_int_eq(h.runs, 3);
	ck_assert_uint_eq(h.n, 2);
	ck_assert_str_eq(h.v[0].func, "wait_for_reply");
	ck_assert_int_eq(h.v[0].count, 2);
	ck_assert_int_eq(h.v[0].run_id, run_hung[1]);
	ck_assert_ptr_null(h.v[1].func);
	ck_assert_str_eq(h.v[1].call, "socket.recv");
	ck_assert_int_eq(h.v[1].count, 1);
	ck_assert_int_eq(h.capture_ms_median, 120);
	ck_assert_int_eq(h.capture_ms_max, 900);
	ck_assert_int_eq(h.newest_run, run_hung[2]);
	flaky_buf_init(&b);
	flaky_hang_words(&h, &b);
	ck_assert_str_eq(flaky_buf_cstr(&b), "hung in `wait_for_reply` "
	    "(test_client.py:27) in 2 of 3 timeouts; 1 in `socket.recv`");
	flaky_buf_free(&b);
	flaky_hangs_clear(&h);
	/* the window: only the first run */
	q.until_ms = T0 + 1;
	ck_assert_int_eq(flaky_store_test_hangs(st, test_id, &q, &h, err,
	    sizeof err), 0);
	ck_assert_int_eq(h.runs, 1);
	flaky_hangs_clear(&h);
}
END_TEST

/* GET path; the reply's body (the caller frees the reply). */
static void
get(const char *p, int status, struct flaky_web_reply *r)
{
	flaky_web_reply_init(r);
	ck_assert_int_eq(flaky_web_handle(st, &opts, p, "", r), 0);
	ck_assert_msg(r->status == status, "%s: %d", p, r->status);
	(void)flaky_buf_cstr(&r->body);
}

/* The API and the pages. */
START_TEST(web_shows_stacks)
{
	struct flaky_web_reply r;
	struct flaky_json *j;
	const struct flaky_json *s, *d, *h;
	char	 p[64], err[256];

	snprintf(p, sizeof p, "/api/v1/run/%lld", (long long)run_hung[0]);
	get(p, 200, &r);
	ck_assert_int_eq(flaky_json_parse(r.body.data, r.body.len, NULL, &j,
	    err, sizeof err), 0);
	s = flaky_json_get(j, "stacks");
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(flaky_json_get_str(s, "function"), "wait_for_reply");
	ck_assert_str_eq(flaky_json_get_str(s, "test"), "test_reply");
	ck_assert(flaky_json_get_num(s, "capture_ms") == 80);
	d = flaky_json_get(s, "dumps");
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d->len, 2);
	ck_assert_str_eq(flaky_json_get_str(&d->items[0], "text"), big);
	flaky_json_free(j);
	flaky_web_reply_free(&r);

	snprintf(p, sizeof p, "/api/v1/run/%lld", (long long)run_calm);
	get(p, 200, &r);
	ck_assert_int_eq(flaky_json_parse(r.body.data, r.body.len, NULL, &j,
	    err, sizeof err), 0);
	ck_assert_int_eq(flaky_json_get(j, "stacks")->type, FLAKY_JSON_NULL);
	flaky_json_free(j);
	flaky_web_reply_free(&r);

	snprintf(p, sizeof p, "/api/v1/test/%lld", (long long)test_id);
	get(p, 200, &r);
	ck_assert_int_eq(flaky_json_parse(r.body.data, r.body.len, NULL, &j,
	    err, sizeof err), 0);
	h = flaky_json_get(j, "hangs");
	ck_assert_ptr_nonnull(h);
	ck_assert(flaky_json_get_num(h, "timeouts") == 3);
	ck_assert_str_eq(flaky_json_get_str(h, "summary"), "hung in "
	    "`wait_for_reply` (test_client.py:27) in 2 of 3 timeouts; 1 in "
	    "`socket.recv`");
	flaky_json_free(j);
	flaky_web_reply_free(&r);

	snprintf(p, sizeof p, "/run/%lld", (long long)run_hung[0]);
	get(p, 200, &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, "Stacks at the time limit"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "pid 100 (python, "
	    "faulthandler, 80 ms): python3 -m pytest"));
	flaky_web_reply_free(&r);
	snprintf(p, sizeof p, "/test/%lld", (long long)test_id);
	get(p, 200, &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, "<h2>Where it hung</h2>"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "&gt; wait_for_reply "
	    "(test_client.py:27)"));
	flaky_web_reply_free(&r);
}
END_TEST

static Suite *
suite(void)
{
	Suite	*s = suite_create("store_stacks");
	TCase	*tc = tcase_create("store_stacks");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, fixture, unfixture);
	tcase_add_test(tc, run_stacks_round_trip);
	tcase_add_test(tc, test_hangs_grouped);
	tcase_add_test(tc, web_shows_stacks);
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
