/* Uploads (docs/api.md, "Uploads"): POST /api/v1/uploads of a CI job's
 * files, admitted at the door (door.c) on the loop thread and stored by
 * one worker thread of its own with a store it may write, as flakyctl
 * upload stores them into a file (lib/ingest: once per key, whole). On
 * the loop: the token and its scope (the valid tokens' hashes, read again
 * by the worker every few seconds), the limits (uploads in flight in all
 * and per token, a rate per token) and the spool file the body goes into.
 * In the worker: the body taken apart (gzip, multipart/form-data), the
 * metadata of the query checked, the files stored, and the answer: the
 * runs, and what flaky knew of each test that failed. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/http.h>

#include "http_int.h"
#include "ingest/ingest.h"
#include "json/json.h"
#include "store/store.h"
#include "util/util.h"

#define TOKENS_EVERY_MS	5000		/* the valid tokens read again */
#define RATE_BUCKETS	64		/* tokens whose rate is kept */

struct http_upload {
	struct flaky_http	*h;
	int			 status;	/* 0: admitted; else refused */
	char			 msg[256];
	int			 retry_after;	/* s, 429 and 503; 0: none */
	int64_t			 token_id;
	int			 counted;	/* in h's in-flight counts */
	char			*query;
	char			 ctype[256];
	char			 cenc[32];
	char			 key[256];	/* Idempotency-Key, or "" */
	char			 spool[PATH_MAX];
	int			 fd;
	int64_t			 bytes;
	int			 received;
};

/* A token's rate: a bucket of uploads refilled per minute. */
struct rate {
	int64_t		 token_id;
	double		 tokens;
	int64_t		 at_ms;
	int		 in_flight;
};

/* The value of header name in the head, or "". */
static void
header(const char *head, const char *name, char *buf, size_t len)
{
	int	 many;

	if (http_head_header(head, name, buf, len, &many) == NULL)
		buf[0] = '\0';
}

/* Refuse u (once: the first reason stays). */
void
http_upload_refuse(struct http_upload *u, int status, const char *msg)
{
	if (u == NULL || u->status != 0)
		return;
	u->status = status;
	snprintf(u->msg, sizeof u->msg, "%s", msg != NULL ? msg :
	    status == 413 ? "the body is larger than this server's "
	    "max_upload" : "refused");
}

int
http_upload_refused(const struct http_upload *u)
{
	return u == NULL || u->status != 0;
}

/* The token's scope and id from the valid tokens' hashes (loop). */
static int
token_scope(struct flaky_http *h, const char *tok, int64_t *id)
{
	char	 hash[FLAKY_TOKEN_HASH];
	int	 scope = -1;

	flaky_token_hash(tok, strlen(tok), hash);
	pthread_mutex_lock(&h->mtx);
	for (size_t i = 0; i < h->ntokens; i++)
		if (strcmp(h->tokens[i].name, hash) == 0) {
			scope = h->tokens[i].scope;
			*id = h->tokens[i].id;
		}
	pthread_mutex_unlock(&h->mtx);
	return scope;
}

/* The bucket of a token (loop thread only). */
static struct rate *
rate_of(struct flaky_http *h, int64_t id)
{
	struct rate	*r, *old = NULL;

	for (size_t i = 0; i < h->nrates; i++) {
		r = &((struct rate *)h->rates)[i];
		if (r->token_id == id)
			return r;
		if (old == NULL || r->at_ms < old->at_ms)
			old = r;
	}
	if (h->nrates < RATE_BUCKETS)
		old = &((struct rate *)h->rates)[h->nrates++];
	else if (old->in_flight > 0)
		return NULL;
	memset(old, 0, sizeof *old);
	old->token_id = id;
	old->tokens = h->up.per_minute;
	old->at_ms = flaky_mono_us() / 1000;
	return old;
}

/* Refuse u; -1, for the checks below to return. */
static int
no(struct http_upload *u, int status, const char *msg)
{
	http_upload_refuse(u, status, msg);
	return -1;
}

/* The checks of the head: 0 admitted, -1 refused with u's status. */
static int
admit(struct flaky_http *h, struct http_upload *u, const char *head)
{
	char	 auth[FLAKY_TOKEN_LEN + 64], key[1024];
	const char *tok, *q, *sp;
	struct rate *r;
	int64_t	 now = flaky_mono_us() / 1000;
	int	 scope;

	if (!h->up.on)
		return no(u, 404, "uploads are off on this "
		    "server (http: uploads: true, serve --uploads)");
	header(head, "Authorization", auth, sizeof auth);
	tok = auth;
	if (strncasecmp(tok, "Bearer ", 7) != 0)
		return no(u, 401, "an upload token is required "
		    "(Authorization: Bearer TOKEN; flakyctl token create "
		    "--scope upload)");
	for (tok += 7; *tok == ' '; tok++)
		;
	if ((scope = token_scope(h, tok, &u->token_id)) < 0)
		return no(u, 401, "the token is not valid "
		    "here (revoked, or of another server)");
	explicit_bzero(auth, sizeof auth);
	if (scope != FLAKY_SCOPE_UPLOAD)
		return no(u, 403, "a token of scope upload is "
		    "required: this one may not upload");
	header(head, "Content-Type", u->ctype, sizeof u->ctype);
	header(head, "Content-Encoding", u->cenc, sizeof u->cenc);
	header(head, "Idempotency-Key", key, sizeof key);
	if (strlen(key) >= sizeof u->key)
		return no(u, 400, "Idempotency-Key: expected at most 255 "
		    "bytes");
	memcpy(u->key, key, strlen(key) + 1);
	if (u->cenc[0] != '\0' && strcasecmp(u->cenc, "gzip") != 0 &&
	    strcasecmp(u->cenc, "identity") != 0)
		return no(u, 415, "Content-Encoding: expected "
		    "gzip or identity");
	if (!http_upload_type_ok(u->ctype))
		return no(u, 415, "Content-Type: expected "
		    "application/xml, text/plain, application/gzip or "
		    "multipart/form-data");
	/* the query of the request line, for the worker */
	if ((sp = strchr(head, ' ')) != NULL && (sp = strchr(sp + 1, ' ')) !=
	    NULL && (q = memchr(head, '?', (size_t)(sp - head))) != NULL &&
	    (u->query = strndup(q + 1, (size_t)(sp - q - 1))) == NULL)
		return no(u, 500, "out of memory");
	if (h->up_in_flight >= h->up.in_flight) {
		u->retry_after = 1;
		return no(u, 429, "too many uploads at once on "
		    "this server");
	}
	if ((r = rate_of(h, u->token_id)) == NULL ||
	    r->in_flight >= h->up.per_token) {
		u->retry_after = 1;
		return no(u, 429, "too many uploads at once "
		    "with this token");
	}
	r->tokens += (double)(now - r->at_ms) * h->up.per_minute / 60000.0;
	if (r->tokens > h->up.per_minute)
		r->tokens = h->up.per_minute;
	r->at_ms = now;
	if (r->tokens < 1) {
		u->retry_after = (int)((1 - r->tokens) * 60.0 /
		    h->up.per_minute) + 1;
		return no(u, 429, "too many uploads with this "
		    "token: at most per_minute a minute");
	}
	r->tokens -= 1;
	r->in_flight++;
	h->up_in_flight++;
	u->counted = 1;
	snprintf(u->spool, sizeof u->spool, "%s/body-XXXXXX", h->spool_dir);
	if ((u->fd = mkostemp(u->spool, O_CLOEXEC)) < 0) {
		u->spool[0] = '\0';
		return no(u, 503, "cannot spool the upload "
		    "(the server's disk)");
	}
	return 0;
}

/* An upload's head arrived at the door (loop): its checks. */
struct http_upload *
http_upload_admit(struct flaky_http *h, const char *head)
{
	struct http_upload *u;

	if ((u = calloc(1, sizeof *u)) == NULL)
		return NULL;
	u->h = h;
	u->fd = -1;
	(void)admit(h, u, head);
	return u;
}

/* Body bytes into the spool. */
int
http_upload_spool(struct http_upload *u, const char *s, size_t n)
{
	ssize_t	 w;

	u->bytes += (int64_t)n;
	while (n > 0) {
		if ((w = write(u->fd, s, n)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int64_t
http_upload_bytes(const struct http_upload *u)
{
	return u != NULL ? u->bytes : 0;
}

/* The body is whole. */
void
http_upload_received(struct http_upload *u)
{
	if (u == NULL)
		return;
	if (u->fd >= 0)
		close(u->fd);
	u->fd = -1;
	u->received = 1;
}

int
http_upload_is_received(const struct http_upload *u)
{
	return u != NULL && u->received;
}

/* Its answer to an HTTP client, when refused: status, JSON, Retry-After
 * (the caller sends it). */
int
http_upload_refusal(const struct http_upload *u, struct flaky_buf *b,
    int *retry_after)
{
	struct flaky_jw	 w;

	flaky_jw_init(&w, b);
	flaky_jw_object_begin(&w);
	flaky_jw_key(&w, "error");
	flaky_jw_string(&w, u != NULL ? u->msg : "out of memory");
	flaky_jw_key(&w, "status");
	flaky_jw_int(&w, u != NULL ? u->status : 500);
	flaky_jw_object_end(&w);
	(void)flaky_jw_finish(&w);
	flaky_buf_addc(b, '\n');
	*retry_after = u != NULL ? u->retry_after : 0;
	return u != NULL ? u->status : 500;
}

/* Done with u, on the loop: its counts back, its spool gone. */
void
http_upload_drop(struct http_upload *u)
{
	struct rate	*r;

	if (u == NULL)
		return;
	if (u->counted) {
		u->h->up_in_flight--;
		if ((r = rate_of(u->h, u->token_id)) != NULL &&
		    r->in_flight > 0)
			r->in_flight--;
	}
	if (u->fd >= 0)
		close(u->fd);
	if (u->spool[0] != '\0')
		unlink(u->spool);
	free(u->query);
	free(u);
}

/* Is this Content-Type one an upload may have? */
int
http_upload_type_ok(const char *t)
{
	static const char *const ok[] = { "application/xml", "text/xml",
	    "text/plain", "application/gzip", "application/x-gzip",
	    "application/octet-stream", "multipart/form-data" };

	if (*t == '\0')
		return 1;	/* the content tells */
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(ok); i++)
		if (strncasecmp(t, ok[i], strlen(ok[i])) == 0 &&
		    strchr("; \t", t[strlen(ok[i])]) != NULL)
			return 1;
	return 0;
}

/* The accessors the worker (upload_store.c) reads u with. */
const char *
http_upload_spool_path(const struct http_upload *u)
{
	return u->spool;
}

const char *
http_upload_query(const struct http_upload *u)
{
	return u->query;
}

const char *
http_upload_ctype(const struct http_upload *u)
{
	return u->ctype;
}

int
http_upload_gzipped(const struct http_upload *u)
{
	return strcasecmp(u->cenc, "gzip") == 0;
}

const char *
http_upload_key(const struct http_upload *u)
{
	return u->key[0] != '\0' ? u->key : NULL;
}

int64_t
http_upload_token(const struct http_upload *u)
{
	return u->token_id;
}
