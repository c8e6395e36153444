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
	printf("%-15s %s  %lld/%lld run%s (%.1f%%)  %s  (%s)\n",
	    d->signature ? d->signature : "-", d->test,
	    (long long)d->failures, (long long)d->runs, flaky_plural(d->runs),
	    d->runs ? 100.0 * (double)d->failures / (double)d->runs : 0.0,
	    flaky_verdict_name(d->verdict), d->target);
	flaky_evidence_words(d, &b);
	printf("  evidence:    %s\n", flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	flaky_revision_words(d, &b);
	if (b.len > 0)
		printf("  revision:    %s\n", flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	flaky_timing_words(d, &b);
	if (b.len > 0)
		printf("  timing:      %s\n", flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	diag_stress_words(d, &b);
	if (b.len > 0)
		printf("  stress:      %s\n", flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	diag_box_words(d, &b);
	if (b.len > 0)
		printf("  boxes:       %s\n", flaky_buf_cstr(&b));
	diag_seed_lines(d, "  seeds:       ", "  headroom:    ",
	    "  reproduce:   ", 1);
	flaky_buf_reset(&b);
	flaky_flip_words(d->flips, d->nflips, d->since_ms, d->until_ms,
	    FLAKY_FLIP_DETAILS, &b);
	if (b.len > 0)
		printf("  flips:       %s\n", flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	flaky_hang_words(&d->hangs, &b);
	if (b.len > 0)
		printf("  stacks:      %s\n", flaky_buf_cstr(&b));
	if (d->nmodes > 1)
		printf("  modes:       %zu distinct failures (most common "
		    "%lld time%s)\n", d->nmodes, (long long)d->modes[0].count,
		    flaky_plural(d->modes[0].count));
	printf("  likely:      %s\n", flaky_test_cause(d));
	flaky_buf_reset(&b);
	flaky_test_patch(d, &b);
	printf("  first patch: %s\n", flaky_buf_cstr(&b));
	flaky_buf_free(&b);
}

/* The clusters among the tests shown: in JSON, and after the table. */
static void
print_clusters(struct ctl *ctl, const struct flaky_clusters *cs,
    struct flaky_diagnosis **diags, size_t n)
{
	struct flaky_buf b;
	size_t	 shown = 0;

	flaky_buf_init(&b);
	for (size_t k = 0; k < cs->n; k++) {
		const struct flaky_cluster *c = &cs->v[k];
		size_t	 i;

		for (i = 0; i < n; i++)
			if (flaky_cluster_of(cs, diags[i]->test_id) == c)
				break;
		if (i == n)
			continue;
		if (ctl->format == FORMAT_JSON) {
			printf("%s\n  ", shown ? "," : "");
			cluster_json(stdout, c);
		} else {
			flaky_buf_reset(&b);
			cluster_title(c, &b);
			printf("\n%s: one ticket, %zu tests (flakyctl ticket "
			    "--cluster %d)\n", flaky_buf_cstr(&b), c->n, c->id);
			flaky_buf_reset(&b);
			cluster_hints(c, "  ", &b);
			fputs(flaky_buf_cstr(&b), stdout);
		}
		shown++;
	}
	flaky_buf_free(&b);
}

/* A target none of whose runs in the window was complete, and the
 * reason its newest one gave. */
struct unrun {
	char	*target, *why;
};

/* The window's runs, and the targets none of whose runs there was
 * complete (their tests have no counted run: "no unstable test" would
 * be a claim without evidence). -1 after a message. */
static int
read_incomplete(struct flaky_store *store, const struct flaky_query *q,
    struct flaky_run_counts *rc, struct unrun **all, size_t *nall)
{
	struct flaky_query tq = *q;
	struct flaky_target_view *v = NULL;
	struct flaky_run_counts t;
	char	 err[1024];
	size_t	 n = 0;

	*all = NULL;
	*nall = 0;
	if (flaky_store_run_counts(store, q, rc, err, sizeof err) < 0)
		goto fail;
	if (rc->incomplete == 0)
		return 0;
	if (flaky_store_target_views(store, &v, &n, err, sizeof err) < 0)
		goto fail;
	*all = xcalloc(n ? n : 1, sizeof **all);
	for (size_t i = 0; i < n; i++) {
		struct unrun *u = &(*all)[*nall];

		if (q->target != NULL && strcmp(q->target, v[i].name) != 0)
			continue;
		tq.target = v[i].name;
		if (flaky_store_run_counts(store, &tq, &t, err,
		    sizeof err) < 0 || (t.runs > 0 && t.incomplete == t.runs &&
		    flaky_incomplete_why(store, v[i].id, &tq, &u->why, err,
		    sizeof err) < 0)) {
			flaky_target_views_free(v, n);
			goto fail;
		}
		if (t.runs > 0 && t.incomplete == t.runs) {
			u->target = xstrdup(v[i].name);
			(*nall)++;
		}
	}
	flaky_target_views_free(v, n);
	return 0;
fail:
	fprintf(stderr, "flakyctl: %s\n", err);
	return -1;
}

/* What the window held when the table is empty or some targets gave no
 * evidence: never "no unstable test" over runs that counted nothing. */
static void
print_window(const struct flaky_run_counts *rc, const struct unrun *all,
    size_t nall, size_t shown)
{
	if (shown == 0 && rc->runs == 0)
		printf("no run in this window\n");
	else if (shown == 0 && rc->incomplete == rc->runs)
		printf("no test can be called unstable or stable: all %lld "
		    "run%s in this window %s incomplete (some outcomes "
		    "missing), and an incomplete run counts for no test\n",
		    (long long)rc->runs, rc->runs == 1 ? "" : "s",
		    rc->runs == 1 ? "was" : "were");
	else if (shown == 0 && rc->incomplete > 0)
		printf("no unstable test in this window's complete runs "
		    "(%lld of %lld were incomplete and count for no test)\n",
		    (long long)rc->incomplete, (long long)rc->runs);
	else if (shown == 0)
		printf("no unstable test in this window\n");
	for (size_t i = 0; i < nall; i++) {
		printf("%starget %s: all its runs in this window were "
		    "incomplete; its tests have no counted run\n",
		    shown > 0 && i == 0 ? "\n" : "", all[i].target);
		if (all[i].why != NULL)
			printf("  the newest incomplete run: %s\n", all[i].why);
	}
}

/* The same in JSON: "runs" and "all_incomplete" (docs/triage.md). */
static void
print_window_json(const struct flaky_run_counts *rc, const struct unrun *all,
    size_t nall)
{
	printf(", \"runs\": {\"total\": %lld, \"incomplete\": %lld}, "
	    "\"all_incomplete\": [", (long long)rc->runs,
	    (long long)rc->incomplete);
	for (size_t i = 0; i < nall; i++) {
		printf("%s{\"target\": ", i ? ", " : "");
		json_string(stdout, all[i].target);
		printf(", \"why\": ");
		json_string(stdout, all[i].why);
		printf("}");
	}
	printf("]");
}

static int	cmd_triage(struct ctl *, int, char **);

static const struct cmd_option triage_options[] = {
	DIAG_OPTIONS,
	{ "limit", 'n', 0, "N", "at most N tests, the worst first "
	    "(default 50)" },
	CMD_OPTION_KIND,
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_triage_entry = {
	.name = "triage",
	.usage = "triage [TEST] [--since D|all] [--until DATE] [--target NAME] "
	    "[--limit N] [--kind K]",
	.summary = "Each unstable test's signature, likely cause and "
	    "first patch.",
	.example = "flakyctl triage --since 14d\nflakyctl triage "
	    "test_checkout_total",
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
	struct flaky_clusters cs;
	struct flaky_run_counts rc;
	const struct flaky_cluster *cl;
	int64_t	*ids = NULL, id;
	struct unrun *all = NULL;
	size_t	 nrows = 0, nids = 0, nall = 0;
	long long limit = TRIAGE_MAX_DEFAULT;
	char	 err[1024];
	int	 c, ret = EXIT_ERROR;

	memset(&cs, 0, sizeof cs);
	memset(&rc, 0, sizeof rc);
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
	ctl_store_box(ctl, store, 0);
	if (optind < argc) {
		if (diag_resolve(store, "triage", o.target, argv[optind],
		    &id) < 0)
			goto out;
		ids = xmalloc(sizeof *ids);
		ids[nids++] = id;
	} else {
		if (ctl_check_target(store, "triage", o.target) < 0)
			goto out;
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
		if (read_incomplete(store, &o.q, &rc, &all, &nall) < 0)
			goto out;
	}
	diags = xcalloc(nids ? nids : 1, sizeof *diags);
	/* all at once: one pass over each target's results */
	if (nids > 0 && flaky_diagnose_tests(store, ids, nids, &o.q, diags,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		goto out;
	}
	if (nids > 0 && cluster_read(store, "triage", &o.q, &cs) < 0)
		goto out;
	if (ctl->format == FORMAT_JSON)
		printf("{\"tests\": [");
	for (size_t i = 0; i < nids; i++) {
		if (ctl->format == FORMAT_JSON) {
			printf("%s\n  ", i ? "," : "");
			diag_json(stdout, diags[i], 0);
		} else {
			if (i > 0)
				printf("\n");
			print_triage(diags[i]);
			if ((cl = flaky_cluster_of(&cs, diags[i]->test_id)) !=
			    NULL)
				printf("  cluster:     %d: fails with %zu other "
				    "test%s (flakyctl ticket --cluster %d)\n",
				    cl->id, cl->n - 1, flaky_plural(
				    (long long)cl->n - 1), cl->id);
			{
				struct flaky_buf rb;

				flaky_buf_init(&rb);
				flaky_polluter_words(store, diags[i], 0, &rb);
				flaky_risks_lines(store, diags[i]->target,
				    diags[i]->test, "  static risk: ", &rb);
				fputs(flaky_buf_cstr(&rb), stdout);
				flaky_buf_free(&rb);
			}
		}
	}
	if (ctl->format == FORMAT_JSON)
		printf("\n], \"clusters\": [");
	print_clusters(ctl, &cs, diags, nids);
	/* the window as a whole, when no test was named */
	if (ctl->format == FORMAT_JSON) {
		printf("\n]");
		if (optind >= argc)
			print_window_json(&rc, all, nall);
		printf("}\n");
	} else if (optind >= argc)
		print_window(&rc, all, nall, nids);
	ret = EXIT_OK;
out:
	for (size_t i = 0; i < nall; i++) {
		free(all[i].target);
		free(all[i].why);
	}
	free(all);
	for (size_t i = 0; diags != NULL && i < nids; i++)
		flaky_diagnosis_free(diags[i]);
	free(diags);
	free(ids);
	flaky_clusters_free(&cs);
	flaky_test_rows_free(rows, nrows);
	flaky_store_close(store);
	return ret;
}
