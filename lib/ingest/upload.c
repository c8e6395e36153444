/* An upload of a CI job's files stored once, whole (ingest.h): what the
 * upload endpoint of flakyd and flakyctl serve does with the files it has
 * received, and flakyctl upload with a file or a server's URI. The files
 * are hashed first, outside any transaction; then one transaction holds
 * the upload's row, its runs and where they came from. Its key (the
 * client's Idempotency-Key, else the files' hashes with the job and
 * attempt) is unique: a second upload of the same key stores nothing and
 * answers with the first one's runs. */
#include "buildconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ingest/ingest.h"
#include "json/json.h"
#include "stats/stats.h"
#include "util/util.h"

/* The upload's key when the client gave none: the files' content, in
 * order, with the target, the job and its attempt (the salt). */
static void
content_key(const struct flaky_upload *u, const struct flaky_ingest_file *f,
    size_t n, char *key, size_t len)
{
	uint64_t h = flaky_hash64(u->in.target, strlen(u->in.target),
	    FLAKY_HASH_SEED);

	if (u->in.hash_salt != NULL)
		h = flaky_hash64(u->in.hash_salt, strlen(u->in.hash_salt) + 1,
		    h);
	for (size_t i = 0; i < n; i++)
		h = flaky_hash64(&f[i].h, sizeof f[i].h, h);
	snprintf(key, len, "content:%016" PRIx64 ":%zu", h, n);
}

/* The upload stored before under the key: 1 with its runs in u. */
static int
find(struct flaky_upload *u, const char *key, char *err, size_t errlen)
{
	int	 r;

	free(u->runs);
	u->runs = NULL;
	u->nruns = 0;
	if ((r = flaky_store_upload_find(u->in.store, key, &u->upload_id,
	    &u->runs, &u->nruns, err, errlen)) == 1)
		u->already = 1;
	if (r == 2)
		return flaky_error(err, errlen, EINPROGRESS, "this upload is "
		    "being stored by another request: try again");
	return r;
}

/* After each result of an upload stored in parts: when the daemon's loop
 * (or another writer of the process) waits for the lock, commit what is
 * there and let it in before going on. */
static int
yield(void *arg, char *err, size_t errlen)
{
	struct flaky_upload *u = arg;
	struct timespec	 ts = { 0, 2 * 1000 * 1000 };
	int		 r;

	if (!flaky_store_others_wait())
		return 0;
	if ((r = flaky_store_commit(u->in.store, err, errlen)) < 0)
		return r;
	u->committed = 1;
	/* the waiter polls every millisecond (open.c): it is in by now */
	nanosleep(&ts, NULL);
	return flaky_store_begin(u->in.store, err, errlen);
}

int
flaky_upload_store(struct flaky_upload *u, struct flaky_ingest_file *files,
    size_t n, char *buf, char *err, size_t errlen)
{
	struct flaky_ingest *in = &u->in;
	char		 key[96];
	const char	*k;
	int		 r;

	u->already = 0;
	u->upload_id = 0;
	u->store_failed = 0;
	if (n == 0)
		return flaky_error(err, errlen, EINVAL, "expected at least one "
		    "file");
	for (size_t i = 0; i < n; i++)
		if ((r = flaky_ingest_hash(in, &files[i], buf, err,
		    errlen)) < 0 || (u->parts && (r = flaky_ingest_check(in,
		    &files[i], buf, err, errlen)) < 0))
			return r;
	u->committed = 0;
	in->yield = u->parts ? yield : NULL;
	in->yield_arg = u;
	if (u->bytes == 0)
		for (size_t i = 0; i < n; i++)
			u->bytes += files[i].size;
	if (u->key != NULL)
		k = u->key;
	else {
		content_key(u, files, n, key, sizeof key);
		k = key;
	}
	u->store_failed = 1;
	if ((r = find(u, k, err, errlen)) != 0)
		return r < 0 ? r : 0;
	if ((r = flaky_store_begin(in->store, err, errlen)) < 0)
		return r;
	if ((r = flaky_store_upload_add(in->store, k, u->token_id,
	    in->now_ms, u->bytes, (int)n, &in->upload_id, err,
	    errlen)) == -EEXIST) {
		/* another request stored it meanwhile */
		flaky_store_rollback(in->store);
		return (r = find(u, k, err, errlen)) < 0 ? r : 0;
	}
	if (r < 0 || (r = flaky_store_target(in->store, in->target, NULL,
	    NULL, &in->target_id, err, errlen)) < 0 || (u->token_id > 0 &&
	    (r = flaky_store_token_used(in->store, u->token_id, in->now_ms,
	    err, errlen)) < 0))
		goto fail;
	if ((u->runs = calloc(n, sizeof *u->runs)) == NULL) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto fail;
	}
	u->store_failed = 0;
	for (size_t i = 0; i < n; i++) {
		if ((r = flaky_ingest_store(in, &files[i], buf, err,
		    errlen)) < 0) {
			u->store_failed = files[i].store_failed;
			goto fail;
		}
		/* a file twice in one upload is one run */
		if (!files[i].duplicate)
			u->runs[u->nruns++] = files[i].run_id;
	}
	u->store_failed = 1;
	if ((r = flaky_store_upload_done(in->store, in->upload_id, in->now_ms,
	    err, errlen)) < 0 || (r = flaky_store_commit(in->store, err,
	    errlen)) < 0)
		goto fail;
	u->upload_id = in->upload_id;
	u->store_failed = 0;
	return 0;
fail:
	flaky_store_rollback(in->store);
	if (u->committed) {
		/* a part is in: the upload goes, its runs stay interrupted */
		char	 e2[256];

		if (flaky_store_upload_abandon(in->store, in->upload_id, e2,
		    sizeof e2) < 0)
			u->store_failed = 1;
	}
	free(u->runs);
	u->runs = NULL;
	u->nruns = 0;
	return r;
}

void
flaky_upload_clear(struct flaky_upload *u)
{
	free(u->runs);
	u->runs = NULL;
	u->nruns = 0;
}

/* The answer to an upload, as the upload endpoint sends it and
 * flakyctl upload --format json prints it (docs/api.md, "Uploads"). */
int
flaky_upload_reply(struct flaky_buf *b, const struct flaky_upload *u,
    const struct flaky_known *k, size_t nk, int window_days)
{
	struct flaky_jw	 w;

	flaky_jw_init(&w, b);
	flaky_jw_object_begin(&w);
	flaky_jw_key(&w, "upload");
	flaky_jw_int(&w, u->upload_id);
	flaky_jw_key(&w, "stored");
	flaky_jw_bool(&w, !u->already);
	flaky_jw_key(&w, "target");
	flaky_jw_string(&w, u->in.target);
	flaky_jw_key(&w, "runs");
	flaky_jw_array_begin(&w);
	for (size_t i = 0; i < u->nruns; i++)
		flaky_jw_int(&w, u->runs[i]);
	flaky_jw_array_end(&w);
	flaky_jw_key(&w, "window_days");
	flaky_jw_int(&w, window_days);
	flaky_jw_key(&w, "failed");
	flaky_jw_array_begin(&w);
	for (size_t i = 0; i < nk; i++) {
		double	 lo, hi;

		flaky_wilson(k[i].failures, k[i].runs, FLAKY_Z95, &lo, &hi);
		flaky_jw_object_begin(&w);
		flaky_jw_key(&w, "test");
		flaky_jw_string(&w, k[i].test);
		flaky_jw_key(&w, "target");
		flaky_jw_string(&w, k[i].target);
		flaky_jw_key(&w, "runs");
		flaky_jw_int(&w, k[i].runs);
		flaky_jw_key(&w, "failures");
		flaky_jw_int(&w, k[i].failures);
		flaky_jw_key(&w, "rate");
		if (k[i].runs > 0)
			flaky_jw_double(&w, (double)k[i].failures /
			    (double)k[i].runs);
		else
			flaky_jw_null(&w);
		flaky_jw_key(&w, "interval");
		flaky_jw_array_begin(&w);
		flaky_jw_double(&w, lo);
		flaky_jw_double(&w, hi);
		flaky_jw_array_end(&w);
		flaky_jw_key(&w, "tier");
		flaky_jw_string(&w, flaky_tier_name(flaky_tier(k[i].failures,
		    k[i].runs)));
		flaky_jw_key(&w, "flips");
		flaky_jw_int(&w, k[i].flips);
		flaky_jw_key(&w, "quarantined");
		flaky_jw_bool(&w, k[i].quarantined);
		flaky_jw_key(&w, "ticket");
		flaky_jw_string(&w, k[i].ticket);
		flaky_jw_object_end(&w);
	}
	flaky_jw_array_end(&w);
	flaky_jw_object_end(&w);
	return flaky_jw_finish(&w);
}
