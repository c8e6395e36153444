/* flakyctl upload: a CI step sends its job's results (JUnit XML or runner
 * output) to flakyd's or flakyctl serve's upload endpoint, or writes them
 * itself to a database file or a fleet's server (docs/ci.md). Where the
 * job is comes from the CI system's variables, the options winning; the
 * token from $FLAKY_TOKEN or a file, never the command line. It says what
 * flaky knew of each test that failed: "test_x failed: known flaky, 24%
 * [14%-38%] over 50 runs in 30 days, quarantined". Exit 0 when stored (or
 * stored before), 2 with the server's reason otherwise. */
#include "buildconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <event2/http.h>

#include "classify/classify.h"
#include "diag.h"
#include "flakyctl.h"
#include "ingest/ingest.h"
#include "json/json.h"
#include "log.h"
#include "run/run.h"
#include "stats/stats.h"
#include "store/store.h"
#include "upload.h"
#include "util/util.h"

#define WINDOW_DAYS	30
#define TOKEN_FILE_MAX	4096

static int	cmd_upload(struct ctl *, int, char **);

static const struct cmd_option upload_options[] = {
	{ "server", 'S', 0, "URL", "http(s)://HOST[:PORT] of an upload "
	    "endpoint, a postgresql:// URI or a database file (default "
	    "$FLAKY_SERVER)" },
	{ "target", 'T', 0, "NAME", "the target the runs are stored under "
	    "(required)" },
	{ "revision", 'r', 0, "REV", "the revision tested (default the CI's "
	    "commit, else git HEAD)" },
	{ "branch", 'b', 0, "NAME", "the branch (default the CI's)" },
	{ "pr", 0, 'P', "ID", "the pull or merge request (default the CI's)" },
	{ "job", 'j', 0, "NAME", "the CI job (default the CI's)" },
	{ "job-url", 0, 'U', "URL", "the job's page (default the CI's)" },
	{ "attempt", 0, 'A', "N", "the job's attempt, 1 the first (default "
	    "the CI's)" },
	{ "ci", 0, 'C', "NAME", "the CI system (default the one detected)" },
	{ "at", 'a', 0, "TIME", "when the tests ran (default the files' "
	    "timestamps, else now)" },
	{ "token-file", 0, 'k', "FILE", "the token (default $FLAKY_TOKEN)" },
	{ "ca-file", 0, 'c', "FILE", "https: the CA that signed the "
	    "server's certificate (default the system's)" },
	{ "idempotency-key", 0, 'I', "KEY", "stored once per key (default "
	    "the files' content, job and attempt)" },
	{ "retries", 0, 'R', "N", "retries after the first attempt (default "
	    "5)" },
	{ "timeout", 0, 't', "D", "each attempt's bound (default 10m)" },
	CMD_OPTION_BOX,
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_upload_entry = {
	.name = "upload",
	.usage = "upload --server URL|URI|FILE --target NAME [--revision REV] "
	    "[--branch NAME] [--pr ID] [--job NAME] [--job-url URL] "
	    "[--attempt N] [--ci NAME] [--at TIME] [--box NAME] "
	    "[--token-file FILE] [--ca-file FILE] [--idempotency-key KEY] "
	    "[--retries N] [--timeout D] FILE...",
	.summary = "Send a CI job's results to flakyd, serve or a database.",
	.example = "flakyctl upload --server https://ci.example:8470 "
	    "--target shop-ci report.xml",
	.options = upload_options,
	.flags = CMD_WRITES,
	.exec = cmd_upload,
};

/* Everything the command was told. */
struct upload_args {
	struct flaky_ci_meta	 m;
	struct flaky_ci_env	 env;
	const char		*server, *target, *revision, *at_arg, *box;
	const char		*token_file, *ca_file, *key;
	int64_t			 at_ms, timeout_ms;
	long long		 retries;
	char			*rev_git;
};

/* What flaky knew of one failed test, in words. */
static void
say_known(const struct flaky_known *k)
{
	int	 t = flaky_tier(k->failures, k->runs);
	double	 lo, hi;

	printf("%s failed: ", k->test);
	flaky_wilson(k->failures, k->runs, FLAKY_Z95, &lo, &hi);
	if (k->runs <= 1)
		printf("its first run here, no history yet");
	else if (t == FLAKY_TIER_BROKEN)
		printf("broken: failed all %" PRId64 " runs in %d days",
		    k->runs, WINDOW_DAYS);
	else if (k->failures == 1)
		printf("new: its first failure in %d days (%" PRId64 " runs)",
		    WINDOW_DAYS, k->runs);
	else
		printf("known flaky, %.0f%% [%.0f%%-%.0f%%] over %" PRId64
		    " runs in %d days", 100.0 * (double)k->failures /
		    (double)k->runs, 100 * lo, 100 * hi, k->runs, WINDOW_DAYS);
	if (k->flips > 0)
		printf(", flipped on %" PRId64 " revision%s", k->flips,
		    k->flips == 1 ? "" : "s");
	if (k->quarantined)
		printf(", quarantined%s%s%s", k->ticket ? " (" : "",
		    k->ticket ? k->ticket : "", k->ticket ? ")" : "");
	printf("\n");
}

/* The table form of an answer. */
static void
say_stored(int64_t upload, int stored, const char *target,
    const int64_t *runs, size_t n, const struct flaky_known *k, size_t nk)
{
	printf("%s upload %" PRId64 " of %s: %zu run%s", stored ? "stored" :
	    "already stored, as", upload, target, n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++)
		printf("%s%" PRId64, i ? ", " : " (", runs[i]);
	printf("%s\n", n ? ")" : "");
	for (size_t i = 0; i < nk; i++)
		say_known(&k[i]);
}

/* A server's JSON answer, printed as a table (or as it came). */
static int
print_answer(struct ctl *ctl, const char *s, size_t n)
{
	struct flaky_json *j;
	const struct flaky_json *runs, *failed;
	struct flaky_known *k = NULL;
	int64_t		*rv = NULL;
	size_t		 nr = 0, nk = 0;
	char		 err[256];

	if (ctl->format == FORMAT_JSON) {
		fwrite(s, 1, n, stdout);
		putchar('\n');
		return 0;
	}
	if (flaky_json_parse(s, n, NULL, &j, err, sizeof err) < 0 ||
	    (runs = flaky_json_get(j, "runs")) == NULL ||
	    runs->type != FLAKY_JSON_ARRAY ||
	    (failed = flaky_json_get(j, "failed")) == NULL ||
	    failed->type != FLAKY_JSON_ARRAY) {
		log_warnx("the server's answer is not an upload's: %.200s",
		    s);
		return -1;
	}
	rv = xcalloc(runs->len + 1, sizeof *rv);
	for (nr = 0; nr < runs->len; nr++)
		rv[nr] = (int64_t)runs->items[nr].number;
	k = xcalloc(failed->len + 1, sizeof *k);
	for (nk = 0; nk < failed->len; nk++) {
		const struct flaky_json *f = &failed->items[nk];

		k[nk].test = (char *)flaky_json_get_str(f, "test");
		k[nk].runs = (int64_t)flaky_json_get_num(f, "runs");
		k[nk].failures = (int64_t)flaky_json_get_num(f, "failures");
		k[nk].flips = (int64_t)flaky_json_get_num(f, "flips");
		k[nk].quarantined = flaky_json_get_num(f, "quarantined") == 1;
		k[nk].ticket = (char *)flaky_json_get_str(f, "ticket");
		if (k[nk].test == NULL)
			k[nk].test = "?";
	}
	say_stored((int64_t)flaky_json_get_num(j, "upload"),
	    flaky_json_get_num(j, "stored") == 1,
	    flaky_json_get_str(j, "target") ? flaky_json_get_str(j, "target") :
	    "?", rv, nr, k, nk);
	free(rv);
	free(k);	/* its strings are the parse's */
	flaky_json_free(j);
	return 0;
}

char *
upload_token(const char *file, const char *var)
{
	char	*s, *nl, err[512];
	size_t	 n;

	if (file == NULL) {
		s = getenv(var != NULL ? var : "FLAKY_TOKEN");
		return s != NULL && *s != '\0' ? xstrdup(s) : NULL;
	}
	if (flaky_read_file(file, TOKEN_FILE_MAX, &s, &n, err,
	    sizeof err) < 0)
		fatalx("--token-file: %s", err);
	if ((nl = strpbrk(s, "\r\n")) != NULL)
		*nl = '\0';
	return s;
}

char *
upload_query(const char *target, const char *revision,
    const struct flaky_ci_meta *m, const char *box, const char *at)
{
	struct flaky_buf b;
	char		 num[32];
	const char	*kv[][2] = {
		{ "target", target }, { "revision", revision },
		{ "branch", m->branch }, { "pr", m->pr },
		{ "job", m->job }, { "job_url", m->job_url },
		{ "ci", m->ci }, { "box", box }, { "at", at },
		{ "attempt", NULL },
	};

	if (m->attempt > 0) {
		snprintf(num, sizeof num, "%d", m->attempt);
		kv[FLAKY_ARRAY_SIZE(kv) - 1][1] = num;
	}
	flaky_buf_init(&b);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(kv); i++) {
		char	*e;

		if (kv[i][1] == NULL)
			continue;
		if ((e = evhttp_encode_uri(kv[i][1])) == NULL)
			fatalx("out of memory");
		flaky_buf_printf(&b, "%s%s=%s", b.len ? "&" : "", kv[i][0], e);
		free(e);
	}
	if (b.oom)
		fatalx("out of memory");
	return flaky_buf_steal(&b);
}

/* Upload to a server over HTTP. */
static int
upload_http(struct ctl *ctl, struct upload_args *a, char **files, size_t n)
{
	struct upload_req u;
	struct flaky_buf body;
	struct event_base *base = NULL;
	char		 err[512], *query, *token;
	int		 status, ret = EXIT_ERROR;

	memset(&u, 0, sizeof u);
	token = upload_token(a->token_file, NULL);
	query = upload_query(a->target, a->revision, &a->m, a->box,
	    a->at_arg);
	u.server = a->server;
	u.query = query;
	u.token = token;
	u.ca_file = a->ca_file;
	u.idem_key = a->key;
	u.files = (const char *const *)files;
	u.nfiles = n;
	u.retries = (int)a->retries;
	u.timeout_ms = a->timeout_ms;
	u.backoff_ms = 1000;
	flaky_buf_init(&body);
	base = ctl_event_base();
	if (upload_post(base, &u, &status, &body, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl upload: nothing stored: %s\n", err);
		goto out;
	}
	if (status == 200 || status == 201) {
		if (print_answer(ctl, flaky_buf_cstr(&body), body.len) == 0)
			ret = EXIT_OK;
		goto out;
	}
	fprintf(stderr, "flakyctl upload: refused by the server (HTTP %d): "
	    "%.*s\n", status, (int)(body.len < 1000 ? body.len : 1000),
	    body.len ? flaky_buf_cstr(&body) : "no reason given");
out:
	if (base != NULL)
		event_base_free(base);
	if (token != NULL)
		explicit_bzero(token, strlen(token));
	free(token);
	free(query);
	flaky_buf_free(&body);
	return ret;
}

/* Write to a database file or a server's PostgreSQL ourselves: the same
 * rows as an upload makes. */
static int
upload_direct(struct ctl *ctl, struct upload_args *a, char **files, size_t n)
{
	struct flaky_upload u;
	struct flaky_ingest_file *f;
	struct flaky_classifier *cls = NULL;
	struct flaky_known *k = NULL;
	struct flaky_buf b;
	size_t		 nk = 0;
	int64_t		 now = flaky_now_ms();
	char		 err[1024], *buf, salt[512];
	int		 ret = EXIT_ERROR;

	memset(&u, 0, sizeof u);
	flaky_buf_init(&b);
	f = xcalloc(n, sizeof *f);
	for (size_t i = 0; i < n; i++) {
		f[i].path = files[i];
		f[i].fd = -1;
	}
	buf = xmalloc(FLAKY_INGEST_CHUNK);
	snprintf(salt, sizeof salt, "%s\n%d\n%s", a->m.job ? a->m.job : "",
	    a->m.attempt, a->m.job_url ? a->m.job_url : "");
	u.in.target = a->target;
	u.in.at_ms = a->at_ms;
	u.in.now_ms = now;
	u.in.revision = a->revision;
	u.in.box = a->box;
	u.in.ci = &a->m;
	u.in.hash_salt = salt;
	u.key = a->key;
	if (flaky_store_open(a->server, FLAKY_STORE_BULK, &u.in.store, err,
	    sizeof err) < 0) {
		fprintf(stderr, "flakyctl upload: %s\n", err);
		goto out;
	}
	ctl_store_box(ctl, u.in.store, 1);
	if (diag_load_signatures(ctl, u.in.store, &cls) < 0)
		goto out;
	u.in.cls = cls;
	if (flaky_upload_store(&u, f, n, buf, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl upload: %snothing stored: %s\n",
		    u.store_failed ? "" : "refused, ", err);
		goto out;
	}
	if (flaky_store_known(u.in.store, u.runs, u.nruns, now -
	    WINDOW_DAYS * 86400000LL, now, &k, &nk, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl upload: stored, but: %s\n", err);
		goto out;
	}
	if (ctl->format == FORMAT_JSON) {
		if (flaky_upload_reply(&b, &u, k, nk, WINDOW_DAYS) < 0)
			fatalx("out of memory");
		printf("%s\n", flaky_buf_cstr(&b));
	} else
		say_stored(u.upload_id, !u.already, a->target, u.runs,
		    u.nruns, k, nk);
	ret = EXIT_OK;
out:
	flaky_known_free(k, nk);
	flaky_upload_clear(&u);
	flaky_store_close(u.in.store);
	flaky_classifier_free(cls);
	for (size_t i = 0; i < n; i++)
		flaky_ingest_file_close(&f[i]);
	flaky_buf_free(&b);
	free(f);
	free(buf);
	return ret;
}

/* The CI's variables under the options given. */
static int
fill_from_ci(struct upload_args *a)
{
	extern char	**environ;

	if (!flaky_ci_from_env(environ, &a->env))
		return 0;
	if (a->m.ci == NULL)
		a->m.ci = a->env.ci;
	if (a->revision == NULL)
		a->revision = a->env.revision;
	if (a->m.branch == NULL)
		a->m.branch = a->env.branch;
	if (a->m.pr == NULL)
		a->m.pr = a->env.pr;
	if (a->m.job == NULL)
		a->m.job = a->env.job;
	if (a->m.job_url == NULL)
		a->m.job_url = a->env.job_url;
	if (a->m.attempt == 0)
		a->m.attempt = a->env.attempt;
	return 1;
}

static int
cmd_upload(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct upload_args a;
	char		 err[512];
	long long	 v;
	int		 c, ret;

	memset(&a, 0, sizeof a);
	a.at_ms = -1;
	a.retries = 5;
	a.timeout_ms = 600000;
	a.server = getenv("FLAKY_SERVER");
	cmd_getopt_init(&g, &cmd_upload_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		switch (c) {
		case 'S': a.server = optarg; break;
		case 'T': a.target = optarg; break;
		case 'r': a.revision = optarg; break;
		case 'b': a.m.branch = optarg; break;
		case 'P': a.m.pr = optarg; break;
		case 'j': a.m.job = optarg; break;
		case 'U': a.m.job_url = optarg; break;
		case 'C': a.m.ci = optarg; break;
		case 'k': a.token_file = optarg; break;
		case 'c': a.ca_file = optarg; break;
		case 'I': a.key = optarg; break;
		case 'A':
			if (flaky_parse_int(optarg, 1, 10000, &v) < 0) {
				ctl_usage_error("upload", "--attempt: expected "
				    "1 to 10000, got '%s'", optarg);
				return EXIT_ERROR;
			}
			a.m.attempt = (int)v;
			break;
		case 'a':
			if (flaky_parse_time(optarg, &a.at_ms) < 0) {
				ctl_usage_error("upload", "--at: expected an "
				    "ISO 8601 time (2026-11-01T12:00:00Z) or a "
				    "date, got '%s'", optarg);
				return EXIT_ERROR;
			}
			a.at_arg = optarg;
			break;
		case 'R':
			if (flaky_parse_int(optarg, 0, 100, &a.retries) < 0) {
				ctl_usage_error("upload", "--retries: expected "
				    "0 to 100, got '%s'", optarg);
				return EXIT_ERROR;
			}
			break;
		case 't':
			if (flaky_parse_duration(optarg, &a.timeout_ms) < 0 ||
			    a.timeout_ms <= 0) {
				ctl_usage_error("upload", "--timeout: expected "
				    "a duration (90s, 10m), got '%s'", optarg);
				return EXIT_ERROR;
			}
			break;
		}
	}
	if (c < 0)
		return g.exit;
	if (a.server == NULL || *a.server == '\0') {
		ctl_usage_error("upload", "--server URL is required (or "
		    "$FLAKY_SERVER)");
		return EXIT_ERROR;
	}
	if (a.target == NULL || *a.target == '\0') {
		ctl_usage_error("upload", "--target NAME is required");
		return EXIT_ERROR;
	}
	if (optind >= argc) {
		ctl_usage_error("upload", "expected at least one FILE");
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "upload", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON) < 0)
		return EXIT_ERROR;
	fill_from_ci(&a);
	if (a.revision == NULL && flaky_revision_git(".", &a.rev_git) == 0)
		a.revision = a.rev_git;
	/* --box, else the CI's runner; NULL: the receiving store's */
	a.box = ctl->box != NULL ? ctl->box : a.env.box;
	if (flaky_ci_meta_check(&a.m, err, sizeof err) < 0) {
		ctl_usage_error("upload", "%s", err);
		free(a.rev_git);
		return EXIT_ERROR;
	}
	if (strncmp(a.server, "http://", 7) == 0 ||
	    strncmp(a.server, "https://", 8) == 0)
		ret = upload_http(ctl, &a, argv + optind,
		    (size_t)(argc - optind));
	else
		ret = upload_direct(ctl, &a, argv + optind,
		    (size_t)(argc - optind));
	free(a.rev_git);
	return ret;
}
