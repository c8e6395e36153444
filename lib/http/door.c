/* The door of an upload (docs/api.md, "Uploads"). libevent 2.1's evhttp
 * reads a request's whole body into memory before it calls us, so an
 * upload of 256 MiB would cost as much memory for each in flight. With
 * uploads on, a callback on each connection's input buffer sees the bytes
 * as they arrive, before evhttp reads them: the first request's head is
 * held back until it is whole. Anything but POST /api/v1/uploads is then
 * handed to evhttp as it came, and the door steps aside. An upload is
 * checked at its head (token, scope, size, type, limits, upload.c); evhttp
 * is given its head without the headers that frame the body, and the
 * body goes into a spool file as it arrives, never into evhttp's buffers.
 * Once the body is whole, evhttp gets the end of the head (an empty body,
 * Connection: close) and calls http.c, which hands the spool to the
 * upload worker (upload_worker.c). evhttp's read timeout still bounds an
 * idle connection (every read restarts it); a sender slower than the
 * minimum rate, or longer than the maximum time, is refused with 408. A
 * body refused at its head is read and dropped (up to twice the largest
 * upload), so the client can read its answer, then answered. evhttp
 * writes the answers as it writes any: the door is on the input alone.
 * Only a connection's first request can be an upload. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "http_int.h"
#include "util/util.h"

#define RATE_WINDOW_MS	10000		/* slow senders: per window, */
#define RATE_MIN_BYTES	(16 * 1024)	/* at least this many bytes */
#define CHUNK_LINE_MAX	64		/* a chunk's size line */

enum door_state {
	D_HEAD,		/* before the first request's head is whole */
	D_BODY,		/* spooling an upload's body */
	D_DROP,		/* dropping the body of one refused at its head */
	D_DONE,		/* evhttp has the request: what follows is dropped */
	D_PASS,		/* not an upload: the door stepped aside */
};

enum chunk_state {
	C_SIZE,		/* the size line */
	C_DATA,		/* left bytes of the chunk */
	C_DATA_END,	/* the CRLF after its data */
	C_TRAILER,	/* trailer lines up to an empty one */
};

struct http_door {
	struct flaky_http	*h;
	struct bufferevent	*bev;
	struct evbuffer_cb_entry *cb;		/* on its input; NULL: aside */
	struct evbuffer		*held;		/* the new bytes, the head */
	struct evbuffer		*front;		/* what evhttp has not read */
	enum door_state		 state;
	int			 busy;		/* our own changes */
	int			 refused;	/* status for a body cut short */
	struct http_upload	*up;
	int64_t			 left;		/* of the body or the chunk */
	int64_t			 seen;		/* body bytes, framing too */
	int			 chunked;
	enum chunk_state	 cstate;
	char			 cline[CHUNK_LINE_MAX];
	size_t			 clen;
	int64_t			 window_ms, window_bytes, deadline_ms;
};

/* The value of header name in the head (lines after the request line),
 * into buf; NULL when there is none. Two of one name: *many is set
 * (upload.c reads the others). */
const char *
http_head_header(const char *head, const char *name, char *buf, size_t len,
    int *many)
{
	size_t	 n = strlen(name);
	const char *l = strchr(head, '\n'), *found = NULL;

	*many = 0;
	while (l != NULL && *++l != '\0') {
		const char *e = strchr(l, '\n');
		size_t	 ll = e ? (size_t)(e - l) : strlen(l);

		if (ll > n && strncasecmp(l, name, n) == 0 && l[n] == ':') {
			const char *v = l + n + 1;
			size_t	 vl = ll - n - 1;

			while (vl > 0 && (*v == ' ' || *v == '\t'))
				v++, vl--;
			while (vl > 0 && strchr(" \t\r", v[vl - 1]) != NULL)
				vl--;
			if (found != NULL)
				*many = 1;
			snprintf(buf, len, "%.*s", (int)vl, v);
			found = buf;
		}
		l = e;
	}
	return found;
}

/* Is this request line POST /api/v1/uploads (with a query or not)? */
static int
upload_line(const char *head)
{
	static const char p[] = "POST /api/v1/uploads";

	return strncmp(head, p, sizeof p - 1) == 0 &&
	    (head[sizeof p - 1] == '?' || head[sizeof p - 1] == ' ');
}

/* The head as evhttp is to see it: the request line and the headers but
 * those that frame the body (or speak for us), no end yet. */
static void
head_forward(const char *head, struct evbuffer *dst)
{
	static const char *const drop[] = { "content-length:",
	    "transfer-encoding:", "expect:", "connection:", "x-flaky-" };
	const char *l = head;
	int	 first = 1;

	while (*l != '\0') {
		const char *e = strchr(l, '\n');
		size_t	 ll = e ? (size_t)(e - l) + 1 : strlen(l);
		int	 keep = 1;

		for (size_t i = 0; !first && i < FLAKY_ARRAY_SIZE(drop); i++)
			if (strncasecmp(l, drop[i], strlen(drop[i])) == 0)
				keep = 0;
		if (ll <= 2 && (l[0] == '\r' || l[0] == '\n'))
			break;		/* the empty line: the head's end */
		if (keep)
			evbuffer_add(dst, l, ll);
		first = 0;
		l += ll;
	}
}

/* The end of the head evhttp is waiting for: an empty body. */
static void
head_end(struct evbuffer *dst)
{
	static const char end[] = "Content-Length: 0\r\nConnection: close"
	    "\r\n\r\n";

	evbuffer_add(dst, end, sizeof end - 1);
}

/* Body bytes into the spool of an upload admitted; dropped when not.
 * Never more than the bound on disk: bytes past it refuse the upload. */
static int
spool(struct http_door *d, const char *s, size_t n)
{
	if (d->state != D_BODY)
		return 0;
	if (http_upload_bytes(d->up) + (int64_t)n > d->h->up.max_bytes)
		d->refused = 413;
	else if (http_upload_spool(d->up, s, n) < 0)
		d->refused = 503;
	else
		return 0;
	return -1;
}

/* A chunked body's framing, n bytes of s: the data into the spool.
 * 0 going on, 1 at the body's end, -1 when malformed. */
static int
chunked(struct http_door *d, const char *s, size_t n, size_t *used)
{
	size_t	 i = 0;

	while (i < n) {
		if (d->cstate == C_DATA) {
			size_t	 k = n - i < (uint64_t)d->left ? n - i :
			    (size_t)d->left;

			if (spool(d, s + i, k) < 0)
				return -1;
			i += k;
			if ((d->left -= (int64_t)k) == 0)
				d->cstate = C_DATA_END;
			continue;
		}
		if (s[i] != '\n') {
			if (d->clen + 1 >= sizeof d->cline)
				return -1;
			d->cline[d->clen++] = s[i++];
			continue;
		}
		i++;
		d->cline[d->clen] = '\0';
		if (d->clen > 0 && d->cline[d->clen - 1] == '\r')
			d->cline[--d->clen] = '\0';
		if (d->cstate == C_SIZE) {
			char	*end;
			long long v = strtoll(d->cline, &end, 16);

			if (end == d->cline || v < 0 || (*end != '\0' &&
			    *end != ';'))
				return -1;
			d->left = v;
			d->cstate = v == 0 ? C_TRAILER : C_DATA;
		} else if (d->cstate == C_DATA_END) {
			if (d->clen != 0)
				return -1;
			d->cstate = C_SIZE;
		} else if (d->clen == 0) {
			*used = i;
			return 1;	/* the trailers' end */
		}
		d->clen = 0;
	}
	*used = i;
	return 0;
}

/* Body bytes from src: into the spool (D_BODY) or away (D_DROP). 1 when
 * the body is whole, 0 going on, -1 when it is refused now (too large,
 * too slow, malformed; u's status says). src is drained. */
static int
body(struct http_door *d, struct evbuffer *src)
{
	struct evbuffer_iovec v[8];
	int64_t	 now = flaky_mono_us() / 1000, max = d->h->up.max_bytes;
	size_t	 total, used = 0;
	int	 n, r = !d->chunked && d->left == 0;	/* no body */

	while (r == 0 && evbuffer_get_length(src) > 0) {
		n = evbuffer_peek(src, -1, NULL, v, 8);
		total = 0;
		for (int i = 0; i < n && i < 8 && r == 0; i++) {
			const char *s = v[i].iov_base;
			size_t	 len = v[i].iov_len;

			if (d->chunked)
				r = chunked(d, s, len, &used);
			else {
				used = len < (uint64_t)d->left ? len :
				    (size_t)d->left;
				if (spool(d, s, used) < 0)
					r = -1;
				else
					r = (d->left -= (int64_t)used) == 0;
			}
			total += used;
		}
		evbuffer_drain(src, total);
		d->seen += (int64_t)total;
		d->window_bytes += (int64_t)total;
	}
	evbuffer_drain(src, evbuffer_get_length(src));
	if (r < 0) {
		http_upload_refuse(d->up, d->refused ? d->refused : 400,
		    d->refused == 503 ? "cannot spool the upload (the "
		    "server's disk)" : d->refused ? NULL :
		    "malformed chunked body");
		return -1;
	}
	if (r > 0)
		return 1;
	if (d->state == D_BODY ? http_upload_bytes(d->up) > max :
	    d->seen > 2 * max)
		return http_upload_refuse(d->up, 413, NULL), -1;
	if (now - d->window_ms >= RATE_WINDOW_MS) {
		if (d->window_bytes < RATE_MIN_BYTES)
			return http_upload_refuse(d->up, 408, "the body came "
			    "slower than 16 KiB in 10 s"), -1;
		d->window_ms = now;
		d->window_bytes = 0;
	}
	if (now > d->deadline_ms)
		return http_upload_refuse(d->up, 408, "the body took longer "
		    "than this server's upload time limit"), -1;
	return 0;
}

/* The first request's head is whole in d->held, head_len bytes: hand it
 * to evhttp as it came, or as an upload's. */
static void
door_head(struct http_door *d, struct evbuffer *in, size_t head_len)
{
	char	 cl[64], te[64], ex[64], *head;
	long long v;
	int	 m1 = 0, m2 = 0, m3 = 0;

	if ((head = malloc(head_len + 1)) == NULL) {
		d->state = D_PASS;	/* evhttp answers it, or fails */
		return;
	}
	evbuffer_remove(d->held, head, head_len);
	head[head_len] = '\0';
	if (!upload_line(head)) {
		evbuffer_add(in, head, head_len);
		free(head);
		d->state = D_PASS;
		return;
	}
	d->up = http_upload_admit(d->h, head);
	head_forward(head, in);
	ex[0] = '\0';
	if (http_head_header(head, "Transfer-Encoding", te, sizeof te, &m1) !=
	    NULL)
		d->chunked = strcasecmp(te, "chunked") == 0;
	if (http_head_header(head, "Content-Length", cl, sizeof cl, &m2) ==
	    NULL || flaky_parse_int(cl, 0, INT64_MAX / 4, &v) < 0)
		d->left = d->chunked ? 0 : -1;
	else
		d->left = d->chunked ? 0 : v;
	http_head_header(head, "Expect", ex, sizeof ex, &m3);
	free(head);
	if (d->up == NULL || m1 || m2 || (d->left < 0 && !d->chunked)) {
		/* no framing we can read past: answered now */
		http_upload_refuse(d->up, 411, "expected one Content-Length "
		    "or Transfer-Encoding: chunked");
		head_end(in);
		d->state = D_DONE;
		return;
	}
	if (d->left > d->h->up.max_bytes)
		http_upload_refuse(d->up, 413, NULL);
	d->state = http_upload_refused(d->up) ? D_DROP : D_BODY;
	if (d->state == D_BODY && strcasecmp(ex, "100-continue") == 0 && !m3)
		bufferevent_write(d->bev, "HTTP/1.1 100 Continue\r\n\r\n",
		    25);
	d->cstate = C_SIZE;
	d->window_ms = flaky_mono_us() / 1000;
	d->deadline_ms = d->window_ms + d->h->up.max_seconds * 1000LL;
	http_pending_extend(d->h, d->bev, d->deadline_ms);
}

/* Where the head held so far ends (its empty line's end), or 0. */
static size_t
head_length(struct evbuffer *b)
{
	struct evbuffer_ptr crlf = evbuffer_search(b, "\n\r\n", 3, NULL);
	struct evbuffer_ptr lf = evbuffer_search(b, "\n\n", 2, NULL);

	if (crlf.pos >= 0 && (lf.pos < 0 || crlf.pos < lf.pos))
		return (size_t)crlf.pos + 3;
	return lf.pos >= 0 ? (size_t)lf.pos + 2 : 0;
}

/* The last n bytes of in into d->held; what evhttp has yet to read of
 * ours stays. */
static void
take_new(struct http_door *d, struct evbuffer *in, size_t n)
{
	size_t	 keep = evbuffer_get_length(in) - n;

	if (keep > 0)
		evbuffer_remove_buffer(in, d->front, keep);
	evbuffer_add_buffer(d->held, in);
	evbuffer_add_buffer(in, d->front);
}

/* n new bytes at the end of a connection's input, before evhttp reads. */
static void
door_read(struct http_door *d, struct evbuffer *in, size_t n)
{
	size_t	 hl;
	int	 r;

	take_new(d, in, n);
	if (d->state == D_HEAD) {
		if ((hl = head_length(d->held)) > 0)
			door_head(d, in, hl);
		else if (evbuffer_get_length(d->held) > FLAKY_HTTP_HEADERS)
			d->state = D_PASS;	/* evhttp refuses it */
		if (d->state == D_PASS || d->state == D_HEAD) {
			if (d->state == D_PASS) {
				evbuffer_add_buffer(in, d->held);
				evbuffer_remove_cb_entry(in, d->cb);
				d->cb = NULL;
			}
			return;
		}
	}
	if (d->state == D_BODY || d->state == D_DROP) {
		if ((r = body(d, d->held)) != 0) {
			if (r > 0 && d->state == D_BODY)
				http_upload_received(d->up);
			head_end(in);
			d->state = D_DONE;
		}
	}
	evbuffer_drain(d->held, evbuffer_get_length(d->held));
}

static void
door_cb(struct evbuffer *in, const struct evbuffer_cb_info *info, void *arg)
{
	struct http_door *d = arg;

	/* our own changes call back too; evhttp's reads remove */
	if (d->busy || info->n_added == 0 || d->cb == NULL)
		return;
	d->busy = 1;
	door_read(d, in, info->n_added);
	d->busy = 0;
}

/* The door of a connection's bufferevent (a socket's or TLS's, before
 * evhttp has it); NULL when out of memory. */
struct http_door *
http_door_new(struct flaky_http *h, struct bufferevent *bev)
{
	struct http_door *d;

	if ((d = calloc(1, sizeof *d)) == NULL)
		return NULL;
	d->h = h;
	d->bev = bev;
	if ((d->held = evbuffer_new()) == NULL ||
	    (d->front = evbuffer_new()) == NULL ||
	    (d->cb = evbuffer_add_cb(bufferevent_get_input(bev), door_cb,
	    d)) == NULL) {
		http_door_free(d);
		return NULL;
	}
	return d;
}

/* Done with a door (its bufferevent still there): an upload it still has
 * is given up. */
void
http_door_free(struct http_door *d)
{
	if (d == NULL)
		return;
	if (d->cb != NULL)
		evbuffer_remove_cb_entry(bufferevent_get_input(d->bev), d->cb);
	if (d->held != NULL)
		evbuffer_free(d->held);
	if (d->front != NULL)
		evbuffer_free(d->front);
	http_upload_drop(d->up);
	free(d);
}

/* Has the door stepped aside (the first request was no upload)? */
int
http_door_aside(const struct http_door *d)
{
	return d->state == D_PASS;
}

/* The upload of its connection, once its body is whole or it was
 * refused: handed over to the caller. NULL: no upload came to the door. */
struct http_upload *
http_door_take(struct http_door *d)
{
	struct http_upload *u = d != NULL ? d->up : NULL;

	if (u == NULL || d->state != D_DONE)
		return NULL;
	d->up = NULL;
	return u;
}
