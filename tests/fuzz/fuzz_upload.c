/* libFuzzer harness for what an upload's client sends (docs/api.md,
 * "Uploads"), over arbitrary bytes:
 *   - the door (lib/http/door.c): the bytes of a connection, fed in
 *     pieces whose sizes the input chooses, through a bufferevent pair to
 *     the callback that holds the first head, spools an upload's body
 *     (Content-Length or chunked) and hands evhttp the rest;
 *   - the query's metadata (http_upload_metadata);
 *   - the body taken apart on disk: multipart/form-data split and gzip
 *     inflated within a bound (upload_body.c).
 * The door's partners (upload.c's admission, the spool, accept.c's
 * deadline) are replaced below by ones that count, so that what the door
 * did can be checked: it never hands evhttp or the spool more than it was
 * given (besides the few bytes of the head's end it adds), an upload it
 * says is whole got every byte its Content-Length said, and nothing
 * leaks. Run with scripts/fuzz.sh. */
#include "buildconf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "http/http_int.h"
#include "ingest/ingest.h"
#include "util/util.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* An invariant: abort() so libFuzzer keeps the input. */
static void
check(int cond)
{
	if (!cond)
		abort();
}

/* The upload the door was given, as upload.c would keep it. */
struct http_upload {
	int	 status;
	int64_t	 bytes;
	int	 received;
};
static int	 uploads_live;

struct http_upload *
http_upload_admit(struct flaky_http *h, const char *head)
{
	struct http_upload *u = calloc(1, sizeof *u);

	(void)h;
	check(head != NULL && strncmp(head, "POST /api/v1/uploads", 20) == 0);
	if (u != NULL) {
		uploads_live++;
		/* refused at its head when its head says so */
		if (strstr(head, "Refuse") != NULL)
			u->status = 401;
	}
	return u;
}

void
http_upload_refuse(struct http_upload *u, int status, const char *msg)
{
	(void)msg;
	if (u != NULL && u->status == 0)
		u->status = status;
}

int
http_upload_refused(const struct http_upload *u)
{
	return u == NULL || u->status != 0;
}

int
http_upload_spool(struct http_upload *u, const char *s, size_t n)
{
	(void)s;
	check(u != NULL && u->status == 0 && !u->received);
	u->bytes += (int64_t)n;
	return 0;
}

int64_t
http_upload_bytes(const struct http_upload *u)
{
	return u != NULL ? u->bytes : 0;
}

void
http_upload_received(struct http_upload *u)
{
	check(u != NULL && u->status == 0 && !u->received);
	u->received = 1;
}

void
http_upload_drop(struct http_upload *u)
{
	if (u == NULL)
		return;
	uploads_live--;
	free(u);
}

void
http_pending_extend(struct flaky_http *h, struct bufferevent *bev,
    int64_t deadline_ms)
{
	(void)h;
	(void)bev;
	(void)deadline_ms;
}

/* The check of a CI's metadata is the store's (its unit tests). */
int
flaky_ci_meta_check(const struct flaky_ci_meta *m, char *err, size_t errlen)
{
	(void)m;
	(void)err;
	(void)errlen;
	return 0;
}

/* The Content-Length of a plain upload that is whole in these bytes
 * (its head, then exactly that many bytes), or -1 when it is not one or
 * the door may read it otherwise. Sound, not complete: -1 claims
 * nothing. Headers are matched as the door matches them, without regard
 * to case; a value counts only when a CRLF ends it (a bare CR inside a
 * line is part of its value, which the door refuses). */
static long long
whole_length(const uint8_t *data, size_t size)
{
	const char *e = memmem(data, size, "\r\n\r\n", 4), *c;
	char	 head[4096], *end;
	size_t	 hl;
	long long cl;

	if (e == NULL || size <= 20 || memcmp(data, "POST /api/v1/uploads",
	    20) != 0 || (data[20] != ' ' && data[20] != '?'))
		return -1;
	hl = (size_t)(e - (const char *)data) + 2;	/* its last CRLF too */
	if (hl >= sizeof head || memchr(data, '\0', hl) != NULL)
		return -1;
	for (size_t i = 0; i < hl; i++)
		head[i] = (char)tolower(data[i]);
	head[hl] = '\0';
	/* evhttp and the door end a head at its first empty line, a bare
	 * LF one too: only a head that ends at this CRLF one is whole */
	if (strstr(head, "\n\n") != NULL || strstr(head, "\n\r\n") != NULL)
		return -1;
	if (strstr(head, "refuse") != NULL ||
	    strstr(head, "\ntransfer-encoding") != NULL ||
	    (c = strstr(head, "\ncontent-length")) == NULL ||
	    strstr(c + 1, "\ncontent-length") != NULL)
		return -1;
	if (memcmp(c + 15, ": ", 2) != 0 || c[17] < '0' || c[17] > '9')
		return -1;
	cl = strtoll(c + 17, &end, 10);
	if (end[0] != '\r' || end[1] != '\n' || cl < 0 || cl > 4096 ||
	    (size_t)cl != size - hl - 2)
		return -1;
	return cl;
}

/* The door over a connection of these bytes, fed in pieces. */
static void
door(const uint8_t *data, size_t size, size_t step)
{
	static struct event_base *base;
	struct flaky_http h;
	struct bufferevent *pair[2];
	struct http_door *d;
	struct http_upload *u;
	size_t	 at = 0;
	int64_t	 given = 0;
	long long cl;

	if (base == NULL && (base = event_base_new()) == NULL)
		abort();
	memset(&h, 0, sizeof h);
	h.up.on = 1;
	h.up.max_bytes = 4096;
	h.up.max_seconds = 600;
	if (bufferevent_pair_new(base, 0, pair) < 0)
		abort();
	bufferevent_enable(pair[0], EV_READ | EV_WRITE);
	bufferevent_enable(pair[1], EV_READ | EV_WRITE);
	check((d = http_door_new(&h, pair[1])) != NULL);
	while (at < size) {
		size_t	 n = size - at < step ? size - at : step;

		bufferevent_write(pair[0], data + at, n);
		at += n;
		given += (int64_t)n;
		step = step * 3 % 97 + 1;
	}
	/* what evhttp would read: at most what came, and a head's end */
	check((int64_t)evbuffer_get_length(bufferevent_get_input(pair[1])) <=
	    given + 64);
	/* a plain upload, whole: its body spooled, every byte of it */
	if ((cl = whole_length(data, size)) >= 0) {
		check((u = http_door_take(d)) != NULL);
		check(u->received && u->bytes == cl);
		http_upload_drop(u);
	}
	u = http_door_take(d);
	if (u != NULL) {
		check(u->bytes <= given && u->bytes <= 4096);
		check(u->received || u->status != 0);
		http_upload_drop(u);
	}
	http_door_free(d);
	bufferevent_free(pair[0]);
	bufferevent_free(pair[1]);
	/* a bufferevent is freed by its base's loop (its finalizers) */
	event_base_loop(base, EVLOOP_NONBLOCK);
	check(uploads_live == 0);
}

/* The bytes as a query. */
static void
query(const uint8_t *data, size_t size)
{
	struct evkeyvalq kv;
	struct flaky_upload u;
	struct flaky_ci_meta m;
	char	*q, salt[3000], err[512];

	if ((q = strndup((const char *)data, size)) == NULL)
		return;
	TAILQ_INIT(&kv);
	memset(&u, 0, sizeof u);
	memset(&m, 0, sizeof m);
	if (http_upload_metadata(q, &kv, &u, &m, salt, sizeof salt, err,
	    sizeof err) == 0)
		check(u.in.target != NULL && flaky_target_name_ok(u.in.target));
	else
		check(err[0] != '\0');
	evhttp_clear_headers(&kv);
	free(q);
}

static char	 body_dir[64];

/* The body's folder, empty between inputs, gone when the run ends. */
static void
body_dir_remove(void)
{
	rmdir(body_dir);
}

/* The bytes as a body on disk: split as multipart (the boundary its
 * first line's, when it has one) and inflated. */
static void
body(const uint8_t *data, size_t size)
{
	char	*dir = body_dir;
	struct http_body b;
	char	 path[128], out[128], ctype[200], err[512];
	const char *nl = memchr(data, '\n', size < 80 ? size : 80);
	int	 fd;
	struct stat sb;

	if (dir[0] == '\0') {
		snprintf(body_dir, sizeof body_dir, "/tmp/fuzz_upload.XXXXXX");
		if (mkdtemp(body_dir) == NULL || atexit(body_dir_remove) != 0)
			abort();
	}
	snprintf(path, sizeof path, "%s/body", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
		abort();
	if (size > 0 && write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	snprintf(ctype, sizeof ctype, "multipart/form-data; boundary=%.*s",
	    nl != NULL && nl > (const char *)data + 2 ? (int)(nl -
	    (const char *)data - 2) : 4, nl != NULL && nl > (const char *)data
	    + 2 ? (const char *)data + 2 : "abcd");
	memset(&b, 0, sizeof b);
	snprintf(b.dir, sizeof b.dir, "%s", dir);
	(void)http_body_split(path, ctype, &b, 65536, err, sizeof err);
	for (size_t i = 0; i < b.n; i++) {
		check(stat(b.f[i].path, &sb) != 0 || sb.st_size <= 65536);
	}
	for (size_t i = 0; i < b.n; i++)
		unlink(b.f[i].path);
	snprintf(out, sizeof out, "%s/out", dir);
	if (http_body_is_gzip(path) && http_body_gunzip(path, out, 65536, err,
	    sizeof err) == 0) {
		check(stat(out, &sb) == 0 && sb.st_size <= 65536);
	}
	unlink(out);
	unlink(path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	/* the first byte's low bits choose the part; all see the rest */
	switch (data[0] & 3) {
	case 0:
	case 1:
		door(data + 1, size - 1, (size_t)data[0] % 97 + 1);
		break;
	case 2:
		query(data + 1, size - 1);
		break;
	default:
		body(data + 1, size - 1);
		break;
	}
	return 0;
}
