/* The workers that render the dashboard off the event loop: a bounded
 * queue in, a list out and a byte down a pipe to wake the loop, which
 * alone sends replies (evhttp is not thread-safe). A heavy page then
 * delays other pages, never flakyd's schedule.
 *
 * On PostgreSQL the workers' connections may go (a server restart, an
 * outage): a worker whose connection is gone connects again before its
 * next page, a page that lost it is tried once more on a new one, and
 * while the server cannot be reached every page and /healthz answer 503
 * at once, the next attempt after a backoff shared by the workers. The
 * loop tells the program each change of that state (db_state), so that
 * it logs once per outage. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "http_int.h"
#include "store/store.h"
#include "util/util.h"
#include "web/web.h"

/* Free a job; the loop's part (req, timer) is gone or never was. */
void
http_job_free(struct http_job *j)
{
	if (j == NULL)
		return;
	if (j->timeout_ev != NULL)
		event_free(j->timeout_ev);
	free(j->path);
	free(j->query);
	free(j->targets);
	free(j->body);
	flaky_web_reply_free(&j->reply);
	http_upload_drop(j->upload);
	free(j);
}

/* The database as a worker found it, under h->mtx: down (why: the
 * store's error) starts or doubles the backoff; up ends it. The loop
 * tells the program (wake_cb). */
static void
db_mark(struct flaky_http *h, int down, const char *why)
{
	if (down) {
		h->db_backoff_ms = !h->db_down ? FLAKY_HTTP_RETRY_FIRST_MS :
		    h->db_backoff_ms * 2 > FLAKY_HTTP_RETRY_LAST_MS ?
		    FLAKY_HTTP_RETRY_LAST_MS : h->db_backoff_ms * 2;
		h->db_retry_us = flaky_mono_us() +
		    (int64_t)h->db_backoff_ms * 1000;
		snprintf(h->db_why, sizeof h->db_why, "%s", why);
	}
	h->db_down = down;
}

/* The reply while the database cannot be read: 503, saying when the
 * next attempt is, without the database's address or the server's
 * words (the program's log has them). */
static void
reply_down(struct http_job *j, int64_t wait_us)
{
	j->rc = 0;
	j->reply.status = 503;
	j->reply.content_type = "text/plain; charset=utf-8";
	flaky_buf_reset(&j->reply.body);
	flaky_buf_printf(&j->reply.body, "unavailable: the database cannot "
	    "be reached; trying again in %lld s\n",
	    (long long)(wait_us + 999999) / 1000000);
}

/* A failed page's message names the database: not to an HTTP client,
 * to whom a server's address is none of its business. */
static void
reply_scrub(struct flaky_store *st, struct flaky_web_reply *r)
{
	const char	*name = flaky_store_name(st);
	size_t		 n = strlen(name);

	if (r->status < 500 || r->body.len < n + 2 ||
	    memcmp(r->body.data, name, n) != 0 ||
	    memcmp(r->body.data + n, ": ", 2) != 0)
		return;
	memmove(r->body.data, r->body.data + n + 2, r->body.len - n - 1);
	r->body.len -= n + 2;
}

/* Its store, opened or connected again when it has none or lost its
 * connection, unless the backoff says not yet. 0, or 1 when j got its
 * 503. */
static int
store_ready(struct flaky_http *h, struct flaky_store **stp,
    struct http_job *j)
{
	char	 err[512];
	int64_t	 wait;
	int	 r;

	if (*stp != NULL && !flaky_store_lost(*stp))
		return 0;
	pthread_mutex_lock(&h->mtx);
	wait = h->db_down ? h->db_retry_us - flaky_mono_us() : 0;
	pthread_mutex_unlock(&h->mtx);
	if (wait > 0) {
		reply_down(j, wait);
		return 1;
	}
	r = *stp == NULL ? flaky_store_open(h->db_path, FLAKY_STORE_READONLY,
	    stp, err, sizeof err) : flaky_store_reconnect(*stp, err,
	    sizeof err);
	if (r == 0)
		return 0;
	pthread_mutex_lock(&h->mtx);
	db_mark(h, 1, err);
	wait = h->db_retry_us - flaky_mono_us();
	pthread_mutex_unlock(&h->mtx);
	reply_down(j, wait);
	return 1;
}

/* Render j with the worker's store. /healthz asks the database first,
 * so that it tells the truth. A connection lost on the way is tried once
 * more on a new one: after a restart the server is often back. */
static void
render(struct flaky_http *h, struct flaky_store **stp, struct http_job *j)
{
	struct flaky_web_opts o;
	char		 why[512];
	int64_t		 wait;
	int		 healthz = strcmp(j->path, "/healthz") == 0;

	memset(&o, 0, sizeof o);
	o.now_ms = j->now_ms;
	o.targets = j->targets;
	o.ntargets = j->ntargets;
	o.nonce = j->nonce;
	for (int attempt = 0; attempt < 2; attempt++) {
		if (store_ready(h, stp, j))
			return;
		if (healthz && flaky_store_ping(*stp, why, sizeof why) < 0) {
			if (flaky_store_lost(*stp))
				continue;
			reply_down(j, 0);
			return;
		}
		j->rc = flaky_web_handle(*stp, &o, j->path, j->query,
		    &j->reply);
		if (!flaky_store_lost(*stp)) {
			pthread_mutex_lock(&h->mtx);
			if (h->db_down)
				db_mark(h, 0, NULL);
			pthread_mutex_unlock(&h->mtx);
			reply_scrub(*stp, &j->reply);
			return;
		}
		snprintf(why, sizeof why, "%.*s", (int)strcspn(
		    flaky_buf_cstr(&j->reply.body), "\n"),
		    flaky_buf_cstr(&j->reply.body));
	}
	pthread_mutex_lock(&h->mtx);
	db_mark(h, 1, why);
	wait = h->db_retry_us - flaky_mono_us();
	pthread_mutex_unlock(&h->mtx);
	reply_down(j, wait);
}

/* One worker: render jobs until told to stop. */
static void *
worker(void *arg)
{
	struct flaky_http *h = arg;
	struct flaky_store **stp;
	struct http_job	*j;
	char		 c = 0;
	int		 me;

	pthread_mutex_lock(&h->mtx);
	me = h->started++;
	stp = &h->stores[me];
	for (;;) {
		while (!h->stopping && TAILQ_EMPTY(&h->todo))
			pthread_cond_wait(&h->cond, &h->mtx);
		if (h->stopping)
			break;
		j = TAILQ_FIRST(&h->todo);
		TAILQ_REMOVE(&h->todo, j, entry);
		h->ntodo--;
		if (!j->cancelled) {
			pthread_mutex_unlock(&h->mtx);
			render(h, stp, j);
			pthread_mutex_lock(&h->mtx);
		}
		TAILQ_INSERT_TAIL(&h->done, j, entry);
		/* A full pipe already holds a wake-up: nothing lost. */
		if (write(h->wake[1], &c, 1) < 0 && errno != EAGAIN)
			c = 0;
	}
	pthread_mutex_unlock(&h->mtx);
	return NULL;
}

/* The loop: take the finished jobs and answer them. */
static void
wake_cb(int fd, short ev, void *arg)
{
	struct flaky_http *h = arg;
	struct http_jobq q;
	struct http_job	*j;
	char		 buf[64], why[sizeof h->db_why];
	int		 told, down;

	(void)ev;
	while (read(fd, buf, sizeof buf) > 0)
		;
	TAILQ_INIT(&q);
	pthread_mutex_lock(&h->mtx);
	TAILQ_CONCAT(&q, &h->done, entry);
	told = h->db_told != h->db_down;
	h->db_told = down = h->db_down;
	if (told)
		snprintf(why, sizeof why, "%s", h->db_why);
	pthread_mutex_unlock(&h->mtx);
	while ((j = TAILQ_FIRST(&q)) != NULL) {
		TAILQ_REMOVE(&q, j, entry);
		http_job_done(j);
	}
	if (told && h->db_state != NULL)
		h->db_state(h->db_state_arg, !down, why);
}

/* A read-only store for each worker, the wake-up pipe, the threads. */
int
http_pool_start(struct flaky_http *h, const char *db_path, int threads,
    char *err, size_t errlen)
{
	int	 r;

	TAILQ_INIT(&h->todo);
	TAILQ_INIT(&h->done);
	h->wake[0] = h->wake[1] = -1;
	pthread_mutex_init(&h->mtx, NULL);
	pthread_cond_init(&h->cond, NULL);
	if ((h->threads = calloc(threads, sizeof *h->threads)) == NULL ||
	    (h->stores = calloc(threads, sizeof *h->stores)) == NULL ||
	    (h->db_path = strdup(db_path)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	h->nstores = threads;
	/* A server that cannot be reached now may be later: the workers
	 * try with backoff. Anything else (a typo, credentials, a file
	 * that is not there) is for the caller to fix now. */
	for (int i = 0; i < threads && !h->db_down; i++)
		if ((r = flaky_store_open(db_path, FLAKY_STORE_READONLY,
		    &h->stores[i], err, errlen)) == -ECONNREFUSED &&
		    flaky_store_is_server(db_path))
			db_mark(h, 1, err);
		else if (r < 0)
			return r;
	if (pipe2(h->wake, O_CLOEXEC | O_NONBLOCK) < 0)
		return flaky_error(err, errlen, errno, "pipe: %s",
		    strerror(errno));
	/* The loop tells the program of a server down at start. */
	if (h->db_down && write(h->wake[1], "", 1) < 0)
		return flaky_error(err, errlen, errno, "pipe: %s",
		    strerror(errno));
	h->wake_ev = event_new(h->base, h->wake[0], EV_READ | EV_PERSIST,
	    wake_cb, h);
	if (h->wake_ev == NULL || event_add(h->wake_ev, NULL) < 0)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	for (int i = 0; i < threads; i++) {
		if ((r = pthread_create(&h->threads[i], NULL, worker, h)) != 0)
			return flaky_error(err, errlen, r, "a worker thread: "
			    "%s", strerror(r));
		h->nthreads++;
	}
	return 0;
}

/* Queue a job for the workers, unless the queue is full. */
int
http_pool_submit(struct flaky_http *h, struct http_job *j)
{
	int	 r = 0;

	pthread_mutex_lock(&h->mtx);
	if (h->ntodo >= h->queue_max)
		r = -EAGAIN;
	else {
		TAILQ_INSERT_TAIL(&h->todo, j, entry);
		h->ntodo++;
		pthread_cond_signal(&h->cond);
	}
	pthread_mutex_unlock(&h->mtx);
	return r;
}

/* Its client left: a worker that has not started it skips it. */
void
http_pool_cancel(struct flaky_http *h, struct http_job *j)
{
	pthread_mutex_lock(&h->mtx);
	j->cancelled = 1;
	pthread_mutex_unlock(&h->mtx);
}

/* Stop the workers (each ends its job first), free what is left. */
void
http_pool_stop(struct flaky_http *h)
{
	struct http_job	*j;

	if (h->threads == NULL)
		return;
	pthread_mutex_lock(&h->mtx);
	h->stopping = 1;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->mtx);
	for (int i = 0; i < h->nthreads; i++)
		pthread_join(h->threads[i], NULL);
	TAILQ_CONCAT(&h->done, &h->todo, entry);
	while ((j = TAILQ_FIRST(&h->done)) != NULL) {
		TAILQ_REMOVE(&h->done, j, entry);
		http_job_done(j);
	}
	if (h->wake_ev != NULL)
		event_free(h->wake_ev);
	for (int i = 0; i < 2; i++)
		if (h->wake[i] >= 0)
			close(h->wake[i]);
	for (int i = 0; i < h->nstores; i++)
		flaky_store_close(h->stores[i]);
	free(h->stores);
	free(h->threads);
	free(h->db_path);
	h->threads = NULL;
	pthread_mutex_destroy(&h->mtx);
	pthread_cond_destroy(&h->cond);
}
