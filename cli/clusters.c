/* flakyctl clusters: tests that fail in the same runs more often than
 * chance allows, with what each cluster shares as a hint of the common
 * cause (docs/triage.md); and the cluster views that report, triage and
 * ticket --cluster print. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

/* Percent of part in whole, 0 for an empty whole. */
static double
pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

/* The window's clusters, or -1 after a message. */
int
cluster_read(struct flaky_store *s, const char *cmd,
    const struct flaky_query *q, struct flaky_clusters *cs)
{
	char	 err[1024];

	if (flaky_clusters_from_store(s, q, NULL, cs, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl %s: %s\n", cmd, err);
		return -1;
	}
	return 0;
}

/* What a cluster shares, one hint a line, each after prefix. */
void
cluster_hints(const struct flaky_cluster *c, const char *prefix,
    struct flaky_buf *b)
{
	size_t	 n;

	flaky_buf_printf(b, "%soverlap:   Jaccard %.2f mean, %.2f least; "
	    "the weakest link p = %.2g\n", prefix, c->mean_jaccard,
	    c->min_jaccard, c->p_max);
	if (c->message.value != NULL) {
		/* its first line, at most 120 bytes */
		n = strcspn(c->message.value, "\n");
		flaky_buf_printf(b, "%smessage:   \"%.*s%s\" in %lld of %lld "
		    "failure%s in shared runs (%lld of %zu test%s)\n", prefix,
		    (int)(n > 120 ? 120 : n), c->message.value, n > 120 ?
		    "..." : "", (long long)c->message.count,
		    (long long)c->message.total,
		    flaky_plural(c->message.total),
		    (long long)c->message.tests, c->n,
		    flaky_plural((long long)c->n));
	}
	if (c->signature.value != NULL)
		flaky_buf_printf(b, "%ssignature: %s (%.0f%%)\n", prefix,
		    c->signature.value, pct(c->signature.count,
		    c->signature.total));
	if (c->file.value != NULL && c->file.count >= 2)
		flaky_buf_printf(b, "%sfile:      %s (%lld of %zu test%s)\n",
		    prefix, c->file.value, (long long)c->file.count, c->n,
		    flaky_plural((long long)c->n));
	if (c->hours_hint)
		flaky_buf_printf(b, "%shours:     %lld of %lld shared runs "
		    "started %02d:00-%02d:00 UTC, which hold %.0f%% of all "
		    "runs\n", prefix, (long long)c->peak_shared,
		    (long long)c->shared_runs, c->peak_hour,
		    (c->peak_hour + FLAKY_CLUSTER_HOURS) % 24,
		    pct(c->peak_runs, c->runs));
}

/* "cluster 2: 14 tests of web fail together in 28 of 300 runs". */
void
cluster_title(const struct flaky_cluster *c, struct flaky_buf *b)
{
	flaky_buf_printf(b, "cluster %d: %zu tests of %s fail together in "
	    "%lld of %lld run%s (one of them in %lld)", c->id, c->n, c->target,
	    (long long)c->shared_runs, (long long)c->runs,
	    flaky_plural(c->runs), (long long)c->any_runs);
}

/* One cluster as text: title, hints, members. */
static void
print_cluster(const struct flaky_cluster *c)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	cluster_title(c, &b);
	flaky_buf_adds(&b, "\n");
	cluster_hints(c, "  ", &b);
	for (size_t m = 0; m < c->n; m++)
		flaky_buf_printf(&b, "  %s %s  %lld/%lld\n", m ? "          " :
		    "tests:    ", c->members[m].name,
		    (long long)c->members[m].failures,
		    (long long)c->members[m].runs);
	flaky_buf_printf(&b, "  ticket:    flakyctl ticket --cluster %d\n",
	    c->id);
	fputs(flaky_buf_cstr(&b), stdout);
	flaky_buf_free(&b);
}

/* A hint as JSON: null, or its value and counts. */
static void
hint_json(FILE *f, const char *name, const struct flaky_cluster_hint *h)
{
	fprintf(f, ", \"%s\": ", name);
	if (h->value == NULL) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"value\": ");
	json_string(f, h->value);
	fprintf(f, ", \"count\": %lld, \"of\": %lld, \"tests\": %lld}",
	    (long long)h->count, (long long)h->total, (long long)h->tests);
}

/* One cluster as a JSON object. */
void
cluster_json(FILE *f, const struct flaky_cluster *c)
{
	fprintf(f, "{\"id\": %d, \"target\": ", c->id);
	json_string(f, c->target);
	fprintf(f, ", \"size\": %zu, \"runs\": %lld, \"shared_runs\": %lld, "
	    "\"any_runs\": %lld, \"mean_jaccard\": ", c->n,
	    (long long)c->runs, (long long)c->shared_runs,
	    (long long)c->any_runs);
	json_double(f, c->mean_jaccard);
	fprintf(f, ", \"min_jaccard\": ");
	json_double(f, c->min_jaccard);
	fprintf(f, ", \"p_max\": ");
	json_double(f, c->p_max);
	hint_json(f, "message", &c->message);
	if (c->message.value != NULL)
		fprintf(f, ", \"fingerprint\": \"%016llx\"",
		    (unsigned long long)c->fingerprint);
	else
		fprintf(f, ", \"fingerprint\": null");
	hint_json(f, "signature", &c->signature);
	hint_json(f, "file", &c->file);
	fprintf(f, ", \"peak_hour\": ");
	if (c->peak_hour >= 0)
		fprintf(f, "%d", c->peak_hour);
	else
		fputs("null", f);
	fprintf(f, ", \"peak_shared\": %lld, \"peak_runs\": %lld, "
	    "\"peak_p\": ", (long long)c->peak_shared,
	    (long long)c->peak_runs);
	json_double(f, c->peak_p);
	fprintf(f, ", \"hours_hint\": %s", c->hours_hint ? "true" : "false");
	fprintf(f, ", \"hours\": [");
	for (int h = 0; h < 24; h++)
		fprintf(f, "%s%lld", h ? ", " : "", (long long)c->hours[h]);
	fprintf(f, "], \"run_hours\": [");
	for (int h = 0; h < 24; h++)
		fprintf(f, "%s%lld", h ? ", " : "",
		    (long long)c->run_hours[h]);
	fprintf(f, "], \"tests\": [");
	for (size_t m = 0; m < c->n; m++) {
		fprintf(f, "%s{\"test\": ", m ? ", " : "");
		json_string(f, c->members[m].name);
		fprintf(f, ", \"runs\": %lld, \"failures\": %lld}",
		    (long long)c->members[m].runs,
		    (long long)c->members[m].failures);
	}
	fprintf(f, "]}");
}

/* The whole answer as JSON. */
static void
print_json(const struct flaky_clusters *cs)
{
	printf("{\"runs\": %lld, \"tests\": %zu, \"pairs\": %llu, "
	    "\"tested\": %llu, \"links\": %llu, \"min_failures\": %d, "
	    "\"min_jaccard\": ", (long long)cs->runs, cs->tests,
	    (unsigned long long)cs->pairs, (unsigned long long)cs->tested,
	    (unsigned long long)cs->links, FLAKY_CLUSTER_MIN_FAILS);
	json_double(stdout, FLAKY_CLUSTER_MIN_JACCARD);
	printf(", \"alpha\": ");
	json_double(stdout, FLAKY_CLUSTER_ALPHA);
	printf(",\n \"clusters\": [");
	for (size_t k = 0; k < cs->n; k++) {
		printf("%s\n  ", k ? "," : "");
		cluster_json(stdout, &cs->v[k]);
	}
	printf("\n ]}\n");
}

/* The whole answer as text. */
static void
print_table(const struct flaky_clusters *cs)
{
	printf("%zu cluster%s among %zu test%s with %d or more failures in "
	    "%lld run%s (%llu pair%s, %llu linked: Fisher, Holm at %.2g, "
	    "Jaccard >= %.2f)\n", cs->n, flaky_plural((long long)cs->n),
	    cs->tests, flaky_plural((long long)cs->tests),
	    FLAKY_CLUSTER_MIN_FAILS, (long long)cs->runs,
	    flaky_plural(cs->runs), (unsigned long long)cs->pairs,
	    flaky_plural((long long)cs->pairs), (unsigned long long)cs->links,
	    FLAKY_CLUSTER_ALPHA, FLAKY_CLUSTER_MIN_JACCARD);
	for (size_t k = 0; k < cs->n; k++) {
		printf("\n");
		print_cluster(&cs->v[k]);
	}
}

static int	cmd_clusters(struct ctl *, int, char **);

static const struct cmd_option clusters_options[] = {
	DIAG_OPTIONS,
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_clusters_entry = {
	.name = "clusters",
	.usage = "clusters [--since D|all] [--until DATE] [--target NAME]",
	.summary = "Tests that fail together more often than chance.",
	.example = "flakyctl clusters --since 14d\n"
	    "flakyctl clusters --target web --format json",
	.options = clusters_options,
	.exec = cmd_clusters,
};

/* flakyctl clusters. */
static int
cmd_clusters(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct diag_opts o = { 0 };
	struct flaky_store *store = NULL;
	struct flaky_clusters cs;
	char	 err[1024];
	int	 c, ret = EXIT_ERROR;

	memset(&cs, 0, sizeof cs);
	cmd_getopt_init(&g, &cmd_clusters_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0)
		(void)diag_option(&o, c, optarg);
	if (c < 0)
		return g.exit;
	if (optind < argc) {
		ctl_usage_error("clusters", "unexpected argument '%s'",
		    argv[optind]);
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "clusters", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON) < 0 || diag_window(&o, "clusters") < 0)
		return EXIT_ERROR;
	if (flaky_store_open(ctl_db_path(ctl), FLAKY_STORE_READONLY, &store,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		return EXIT_ERROR;
	}
	if (cluster_read(store, "clusters", &o.q, &cs) < 0)
		goto out;
	if (ctl->format == FORMAT_JSON)
		print_json(&cs);
	else
		print_table(&cs);
	ret = EXIT_OK;
out:
	flaky_clusters_free(&cs);
	flaky_store_close(store);
	return ret;
}
