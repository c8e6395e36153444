/* The dashboard's actions over HTTP (issue 32, docs/dashboard.md
 * "Actions"): quarantine, release, a ticket, an owner, each a POST of a
 * small JSON object to /api/v1/test/ID/VERB. At the door (the loop):
 *   - a token of the database's with scope write (flakyctl token create
 *     --scope write) in Authorization: Bearer, never a cookie, so a page
 *     of another site cannot send it through the visitor's browser;
 *   - Content-Type application/json (a cross-site form cannot send it,
 *     and a cross-site fetch of it needs a CORS preflight this server
 *     never grants), an Origin, when sent, of this server, and
 *     Sec-Fetch-Site, when sent, same-origin;
 *   - the body within FLAKY_HTTP_BODY (evhttp's bound);
 *   - without a token file, a loopback Host (DNS rebinding, as for GET).
 * Then a worker of its own with a writable store takes it (flaky_web_act)
 * and records the token's name as who. It also reads the valid tokens
 * again every few seconds when uploads are off (upload_worker.c does it
 * when they are on), so a token made or revoked counts within seconds. */
#include "buildconf.h"

#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "http_int.h"
#include "json/json.h"
#include "store/store.h"
#include "util/util.h"
#include "web/web.h"

#define ACT_TOKENS_EVERY_MS	5000
#define ACT_BUSY_MS		2000	/* a write waits for another */

/* A refusal as the API's JSON error. */
static void
refuse(struct evhttp_request *req, int status, const char *msg)
{
	struct flaky_buf b;

	/* the API's JSON error (lib/web/api.c): error, status, parameter
	 * and expected */
	flaky_buf_init(&b);
	flaky_buf_adds(&b, "{\"error\":");
	flaky_json_escape_str(&b, msg);
	flaky_buf_printf(&b, ",\"status\":%d,\"parameter\":null,"
	    "\"expected\":null}\n", status);
	if (status == 401)
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "WWW-Authenticate", "Bearer realm=\"flaky\"");
	if (b.oom)
		http_send_text(req, 500, "out of memory");
	else
		http_send_reply(req, status, "application/json", b.data, b.len,
		    NULL);
	flaky_buf_free(&b);
}

/* The scope and id of the database's token in an Authorization header:
 * 0 with none (no token, an unknown one), else its scope. */
static int
token_scope(struct flaky_http *h, const char *auth, int64_t *id)
{
	char	 hash[FLAKY_TOKEN_HASH];
	int	 scope = 0;

	if (auth == NULL || strncasecmp(auth, "Bearer ", 7) != 0)
		return 0;
	for (auth += 7; *auth == ' '; auth++)
		;
	flaky_token_hash(auth, strlen(auth), hash);
	pthread_mutex_lock(&h->mtx);
	for (size_t i = 0; i < h->ntokens; i++)
		if (strcmp(h->tokens[i].name, hash) == 0) {
			scope = h->tokens[i].scope;
			*id = h->tokens[i].id;
		}
	pthread_mutex_unlock(&h->mtx);
	return scope;
}

/* Does the request come from this server's own pages? An Origin, when
 * there is one, must be this server's; Sec-Fetch-Site, when there is
 * one, same-origin (or none: typed by a person, or sent by a program). */
static int
same_origin(struct flaky_http *h, struct evkeyvalq *ih, const char *host)
{
	const char *o = evhttp_find_header(ih, "Origin");
	const char *site = evhttp_find_header(ih, "Sec-Fetch-Site");
	const char *scheme = h->tls != NULL ? "https://" : "http://";
	size_t	 n = strlen(scheme);

	if (site != NULL && strcmp(site, "same-origin") != 0 &&
	    strcmp(site, "none") != 0)
		return 0;
	if (o == NULL)
		return 1;
	return host != NULL && strncmp(o, scheme, n) == 0 &&
	    strcasecmp(o + n, host) == 0;
}

/* Is the body declared JSON (application/json, a charset allowed)? */
static int
json_type(const char *t)
{
	if (t == NULL || strncasecmp(t, "application/json", 16) != 0)
		return 0;
	t += 16;
	while (*t == ' ')
		t++;
	return *t == '\0' || *t == ';';
}

void
http_act_request(struct flaky_http *h, struct evhttp_request *req,
    struct http_conn *c, const char *host)
{
	struct evkeyvalq *ih = evhttp_request_get_input_headers(req);
	struct evbuffer	*in = evhttp_request_get_input_buffer(req);
	struct http_job	*j;
	int64_t		 id = 0;
	size_t		 len = evbuffer_get_length(in);
	int		 scope;

	if (h->token == NULL && !http_host_ok(host)) {
		refuse(req, 403, "expected Host: 127.0.0.1, localhost or [::1] "
		    "(no token file: loopback only)");
		return;
	}
	if (!same_origin(h, ih, host)) {
		refuse(req, 403, "forbidden: a cross-site request (Origin or "
		    "Sec-Fetch-Site of another site)");
		return;
	}
	scope = token_scope(h, evhttp_find_header(ih, "Authorization"), &id);
	if (scope == 0) {
		refuse(req, 401, "an action needs a token of scope write "
		    "(Authorization: Bearer TOKEN; flakyctl token create "
		    "--scope write)");
		return;
	}
	if (scope != FLAKY_SCOPE_WRITE) {
		refuse(req, 403, "forbidden: the token's scope is not write "
		    "(flakyctl token create --scope write)");
		return;
	}
	if (!json_type(evhttp_find_header(ih, "Content-Type"))) {
		refuse(req, 415, "unsupported media type: expected "
		    "Content-Type: application/json");
		return;
	}
	if (len > FLAKY_HTTP_BODY) {
		refuse(req, 413, "content too large: an action's body is a "
		    "small JSON object");
		return;
	}
	if ((j = http_job_new(h, req)) == NULL ||
	    (j->body = malloc(len + 1)) == NULL) {
		http_job_free(j);
		http_send_text(req, 500, "out of memory");
		return;
	}
	evbuffer_copyout(in, j->body, len);
	j->body[len] = '\0';
	j->body_len = len;
	j->act = 1;
	j->token_id = id;
	pthread_mutex_lock(&h->mtx);
	TAILQ_INSERT_TAIL(&h->act_todo, j, entry);
	pthread_cond_signal(&h->act_cond);
	pthread_mutex_unlock(&h->mtx);
	j->req = req;
	j->conn = c;
	c->job = j;
}

/* A worker's store (flags: 0 writable, or FLAKY_STORE_READONLY), opened
 * or connected again: NULL when the database cannot be reached now. */
static struct flaky_store *
act_store(struct flaky_http *h, struct flaky_store **stp, int flags)
{
	char	 err[512];

	if (*stp != NULL && !flaky_store_lost(*stp))
		return *stp;
	if (*stp != NULL && flaky_store_reconnect(*stp, err, sizeof err) == 0)
		return *stp;
	flaky_store_close(*stp);
	*stp = NULL;
	if (flaky_store_open(h->db_path, flags, stp, err, sizeof err) < 0) {
		*stp = NULL;
		return NULL;
	}
	if (flags == 0)
		flaky_store_set_busy_timeout(*stp, ACT_BUSY_MS);
	return *stp;
}

/* Take one action with the writable store (opened at the first: a
 * server nobody acts on never writes), as the token's name. */
static void
act_render(struct flaky_http *h, struct flaky_store **stp, struct http_job *j)
{
	struct flaky_web_opts o;
	struct flaky_store *st = act_store(h, stp, 0);
	char		*who = NULL, err[512];

	memset(&o, 0, sizeof o);
	o.now_ms = j->now_ms;
	j->reply.content_type = "application/json";
	if (st == NULL) {
		j->reply.status = 503;
		flaky_buf_adds(&j->reply.body, "{\"error\":\"unavailable: the "
		    "database cannot be opened for writing now\",\"status\":"
		    "503,\"parameter\":null,\"expected\":null}\n");
		return;
	}
	if (flaky_store_token_name(st, j->token_id, FLAKY_SCOPE_WRITE, &who,
	    err, sizeof err) <= 0) {
		/* revoked meanwhile */
		j->reply.status = 401;
		flaky_buf_adds(&j->reply.body, "{\"error\":\"the token is not "
		    "valid any more\",\"status\":401,\"parameter\":null,"
		    "\"expected\":null}\n");
		return;
	}
	j->rc = flaky_web_act(st, &o, j->path, j->body, j->body_len, who,
	    &j->reply);
	free(who);
}

/* The worker: actions, and the tokens read again when uploads are off
 * (from a read-only store of its own). */
static void *
act_worker(void *arg)
{
	struct flaky_http *h = arg;
	struct flaky_store *rw = NULL, *ro = NULL;
	struct http_job	*j;
	struct timespec	 ts;
	int64_t		 next = 0;
	char		 c = 0;

	pthread_mutex_lock(&h->mtx);
	for (;;) {
		if (!h->up.on && flaky_mono_us() / 1000 >= next) {
			pthread_mutex_unlock(&h->mtx);
			/* for the pages and the actions when no upload
			 * worker does it */
			http_tokens_refresh(h, act_store(h, &ro,
			    FLAKY_STORE_READONLY));
			next = flaky_mono_us() / 1000 + ACT_TOKENS_EVERY_MS;
			pthread_mutex_lock(&h->mtx);
			h->tokens_read = 1;
			pthread_cond_broadcast(&h->act_cond);
		}
		if (h->stopping)
			break;
		if (TAILQ_EMPTY(&h->act_todo)) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&h->act_cond, &h->mtx, &ts);
			continue;
		}
		j = TAILQ_FIRST(&h->act_todo);
		TAILQ_REMOVE(&h->act_todo, j, entry);
		if (!j->cancelled) {
			pthread_mutex_unlock(&h->mtx);
			act_render(h, &rw, j);
			pthread_mutex_lock(&h->mtx);
		}
		TAILQ_INSERT_TAIL(&h->done, j, entry);
		if (write(h->wake[1], &c, 1) < 0 && errno != EAGAIN)
			c = 0;
	}
	pthread_mutex_unlock(&h->mtx);
	flaky_store_close(rw);
	flaky_store_close(ro);
	return NULL;
}

int
http_act_start(struct flaky_http *h, char *err, size_t errlen)
{
	int	 r;

	TAILQ_INIT(&h->act_todo);
	pthread_cond_init(&h->act_cond, NULL);
	h->act_cond_init = 1;
	if ((r = pthread_create(&h->act_thread, NULL, act_worker, h)) != 0)
		return flaky_error(err, errlen, r, "actions: a worker thread: "
		    "%s", strerror(r));
	h->act_started = 1;
	/* the pages find the tokens from the first request */
	pthread_mutex_lock(&h->mtx);
	while (!h->tokens_read)
		pthread_cond_wait(&h->act_cond, &h->mtx);
	pthread_mutex_unlock(&h->mtx);
	return 0;
}

void
http_act_stop(struct flaky_http *h)
{
	struct http_job	*j;

	if (h->act_started) {
		pthread_mutex_lock(&h->mtx);
		h->stopping = 1;
		pthread_cond_broadcast(&h->act_cond);
		pthread_mutex_unlock(&h->mtx);
		pthread_join(h->act_thread, NULL);
		h->act_started = 0;
	}
	if (h->act_cond_init) {
		while ((j = TAILQ_FIRST(&h->act_todo)) != NULL) {
			TAILQ_REMOVE(&h->act_todo, j, entry);
			TAILQ_INSERT_TAIL(&h->done, j, entry);
		}
		pthread_cond_destroy(&h->act_cond);
		h->act_cond_init = 0;
	}
}
