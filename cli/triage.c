/* flakyctl triage [TEST]: for each unstable test (or the one named), its
 * signature, the evidence, the most likely cause and the first patch to
 * try, from the triage table. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "log.h"
#include "output.h"
#include "stats/stats.h"

#define TRIAGE_MAX_DEFAULT	50

/* One test's triage as text. */
static void
print_triage(const struct flaky_diagnosis *d)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	printf("%-15s %s  %lld/%lld runs (%.1f%%)  %s  (%s)\n",
	    d->signature ? d->signature : "-", d->test,
	    (long long)d->failures, (long long)d->runs,
	    d->runs ? 100.0 * (double)d->failures / (double)d->runs : 0.0,
	    flaky_verdict_name(d->verdict), d->target);
	diag_evidence(d, &b);
	printf("  evidence:    %s\n", flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	diag_revision_words(d, &b);
	if (b.len > 0)
		printf("  revision:    %s\n", flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	diag_timing_words(d, &b);
	if (b.len > 0)
		printf("  timing:      %s\n", flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	diag_stress_words(d, &b);
	if (b.len > 0)
		printf("  stress:      %s\n", flaky_buf_cstr(&b));
	if (d->nmodes > 1)
		printf("  modes:       %zu distinct failures (most common "
		    "%lld times)\n", d->nmodes, (long long)d->modes[0].count);
	printf("  likely:      %s\n", diag_test_cause(d));
	flaky_buf_reset(&b);
	diag_test_patch(d, &b);
	printf("  first patch: %s\n", flaky_buf_cstr(&b));
	flaky_buf_free(&b);
}

static int	cmd_triage(struct ctl *, int, char **);

static const struct cmd_option triage_options[] = {
	DIAG_OPTIONS,
	{ "limit", 'n', 0, "N", "at most N tests, the worst first" },
	CMD_OPTION_KIND,
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_triage_entry = {
	.name = "triage",
	.usage = "triage [TEST] [--since D|all] [--until DATE] [--target NAME] "
	    "[--limit N] [--kind K]",
	.summary = "Each unstable test's signature, likely cause and "
	    "first patch.",
	.options = triage_options,
	.exec = cmd_triage,
};

/* flakyctl triage [TEST]. */
static int
cmd_triage(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct diag_opts o = { 0 };
	struct flaky_store *store = NULL;
	struct flaky_test_row *rows = NULL;
	struct flaky_diagnosis **diags = NULL;
	int64_t	*ids = NULL, id;
	size_t	 nrows = 0, nids = 0;
	long long limit = TRIAGE_MAX_DEFAULT;
	char	 err[1024];
	int	 c, ret = EXIT_ERROR;

	cmd_getopt_init(&g, &cmd_triage_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		if (diag_option(&o, c, optarg))
			continue;
		if (c == 'n') {
			if (flaky_parse_int(optarg, 1, 100000, &limit) < 0) {
				ctl_usage_error("triage", "--limit: expected a "
				    "number from 1 to 100000, got '%s'", optarg);
				return EXIT_ERROR;
			}
		}
	}
	if (c < 0)
		return g.exit;
	if (optind + 1 < argc) {
		ctl_usage_error("triage", "one test at a time");
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "triage", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON) < 0 || diag_window(&o, "triage") < 0)
		return EXIT_ERROR;
	o.q.kinds = ctl->kinds;
	if (flaky_store_open(ctl_db_path(ctl), FLAKY_STORE_READONLY, &store,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		return EXIT_ERROR;
	}
	if (optind < argc) {
		if (diag_resolve(store, "triage", o.target, argv[optind],
		    &id) < 0)
			goto out;
		ids = xmalloc(sizeof *ids);
		ids[nids++] = id;
	} else {
		if (flaky_store_test_stats(store, &o.q, &rows, &nrows, err,
		    sizeof err) < 0) {
			fprintf(stderr, "flakyctl: %s\n", err);
			goto out;
		}
		sort_rows(rows, nrows);
		ids = xcalloc(nrows ? nrows : 1, sizeof *ids);
		for (size_t i = 0; i < nrows && nids < (size_t)limit; i++)
			if (rows[i].failures > 0)
				ids[nids++] = rows[i].test_id;
	}
	diags = xcalloc(nids ? nids : 1, sizeof *diags);
	/* all at once: one pass over each target's results */
	if (nids > 0 && flaky_diagnose_tests(store, ids, nids, &o.q, diags,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		goto out;
	}
	if (ctl->format == FORMAT_JSON)
		printf("{\"tests\": [");
	else if (nids == 0)
		printf("no unstable test in this window\n");
	for (size_t i = 0; i < nids; i++) {
		if (ctl->format == FORMAT_JSON) {
			printf("%s\n  ", i ? "," : "");
			diag_json(stdout, diags[i], 0);
		} else {
			if (i > 0)
				printf("\n");
			print_triage(diags[i]);
			{
				struct flaky_buf rb;

				flaky_buf_init(&rb);
				risks_lines(store, diags[i]->target,
				    diags[i]->test, "  static risk: ", &rb);
				fputs(flaky_buf_cstr(&rb), stdout);
				flaky_buf_free(&rb);
			}
		}
	}
	if (ctl->format == FORMAT_JSON)
		printf("\n]}\n");
	ret = EXIT_OK;
out:
	for (size_t i = 0; diags != NULL && i < nids; i++)
		flaky_diagnosis_free(diags[i]);
	free(diags);
	free(ids);
	flaky_test_rows_free(rows, nrows);
	flaky_store_close(store);
	return ret;
}
