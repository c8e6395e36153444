/* One HTTP POST of an alert to a webhook, through libevent's evhttp
 * client: the name resolved by evdns (never a blocking getaddrinfo),
 * https through bufferevent_openssl with the certificate checked against
 * the system's CA store (or the receiver's ca_file:) and the host name,
 * and the whole exchange bounded by one timer. The caller is told once,
 * from the event loop; a cancelled post tells nothing. Logs never see a
 * URL's user, password or query: webhook_safe_url(). */
#include "buildconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "flakyd.h"
#include "http/http.h"
#include "log.h"
#include "util/util.h"

struct webhook {
	struct event_base	*base;
	struct evhttp_connection *conn;
	struct bufferevent	*bev;
	SSL_CTX			*ctx;
	struct event		*timer;
	webhook_cb		 cb;
	void			*arg;
	int			 https;
	int			 told;
	char			 why[160];	/* an error libevent gave */
};

static struct evdns_base *dns;

/* The URL as logs may show it: scheme, host and port; never the user,
 * the password, the path (Slack's keeps the secret there), the query or
 * the fragment. */
char *
webhook_safe_url(const char *url)
{
	struct evhttp_uri *u;
	char		*s;
	int		 port;

	if ((u = evhttp_uri_parse(url)) == NULL ||
	    evhttp_uri_get_host(u) == NULL) {
		if (u != NULL)
			evhttp_uri_free(u);
		return xstrdup("(a bad URL)");
	}
	if ((port = evhttp_uri_get_port(u)) > 0)
		xasprintf(&s, "%s://%s:%d", evhttp_uri_get_scheme(u),
		    evhttp_uri_get_host(u), port);
	else
		xasprintf(&s, "%s://%s", evhttp_uri_get_scheme(u),
		    evhttp_uri_get_host(u));
	evhttp_uri_free(u);
	return s;
}

/* Tell the caller once. */
static void
tell(struct webhook *w, int ok, const char *why)
{
	if (w->told)
		return;
	w->told = 1;
	if (w->timer != NULL)
		evtimer_del(w->timer);
	w->cb(w->arg, ok, why);
}

/* What the TLS layer refused, in words (the certificate check). */
static void
tls_reason(struct webhook *w, char *buf, size_t len)
{
	unsigned long	 e;
	SSL		*ssl;
	long		 v;

	if (!w->https || w->bev == NULL ||
	    (ssl = bufferevent_openssl_get_ssl(w->bev)) == NULL) {
		buf[0] = '\0';
		return;
	}
	if ((v = SSL_get_verify_result(ssl)) != X509_V_OK) {
		snprintf(buf, len, "certificate refused: %s",
		    X509_verify_cert_error_string(v));
		return;
	}
	if ((e = bufferevent_get_openssl_error(w->bev)) != 0) {
		snprintf(buf, len, "TLS: %s", ERR_reason_error_string(e) ?
		    ERR_reason_error_string(e) : "error");
		return;
	}
	buf[0] = '\0';
}

/* libevent's reason for a failed request. */
static void
error_cb(enum evhttp_request_error e, void *arg)
{
	struct webhook	*w = arg;
	const char	*s;

	switch (e) {
	case EVREQ_HTTP_TIMEOUT:	s = "timed out"; break;
	case EVREQ_HTTP_EOF:		s = "connection closed"; break;
	case EVREQ_HTTP_INVALID_HEADER:	s = "a bad reply"; break;
	case EVREQ_HTTP_BUFFER_ERROR:	s = "connection failed"; break;
	case EVREQ_HTTP_DATA_TOO_LONG:	s = "reply too long"; break;
	default:			s = "request failed"; break;
	}
	snprintf(w->why, sizeof w->why, "%s", s);
}

/* The reply, or its absence (req NULL). */
static void
done_cb(struct evhttp_request *req, void *arg)
{
	struct webhook	*w = arg;
	char		 tls[200], why[256];
	int		 code;

	code = req != NULL ? evhttp_request_get_response_code(req) : 0;

	if (code >= 200 && code < 300) {
		tell(w, 1, NULL);
		return;
	}
	tls_reason(w, tls, sizeof tls);
	if (tls[0] != '\0')
		snprintf(why, sizeof why, "%s", tls);
	else if (code > 0)
		snprintf(why, sizeof why, "HTTP %d %s", code,
		    evhttp_request_get_response_code_line(req) ?
		    evhttp_request_get_response_code_line(req) : "");
	else if (w->why[0] != '\0')
		snprintf(why, sizeof why, "%s", w->why);
	else
		snprintf(why, sizeof why, "no reply (connection refused or "
		    "closed)");
	tell(w, 0, why);
}

/* The exchange took too long. */
static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct webhook	*w = arg;

	(void)fd;
	(void)what;
	tell(w, 0, "timed out");
}

/* The bufferevent of an https connection (lib/http/tls.c). */
static struct bufferevent *
tls_bev(struct webhook *w, const char *host, const char *ca_file, char *err,
    size_t errlen)
{
	if ((w->ctx = flaky_tls_client_ctx(ca_file, err, errlen)) == NULL)
		return NULL;
	return flaky_tls_client_bev(w->base, w->ctx, host, err, errlen);
}

/* The request: POST of body with its headers; userinfo becomes Basic
 * authorization. */
static int
request(struct webhook *w, const struct evhttp_uri *u, const char *host,
    int port, const char *body, size_t len)
{
	struct evhttp_request *req;
	struct evkeyvalq *h;
	const char	*path = evhttp_uri_get_path(u), *query;
	char		*target, hostport[300], auth[512];

	if ((req = evhttp_request_new(done_cb, w)) == NULL)
		return -1;
	evhttp_request_set_error_cb(req, error_cb);
	h = evhttp_request_get_output_headers(req);
	snprintf(hostport, sizeof hostport, "%s:%d", host, port);
	evhttp_add_header(h, "Host", hostport);
	evhttp_add_header(h, "Content-Type", "application/json");
	evhttp_add_header(h, "User-Agent", "flakyd/" FLAKY_VERSION);
	evhttp_add_header(h, "Connection", "close");
	if (evhttp_uri_get_userinfo(u) != NULL &&
	    webhook_basic(evhttp_uri_get_userinfo(u), auth, sizeof auth) == 0)
		evhttp_add_header(h, "Authorization", auth);
	evbuffer_add(evhttp_request_get_output_buffer(req), body, len);
	query = evhttp_uri_get_query(u);
	xasprintf(&target, "%s%s%s", path != NULL && *path ? path : "/",
	    query != NULL ? "?" : "", query != NULL ? query : "");
	if (evhttp_make_request(w->conn, req, EVHTTP_REQ_POST, target) < 0) {
		free(target);
		return -1;
	}
	free(target);
	return 0;
}

int
webhook_post(struct event_base *base, const char *url, const char *ca_file,
    int64_t timeout_ms, const char *body, size_t len, webhook_cb cb,
    void *arg, struct webhook **ret, char *err, size_t errlen)
{
	struct webhook	*w;
	struct evhttp_uri *u;
	struct timeval	 tv = { (time_t)(timeout_ms / 1000),
			    (suseconds_t)(timeout_ms % 1000 * 1000) };
	const char	*host, *scheme;
	int		 port, r = -EINVAL;

	*ret = NULL;
	if ((u = evhttp_uri_parse_with_flags(url, 0)) == NULL ||
	    (host = evhttp_uri_get_host(u)) == NULL ||
	    (scheme = evhttp_uri_get_scheme(u)) == NULL) {
		if (u != NULL)
			evhttp_uri_free(u);
		return flaky_error(err, errlen, EINVAL, "not a URL");
	}
	w = xcalloc(1, sizeof *w);
	w->base = base;
	w->cb = cb;
	w->arg = arg;
	w->https = strcmp(scheme, "https") == 0;
	if ((port = evhttp_uri_get_port(u)) <= 0)
		port = w->https ? 443 : 80;
	if (dns == NULL && (dns = evdns_base_new(base,
	    EVDNS_BASE_INITIALIZE_NAMESERVERS)) == NULL &&
	    (dns = evdns_base_new(base, 0)) == NULL) {
		r = flaky_error(err, errlen, ENOMEM, "cannot start evdns");
		goto fail;
	}
	if (w->https && (w->bev = tls_bev(w, host, ca_file, err, errlen)) ==
	    NULL)
		goto fail;
	if ((w->conn = evhttp_connection_base_bufferevent_new(base, dns,
	    w->bev, host, (unsigned short)port)) == NULL) {
		r = flaky_error(err, errlen, ENOMEM, "cannot connect");
		goto fail;
	}
	evhttp_connection_set_timeout_tv(w->conn, &tv);
	evhttp_connection_set_retries(w->conn, 0);
	evhttp_connection_set_max_body_size(w->conn, 64 * 1024);
	evhttp_connection_set_max_headers_size(w->conn, 16 * 1024);
	if ((w->timer = evtimer_new(base, timeout_cb, w)) == NULL ||
	    evtimer_add(w->timer, &tv) < 0 ||
	    request(w, u, host, port, body, len) < 0) {
		r = flaky_error(err, errlen, ENOMEM, "cannot make a request");
		goto fail;
	}
	evhttp_uri_free(u);
	*ret = w;
	return 0;
fail:
	evhttp_uri_free(u);
	w->told = 1;
	webhook_free(w);
	return r;
}

/* Free a post, done or not: a pending one is dropped without a word. */
void
webhook_free(struct webhook *w)
{
	if (w == NULL)
		return;
	w->told = 1;
	if (w->conn != NULL)
		evhttp_connection_free(w->conn);	/* frees bev */
	else if (w->bev != NULL)
		bufferevent_free(w->bev);
	if (w->timer != NULL)
		event_free(w->timer);
	if (w->ctx != NULL)
		SSL_CTX_free(w->ctx);
	free(w);
}

/* At exit. */
void
webhook_shutdown(void)
{
	if (dns != NULL)
		evdns_base_free(dns, 0);
	dns = NULL;
}

/* "Basic BASE64(user:password)" of a URL's userinfo (percent-decoded). */
int
webhook_basic(const char *userinfo, char *buf, size_t len)
{
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char		*plain;
	size_t		 n, o;

	if ((plain = evhttp_uridecode(userinfo, 0, &n)) == NULL)
		return -1;
	if (len < 7 + (n + 2) / 3 * 4 + 1) {
		free(plain);
		return -1;
	}
	o = (size_t)snprintf(buf, len, "Basic ");
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)plain[i] << 16;

		if (i + 1 < n)
			v |= (unsigned char)plain[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)plain[i + 2];
		buf[o++] = b64[v >> 18 & 63];
		buf[o++] = b64[v >> 12 & 63];
		buf[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		buf[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	buf[o] = '\0';
	free(plain);
	return 0;
}
