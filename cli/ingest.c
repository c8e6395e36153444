/* flakyctl ingest: results produced elsewhere (a CI job's JUnit XML or raw
 * runner output) stored as runs, once per file content. */
#include "buildconf.h"

#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classify/classify.h"
#include "diag.h"
#include "flakyctl.h"
#include "ingest/ingest.h"
#include "log.h"
#include "store/store.h"
#include "util/util.h"

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
	.flags = CMD_WRITES,
	.exec = cmd_ingest,
};

/* Store one file as a run, once per content, and say so. A file that is
 * refused (not JUnit nor output we know, not well-formed, past a limit)
 * is the caller's "refused"; an error of the store is not. */
static int
ingest_one(const struct flaky_ingest *in, struct flaky_ingest_file *f,
    char *buf, char *err, size_t errlen)
{
	char	 when[32];
	int	 r;

	if ((r = flaky_ingest_store(in, f, buf, err, errlen)) < 0)
		return r;
	if (f->duplicate) {
		printf("%s: already ingested as run %" PRId64 ", skipped\n",
		    f->path, f->run_id);
		return 0;
	}
	printf("%s: run %" PRId64 " at %s, %zu test%s", f->path, f->run_id,
	    flaky_format_time(f->when_ms, when, sizeof when), f->tests,
	    f->tests == 1 ? "" : "s");
	if (f->attempts > 0)
		printf(", %zu retry attempts", f->attempts);
	printf("\n");
	return 0;
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

/* Store files as runs into the database db, once per content, all in
 * one transaction: a bad one stores nothing (ingest, and upload to a
 * file or a server). in: the batch without its store, classifier and
 * target id, which this fills. EXIT_OK or EXIT_ERROR, having said why as
 * `flakyctl WHO: ...`. */
int
ingest_files(struct ctl *ctl, const char *db, const char *who,
    struct flaky_ingest *in, struct flaky_ingest_file *files, size_t n)
{
	struct flaky_classifier *cls = NULL;
	struct flaky_ingest_file *f = NULL;
	char		 err[1024], *buf;
	int		 r = 0, created = 0, ret = EXIT_ERROR, store_failed = 1;

	err[0] = '\0';
	buf = xmalloc(FLAKY_INGEST_CHUNK);
	in->store = NULL;
	/* Every file is opened and hashed first: one that cannot be read
	 * stores nothing, before the database is locked. */
	for (size_t i = 0; i < n; i++)
		if (flaky_ingest_hash(in, &files[i], buf, err,
		    sizeof err) < 0) {
			fprintf(stderr, "flakyctl %s: refused, nothing "
			    "stored: %s\n", who, err);
			goto out;
		}
	/* A database this command makes and then stores nothing in is
	 * removed again: a refused file leaves nothing behind. */
	created = !flaky_store_is_server(db) && access(db, F_OK) == -1 &&
	    errno == ENOENT;
	if (flaky_store_open(db, FLAKY_STORE_BULK, &in->store, err,
	    sizeof err) < 0) {
		fprintf(stderr, "flakyctl %s: %s\n", who, err);
		goto out;
	}
	ctl_store_box(ctl, in->store, 1);
	/* the config's signatures and redaction patterns, as analyze */
	if (diag_load_signatures(ctl, in->store, &cls) < 0)
		goto out;
	in->cls = cls;
	if (flaky_store_begin(in->store, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl %s: %s\n", who, err);
		goto out;
	}
	if ((r = flaky_store_target(in->store, in->target, NULL, NULL,
	    &in->target_id, err, sizeof err)) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		f = &files[i];
		if ((r = ingest_one(in, f, buf, err, sizeof err)) < 0)
			goto fail;
	}
	f = NULL;
	if ((r = flaky_store_commit(in->store, err, sizeof err)) < 0)
		goto fail;
	ret = EXIT_OK;
	goto out;
fail:
	store_failed = f == NULL || f->store_failed;
	/* A path that fails without words (memory) still says why. */
	if (err[0] == '\0')
		snprintf(err, sizeof err, "%s", strerror(r < 0 ? -r : EIO));
	fprintf(stderr, "flakyctl %s: %snothing stored: %s\n", who,
	    store_failed ? "" : "refused, ", err);
	flaky_store_rollback(in->store);
out:
	flaky_store_close(in->store);
	in->store = NULL;
	if (ret != EXIT_OK && created)
		ingest_unmake(db);
	flaky_classifier_free(cls);
	for (size_t i = 0; i < n; i++)
		flaky_ingest_file_close(&files[i]);
	free(buf);
	return ret;
}

/* flakyctl ingest: each FILE parsed and stored as a run, once. */
static int
cmd_ingest(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct flaky_ingest in;
	struct flaky_ingest_file *files;
	size_t		 nfiles;
	int		 c, ret;

	memset(&in, 0, sizeof in);
	in.at_ms = -1;
	in.now_ms = flaky_now_ms();
	cmd_getopt_init(&g, &cmd_ingest_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		switch (c) {
		case 'T':
			in.target = optarg;
			break;
		case 'a':
			if (flaky_parse_time(optarg, &in.at_ms) < 0) {
				ctl_usage_error("ingest", "--at: expected an "
				    "ISO 8601 time (2026-11-01T12:00:00Z) or a "
				    "date, got '%s'", optarg);
				return EXIT_ERROR;
			}
			break;
		case 'r':
			in.revision = optarg;
			break;
		}
	}
	if (c < 0)
		return g.exit;
	if (in.target == NULL || *in.target == '\0') {
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
		files[i].fd = -1;
		files[i].junit = -1;
	}
	ret = ingest_files(ctl, ctl_db_path(ctl), "ingest", &in, files,
	    nfiles);
	free(files);
	return ret;
}
