/* Every connection counted from its accept, not from its first request:
 * evhttp (libevent 2.1) has no cap on connections and no deadline for a
 * request's headers, so a client that connects and sends nothing, or a
 * byte now and then, would hold a descriptor for as long as it likes.
 * We make each connection's bufferevent (evhttp_set_bevcb) and hold a
 * reference to it until its first request arrives: past the cap it is
 * answered 503 and shut at once; without a whole request after the time
 * limit it is shut. A sweep once a second, only while such connections
 * exist, lets go of those evhttp closed meanwhile (it clears their
 * callbacks when it frees them; our reference keeps the memory valid). */
#include "buildconf.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>

#include <openssl/ssl.h>

#include "http_int.h"
#include "util/util.h"

#define REFUSAL	"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n" \
		"Content-Type: text/plain; charset=utf-8\r\n" \
		"Content-Length: 21\r\n\r\ntoo many connections\n"

struct http_pending {
	LIST_ENTRY(http_pending) entry;
	struct bufferevent	*bev;		/* our reference */
	struct http_door	*door;		/* with uploads on */
	int64_t			 deadline_ms;	/* monotonic */
	int			 refuse;	/* past the cap */
};

/* Let go of a connection: evhttp has it (or has closed it). */
static void
pending_free(struct flaky_http *h, struct http_pending *p)
{
	LIST_REMOVE(p, entry);
	h->npending--;
	http_door_free(p->door);
	bufferevent_decref(p->bev);
	free(p);
}

/* Shut a connection evhttp still holds; it frees it on the EOF. */
static void
pending_shut(struct http_pending *p)
{
	evutil_socket_t	 fd = bufferevent_getfd(p->bev);

	if (fd < 0)
		return;
	if (p->refuse && write(fd, REFUSAL, sizeof REFUSAL - 1) < 0)
		p->refuse = 0;
	shutdown(fd, SHUT_RDWR);
}

/* Refusals, deadlines, and connections evhttp closed by itself. */
static void
sweep_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct flaky_http *h = arg;
	struct http_pending *p, *next;
	bufferevent_data_cb readcb;
	struct timeval	 tv = { 1, 0 };
	int64_t		 now = flaky_mono_us() / 1000;

	(void)fd;
	(void)ev;
	for (p = LIST_FIRST(&h->pending); p != NULL; p = next) {
		next = LIST_NEXT(p, entry);
		bufferevent_getcb(p->bev, &readcb, NULL, NULL, NULL);
		if (readcb != NULL && !p->refuse && now < p->deadline_ms)
			continue;
		if (readcb != NULL)
			pending_shut(p);
		pending_free(h, p);
	}
	if (h->npending > 0)
		evtimer_add(h->sweep_ev, &tv);
}

/* A connection's bufferevent for evhttp: the socket's, or TLS's over it
 * (the handshake first). */
static struct bufferevent *
connection_bev(struct flaky_http *h, struct event_base *base)
{
	struct bufferevent *bev;
	SSL		*ssl;

	if (h->tls != NULL) {
		if ((ssl = SSL_new(h->tls)) == NULL)
			return NULL;
		bev = bufferevent_openssl_socket_new(base, -1, ssl,
		    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
		if (bev == NULL) {
			SSL_free(ssl);
			return NULL;
		}
	} else
		bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	return bev;
}

/* evhttp accepted a connection: its bufferevent, counted. */
static struct bufferevent *
bev_cb(struct event_base *base, void *arg)
{
	struct flaky_http *h = arg;
	struct http_pending *p;
	struct bufferevent *bev;
	struct timeval	 tv = { 1, 0 };

	if ((bev = connection_bev(h, base)) == NULL ||
	    (p = calloc(1, sizeof *p)) == NULL)
		return bev;
	/* with uploads, the door sees the input first (door.c) */
	if (h->up.on && (p->door = http_door_new(h, bev)) == NULL) {
		free(p);
		return bev;
	}
	p->bev = bev;
	bufferevent_incref(bev);
	p->deadline_ms = flaky_mono_us() / 1000 + h->timeout_s * 1000LL;
	p->refuse = h->nconns + h->npending >= h->max_conns;
	LIST_INSERT_HEAD(&h->pending, p, entry);
	h->npending++;
	if (p->refuse)
		tv.tv_sec = 0;
	if (p->refuse || !evtimer_pending(h->sweep_ev, NULL))
		evtimer_add(h->sweep_ev, &tv);
	return bev;
}

/* A connection's first request: -1 when it is to be refused, else 0
 * (it leaves the accepted for the counted, http.c), its door handed
 * over unless it stepped aside. */
int
http_pending_claim(struct flaky_http *h, struct evhttp_connection *evcon,
    struct http_door **door)
{
	struct bufferevent *bev = evhttp_connection_get_bufferevent(evcon);
	struct http_pending *p;
	int		 r;

	*door = NULL;
	LIST_FOREACH(p, &h->pending, entry)
		if (p->bev == bev) {
			r = p->refuse ? -1 : 0;
			if (p->door != NULL && !http_door_aside(p->door)) {
				*door = p->door;
				p->door = NULL;
			}
			pending_free(h, p);
			return r;
		}
	return h->nconns + h->npending >= h->max_conns ? -1 : 0;
}

/* An upload's connection may take until deadline_ms for its request. */
void
http_pending_extend(struct flaky_http *h, struct bufferevent *bev,
    int64_t deadline_ms)
{
	struct http_pending *p;

	LIST_FOREACH(p, &h->pending, entry)
		if (p->bev == bev && p->deadline_ms < deadline_ms)
			p->deadline_ms = deadline_ms;
}

/* Count connections from their accept. */
int
http_accept_init(struct flaky_http *h)
{
	LIST_INIT(&h->pending);
	if ((h->sweep_ev = evtimer_new(h->base, sweep_cb, h)) == NULL)
		return -1;
	evhttp_set_bevcb(h->http, bev_cb, h);
	return 0;
}

/* After evhttp_free: our references go. */
void
http_accept_free(struct flaky_http *h)
{
	while (!LIST_EMPTY(&h->pending))
		pending_free(h, LIST_FIRST(&h->pending));
	if (h->sweep_ev != NULL)
		event_free(h->sweep_ev);
}
