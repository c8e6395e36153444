/* flakyctl ingest: results produced elsewhere (a CI job's JUnit XML or raw
 * runner output) stored as runs, once per file content. */
#include "buildconf.h"

#include <errno.h>
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

/* Raw output larger than this is refused: no CI log needs more, and the
 * stream parsers are fed it whole. */
#define INGEST_RAW_MAX	(256L * 1024 * 1024)
/* Raw output kept with the run: its head and tail. */
#define INGEST_KEEP	(32 * 1024)

struct ingest_file {
	const char		*path;
	char			*data;	/* raw output; NULL for JUnit */
	size_t			 len;
	int			 junit;
	char			 hash[40];
	struct flaky_results	 res;
	struct flaky_junit_extra extra;
	struct flaky_buf	 keep;	/* head, marker, tail */
};

/* Does it look like XML (after a byte-order mark and blanks)? */
static int
looks_like_xml(const char *s, size_t len)
{
	size_t	 i = 0;

	if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < len && strchr(" \t\r\n", s[i]) != NULL && s[i] != '\0')
		i++;
	return i < len && s[i] == '<';
}

/* Parse one file: everything is checked before anything is stored. */
static int
ingest_parse(struct ingest_file *f, const char *target, char *err,
    size_t errlen)
{
	uint64_t	 h;
	int		 r;

	if ((r = flaky_read_file(f->path, INGEST_RAW_MAX, &f->data, &f->len,
	    err, errlen)) < 0)
		return r;
	/* The same bytes for the same target are the same run. */
	h = flaky_hash64(target, strlen(target), FLAKY_HASH_SEED);
	h = flaky_hash64(f->data, f->len, h);
	snprintf(f->hash, sizeof f->hash, "ingest:%016" PRIx64, h);
	f->junit = looks_like_xml(f->data, f->len);
	if (f->junit) {
		if ((r = flaky_parse_junit_ex(f->path, &f->res, &f->extra,
		    err, errlen)) < 0)
			return r;
		if (f->res.n == 0)
			return flaky_error(err, errlen, EINVAL, "%s: expected "
			    "at least one <testcase>", f->path);
		return 0;
	}
	if ((r = flaky_parse_buffer(f->data, f->len, NULL, &f->res)) < 0)
		return flaky_error(err, errlen, -r, "%s: %s", f->path,
		    strerror(-r));
	if (f->res.n == 0)
		return flaky_error(err, errlen, EINVAL, "%s: no test results "
		    "recognized (expected JUnit XML, or pytest, unittest, Jest, "
		    "go test or TAP output)", f->path);
	/* Keep a head and a tail of raw output, as a run keeps its own. */
	if (f->len <= 2 * INGEST_KEEP)
		flaky_buf_add(&f->keep, f->data, f->len);
	else {
		flaky_buf_add(&f->keep, f->data, INGEST_KEEP);
		flaky_buf_printf(&f->keep, "\n[... %zu bytes not kept ...]\n",
		    f->len - 2 * INGEST_KEEP);
		flaky_buf_add(&f->keep, f->data + f->len - INGEST_KEEP,
		    INGEST_KEEP);
	}
	return f->keep.oom ? flaky_error(err, errlen, ENOMEM, "out of "
	    "memory") : 0;
}

/* Store one parsed file as a run with its attempts, in the open
 * transaction. Returns 1 when the same content was stored before. */
static int
ingest_store(struct flaky_store *store, const struct flaky_classifier *cls,
    struct ingest_file *f, int64_t target_id, int64_t at,
    const char *revision, int64_t *ret_run, char *err, size_t errlen)
{
	struct flaky_run_record rec;
	int64_t		 dur = 0, failed = 0;
	int		 r;

	if ((r = flaky_store_run_by_hash(store, f->hash, ret_run, err,
	    errlen)) != 0)
		return r;
	for (size_t i = 0; i < f->res.n; i++) {
		if (f->res.v[i].duration_us > 0)
			dur += f->res.v[i].duration_us;
		failed += FLAKY_FAILED(f->res.v[i].outcome);
	}
	memset(&rec, 0, sizeof rec);
	rec.target_id = target_id;
	rec.status = FLAKY_RUN_DONE;
	rec.trigger = "ingest";
	rec.started_ms = at;
	rec.duration_us = dur;
	rec.ended_ms = at + dur / 1000;
	rec.exit_code = failed > 0;
	rec.revision = revision;
	rec.loadavg = -1;
	rec.output_bytes = f->junit ? 0 : f->len;
	rec.output_dropped = f->junit ? 0 : f->len - (f->len <= 2 *
	    INGEST_KEEP ? f->len : 2 * INGEST_KEEP);
	rec.out = f->keep.data;
	rec.out_len = f->keep.len;
	rec.content_hash = f->hash;
	rec.kind = FLAKY_KIND_INGESTED;
	rec.incomplete = f->res.incomplete;
	if ((r = flaky_classify_results(cls, &f->res, NULL)) < 0)
		return flaky_error(err, errlen, -r, "classifying failures");
	if ((r = flaky_store_run_finish(store, &rec, &f->res, err,
	    errlen)) < 0)
		return r;
	if ((r = flaky_store_add_attempts(store, rec.id, &f->res, &f->extra,
	    err, errlen)) < 0)
		return r;
	*ret_run = rec.id;
	return 0;
}

static int	cmd_ingest(struct ctl *, int, char **);

static const struct cmd_option ingest_options[] = {
	{ "target", 'T', 0, "NAME", "the target the runs are stored under "
	    "(required)" },
	{ "at", 'a', 0, "TIME", "when the runs ran (default the file's "
	    "timestamps, else now)" },
	{ "revision", 'r', 0, "REV", "the revision the runs tested "
	    "(default none)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_ingest_entry = {
	.name = "ingest",
	.usage = "ingest --target NAME [--at TIME] [--revision REV] FILE...",
	.summary = "Store results produced elsewhere (JUnit XML, runner "
	    "output).",
	.example = "flakyctl ingest --target shop-ci --revision \"$GIT_SHA\" "
	    "report.xml",
	.options = ingest_options,
	.exec = cmd_ingest,
};

/* flakyctl ingest: each FILE parsed and stored as a run, once. */
static int
cmd_ingest(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct flaky_store *store = NULL;
	struct flaky_classifier *cls = NULL;
	struct ingest_file *files = NULL;
	const char	*target = NULL, *revision = NULL, *at_s = NULL;
	int64_t		 at = -1, target_id, now = flaky_now_ms();
	size_t		 nfiles = 0;
	char		 err[1024], when[32];
	int		 c, r, ret = EXIT_ERROR;

	cmd_getopt_init(&g, &cmd_ingest_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		switch (c) {
		case 'T':
			target = optarg;
			break;
		case 'a':
			at_s = optarg;
			if (flaky_parse_time(optarg, &at) < 0) {
				ctl_usage_error("ingest", "--at: expected an "
				    "ISO 8601 time (2026-11-01T12:00:00Z) or a "
				    "date, got '%s'", optarg);
				return EXIT_ERROR;
			}
			break;
		case 'r':
			revision = optarg;
			break;
		}
	}
	if (c < 0)
		return g.exit;
	(void)at_s;
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
	nfiles = (size_t)(argc - optind);
	files = xcalloc(nfiles, sizeof *files);
	for (size_t i = 0; i < nfiles; i++) {
		files[i].path = argv[optind + (int)i];
		flaky_results_init(&files[i].res);
		flaky_buf_init(&files[i].keep);
		files[i].extra.timestamp_ms = -1;
	}
	/* Every file is read and checked first: a bad one stores nothing. */
	for (size_t i = 0; i < nfiles; i++)
		if (ingest_parse(&files[i], target, err, sizeof err) < 0) {
			fprintf(stderr, "flakyctl ingest: refused, nothing "
			    "stored: %s\n", err);
			goto out;
		}
	if (flaky_store_open(ctl_db_path(ctl), FLAKY_STORE_BULK, &store, err,
	    sizeof err) < 0) {
		fprintf(stderr, "flakyctl ingest: %s\n", err);
		goto out;
	}
	/* the config's signatures and redaction patterns, as analyze */
	if (diag_load_signatures(ctl, store, &cls) < 0)
		goto out;
	if (flaky_store_begin(store, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl ingest: %s\n", err);
		goto out;
	}
	if (flaky_store_target(store, target, NULL, NULL, &target_id, err,
	    sizeof err) < 0)
		goto fail;
	for (size_t i = 0; i < nfiles; i++) {
		struct ingest_file *f = &files[i];
		int64_t	 run = 0, when_ms;

		when_ms = at >= 0 ? at : f->extra.timestamp_ms >= 0 ?
		    f->extra.timestamp_ms : now;
		if ((r = ingest_store(store, cls, f, target_id, when_ms, revision,
		    &run, err, sizeof err)) < 0)
			goto fail;
		if (r == 1) {
			printf("%s: already ingested as run %" PRId64
			    ", skipped\n", f->path, run);
			continue;
		}
		printf("%s: run %" PRId64 " at %s, %zu test%s", f->path, run,
		    flaky_format_time(when_ms, when, sizeof when), f->res.n,
		    f->res.n == 1 ? "" : "s");
		if (f->extra.nattempts > 0)
			printf(", %zu retry attempts", f->extra.nattempts);
		printf("\n");
	}
	if (flaky_store_commit(store, err, sizeof err) < 0)
		goto fail;
	ret = EXIT_OK;
	goto out;
fail:
	fprintf(stderr, "flakyctl ingest: nothing stored: %s\n", err);
	flaky_store_rollback(store);
out:
	flaky_store_close(store);
	flaky_classifier_free(cls);
	for (size_t i = 0; files != NULL && i < nfiles; i++) {
		free(files[i].data);
		flaky_results_free(&files[i].res);
		flaky_junit_extra_free(&files[i].extra);
		flaky_buf_free(&files[i].keep);
	}
	free(files);
	return ret;
}
