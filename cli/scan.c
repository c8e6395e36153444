/* flakyctl scan: the static risk scan of Python test code (lib/scan),
 * printed as a table, JSON or the tsv other tools compare against. */
#include "buildconf.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flakyctl.h"
#include "scan/scan.h"
#include "store/store.h"
#include "util/util.h"

struct scan_out {
	struct ctl	*ctl;
	int		 failed;	/* an unreadable path: exit 2 */
	int		 json_first;
	size_t		 files, skipped, findings, tests, unseeded;
};

/* A directory the walk could not read: say so, go on, fail at the end. */
static void
walk_error(void *arg, const char *path, int error)
{
	struct scan_out	*so = arg;

	fprintf(stderr, "flakyctl scan: %s: %s\n", path, strerror(error));
	so->failed = 1;
}

/* Field for tsv: tabs and newlines cannot occur in names, but be sure. */
static void
tsv_field(const char *s)
{
	for (; *s != '\0'; s++)
		putchar(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s);
}

/* The five tsv columns per finding, for comparison with other tools. */
static void
print_tsv(const char *path, const struct flaky_scan_result *r)
{
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct flaky_finding *f = &r->findings[i];

		tsv_field(path);
		printf("\t%d\t%s\t", f->line,
		    flaky_finding_category_name(f->category));
		tsv_field(f->classes);
		putchar('\t');
		tsv_field(f->function);
		putchar('\n');
	}
}

/* "Class.function", and the test when the function is a helper in it. */
static void
print_where(const struct flaky_finding *f)
{
	if (*f->classes && *f->function)
		printf("%s.%s", f->classes, f->function);
	else
		printf("%s", *f->classes ? f->classes : f->function);
	if (*f->test && strcmp(f->test, f->function) != 0)
		printf(" in %s", f->test);
}

/* Findings for people: location, category, seeding, test, source. */
static void
print_table(const char *path, const struct flaky_scan_result *r)
{
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct flaky_finding *f = &r->findings[i];
		char	 loc[64];

		snprintf(loc, sizeof loc, "%s:%d", path, f->line);
		if (strlen(path) + 12 > sizeof loc)
			printf("%s:%d\n%-40s", path, f->line, "");
		else
			printf("%-40s", loc);
		printf(" %-10s %-8s ", flaky_finding_category_name(f->category),
		    *f->test == '\0' ? "-" : f->seeded ? "seeded" : "UNSEEDED");
		print_where(f);
		if (*f->tolerance)
			printf(" (%s)", f->tolerance);
		printf("\n%44s%s\n", "", f->source);
	}
}

/* One file's object of the "files" array. */
static void
print_json_file(struct scan_out *so, const char *path,
    const struct flaky_scan_result *r)
{
	printf("%s\n    {\"path\": ", so->json_first ? "" : ",");
	so->json_first = 0;
	json_string(stdout, path);
	if (r->skipped) {
		printf(", \"skipped\": true, \"reason\": ");
		json_string(stdout, r->reason);
		printf("}");
		return;
	}
	printf(", \"skipped\": false, \"module_seeded\": %s,\n"
	    "     \"findings\": [", r->module_seeded ? "true" : "false");
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct flaky_finding *f = &r->findings[i];

		printf("%s\n      {\"line\": %d, \"category\": \"%s\", "
		    "\"class\": ", i ? "," : "", f->line,
		    flaky_finding_category_name(f->category));
		json_string(stdout, f->classes);
		printf(", \"function\": ");
		json_string(stdout, f->function);
		printf(", \"test\": ");
		if (*f->test)
			json_string(stdout, f->test);
		else
			printf("null");
		printf(", \"seeded\": %s, \"tolerance\": ",
		    f->seeded ? "true" : "false");
		json_string(stdout, f->tolerance);
		printf(", \"source\": ");
		json_string(stdout, f->source);
		printf("}");
	}
	printf("%s],\n     \"tests\": [", r->nfindings ? "\n     " : "");
	for (size_t i = 0; i < r->ntests; i++) {
		const struct flaky_scan_test *t = &r->tests[i];

		printf("%s\n      {\"line\": %d, \"class\": ", i ? "," : "",
		    t->line);
		json_string(stdout, t->classes);
		printf(", \"name\": ");
		json_string(stdout, t->name);
		printf(", \"seeded\": %s, \"findings\": %d}",
		    t->seeded ? "true" : "false", t->nfindings);
	}
	printf("%s]}", r->ntests ? "\n     " : "");
}

/* Scan one file and print it in the chosen format. */
static void
scan_one(struct scan_out *so, const char *path)
{
	struct flaky_scan_result *r = NULL;
	char		 err[512];

	so->files++;
	if (flaky_pyscan_file(path, &r, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl scan: %s\n", err);
		so->failed = 1;
		return;
	}
	if (r->skipped) {
		fprintf(stderr, "flakyctl scan: %s: skipped: %s\n", path,
		    r->reason);
		so->skipped++;
	}
	so->findings += r->nfindings;
	so->tests += r->ntests;
	for (size_t i = 0; i < r->nfindings; i++)
		if (*r->findings[i].test && !r->findings[i].seeded)
			so->unseeded++;
	switch (so->ctl->format) {
	case FORMAT_TSV:
		print_tsv(path, r);
		break;
	case FORMAT_JSON:
		print_json_file(so, path, r);
		break;
	default:
		print_table(path, r);
		break;
	}
	flaky_scan_result_free(r);
}

/* Skipped files while storing are reported by the scan's own output. */
static void
store_skip(void *arg, const char *path, const char *reason)
{
	(void)arg;
	(void)path;
	(void)reason;
}

/* --store --target NAME: replace the target's findings in the database
 * (paths relative to the target's directory, the current one for a new
 * target). */
static int
store_findings(struct ctl *ctl, const char *target, int argc, char **argv)
{
	struct flaky_scan_summary sum;
	struct flaky_store *st = NULL;
	char		 err[1024], cwd[PATH_MAX], *dir = NULL;
	int64_t		 id;
	int		 r = -1;

	if (getcwd(cwd, sizeof cwd) == NULL) {
		fprintf(stderr, "flakyctl scan: getcwd: %s\n", strerror(errno));
		return -1;
	}
	/* a writer: never the system's database unless given (CMD_WRITES) */
	ctl->writes = 1;
	if (flaky_store_open(ctl_db_path(ctl), 0, &st, err, sizeof err) < 0 ||
	    flaky_store_target(st, target, NULL, NULL, &id, err,
	    sizeof err) < 0 || flaky_store_target_dir(st, id, cwd, &dir, err,
	    sizeof err) < 0 || flaky_store_scan(st, id, dir, argv,
	    (size_t)argc, store_skip, NULL, &sum, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl scan: %s\n", err);
		goto out;
	}
	if (ctl->format == FORMAT_TABLE)
		fprintf(stderr, "stored %zu finding%s for target %s in %s\n",
		    sum.findings, sum.findings == 1 ? "" : "s", target,
		    flaky_store_name(st));
	r = 0;
out:
	free(dir);
	flaky_store_close(st);
	return r;
}

static int	cmd_scan(struct ctl *, int, char **);

static const struct cmd_option scan_options[] = {
	{ "store", 0, 's', NULL, "replace the target's stored findings with "
	    "these (with --target)" },
	{ "target", 0, 't', "NAME", "the target the findings belong to "
	    "(required with --store)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_scan_entry = {
	.name = "scan",
	.usage = "scan [--format table|json|tsv] [--store --target NAME] "
	    "PATH...",
	.summary = "Find approximate assertions in Python test code.",
	.example = "flakyctl scan tests/\nflakyctl scan --store --target "
	    "shop-pytest tests/",
	.options = scan_options,
	.exec = cmd_scan,
};

/* flakyctl scan: options, the walk of each PATH, the summary. */
static int
cmd_scan(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct scan_out	 so;
	const char	*target = NULL;
	int		 c, store = 0, so_store_failed = 0;

	cmd_getopt_init(&g, &cmd_scan_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		switch (c) {
		case 's':
			store = 1;
			break;
		case 't':
			target = optarg;
			break;
		}
	}
	if (c < 0)
		return g.exit;
	argc -= optind;
	argv += optind;
	if (ctl_check_format(ctl, "scan", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON | 1 << FORMAT_TSV) < 0)
		return EXIT_ERROR;
	if (store != (target != NULL)) {
		ctl_usage_error("scan", "--store and --target NAME go together");
		return EXIT_ERROR;
	}
	if (argc == 0) {
		ctl_usage_error("scan", "no PATH given");
		return EXIT_ERROR;
	}
	if (store && store_findings(ctl, target, argc, argv) < 0)
		so_store_failed = 1;

	memset(&so, 0, sizeof so);
	so.ctl = ctl;
	so.json_first = 1;
	if (ctl->format == FORMAT_JSON)
		printf("{\"files\": [");
	for (int i = 0; i < argc; i++) {
		char	**paths = NULL;
		size_t	  npaths = 0;
		char	  err[512];

		if (flaky_pyscan_paths(argv[i], &paths, &npaths, walk_error,
		    &so, err, sizeof err) < 0) {
			fprintf(stderr, "flakyctl scan: %s\n", err);
			so.failed = 1;
		}
		for (size_t k = 0; k < npaths; k++)
			scan_one(&so, paths[k]);
		flaky_pyscan_paths_free(paths, npaths);
	}
	if (ctl->format == FORMAT_JSON)
		printf("%s],\n \"summary\": {\"files\": %zu, \"skipped\": %zu, "
		    "\"findings\": %zu, \"tests\": %zu, "
		    "\"unseeded_findings\": %zu}}\n", so.json_first ? "" : "\n  ",
		    so.files, so.skipped, so.findings, so.tests, so.unseeded);
	else if (ctl->format == FORMAT_TABLE)
		printf("%zu file%s, %zu skipped, %zu finding%s, %zu in "
		    "unseeded tests\n", so.files, so.files == 1 ? "" : "s",
		    so.skipped, so.findings, so.findings == 1 ? "" : "s",
		    so.unseeded);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "flakyctl scan: stdout: %s\n", strerror(errno));
		return EXIT_ERROR;
	}
	return so.failed || so_store_failed ? EXIT_ERROR : EXIT_OK;
}
