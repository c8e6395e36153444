/* flakyctl upload's HTTP client: one POST of a CI job's files to a
 * server's /api/v1/uploads through libevent's evhttp (https through
 * bufferevent_openssl, the certificate checked as for webhooks), the
 * files sent from disk (evbuffer_add_file: never read into memory), the
 * whole exchange bounded by a timer, and retried with backoff when no
 * answer or a temporary one came. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "flakyctl.h"
#include "http/http.h"
#include "log.h"
#include "store/store.h"
#include "upload.h"
#include "util/util.h"

#define RETRY_MAX_MS	60000	/* the longest wait between attempts */

/* One attempt. */
struct attempt {
	struct event_base	*base;
	struct evhttp_connection *conn;
	struct event		*timer;
	SSL_CTX			*ctx;
	struct bufferevent	*tls;		/* https: its connection's */
	int			 done;
	int			 fatal;		/* no use trying again */
	int			 status;	/* 0: no answer */
	int64_t			 retry_after_ms;	/* -1: none said */
	struct flaky_buf	*body;
	char			 why[256];
};

/* The reply, or none. */
static void
done_cb(struct evhttp_request *req, void *arg)
{
	struct attempt	*a = arg;
	struct evbuffer	*in;
	const char	*ra;
	long long	 v;
	size_t		 n;

	if (a->done)
		return;
	a->done = 1;
	if (req == NULL || evhttp_request_get_response_code(req) == 0) {
		if (a->why[0] == '\0')
			snprintf(a->why, sizeof a->why, "no answer (connection "
			    "refused, reset or cut)");
	} else {
		a->status = evhttp_request_get_response_code(req);
		in = evhttp_request_get_input_buffer(req);
		n = evbuffer_get_length(in);
		flaky_buf_reset(a->body);
		flaky_buf_add(a->body, evbuffer_pullup(in, (ssize_t)n), n);
		ra = evhttp_find_header(evhttp_request_get_input_headers(req),
		    "Retry-After");
		if (ra != NULL && flaky_parse_int(ra, 0, 3600, &v) == 0)
			a->retry_after_ms = v * 1000;
	}
	event_base_loopbreak(a->base);
}

/* Why a request failed, as libevent tells it. */
static void
error_cb(enum evhttp_request_error e, void *arg)
{
	struct attempt	*a = arg;
	SSL		*ssl = a->tls != NULL ?
			    bufferevent_openssl_get_ssl(a->tls) : NULL;
	long		 v = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;

	if (v != X509_V_OK) {
		/* the same certificate the next time: said once */
		snprintf(a->why, sizeof a->why, "TLS: the server's "
		    "certificate is not trusted: %s (--ca-file names the CA "
		    "that signed it)", X509_verify_cert_error_string(v));
		a->fatal = 1;
		return;
	}
	snprintf(a->why, sizeof a->why, "%s", e == EVREQ_HTTP_TIMEOUT ?
	    "timed out" : e == EVREQ_HTTP_EOF ? "the connection closed "
	    "before an answer" : e == EVREQ_HTTP_INVALID_HEADER ?
	    "an answer that is not HTTP" : e == EVREQ_HTTP_BUFFER_ERROR ?
	    "a connection error (TLS or socket)" : "the request failed");
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct attempt	*a = arg;

	(void)fd;
	(void)what;
	if (a->done)
		return;
	snprintf(a->why, sizeof a->why, "timed out");
	a->done = 1;
	event_base_loopbreak(a->base);
}

/* The files into the request's body: one as it is, several as parts of
 * multipart/form-data. The Content-Type to send into ctype. */
static int
add_files(const struct upload_req *u, struct evbuffer *out, char *ctype,
    size_t ctlen, char *err, size_t errlen)
{
	unsigned char	 rnd[12];
	char		 boundary[40];
	struct stat	 sb;
	int		 fd;

	if (u->nfiles > 1) {
		if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
			memset(rnd, 0x5a, sizeof rnd);
		snprintf(boundary, sizeof boundary, "flaky-");
		for (size_t i = 0; i < sizeof rnd; i++)
			snprintf(boundary + 6 + 2 * i, 3, "%02x", rnd[i]);
		snprintf(ctype, ctlen, "multipart/form-data; boundary=%s",
		    boundary);
	}
	for (size_t i = 0; i < u->nfiles; i++) {
		const char *name = strrchr(u->files[i], '/');
		char	 first = 0;

		name = name != NULL ? name + 1 : u->files[i];
		if ((fd = open(u->files[i], O_RDONLY | O_CLOEXEC)) == -1 ||
		    fstat(fd, &sb) == -1) {
			if (fd != -1)
				close(fd);
			return flaky_error(err, errlen, errno, "%s: %s",
			    u->files[i], strerror(errno));
		}
		if (u->nfiles == 1) {
			if (pread(fd, &first, 1, 0) < 0)
				first = 0;
			snprintf(ctype, ctlen, "%s", first == '<' ?
			    "application/xml" : "text/plain; charset=utf-8");
		} else
			evbuffer_add_printf(out, "--%s\r\nContent-Disposition: "
			    "form-data; name=\"file\"; filename=\"%s\"\r\n"
			    "Content-Type: application/octet-stream\r\n\r\n",
			    boundary, name);
		/* evbuffer_add_file owns fd from here, even on failure */
		if (sb.st_size > 0 && evbuffer_add_file(out, fd, 0,
		    sb.st_size) < 0)
			return flaky_error(err, errlen, ENOMEM, "%s: cannot "
			    "send it", u->files[i]);
		if (sb.st_size == 0)
			close(fd);
		if (u->nfiles > 1)
			evbuffer_add_printf(out, "\r\n");
	}
	if (u->nfiles > 1)
		evbuffer_add_printf(out, "--%s--\r\n", boundary);
	return 0;
}

/* One attempt: connect, send, wait for the answer within the timeout.
 * 0 with a->status (0: no answer, a->why), or -1 with err when the
 * request could not even be made (a bad URL or file). */
static int
attempt_once(struct event_base *base, struct evdns_base *dns,
    const struct upload_req *u, struct attempt *a, char *err, size_t errlen)
{
	struct evhttp_uri *uri;
	struct evhttp_request *req;
	struct bufferevent *bev = NULL;
	struct evkeyvalq *h;
	struct timeval	 tv = { (time_t)(u->timeout_ms / 1000),
			    (suseconds_t)(u->timeout_ms % 1000 * 1000) };
	const char	*host, *scheme, *path;
	char		 hostport[300], ctype[128], auth[FLAKY_TOKEN_LEN + 64];
	char		*target = NULL;
	size_t		 plen;
	int		 port, https, r = -1;

	if ((uri = evhttp_uri_parse_with_flags(u->server, 0)) == NULL ||
	    (host = evhttp_uri_get_host(uri)) == NULL ||
	    (scheme = evhttp_uri_get_scheme(uri)) == NULL ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
		flaky_error(err, errlen, EINVAL, "--server: expected "
		    "http(s)://HOST[:PORT], a postgresql:// URI or a file");
		goto out;
	}
	https = strcmp(scheme, "https") == 0;
	if ((port = evhttp_uri_get_port(uri)) <= 0)
		port = https ? 443 : 80;
	if (https && (a->ctx = flaky_tls_client_ctx(u->ca_file, err,
	    errlen)) == NULL)
		goto out;
	if (https && (a->tls = bev = flaky_tls_client_bev(base, a->ctx, host,
	    err, errlen)) == NULL)
		goto out;
	if ((a->conn = evhttp_connection_base_bufferevent_new(base, dns, bev,
	    host, (unsigned short)port)) == NULL) {
		flaky_error(err, errlen, ENOMEM, "cannot connect");
		goto out;
	}
	evhttp_connection_set_timeout_tv(a->conn, &tv);
	evhttp_connection_set_retries(a->conn, 0);
	evhttp_connection_set_max_body_size(a->conn, 16 * 1024 * 1024);
	if ((req = evhttp_request_new(done_cb, a)) == NULL) {
		flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	evhttp_request_set_error_cb(req, error_cb);
	if (u->nfiles > 0 && add_files(u, evhttp_request_get_output_buffer(req),
	    ctype, sizeof ctype, err, errlen) < 0) {
		evhttp_request_free(req);
		goto out;
	}
	h = evhttp_request_get_output_headers(req);
	snprintf(hostport, sizeof hostport, "%s:%d", host, port);
	evhttp_add_header(h, "Host", hostport);
	if (u->nfiles > 0)
		evhttp_add_header(h, "Content-Type", ctype);
	evhttp_add_header(h, "User-Agent", "flakyctl/" FLAKY_VERSION);
	evhttp_add_header(h, "Connection", "close");
	if (u->token != NULL) {
		snprintf(auth, sizeof auth, "Bearer %s", u->token);
		evhttp_add_header(h, "Authorization", auth);
		explicit_bzero(auth, sizeof auth);
	}
	if (u->idem_key != NULL)
		evhttp_add_header(h, "Idempotency-Key", u->idem_key);
	/* a prefix the server is behind (a proxy's path), without its
	 * trailing slashes */
	path = evhttp_uri_get_path(uri);
	plen = path != NULL ? strlen(path) : 0;
	while (plen > 0 && path[plen - 1] == '/')
		plen--;
	xasprintf(&target, "%.*s%s%s%s", (int)plen, plen > 0 ? path : "",
	    u->path != NULL ? u->path : "/api/v1/uploads", u->query ? "?" : "",
	    u->query ? u->query : "");
	if ((a->timer = evtimer_new(base, timeout_cb, a)) == NULL ||
	    evtimer_add(a->timer, &tv) < 0 ||
	    evhttp_make_request(a->conn, req, u->nfiles > 0 ?
	    EVHTTP_REQ_POST : EVHTTP_REQ_GET, target) < 0) {
		flaky_error(err, errlen, ENOMEM, "cannot make a request");
		goto out;
	}
	while (!a->done)
		if (event_base_dispatch(base) < 0)
			break;
	r = 0;
out:
	free(target);
	if (uri != NULL)
		evhttp_uri_free(uri);
	return r;
}

/* Free what one attempt made. */
static void
attempt_free(struct attempt *a)
{
	if (a->timer != NULL)
		event_free(a->timer);
	if (a->conn != NULL)
		evhttp_connection_free(a->conn);
	if (a->ctx != NULL)
		SSL_CTX_free(a->ctx);
	a->timer = NULL;
	a->conn = NULL;
	a->tls = NULL;
	a->ctx = NULL;
}

/* Sleep ms, on the loop: nothing else runs meanwhile. */
static void
wait_ms(struct event_base *base, int64_t ms)
{
	struct timeval	 tv = { (time_t)(ms / 1000),
			    (suseconds_t)(ms % 1000 * 1000) };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

int
upload_post(struct event_base *base, const struct upload_req *u,
    int *status, struct flaky_buf *body, char *err, size_t errlen)
{
	struct evdns_base *dns;
	struct attempt	 a;
	int64_t		 wait = u->backoff_ms > 0 ? u->backoff_ms : 1000;
	int		 r = -1;

	*status = 0;
	if ((dns = evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS)) ==
	    NULL && (dns = evdns_base_new(base, 0)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "cannot start evdns");
	for (int i = 0; i <= u->retries; i++) {
		memset(&a, 0, sizeof a);
		a.base = base;
		a.body = body;
		a.retry_after_ms = -1;
		if (attempt_once(base, dns, u, &a, err, errlen) < 0) {
			attempt_free(&a);
			break;
		}
		attempt_free(&a);
		*status = a.status;
		if (a.fatal) {
			flaky_error(err, errlen, EPERM, "%s", a.why);
			break;
		}
		if (a.status != 0 && a.status != 408 && a.status != 429 &&
		    a.status < 500) {
			r = 0;
			break;
		}
		if (a.status != 0)
			snprintf(a.why, sizeof a.why, "HTTP %d", a.status);
		if (i == u->retries) {
			flaky_error(err, errlen, EIO, "%s, after %d attempt%s",
			    a.why, i + 1, i ? "s" : "");
			r = a.status != 0 ? 0 : -1;
			break;
		}
		if (a.retry_after_ms >= 0)
			wait = a.retry_after_ms;
		fprintf(stderr, "flakyctl %s: %s; again in %.1f s "
		    "(attempt %d of %d)\n", u->who ? u->who : "upload", a.why,
		    wait / 1000.0, i + 2, u->retries + 1);
		wait_ms(base, wait);
		wait = wait * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : wait * 2;
	}
	evdns_base_free(dns, 0);
	return r;
}
