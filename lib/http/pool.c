/* The workers that render the dashboard off the event loop: a bounded
 * queue in, a list out and a byte down a pipe to wake the loop, which
 * alone sends replies (evhttp is not thread-safe). A heavy page then
 * delays other pages, never flakyd's schedule. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
	flaky_web_reply_free(&j->reply);
	free(j);
}

/* One worker: render jobs until told to stop. */
static void *
worker(void *arg)
{
	struct flaky_http *h = arg;
	struct flaky_store *st;
	struct flaky_web_opts o;
	struct http_job	*j;
	char		 c = 0;
	int		 me;

	pthread_mutex_lock(&h->mtx);
	me = h->started++;
	st = h->stores[me];
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
			memset(&o, 0, sizeof o);
			o.now_ms = j->now_ms;
			o.targets = j->targets;
			o.ntargets = j->ntargets;
			j->rc = flaky_web_handle(st, &o, j->path, j->query,
			    &j->reply);
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
	char		 buf[64];

	(void)ev;
	while (read(fd, buf, sizeof buf) > 0)
		;
	TAILQ_INIT(&q);
	pthread_mutex_lock(&h->mtx);
	TAILQ_CONCAT(&q, &h->done, entry);
	pthread_mutex_unlock(&h->mtx);
	while ((j = TAILQ_FIRST(&q)) != NULL) {
		TAILQ_REMOVE(&q, j, entry);
		http_job_done(j);
	}
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
	    (h->stores = calloc(threads, sizeof *h->stores)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	for (int i = 0; i < threads; i++) {
		if ((r = flaky_store_open(db_path, FLAKY_STORE_READONLY,
		    &h->stores[i], err, errlen)) < 0)
			return r;
		h->nstores++;
	}
	if (pipe2(h->wake, O_CLOEXEC | O_NONBLOCK) < 0)
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
	h->threads = NULL;
	pthread_mutex_destroy(&h->mtx);
	pthread_cond_destroy(&h->cond);
}
