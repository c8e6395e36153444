/* flakyctl ticket TEST: a ready-to-paste Markdown issue for one test:
 * title, failure rate with its interval, signature and evidence, the
 * distinct failure modes, timing, revisions, the suspected polluter and a
 * command that reproduces it. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "stats/stats.h"

/* Lines of an example message kept in a ticket. */
#define EXAMPLE_LINES	25

/* A fenced block that no line of s can close. */
static void
md_code(struct flaky_buf *b, const char *lang, const char *s, int max)
{
	const char *fence = strstr(s, "```") ? "~~~~" : "```";
	int	 lines = 0;

	flaky_buf_printf(b, "%s%s\n", fence, lang);
	while (*s != '\0' && lines < max) {
		size_t	 n = strcspn(s, "\n");

		flaky_buf_add(b, s, n);
		flaky_buf_addc(b, '\n');
		lines++;
		s += n;
		if (*s == '\n')
			s++;
	}
	if (*s != '\0')
		flaky_buf_adds(b, "...\n");
	flaky_buf_printf(b, "%s\n", fence);
}

/* Inline code with backticks that the text cannot end. */
static void
md_inline(struct flaky_buf *b, const char *s)
{
	int	 dbl = strchr(s, '`') != NULL;

	flaky_buf_adds(b, dbl ? "`` " : "`");
	for (; *s; s++)
		flaky_buf_addc(b, *s == '\n' ? ' ' : *s);
	flaky_buf_adds(b, dbl ? " ``" : "`");
}

/* The timing table, with a row for passes and one for failures where
 * durations are known: none at all (unittest prints none) leaves the
 * section out. */
static void
ticket_timing(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	const struct flaky_timing *t = &d->timing;
	char	 a[32], c[32];

	if (t->n_pass == 0 && t->n_fail == 0)
		return;
	flaky_buf_adds(b, "### Timing\n\n| | runs | median | p90 |\n"
	    "|---|---:|---:|---:|\n");
	if (t->n_pass > 0) {
		fmt_ms(t->median_pass, a, sizeof a);
		fmt_ms(t->p90_pass, c, sizeof c);
		flaky_buf_printf(b, "| passing | %lld | %s | %s |\n",
		    (long long)t->n_pass, a, c);
	}
	if (t->n_fail > 0) {
		fmt_ms(t->median_fail, a, sizeof a);
		fmt_ms(t->p90_fail, c, sizeof c);
		flaky_buf_printf(b, "| failing | %lld | %s | %s |\n",
		    (long long)t->n_fail, a, c);
	}
	flaky_buf_adds(b, "\n");
}

/* The Markdown body of a ticket, after its title. */
static void
ticket_body(const struct flaky_diagnosis *d, const char *isolate,
    struct flaky_buf *b)
{
	struct flaky_buf w;
	double	 lo, hi;
	char	 t1[32], t2[32];
	int	 broken = d->verdict == FLAKY_VERDICT_BROKEN;

	flaky_buf_init(&w);
	flaky_wilson(d->failures, d->runs, FLAKY_Z95, &lo, &hi);
	flaky_buf_adds(b, "**Test:** ");
	md_inline(b, d->test);
	flaky_buf_adds(b, " (target ");
	md_inline(b, d->target);
	flaky_buf_printf(b, ")\n\n**Failure rate:** %lld of %lld runs "
	    "(%.1f%%; 95%% interval %.1f%%-%.1f%%) between %s and %s\n\n",
	    (long long)d->failures, (long long)d->runs,
	    d->runs ? 100.0 * (double)d->failures / (double)d->runs : 0.0,
	    100 * lo, 100 * hi, flaky_format_time(d->first_ms, t1, sizeof t1),
	    flaky_format_time(d->last_ms, t2, sizeof t2));
	diag_evidence(d, &w);
	flaky_buf_printf(b, "**Signature:** %s (%s)\n\n**Verdict:** %s",
	    d->signature ? d->signature : "none", flaky_buf_cstr(&w),
	    flaky_verdict_name(d->verdict));
	flaky_buf_reset(&w);
	diag_revision_words(d, &w);
	if (w.len > 0)
		flaky_buf_printf(b, ": %s", flaky_buf_cstr(&w));
	flaky_buf_adds(b, "\n\n");

	if (d->nmodes > 0)
		flaky_buf_printf(b, "### Failure modes (%zu)\n\n", d->nmodes);
	for (size_t i = 0; i < d->nmodes; i++) {
		const struct flaky_failure_mode *m = &d->modes[i];

		flaky_buf_printf(b, "%zu. %lld time%s, %s, fingerprint "
		    "`%016llx`: ", i + 1, (long long)m->count,
		    m->count == 1 ? "" : "s", m->signature ? m->signature :
		    "UNKNOWN", (unsigned long long)m->fingerprint);
		md_inline(b, m->normalized ? m->normalized : "(no message)");
		flaky_buf_adds(b, "\n\n");
		if (m->example != NULL)
			md_code(b, "", m->example, EXAMPLE_LINES);
		flaky_buf_adds(b, "\n");
	}

	ticket_timing(d, b);
	flaky_buf_reset(&w);
	diag_timing_words(d, &w);
	if (w.len > 0)
		flaky_buf_printf(b, "%s.\n\n", flaky_buf_cstr(&w));

	if (d->nrevs > 0)
		flaky_buf_adds(b, "### Revisions\n\n| revision | runs | "
		    "failures | 95% interval | state | |\n"
		    "|---|---:|---:|---|---|---|\n");
	for (size_t i = 0; i < d->nrevs; i++) {
		const struct flaky_rev_stat *r = &d->revs[i];
		const char *tr = flaky_transition_name(r->transition);

		flaky_buf_adds(b, "| ");
		md_inline(b, r->revision ? r->revision : "(none)");
		flaky_buf_printf(b, " | %lld | %lld | %.0f%%-%.0f%% | %s | "
		    "%s |\n", (long long)r->runs, (long long)r->failures,
		    100 * r->ci_low, 100 * r->ci_high,
		    flaky_rev_state_name(r->state), tr ? tr : "");
	}
	if (d->nrevs > 0)
		flaky_buf_adds(b, "\n");

	if (d->polluter != NULL) {
		flaky_buf_adds(b, "### Suspected polluter\n\n");
		md_inline(b, d->polluter);
		flaky_buf_printf(b, ": this test failed in %lld of %lld runs "
		    "where it ran before, and %lld of %lld where it did not "
		    "(p = %.2g over %zu candidates).\n\n",
		    (long long)d->order.k_before, (long long)d->order.n_before,
		    (long long)d->order.k_without,
		    (long long)d->order.n_without, d->order.p,
		    d->order.candidates);
	}

	if (d->depends_on != NULL) {
		flaky_buf_adds(b, "### Relies on a set-up test\n\n");
		md_inline(b, d->depends_on);
		flaky_buf_printf(b, ": this test failed in %lld of %lld runs "
		    "where it did not run before, and %lld of %lld where it "
		    "did (p = %.2g over %zu candidates, each both ways).\n\n",
		    (long long)d->order.k_without,
		    (long long)d->order.n_without,
		    (long long)d->order.k_before, (long long)d->order.n_before,
		    d->order.p, d->order.candidates);
	}
	if (d->race_timing) {
		flaky_buf_reset(&w);
		diag_race_words(&d->timing, &w);
		flaky_buf_printf(b, "### Timing points at a race\n\nThe "
		    "failure messages match no known pattern; %s. The "
		    "failures do not cluster at one long duration, so this "
		    "is not a timeout.\n\n", flaky_buf_cstr(&w));
	}

	flaky_buf_adds(b, "### Reproduce\n\n");
	flaky_buf_reset(&w);
	diag_repro(d, NULL, &w);
	md_code(b, "sh", flaky_buf_cstr(&w), 5);
	if (d->seed != NULL)
		flaky_buf_printf(b, "\nThe newest failing run printed the "
		    "random-order seed %s.\n", d->seed);
	if (isolate != NULL) {
		flaky_buf_reset(&w);
		diag_repro(d, isolate, &w);
		flaky_buf_adds(b, "\nAlone:\n\n");
		md_code(b, "sh", flaky_buf_cstr(&w), 5);
	}
	flaky_buf_reset(&w);
	if (broken || d->depends_on != NULL)
		diag_test_patch(d, &w);
	else
		flaky_buf_adds(&w, diag_patch(d->signature));
	flaky_buf_printf(b, "\n### Likely cause and first patch to try\n\n"
	    "- cause: %s\n- first patch: %s\n", broken ? "the test or the "
	    "code under test is broken (it fails every run), not flaky" :
	    diag_test_cause(d), flaky_buf_cstr(&w));
	flaky_buf_free(&w);
}

static int	cmd_ticket(struct ctl *, int, char **);

static const struct cmd_option ticket_options[] = {
	DIAG_OPTIONS,
	{ "cluster", 0, 'C', "N", "one ticket for cluster N of flakyctl "
	    "clusters in the same window (default: a test)" },
	{ NULL, 0, 0, NULL, NULL }
};

const struct cmd_entry cmd_ticket_entry = {
	.name = "ticket",
	.usage = "ticket TEST|--cluster N [--since D|all] [--until DATE] "
	    "[--target NAME]",
	.summary = "A ready-to-paste Markdown issue for one test or cluster.",
	.example = "flakyctl ticket test_login_retry > issue.md\n"
	    "flakyctl ticket --cluster 1 --since 14d > issue.md",
	.options = ticket_options,
	.exec = cmd_ticket,
};

/* flakyctl ticket TEST. */
static int
cmd_ticket(struct ctl *ctl, int argc, char **argv)
{
	struct cmd_getopt g;
	struct diag_opts o = { 0 };
	struct flaky_store *store = NULL;
	struct flaky_diagnosis *d = NULL;
	struct flaky_buf title, body;
	char	 err[1024], *isolate = NULL;
	int64_t	 id;
	long long cluster = 0;
	int	 c, ret = EXIT_ERROR;

	flaky_buf_init(&title);
	flaky_buf_init(&body);
	cmd_getopt_init(&g, &cmd_ticket_entry, ctl, argc, argv);
	while ((c = cmd_getopt(&g)) > 0) {
		if (c == 'C' && flaky_parse_int(optarg, 1, 1000000,
		    &cluster) < 0) {
			ctl_usage_error("ticket", "--cluster: expected a "
			    "cluster number from flakyctl clusters, got '%s'",
			    optarg);
			return EXIT_ERROR;
		}
		(void)diag_option(&o, c, optarg);
	}
	if (c < 0)
		return g.exit;
	if (cluster > 0 && optind != argc) {
		ctl_usage_error("ticket", "a test or --cluster, not both");
		return EXIT_ERROR;
	}
	if (cluster == 0 && optind + 1 != argc) {
		ctl_usage_error("ticket", optind == argc ? "which test?" :
		    "one test at a time");
		return EXIT_ERROR;
	}
	if (ctl_check_format(ctl, "ticket", 1 << FORMAT_TABLE |
	    1 << FORMAT_JSON | 1 << FORMAT_MARKDOWN) < 0 ||
	    diag_window(&o, "ticket") < 0)
		return EXIT_ERROR;
	if (flaky_store_open(ctl_db_path(ctl), FLAKY_STORE_READONLY, &store,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		return EXIT_ERROR;
	}
	if (cluster > 0) {
		ret = cluster_ticket(ctl, store, &o.q, cluster);
		goto out;
	}
	if (diag_resolve(store, "ticket", o.target, argv[optind], &id) < 0)
		goto out;
	if (flaky_diagnose_test(store, id, &o.q, &d, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: %s\n", err);
		goto out;
	}
	isolate = diag_isolate(ctl, d->target);
	diag_title(d, &title);
	ticket_body(d, isolate, &body);
	{
		struct flaky_buf rb;

		flaky_buf_init(&rb);
		polluter_words(store, d, 1, &body);
		if (risks_lines(store, d->target, d->test, "- ", &rb) > 0)
			flaky_buf_printf(&body, "\n### Static risk\n\n%s",
			    flaky_buf_cstr(&rb));
		flaky_buf_free(&rb);
	}
	if (title.oom || body.oom) {
		fprintf(stderr, "flakyctl: out of memory\n");
		goto out;
	}
	if (ctl->format == FORMAT_JSON) {
		printf("{\"title\": ");
		json_string(stdout, flaky_buf_cstr(&title));
		printf(", \"body\": ");
		json_string(stdout, flaky_buf_cstr(&body));
		printf(",\n \"diagnosis\": ");
		diag_json(stdout, d, 0);
		printf("}\n");
	} else
		printf("## %s\n\n%s", flaky_buf_cstr(&title),
		    flaky_buf_cstr(&body));
	ret = EXIT_OK;
out:
	free(isolate);
	flaky_buf_free(&title);
	flaky_buf_free(&body);
	flaky_diagnosis_free(d);
	flaky_store_close(store);
	return ret;
}
