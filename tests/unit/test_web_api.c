/* web, issue 28: the API's 400s as JSON naming the parameter and what it
 * takes (unknown parameters, one given twice, bad values), targets with
 * their ids, positions counted from 1 wherever they are shown, numbers in
 * their shortest exact form, and the box as a column and a filter of the
 * pages and the API, on a store of two boxes whose every count is known. */
#include "buildconf.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "parse/parse.h"
#include "store/store.h"
#include "test_helper.h"
#include "test_store_fixture.h"
#include "web/web.h"

static struct flaky_store *st;
static int64_t	 tid_fleet, tid_solo, run_a0, id_net;
static struct flaky_web_opts opts = { T0 + 3600000, NULL, 0 };

/* Target "fleet": 4 runs on box-a, where test_net fails in runs 0 and 2
 * (652.023 ms each), and 4 on box-b, where it passes; test_ok passes
 * everywhere and runs first. Target "solo": one run on box-b. */
static void
fixture(void)
{
	char	 err[256];

	setup();
	st = open_store();
	tid_fleet = target(st, "fleet");
	tid_solo = target(st, "solo");
	for (int i = 0; i < 8; i++) {
		struct flaky_results r;
		int	 fail = i < 4 && i % 2 == 0;
		int64_t	 id;

		ck_assert_msg(flaky_store_set_box(st, i < 4 ? "box-a" : "box-b",
		    err, sizeof err) == 0, "%s", err);
		flaky_results_init(&r);
		add(&r, "test_ok", FLAKY_PASS, 1000, NULL);
		add(&r, "test_net", fail ? FLAKY_FAIL : FLAKY_PASS, 652023,
		    fail ? "E connection reset" : NULL);
		id = store_run(st, tid_fleet, T0 + i * 60000, &r);
		flaky_results_free(&r);
		if (i == 0)
			run_a0 = id;
	}
	{
		struct flaky_results r;

		flaky_results_init(&r);
		add(&r, "test_alone", FLAKY_PASS, 1000, NULL);
		store_run(st, tid_solo, T0 + 9 * 60000, &r);
		flaky_results_free(&r);
	}
	ck_assert_msg(flaky_store_find_test(st, "fleet", "test_net", &id_net,
	    err, sizeof err) == 0, "%s", err);
	/* the server reads the boxes as stored: no local box of its own */
	ck_assert_int_eq(flaky_store_set_box(st, "reader", err, sizeof err),
	    0);
}

static void
unfixture(void)
{
	flaky_store_close(st);
	teardown();
}

/* GET path?query; the reply is the caller's to free. */
static void
get(const char *p, const char *query, struct flaky_web_reply *r)
{
	flaky_web_reply_init(r);
	ck_assert_int_eq(flaky_web_handle(st, &opts, p, query, r), 0);
	(void)flaky_buf_cstr(&r->body);
}

/* The JSON reply of GET path?query with its status, parsed. */
static struct flaky_json *
get_json(const char *p, const char *query, int status)
{
	struct flaky_web_reply r;
	struct flaky_json *j;
	char	 err[256];

	get(p, query, &r);
	ck_assert_msg(r.status == status, "%s?%s: %d %s", p, query, r.status,
	    r.body.data);
	ck_assert_str_eq(r.content_type, "application/json");
	ck_assert_msg(flaky_json_parse(r.body.data, r.body.len, NULL, &j, err,
	    sizeof err) == 0, "%s: %s", err, r.body.data);
	flaky_web_reply_free(&r);
	return j;
}

/* A 400 of the API names the parameter and what it takes. */
static void
bad(const char *p, const char *query, const char *param, const char *want)
{
	struct flaky_json *j = get_json(p, query, 400);
	const char *e = flaky_json_get_str(j, "expected");

	ck_assert_msg(tu_str_eq(flaky_json_get_str(j, "parameter"), param),
	    "%s?%s: parameter %s", p, query, flaky_json_get_str(j,
	    "parameter"));
	ck_assert_msg(e != NULL && strstr(e, want) != NULL, "%s?%s: expected "
	    "%s", p, query, e);
	ck_assert_ptr_nonnull(strstr(flaky_json_get_str(j, "error"), param));
	ck_assert(flaky_json_get_num(j, "status") == 400);
	flaky_json_free(j);
}

START_TEST(api_bad_requests)
{
	struct flaky_json *j;

	/* issue 28: ?tier=bogus was 200 with an empty list */
	bad("/api/v1/tests", "tier=bogus", "tier", "critical, warning");
	/* unknown parameters were ignored */
	bad("/api/v1/tests", "teir=critical", "teir", "target, tier, box, q, "
	    "branch, owner, signature, cluster or state");
	bad("/api/v1/targets", "x=1", "x", "no parameters");
	bad("/api/v1/run/1", "full=1", "full", "no parameters");
	bad("/api/v1/trend", "id=1&week=2", "week", "id or weeks");
	/* twice, or without a value */
	bad("/api/v1/tests", "tier=critical&tier=noise", "tier", "once");
	bad("/api/v1/tests", "tier", "tier", "a value");
	/* values */
	bad("/api/v1/tests", "target=nosuch", "target", "target of the "
	    "database");
	bad("/api/v1/tests", "box=box-z", "box", "one of the runs' boxes");
	bad("/api/v1/tests", "box=a%20b", "box", "one of the runs' boxes");
	bad("/api/v1/runs", "limit=0", "limit", "1 to 1000");
	bad("/api/v1/runs", "target_id=99999", "target_id", "/api/v1/targets");
	bad("/api/v1/runs", "target_id=x", "target_id", "/api/v1/targets");
	bad("/api/v1/trend", "id=x", "id", "test's id");
	bad("/api/v1/trend", NULL, "id", "test's id");
	bad("/api/v1/trend", "id=1&weeks=53", "weeks", "1 to 52");
	/* not found is JSON too, about no parameter */
	j = get_json("/api/v1/run/99999", NULL, 404);
	ck_assert_int_eq(flaky_json_get(j, "parameter")->type,
	    FLAKY_JSON_NULL);
	flaky_json_free(j);
	j = get_json("/api/v1/nope", NULL, 404);
	ck_assert_ptr_nonnull(strstr(flaky_json_get_str(j, "error"),
	    "targets, tests"));
	flaky_json_free(j);
	/* what the parameters take is still taken */
	j = get_json("/api/v1/tests", "tier=critical&target=fleet&box=box-a",
	    200);
	ck_assert_uint_eq(flaky_json_get(j, "tests")->len, 1);
	flaky_json_free(j);
}
END_TEST

/* /api/v1/targets has the id runs?target_id= takes. */
START_TEST(api_target_ids)
{
	struct flaky_json *j = get_json("/api/v1/targets", NULL, 200);
	const struct flaky_json *t = flaky_json_get(j, "targets"), *v;
	char	 q[64];

	ck_assert_uint_eq(t->len, 2);
	ck_assert_str_eq(flaky_json_get_str(&t->items[0], "target"), "fleet");
	ck_assert(flaky_json_get_num(&t->items[0], "id") == tid_fleet);
	ck_assert(flaky_json_get_num(&t->items[1], "id") == tid_solo);
	snprintf(q, sizeof q, "target_id=%.0f",
	    flaky_json_get_num(&t->items[1], "id"));
	flaky_json_free(j);
	j = get_json("/api/v1/runs", q, 200);
	v = flaky_json_get(j, "runs");
	ck_assert_uint_eq(v->len, 1);
	ck_assert_str_eq(flaky_json_get_str(&v->items[0], "target"), "solo");
	flaky_json_free(j);
}
END_TEST

/* Positions count from 1 in the API as on the pages: test_ok ran first. */
START_TEST(positions_from_one)
{
	struct flaky_web_reply r;
	struct flaky_json *j;
	const struct flaky_json *v;
	char	 p[64];

	snprintf(p, sizeof p, "/api/v1/run/%" PRId64, run_a0);
	j = get_json(p, NULL, 200);
	v = flaky_json_get(j, "results");
	ck_assert_str_eq(flaky_json_get_str(&v->items[0], "test"), "test_ok");
	ck_assert(flaky_json_get_num(&v->items[0], "position") == 1);
	ck_assert(flaky_json_get_num(&v->items[1], "position") == 2);
	flaky_json_free(j);
	snprintf(p, sizeof p, "/api/v1/test/%" PRId64, id_net);
	j = get_json(p, NULL, 200);
	v = flaky_json_get(j, "runs_newest");
	ck_assert_uint_eq(v->len, 8);
	for (size_t i = 0; i < v->len; i++)
		ck_assert(flaky_json_get_num(&v->items[i], "position") == 2);
	flaky_json_free(j);
	/* the pages say the same */
	snprintf(p, sizeof p, "/run/%" PRId64, run_a0);
	get(p, NULL, &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, "<tr><td class=\"num\">1</td>"
	    "<td class=\"id\"><a href=\"/test/"));
	ck_assert_ptr_null(strstr(r.body.data, "<tr><td class=\"num\">0</td>"));
	flaky_web_reply_free(&r);
	snprintf(p, sizeof p, "/test/%" PRId64, id_net);
	get(p, NULL, &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, "<td class=\"num\">2</td>"
	    "</tr>"));
	flaky_web_reply_free(&r);
}
END_TEST

/* Numbers as they are: 652023 us is 652.023 ms. */
START_TEST(api_numbers)
{
	struct flaky_web_reply r;
	char	 p[64];

	snprintf(p, sizeof p, "/api/v1/run/%" PRId64, run_a0);
	get(p, NULL, &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, "\"duration_ms\":652.023,"));
	ck_assert_ptr_null(strstr(r.body.data, "0000000"));
	flaky_web_reply_free(&r);
}
END_TEST

/* The test's row of /api/v1/tests?query. */
static struct flaky_json *
test_row(const char *query, const struct flaky_json **row)
{
	struct flaky_json *j = get_json("/api/v1/tests", query, 200);
	const struct flaky_json *v = flaky_json_get(j, "tests");

	*row = NULL;
	for (size_t i = 0; i < v->len; i++)
		if (tu_str_eq(flaky_json_get_str(&v->items[i], "test"),
		    "test_net"))
			*row = &v->items[i];
	ck_assert_ptr_nonnull(*row);
	return j;
}

/* The API's box filter keeps rates, budget and runs to one box; each
 * test has its rates per box. */
START_TEST(api_box)
{
	struct flaky_json *j;
	const struct flaky_json *t, *b;

	j = test_row(NULL, &t);
	ck_assert(flaky_json_get_num(t, "runs") == 8);
	ck_assert(flaky_json_get_num(t, "failures") == 2);
	ck_assert(flaky_json_get_num(t, "budget_runs") == 2);
	b = flaky_json_get(t, "boxes");
	ck_assert_uint_eq(b->len, 2);
	ck_assert_str_eq(flaky_json_get_str(&b->items[0], "box"), "box-a");
	ck_assert(flaky_json_get_num(&b->items[0], "failures") == 2);
	ck_assert(flaky_json_get_num(&b->items[0], "rate") == 0.5);
	ck_assert(flaky_json_get_num(&b->items[1], "failures") == 0);
	ck_assert_int_eq(flaky_json_get(j, "box")->type, FLAKY_JSON_NULL);
	flaky_json_free(j);
	j = test_row("box=box-b", &t);
	ck_assert_str_eq(flaky_json_get_str(j, "box"), "box-b");
	ck_assert(flaky_json_get_num(t, "runs") == 4);
	ck_assert(flaky_json_get_num(t, "failures") == 0);
	/* the fleet's budget was beside one box's rates */
	ck_assert(flaky_json_get_num(t, "budget_runs") == 0);
	ck_assert(flaky_json_get_num(t, "budget_s") == 0);
	flaky_json_free(j);
	j = test_row("box=box-a", &t);
	ck_assert(flaky_json_get_num(t, "failures") == 2);
	ck_assert(flaky_json_get_num(t, "budget_runs") == 2);
	ck_assert(flaky_json_get_num(t, "budget_s") == 3);
	flaky_json_free(j);
	j = get_json("/api/v1/runs", "box=box-a", 200);
	t = flaky_json_get(j, "runs");
	ck_assert_uint_eq(t->len, 4);
	for (size_t i = 0; i < t->len; i++)
		ck_assert_str_eq(flaky_json_get_str(&t->items[i], "box"),
		    "box-a");
	flaky_json_free(j);
}
END_TEST

/* How often needle occurs in hay. */
static size_t
count(const char *hay, const char *needle)
{
	size_t	 n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* The pages: a box column where runs are listed, the rates per box, and
 * ?box= on the overview and the tests. */
START_TEST(pages_box)
{
	struct flaky_web_reply r;
	char	 p[64];

	get("/", NULL, &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, "<th scope=\"col\">target"
	    "</th><th scope=\"col\">box</th>"));
	ck_assert_uint_eq(count(r.body.data, "<td>box-a</td>"), 4);
	ck_assert_ptr_nonnull(strstr(r.body.data, "<select name=\"box\">"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "<option value=\"box-b\">"));
	flaky_web_reply_free(&r);
	get("/", "box=box-b", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_uint_eq(count(r.body.data, "<td>box-a</td>"), 0);
	ck_assert_uint_eq(count(r.body.data, "<td>box-b</td>"), 5);
	ck_assert_ptr_nonnull(strstr(r.body.data, "<option value=\"box-b\" "
	    "selected>"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "runs of box box-b"));
	flaky_web_reply_free(&r);
	get("/tests", NULL, &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, "<th data-sort scope=\"col\">"
	    "<button type=\"button\">boxes</button></th>"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "50% on box-a (2/4), 0% on "
	    "box-b (0/4)"));
	flaky_web_reply_free(&r);
	get("/tests", "box=box-b", &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body.data, "0/4</td>"));
	ck_assert_ptr_null(strstr(r.body.data, "2/8</td>"));
	flaky_web_reply_free(&r);
	get("/tests", "box=box-z", &r);
	ck_assert_int_eq(r.status, 400);
	ck_assert_ptr_nonnull(strstr(r.body.data, "box-z"));
	flaky_web_reply_free(&r);
	snprintf(p, sizeof p, "/test/%" PRId64, id_net);
	get(p, NULL, &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, "<dt>boxes</dt><dd id="
	    "\"boxes\">50% on box-a (2/4), 0% on box-b (0/4)</dd>"));
	ck_assert_uint_eq(count(r.body.data, "<td>box-b</td>"), 4);
	flaky_web_reply_free(&r);
}
END_TEST

/* A count agrees with its noun (issue 28: "13 tests, 1 failures"):
 * "solo" ran once, one test. */
START_TEST(counts_and_nouns)
{
	struct flaky_web_reply r;
	char	 p[64];
	int64_t	 id;

	get("/", NULL, &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, ", 1 test, 0 failed</td>"));
	ck_assert_ptr_nonnull(strstr(r.body.data, ", 2 tests, 0 failed</td>"));
	flaky_web_reply_free(&r);
	ck_assert_int_eq(flaky_store_find_test(st, "solo", "test_alone", &id,
	    p, sizeof p), 0);
	snprintf(p, sizeof p, "/test/%" PRId64, id);
	get(p, NULL, &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, "0 of 1 run failed"));
	flaky_web_reply_free(&r);
	snprintf(p, sizeof p, "/test/%" PRId64, id_net);
	get(p, NULL, &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, "2 of 8 runs failed"));
	flaky_web_reply_free(&r);
	get("/run/9", NULL, &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, "1 result, 0 failed"));
	flaky_web_reply_free(&r);
	get("/tests", "target=solo", &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, "1</span> of 3 tests seen"));
	flaky_web_reply_free(&r);
	ck_assert_str_eq(flaky_plural(1), "");
	ck_assert_str_eq(flaky_plural(0), "s");
	ck_assert_str_eq(flaky_plural(13), "s");
	ck_assert_str_eq(flaky_plural_es(1), "");
	ck_assert_str_eq(flaky_plural_es(2), "es");
}
END_TEST

/* Which paths a method other than GET may be told 405 about. */
START_TEST(known_paths)
{
	static const char *const known[] = {
		"/", "/index.html", "/tests", "/test/1", "/test", "/run/x",
		"/healthz", "/metrics", "/api/v1/tests", "/api/v1/run/1",
		"/api/v1/targets", "/api/v1/trend",
	};
	static const char *const unknown[] = {
		"/nope", "/testing", "/api/v1/nope", "/api/v2/tests", "/api",
		"",
	};

	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		ck_assert_msg(flaky_web_path_known(known[i]), "%s", known[i]);
	for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
		ck_assert_msg(!flaky_web_path_known(unknown[i]), "%s",
		    unknown[i]);
}
END_TEST

static Suite *
web_api_suite(void)
{
	Suite	*s = suite_create("web_api");
	TCase	*tc = tcase_create("api");

	tcase_add_checked_fixture(tc, fixture, unfixture);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, api_bad_requests);
	tcase_add_test(tc, api_target_ids);
	tcase_add_test(tc, positions_from_one);
	tcase_add_test(tc, api_numbers);
	tcase_add_test(tc, api_box);
	tcase_add_test(tc, pages_box);
	tcase_add_test(tc, known_paths);
	tcase_add_test(tc, counts_and_nouns);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(web_api_suite());
	int	 nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
