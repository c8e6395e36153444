/* The signatures and static scan findings a report prints beside its
 * rows, and their JSON (also a diagnosis' race_timing, for diag.c). */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evidence.h"
#include "flakyctl.h"
#include "stats/stats.h"

/* The per-test signatures of the window: for the tests that failed,
 * polluters for the mixed ones above noise (noise is left to triage: a
 * report stays fast). */
static int
load_sigs(struct report_evidence *ev, struct flaky_store *s,
    const struct flaky_query *q, int every, const struct flaky_test_row *rows,
    size_t n)
{
	int64_t	*ids, *victims;
	size_t	 nids = 0, nvictims = 0;
	char	 err[1024];
	int	 r = 0;

	ids = calloc(n ? n : 1, sizeof *ids);
	victims = calloc(n ? n : 1, sizeof *victims);
	if (ids == NULL || victims == NULL) {
		free(ids);
		free(victims);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int	 t = flaky_tier(rows[i].failures, rows[i].runs);

		if (rows[i].failures == 0 || (!every && t == FLAKY_TIER_NOISE))
			continue;
		ids[nids++] = rows[i].test_id;
		if (t == FLAKY_TIER_CRITICAL || t == FLAKY_TIER_WARNING)
			victims[nvictims++] = rows[i].test_id;
	}
	if (nids > 0 && (r = flaky_test_signatures(s, q, ids, nids, victims,
	    nvictims, &ev->sigs, &ev->nsigs, err, sizeof err)) < 0)
		fprintf(stderr, "flakyctl: signatures: %s\n", err);
	evidence_load_boxes(ev, s, q, ids, nids);
	free(ids);
	free(victims);
	return r;
}

void
evidence_load(struct report_evidence *ev, struct flaky_store *s,
    const struct flaky_query *q, const char *target, int every,
    const struct flaky_test_row *rows, size_t n)
{
	char	 err[512];

	memset(ev, 0, sizeof *ev);
	(void)load_sigs(ev, s, q, every, rows, n);
	if (flaky_clusters_from_store(s, q, NULL, &ev->clusters, err,
	    sizeof err) < 0)
		fprintf(stderr, "flakyctl: clusters: %s\n", err);
	if (flaky_store_risks(s, target, &ev->risks, &ev->nrisks, err,
	    sizeof err) < 0) {
		ev->risks = NULL;
		ev->nrisks = 0;
	}
	if (flaky_store_perturb_stats(s, q, 0, &ev->perturbs, &ev->nperturbs,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: perturbations: %s\n", err);
		ev->perturbs = NULL;
		ev->nperturbs = 0;
	}
	if (flaky_stress_sigs(ev->sigs, ev->nsigs, ev->perturbs,
	    ev->nperturbs) < 0)
		fprintf(stderr, "flakyctl: out of memory\n");
	evidence_load_seeds(ev, s, q, rows, n);
}

void
evidence_free(struct report_evidence *ev)
{
	flaky_test_sigs_free(ev->sigs, ev->nsigs);
	flaky_risks_free(ev->risks, ev->nrisks);
	flaky_clusters_free(&ev->clusters);
	flaky_perturb_rows_free(ev->perturbs, ev->nperturbs);
	free(ev->boxes);
	evidence_free_flips(ev);
	evidence_free_seeds(ev);
	memset(ev, 0, sizeof *ev);
}

const struct flaky_test_sig *
evidence_sig(const struct report_evidence *ev, int64_t test_id)
{
	return flaky_test_sig_find(ev->sigs, ev->nsigs, test_id);
}

size_t
evidence_risks(const struct report_evidence *ev,
    const struct flaky_test_row *r, size_t *first)
{
	return flaky_risks_find(ev->risks, ev->nrisks, r->target, r->test,
	    first);
}

void
evidence_json_sig(FILE *f, const struct flaky_test_sig *t)
{
	fprintf(f, ", \"signature\": ");
	json_string(f, t ? t->signature : NULL);
	fprintf(f, ", \"signatures\": {");
	for (size_t i = 0; t != NULL && i < t->nsigs; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_string(f, t->sigs[i].name);
		fprintf(f, ": %lld", (long long)t->sigs[i].count);
	}
	fprintf(f, "}, \"polluter\": ");
	json_string(f, t ? t->polluter : NULL);
	fprintf(f, ", \"depends_on\": ");
	json_string(f, t ? t->depends_on : NULL);
	evidence_json_race_timing(f, t != NULL && t->race_timing ?
	    &t->timing : NULL);
}

void
evidence_json_risks(FILE *f, const struct report_evidence *ev,
    const struct flaky_test_row *r)
{
	size_t	 first, n = evidence_risks(ev, r, &first);

	fprintf(f, ", \"static_risks\": [");
	for (size_t i = first; i < first + n; i++) {
		const struct flaky_risk *k = &ev->risks[i];

		fprintf(f, "%s{\"path\": ", i > first ? ", " : "");
		json_string(f, k->path);
		fprintf(f, ", \"line\": %d, \"category\": ", k->line);
		json_string(f, k->category);
		fprintf(f, ", \"tolerance\": ");
		json_string(f, k->tolerance);
		fprintf(f, ", \"seeded\": %s}", k->seeded ? "true" : "false");
	}
	fprintf(f, "]");
}

void
evidence_json_cluster(FILE *f, const struct report_evidence *ev,
    const struct flaky_test_row *r)
{
	const struct flaky_cluster *c = flaky_cluster_of(&ev->clusters,
	    r->test_id);

	if (c != NULL)
		fprintf(f, ", \"cluster\": %d", c->id);
	else
		fprintf(f, ", \"cluster\": null");
}

void
evidence_json_race_timing(FILE *f, const struct flaky_timing *t)
{
	fprintf(f, ", \"race_timing\": ");
	if (t == NULL) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"failures\": %lld, \"passes\": %lld",
	    (long long)t->n_fail, (long long)t->n_pass);
	fprintf(f, ", \"median_ms_fail\": ");
	json_double(f, t->median_fail);
	fprintf(f, ", \"median_ms_pass\": ");
	json_double(f, t->median_pass);
	fprintf(f, ", \"p\": ");
	json_double(f, t->mw_p);
	fputs("}", f);
}

size_t
evidence_perturbs(const struct report_evidence *ev, int64_t test_id,
    size_t *first)
{
	size_t	 lo = 0, hi = ev->nperturbs, n = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ev->perturbs[mid].test_id < test_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	while (lo + n < ev->nperturbs && ev->perturbs[lo + n].test_id ==
	    test_id)
		n++;
	return n;
}

void
perturb_words(const struct flaky_perturb_row *v, size_t n,
    struct flaky_buf *b)
{
	for (size_t i = 0; i < n; i++) {
		const char *p = v[i].perturbation;

		/* "calm", "shuffled", "under cpu:2", "under shuffle+cpu:2",
		 * "over seeds" */
		int	 plain = p == NULL || strcmp(p, FLAKY_PERTURB_SHUFFLE) ==
		    0 || strcmp(p, FLAKY_PERTURB_SEED) == 0;

		flaky_buf_printf(b, "%s%.0f%% %s%s (%lld/%lld)", i ? ", " : "",
		    v[i].runs ? 100.0 * (double)v[i].failures /
		    (double)v[i].runs : 0.0, p == NULL ? "calm" :
		    strcmp(p, FLAKY_PERTURB_SHUFFLE) == 0 ? "shuffled" :
		    strcmp(p, FLAKY_PERTURB_SEED) == 0 ? "over seeds" :
		    "under ", plain ? "" : p, (long long)v[i].failures,
		    (long long)v[i].runs);
	}
}

/* A JSON array of rates per perturbation. */
static void
json_perturbs(FILE *f, const struct flaky_perturb_row *v, size_t n)
{
	fprintf(f, ", \"by_perturbation\": [");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{\"perturbation\": ", i ? ", " : "");
		json_string(f, v[i].perturbation);
		fprintf(f, ", \"runs\": %lld, \"failures\": %lld, "
		    "\"fail_rate\": ", (long long)v[i].runs,
		    (long long)v[i].failures);
		json_double(f, v[i].runs ? (double)v[i].failures /
		    (double)v[i].runs : 0);
		fputs("}", f);
	}
	fputs("]", f);
}

void
evidence_json_perturbs(FILE *f, const struct report_evidence *ev,
    int64_t test_id)
{
	size_t	 first, n = evidence_perturbs(ev, test_id, &first);

	json_perturbs(f, n ? &ev->perturbs[first] : NULL, n);
}

/* Are the rows calm or seeded only (the seeds' own words say more)? */
static int
calm_or_seeded(const struct flaky_perturb_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].perturbation != NULL &&
		    !flaky_perturb_is_seed(v[i].perturbation))
			return 0;
	return 1;
}

void
diag_stress_words(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	if (calm_or_seeded(d->perturbs, d->nperturbs))
		return;
	perturb_words(d->perturbs, d->nperturbs, b);
	if (d->stress.perturbation != NULL)
		flaky_buf_printf(b, "; fails more under %s (Fisher p = %.2g)",
		    d->stress.perturbation, d->stress.p);
}

void
diag_json_stress(FILE *f, const struct flaky_diagnosis *d)
{
	const struct flaky_stress_evidence *e = &d->stress;

	json_perturbs(f, d->perturbs, d->nperturbs);
	fprintf(f, ", \"stress\": ");
	if (e->perturbation == NULL) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"perturbation\": ");
	json_string(f, e->perturbation);
	fprintf(f, ", \"runs\": %lld, \"failures\": %lld, \"calm_runs\": "
	    "%lld, \"calm_failures\": %lld, \"p\": ", (long long)e->runs,
	    (long long)e->failures, (long long)e->calm_runs,
	    (long long)e->calm_failures);
	json_double(f, e->p);
	fprintf(f, ", \"race\": %s}", d->stress_race ? "true" : "false");
}

int
evidence_perturb_words(const struct report_evidence *ev, int64_t test_id,
    struct flaky_buf *b)
{
	size_t	 first, n = evidence_perturbs(ev, test_id, &first);

	/* calm runs only: nothing to compare; seeded: their own words */
	if (n == 0 || calm_or_seeded(&ev->perturbs[first], n))
		return 0;
	perturb_words(&ev->perturbs[first], n, b);
	return 1;
}
