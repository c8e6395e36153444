/* Results produced elsewhere stored as runs (ingest.h). A JUnit file is
 * parsed as it is read and each testcase stored as it ends, so memory
 * stays the same whatever its size; raw output is parsed as it is read
 * (its results, not its bytes, are held) and its head and tail kept. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "classify/classify.h"
#include "ingest/ingest.h"
#include "parse/parse.h"
#include "util/util.h"

/* Raw output kept with the run: its head and tail. */
#define INGEST_KEEP	(32 * 1024)

/* The run of the JUnit file being read. */
struct junit_run {
	const struct flaky_ingest *in;
	struct flaky_ingest_file *f;
	struct flaky_junit_stream *js;
	struct flaky_store_ingest *w;
	int64_t		 dur_us;
};

/* Does it look like XML (after a byte-order mark and blanks)? Decided by
 * the first byte that is not blank, chunk after chunk: f->junit stays -1
 * until then. */
static void
looks_like_xml(struct flaky_ingest_file *f, const char *s, size_t len)
{
	size_t	 i = 0;

	if (f->size == 0 && len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < len && strchr(" \t\r\n", s[i]) != NULL && s[i] != '\0')
		i++;
	if (i < len)
		f->junit = s[i] == '<';
}

/* One chunk of f at the current offset: its length, 0 at the end, or a
 * negative errno with err filled. */
static ssize_t
chunk_read(struct flaky_ingest_file *f, char *buf, char *err, size_t errlen)
{
	ssize_t	 n;

	while ((n = read(f->fd, buf, FLAKY_INGEST_CHUNK)) == -1 &&
	    errno == EINTR)
		;
	if (n == -1)
		return flaky_error(err, errlen, errno, "%s: %s", f->path,
		    strerror(errno));
	return n;
}

/* "PATH: expected at most 256 MiB", as flaky_read_file says it. */
static int
too_big(const struct flaky_ingest_file *f, char *err, size_t errlen)
{
	return flaky_error(err, errlen, EFBIG, "%s: expected at most %ld MiB",
	    f->path, FLAKY_INGEST_MAX / (1024 * 1024));
}

/* The hash's seed: the target, and the salt of an upload. */
static uint64_t
hash_seed(const struct flaky_ingest *in)
{
	uint64_t h = flaky_hash64(in->target, strlen(in->target),
	    FLAKY_HASH_SEED);

	if (in->hash_salt != NULL)
		h = flaky_hash64(in->hash_salt, strlen(in->hash_salt) + 1, h);
	return h;
}

/* Open f when it has no fd, at its start. */
static int
file_open(struct flaky_ingest_file *f, char *err, size_t errlen)
{
	struct stat	 sb;

	if (f->fd >= 0) {
		if (lseek(f->fd, 0, SEEK_SET) == -1)
			return flaky_error(err, errlen, errno, "%s: %s",
			    f->path, strerror(errno));
		return 0;
	}
	/* O_NONBLOCK: a FIFO in the file's place must not hang us. */
	if ((f->fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
	    O_NOCTTY)) == -1 || fstat(f->fd, &sb) == -1)
		return flaky_error(err, errlen, errno, "%s: %s", f->path,
		    strerror(errno));
	f->own_fd = 1;
	if (!S_ISREG(sb.st_mode))
		return flaky_error(err, errlen, S_ISDIR(sb.st_mode) ? EISDIR :
		    EINVAL, "%s: expected a regular file%s", f->path,
		    S_ISDIR(sb.st_mode) ? ", found a directory" : "");
	if (sb.st_size > FLAKY_INGEST_MAX)
		return too_big(f, err, errlen);
	return 0;
}

void
flaky_ingest_file_close(struct flaky_ingest_file *f)
{
	if (f->own_fd && f->fd >= 0)
		close(f->fd);
	if (f->own_fd)
		f->fd = -1;
	f->own_fd = 0;
}

int
flaky_ingest_hash(const struct flaky_ingest *in, struct flaky_ingest_file *f,
    char *buf, char *err, size_t errlen)
{
	ssize_t	 n;
	int	 r;

	f->junit = -1;
	f->size = 0;
	if ((r = file_open(f, err, errlen)) < 0)
		return r;
	f->h = hash_seed(in);
	/* Read to the end within the bound: the file may grow meanwhile. */
	while ((n = chunk_read(f, buf, err, errlen)) > 0) {
		if (f->junit < 0)
			looks_like_xml(f, buf, (size_t)n);
		if ((f->size += n) > FLAKY_INGEST_MAX)
			return too_big(f, err, errlen);
		f->h = flaky_hash64(buf, (size_t)n, f->h);
	}
	snprintf(f->hash, sizeof f->hash, "%s:%016" PRIx64,
	    in->hash_salt != NULL ? "upload" : "ingest", f->h);
	f->junit = f->junit == 1;
	/* Not kept open: a command may name thousands of files. */
	flaky_ingest_file_close(f);
	return n < 0 ? (int)n : 0;
}

/* Read f again, handing each chunk to fn; the bytes must be the ones
 * hashed. Returns what fn or the read returned. */
static int
reread(const struct flaky_ingest *in, struct flaky_ingest_file *f,
    char *buf, int (*fn)(void *, const char *, size_t, int, char *, size_t),
    void *arg, char *err, size_t errlen)
{
	uint64_t	 h = hash_seed(in);
	off_t		 total = 0;
	ssize_t		 n;
	int		 r;

	if ((r = file_open(f, err, errlen)) < 0)
		return r;
	do {
		if ((n = chunk_read(f, buf, err, errlen)) < 0) {
			r = (int)n;
			break;
		}
		if ((total += n) > f->size)
			break;
		h = flaky_hash64(buf, (size_t)n, h);
		r = fn(arg, buf, (size_t)n, n == 0, err, errlen);
	} while (r == 0 && n > 0);
	flaky_ingest_file_close(f);
	/* The same bytes as hashed, or another file in its place. */
	if (r == 0 && (total != f->size || h != f->h))
		r = flaky_error(err, errlen, EAGAIN, "%s: changed while it "
		    "was read; try again once it is written", f->path);
	return r;
}

/* A JUnit testcase, complete: classified and stored. */
static int
junit_case(void *arg, const struct flaky_result *r,
    const struct flaky_attempt *a, size_t na, char *err, size_t errlen)
{
	struct junit_run *u = arg;
	struct flaky_result c = *r;
	int		 sig, e;

	if (u->w == NULL)
		return 0;	/* only read (flaky_ingest_check) */
	c.signature = NULL;
	if (FLAKY_FAILED(c.outcome)) {
		/* As flaky_classify_run, result by result. */
		sig = flaky_classifier_classify(u->in->cls, c.message,
		    c.message != NULL ? strlen(c.message) : 0);
		if (sig != FLAKY_SIG_NONE)
			c.signature = (char *)flaky_classifier_name(u->in->cls,
			    sig);
		u->f->failed++;
	}
	if (c.duration_us > 0)
		u->dur_us += c.duration_us;
	if ((e = flaky_store_ingest_add(u->w, &c, a, na, err, errlen)) < 0 ||
	    (u->in->yield != NULL && (e = u->in->yield(u->in->yield_arg, err,
	    errlen)) < 0))
		u->f->store_failed = 1;
	return e;
}

/* A chunk of a JUnit file into its stream. */
static int
junit_chunk(void *arg, const char *buf, size_t len, int final, char *err,
    size_t errlen)
{
	struct junit_run *u = arg;

	return flaky_junit_stream_feed(u->js, buf, len, final, err, errlen);
}

/* The run record both kinds of file complete. */
static void
run_record(const struct flaky_ingest *in, struct flaky_ingest_file *f,
    struct flaky_run_record *rec, int64_t dur_us)
{
	memset(rec, 0, sizeof *rec);
	rec->target_id = in->target_id;
	rec->status = FLAKY_RUN_DONE;
	rec->trigger = in->upload_id > 0 ? "upload" : "ingest";
	rec->started_ms = f->when_ms;
	rec->duration_us = dur_us;
	rec->ended_ms = f->when_ms + dur_us / 1000;
	rec->exit_code = f->failed > 0;
	rec->revision = in->revision;
	rec->loadavg = -1;
	rec->content_hash = f->hash;
	rec->kind = FLAKY_KIND_INGESTED;
	rec->box = in->box;
}

/* Where an upload's run came from, once its row is there. */
static int
run_ci(const struct flaky_ingest *in, struct flaky_ingest_file *f,
    char *err, size_t errlen)
{
	int	 r;

	if (in->ci == NULL && in->upload_id <= 0)
		return 0;
	if (in->ci == NULL) {
		struct flaky_ci_meta none = { 0 };

		r = flaky_store_run_ci(in->store, f->run_id, &none,
		    in->upload_id, err, errlen);
	} else
		r = flaky_store_run_ci(in->store, f->run_id, in->ci,
		    in->upload_id, err, errlen);
	if (r < 0)
		f->store_failed = 1;
	return r;
}

/* Complete the run of a JUnit file. The run-level rule of
 * flaky_classify_run, applied now that the counts are known: most of a
 * run failing at once is the environment. */
static int
junit_finish(struct junit_run *u, const struct flaky_junit_info *info,
    char *err, size_t errlen)
{
	const struct flaky_ingest *in = u->in;
	struct flaky_run_record rec;
	struct flaky_results meta;
	int		 r;

	u->f->store_failed = 1;
	if (u->f->failed >= 5 && (size_t)u->f->failed * 2 > info->n &&
	    (r = flaky_store_ingest_resign(u->w, flaky_classifier_name(in->cls,
	    FLAKY_SIG_INFRA), err, errlen)) < 0)
		return r;
	/* --at, else the file's first <testsuite timestamp=>, else now */
	u->f->when_ms = in->at_ms >= 0 ? in->at_ms : info->timestamp_ms >= 0 ?
	    info->timestamp_ms : in->now_ms;
	flaky_results_init(&meta);
	memcpy(meta.runner, info->runner, sizeof meta.runner);
	meta.summary_total = info->summary_total;
	run_record(in, u->f, &rec, u->dur_us);
	if ((r = flaky_store_ingest_finish(u->w, &rec, &meta, err,
	    errlen)) < 0)
		return r;
	u->f->run_id = rec.id;
	u->f->store_failed = 0;
	return 0;
}

/* A JUnit file, parsed and stored as it is read (only parsed: dry). */
static int
ingest_junit(const struct flaky_ingest *in, struct flaky_ingest_file *f,
    char *buf, int dry, char *err, size_t errlen)
{
	struct junit_run u = { in, f, NULL, NULL, 0 };
	struct flaky_junit_info info;
	int		 r;

	if (!dry && (r = flaky_store_ingest_start(in->store, in->target_id,
	    in->now_ms, &u.w, err, errlen)) < 0) {
		f->store_failed = 1;
		return r;
	}
	if (!dry && in->yield != NULL)
		flaky_store_ingest_set_yield(u.w, in->yield, in->yield_arg);
	/* where it came from, before any part of it may be committed */
	if (!dry && (f->run_id = flaky_store_ingest_run(u.w), r = run_ci(in,
	    f, err, errlen)) < 0)
		goto out;
	if ((r = flaky_junit_stream_new(&u.js, f->path, junit_case, &u)) < 0) {
		r = flaky_error(err, errlen, -r, "out of memory");
		goto out;
	}
	if ((r = reread(in, f, buf, junit_chunk, &u, err, errlen)) < 0)
		goto out;
	if ((r = flaky_junit_stream_end(u.js, &info, err, errlen)) < 0)
		goto out;
	if (info.n == 0) {
		r = flaky_error(err, errlen, EINVAL, "%s: expected at least "
		    "one <testcase>", f->path);
		goto out;
	}
	if (dry)
		goto out;
	if ((r = junit_finish(&u, &info, err, errlen)) < 0)
		goto out;
	f->tests = info.n;
	f->attempts = info.nattempts;
out:
	flaky_junit_stream_free(u.js);
	flaky_store_ingest_free(u.w);
	return r;
}

/* Raw runner output as it is read: parsed, and its head and tail kept. */
struct raw {
	const char		*path;
	struct flaky_parser	*p;
	struct flaky_buf	 head;	/* the first INGEST_KEEP bytes */
	struct flaky_buf	 tail;	/* at least the last INGEST_KEEP after */
	size_t			 len;
};

/* A chunk of raw output into the parser and what is kept. */
static int
raw_chunk(void *arg, const char *buf, size_t len, int final, char *err,
    size_t errlen)
{
	struct raw	*x = arg;
	size_t		 h = INGEST_KEEP - x->head.len;
	int		 r;

	(void)final;
	if ((r = flaky_parser_feed(x->p, buf, len)) < 0)
		return flaky_error(err, errlen, -r, "%s: %s", x->path,
		    strerror(-r));
	x->len += len;
	h = h < len ? h : len;
	flaky_buf_add(&x->head, buf, h);
	flaky_buf_add(&x->tail, buf + h, len - h);
	if (x->tail.len > 2 * INGEST_KEEP) {
		memmove(x->tail.data, x->tail.data + x->tail.len - INGEST_KEEP,
		    INGEST_KEEP);
		x->tail.len = INGEST_KEEP;
	}
	if (x->head.oom || x->tail.oom)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	return 0;
}

/* The output kept with the run, as a run keeps its own: all of it, or its
 * head, a marker and its tail. */
static int
raw_keep(struct raw *x, struct flaky_buf *keep)
{
	flaky_buf_add(keep, x->head.data, x->head.len);
	if (x->len <= 2 * INGEST_KEEP)
		flaky_buf_add(keep, x->tail.data, x->tail.len);
	else {
		flaky_buf_printf(keep, "\n[... %zu bytes not kept ...]\n",
		    x->len - 2 * INGEST_KEEP);
		flaky_buf_add(keep, x->tail.data + x->tail.len - INGEST_KEEP,
		    INGEST_KEEP);
	}
	return keep->oom ? -ENOMEM : 0;
}

/* Store raw output's results as a run, in the open transaction. */
static int
raw_store(const struct flaky_ingest *in, struct flaky_ingest_file *f,
    struct flaky_results *res, const struct flaky_buf *keep, size_t len,
    char *err, size_t errlen)
{
	struct flaky_run_record rec;
	int64_t		 dur = 0;
	int		 r;

	f->failed = 0;
	for (size_t i = 0; i < res->n; i++) {
		if (res->v[i].duration_us > 0)
			dur += res->v[i].duration_us;
		f->failed += FLAKY_FAILED(res->v[i].outcome);
	}
	run_record(in, f, &rec, dur);
	rec.output_bytes = len;
	rec.output_dropped = len - (len <= 2 * INGEST_KEEP ? len :
	    2 * INGEST_KEEP);
	rec.out = keep->data;
	rec.out_len = keep->len;
	rec.incomplete = res->incomplete;
	if ((r = flaky_classify_results(in->cls, res, NULL)) < 0)
		return flaky_error(err, errlen, -r, "classifying failures");
	f->store_failed = 1;
	if ((r = flaky_store_run_finish(in->store, &rec, res, err,
	    errlen)) < 0)
		return r;
	f->run_id = rec.id;
	if ((r = run_ci(in, f, err, errlen)) < 0)
		return r;
	f->store_failed = 0;
	f->tests = res->n;
	return 0;
}

/* Raw runner output: parsed as it is read, then stored (not: dry). */
static int
ingest_raw(const struct flaky_ingest *in, struct flaky_ingest_file *f,
    char *buf, int dry, char *err, size_t errlen)
{
	struct raw	 x;
	struct flaky_results res;
	struct flaky_buf keep;
	int		 r;

	memset(&x, 0, sizeof x);
	x.path = f->path;
	flaky_buf_init(&x.head);
	flaky_buf_init(&x.tail);
	flaky_buf_init(&keep);
	flaky_results_init(&res);
	f->when_ms = in->at_ms >= 0 ? in->at_ms : in->now_ms;
	if ((r = flaky_parser_new(&x.p, NULL)) < 0) {
		r = flaky_error(err, errlen, -r, "out of memory");
		goto out;
	}
	if ((r = reread(in, f, buf, raw_chunk, &x, err, errlen)) < 0)
		goto out;
	if ((r = flaky_parser_finish(x.p, &res)) < 0) {
		r = flaky_error(err, errlen, -r, "%s: %s", x.path,
		    strerror(-r));
		goto out;
	}
	if (res.n == 0) {
		r = flaky_error(err, errlen, EINVAL, "%s: no test results "
		    "recognized (expected JUnit XML, or the output of one of "
		    FLAKY_PARSE_RUNNERS ")", x.path);
		goto out;
	}
	if (dry)
		goto out;
	if ((r = raw_keep(&x, &keep)) < 0) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	r = raw_store(in, f, &res, &keep, x.len, err, errlen);
out:
	flaky_parser_free(x.p);
	flaky_buf_free(&x.head);
	flaky_buf_free(&x.tail);
	flaky_buf_free(&keep);
	flaky_results_free(&res);
	return r;
}

int
flaky_ingest_store(const struct flaky_ingest *in, struct flaky_ingest_file *f,
    char *buf, char *err, size_t errlen)
{
	int	 r;

	f->store_failed = 1;
	f->duplicate = 0;
	f->failed = 0;
	f->tests = f->attempts = 0;
	if ((r = flaky_store_run_by_hash(in->store, f->hash, &f->run_id, err,
	    errlen)) < 0)
		return r;
	if (r == 1) {
		f->duplicate = 1;
		f->store_failed = 0;
		return 0;
	}
	f->store_failed = 0;
	if (f->junit)
		return ingest_junit(in, f, buf, 0, err, errlen);
	return ingest_raw(in, f, buf, 0, err, errlen);
}

int
flaky_ingest_check(const struct flaky_ingest *in, struct flaky_ingest_file *f,
    char *buf, char *err, size_t errlen)
{
	if (f->junit)
		return ingest_junit(in, f, buf, 1, err, errlen);
	return ingest_raw(in, f, buf, 1, err, errlen);
}
