/* The dashboard's HTTP transport: libevent's evhttp on the caller's loop,
 * the pages rendered off it (lib/web, flaky_web_handle) by a few worker
 * threads, each with its own read-only store connection. flakyd and
 * flakyctl serve share it. Only GET and HEAD; a bearer token when the
 * config names one; bounded headers, bodies, connections, queue and time
 * per request (docs/dashboard.md, "Serving safely"). */
#ifndef FLAKY_HTTP_H
#define FLAKY_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

struct event_base;
struct flaky_classifier;
struct flaky_http;
struct flaky_web_target;

/* Limits; docs/dashboard.md says why each. */
#define FLAKY_HTTP_THREADS	2
#define FLAKY_HTTP_QUEUE	256	/* requests waiting for a worker */
#define FLAKY_HTTP_CONNS	256	/* open connections */
#define FLAKY_HTTP_TIMEOUT_S	10	/* read, write, and a reply's render */
#define FLAKY_HTTP_HEADERS	8192	/* bytes of a request's headers */
#define FLAKY_HTTP_BODY		8192	/* bytes of a request's body (an action's) */
#define FLAKY_HTTP_TOKEN_MAX	1024	/* bytes of the token file */
/* A database server that cannot be reached is tried again after this,
 * doubling up to the last; meanwhile pages answer 503 at once. */
#define FLAKY_HTTP_RETRY_FIRST_MS	1000
#define FLAKY_HTTP_RETRY_LAST_MS	30000

/* The targets as the caller's loop knows them at one request: called on
 * the loop thread, it returns one malloc'd block (flaky_http_targets_pack)
 * the worker reads and the server frees; NULL with *n 0: from the store. */
typedef struct flaky_web_target *(*flaky_http_targets_fn)(void *arg,
	    size_t *ret_n);

/* The database's state changed, on the loop thread: up 0 when the pages
 * cannot be read from it (a server gone; why: the store's error, which
 * shows the database without credentials), 1 when they can again. For
 * the program to log once per change; a library never logs. */
typedef void (*flaky_http_db_fn)(void *arg, int up, const char *why);

struct flaky_http_conf {
	const char		*listen;	/* ADDR:PORT (config.h) */
	const char		*token_file;	/* NULL: no token, loopback */
	const char		*db_path;
	int			 threads;	/* 0: the defaults above */
	int			 queue;
	int			 conns;
	int			 timeout_s;
	flaky_http_targets_fn	 targets;	/* NULL: from the store */
	void			*targets_arg;
	flaky_http_db_fn	 db_state;	/* NULL: not told */
	void			*db_state_arg;
	/* Uploads (docs/api.md, "Uploads"): POST /api/v1/uploads with a
	 * token of scope upload, stored by a worker of their own with the
	 * classifier given (NULL: the built-in signatures; the caller keeps
	 * it for the server's life). On a listener that is not loopback
	 * they need TLS (tls_cert and tls_key, PEM) or behind_proxy. */
	struct flaky_uploads_conf uploads;
	const struct flaky_classifier *cls;
	const char		*tls_cert;	/* TLS for every request */
	const char		*tls_key;
	int			 behind_proxy;
};

/* Listen on conf->listen and serve from base's loop. A non-loopback
 * address without a token file, an empty or unreadable token file, a
 * database that cannot be opened or an address in use: -errno, err. A
 * PostgreSQL server that cannot be reached is not: the pages answer 503
 * (and /healthz) until it can, tried with backoff, and db_state is told
 * at once. The same after a server restart or outage while serving. */
int	 flaky_http_start(struct event_base *, const struct flaky_http_conf *,
	    struct flaky_http **ret, char *err, size_t errlen);
/* "http://127.0.0.1:8470/" ("https://" with TLS), with the port bound
 * (listen: port 0). */
const char *flaky_http_url(const struct flaky_http *);
/* Read the TLS certificate and key again (flakyd's SIGHUP): new
 * connections get them; 0, or -errno with err and the old ones kept. */
int	 flaky_http_tls_reload(struct flaky_http *, const char *cert,
	    const char *key, char *err, size_t errlen);
/* Stop listening, let the workers finish, free; NULL is fine. */
void	 flaky_http_free(struct flaky_http *);
/* A copy of n targets in one malloc'd block (free() frees it all). */
struct flaky_web_target *flaky_http_targets_pack(
	    const struct flaky_web_target *, size_t n);

/* TLS (tls.c), OpenSSL's SSL_CTX and libevent's bufferevent_openssl: at
 * least TLS 1.2. A client context checks the server's certificate against
 * ca_file (NULL: the system's CA store); a client bufferevent sends the
 * host as SNI and checks that the certificate names it (or its address).
 * A server context serves a PEM certificate chain with its key. NULL with
 * err on failure. */
struct ssl_ctx_st;
struct bufferevent;
struct ssl_ctx_st *flaky_tls_client_ctx(const char *ca_file, char *err,
	    size_t errlen);
struct bufferevent *flaky_tls_client_bev(struct event_base *,
	    struct ssl_ctx_st *, const char *host, char *err, size_t errlen);
struct ssl_ctx_st *flaky_tls_server_ctx(const char *cert_file,
	    const char *key_file, char *err, size_t errlen);

#endif
