/* flakyctl show TEST: the evidence log of one test, every failed run with
 * its time, revision, exit code, duration, position, fingerprint and
 * message. */
#include "buildconf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "perturb.h"
#include "stats/stats.h"
#include "table.h"

/* A message indented under its run, at most max lines. */
static void
print_message(const char *m, int max)
{
	int	 lines = 0;

	while (m != NULL && *m != '\0' && lines < max) {
		size_t	 n = strcspn(m, "\n");

		printf("      %.*s\n", (int)(n > 200 ? 200 : n), m);
		lines++;
		m += n;
		if (*m == '\n')
			m++;
	}
	if (m != NULL && *m != '\0')
		printf("      ...\n");
}

/* The evidence log as text. */
static void
print_show(const struct flaky_diagnosis *d, int full)
{
	struct flaky_buf b;
	double	 lo, hi;
	char	 t[32], dur[32], rd[32];

	flaky_buf_init(&b);
	flaky_wilson(d->failures, d->runs, FLAKY_Z95, &lo, &hi);
	printf("%s  (target %s)\n", d->test, d->target);
	if (d->runs == 0) {
		/* no rate to give: a test with no counted run is not stable */
		flaky_unrun_words(d, &b);
		printf("%s: no counted run in this window: %s\n",
		    flaky_verdict_name(d->verdict), flaky_buf_cstr(&b));
		flaky_buf_free(&b);
		return;
	}
	printf("%lld failure%s in %lld run%s (%.1f%%, 95%% %.1f%%-%.1f%%), "
	    "%s", (long long)d->failures, d->failures == 1 ? "" : "s",
	    (long long)d->runs, d->runs == 1 ? "" : "s",
	    d->runs ? 100.0 * (double)d->failures / (double)d->runs : 0.0,
	    100 * lo, 100 * hi, flaky_verdict_name(d->verdict));
	if (d->signature != NULL)
		printf(", signature %s", d->signature);
	printf("\n");
	flaky_revision_words(d, &b);
	if (b.len > 0)
		printf("revision: %s\n", flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	flaky_timing_words(d, &b);
	if (b.len > 0)
		printf("timing: %s\n", flaky_buf_cstr(&b));
	if (d->polluter != NULL || d->depends_on != NULL || d->race_timing) {
		flaky_buf_reset(&b);
		flaky_evidence_words(d, &b);
		printf("%s: %s\n", d->race_timing ? "race" : "order",
		    flaky_buf_cstr(&b));
	}
	flaky_buf_reset(&b);
	flaky_polluter_patch(d, &b);
	if (b.len > 2)	/* "; the polluter is ...", "; suspected ..." */
		printf("%s\n", flaky_buf_cstr(&b) + 2);
	flaky_buf_reset(&b);
	diag_stress_words(d, &b);
	if (b.len > 0)
		printf("stress: %s\n", flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	diag_box_words(d, &b);
	if (b.len > 0)
		printf("boxes: %s\n", flaky_buf_cstr(&b));
	flaky_buf_reset(&b);
	flaky_flip_words(d->flips, d->nflips, d->since_ms, d->until_ms,
	    FLAKY_FLIP_DETAILS, &b);
	if (b.len > 0)
		printf("%s\n", flaky_buf_cstr(&b));
	diag_seed_lines(d, "seeds: ", "headroom: ", "reproduce: ", 0);
	diag_hang_print(d, full);
	if (d->nfailed == 0)
		printf("no failure in this window\n");
	for (size_t i = 0; i < d->nfailed; i++) {
		const struct flaky_result_row *x = &d->failed[i];

		flaky_format_ms(x->duration_us < 0 ? NAN :
		    (double)x->duration_us / 1000.0, dur, sizeof dur);
		flaky_format_ms(x->run_duration_us < 0 ? NAN :
		    (double)x->run_duration_us / 1000.0, rd, sizeof rd);
		/* the box it ran on (issue 28: a fleet's server lists
		 * every box's runs); position counted from 1 */
		printf("\nrun %lld  %s", (long long)x->run_id,
		    flaky_format_time(x->started_ms, t, sizeof t));
		if (x->box != NULL)
			printf("  box %s", x->box);
		printf("  revision %s  exit %s%d  run %s  test %s  position "
		    "%lld", x->revision ? x->revision : "-",
		    x->exit_code < 0 ? "-" : "", x->exit_code < 0 ? 0 :
		    x->exit_code, rd, dur, (long long)x->position + 1);
		if (strcmp(x->status, "done") != 0)
			printf("  (%s)", x->status);
		if (x->seed != NULL)
			printf("  seed %s", x->seed);
		printf("\n    %s  %016llx\n", x->signature ? x->signature :
		    "UNKNOWN", (unsigned long long)x->fingerprint);
		if (x->seed != NULL && d->command != NULL &&
		    flaky_perturb_is_seed(x->perturbation)) {
			/* a seed sweep's run: the same seed, not an order */
			struct flaky_diagnosis one = *d;

			flaky_buf_reset(&b);
			snprintf(one.seed_ev.seed, sizeof one.seed_ev.seed,
			    "%s", x->seed);
			one.seed_ev.sensitive = 1;
			one.polluter = one.depends_on = NULL;
			flaky_repro(&one, NULL, &b);
			printf("    same seed: %s\n", flaky_buf_cstr(&b));
		} else if (x->seed != NULL && d->command != NULL) {
			flaky_buf_reset(&b);
			perturb_replay(x->runner, d->command, d->dir, x->seed,
			    &b);
			printf("    same order: %s\n", flaky_buf_cstr(&b));
		}
		print_message(x->message, full ? 1000 : 12);
	}
	flaky_buf_free(&b);
}

static int	cmd_show(struct ctl *, int, char **);

static const struct cmd_option show_options[] = {
	DIAG_OPTIONS,
	{ "full", 'f', 0, NULL, "whole failure messages, not their first "
	    "12 lines" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_show_entry = {
	.name = "show",
	.usage = "show TEST [--since D|all] [--until DATE] [--target NAME] "
	    "[--full]",
	.summary = "The evidence log of one test: every failed run.",
	.example = "flakyctl show test_login_retry --since all",
	.options = show_options,
	.exec = cmd_show,
};

/* flakyctl show TEST. */
static int
cmd_show(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct diag_opts o = { 0 };
	struct flaky_store *store = NULL;
	struct flaky_diagnosis *d = NULL;
	char	 err[1024];
	int64_t	 id;
	int	 c, full = 0, ret = EXIT_ERROR;

	cmd_getopt_init(&g, &cmd_show_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0)
		if (!diag_option(&o, c, optarg) && c == 'f')
			full = 1;
	if (c < 0)
		return g.exit;
	if (optind + 1 != argc) {
		ctl_usage_error("show", optind == argc ? "which test?" :
		    "one test at a time");
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "show", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON) < 0 || diag_window(&o, "show") < 0)
		return EXIT_ERROR;
	if (flaky_store_open(ctl_db_path(ctl), FLAKY_STORE_READONLY, &store,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		return EXIT_ERROR;
	}
	ctl_store_box(ctl, store, 0);
	if (diag_resolve(store, "show", o.target, argv[optind], &id) < 0)
		goto out;
	if (flaky_diagnose_test(store, id, &o.q, &d, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		goto out;
	}
	if (ctl->format == FORMAT_JSON) {
		diag_json(stdout, d, 1);
		printf("\n");
	} else
		print_show(d, full);
	ret = EXIT_OK;
out:
	flaky_diagnosis_free(d);
	flaky_store_close(store);
	return ret;
}
