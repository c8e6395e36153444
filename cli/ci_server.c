/* flakyctl ci and where its evidence goes: a server's lists (GET, through
 * upload's HTTP client), every complete attempt uploaded as one JUnit file
 * each in one upload (stored once, all or nothing, with the job's
 * revision, branch, job and attempt), or the local database's run_ci rows;
 * and what the server or the database knew of each failed test. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <event2/event.h>

#include "ci.h"
#include "flakyctl.h"
#include "json/json.h"
#include "log.h"
#include "upload.h"
#include "util/util.h"

#define GET_RETRIES	2
#define GET_TIMEOUT_MS	30000
#define POST_RETRIES	5
#define POST_TIMEOUT_MS	(10 * 60 * 1000)

/* One request to the server (files: a POST of them, none: a GET). */
static int
request(struct ci *c, const char *path, const char *query, const char *token,
    const char *key, const char *const *files, size_t n, int *status,
    struct flaky_buf *body, char *err, size_t errlen)
{
	struct event_base *base = ctl_event_base();
	struct upload_req u;
	int		 r;

	memset(&u, 0, sizeof u);
	u.server = c->server;
	u.path = path;
	u.query = query;
	u.token = token;
	u.ca_file = c->ca_file;
	u.idem_key = key;
	u.who = "ci";
	u.files = files;
	u.nfiles = n;
	u.retries = n > 0 ? POST_RETRIES : GET_RETRIES;
	u.timeout_ms = n > 0 ? POST_TIMEOUT_MS : GET_TIMEOUT_MS;
	u.backoff_ms = 1000;
	r = upload_post(base, &u, status, body, err, errlen);
	event_base_free(base);
	return r;
}

int
ci_server_get(struct ci *c, const char *path, const char *query,
    int *status, char **body, char *err, size_t errlen)
{
	struct flaky_buf b;
	char	*token;
	int	 r;

	/* a read token; else the upload one (enough for a server without
	 * a token file, on loopback, or for a write token) */
	token = upload_token(c->read_token_file, "FLAKY_READ_TOKEN");
	if (token == NULL && c->read_token_file == NULL)
		token = upload_token(c->token_file, NULL);
	flaky_buf_init(&b);
	r = request(c, path, query, token, NULL, NULL, 0, status, &b, err,
	    errlen);
	if (token != NULL)
		explicit_bzero(token, strlen(token));
	free(token);
	flaky_buf_addc(&b, '\0');
	if (b.oom)
		fatalx("out of memory");
	*body = flaky_buf_steal(&b);
	return r;
}

/* What the store or the server knew of one failed test. */
static void
known_add(struct ci *c, size_t *cap, const char *test, int64_t runs,
    int64_t failures, int64_t flips, int quarantined, const char *ticket)
{
	struct ci_known *k;

	if (test == NULL)
		return;
	if (flaky_array_grow(&c->known, cap, c->nknown, sizeof *c->known) < 0)
		fatalx("out of memory");
	k = &c->known[c->nknown++];
	k->test = xstrdup(test);
	k->runs = runs;
	k->failures = failures;
	k->flips = flips;
	k->quarantined = quarantined;
	k->ticket = ticket ? xstrdup(ticket) : NULL;
}

/* The upload's answer: its id, and each failed test's knowledge. */
static int
read_answer(struct ci *c, const char *s, size_t n)
{
	struct flaky_json *j;
	const struct flaky_json *f;
	size_t	 cap = 0;
	char	 err[256];

	if (flaky_json_parse(s, n, NULL, &j, err, sizeof err) < 0 ||
	    (f = flaky_json_get(j, "failed")) == NULL ||
	    f->type != FLAKY_JSON_ARRAY) {
		if (j != NULL)
			flaky_json_free(j);
		return -1;
	}
	c->upload_id = (int64_t)flaky_json_get_num(j, "upload");
	for (size_t i = 0; i < f->len; i++) {
		const struct flaky_json *e = &f->items[i];

		known_add(c, &cap, flaky_json_get_str(e, "test"),
		    (int64_t)flaky_json_get_num(e, "runs"),
		    (int64_t)flaky_json_get_num(e, "failures"),
		    (int64_t)flaky_json_get_num(e, "flips"),
		    flaky_json_get_num(e, "quarantined") == 1,
		    flaky_json_get_str(e, "ticket"));
	}
	flaky_json_free(j);
	return 0;
}

/* The attempts to send: every run whose evidence is whole (a run that is
 * not would count in the server's rates as if it were: it stays out, and
 * the step exits 2 for it anyway). */
static size_t
attempt_files(struct ci *c, char ***files)
{
	size_t	 n = 0;
	char	 err[512];

	*files = xcalloc((size_t)c->nruns + 1, sizeof **files);
	for (int i = 0; i < c->nruns; i++) {
		char	*why = ci_run_problem(c, &c->runs[i]), *path;

		if (why != NULL || c->runs[i].res.n == 0) {
			if (why != NULL)
				log_warnx("run %d not uploaded: %s", i + 1,
				    why);
			free(why);
			continue;
		}
		xasprintf(&path, "%s/attempt-%d.xml", c->tmpdir, i + 1);
		if (ci_junit_attempt(c, &c->runs[i], path, err,
		    sizeof err) < 0)
			fatalx("%s", err);
		(*files)[n++] = path;
	}
	return n;
}

int
ci_upload(struct ci *c)
{
	struct flaky_buf body;
	unsigned char	 rnd[16];
	char		 key[40], err[512], *query, *token, **files;
	size_t		 n;
	int		 status, r = -1;

	n = attempt_files(c, &files);
	if (n == 0) {
		free(files);
		return 0;
	}
	/* one key for the call: its retried requests are stored once */
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		fatal("getrandom");
	snprintf(key, sizeof key, "ci-");
	for (size_t i = 0; i < sizeof rnd; i++)
		snprintf(key + 3 + 2 * i, 3, "%02x", rnd[i]);
	token = upload_token(c->token_file, NULL);
	query = upload_query(c->target, c->revision, &c->m, c->ctl->box ?
	    c->ctl->box : c->env.box, NULL);
	flaky_buf_init(&body);
	if (request(c, NULL, query, token, key, (const char *const *)files, n,
	    &status, &body, err, sizeof err) < 0)
		xasprintf(&c->incomplete, "the attempts were not uploaded: %s",
		    err);
	else if (status != 200 && status != 201)
		xasprintf(&c->incomplete, "the upload was refused (HTTP %d): "
		    "%.300s", status, body.len ? flaky_buf_cstr(&body) :
		    "no reason given");
	else if (read_answer(c, flaky_buf_cstr(&body), body.len) < 0)
		xasprintf(&c->incomplete, "the server's answer is not an "
		    "upload's: %.200s", flaky_buf_cstr(&body));
	else
		r = 0;
	if (token != NULL)
		explicit_bzero(token, strlen(token));
	free(token);
	free(query);
	flaky_buf_free(&body);
	for (size_t i = 0; i < n; i++) {
		unlink(files[i]);
		free(files[i]);
	}
	free(files);
	return r;
}

int
ci_store_local(struct ci *c)
{
	struct flaky_known *k = NULL;
	int64_t		*ids, now = flaky_now_ms();
	size_t		 n = 0, nk = 0, cap = 0;
	char		 err[1024];
	int		 r = -1;

	ids = xcalloc((size_t)c->nruns + 1, sizeof *ids);
	for (int i = 0; i < c->nruns; i++) {
		if (c->runs[i].id <= 0)
			continue;
		ids[n++] = c->runs[i].id;
		if ((c->m.branch != NULL || c->m.job != NULL ||
		    c->m.ci != NULL) && flaky_store_run_ci(c->store,
		    c->runs[i].id, &c->m, 0, err, sizeof err) < 0)
			goto fail;
	}
	if (flaky_store_known(c->store, ids, n, now - CI_WINDOW_DAYS *
	    86400000LL, now, &k, &nk, err, sizeof err) < 0)
		goto fail;
	for (size_t i = 0; i < nk; i++)
		known_add(c, &cap, k[i].test, k[i].runs, k[i].failures,
		    k[i].flips, k[i].quarantined, k[i].ticket);
	r = 0;
	goto out;
fail:
	xasprintf(&c->incomplete, "the runs are stored, but: %s", err);
out:
	flaky_known_free(k, nk);
	free(ids);
	return r;
}
