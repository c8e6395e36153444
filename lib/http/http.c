/* The dashboard over HTTP: evhttp on the caller's loop. Each request is
 * checked here (method, token, Host, connection cap), then rendered by a
 * worker (pool.c) and answered back on the loop with the security
 * headers. The pages' workers have read-only stores and only GET and
 * HEAD reach them; the one change over HTTP is a dashboard's action (a
 * POST with a token of scope write, act.c), taken by a worker of its
 * own. */
#include "buildconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <openssl/ssl.h>

#include "config/config.h"
#include "http_int.h"
#include "store/store.h"
#include "util/util.h"
#include "web/web.h"

/* Every reply: no network loads, no framing, no sniffing, no caching.
 * The pages' own CSS is inline, their one script carries the reply's
 * nonce (no other script runs, inline or not); charts are inline SVG;
 * the actions' fetch goes to this server only. */
#define HTTP_CSP	"default-src 'none'; style-src 'unsafe-inline'; " \
			"script-src %s; img-src data:; connect-src 'self'; " \
			"base-uri 'none'; form-action 'self'; " \
			"frame-ancestors 'none'"

/* The methods evhttp names (event2/http.h), and the bit it gives every
 * other one (EVHTTP_REQ_UNKNOWN_ of its http-internal.h): allowed, such a
 * request reaches request_cb instead of evhttp's bare 501. */
#define HTTP_METHODS	(EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | \
			EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | \
			EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH)
#define HTTP_REQ_UNKNOWN	(1 << 15)

static const char *
reason(int status)
{
	switch (status) {
	case 200:	return "OK";
	case 201:	return "Created";
	case 400:	return "Bad Request";
	case 401:	return "Unauthorized";
	case 403:	return "Forbidden";
	case 404:	return "Not Found";
	case 405:	return "Method Not Allowed";
	case 409:	return "Conflict";
	case 408:	return "Request Timeout";
	case 411:	return "Length Required";
	case 413:	return "Content Too Large";
	case 415:	return "Unsupported Media Type";
	case 429:	return "Too Many Requests";
	case 501:	return "Not Implemented";
	case 503:	return "Service Unavailable";
	default:	return "Internal Server Error";
	}
}

/* Send status, type and body with the headers every reply carries; the
 * CSP lets a script with nonce run (NULL: none). */
void
http_send_reply(struct evhttp_request *req, int status, const char *type,
    const void *body, size_t len, const char *nonce)
{
	struct evkeyvalq *oh = evhttp_request_get_output_headers(req);
	struct evbuffer	*b;
	char		 csp[512], src[64];

	if (nonce != NULL && *nonce != '\0')
		snprintf(src, sizeof src, "'nonce-%s'", nonce);
	else
		snprintf(src, sizeof src, "'none'");
	snprintf(csp, sizeof csp, HTTP_CSP, src);
	evhttp_add_header(oh, "Content-Type", type);
	evhttp_add_header(oh, "Content-Security-Policy", csp);
	evhttp_add_header(oh, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(oh, "X-Frame-Options", "DENY");
	evhttp_add_header(oh, "Referrer-Policy", "no-referrer");
	evhttp_add_header(oh, "Cache-Control", "no-store");
	if ((b = evbuffer_new()) == NULL ||
	    evbuffer_add(b, body, len) < 0) {
		evbuffer_free(b);
		evhttp_send_error(req, 500, NULL);
		return;
	}
	evhttp_send_reply(req, status, reason(status), b);
	evbuffer_free(b);
}

/* A one-line text reply. */
void
http_send_text(struct evhttp_request *req, int status, const char *text)
{
	char	 line[256];
	int	 n;

	n = snprintf(line, sizeof line, "%s\n", text);
	http_send_reply(req, status, "text/plain; charset=utf-8", line,
	    n < 0 ? 0 : (size_t)n >= sizeof line ? sizeof line - 1 : (size_t)n,
	    NULL);
}

/* Is got a token of the database's with scope read or write (flakyctl
 * token create)? Its hash among the valid ones (upload_worker.c reads
 * them again every few seconds). */
static int
db_token_reads(struct flaky_http *h, const char *got)
{
	char	 hash[FLAKY_TOKEN_HASH];
	int	 ok = 0;

	flaky_token_hash(got, strlen(got), hash);
	pthread_mutex_lock(&h->mtx);
	for (size_t i = 0; i < h->ntokens; i++)
		if (strcmp(h->tokens[i].name, hash) == 0)
			ok = h->tokens[i].scope == FLAKY_SCOPE_READ ||
			    h->tokens[i].scope == FLAKY_SCOPE_WRITE;
	pthread_mutex_unlock(&h->mtx);
	return ok;
}

/* The token file's, equal in a time that depends on the token's length
 * only, or the database's of scope read or write. The scheme is
 * case-insensitive and one or more spaces may follow it (RFC 9110 11.1
 * and 11.4: "bearer t0ken" is the same credential). */
int
http_token_ok(struct flaky_http *h, const char *got)
{
	size_t		 glen;
	unsigned	 d;

	if (got == NULL || strncasecmp(got, "Bearer ", 7) != 0)
		return 0;
	for (got += 7; *got == ' '; got++)
		;
	if (h->ntokens > 0 && db_token_reads(h, got))
		return 1;
	glen = strlen(got);
	d = glen != h->tokenlen;
	for (size_t i = 0; i < h->tokenlen; i++)
		d |= (unsigned char)h->token[i] ^
		    (unsigned char)(i < glen ? got[i] : 0);
	return d == 0;
}

/* The one Host header of a request: NULL when there is none, and -1 in
 * *many when there are two or more (RFC 9112 3.2: a server must answer
 * 400, whichever of them it would have believed). */
static const char *
host_header(struct evkeyvalq *ih, int *many)
{
	struct evkeyval	*kv;
	const char	*host = NULL;

	*many = 0;
	TAILQ_FOREACH(kv, ih, next)
		if (strcasecmp(kv->key, "Host") == 0) {
			if (host != NULL)
				*many = -1;
			host = kv->value;
		}
	return host;
}

/* Without a token, a page asked for by a name other than the loopback's
 * is a DNS rebinding attack: a web page's name made to point here. Host
 * names are case-insensitive (RFC 9110 4.2.3): LOCALHOST is localhost. */
int
http_host_ok(const char *host)
{
	static const char *const ok[] = {
		"127.0.0.1", "localhost", "[::1]",
	};
	size_t	 n;

	if (host == NULL)
		return 0;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		n = strlen(ok[i]);
		if (strncasecmp(host, ok[i], n) == 0 &&
		    (host[n] == '\0' || host[n] == ':'))
			return 1;
	}
	return 0;
}

/* Its connection went away: a job in flight is answered to nobody. */
static void
conn_closed(struct evhttp_connection *evcon, void *arg)
{
	struct http_conn *c = arg;
	struct http_job	*j = c->job;

	(void)evcon;
	if (j != NULL) {
		/* Still on the connection, evhttp frees the request now;
		 * taken off it (the client left first), it is ours to free
		 * (http_job_done). A worker skips a job nobody waits for. */
		if (j->req != NULL && evhttp_request_get_connection(j->req) !=
		    NULL)
			j->req = NULL;
		j->conn = NULL;
		http_pool_cancel(c->h, j);
	}
	http_door_free(c->door);
	LIST_REMOVE(c, entry);
	c->h->nconns--;
	free(c);
}

/* The connection a request came on, counted; NULL past the cap. */
static struct http_conn *
conn_get(struct flaky_http *h, struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct http_conn *c;
	struct http_door *door;

	LIST_FOREACH(c, &h->conns, entry)
		if (c->evcon == evcon)
			return c;
	if (http_pending_claim(h, evcon, &door) < 0 ||
	    (c = calloc(1, sizeof *c)) == NULL) {
		http_door_free(door);
		return NULL;
	}
	c->door = door;
	c->h = h;
	c->evcon = evcon;
	LIST_INSERT_HEAD(&h->conns, c, entry);
	h->nconns++;
	evhttp_connection_set_closecb(evcon, conn_closed, c);
	return c;
}

/* A worker's reply (or the end of the server): answer it if anyone still
 * waits, then free it. */
void
http_job_done(struct http_job *j)
{
	if (j->req != NULL) {
		if (j->conn == NULL)
			evhttp_request_free(j->req);
		else if (j->rc < 0 || j->reply.status == 0)
			http_send_text(j->req, 500, "out of memory");
		else
			http_send_reply(j->req, j->reply.status,
			    j->reply.content_type, j->reply.body.data,
			    j->reply.body.len, j->nonce);
	}
	if (j->conn != NULL && j->conn->job == j)
		j->conn->job = NULL;
	http_job_free(j);
}

/* The render took longer than a request may: answer 503 now; the worker's
 * reply, when it comes, goes to nobody. */
static void
job_timeout(int fd, short ev, void *arg)
{
	struct http_job	*j = arg;

	(void)fd;
	(void)ev;
	if (j->req != NULL && j->conn != NULL)
		http_send_text(j->req, 503, "the page took too long");
	else if (j->req != NULL)
		evhttp_request_free(j->req);
	j->req = NULL;
	if (j->conn != NULL && j->conn->job == j)
		j->conn->job = NULL;
	j->conn = NULL;
}

/* A request's path and query into a job for the workers, with the
 * nonce its page's script gets. */
struct http_job *
http_job_new(struct flaky_http *h, struct evhttp_request *req)
{
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char	*path = u != NULL ? evhttp_uri_get_path(u) : NULL;
	const char	*query = u != NULL ? evhttp_uri_get_query(u) : NULL;
	struct timeval	 tv = { h->timeout_s, 0 };
	struct http_job	*j;

	if ((j = calloc(1, sizeof *j)) == NULL)
		return NULL;
	j->h = h;
	flaky_web_reply_init(&j->reply);
	j->now_ms = flaky_now_ms();
	if (h->targets != NULL)
		j->targets = h->targets(h->targets_arg, &j->ntargets);
	if (flaky_web_nonce(j->nonce, sizeof j->nonce) < 0) {
		http_job_free(j);
		return NULL;
	}
	if ((j->path = strdup(path != NULL && *path != '\0' ? path : "/")) ==
	    NULL || (query != NULL && (j->query = strdup(query)) == NULL) ||
	    (j->timeout_ev = evtimer_new(h->base, job_timeout, j)) == NULL ||
	    evtimer_add(j->timeout_ev, &tv) < 0) {
		http_job_free(j);
		return NULL;
	}
	return j;
}

/* A refused upload's JSON answer, with Retry-After when it has one. */
static void
send_refusal(struct evhttp_request *req, const struct http_upload *u)
{
	struct flaky_buf b;
	char	 ra[16];
	int	 status, after;

	flaky_buf_init(&b);
	status = http_upload_refusal(u, &b, &after);
	if (after > 0) {
		snprintf(ra, sizeof ra, "%d", after);
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Retry-After", ra);
	}
	if (status == 401)
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "WWW-Authenticate", "Bearer realm=\"flaky\"");
	http_send_reply(req, status, "application/json", b.data, b.len,
	    NULL);
	flaky_buf_free(&b);
}

/* POST /api/v1/uploads: what its door received goes to the upload
 * worker, or its refusal back. */
static void
upload_request(struct flaky_http *h, struct evhttp_request *req,
    struct http_conn *c)
{
	struct http_upload *u;
	struct http_job	*j;

	if (!h->up.on) {
		http_send_text(req, 404, "not found: uploads are off on this "
		    "server (http: uploads: true, flakyctl serve --uploads)");
		return;
	}
	if ((u = http_door_take(c->door)) == NULL) {
		http_send_text(req, 400, "bad request: an upload must be the "
		    "first request of its connection");
		return;
	}
	if (http_upload_refused(u)) {
		send_refusal(req, u);
		http_upload_drop(u);
		return;
	}
	if ((j = http_job_new(h, req)) == NULL) {
		http_upload_drop(u);
		http_send_text(req, 500, "out of memory");
		return;
	}
	j->upload = u;
	http_upload_submit(h, j);
	j->req = req;
	j->conn = c;
	c->job = j;
}

/* Is the request's path /api/v1/uploads? */
static int
is_upload_path(struct evhttp_request *req)
{
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char *path = u != NULL ? evhttp_uri_get_path(u) : NULL;

	return path != NULL && strcmp(path, "/api/v1/uploads") == 0;
}

/* Is the request's path one of the actions' (/api/v1/test/ID/VERB)? */
static int
is_act_path(struct evhttp_request *req)
{
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char *path = u != NULL ? evhttp_uri_get_path(u) : NULL;

	return path != NULL && flaky_web_act_path(path);
}

/* Every request: the checks at the door, then a worker. */
static void
request_cb(struct evhttp_request *req, void *arg)
{
	struct flaky_http *h = arg;
	struct evkeyvalq *ih = evhttp_request_get_input_headers(req);
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	struct http_conn *c;
	struct http_job	*j;
	const char	*host;
	int		 many;

	if ((c = conn_get(h, req)) != NULL && c->job != NULL &&
	    c->job->req == req) {
		/* evhttp calls again with an error on a request a worker
		 * has: that job's reply goes to nobody, this one answers. */
		c->job->req = NULL;
		c->job->conn = NULL;
		c->job = NULL;
		http_send_text(req, 400, "bad request");
		return;
	}
	if (c == NULL) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Connection", "close");
		http_send_text(req, 503, "too many connections");
		return;
	}
	host = host_header(ih, &many);
	if (many < 0) {
		http_send_text(req, 400, "bad request: more than one Host "
		    "header");
		return;
	}
	if (cmd == EVHTTP_REQ_POST && is_upload_path(req)) {
		upload_request(h, req, c);
		return;
	}
	if (is_act_path(req)) {
		/* the dashboard's actions: POST alone (act.c) */
		if (cmd == EVHTTP_REQ_POST)
			http_act_request(h, req, c, host);
		else {
			evhttp_add_header(evhttp_request_get_output_headers(
			    req), "Allow", "POST");
			http_send_text(req, 405, "an action: POST only");
		}
		return;
	}
	if (!(cmd & HTTP_METHODS)) {
		/* a method evhttp does not know: none of ours (RFC 9110
		 * 15.6.2), and Allow says which are */
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET, HEAD");
		http_send_text(req, 501, "not implemented: only GET and HEAD");
		return;
	}
	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
		const char *path = u != NULL ? evhttp_uri_get_path(u) : NULL;

		/* a path that is not there is 404 whatever the method */
		if (!flaky_web_path_known(path != NULL && *path != '\0' ?
		    path : "/")) {
			http_send_text(req, 404, "not found");
			return;
		}
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET, HEAD");
		http_send_text(req, 405, "only GET and HEAD here: the one "
		    "change over HTTP is an action, POST /api/v1/test/ID/VERB");
		return;
	}
	if (h->token != NULL &&
	    !http_token_ok(h, evhttp_find_header(ih, "Authorization"))) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "WWW-Authenticate", "Bearer realm=\"flaky\"");
		http_send_text(req, 401, "a bearer token is required "
		    "(Authorization: Bearer TOKEN)");
		return;
	}
	if (h->token == NULL && !http_host_ok(host)) {
		http_send_text(req, 403, "expected Host: 127.0.0.1, localhost "
		    "or [::1] (no token file: loopback only)");
		return;
	}
	if ((j = http_job_new(h, req)) == NULL) {
		http_send_text(req, 500, "out of memory");
		return;
	}
	if (http_pool_submit(h, j) < 0) {
		http_job_free(j);
		http_send_text(req, 503, "busy: too many requests wait for a "
		    "worker");
		return;
	}
	/* Not owned (evhttp_request_own): evhttp would then never free it
	 * when a reply fails half way; conn_closed says who frees it. */
	j->req = req;
	j->conn = c;
	c->job = j;
}

/* The token file's first line, without its newline; empty is refused. */
static int
token_read(struct flaky_http *h, const char *path, char *err, size_t errlen)
{
	size_t	 len;
	int	 r;

	if ((r = flaky_read_file(path, FLAKY_HTTP_TOKEN_MAX, &h->token, &len,
	    err, errlen)) < 0)
		return r;
	h->tokenlen = strcspn(h->token, "\r\n");
	h->token[h->tokenlen] = '\0';
	if (h->tokenlen == 0)
		return flaky_error(err, errlen, EINVAL, "%s: expected a bearer "
		    "token on its first line, got an empty line", path);
	for (size_t i = 0; i < h->tokenlen; i++)
		if ((unsigned char)h->token[i] <= ' ' ||
		    (unsigned char)h->token[i] >= 0x7f)
			return flaky_error(err, errlen, EINVAL, "%s:1: expected "
			    "a token of printable ASCII without spaces", path);
	return 0;
}

/* Bind, and note the URL with the port the kernel gave. */
static int
http_bind(struct flaky_http *h, const struct flaky_listen *l, char *err,
    size_t errlen)
{
	struct evhttp_bound_socket *bs;
	struct sockaddr_storage ss;
	socklen_t	 sl = sizeof ss;
	uint16_t	 port = l->port;
	int		 v6 = strchr(l->host, ':') != NULL;

	int		 fd, on = 1;

	memset(&ss, 0, sizeof ss);
	if (v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(l->port);
		inet_pton(AF_INET6, l->host, &s6->sin6_addr);
		sl = sizeof *s6;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(l->port);
		inet_pton(AF_INET, l->host, &s4->sin_addr);
		sl = sizeof *s4;
	}
	/* Our own socket for a backlog past evhttp's 128: 200 clients that
	 * connect at once would otherwise wait a second for a SYN retry. */
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, sl) < 0 ||
	    listen(fd, SOMAXCONN) < 0 ||
	    (bs = evhttp_accept_socket_with_handle(h->http, fd)) == NULL) {
		int	 e = errno != 0 ? errno : EADDRINUSE;

		if (fd >= 0)
			close(fd);
		return flaky_error(err, errlen, e, "cannot listen on %s%s%s:%u: "
		    "%s", v6 ? "[" : "", l->host, v6 ? "]" : "", l->port,
		    strerror(e));
	}
	sl = sizeof ss;
	if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&ss,
	    &sl) == 0)
		port = ntohs(ss.ss_family == AF_INET6 ?
		    ((struct sockaddr_in6 *)&ss)->sin6_port :
		    ((struct sockaddr_in *)&ss)->sin_port);
	snprintf(h->url, sizeof h->url, "%s://%s%s%s:%u/", h->tls != NULL ?
	    "https" : "http", v6 ? "[" : "", l->host, v6 ? "]" : "", port);
	return 0;
}

/* Listen and serve from the caller's loop. */
int
flaky_http_start(struct event_base *base, const struct flaky_http_conf *conf,
    struct flaky_http **ret, char *err, size_t errlen)
{
	struct flaky_http *h;
	struct flaky_listen l;
	int		 r;

	*ret = NULL;
	if ((r = flaky_listen_parse(conf->listen, &l, err, errlen)) < 0)
		return r;
	if (!l.loopback && conf->token_file == NULL)
		return flaky_error(err, errlen, EINVAL, "%s is not a loopback "
		    "address: a token file is required to listen on it",
		    conf->listen);
	if ((h = calloc(1, sizeof *h)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	h->base = base;
	LIST_INIT(&h->conns);
	h->max_conns = conf->conns > 0 ? conf->conns : FLAKY_HTTP_CONNS;
	h->queue_max = conf->queue > 0 ? conf->queue : FLAKY_HTTP_QUEUE;
	h->timeout_s = conf->timeout_s > 0 ? conf->timeout_s :
	    FLAKY_HTTP_TIMEOUT_S;
	h->targets = conf->targets;
	h->targets_arg = conf->targets_arg;
	h->db_state = conf->db_state;
	h->db_state_arg = conf->db_state_arg;
	h->up = conf->uploads;
	h->cls = conf->cls;
	if (h->up.on && !l.loopback && conf->tls_cert == NULL &&
	    !conf->behind_proxy) {
		r = flaky_error(err, errlen, EINVAL, "%s is not a loopback "
		    "address: uploads need TLS (a certificate and its key), or "
		    "a proxy in front that serves it (behind_proxy)",
		    conf->listen);
		goto fail;
	}
	if (conf->tls_cert != NULL && (h->tls = flaky_tls_server_ctx(
	    conf->tls_cert, conf->tls_key, err, errlen)) == NULL) {
		r = -EINVAL;
		goto fail;
	}
	if ((conf->token_file != NULL &&
	    (r = token_read(h, conf->token_file, err, errlen)) < 0) ||
	    (r = http_pool_start(h, conf->db_path, conf->threads > 0 ?
	    conf->threads : FLAKY_HTTP_THREADS, err, errlen)) < 0 ||
	    (r = http_upload_start(h, err, errlen)) < 0 ||
	    (r = http_act_start(h, err, errlen)) < 0)
		goto fail;
	if ((h->http = evhttp_new(base)) == NULL) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto fail;
	}
	evhttp_set_max_headers_size(h->http, FLAKY_HTTP_HEADERS);
	evhttp_set_max_body_size(h->http, FLAKY_HTTP_BODY);
	evhttp_set_timeout(h->http, h->timeout_s);
	/* Every method reaches request_cb, which answers 405 with Allow for
	 * the methods evhttp knows, 501 with Allow for those it does not
	 * (its own refusal would be a 501 without Allow, or a 400). */
	evhttp_set_allowed_methods(h->http, HTTP_METHODS | HTTP_REQ_UNKNOWN);
	evhttp_set_gencb(h->http, request_cb, h);
	if (http_accept_init(h) < 0) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto fail;
	}
	if ((r = http_bind(h, &l, err, errlen)) < 0)
		goto fail;
	*ret = h;
	return 0;
fail:
	flaky_http_free(h);
	return r;
}

const char *
flaky_http_url(const struct flaky_http *h)
{
	return h->url;
}

/* New connections get the certificate and key read again. */
int
flaky_http_tls_reload(struct flaky_http *h, const char *cert,
    const char *key, char *err, size_t errlen)
{
	struct ssl_ctx_st *ctx;

	if (cert == NULL || h->tls == NULL)
		return 0;
	if ((ctx = flaky_tls_server_ctx(cert, key, err, errlen)) == NULL)
		return -EINVAL;
	/* connections made with the old one hold a reference to it */
	SSL_CTX_free(h->tls);
	h->tls = ctx;
	return 0;
}

/* Close the listener and every connection, then stop the workers: what
 * they finish goes to nobody. */
void
flaky_http_free(struct flaky_http *h)
{
	if (h == NULL)
		return;
	if (h->http != NULL)
		evhttp_free(h->http);
	http_accept_free(h);
	http_act_stop(h);
	http_upload_stop(h);
	http_pool_stop(h);
	if (h->tls != NULL)
		SSL_CTX_free(h->tls);
	free(h->token);
	free(h);
}

/* One block: the array, then each name and schedule. */
struct flaky_web_target *
flaky_http_targets_pack(const struct flaky_web_target *t, size_t n)
{
	struct flaky_web_target *ret;
	size_t		 size = n * sizeof *ret, nl, sl;
	char		*p;

	for (size_t i = 0; i < n; i++)
		size += strlen(t[i].name) + 1 +
		    (t[i].schedule != NULL ? strlen(t[i].schedule) + 1 : 0);
	if ((ret = malloc(size > 0 ? size : 1)) == NULL)
		return NULL;
	p = (char *)(ret + n);
	for (size_t i = 0; i < n; i++) {
		ret[i] = t[i];
		nl = strlen(t[i].name) + 1;
		ret[i].name = memcpy(p, t[i].name, nl);
		p += nl;
		if (t[i].schedule != NULL) {
			sl = strlen(t[i].schedule) + 1;
			ret[i].schedule = memcpy(p, t[i].schedule, sl);
			p += sl;
		}
	}
	return ret;
}
