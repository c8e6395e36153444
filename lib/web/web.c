/* Routing a request to its page (web.h), and report --html's one file. */
#include "buildconf.h"

#include "stats/stats.h"
#include "web/web.h"
#include "web_int.h"

void
flaky_web_reply_init(struct flaky_web_reply *r)
{
	memset(r, 0, sizeof *r);
	flaky_buf_init(&r->body);
}

void
flaky_web_reply_free(struct flaky_web_reply *r)
{
	flaky_buf_free(&r->body);
	flaky_web_reply_init(r);
}

/* The id of /test/N, /run/N or ?id=N: >0, 0 when there is none, -1 when
 * it is not a positive number. */
static int64_t
request_id(const char *rest, const char *query)
{
	char	 buf[32];
	long long v;
	int	 r;

	if (*rest == '/')
		rest++;
	else if (*rest != '\0')
		return -1;
	if (*rest == '\0') {
		if ((r = web_param(query, "id", buf, sizeof buf)) <= 0)
			return r;
		rest = buf;
	}
	if (flaky_parse_int(rest, 1, INT64_MAX, &v) < 0)
		return -1;
	return v;
}

/* A page of a test or a run by its id. */
static int
by_id(struct web_ctx *c, const char *rest, const char *query,
    int (*page)(struct web_ctx *, int64_t))
{
	int64_t	 id = request_id(rest, query);

	if (id < 0)
		return web_fail(c, 400, "bad request: the id is a positive "
		    "number");
	if (id == 0)
		return web_fail(c, 400, "bad request: which id? (/test/N or "
		    "?id=N)");
	return page(c, id);
}

/* The pages, by what a path asks for. */
enum web_page {
	PAGE_NONE, PAGE_HEALTHZ, PAGE_METRICS, PAGE_API, PAGE_OVERVIEW,
	PAGE_TESTS, PAGE_TEST, PAGE_RUN,
};

/* Which page a path is, by its shape (an id is checked by the page). */
static enum web_page
page_of(const char *path)
{
	if (strcmp(path, "/healthz") == 0)
		return PAGE_HEALTHZ;
	if (strcmp(path, "/metrics") == 0)
		return PAGE_METRICS;
	if (strncmp(path, "/api/v1/", 8) == 0)
		return web_api_known(path + 8) ? PAGE_API : PAGE_NONE;
	if (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0)
		return PAGE_OVERVIEW;
	if (strcmp(path, "/tests") == 0)
		return PAGE_TESTS;
	if (strncmp(path, "/test", 5) == 0 && (path[5] == '\0' ||
	    path[5] == '/'))
		return PAGE_TEST;
	if (strncmp(path, "/run", 4) == 0 && (path[4] == '\0' ||
	    path[4] == '/'))
		return PAGE_RUN;
	return PAGE_NONE;
}

int
flaky_web_path_known(const char *path)
{
	return page_of(path) != PAGE_NONE;
}

/* The page of a path; a reply's content type is HTML unless it says
 * otherwise. */
static int
route(struct web_ctx *c, const char *path, const char *query,
    const char **type)
{
	switch (page_of(path)) {
	case PAGE_HEALTHZ:
		*type = "text/plain; charset=utf-8";
		flaky_buf_adds(c->b, "ok\n");
		return 0;
	case PAGE_METRICS:
		*type = "text/plain; version=0.0.4; charset=utf-8";
		return web_metrics(c);
	case PAGE_API:
		return web_api(c, path + 8, query, type);
	case PAGE_OVERVIEW:
		return web_page_overview(c, query);
	case PAGE_TESTS:
		return web_page_tests(c, query);
	case PAGE_TEST:
		return by_id(c, path + 5, query, web_page_test);
	case PAGE_RUN:
		return by_id(c, path + 4, query, web_page_run);
	case PAGE_NONE:
		break;
	}
	if (strncmp(path, "/api/v1/", 8) == 0)
		return web_api_fail(c, 404, NULL, NULL, "not found: the API's "
		    "paths are targets, tests, test/ID, test/ID/actions, runs, "
		    "run/ID, trend, trends, flips and actions");
	return web_fail(c, 404, "not found");
}

int
flaky_web_handle(struct flaky_store *st, const struct flaky_web_opts *o,
    const char *path, const char *query, struct flaky_web_reply *r)
{
	struct flaky_web_opts opts = *o;
	struct web_ctx c;
	const char *type = "text/html; charset=utf-8";

	web_ctx_begin(&c, st, &opts, r);
	web_window(&c, opts.now_ms);
	if (route(&c, path, query, &type) < 0 || r->body.oom)
		return -ENOMEM;
	return web_ctx_end(&c, r, c.status == 0 ? type : c.json_err ?
	    "application/json" : "text/plain; charset=utf-8");
}

void
web_ctx_begin(struct web_ctx *c, struct flaky_store *st,
    struct flaky_web_opts *opts, struct flaky_web_reply *r)
{
	if (opts->now_ms == 0)
		opts->now_ms = flaky_now_ms();
	memset(c, 0, sizeof *c);
	c->st = st;
	c->o = opts;
	c->b = &r->body;
	flaky_buf_reset(&r->body);
}

int
web_ctx_end(struct web_ctx *c, struct flaky_web_reply *r, const char *type)
{
	r->status = c->status != 0 ? c->status : 200;
	r->content_type = type;
	(void)flaky_buf_cstr(&r->body);
	return r->body.oom ? -ENOMEM : 0;
}

/* The pages of the unstable tests, worst first, as sections. */
static int
report_tests(struct web_ctx *c)
{
	struct web_tests t;
	size_t	 k = 0;
	int	 r = 0;

	if (web_tests_load(c, &t, 0, NULL) < 0) {
		web_tests_free(&t);
		return -1;
	}
	for (size_t i = 0; i < t.n && k < WEB_REPORT_TESTS && r == 0; i++) {
		if (t.rows[i].failures == 0)
			continue;
		r = web_page_test(c, t.rows[i].test_id);
		r = r == 0 && c->status != 0 ? -1 : r;
		k++;
	}
	web_tests_free(&t);
	return r;
}

int
flaky_web_report(struct flaky_store *st, const struct flaky_web_opts *o,
    const struct flaky_query *q, struct flaky_buf *out, char *err,
    size_t errlen)
{
	struct flaky_web_opts opts = *o;
	struct web_ctx c;
	int	 r;

	if (opts.now_ms == 0)
		opts.now_ms = flaky_now_ms();
	memset(&c, 0, sizeof c);
	c.st = st;
	c.o = &opts;
	c.b = out;
	c.single = 1;
	c.q = *q;
	web_doc_begin(&c, "Flaky tests");
	if ((r = web_page_overview(&c, NULL)) == 0 && c.status == 0 &&
	    (r = web_page_tests(&c, NULL)) == 0 && c.status == 0)
		r = report_tests(&c);
	if (r < 0 || c.status != 0)
		return flaky_error(err, errlen, EIO, "%s", c.err[0] ? c.err :
		    "out of memory");
	web_doc_end(&c);
	if (out->oom)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	return 0;
}
