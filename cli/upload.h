/* flakyctl upload (upload.c) and its HTTP client (upload_http.c). */
#ifndef FLAKYCTL_UPLOAD_H
#define FLAKYCTL_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct flaky_buf;

/* One POST of files to /api/v1/uploads of a server, retried. */
struct upload_req {
	const char	*server;	/* http(s)://HOST[:PORT][/PREFIX] */
	const char	*query;		/* "target=...&revision=..." */
	const char	*token;		/* NULL: none */
	const char	*ca_file;	/* https: NULL the system's CAs */
	const char	*idem_key;	/* Idempotency-Key or NULL */
	const char	*path;		/* NULL: /api/v1/uploads */
	const char	*who;		/* in messages; NULL: "upload" */
	const char *const *files;	/* one: its body; several: multipart;
					 * none: a GET of path */
	size_t		 nfiles;
	int		 retries;	/* after the first attempt */
	int64_t		 timeout_ms;	/* per attempt */
	int64_t		 backoff_ms;	/* the first wait (doubled, <= 60 s) */
};

/* Post the files; the reply's status and body into *status and body.
 * 0 when a reply came (any status; 5xx, 408 and 429 are retried first,
 * 429 and 503 after their Retry-After), or -1 with err when none did
 * after the retries (the last reason). Each retry is said on stderr. */
int	 upload_post(struct event_base *, const struct upload_req *,
	    int *status, struct flaky_buf *body, char *err, size_t errlen);
/* upload.c: the token of $FLAKY_TOKEN (env NULL) or another variable,
 * else file's first line (file NULL: the variable only); NULL when
 * neither. Exits when the file cannot be read. */
char	*upload_token(const char *file, const char *env);
/* upload.c: "target=...&revision=...": an upload's metadata as its query
 * parameters (NULLs left out), malloc'd. */
struct flaky_ci_meta;
char	*upload_query(const char *target, const char *revision,
	    const struct flaky_ci_meta *, const char *box, const char *at);

#endif
