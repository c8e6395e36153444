/* Inside lib/web: the rendering context every page writes through, the
 * one HTML escaper, the page frame, the charts and the API. */
#ifndef FLAKY_WEB_INT_H
#define FLAKY_WEB_INT_H

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
/* How many actions a test's page lists, and the overview's lists of
 * flips and alerts. */
#define WEB_ACTIONS	20
#define WEB_NEWEST	10
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
	char				 nonce[32];	/* made here when
							 * the server gave
							 * none */
};

/* style.c, script.c: the style sheet (with its element) and the script
 * (without: it takes the reply's nonce). */
extern const char web_style[];
extern const char web_script[];
/* The reply's script nonce (the server's, or one made for the page). */
const char *web_nonce(struct web_ctx *);
/* A tier as an icon and its word, in its colour (enum flaky_tier). */
void	 web_tier_badge(struct flaky_buf *, int tier);

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

struct web_story;
/* charts.c: the overview's trends and a test's durations, HTML columns
 * with a legend and their numbers as a table. */
struct flaky_jw;
void	 web_chart_tiers(struct flaky_buf *, const struct flaky_trends *);
void	 web_chart_weeks(struct flaky_buf *, const struct flaky_trends *);
void	 web_chart_lost(struct flaky_buf *, const struct flaky_trends *);
void	 web_chart_durations(struct flaky_buf *, const uint64_t *pass,
	    const uint64_t *fail);
/* "durations": {"pass": {...}, "fail": {...}} of the same histograms. */
void	 web_jw_durations(struct flaky_jw *, const uint64_t *pass,
	    const uint64_t *fail);

/* The overview's view (page_overview.c): days (30 default, 7 to 366),
 * target (into c->q.target), box (web_box_param), branch. 0; -1 with
 * c->err and bad (a 400); -2 when the database failed (a 500). */
struct web_view {
	int		 days;
	char		 target[WEB_PARAM_MAX], branch[WEB_PARAM_MAX];
	const char	*bad;
};
int	 web_view_read(struct web_ctx *, const char *query, struct web_view *);
/* overview_lists.c: tiers in the window, newly unstable, budget, the
 * targets and the newest runs. */
int	 web_overview_rest(struct web_ctx *);
/* test_story.c: a test page's facts past its rate, its actions, its
 * flips and its newest runs. */
void	 web_story_facts(struct web_ctx *, const struct web_story *);
void	 web_story_actions(struct web_ctx *, const struct web_story *);
void	 web_story_flips(struct web_ctx *, const struct web_story *);
int	 web_story_runs(struct web_ctx *, const struct flaky_diagnosis *);

/* api.c: what the API's paths share. A 400 about a parameter (1, the
 * reply made); every parameter one of known, given once (0, else 1 after
 * a 400); ?box= (0, else 1 after a 400 or 500); is name a target (1, 0,
 * -1 with c->err). */
int	 web_api_bad(struct web_ctx *, const char *param, const char *expected,
	    const char *got);
int	 web_api_params(struct web_ctx *, const char *query,
	    const char *const *known);
int	 web_api_box(struct web_ctx *, const char *query);
int	 web_api_target_known(struct web_ctx *, const char *name);
/* Members of an object: a time (null for none), a string, numbers, the
 * rate of k in n with its interval and tier, microseconds as ms, rates
 * per box. */
void	 web_jw_time(struct flaky_jw *, const char *key, int64_t ms);
void	 web_jw_str(struct flaky_jw *, const char *key, const char *v);
void	 web_jw_int(struct flaky_jw *, const char *key, long long v);
void	 web_jw_num(struct flaky_jw *, const char *key, double v);
void	 web_jw_us_ms(struct flaky_jw *, const char *key, int64_t us);
void	 web_jw_rate(struct flaky_jw *, int64_t k, int64_t n, int64_t skips);
void	 web_jw_boxes(struct flaky_jw *, const struct flaky_box_row *,
	    size_t n, size_t first);
/* api_tests.c: tests (the tests page's filters), test/ID (its story),
 * test/ID/actions and actions (id 0), flips, trends (the overview's). 0,
 * 1 after a 4xx reply, -1 with c->err. */
int	 web_api_tests(struct web_ctx *, struct flaky_jw *, const char *query);
int	 web_api_test(struct web_ctx *, struct flaky_jw *, int64_t id);
int	 web_api_actions(struct web_ctx *, struct flaky_jw *, int64_t id,
	    const char *query);
int	 web_api_flips(struct web_ctx *, struct flaky_jw *, const char *query);
int	 web_api_trends(struct web_ctx *, struct flaky_jw *, const char *query);

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

/* state.c: a test's state (docs/dashboard.md "States"). */
enum web_state_k {
	WS_NEW = 0, WS_FLAKY, WS_FIXED, WS_QUARANTINED, WS_BROKEN, WS_STABLE,
	WS_SKIPPED, WS_NONE, WS_COUNT,
};
struct web_state_in {
	int64_t		 runs, failures, skips;	/* the window's */
	const uint32_t	*day_runs, *day_failures;	/* its days, or NULL */
	int64_t		 ndays;
	int64_t		 prev_failures;	/* the window before */
	int		 quarantined;
	int64_t		 first_fail_day;	/* -1: none in the window */
	int64_t		 today;			/* the window's last day */
};
int	 web_state(const struct web_state_in *);
const char *web_state_name(int);
int	 web_state_parse(const char *);
/* The state as a bordered word in a colour of its own. */
void	 web_state_badge(struct flaky_buf *, int);
int64_t	 web_first_fail_day(int64_t first_day, const uint32_t *fails,
	    int64_t ndays);

/* tests_data.c: the filters of the tests page and the API (docs/dashboard.md
 * "Find anything"): a part of the id (q, any case), target, box (c->box),
 * branch, owner, tier, signature, cluster, state. */
struct web_filters {
	char	 target[WEB_PARAM_MAX], tier[32], signature[64];
	char	 q[WEB_PARAM_MAX], branch[WEB_PARAM_MAX], owner[WEB_PARAM_MAX];
	int	 cluster;	/* 0: any */
	int	 state;		/* enum web_state_k; -1: any */
};
/* The filters of a query: 0; -1 with c->err and *bad the parameter (a
 * 400); -2 when the database failed (c->err, a 500). */
int	 web_filters_read(struct web_ctx *, const char *query,
	    struct web_filters *, const char **bad);
/* The filters set (and the box), as a query for a link: "q=x&amp;..."
 * (escaped for an attribute). */
void	 web_filters_query(const struct web_ctx *, const struct web_filters *,
	    struct flaky_buf *);

/* What the tests page and the API read: the window's rows, history,
 * signatures, each row's state and owners, the notes (tickets, owners),
 * and the clusters when a filter asks for one. */
struct web_tests {
	struct flaky_test_row	*rows;
	size_t			 n;
	struct flaky_history	 hist;
	struct flaky_test_sig	*sigs;
	size_t			 nsigs;
	struct flaky_box_row	*boxes;	/* the sigs' tests' rates per box */
	size_t			 nboxes;
	int			*state;	/* per row */
	int64_t			*flips;	/* per row: revisions flipped on */
	char			**owners;	/* per row: NULL, or words */
	struct flaky_note	*notes;
	size_t			 nnotes;
	struct flaky_clusters	 clusters;
};
/* full: durations and top messages too (the API); else the counts. f
 * (may be NULL): a branch's counts, and the clusters for its filter. */
int	 web_tests_load(struct web_ctx *, struct web_tests *, int full,
	    const struct web_filters *f);
void	 web_tests_free(struct web_tests *);
/* Does row i pass the filters? */
int	 web_tests_shown(const struct web_tests *, size_t i,
	    const struct web_filters *);
/* A row's signature, or NULL; its linked ticket, or NULL. */
const char *web_tests_sig(const struct web_tests *, int64_t test_id);
const char *web_tests_ticket(const struct web_tests *, int64_t test_id);
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
/* The CI branches of the runs since the window's start, or NULL when no
 * run names one. */
char	**web_window_branches(struct web_ctx *, size_t *n);

/* story.c: a test's whole story, for its page and the API. */
struct web_story {
	struct flaky_diagnosis	*d;
	struct flaky_quarantine_row q;	/* when quarantined */
	int			 quarantined;
	struct flaky_note	 note;
	const char		*ticket;	/* the note's, else the
						 * quarantine's; NULL */
	struct flaky_buf	 owners;	/* the note's, then the file's */
	struct flaky_buf	 from_file;	/* CODEOWNERS' alone */
	char			*codeowners;	/* which file, or NULL */
	int			 state;		/* enum web_state_k */
	int64_t			 first_fail_ms, last_fail_ms;	/* 0: none */
	struct flaky_branch_row	*branches;
	size_t			 nbranches;
	uint64_t		 pass[FLAKY_HIST_BUCKETS];
	uint64_t		 fail[FLAKY_HIST_BUCKETS];
	struct flaky_clusters	 clusters;	/* of its target */
	const struct flaky_cluster *cluster;	/* its own, or NULL */
	struct flaky_buf	 repro;
	struct flaky_action	*actions;	/* newest first */
	size_t			 nactions;
};
/* 0; -ENOENT (no such test) or another negative errno with c->err. */
int	 web_story_load(struct web_ctx *, int64_t test_id, struct web_story *);
void	 web_story_free(struct web_story *);

/* A context that renders into r's body at opts' time (now, when 0), and
 * the reply's status and type once it has (web.c). */
void	 web_ctx_begin(struct web_ctx *, struct flaky_store *,
	    struct flaky_web_opts *, struct flaky_web_reply *);
int	 web_ctx_end(struct web_ctx *, struct flaky_web_reply *,
	    const char *type);

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
