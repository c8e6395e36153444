/* The dashboard and the HTTP API as replies rendered from a store: the
 * pages (overview, tests, a test, a run), /api/v1/, /metrics and /healthz.
 * No transport here: flakyd's evhttp server (daemon/http.c) and flakyctl
 * serve hand a request's path and query to flaky_web_handle and send the
 * reply; report --html writes the same pages into one file. The pages
 * and GET /api/v1 only read; the actions (flaky_web_act, issue 32) are
 * the one thing that writes, on a store the server opened for them. */
#ifndef FLAKY_WEB_H
#define FLAKY_WEB_H

#include <stdint.h>

#include "util/util.h"

struct flaky_store;

/* A target as the daemon knows it, for the overview; a copy the handler
 * may read from another thread. */
struct flaky_web_target {
	const char	*name;
	const char	*schedule;	/* the cron-like text */
	int64_t		 next_fire_ms;	/* epoch ms; 0: not scheduled */
};

struct flaky_web_opts {
	int64_t				 now_ms;	/* epoch ms */
	const struct flaky_web_target	*targets;	/* NULL: from the store */
	size_t				 ntargets;
	/* The reply's script nonce, as its Content-Security-Policy header
	 * says it (flaky_web_nonce); NULL: the page makes its own (report
	 * --html's one file, whose meta element says it). */
	const char			*nonce;
};
/* A fresh script nonce (22 characters of base64url, from getrandom) into
 * buf of at least 25 bytes: 0, or -EIO. */
int	 flaky_web_nonce(char *buf, size_t len);

struct flaky_web_reply {
	int			 status;	/* 200, 400, 404, 405, 500 */
	const char		*content_type;	/* static text */
	struct flaky_buf	 body;
};

void	 flaky_web_reply_init(struct flaky_web_reply *);
void	 flaky_web_reply_free(struct flaky_web_reply *);
/* Render GET path?query (query without the '?', NULL when none) into
 * reply. 0, or -ENOMEM; a bad request or a failed query is a reply with
 * its status and a one-line message, not an error. */
int	 flaky_web_handle(struct flaky_store *, const struct flaky_web_opts *,
	    const char *path, const char *query, struct flaky_web_reply *);
/* Is path one of the pages' or the API's (whatever its id or query)?
 * The server answers 405 to another method on such a path, 404 to any
 * method on the others. */
int	 flaky_web_path_known(const char *path);

/* The dashboard's actions (act.c, docs/api.md "Actions"): POST path (one
 * of /api/v1/test/ID/quarantine, release, ticket, owner) with its JSON
 * body of len bytes, taken on a writable store and recorded as done by
 * who (the token's name) over http. The reply is JSON: 200 with the
 * action, 400 (a body the action does not take), 404 (no such test),
 * 409 (release of a test not in quarantine), 503 (busy). 0, or
 * -ENOMEM. */
int	 flaky_web_act(struct flaky_store *, const struct flaky_web_opts *,
	    const char *path, const char *body, size_t len, const char *who,
	    struct flaky_web_reply *);
/* Is path one of the actions' (whatever its method)? */
int	 flaky_web_act_path(const char *path);

struct flaky_query;
/* report --html: the overview, the tests table and the pages of the
 * unstable tests (up to 100, worst first) of q's window and target in one
 * HTML document, links between them as anchors. 0, or a negative errno
 * with err filled. */
int	 flaky_web_report(struct flaky_store *, const struct flaky_web_opts *,
	    const struct flaky_query *, struct flaky_buf *out, char *err,
	    size_t errlen);
/* The current figures of q's window in the Prometheus text format
 * (flakyctl metrics and /metrics). */
int	 flaky_web_metrics(struct flaky_store *, const struct flaky_query *,
	    struct flaky_buf *out, char *err, size_t errlen);

#endif
