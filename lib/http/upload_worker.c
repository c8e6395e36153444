/* The upload worker (docs/api.md, "Uploads"): one thread with a store it
 * may write, off the loop. It stores each received upload as flakyctl
 * upload does (lib/ingest: whole, once per key) and answers with the runs
 * and what flaky knew of each failed test; and every few seconds it reads
 * the valid tokens' hashes again for the door, so a token made or revoked
 * takes effect within that time. One thread: SQLite has one writer at a
 * time anyway, and the loop never waits for it. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "http_int.h"
#include "ingest/ingest.h"
#include "json/json.h"
#include "store/store.h"
#include "util/util.h"

#define TOKENS_EVERY_MS	5000
#define KNOWN_DAYS	30

/* The files of the body: gzip inflated, multipart split. */
static int
files_of(struct flaky_http *h, struct http_upload *up, struct http_body *b,
    char *err, size_t errlen)
{
	const char	*spool = http_upload_spool_path(up);
	char		 plain[PATH_MAX];
	int		 r;

	snprintf(plain, sizeof plain, "%s/whole", b->dir);
	if (http_upload_gzipped(up)) {
		if ((r = http_body_gunzip(spool, plain, h->up.max_bytes, err,
		    errlen)) < 0)
			return r;
		spool = plain;
	}
	if (strncasecmp(http_upload_ctype(up), "multipart/form-data", 19) ==
	    0) {
		if ((r = http_body_split(spool, http_upload_ctype(up), b,
		    FLAKY_INGEST_MAX, err, errlen)) < 0)
			return r;
		if (b->n == 0)
			return flaky_error(err, errlen, EINVAL, "multipart/"
			    "form-data with no file");
	} else {
		b->n = 1;
		snprintf(b->f[0].path, sizeof b->f[0].path, "%s", spool);
		snprintf(b->f[0].name, sizeof b->f[0].name, "the body");
		b->f[0].gzip = 1;	/* by its magic, below */
	}
	/* a gzip file (or part) is its content */
	for (size_t i = 0; i < b->n; i++) {
		char	 p[PATH_MAX];

		if (!http_body_is_gzip(b->f[i].path))
			continue;
		snprintf(p, sizeof p, "%s/gunzip-%zu", b->dir, i);
		if ((r = http_body_gunzip(b->f[i].path, p, FLAKY_INGEST_MAX,
		    err, errlen)) < 0)
			return r;
		snprintf(b->f[i].path, sizeof b->f[i].path, "%s", p);
	}
	return 0;
}

/* Remove the body's directory and what is in it. */
static void
body_clear(struct http_body *b)
{
	static const char *const fixed[] = { "whole" };
	char	 p[PATH_MAX];

	for (size_t i = 0; i < HTTP_BODY_FILES; i++) {
		snprintf(p, sizeof p, "%s/part-%zu", b->dir, i);
		unlink(p);
		snprintf(p, sizeof p, "%s/gunzip-%zu", b->dir, i);
		unlink(p);
	}
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(fixed); i++) {
		snprintf(p, sizeof p, "%s/%s", b->dir, fixed[i]);
		unlink(p);
	}
	rmdir(b->dir);
}

/* A JSON error reply. */
static void
reply_error(struct flaky_web_reply *rep, int status, const char *msg)
{
	struct flaky_jw	 w;

	rep->status = status;
	rep->content_type = "application/json";
	flaky_buf_reset(&rep->body);
	flaky_jw_init(&w, &rep->body);
	flaky_jw_object_begin(&w);
	flaky_jw_key(&w, "error");
	flaky_jw_string(&w, msg);
	flaky_jw_key(&w, "status");
	flaky_jw_int(&w, status);
	flaky_jw_object_end(&w);
	(void)flaky_jw_finish(&w);
	flaky_buf_addc(&rep->body, '\n');
}

/* Store one upload with the worker's store; its reply into j. */
static void
store_upload(struct flaky_http *h, struct flaky_store *st, struct http_job *j)
{
	struct http_upload *up = j->upload;
	struct flaky_upload u;
	struct flaky_ci_meta m;
	struct flaky_ingest_file f[HTTP_BODY_FILES];
	struct flaky_known *k = NULL;
	struct evkeyvalq kv;
	struct http_body *bp;
	size_t		 nk = 0;
	char		 err[1024], salt[3000], *buf = NULL;
	int		 r;

	memset(&u, 0, sizeof u);
	memset(&m, 0, sizeof m);
	memset(f, 0, sizeof f);
	for (size_t i = 0; i < HTTP_BODY_FILES; i++)
		f[i].fd = -1;	/* ours, not ingest's (own_fd 0): kept open */
	TAILQ_INIT(&kv);
	if ((bp = calloc(1, sizeof *bp)) == NULL) {
		reply_error(&j->reply, 503, "out of memory");
		return;
	}
#define b (*bp)
	snprintf(b.dir, sizeof b.dir, "%s/up-XXXXXX", h->spool_dir);
	if (mkdtemp(b.dir) == NULL) {
		b.dir[0] = '\0';
		reply_error(&j->reply, 503, "cannot spool the upload (the "
		    "server's disk)");
		goto out;
	}
	if ((r = http_upload_metadata(http_upload_query(up), &kv, &u, &m, salt,
	    sizeof salt, err, sizeof err)) < 0) {
		reply_error(&j->reply, 400, err);
		goto out;
	}
	if ((r = files_of(h, up, &b, err, sizeof err)) < 0) {
		reply_error(&j->reply, r == -EFBIG ? 413 : r == -EINVAL ||
		    r == -E2BIG ? 400 : 503, err);
		goto out;
	}
	/* named in messages as the client knows them, not by the spool's
	 * paths on this server */
	for (size_t i = 0; i < b.n; i++) {
		f[i].path = b.f[i].name[0] != '\0' ? b.f[i].name :
		    "a part";
		if ((f[i].fd = open(b.f[i].path, O_RDONLY | O_CLOEXEC)) < 0) {
			reply_error(&j->reply, 503, "cannot read the spooled "
			    "upload (the server's disk)");
			goto out;
		}
	}
	if ((buf = malloc(FLAKY_INGEST_CHUNK)) == NULL) {
		reply_error(&j->reply, 503, "out of memory");
		goto out;
	}
	u.in.store = st;
	u.in.cls = h->cls;
	u.in.now_ms = j->now_ms;
	u.in.ci = &m;
	u.in.hash_salt = salt;
	u.key = http_upload_key(up);
	u.token_id = http_upload_token(up);
	u.bytes = http_upload_bytes(up);
	/* in parts beside the daemon's writes (SQLite's one writer) */
	u.parts = !flaky_store_is_server(h->db_path);
	if ((r = flaky_upload_store(&u, f, b.n, buf, err, sizeof err)) < 0) {
		/* a file refused: the client's to fix; else the store's, or
		 * the same upload in flight: to try again */
		reply_error(&j->reply, r == -EINPROGRESS ? 503 :
		    !u.store_failed ? 400 : r == -EBUSY ? 503 : 500, err);
		goto out;
	}
	if (flaky_store_known(st, u.runs, u.nruns, j->now_ms -
	    KNOWN_DAYS * 86400000LL, j->now_ms, &k, &nk, err,
	    sizeof err) < 0) {
		reply_error(&j->reply, 500, err);
		goto out;
	}
	flaky_buf_reset(&j->reply.body);
	if (flaky_upload_reply(&j->reply.body, &u, k, nk, KNOWN_DAYS) < 0) {
		reply_error(&j->reply, 500, "out of memory");
		goto out;
	}
	flaky_buf_addc(&j->reply.body, '\n');
	j->reply.status = u.already ? 200 : 201;
	j->reply.content_type = "application/json";
out:
	for (size_t i = 0; i < HTTP_BODY_FILES; i++)
		if (f[i].fd >= 0)
			close(f[i].fd);
	flaky_known_free(k, nk);
	flaky_upload_clear(&u);
	evhttp_clear_headers(&kv);
	if (b.dir[0] != '\0')
		body_clear(&b);
#undef b
	free(bp);
	free(buf);
}

/* The valid tokens' hashes, read again (store_ci.h): by the upload
 * worker, else by the actions' worker. */
void
http_tokens_refresh(struct flaky_http *h, struct flaky_store *st)
{
	struct flaky_token_row *v = NULL, *old;
	size_t		 n = 0, oldn;
	char		 err[512];

	if (st == NULL || flaky_store_token_hashes(st, &v, &n, err,
	    sizeof err) < 0)
		return;
	pthread_mutex_lock(&h->mtx);
	old = h->tokens;
	oldn = h->ntokens;
	h->tokens = v;
	h->ntokens = n;
	pthread_mutex_unlock(&h->mtx);
	flaky_token_rows_free(old, oldn);
}

/* The worker: uploads and token refreshes until told to stop. */
static void *
upload_worker(void *arg)
{
	struct flaky_http *h = arg;
	struct flaky_store *st = NULL;
	struct http_job	*j;
	struct timespec	 ts;
	int64_t		 next = 0;
	char		 c = 0, err[512];

	pthread_mutex_lock(&h->mtx);
	for (;;) {
		if (flaky_mono_us() / 1000 >= next) {
			pthread_mutex_unlock(&h->mtx);
			if ((st == NULL || flaky_store_lost(st)) &&
			    (st == NULL ? flaky_store_open(h->db_path, 0, &st,
			    err, sizeof err) : flaky_store_reconnect(st, err,
			    sizeof err)) < 0) {
				flaky_store_close(st);
				st = NULL;
			}
			if (st != NULL)
				flaky_store_set_yielding(st, 1);
			http_tokens_refresh(h, st);
			next = flaky_mono_us() / 1000 + TOKENS_EVERY_MS;
			pthread_mutex_lock(&h->mtx);
			pthread_cond_broadcast(&h->up_cond);
			h->tokens_read = 1;
		}
		if (h->stopping)
			break;
		if (TAILQ_EMPTY(&h->up_todo)) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&h->up_cond, &h->mtx, &ts);
			continue;
		}
		j = TAILQ_FIRST(&h->up_todo);
		TAILQ_REMOVE(&h->up_todo, j, entry);
		if (!j->cancelled) {
			pthread_mutex_unlock(&h->mtx);
			if (st == NULL)
				reply_error(&j->reply, 503, "the database "
				    "cannot be opened for writing now");
			else
				store_upload(h, st, j);
			pthread_mutex_lock(&h->mtx);
		}
		TAILQ_INSERT_TAIL(&h->done, j, entry);
		if (write(h->wake[1], &c, 1) < 0 && errno != EAGAIN)
			c = 0;
	}
	pthread_mutex_unlock(&h->mtx);
	flaky_store_close(st);
	return NULL;
}

/* Start the worker and its spool directory; wait until it read the
 * tokens once, so that the first upload finds them. */
int
http_upload_start(struct flaky_http *h, char *err, size_t errlen)
{
	const char	*tmp = getenv("TMPDIR");
	int		 r;

	TAILQ_INIT(&h->up_todo);
	pthread_cond_init(&h->up_cond, NULL);
	h->up_cond_init = 1;
	if (!h->up.on)
		return 0;
	if ((h->rates = calloc(64, 64)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	snprintf(h->spool_dir, sizeof h->spool_dir, "%s/flaky-uploads-XXXXXX",
	    tmp != NULL && *tmp == '/' ? tmp : "/tmp");
	if (mkdtemp(h->spool_dir) == NULL) {
		h->spool_dir[0] = '\0';
		return flaky_error(err, errlen, errno, "uploads: cannot make a "
		    "spool directory: %s", strerror(errno));
	}
	if ((r = pthread_create(&h->up_thread, NULL, upload_worker, h)) != 0)
		return flaky_error(err, errlen, r, "uploads: a worker thread: "
		    "%s", strerror(r));
	h->up_started = 1;
	pthread_mutex_lock(&h->mtx);
	while (!h->tokens_read)
		pthread_cond_wait(&h->up_cond, &h->mtx);
	pthread_mutex_unlock(&h->mtx);
	return 0;
}

/* Queue a received upload for the worker. */
int
http_upload_submit(struct flaky_http *h, struct http_job *j)
{
	pthread_mutex_lock(&h->mtx);
	TAILQ_INSERT_TAIL(&h->up_todo, j, entry);
	pthread_cond_signal(&h->up_cond);
	pthread_mutex_unlock(&h->mtx);
	return 0;
}

/* Stop the worker (the pool's stopping flag is set); the spool goes. */
void
http_upload_stop(struct flaky_http *h)
{
	struct http_job	*j;

	if (h->up_started) {
		pthread_mutex_lock(&h->mtx);
		h->stopping = 1;
		pthread_cond_broadcast(&h->up_cond);
		pthread_mutex_unlock(&h->mtx);
		pthread_join(h->up_thread, NULL);
		h->up_started = 0;
	}
	while ((j = TAILQ_FIRST(&h->up_todo)) != NULL) {
		TAILQ_REMOVE(&h->up_todo, j, entry);
		TAILQ_INSERT_TAIL(&h->done, j, entry);
	}
	if (h->spool_dir[0] != '\0')
		rmdir(h->spool_dir);
	flaky_token_rows_free(h->tokens, h->ntokens);
	h->tokens = NULL;
	h->ntokens = 0;
	free(h->rates);
	h->rates = NULL;
	if (h->up_cond_init)
		pthread_cond_destroy(&h->up_cond);
	h->up_cond_init = 0;
}
