/* web: the dashboard's renderer without a socket: routing and its 400 and
 * 404 replies, the one escaper against hostile ids, each page's key
 * content and the API's JSON on a small store whose every count is known,
 * and report --html's one file. */
#include "buildconf.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "diagnose/diagnose.h"
#include "json/json.h"
#include "parse/parse.h"
#include "store/store.h"
#include "test_helper.h"
#include "test_store_fixture.h"
#include "web/web.h"
#include "web/web_int.h"

#define HOSTILE		"<script>alert(1)</script>"
#define QUOTES		"t.q\"uo'te&amp"
#define CTRL		"t.ctl\001\033[31mred\177"

static struct flaky_store *st;
static int64_t	 run_a, run_b, id_hostile, id_same_a, id_same_b;
static struct flaky_web_opts opts = { T0 + 3600000, NULL, 0 };

/* A test's id by target and name. */
static int64_t
test_id(const char *tgt, const char *name)
{
	int64_t	 id;
	char	 err[256];

	ck_assert_msg(flaky_store_find_test(st, tgt, name, &id, err,
	    sizeof err) == 0, "%s", err);
	return id;
}

/* Two targets, one day: in "web<1>" a hostile id failing 2 of 3 runs, a
 * quoted one and one with control bytes passing; "same" in both targets
 * (one failing, one not). */
static void
fixture(void)
{
	int64_t	 ta, tb;
	char	 err[256];

	setup();
	st = open_store();
	ta = target(st, "web<1>");
	tb = target(st, "other");
	for (int i = 0; i < 3; i++) {
		struct flaky_results r, q;

		flaky_results_init(&r);
		add(&r, QUOTES, FLAKY_PASS, 1000, NULL);
		add(&r, HOSTILE, i < 2 ? FLAKY_FAIL : FLAKY_PASS, 2000,
		    i < 2 ? "AssertionError: <b>boom</b> \"x\"" : NULL);
		add(&r, CTRL, FLAKY_PASS, 3000, NULL);
		add(&r, "same", FLAKY_FAIL, 4000, "E same");
		run_a = store_run(st, ta, T0 + i * 60000, &r);
		flaky_results_free(&r);
		flaky_results_init(&q);
		add(&q, "same", FLAKY_PASS, 5000, NULL);
		run_b = store_run(st, tb, T0 + i * 60000 + 1000, &q);
		flaky_results_free(&q);
	}
	id_hostile = test_id("web<1>", HOSTILE);
	id_same_a = test_id("web<1>", "same");
	id_same_b = test_id("other", "same");
	ck_assert_msg(flaky_store_quarantine_add(st, id_same_a, "tracked",
	    "T-1", T0, err, sizeof err) == 0, "%s", err);
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

/* The status of GET path?query. */
static int
status_of(const char *p, const char *query)
{
	struct flaky_web_reply r;
	int	 s;

	get(p, query, &r);
	s = r.status;
	ck_assert_msg(strchr(r.body.data, '\n') == r.body.data + r.body.len - 1
	    || s == 200, "a failure is one line: %s", r.body.data);
	flaky_web_reply_free(&r);
	return s;
}

/* How often needle occurs in hay. */
static size_t
count(const char *hay, const char *needle)
{
	size_t	 n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* No stored string escaped its escaping: the only script element is the
 * page's own, no raw control byte, the hostile id only as text. */
static void
assert_clean(const char *html)
{
	ck_assert_uint_le(count(html, "<script"), 1);
	ck_assert_ptr_null(strstr(html, "alert(1)</script>"));
	ck_assert_ptr_null(strstr(html, "<b>boom"));
	ck_assert_ptr_null(strchr(html, '\001'));
	ck_assert_ptr_null(strchr(html, '\033'));
	ck_assert_ptr_null(strchr(html, '\177'));
	ck_assert_ptr_null(strstr(html, "q\"uo"));
	ck_assert_ptr_null(strstr(html, "http://"));
	ck_assert_ptr_null(strstr(html, "https://"));
}

START_TEST(escape_hostile)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	web_esc(&b, HOSTILE);
	ck_assert_str_eq(flaky_buf_cstr(&b),
	    "&lt;script&gt;alert(1)&lt;/script&gt;");
	flaky_buf_reset(&b);
	web_esc(&b, QUOTES);
	ck_assert_str_eq(flaky_buf_cstr(&b), "t.q&quot;uo&#39;te&amp;amp");
	flaky_buf_reset(&b);
	web_esc(&b, CTRL);
	ck_assert_str_eq(flaky_buf_cstr(&b), "t.ctl&#xFFFD;&#xFFFD;[31mred"
	    "&#xFFFD;");
	flaky_buf_reset(&b);
	web_escn(&b, "a\tb\nc\0d", 7);
	ck_assert_uint_eq(b.len, 14);
	ck_assert_mem_eq(b.data, "a\tb\nc&#x", 8);
	flaky_buf_reset(&b);
	web_esc(&b, NULL);
	ck_assert_uint_eq(b.len, 0);
	web_urlenc(&b, "a b/<x>&");
	ck_assert_str_eq(flaky_buf_cstr(&b), "a%20b%2F%3Cx%3E%26");
	flaky_buf_free(&b);
}
END_TEST

START_TEST(query_params)
{
	char	 v[16];

	ck_assert_int_eq(web_param("a=1&target=x%3Cy&q=a+b", "target", v,
	    sizeof v), 1);
	ck_assert_str_eq(v, "x<y");
	ck_assert_int_eq(web_param("a=1&target=x%3Cy&q=a+b", "q", v,
	    sizeof v), 1);
	ck_assert_str_eq(v, "a b");
	ck_assert_int_eq(web_param("xtarget=1", "target", v, sizeof v), 0);
	ck_assert_int_eq(web_param(NULL, "target", v, sizeof v), 0);
	ck_assert_int_eq(web_param("q=%zz", "q", v, sizeof v), -1);
	ck_assert_int_eq(web_param("q=%4", "q", v, sizeof v), -1);
	ck_assert_int_eq(web_param("q=%00", "q", v, sizeof v), -1);
	ck_assert_int_eq(web_param("q=0123456789abcdef", "q", v, sizeof v),
	    -1);
	ck_assert_int_eq(web_param("q=", "q", v, sizeof v), 1);
	ck_assert_str_eq(v, "");
}
END_TEST

START_TEST(routing)
{
	char	 p[64];

	ck_assert_int_eq(status_of("/healthz", NULL), 200);
	ck_assert_int_eq(status_of("/", NULL), 200);
	ck_assert_int_eq(status_of("/tests", NULL), 200);
	ck_assert_int_eq(status_of("/nope", NULL), 404);
	ck_assert_int_eq(status_of("/testing", NULL), 404);
	ck_assert_int_eq(status_of("/test/abc", NULL), 400);
	ck_assert_int_eq(status_of("/test/0", NULL), 400);
	ck_assert_int_eq(status_of("/test/-1", NULL), 400);
	ck_assert_int_eq(status_of("/test/12x", NULL), 400);
	ck_assert_int_eq(status_of("/test", NULL), 400);
	ck_assert_int_eq(status_of("/test", "id=%zz"), 400);
	ck_assert_int_eq(status_of("/test/99999", NULL), 404);
	ck_assert_int_eq(status_of("/run/99999", NULL), 404);
	ck_assert_int_eq(status_of("/run/x", NULL), 400);
	ck_assert_int_eq(status_of("/tests", "tier=bogus"), 400);
	ck_assert_int_eq(status_of("/api/v1/nope", NULL), 404);
	ck_assert_int_eq(status_of("/api/v1/run/x", NULL), 400);
	ck_assert_int_eq(status_of("/api/v1/test/0", NULL), 400);
	ck_assert_int_eq(status_of("/api/v1/test/99999", NULL), 404);
	ck_assert_int_eq(status_of("/api/v1/run/99999", NULL), 404);
	ck_assert_int_eq(status_of("/api/v1/runs", "limit=0"), 400);
	ck_assert_int_eq(status_of("/api/v1/trend", NULL), 400);
	ck_assert_int_eq(status_of("/api/v1/trend", "id=99999"), 404);
	snprintf(p, sizeof p, "/test/%" PRId64, id_hostile);
	ck_assert_int_eq(status_of(p, NULL), 200);
	snprintf(p, sizeof p, "id=%" PRId64, id_hostile);
	ck_assert_int_eq(status_of("/test", p), 200);
	snprintf(p, sizeof p, "/run/%" PRId64, run_a);
	ck_assert_int_eq(status_of(p, NULL), 200);
}
END_TEST

START_TEST(healthz_and_types)
{
	struct flaky_web_reply r;

	get("/healthz", NULL, &r);
	ck_assert_str_eq(r.body.data, "ok\n");
	ck_assert_str_eq(r.content_type, "text/plain; charset=utf-8");
	flaky_web_reply_free(&r);
	get("/", NULL, &r);
	ck_assert_str_eq(r.content_type, "text/html; charset=utf-8");
	flaky_web_reply_free(&r);
	get("/api/v1/tests", NULL, &r);
	ck_assert_str_eq(r.content_type, "application/json");
	flaky_web_reply_free(&r);
	get("/nope", NULL, &r);
	ck_assert_str_eq(r.content_type, "text/plain; charset=utf-8");
	ck_assert_str_eq(r.body.data, "not found\n");
	flaky_web_reply_free(&r);
}
END_TEST

START_TEST(page_overview)
{
	struct flaky_web_target t[] = {
		{ "web<1>", "*/5 * * * *", T0 + 7200000 },
	};
	struct flaky_web_reply r;

	opts.targets = t;
	opts.ntargets = 1;
	get("/", NULL, &r);
	opts.targets = NULL;
	opts.ntargets = 0;
	ck_assert_int_eq(r.status, 200);
	assert_clean(r.body.data);
	ck_assert_ptr_nonnull(strstr(r.body.data, "web&lt;1&gt;"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "*/5 * * * *"));
	/* a time on one line: a date is not broken at its hyphens */
	ck_assert_ptr_nonnull(strstr(r.body.data,
	    "<span class=\"nw\">2026-11-01 14:00:00</span>"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "id=\"tier-chart\""));
	ck_assert_ptr_nonnull(strstr(r.body.data, "critical above 20%"));
	/* the hostile test (2 of 3, no failure before): new this week */
	ck_assert_ptr_nonnull(strstr(r.body.data, "<li><a href=\"/test/"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "id=\"budget\""));
	ck_assert_ptr_nonnull(strstr(r.body.data, "href=\"/run/"));
	flaky_web_reply_free(&r);
}
END_TEST

START_TEST(page_tests_filters)
{
	struct flaky_web_reply r;
	char	 a[64], b[64];

	snprintf(a, sizeof a, "href=\"/test/%" PRId64 "\"", id_same_a);
	snprintf(b, sizeof b, "href=\"/test/%" PRId64 "\"", id_same_b);
	get("/tests", NULL, &r);
	assert_clean(r.body.data);
	/* one row per test, the same name in two targets two rows */
	ck_assert_uint_eq(count(r.body.data, "<tr data-target="), 5);
	ck_assert_ptr_nonnull(strstr(r.body.data, a));
	ck_assert_ptr_nonnull(strstr(r.body.data, b));
	/* a line may break after the id's '/' (<wbr>), nowhere else */
	ck_assert_ptr_nonnull(strstr(r.body.data, "&lt;script&gt;alert(1)"
	    "&lt;/<wbr>script&gt;</a>"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "66.7%"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "quarantined"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "<th data-sort scope=\"col\">"
	    "<button type=\"button\">"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "id=\"filters\""));
	flaky_web_reply_free(&r);
	/* the filters as query parameters */
	get("/tests", "target=other", &r);
	ck_assert_uint_eq(count(r.body.data, "<tr data-target="), 1);
	ck_assert_ptr_nonnull(strstr(r.body.data, b));
	ck_assert_ptr_null(strstr(r.body.data, a));
	flaky_web_reply_free(&r);
	get("/tests", "target=web%3C1%3E&tier=critical", &r);
	ck_assert_uint_eq(count(r.body.data, "<tr data-target="), 1);
	ck_assert_ptr_nonnull(strstr(r.body.data, "alert(1)"));
	flaky_web_reply_free(&r);
	get("/tests", "tier=broken", &r);
	ck_assert_uint_eq(count(r.body.data, "<tr data-target="), 1);
	ck_assert_ptr_nonnull(strstr(r.body.data, a));
	flaky_web_reply_free(&r);
	get("/tests", "q=ctl", &r);
	ck_assert_uint_eq(count(r.body.data, "<tr data-target="), 1);
	flaky_web_reply_free(&r);
}
END_TEST

START_TEST(page_test)
{
	struct flaky_web_reply r;
	char	 p[64];

	snprintf(p, sizeof p, "/test/%" PRId64, id_hostile);
	get(p, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	assert_clean(r.body.data);
	ck_assert_ptr_nonnull(strstr(r.body.data, "<h1>&lt;script&gt;"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "2 of 3 runs failed"));
	/* one day of data: a chart with that day on its axis and a legend */
	ck_assert_ptr_nonnull(strstr(r.body.data, "id=\"rate-chart\""));
	ck_assert_ptr_nonnull(strstr(r.body.data, "class=\"date\""));
	ck_assert_ptr_nonnull(strstr(r.body.data, ">2026-11-01</span>"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "95% interval (Wilson)"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "class=\"band\""));
	/* runs linking to their pages, failures grouped */
	snprintf(p, sizeof p, "href=\"/run/%" PRId64 "\"", run_a);
	ck_assert_ptr_nonnull(strstr(r.body.data, p));
	ck_assert_uint_eq(count(r.body.data, "<td class=\"fail\">fail</td>"),
	    2);
	ck_assert_ptr_nonnull(strstr(r.body.data, "id=\"modes\""));
	ck_assert_ptr_nonnull(strstr(r.body.data, "&lt;b&gt;boom"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "data-copy=\"ticket-"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "not quarantined"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "id=\"alone\">none"));
	flaky_web_reply_free(&r);
	snprintf(p, sizeof p, "/test/%" PRId64, id_same_a);
	get(p, NULL, &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, "quarantined since"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "tracked"));
	flaky_web_reply_free(&r);
}
END_TEST

/* The HTML text of s up to the next '<' with web_escn's entities
 * decoded. */
static void
unescape(struct flaky_buf *b, const char *s)
{
	static const struct {
		const char	*ent, *c;
	} ents[] = {
		{ "&amp;", "&" }, { "&lt;", "<" }, { "&gt;", ">" },
		{ "&quot;", "\"" }, { "&#39;", "'" },
		{ "&#xFFFD;", "\xef\xbf\xbd" },
	};
	size_t	 i;

	while (*s != '\0' && *s != '<') {
		for (i = 0; i < FLAKY_ARRAY_SIZE(ents); i++)
			if (strncmp(s, ents[i].ent, strlen(ents[i].ent)) == 0)
				break;
		if (i == FLAKY_ARRAY_SIZE(ents)) {
			ck_assert_msg(*s != '&', "an entity the escaper does "
			    "not write: %.10s", s);
			flaky_buf_addc(b, *s++);
			continue;
		}
		flaky_buf_adds(b, ents[i].c);
		s += strlen(ents[i].ent);
	}
	ck_assert_int_eq(*s, '<');
}

/* The ticket on a test's page is flakyctl ticket's, byte for byte once
 * unescaped: the one function writes both, with the smallest polluter the
 * store holds. */
START_TEST(page_ticket_is_flakyctls)
{
	struct flaky_web_reply r;
	struct flaky_polluter_row pr = { 0 };
	struct flaky_diagnosis *d = NULL;
	struct flaky_buf want, got;
	struct web_ctx c = { 0 };
	const char *pre;
	char	 p[64], err[256];

	pr.test_id = id_hostile;
	pr.from_run_id = run_a;
	pr.candidates = 1;
	pr.members = QUOTES;
	pr.reruns = 4;
	pr.minimal = 1;
	pr.command = "pytest '" HOSTILE "'";
	ck_assert_msg(flaky_store_polluter_put(st, &pr, err, sizeof err) == 0,
	    "%s", err);
	web_window(&c, opts.now_ms);
	ck_assert_msg(flaky_diagnose_test(st, id_hostile, &c.q, &d, err,
	    sizeof err) == 0, "%s", err);
	flaky_buf_init(&want);
	flaky_buf_init(&got);
	ck_assert_int_eq(flaky_ticket_markdown(st, d, NULL, &want), 0);
	ck_assert_ptr_nonnull(strstr(flaky_buf_cstr(&want),
	    "### Smallest polluter"));
	ck_assert_ptr_nonnull(strstr(want.data, "### Reproduce"));

	snprintf(p, sizeof p, "/test/%" PRId64, id_hostile);
	get(p, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	assert_clean(r.body.data);
	pre = strstr(r.body.data, "class=\"ticket\">");
	ck_assert_ptr_nonnull(pre);
	unescape(&got, strchr(pre, '>') + 1);
	ck_assert_str_eq(flaky_buf_cstr(&got), want.data);
	flaky_web_reply_free(&r);
	flaky_buf_free(&want);
	flaky_buf_free(&got);
	flaky_diagnosis_free(d);
}
END_TEST

START_TEST(page_run)
{
	struct flaky_web_reply r;
	char	 p[64];

	snprintf(p, sizeof p, "/run/%" PRId64, run_a);
	get(p, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	assert_clean(r.body.data);
	ck_assert_ptr_nonnull(strstr(r.body.data, "<dt>exit code</dt><dd>1"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "1.5 s"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "collected 4 items"));
	/* the tests in their order, the third run: all but same pass */
	ck_assert_uint_eq(count(r.body.data, "<td class=\"num\">"), 8);
	ck_assert(strstr(r.body.data, "t.q&quot;uo") <
	    strstr(r.body.data, "&lt;script&gt;"));
	ck_assert(strstr(r.body.data, "&lt;script&gt;") <
	    strstr(r.body.data, "t.<wbr>ctl"));
	ck_assert_uint_eq(count(r.body.data, "class=\"pass\">pass"), 3);
	ck_assert_uint_eq(count(r.body.data, "class=\"fail\">fail"), 1);
	flaky_web_reply_free(&r);
}
END_TEST

/* The JSON of GET path?query, parsed. */
static struct flaky_json *
get_json(const char *p, const char *query)
{
	struct flaky_web_reply r;
	struct flaky_json *j;
	char	 err[256];

	get(p, query, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_msg(flaky_json_parse(r.body.data, r.body.len, NULL, &j, err,
	    sizeof err) == 0, "%s: %s", err, r.body.data);
	flaky_web_reply_free(&r);
	return j;
}

START_TEST(api)
{
	struct flaky_json *j;
	const struct flaky_json *v, *t = NULL;
	char	 p[64];

	j = get_json("/api/v1/tests", NULL);
	v = flaky_json_get(j, "tests");
	ck_assert_uint_eq(v->len, 5);
	for (size_t i = 0; i < v->len; i++)
		if (tu_str_eq(flaky_json_get_str(&v->items[i], "test"),
		    HOSTILE))
			t = &v->items[i];
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(flaky_json_get_str(t, "target"), "web<1>");
	ck_assert(flaky_json_get_num(t, "runs") == 3);
	ck_assert(flaky_json_get_num(t, "failures") == 2);
	ck_assert(flaky_json_get_num(t, "id") == id_hostile);
	ck_assert_str_eq(flaky_json_get_str(t, "tier"), "critical");
	ck_assert(flaky_json_get_num(t, "ci_low") > 0.2);
	flaky_json_free(j);
	j = get_json("/api/v1/tests", "tier=broken");
	ck_assert_uint_eq(flaky_json_get(j, "tests")->len, 1);
	flaky_json_free(j);

	snprintf(p, sizeof p, "/api/v1/run/%" PRId64, run_a);
	j = get_json(p, NULL);
	ck_assert(flaky_json_get_num(j, "exit_code") == 1);
	ck_assert_str_eq(flaky_json_get_str(j, "stdout"),
	    "collected 4 items\n");
	v = flaky_json_get(j, "results");
	ck_assert_uint_eq(v->len, 4);
	ck_assert_str_eq(flaky_json_get_str(&v->items[2], "test"), CTRL);
	flaky_json_free(j);

	snprintf(p, sizeof p, "/api/v1/test/%" PRId64, id_hostile);
	j = get_json(p, NULL);
	ck_assert(flaky_json_get_num(j, "failures") == 2);
	ck_assert_uint_eq(flaky_json_get(j, "runs_newest")->len, 3);
	ck_assert_uint_eq(flaky_json_get(j, "failure_modes")->len, 1);
	flaky_json_free(j);

	j = get_json("/api/v1/targets", NULL);
	ck_assert_uint_eq(flaky_json_get(j, "targets")->len, 2);
	flaky_json_free(j);
	j = get_json("/api/v1/runs", "limit=4");
	v = flaky_json_get(j, "runs");
	ck_assert_uint_eq(v->len, 4);
	ck_assert(flaky_json_get_num(&v->items[0], "id") == run_b);
	flaky_json_free(j);

	snprintf(p, sizeof p, "id=%" PRId64 "&weeks=2", id_hostile);
	j = get_json("/api/v1/trend", p);
	v = flaky_json_get(j, "weeks");
	ck_assert_uint_eq(v->len, 2);
	ck_assert(flaky_json_get_num(&v->items[1], "runs") == 3);
	ck_assert(flaky_json_get_num(&v->items[1], "failures") == 2);
	ck_assert(flaky_json_get_num(&v->items[0], "runs") == 0);
	ck_assert_int_eq(flaky_json_get(&v->items[0], "fail_rate")->type,
	    FLAKY_JSON_NULL);
	flaky_json_free(j);
}
END_TEST

START_TEST(metrics)
{
	struct flaky_web_reply r;

	get("/metrics", NULL, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.content_type, "version=0.0.4"));
	ck_assert_ptr_nonnull(strstr(r.body.data, "flaky_test_failure_rate{"
	    "target=\"web<1>\",test=\"<script>alert(1)</script>\"} "
	    "0.6666666667\n"));
	ck_assert_ptr_nonnull(strstr(r.body.data,
	    "flaky_target_runs{target=\"other\"} 3\n"));
	flaky_web_reply_free(&r);
}
END_TEST

START_TEST(report_one_file)
{
	struct flaky_query q;
	struct flaky_buf b;
	char	 err[256], a[64];

	memset(&q, 0, sizeof q);
	q.since_ms = T0 - 30 * FLAKY_DAY_MS;
	q.until_ms = T0 + FLAKY_DAY_MS;
	flaky_buf_init(&b);
	ck_assert_msg(flaky_web_report(st, &opts, &q, &b, err,
	    sizeof err) == 0, "%s", err);
	(void)flaky_buf_cstr(&b);
	assert_clean(b.data);
	ck_assert_uint_eq(count(b.data, "<!DOCTYPE html>"), 1);
	ck_assert_ptr_nonnull(strstr(b.data, "<section id=\"overview\">"));
	ck_assert_ptr_nonnull(strstr(b.data, "<section id=\"tests-page\">"));
	/* the tests that failed have their sections, linked as anchors */
	snprintf(a, sizeof a, "<section id=\"test-%" PRId64 "\">", id_hostile);
	ck_assert_ptr_nonnull(strstr(b.data, a));
	snprintf(a, sizeof a, "href=\"#test-%" PRId64 "\"", id_hostile);
	ck_assert_ptr_nonnull(strstr(b.data, a));
	snprintf(a, sizeof a, "<section id=\"test-%" PRId64 "\">", id_same_b);
	ck_assert_ptr_null(strstr(b.data, a));
	ck_assert_ptr_null(strstr(b.data, "href=\"/"));
	flaky_buf_free(&b);
}
END_TEST

/* The tests page's counts are test_stats' counts, row for row. */
START_TEST(counts_match_stats)
{
	struct flaky_test_row *a, *b;
	struct flaky_query q;
	size_t	 na, nb;
	char	 err[256];

	memset(&q, 0, sizeof q);
	q.since_ms = T0 - 7 * FLAKY_DAY_MS;
	q.until_ms = T0 + FLAKY_DAY_MS;
	for (int pass = 0; pass < 2; pass++) {
		q.target = pass ? "web<1>" : NULL;
		ck_assert_msg(flaky_store_test_stats(st, &q, &a, &na, err,
		    sizeof err) == 0, "%s", err);
		ck_assert_msg(flaky_store_test_counts(st, &q, &b, &nb, err,
		    sizeof err) == 0, "%s", err);
		ck_assert_uint_eq(na, pass ? 4 : 5);
		ck_assert_uint_eq(na, nb);
		flaky_test_rows_sort(a, na);
		flaky_test_rows_sort(b, nb);
		for (size_t i = 0; i < na; i++) {
			ck_assert_int_eq(a[i].test_id, b[i].test_id);
			ck_assert_str_eq(a[i].test, b[i].test);
			ck_assert_str_eq(a[i].target, b[i].target);
			ck_assert_int_eq(a[i].runs, b[i].runs);
			ck_assert_int_eq(a[i].failures, b[i].failures);
			ck_assert_int_eq(a[i].skips, b[i].skips);
		}
		flaky_test_rows_free(a, na);
		flaky_test_rows_free(b, nb);
	}
}
END_TEST

/* The box each run ran on (runs.box, issue 15) is shown, escaped. */
START_TEST(boxes_when_recorded)
{
	struct flaky_web_reply r;
	sqlite3	*db;
	char	 p[64], sql[128];

	snprintf(p, sizeof p, "/test/%" PRId64, id_hostile);
	db = raw_open();
	snprintf(sql, sizeof sql, "UPDATE runs SET box = 'box<a>' WHERE id = "
	    "%" PRId64, run_a);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	get(p, NULL, &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, "<th scope=\"col\">box</th>"));
	ck_assert_uint_eq(count(r.body.data, "<td>box&lt;a&gt;</td>"), 1);
	assert_clean(r.body.data);
	flaky_web_reply_free(&r);
	snprintf(p, sizeof p, "/run/%" PRId64, run_a);
	get(p, NULL, &r);
	ck_assert_ptr_nonnull(strstr(r.body.data, "<dt>box</dt><dd>box&lt;a&gt;"));
	flaky_web_reply_free(&r);
}
END_TEST

/* Issue 28: /api/v1/test/ID carries the set flakyctl polluter confirmed
 * (null before it stored one), and the test's page calls it confirmed. */
START_TEST(api_polluters)
{
	struct flaky_polluter_row pr = { 0 };
	struct flaky_web_reply r;
	const struct flaky_json *v;
	struct flaky_json *j;
	char	 p[64], err[256];

	snprintf(p, sizeof p, "/api/v1/test/%" PRId64, id_hostile);
	j = get_json(p, NULL);
	ck_assert_ptr_nonnull(v = flaky_json_get(j, "polluters"));
	ck_assert_int_eq(v->type, FLAKY_JSON_NULL);
	ck_assert_ptr_nonnull(v = flaky_json_get(j, "polluters_minimal"));
	ck_assert_int_eq(v->type, FLAKY_JSON_NULL);
	flaky_json_free(j);
	pr.test_id = id_hostile;
	pr.from_run_id = run_a;
	pr.candidates = 2;
	pr.members = QUOTES "\n" CTRL;
	pr.reruns = 7;
	pr.minimal = 1;
	pr.command = "pytest x";
	ck_assert_msg(flaky_store_polluter_put(st, &pr, err, sizeof err) == 0,
	    "%s", err);
	j = get_json(p, NULL);
	ck_assert_ptr_nonnull(v = flaky_json_get(j, "polluters"));
	ck_assert_int_eq(v->type, FLAKY_JSON_ARRAY);
	ck_assert_uint_eq(v->len, 2);
	ck_assert_str_eq(v->items[0].str, QUOTES);
	ck_assert_str_eq(v->items[1].str, CTRL);
	ck_assert_ptr_nonnull(v = flaky_json_get(j, "polluters_minimal"));
	ck_assert(v->type == FLAKY_JSON_BOOL && v->boolean);
	flaky_json_free(j);
	snprintf(p, sizeof p, "/test/%" PRId64, id_hostile);
	get(p, NULL, &r);
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body.data, "<dt>polluters</dt>"
	    "<dd id=\"polluters\">t.q&quot;uo&#39;te&amp;amp, "));
	ck_assert_ptr_nonnull(strstr(r.body.data, " (confirmed by flakyctl "
	    "polluter)</dd>"));
	flaky_web_reply_free(&r);
}
END_TEST

static Suite *
web_suite(void)
{
	Suite	*s = suite_create("web");
	TCase	*tc = tcase_create("pure"), *tp = tcase_create("pages");

	tcase_add_test(tc, escape_hostile);
	tcase_add_test(tc, query_params);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tp, fixture, unfixture);
	tcase_set_timeout(tp, 60);
	tcase_add_test(tp, routing);
	tcase_add_test(tp, healthz_and_types);
	tcase_add_test(tp, page_overview);
	tcase_add_test(tp, page_tests_filters);
	tcase_add_test(tp, page_test);
	tcase_add_test(tp, page_ticket_is_flakyctls);
	tcase_add_test(tp, page_run);
	tcase_add_test(tp, api);
	tcase_add_test(tp, api_polluters);
	tcase_add_test(tp, metrics);
	tcase_add_test(tp, report_one_file);
	tcase_add_test(tp, counts_match_stats);
	tcase_add_test(tp, boxes_when_recorded);
	suite_add_tcase(s, tp);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(web_suite());
	int	 nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
