/* flakyctl ingest: results produced elsewhere (a CI job's JUnit XML or raw
 * runner output) stored as runs, once per file content. */
#include "buildconf.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "classify/classify.h"
#include "diag.h"
#include "flakyctl.h"
#include "log.h"
#include "parse/parse.h"
#include "store/store.h"
#include "util/util.h"

/* A file larger than this is refused, JUnit or raw output: no CI report
 * needs more. Nothing holds a file whole: it is read twice in chunks,
 * once for its hash (a file ingested before is skipped before any work),
 * then parsed and stored as it is read. */
#define INGEST_MAX	(256L * 1024 * 1024)
#define INGEST_CHUNK	(64 * 1024)
/* Raw output kept with the run: its head and tail. */
#define INGEST_KEEP	(32 * 1024)

struct ingest_file {
	const char	*path;
	int		 fd;
	int		 junit;		/* 1 JUnit, 0 raw, -1 not known yet */
	off_t		 size;		/* bytes hashed */
	uint64_t	 h;
	char		 hash[40];
};

/* What one command stores, and the run of the JUnit file being read. */
struct ingest {
	struct flaky_store	*store;
	const struct flaky_classifier *cls;
	const char		*target;
	int64_t			 target_id;
	int64_t			 at;		/* --at, or -1 */
	int64_t			 now;
	const char		*revision;
	int			 store_failed;	/* err is the store's */
	/* The file being read. */
	struct ingest_file	*f;
	struct flaky_junit_stream *js;
	struct flaky_store_ingest *w;	/* its run */
	int64_t			 when_ms;
	int64_t			 dur_us;
	int64_t			 failed;
};

/* Does it look like XML (after a byte-order mark and blanks)? Decided by
 * the first byte that is not blank, chunk after chunk: f->junit stays -1
 * until then. */
static void
looks_like_xml(struct ingest_file *f, const char *s, size_t len)
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
ingest_read(struct ingest_file *f, char *buf, char *err, size_t errlen)
{
	ssize_t	 n;

	while ((n = read(f->fd, buf, INGEST_CHUNK)) == -1 && errno == EINTR)
		;
	if (n == -1)
		return flaky_error(err, errlen, errno, "%s: %s", f->path,
		    strerror(errno));
	return n;
}

/* "PATH: expected at most 256 MiB", as flaky_read_file says it. */
static int
ingest_too_big(const struct ingest_file *f, char *err, size_t errlen)
{
	return flaky_error(err, errlen, EFBIG, "%s: expected at most %ld MiB",
	    f->path, INGEST_MAX / (1024 * 1024));
}

/* Open a file and hash it, within the size bound: nothing is parsed or
 * kept yet. The same bytes for the same target are the same run. */
static int
ingest_open(struct ingest_file *f, const char *target, char *buf,
    char *err, size_t errlen)
{
	struct stat	 sb;
	ssize_t		 n;

	/* O_NONBLOCK: a FIFO in the file's place must not hang us. */
	if ((f->fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
	    O_NOCTTY)) == -1 || fstat(f->fd, &sb) == -1)
		return flaky_error(err, errlen, errno, "%s: %s", f->path,
		    strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return flaky_error(err, errlen, S_ISDIR(sb.st_mode) ? EISDIR :
		    EINVAL, "%s: expected a regular file%s", f->path,
		    S_ISDIR(sb.st_mode) ? ", found a directory" : "");
	if (sb.st_size > INGEST_MAX)
		return ingest_too_big(f, err, errlen);
	f->h = flaky_hash64(target, strlen(target), FLAKY_HASH_SEED);
	/* Read to the end within the bound: the file may grow meanwhile. */
	while ((n = ingest_read(f, buf, err, errlen)) > 0) {
		if (f->junit < 0)
			looks_like_xml(f, buf, (size_t)n);
		if ((f->size += n) > INGEST_MAX)
			return ingest_too_big(f, err, errlen);
		f->h = flaky_hash64(buf, (size_t)n, f->h);
	}
	snprintf(f->hash, sizeof f->hash, "ingest:%016" PRIx64, f->h);
	f->junit = f->junit == 1;
	/* Not kept open: a command may name thousands of files. */
	close(f->fd);
	f->fd = -1;
	return n < 0 ? (int)n : 0;
}

/* Read f again, handing each chunk to fn; the bytes must be the ones
 * hashed. Returns what fn or the read returned. */
static int
ingest_reread(struct ingest_file *f, const char *target, char *buf,
    int (*fn)(void *, const char *, size_t, int, char *, size_t),
    void *arg, char *err, size_t errlen)
{
	uint64_t	 h = flaky_hash64(target, strlen(target),
			    FLAKY_HASH_SEED);
	off_t		 total = 0;
	ssize_t		 n;
	int		 r = 0;

	if ((f->fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
	    O_NOCTTY)) == -1)
		return flaky_error(err, errlen, errno, "%s: %s", f->path,
		    strerror(errno));
	do {
		if ((n = ingest_read(f, buf, err, errlen)) < 0) {
			r = (int)n;
			break;
		}
		if ((total += n) > f->size)
			break;
		h = flaky_hash64(buf, (size_t)n, h);
		r = fn(arg, buf, (size_t)n, n == 0, err, errlen);
	} while (r == 0 && n > 0);
	close(f->fd);
	f->fd = -1;
	/* The same bytes as hashed, or another file in its place. */
	if (r == 0 && (total != f->size || h != f->h))
		r = flaky_error(err, errlen, EAGAIN, "%s: changed while it "
		    "was read; try again once it is written", f->path);
	return r;
}

/* A JUnit testcase, complete: classified and stored. */
static int
ingest_case(void *arg, const struct flaky_result *r,
    const struct flaky_attempt *a, size_t na, char *err, size_t errlen)
{
	struct ingest	*u = arg;
	struct flaky_result c = *r;
	int		 sig, e;

	c.signature = NULL;
	if (FLAKY_FAILED(c.outcome)) {
		/* As flaky_classify_run, result by result. */
		sig = flaky_classifier_classify(u->cls, c.message,
		    c.message != NULL ? strlen(c.message) : 0);
		if (sig != FLAKY_SIG_NONE)
			c.signature = (char *)flaky_classifier_name(u->cls, sig);
		u->failed++;
	}
	if (c.duration_us > 0)
		u->dur_us += c.duration_us;
	if ((e = flaky_store_ingest_add(u->w, &c, a, na, err, errlen)) < 0)
		u->store_failed = 1;
	return e;
}

/* A chunk of a JUnit file into its stream. */
static int
ingest_junit_chunk(void *arg, const char *buf, size_t len, int final,
    char *err, size_t errlen)
{
	struct ingest	*u = arg;

	return flaky_junit_stream_feed(u->js, buf, len, final, err, errlen);
}

/* Complete the run of a JUnit file. The run-level rule of
 * flaky_classify_run, applied now that the counts are known: most of a
 * run failing at once is the environment. */
static int
ingest_junit_finish(struct ingest *u, const struct flaky_junit_info *info,
    char *err, size_t errlen)
{
	struct flaky_run_record rec;
	struct flaky_results meta;
	int		 r;

	if (u->failed >= 5 && (size_t)u->failed * 2 > info->n &&
	    (r = flaky_store_ingest_resign(u->w, flaky_classifier_name(u->cls,
	    FLAKY_SIG_INFRA), err, errlen)) < 0)
		return r;
	/* --at, else the file's first <testsuite timestamp=>, else now */
	u->when_ms = u->at >= 0 ? u->at : info->timestamp_ms >= 0 ?
	    info->timestamp_ms : u->now;
	flaky_results_init(&meta);
	memcpy(meta.runner, info->runner, sizeof meta.runner);
	meta.summary_total = info->summary_total;
	memset(&rec, 0, sizeof rec);
	rec.status = FLAKY_RUN_DONE;
	rec.trigger = "ingest";
	rec.started_ms = u->when_ms;
	rec.duration_us = u->dur_us;
	rec.ended_ms = u->when_ms + u->dur_us / 1000;
	rec.exit_code = u->failed > 0;
	rec.revision = u->revision;
	rec.loadavg = -1;
	rec.content_hash = u->f->hash;
	rec.kind = FLAKY_KIND_INGESTED;
	return flaky_store_ingest_finish(u->w, &rec, &meta, err, errlen);
}

/* A JUnit file, parsed and stored as it is read; its line to print. */
static int
ingest_junit(struct ingest *u, char *buf, struct flaky_buf *line,
    char *err, size_t errlen)
{
	struct flaky_junit_info info;
	char		 when[32];
	int		 r;

	u->dur_us = u->failed = 0;
	if ((r = flaky_store_ingest_start(u->store, u->target_id, u->now,
	    &u->w, err, errlen)) < 0) {
		u->store_failed = 1;
		return r;
	}
	if ((r = flaky_junit_stream_new(&u->js, u->f->path, ingest_case,
	    u)) < 0) {
		r = flaky_error(err, errlen, -r, "out of memory");
		goto out;
	}
	if ((r = ingest_reread(u->f, u->target, buf, ingest_junit_chunk, u,
	    err, errlen)) < 0)
		goto out;
	if ((r = flaky_junit_stream_end(u->js, &info, err, errlen)) < 0)
		goto out;
	if (info.n == 0) {
		r = flaky_error(err, errlen, EINVAL, "%s: expected at least "
		    "one <testcase>", u->f->path);
		goto out;
	}
	if ((r = ingest_junit_finish(u, &info, err, errlen)) < 0) {
		u->store_failed = 1;
		goto out;
	}
	flaky_buf_printf(line, "%s: run %" PRId64 " at %s, %zu test%s",
	    u->f->path, flaky_store_ingest_run(u->w),
	    flaky_format_time(u->when_ms, when, sizeof when), info.n,
	    info.n == 1 ? "" : "s");
	if (info.nattempts > 0)
		flaky_buf_printf(line, ", %zu retry attempts", info.nattempts);
	flaky_buf_addc(line, '\n');
out:
	flaky_junit_stream_free(u->js);
	u->js = NULL;
	flaky_store_ingest_free(u->w);
	u->w = NULL;
	return r;
}

/* Raw runner output as it is read: parsed, and its head and tail kept. */
struct ingest_raw {
	const char		*path;
	struct flaky_parser	*p;
	struct flaky_buf	 head;	/* the first INGEST_KEEP bytes */
	struct flaky_buf	 tail;	/* at least the last INGEST_KEEP after */
	size_t			 len;
};

/* A chunk of raw output into the parser and what is kept. */
static int
ingest_raw_chunk(void *arg, const char *buf, size_t len, int final,
    char *err, size_t errlen)
{
	struct ingest_raw *x = arg;
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
ingest_raw_keep(struct ingest_raw *x, struct flaky_buf *keep)
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
ingest_raw_store(struct ingest *u, struct flaky_results *res,
    const struct flaky_buf *keep, size_t len, int64_t *ret_run, char *err,
    size_t errlen)
{
	struct flaky_run_record rec;
	int64_t		 dur = 0, failed = 0;
	int		 r;

	for (size_t i = 0; i < res->n; i++) {
		if (res->v[i].duration_us > 0)
			dur += res->v[i].duration_us;
		failed += FLAKY_FAILED(res->v[i].outcome);
	}
	memset(&rec, 0, sizeof rec);
	rec.target_id = u->target_id;
	rec.status = FLAKY_RUN_DONE;
	rec.trigger = "ingest";
	rec.started_ms = u->when_ms;
	rec.duration_us = dur;
	rec.ended_ms = u->when_ms + dur / 1000;
	rec.exit_code = failed > 0;
	rec.revision = u->revision;
	rec.loadavg = -1;
	rec.output_bytes = len;
	rec.output_dropped = len - (len <= 2 * INGEST_KEEP ? len :
	    2 * INGEST_KEEP);
	rec.out = keep->data;
	rec.out_len = keep->len;
	rec.content_hash = u->f->hash;
	rec.kind = FLAKY_KIND_INGESTED;
	rec.incomplete = res->incomplete;
	if ((r = flaky_classify_results(u->cls, res, NULL)) < 0)
		return flaky_error(err, errlen, -r, "classifying failures");
	u->store_failed = 1;
	if ((r = flaky_store_run_finish(u->store, &rec, res, err,
	    errlen)) < 0)
		return r;
	*ret_run = rec.id;
	return 0;
}

/* Raw runner output: parsed as it is read (its results, not its bytes,
 * are held), then stored; its line to print. */
static int
ingest_raw(struct ingest *u, char *buf, struct flaky_buf *line, char *err,
    size_t errlen)
{
	struct ingest_raw x;
	struct flaky_results res;
	struct flaky_buf keep;
	int64_t		 run = 0;
	char		 when[32];
	int		 r;

	memset(&x, 0, sizeof x);
	x.path = u->f->path;
	flaky_buf_init(&x.head);
	flaky_buf_init(&x.tail);
	flaky_buf_init(&keep);
	flaky_results_init(&res);
	u->when_ms = u->at >= 0 ? u->at : u->now;
	if ((r = flaky_parser_new(&x.p, NULL)) < 0) {
		r = flaky_error(err, errlen, -r, "out of memory");
		goto out;
	}
	if ((r = ingest_reread(u->f, u->target, buf, ingest_raw_chunk, &x,
	    err, errlen)) < 0)
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
	if ((r = ingest_raw_keep(&x, &keep)) < 0) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	if ((r = ingest_raw_store(u, &res, &keep, x.len, &run, err,
	    errlen)) < 0)
		goto out;
	flaky_buf_printf(line, "%s: run %" PRId64 " at %s, %zu test%s\n",
	    x.path, run, flaky_format_time(u->when_ms, when, sizeof when),
	    res.n, res.n == 1 ? "" : "s");
out:
	flaky_parser_free(x.p);
	flaky_buf_free(&x.head);
	flaky_buf_free(&x.tail);
	flaky_buf_free(&keep);
	flaky_results_free(&res);
	return r;
}

static int	cmd_ingest(struct ctl *, int, char **);

static const struct cmd_option ingest_options[] = {
	{ "target", 'T', 0, "NAME", "the target the runs are stored under "
	    "(required)" },
	{ "at", 'a', 0, "TIME", "when the runs ran (default the file's "
	    "timestamps, else now)" },
	{ "revision", 'r', 0, "REV", "the revision the runs tested "
	    "(default none)" },
	CMD_OPTION_BOX,
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_ingest_entry = {
	.name = "ingest",
	.usage = "ingest --target NAME [--at TIME] [--revision REV] "
	    "[--box NAME] FILE...",
	.summary = "Store results produced elsewhere (JUnit XML, runner "
	    "output).",
	.example = "flakyctl ingest --target shop-ci --revision \"$GIT_SHA\" "
	    "report.xml",
	.options = ingest_options,
	.exec = cmd_ingest,
};

/* Store one file as a run, once per content. A file that is refused (not
 * JUnit nor output we know, not well-formed, past a limit) is the
 * caller's "refused"; an error of the store is not. */
static int
ingest_one(struct ingest *u, struct ingest_file *f, char *buf, char *err,
    size_t errlen)
{
	struct flaky_buf line;
	int64_t		 run = 0;
	int		 r;

	u->f = f;
	u->store_failed = 1;
	if ((r = flaky_store_run_by_hash(u->store, f->hash, &run, err,
	    errlen)) < 0)
		return r;
	if (r == 1) {
		printf("%s: already ingested as run %" PRId64 ", skipped\n",
		    f->path, run);
		return 0;
	}
	u->store_failed = 0;
	flaky_buf_init(&line);
	if (f->junit)
		r = ingest_junit(u, buf, &line, err, errlen);
	else
		r = ingest_raw(u, buf, &line, err, errlen);
	if (r == 0)
		fputs(flaky_buf_cstr(&line), stdout);
	flaky_buf_free(&line);
	return r;
}

/* Remove the database files a failed command made (the database, and
 * its WAL and shared-memory files should SQLite have left them). */
static void
ingest_unmake(const char *path)
{
	static const char *const sfx[] = { "-wal", "-shm", "" };
	char	 p[PATH_MAX];

	for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++)
		if ((size_t)snprintf(p, sizeof p, "%s%s", path, sfx[i]) <
		    sizeof p)
			unlink(p);
}

/* flakyctl ingest: each FILE parsed and stored as a run, once. All of
 * them in one transaction: a bad one stores nothing. */
static int
cmd_ingest(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct ingest	 u;
	struct flaky_classifier *cls = NULL;
	struct ingest_file *files = NULL;
	const char	*target = NULL;
	size_t		 nfiles = 0;
	char		 err[1024], *buf = NULL;
	int		 c, r = 0, created = 0, ret = EXIT_ERROR;

	memset(&u, 0, sizeof u);
	err[0] = '\0';
	u.at = -1;
	u.now = flaky_now_ms();
	cmd_getopt_init(&g, &cmd_ingest_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		switch (c) {
		case 'T':
			target = optarg;
			break;
		case 'a':
			if (flaky_parse_time(optarg, &u.at) < 0) {
				ctl_usage_error("ingest", "--at: expected an "
				    "ISO 8601 time (2026-11-01T12:00:00Z) or a "
				    "date, got '%s'", optarg);
				return EXIT_ERROR;
			}
			break;
		case 'r':
			u.revision = optarg;
			break;
		}
	}
	if (c < 0)
		return g.exit;
	if (target == NULL || *target == '\0') {
		ctl_usage_error("ingest", "--target NAME is required");
		return EXIT_ERROR;
	}
	if (optind >= argc) {
		ctl_usage_error("ingest", "expected at least one FILE");
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "ingest", 1 << FORMAT_TABLE) < 0)
		return EXIT_ERROR;
	u.target = target;
	nfiles = (size_t)(argc - optind);
	files = xcalloc(nfiles, sizeof *files);
	buf = xmalloc(INGEST_CHUNK);
	for (size_t i = 0; i < nfiles; i++) {
		files[i].path = argv[optind + (int)i];
		files[i].fd = -1;
		files[i].junit = -1;
	}
	/* Every file is opened and hashed first: one that cannot be read
	 * stores nothing, before the database is locked. */
	for (size_t i = 0; i < nfiles; i++)
		if (ingest_open(&files[i], target, buf, err, sizeof err) < 0) {
			fprintf(stderr, "flakyctl ingest: refused, nothing "
			    "stored: %s\n", err);
			goto out;
		}
	/* A database this command makes and then stores nothing in is
	 * removed again: a refused file leaves nothing behind. */
	created = access(ctl_db_path(ctl), F_OK) == -1 && errno == ENOENT;
	if (flaky_store_open(ctl_db_path(ctl), FLAKY_STORE_BULK, &u.store,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl ingest: %s\n", err);
		goto out;
	}
	ctl_store_box(ctl, u.store, 1);
	/* the config's signatures and redaction patterns, as analyze */
	if (diag_load_signatures(ctl, u.store, &cls) < 0)
		goto out;
	u.cls = cls;
	if (flaky_store_begin(u.store, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl ingest: %s\n", err);
		goto out;
	}
	u.store_failed = 1;
	if ((r = flaky_store_target(u.store, target, NULL, NULL, &u.target_id,
	    err, sizeof err)) < 0)
		goto fail;
	for (size_t i = 0; i < nfiles; i++)
		if ((r = ingest_one(&u, &files[i], buf, err, sizeof err)) < 0)
			goto fail;
	u.store_failed = 1;
	if ((r = flaky_store_commit(u.store, err, sizeof err)) < 0)
		goto fail;
	ret = EXIT_OK;
	goto out;
fail:
	/* A path that fails without words (memory) still says why. */
	if (err[0] == '\0')
		snprintf(err, sizeof err, "%s", strerror(r < 0 ? -r : EIO));
	fprintf(stderr, "flakyctl ingest: %snothing stored: %s\n",
	    u.store_failed ? "" : "refused, ", err);
	flaky_store_rollback(u.store);
out:
	flaky_store_close(u.store);
	if (ret != EXIT_OK && created)
		ingest_unmake(ctl_db_path(ctl));
	flaky_classifier_free(cls);
	for (size_t i = 0; files != NULL && i < nfiles; i++)
		if (files[i].fd != -1)
			close(files[i].fd);
	free(files);
	free(buf);
	return ret;
}
