/* Internal to lib/http: a request on its way from the loop to a worker and
 * back (pool.c), and the server that owns both (http.c). Only the loop
 * thread touches evhttp, a job's req and conn; a worker touches a job's
 * strings, targets and reply, and its own store. */
#ifndef FLAKY_HTTP_INT_H
#define FLAKY_HTTP_INT_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "http/http.h"
#include "web/web.h"

struct evhttp;
struct evhttp_request;
struct evhttp_connection;
struct event;
struct flaky_store;
struct flaky_token_row;
struct bufferevent;
struct http_conn;
struct http_pending;
struct http_upload;
struct http_door;

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
	struct http_upload	*upload;	/* an upload's job, or NULL */
	char			 nonce[32];	/* its page's script's */
	/* an action's (act.c): its body and the token that sent it */
	int			 act;
	char			*body;
	size_t			 body_len;
	int64_t			 token_id;
};
TAILQ_HEAD(http_jobq, http_job);

/* A connection that has sent a request, until evhttp closes it. */
struct http_conn {
	LIST_ENTRY(http_conn)	 entry;
	struct flaky_http	*h;
	struct evhttp_connection *evcon;
	struct http_job		*job;		/* in flight, or NULL */
	struct http_door	*door;		/* an upload's, or NULL */
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

	/* uploads: door.c (loop), upload.c (loop), upload_worker.c */
	struct flaky_uploads_conf up;
	const struct flaky_classifier *cls;
	char			 spool_dir[512];
	struct flaky_token_row	*tokens;	/* valid ones; name: hash */
	size_t			 ntokens;	/* (under mtx) */
	int			 tokens_read;
	void			*rates;		/* upload.c's, loop only */
	size_t			 nrates;
	int			 up_in_flight;	/* loop only */
	struct http_jobq	 up_todo;
	pthread_cond_t		 up_cond;
	int			 up_cond_init;
	pthread_t		 up_thread;
	int			 up_started;
	struct ssl_ctx_st	*tls;		/* NULL: plain HTTP */

	/* act.c: the actions' worker, its writable store, its queue; it
	 * reads the tokens again when uploads are off */
	struct http_jobq	 act_todo;
	pthread_cond_t		 act_cond;
	int			 act_cond_init;
	pthread_t		 act_thread;
	int			 act_started;
};

/* An upload's query taken apart (upload_body.c): into u and m, its strings
 * in kv, a salt of its job and attempt. 0, or -EINVAL with err (a 400). */
struct evkeyvalq;
struct flaky_upload;
struct flaky_ci_meta;
int	 http_upload_metadata(const char *query, struct evkeyvalq *kv,
	    struct flaky_upload *u, struct flaky_ci_meta *m, char *salt,
	    size_t saltlen, char *err, size_t errlen);

/* An upload's body taken apart (upload_body.c): its files on disk. */
#define HTTP_BODY_FILES	64
struct http_body_file {
	char		 path[PATH_MAX];
	char		 name[256];
	int		 gzip;
};
struct http_body {
	char		 dir[1024];
	struct http_body_file f[HTTP_BODY_FILES];
	size_t		 n;
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
/* A connection's first request: -1 when it is refused, else 0 with its
 * door (NULL: none, or stepped aside) handed over in *door. */
int	 http_pending_claim(struct flaky_http *, struct evhttp_connection *,
	    struct http_door **door);
/* An upload's body takes long: its connection's deadline moves. */
void	 http_pending_extend(struct flaky_http *, struct bufferevent *,
	    int64_t deadline_ms);

/* door.c: a connection's input seen before evhttp reads it (uploads'
 * bodies go to a spool), and the upload it received. */
struct http_door *http_door_new(struct flaky_http *, struct bufferevent *);
void	 http_door_free(struct http_door *);
int	 http_door_aside(const struct http_door *);
struct http_upload *http_door_take(struct http_door *);
void	 http_tokens_refresh(struct flaky_http *, struct flaky_store *);
const char *http_head_header(const char *head, const char *name, char *buf,
	    size_t len, int *many);

/* upload.c: an upload from its head to its worker (loop thread). */
struct http_upload *http_upload_admit(struct flaky_http *, const char *head);
void	 http_upload_refuse(struct http_upload *, int status, const char *);
int	 http_upload_refused(const struct http_upload *);
int	 http_upload_spool(struct http_upload *, const char *, size_t);
int64_t	 http_upload_bytes(const struct http_upload *);
void	 http_upload_received(struct http_upload *);
int	 http_upload_is_received(const struct http_upload *);
int	 http_upload_refusal(const struct http_upload *, struct flaky_buf *,
	    int *retry_after);
void	 http_upload_drop(struct http_upload *);
int	 http_upload_type_ok(const char *content_type);
const char *http_upload_spool_path(const struct http_upload *);
const char *http_upload_query(const struct http_upload *);
const char *http_upload_ctype(const struct http_upload *);
int	 http_upload_gzipped(const struct http_upload *);
const char *http_upload_key(const struct http_upload *);
int64_t	 http_upload_token(const struct http_upload *);
/* upload_worker.c */
int	 http_upload_start(struct flaky_http *, char *err, size_t errlen);
int	 http_upload_submit(struct flaky_http *, struct http_job *);
void	 http_upload_stop(struct flaky_http *);
/* upload_body.c */
int	 http_body_is_gzip(const char *path);
int	 http_body_gunzip(const char *src, const char *dst, int64_t max,
	    char *err, size_t errlen);
int	 http_body_split(const char *path, const char *content_type,
	    struct http_body *, int64_t max, char *err, size_t errlen);

/* http.c: a worker's reply, on the loop thread. */
void	 http_job_done(struct http_job *);
/* A request's job (path, query, targets, the nonce of its page). */
struct http_job *http_job_new(struct flaky_http *, struct evhttp_request *);
/* A reply with the headers every reply carries (nonce: the script's its
 * CSP lets run, NULL none); a one-line text reply. */
void	 http_send_reply(struct evhttp_request *, int status, const char *type,
	    const void *body, size_t len, const char *nonce);
void	 http_send_text(struct evhttp_request *, int status, const char *);
/* Is the Authorization header the token file's, or a token of the
 * database's of scope read or write? Is Host a loopback's name? */
int	 http_token_ok(struct flaky_http *, const char *authorization);
int	 http_host_ok(const char *host);

/* act.c: the dashboard's actions. */
int	 http_act_start(struct flaky_http *, char *err, size_t errlen);
void	 http_act_stop(struct flaky_http *);
/* A POST to an action's path: checked here (origin, type, a token of
 * scope write, Host), then taken by the actions' worker. */
void	 http_act_request(struct flaky_http *, struct evhttp_request *,
	    struct http_conn *, const char *host);

#endif
