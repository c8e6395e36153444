/* http_load: C concurrent clients (keep-alive, one request in flight
 * each) on one URL for S seconds, with libevent's evhttp client; prints
 * requests/s, the statuses and the latency's p50, p99 and max. The load
 * of docs/performance.md, "Issue 17: the dashboard under load":
 * bench/http_load.sh runs it against flakyd while flakyd fires targets
 * every second.
 *
 * usage: http_load URL CLIENTS SECONDS [TOKEN] */
#include "buildconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

struct client;

struct load {
	struct event_base	*base;
	const char		*host, *path, *token;
	int			 port;
	int64_t			 end_us;
	int64_t			*lat;		/* us, one per reply */
	size_t			 nlat, caplat;
	long			 status[6];	/* 1xx..5xx, 0: failed */
	int			 live;
};

struct client {
	struct load		*l;
	struct evhttp_connection *con;
	int64_t			 sent_us;
};

static int64_t
now_us(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void	send_one(struct client *);

/* A reply: note its latency and status, ask again until the end. */
static void
done_cb(struct evhttp_request *req, void *arg)
{
	struct client	*c = arg;
	struct load	*l = c->l;
	int		 st = req != NULL ? evhttp_request_get_response_code(req) : 0;

	if (l->nlat == l->caplat) {
		l->caplat = l->caplat ? 2 * l->caplat : 65536;
		if ((l->lat = realloc(l->lat, l->caplat * sizeof *l->lat)) ==
		    NULL) {
			perror("realloc");
			exit(2);
		}
	}
	l->lat[l->nlat++] = now_us() - c->sent_us;
	l->status[st >= 100 && st < 600 ? st / 100 : 0]++;
	if (now_us() < l->end_us)
		send_one(c);
	else if (--l->live == 0)
		event_base_loopbreak(l->base);
}

/* One GET on the client's connection. */
static void
send_one(struct client *c)
{
	struct evhttp_request *req;
	struct evkeyvalq *h;
	char		 auth[512];

	req = evhttp_request_new(done_cb, c);
	h = evhttp_request_get_output_headers(req);
	evhttp_add_header(h, "Host", c->l->host);
	if (c->l->token != NULL) {
		snprintf(auth, sizeof auth, "Bearer %s", c->l->token);
		evhttp_add_header(h, "Authorization", auth);
	}
	c->sent_us = now_us();
	if (evhttp_make_request(c->con, req, EVHTTP_REQ_GET, c->l->path) < 0) {
		fprintf(stderr, "http_load: cannot send\n");
		exit(2);
	}
}

static int
cmp64(const void *a, const void *b)
{
	int64_t	 x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	struct evhttp_uri *u;
	struct load	 l;
	struct client	*cl;
	int		 n, secs;
	int64_t		 start;
	double		 el;

	if (argc < 4 || (u = evhttp_uri_parse(argv[1])) == NULL ||
	    (n = atoi(argv[2])) <= 0 || (secs = atoi(argv[3])) <= 0) {
		fprintf(stderr, "usage: http_load URL CLIENTS SECONDS "
		    "[TOKEN]\n");
		return 2;
	}
	memset(&l, 0, sizeof l);
	l.base = event_base_new();
	l.host = evhttp_uri_get_host(u);
	l.port = evhttp_uri_get_port(u) > 0 ? evhttp_uri_get_port(u) : 80;
	l.path = evhttp_uri_get_path(u) && *evhttp_uri_get_path(u) ?
	    evhttp_uri_get_path(u) : "/";
	l.token = argc > 4 ? argv[4] : NULL;
	start = now_us();
	l.end_us = start + (int64_t)secs * 1000000;
	if ((cl = calloc(n, sizeof *cl)) == NULL)
		return 2;
	for (int i = 0; i < n; i++) {
		cl[i].l = &l;
		cl[i].con = evhttp_connection_base_new(l.base, NULL, l.host,
		    l.port);
		evhttp_connection_set_timeout(cl[i].con, 30);
		l.live++;
		send_one(&cl[i]);
	}
	event_base_dispatch(l.base);
	el = (now_us() - start) / 1e6;
	qsort(l.lat, l.nlat, sizeof *l.lat, cmp64);
	printf("clients %d, %.1f s, %zu replies, %.0f/s; 2xx %ld, 4xx %ld, "
	    "5xx %ld, failed %ld\n", n, el, l.nlat, l.nlat / el, l.status[2],
	    l.status[4], l.status[5], l.status[0]);
	if (l.nlat > 0)
		printf("latency ms: p50 %.2f, p99 %.2f, max %.2f\n",
		    l.lat[l.nlat / 2] / 1e3, l.lat[l.nlat * 99 / 100] / 1e3,
		    l.lat[l.nlat - 1] / 1e3);
	for (int i = 0; i < n; i++)
		evhttp_connection_free(cl[i].con);
	free(cl);
	free(l.lat);
	evhttp_uri_free(u);
	event_base_free(l.base);
	return l.status[0] > 0 ? 1 : 0;
}
