/* Internal to lib/http: a request on its way from the loop to a worker and
 * back (pool.c), and the server that owns both (http.c). Only the loop
 * thread touches evhttp, a job's req and conn; a worker touches a job's
 * strings, targets and reply, and its own store. */
#ifndef FLAKY_HTTP_INT_H
#define FLAKY_HTTP_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/queue.h>

#include "http/http.h"
#include "web/web.h"

struct evhttp;
struct evhttp_request;
struct evhttp_connection;
struct event;
struct flaky_store;
struct http_conn;
struct http_pending;

struct http_job {
	TAILQ_ENTRY(http_job)	 entry;
	struct flaky_http	*h;
	struct http_conn	*conn;		/* NULL: it closed meanwhile */
	struct evhttp_request	*req;		/* owned; NULL: answered */
	char			*path;
	char			*query;		/* NULL: none */
	struct flaky_web_target	*targets;	/* one block, or NULL */
	size_t			 ntargets;
	int64_t			 now_ms;
	struct event		*timeout_ev;	/* the render took too long */
	struct flaky_web_reply	 reply;		/* the worker's */
	int			 rc;
	int			 cancelled;	/* under h->mtx */
};
TAILQ_HEAD(http_jobq, http_job);

/* A connection that has sent a request, until evhttp closes it. */
struct http_conn {
	LIST_ENTRY(http_conn)	 entry;
	struct flaky_http	*h;
	struct evhttp_connection *evcon;
	struct http_job		*job;		/* in flight, or NULL */
};

struct flaky_http {
	struct event_base	*base;
	struct evhttp		*http;
	char			 url[96];
	char			*token;		/* NULL: none */
	size_t			 tokenlen;
	int			 timeout_s;
	flaky_http_targets_fn	 targets;
	void			*targets_arg;
	LIST_HEAD(, http_conn)	 conns;
	int			 nconns, max_conns;
	/* accept.c: accepted, no request yet */
	LIST_HEAD(, http_pending) pending;
	int			 npending;
	struct event		*sweep_ev;

	/* pool.c: the workers and their queues */
	pthread_mutex_t		 mtx;
	pthread_cond_t		 cond;
	struct http_jobq	 todo, done;
	int			 ntodo, queue_max;
	int			 stopping;
	pthread_t		*threads;
	struct flaky_store	**stores;
	int			 nthreads, started, nstores;
	int			 wake[2];	/* a worker's reply is done */
	struct event		*wake_ev;

	/* pool.c: the database, as the workers last found it (under mtx) */
	char			*db_path;
	int			 db_down;
	int64_t			 db_retry_us;	/* no attempt before (mono) */
	int			 db_backoff_ms;
	int			 db_told;	/* what db_state last heard */
	char			 db_why[512];
	flaky_http_db_fn	 db_state;
	void			*db_state_arg;
};

/* pool.c */
int	 http_pool_start(struct flaky_http *, const char *db_path, int threads,
	    char *err, size_t errlen);
/* 0, or -EAGAIN when the queue is full (the caller answers 503). */
int	 http_pool_submit(struct flaky_http *, struct http_job *);
void	 http_pool_stop(struct flaky_http *);
/* Nobody waits for the job any more: a worker need not render it. */
void	 http_pool_cancel(struct flaky_http *, struct http_job *);
void	 http_job_free(struct http_job *);

/* accept.c */
int	 http_accept_init(struct flaky_http *);
void	 http_accept_free(struct flaky_http *);
int	 http_pending_claim(struct flaky_http *, struct evhttp_connection *);

/* http.c: a worker's reply, on the loop thread. */
void	 http_job_done(struct http_job *);

#endif
