/* Inside lib/web: the rendering context every page writes through, the
 * one HTML escaper, the page frame, the charts and the API. */
#ifndef FLAKY_WEB_INT_H
#define FLAKY_WEB_INT_H

#include <stdint.h>

#include "diagnose/diagnose.h"
#include "store/store.h"
#include "util/util.h"
#include "web/web.h"

/* How many of a test's newest results its page lists. */
#define WEB_TEST_RUNS	200
/* How many of the newest runs the overview and /api/v1/runs list. */
#define WEB_RUNS	50
/* How many test pages report --html puts in its file. */
#define WEB_REPORT_TESTS	100
/* Days a rate chart shows at most. */
#define WEB_CHART_DAYS	366
/* Bytes of a query parameter's value, decoded. */
#define WEB_PARAM_MAX	256

struct web_ctx {
	struct flaky_store		*st;
	const struct flaky_web_opts	*o;
	struct flaky_buf		*b;	/* the body */
	struct flaky_query		 q;	/* the window of rates */
	int				 single; /* one file: links are
						  * anchors */
	int				 status; /* 0: 200 */
	int				 json_err; /* the failed reply is
						    * the API's JSON */
	char				 err[512];
	char				 box[FLAKY_BOX_MAX + 1]; /* ?box=,
						  * where q.box points */
};

/* html.c: the one escaper for HTML text and attribute values: & < > " '
 * as entities, control bytes other than tab and newline (and DEL) as
 * U+FFFD, so no stored byte can end an element, an attribute or a
 * comment. */
void	 web_esc(struct flaky_buf *, const char *s);
void	 web_escn(struct flaky_buf *, const char *s, size_t n);
/* A query parameter's value into buf, percent-decoded ('+' is a space):
 * 1 when found, 0 when absent, -1 when malformed or longer than len - 1. */
int	 web_param(const char *query, const char *key, char *buf, size_t len);
/* s percent-encoded for a URL's query (then HTML-escaped by the caller
 * when it goes in an attribute: it needs none). */
void	 web_urlenc(struct flaky_buf *, const char *s);
/* The form that chooses a box (?box=) among boxes[0..n), on the page at
 * action. */
void	 web_box_form(struct web_ctx *, const char *action, char **boxes,
	    size_t n);
/* The start and end of a page: head, style, script and navigation when
 * the page stands alone; a section when it is part of one file. */
void	 web_page_begin(struct web_ctx *, const char *id, const char *title);
void	 web_page_end(struct web_ctx *);
/* The document around sections (report --html) or around one page. */
void	 web_doc_begin(struct web_ctx *, const char *title);
void	 web_doc_end(struct web_ctx *);
/* href="..." of a test's and a run's page (anchors in one file). */
void	 web_href_test(struct web_ctx *, int64_t id);
void	 web_href_run(struct web_ctx *, int64_t id);
/* "2026-11-01 12:00:00" UTC, or "-" for 0. */
void	 web_time(struct flaky_buf *, int64_t ms);
/* "35 ms", "2.3 s", "-" for a negative duration. */
void	 web_dur_us(struct flaky_buf *, int64_t us);
/* A failed page: the status and a one-line message in the body. */
int	 web_fail(struct web_ctx *, int status, const char *msg);
/* A failed API request (api.c): {"error": msg, "status": status,
 * "parameter": param, "expected": expected} (NULLs as null). */
int	 web_api_fail(struct web_ctx *, int status, const char *param,
	    const char *expected, const char *msg);
/* api.c's checks for the other API files: every parameter of query one
 * of known (0, else 1 after a 400), and a 400 about one parameter (1). */
int	 web_api_params(struct web_ctx *, const char *query,
	    const char *const *known);
int	 web_api_bad(struct web_ctx *, const char *param, const char *expected,
	    const char *got);
/* api_ci.c: /api/v1/quarantine and /api/v1/known-tests (issue 30): 0, 1
 * after a 400, -1 on a store error (c->err). Is path one of them? */
struct flaky_jw;
int	 web_api_ci(struct web_ctx *, struct flaky_jw *, const char *path,
	    const char *query);
int	 web_api_ci_known(const char *path);
/* Is path (after /api/v1/) one of the API's? */
int	 web_api_known(const char *path);
/* A test id with a line break allowed after each '/', '::', '.' and
 * before '[' (<wbr>), escaped: a long id wraps where it reads well. */
void	 web_esc_id(struct flaky_buf *, const char *s);
/* "from 2026-10-03 to 2026-11-01": the window's days (and the box of a
 * box filter), for the HTML text. */
void	 web_window_words(struct web_ctx *, struct flaky_buf *);
/* The window of rates: 30 whole UTC days up to now. */
void	 web_window(struct web_ctx *, int64_t now_ms);

/* svg.c: charts, each with its legend. */
/* A test's daily failure rate with its 95% Wilson band and a date axis. */
void	 svg_rate_chart(struct flaky_buf *, int64_t first_day, int64_t ndays,
	    const uint32_t *runs, const uint32_t *failures);
/* Tests by tier as bars: counts[tier] for enum flaky_tier. */
void	 svg_tier_bars(struct flaky_buf *, const size_t *counts);
/* A small daily trend for a table cell, its legend in the title. */
void	 svg_spark(struct flaky_buf *, int64_t first_day, int64_t ndays,
	    const uint32_t *runs, const uint32_t *failures);

/* The pages. */
int	 web_page_overview(struct web_ctx *, const char *query);
int	 web_page_tests(struct web_ctx *, const char *query);
int	 web_page_test(struct web_ctx *, int64_t id);
int	 web_page_run(struct web_ctx *, int64_t id);
/* api.c: /api/v1/... (path after the prefix); sets the content type. */
int	 web_api(struct web_ctx *, const char *path, const char *query,
	    const char **content_type);
/* metrics.c: /metrics, the Prometheus text format. */
int	 web_metrics(struct web_ctx *);

/* tests_data.c: what the tests page and the API read: the window's rows,
 * history and signatures, filtered. */
struct web_tests {
	struct flaky_test_row	*rows;
	size_t			 n;
	struct flaky_history	 hist;
	struct flaky_test_sig	*sigs;
	size_t			 nsigs;
	struct flaky_box_row	*boxes;	/* the sigs' tests' rates per box */
	size_t			 nboxes;
};
/* full: durations and top messages too (the API); else the counts. */
int	 web_tests_load(struct web_ctx *, struct web_tests *, int full);
void	 web_tests_free(struct web_tests *);
/* A row's signature, or NULL. */
const char *web_tests_sig(const struct web_tests *, int64_t test_id);
/* A row's rates per box: how many (0 when its target ran on one box),
 * from *first on in t->boxes. */
size_t	 web_tests_boxes(const struct web_tests *, int64_t test_id,
	    size_t *first);
/* "50% on box-a (10/20), 0% on box-b (0/20)" of n rows. */
void	 web_box_words(struct flaky_buf *, const struct flaky_box_row *,
	    size_t n);
/* ?box=NAME into c->box and c->q.box: 0 when absent (every box), 1, -1
 * with c->err saying what was expected (a box name, one of the runs'
 * boxes), -2 when the database failed (c->err). */
int	 web_box_param(struct web_ctx *, const char *query);
/* The boxes of the runs since the window's start, by name (the forms'
 * choices): a NULL-terminated array for flaky_store_names_free, or NULL
 * when the database knows one box only. */
char	**web_window_boxes(struct web_ctx *, size_t *n);

/* api.c: a string member (NULL: null) and a number member. */
struct flaky_jw;
void	 jw_str(struct flaky_jw *, const char *key, const char *v);
void	 jw_int(struct flaky_jw *, const char *key, long long v);

/* stacks.c (issue 33): where a test's timeouts hung, on its page and as
 * the member "hangs" of /api/v1/test/ID (null without stacks); a run's
 * stacks on its page and as the member "stacks" of /api/v1/run/ID. The
 * int ones: 0, or -1 with c->err filled. */
void	 web_test_hangs(struct web_ctx *, const struct flaky_hangs *);
void	 web_api_hangs(struct flaky_jw *, const struct flaky_hangs *);
int	 web_run_stacks(struct web_ctx *, int64_t run_id);
int	 web_api_run_stacks(struct web_ctx *, struct flaky_jw *,
	    int64_t run_id);

#endif
