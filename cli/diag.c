/* Shared by flakyctl show, triage, ticket and confirm: finding the test a
 * user means, the words of the triage table, JSON of a diagnosis. */
#include "buildconf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "log.h"
#include "stats/stats.h"

#define CANDIDATES_MAX	10

/* The shared --since, --until, --target options. */
int
diag_option(struct diag_opts *o, int c, const char *arg)
{
	switch (c) {
	case 's':
		o->since = arg;
		return 1;
	case 'u':
		o->until = arg;
		return 1;
	case 'T':
		o->target = arg;
		return 1;
	}
	return 0;
}

/* The query window; "all" means from the beginning. */
int
diag_window(struct diag_opts *o, const char *cmd)
{
	const char *since = o->since ? o->since : "30d";

	memset(&o->q, 0, sizeof o->q);
	if (strcmp(since, "all") == 0)
		since = NULL;
	if (parse_window(cmd, since, o->until, &o->q.since_ms,
	    &o->q.until_ms) < 0)
		return -1;
	o->q.target = o->target;
	return 0;
}

/* Pick the test a user means among refs: one line and the candidates or
 * the closest names on stderr when not exactly one. */
static int
diag_pick(const struct flaky_test_ref *refs, size_t n, const char *cmd,
    const char *target, const char *query, const char *what, size_t *ret)
{
	size_t	 m[CANDIDATES_MAX], nm = 0;
	int	 r;

	r = flaky_find_test(refs, n, query, m, CANDIDATES_MAX, &nm);
	switch (r) {
	case FLAKY_FIND_ONE:
		*ret = m[0];
		return 0;
	case FLAKY_FIND_AMBIGUOUS:
		fprintf(stderr, "flakyctl %s: '%s' matches %zu%s %s; "
		    "give more of the id%s:\n", cmd, query, nm,
		    nm == CANDIDATES_MAX ? " or more" : "", what,
		    target ? "" : " or --target");
		for (size_t i = 0; i < nm; i++)
			fprintf(stderr, "  %s  (%s)\n", refs[m[i]].name,
			    refs[m[i]].target);
		break;
	case FLAKY_FIND_NONE:
		if (nm == 0) {
			fprintf(stderr, "flakyctl %s: no test matches '%s': "
			    "there are no %s%s%s\n", cmd, query, what,
			    target ? " of target " : "", target ? target : "");
			break;
		}
		fprintf(stderr, "flakyctl %s: no test matches '%s'; the "
		    "closest names:\n", cmd, query);
		for (size_t i = 0; i < nm && i < 5; i++)
			fprintf(stderr, "  %s  (%s)\n", refs[m[i]].name,
			    refs[m[i]].target);
		break;
	default:
		fprintf(stderr, "flakyctl %s: out of memory\n", cmd);
	}
	return -1;
}

/* A test id from a part of it, or candidates and closest names; its
 * whole name and target too when asked for (the caller frees them). */
int
diag_resolve_name(struct flaky_store *s, const char *cmd, const char *target,
    const char *query, int64_t *test_id, char **name, char **tname)
{
	struct flaky_test_ref *refs = NULL;
	size_t	 n = 0, i;
	char	 err[1024];
	int	 ret = -1;

	if (ctl_check_target(s, cmd, target) < 0)
		return -1;
	if (flaky_store_tests(s, target, &refs, &n, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl %s: %s\n", cmd, err);
		return -1;
	}
	if (diag_pick(refs, n, cmd, target, query, "tests", &i) == 0) {
		*test_id = refs[i].id;
		if (name != NULL)
			*name = xstrdup(refs[i].name);
		if (tname != NULL)
			*tname = xstrdup(refs[i].target);
		ret = 0;
	}
	flaky_test_refs_free(refs, n);
	return ret;
}

/* The same without the names. */
int
diag_resolve(struct flaky_store *s, const char *cmd, const char *target,
    const char *query, int64_t *test_id)
{
	return diag_resolve_name(s, cmd, target, query, test_id, NULL, NULL);
}

/* The same among the rows of a list (quarantine's): their index. */
int
diag_resolve_among(const struct flaky_test_ref *refs, size_t n,
    const char *cmd, const char *target, const char *query, const char *what,
    size_t *ret)
{
	return diag_pick(refs, n, cmd, target, query, what, ret);
}

/* A string member. */
static void
json_key(FILE *f, const char *k, const char *v)
{
	fprintf(f, ", \"%s\": ", k);
	json_string(f, v);
}

/* A number member (null when NAN). */
static void
json_ms(FILE *f, const char *k, double v)
{
	fprintf(f, ", \"%s\": ", k);
	json_double(f, v);
}

/* An ISO 8601 time member. */
static void
json_time(FILE *f, const char *k, int64_t ms)
{
	char	 buf[32];

	fprintf(f, ", \"%s\": \"%s\"", k, flaky_format_time(ms, buf,
	    sizeof buf));
}

/* Microseconds as a member in ms, null when unknown. */
static void
json_us(FILE *f, const char *k, int64_t us)
{
	fprintf(f, ", \"%s\": ", k);
	if (us < 0)
		fputs("null", f);
	else
		json_double(f, (double)us / 1000.0);
}

/* A diagnosis as one JSON object. */
void
diag_json(FILE *f, const struct flaky_diagnosis *d, int with_failures)
{
	struct flaky_buf b;
	double	 lo, hi;

	flaky_buf_init(&b);
	flaky_wilson(d->failures, d->runs, FLAKY_Z95, &lo, &hi);
	fprintf(f, "{\"target\": ");
	json_string(f, d->target);
	json_key(f, "test", d->test);
	fprintf(f, ", \"runs\": %lld, \"failures\": %lld, \"skips\": %lld",
	    (long long)d->runs, (long long)d->failures, (long long)d->skips);
	fprintf(f, ", \"fail_rate\": ");
	json_double(f, d->runs ? (double)d->failures / (double)d->runs : 0);
	json_ms(f, "ci_low", lo);
	json_ms(f, "ci_high", hi);
	fprintf(f, ", \"tier\": \"%s\"", flaky_tier_name(flaky_tier_skips(
	    d->failures, d->runs, d->skips)));
	fprintf(f, ", \"verdict\": \"%s\"", flaky_verdict_name(d->verdict));
	json_key(f, "signature", d->signature);
	fprintf(f, ", \"signatures\": {");
	for (size_t i = 0; i < d->nsigs; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_string(f, d->sigs[i].name);
		fprintf(f, ": %lld", (long long)d->sigs[i].count);
	}
	fprintf(f, "}");
	json_key(f, "polluter", d->polluter);
	fprintf(f, ", \"polluters\": ");
	if (d->npolluters == 0)
		fprintf(f, "null");
	for (size_t i = 0; i < d->npolluters; i++) {
		fprintf(f, "%s", i ? ", " : "[");
		json_string(f, d->polluters[i]);
	}
	fprintf(f, "%s, \"polluters_minimal\": %s", d->npolluters ? "]" : "",
	    d->npolluters == 0 ? "null" : d->polluters_minimal ? "true" :
	    "false");
	json_key(f, "depends_on", d->depends_on);
	if (d->polluter != NULL || d->depends_on != NULL) {
		fprintf(f, ", \"order\": {\"kind\": \"%s\", ",
		    d->polluter != NULL ? "polluter" : "depends_on");
		fprintf(f, "\"fails_with\": %lld, \"runs_with\": "
		    "%lld, \"fails_without\": %lld, \"runs_without\": %lld, "
		    "\"p\": ", (long long)d->order.k_before,
		    (long long)d->order.n_before,
		    (long long)d->order.k_without,
		    (long long)d->order.n_without);
		json_double(f, d->order.p);
		fprintf(f, ", \"candidates\": %zu}", d->order.candidates);
	}
	fprintf(f, ", \"alone\": {\"runs\": %lld, \"failures\": %lld, "
	    "\"passes_alone\": %s, \"p\": ", (long long)d->alone_runs,
	    (long long)d->alone_failures, d->passes_alone ? "true" : "false");
	json_double(f, d->alone_p);
	fprintf(f, ", \"fails_alone\": %s, \"p_fails_alone\": ",
	    d->fails_alone ? "true" : "false");
	json_double(f, d->alone_pass_p);
	fprintf(f, "}");
	flaky_evidence_words(d, &b);
	json_key(f, "evidence", flaky_buf_cstr(&b));
	evidence_json_race_timing(f, d->race_timing ? &d->timing : NULL);
	json_key(f, "cause", d->verdict == FLAKY_VERDICT_BROKEN ?
	    "the test or the code under test is broken" :
	    flaky_test_cause(d));
	flaky_buf_reset(&b);
	if (d->verdict == FLAKY_VERDICT_BROKEN || d->depends_on != NULL ||
	    d->signature == NULL)
		flaky_test_patch(d, &b);
	else
		flaky_sig_test_patch(d, &b);
	json_key(f, "patch", flaky_buf_cstr(&b));
	fprintf(f, ",\n  \"timing\": {\"passes\": %lld, \"failures\": %lld",
	    (long long)d->timing.n_pass, (long long)d->timing.n_fail);
	json_ms(f, "median_ms_pass", d->timing.median_pass);
	json_ms(f, "p90_ms_pass", d->timing.p90_pass);
	json_ms(f, "median_ms_fail", d->timing.median_fail);
	json_ms(f, "p90_ms_fail", d->timing.p90_fail);
	fprintf(f, ", \"early\": %s, \"near_limit\": %s",
	    d->timing.early ? "true" : "false",
	    d->timing.near_limit ? "true" : "false");
	json_ms(f, "p_mann_whitney", d->timing.mw_p);
	fprintf(f, ", \"varies\": %s}", d->timing.varies ? "true" : "false");
	fprintf(f, ",\n  \"revisions\": [");
	for (size_t i = 0; i < d->nrevs; i++) {
		const struct flaky_rev_stat *r = &d->revs[i];

		fprintf(f, "%s{\"revision\": ", i ? ", " : "");
		json_string(f, r->revision);
		fprintf(f, ", \"runs\": %lld, \"failures\": %lld, \"state\": "
		    "\"%s\"", (long long)r->runs, (long long)r->failures,
		    flaky_rev_state_name(r->state));
		json_key(f, "transition", flaky_transition_name(r->transition));
		json_ms(f, "ci_low", r->ci_low);
		json_ms(f, "ci_high", r->ci_high);
		json_time(f, "first_seen", r->first_ms);
		json_time(f, "last_seen", r->last_ms);
		fprintf(f, "}");
	}
	fprintf(f, "]");
	flaky_buf_reset(&b);
	flaky_revision_words(d, &b);
	json_key(f, "revision_summary", b.len ? flaky_buf_cstr(&b) : NULL);
	fprintf(f, ",\n  \"modes\": [");
	for (size_t i = 0; i < d->nmodes; i++) {
		const struct flaky_failure_mode *m = &d->modes[i];

		fprintf(f, "%s{\"fingerprint\": \"%016llx\", \"count\": %lld",
		    i ? ", " : "", (unsigned long long)m->fingerprint,
		    (long long)m->count);
		json_key(f, "signature", m->signature);
		json_key(f, "normalized", m->normalized);
		json_key(f, "example", m->example);
		fprintf(f, "}");
	}
	fprintf(f, "]");
	json_key(f, "seed", d->seed);
	diag_json_stress(f, d);
	diag_json_seeds(f, d);
	diag_json_boxes(f, d);
	diag_json_flips(f, d);
	diag_json_hangs(f, d);
	json_key(f, "command", d->command);
	json_key(f, "dir", d->dir);
	if (with_failures) {
		fprintf(f, ",\n  \"failures_log\": [");
		for (size_t i = 0; i < d->nfailed; i++) {
			const struct flaky_result_row *x = &d->failed[i];

			fprintf(f, "%s\n   {\"run\": %lld", i ? "," : "",
			    (long long)x->run_id);
			json_time(f, "time", x->started_ms);
			json_key(f, "box", x->box);
			json_key(f, "revision", x->revision);
			json_key(f, "status", x->status);
			if (x->exit_code < 0)
				fprintf(f, ", \"exit_code\": null");
			else
				fprintf(f, ", \"exit_code\": %d", x->exit_code);
			json_us(f, "run_duration_ms", x->run_duration_us);
			json_us(f, "duration_ms", x->duration_us);
			/* from 1, as the pages and the API count */
			fprintf(f, ", \"position\": %lld", (long long)
			    x->position + 1);
			json_key(f, "seed", x->seed);
			json_key(f, "signature", x->signature);
			if (x->fingerprint != 0)
				fprintf(f, ", \"fingerprint\": \"%016llx\"",
				    (unsigned long long)x->fingerprint);
			else
				fprintf(f, ", \"fingerprint\": null");
			json_key(f, "message", x->message);
			fprintf(f, "}");
		}
		fprintf(f, "\n  ]");
	}
	fprintf(f, "}");
	flaky_buf_free(&b);
}

