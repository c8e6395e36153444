/* Seed sweeps and tolerance headroom beside a report's rows and in a
 * diagnosis (issue 34): the words and the JSON members "seeds" and
 * "headroom" (docs/json.md). */
#include "buildconf.h"
/* its own header first: it must stand alone */
#include "evidence.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flakyctl.h"
#include "log.h"

/* The window's replays and every listed test's headroom, when the window
 * has a run of a seed sweep; SEED in the signatures of the tests whose
 * failures follow the seed. A part that cannot be read is said on stderr
 * and left empty. */
void
evidence_load_seeds(struct report_evidence *ev, struct flaky_store *s,
    const struct flaky_query *q, const struct flaky_test_row *rows,
    size_t n)
{
	char	 err[512];
	int	 r;

	if ((r = flaky_store_seeded(s, q, err, sizeof err)) <= 0) {
		if (r < 0)
			fprintf(stderr, "flakyctl: seed sweeps: %s\n", err);
		return;
	}
	ev->seeded = 1;
	if (flaky_store_seed_replays(s, q, 0, &ev->replays, &ev->nreplays,
	    err, sizeof err) < 0)
		fprintf(stderr, "flakyctl: seed sweeps: %s\n", err);
	flaky_seed_sigs(ev->sigs, ev->nsigs, ev->perturbs, ev->nperturbs,
	    ev->replays, ev->nreplays);
	ev->hr = xcalloc(n ? n : 1, sizeof *ev->hr);
	for (size_t i = 0; i < n; i++) {
		struct flaky_headroom_row *h;
		size_t	 nh;

		if (flaky_store_headroom(s, q, rows[i].test_id, &h, &nh, err,
		    sizeof err) < 0) {
			fprintf(stderr, "flakyctl: headroom: %s\n", err);
			break;
		}
		if (nh > 0) {
			struct evidence_headroom *e = &ev->hr[ev->nhr++];

			e->test_id = rows[i].test_id;
			if (flaky_headroom_sites(h, nh, &e->v, &e->n) < 0)
				fatalx("out of memory");
		}
		flaky_headroom_rows_free(h, nh);
	}
}

void
evidence_free_seeds(struct report_evidence *ev)
{
	flaky_replay_rows_free(ev->replays, ev->nreplays);
	for (size_t i = 0; i < ev->nhr; i++)
		flaky_headroom_sites_free(ev->hr[i].v, ev->hr[i].n);
	free(ev->hr);
}

size_t
evidence_headroom(const struct report_evidence *ev, int64_t test_id,
    const struct flaky_headroom_site **ret)
{
	*ret = NULL;
	for (size_t i = 0; i < ev->nhr; i++)
		if (ev->hr[i].test_id == test_id) {
			*ret = ev->hr[i].v;
			return ev->hr[i].n;
		}
	return 0;
}

int
evidence_seed(const struct report_evidence *ev, int64_t test_id,
    struct flaky_seed_evidence *se)
{
	size_t	 first, n = evidence_perturbs(ev, test_id, &first), a = 0, b;

	if (!ev->seeded)
		return 0;
	while (a < ev->nreplays && ev->replays[a].test_id < test_id)
		a++;
	for (b = a; b < ev->nreplays && ev->replays[b].test_id == test_id;
	    b++)
		;
	flaky_seed_evidence(n ? &ev->perturbs[first] : NULL, n,
	    ev->replays + a, b - a, se);
	return se->runs > 0;
}

/* A rate, null when not known. */
static void
json_rate(FILE *f, const char *name, double v)
{
	fprintf(f, ", \"%s\": ", name);
	json_double(f, v);
}

void
seed_json(FILE *f, const struct flaky_seed_evidence *se, const char *repro)
{
	fprintf(f, ", \"seeds\": ");
	if (se == NULL || se->runs == 0) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"runs\": %lld, \"failures\": %lld",
	    (long long)se->runs, (long long)se->failures);
	json_rate(f, "fail_rate", (double)se->failures / (double)se->runs);
	json_rate(f, "ci_low", se->lo);
	json_rate(f, "ci_high", se->hi);
	fprintf(f, ", \"failing_seed\": ");
	json_string(f, se->seed[0] ? se->seed : NULL);
	fprintf(f, ", \"replays\": %lld, \"replays_failed\": %lld, "
	    "\"seed_sensitive\": %s, \"reproduce\": ", (long long)se->replays,
	    (long long)se->replays_failed, se->sensitive ? "true" : "false");
	json_string(f, repro);
	fputs("}", f);
}

void
headroom_json(FILE *f, const struct flaky_headroom_site *v, size_t n)
{
	fprintf(f, ", \"headroom\": [");
	for (size_t i = 0; i < n; i++) {
		const struct flaky_headroom_site *h = &v[i];

		fprintf(f, "%s{\"file\": ", i ? ", " : "");
		json_string(f, h->path);
		fprintf(f, ", \"line\": %d, \"kind\": ", h->line);
		json_string(f, h->kind);
		fprintf(f, ", \"assertion\": ");
		json_string(f, h->assertion);
		fprintf(f, ", \"tolerance\": ");
		json_string(f, h->tolerance);
		json_rate(f, "bound", h->bound);
		fprintf(f, ", \"runs\": %zu, \"failed\": %zu", h->n, h->fails);
		json_rate(f, "used_median", h->used_median);
		json_rate(f, "used_p99", h->used_p99);
		json_rate(f, "median", h->median);
		json_rate(f, "worst_1pct", h->worst1);
		fprintf(f, ", \"constant\": %s, \"method\": %s, \"fit\": ",
		    h->constant ? "true" : "false", h->counted ?
		    "\"count\"" : h->fitted ? "\"gev\"" : h->constant ?
		    "\"constant\"" : "null");
		if (h->fitted) {
			fprintf(f, "{\"model\": \"%s\"", h->gev.xi_max == 0 ?
			    "gumbel" : "gev");
			json_rate(f, "mu", h->gev.mu);
			json_rate(f, "sigma", h->gev.sigma);
			json_rate(f, "xi", h->gev.xi);
			fputs("}", f);
		} else
			fputs("null", f);
		json_rate(f, "fail_rate", h->rate);
		json_rate(f, "fail_rate_low", h->rate_lo);
		json_rate(f, "fail_rate_high", h->rate_hi);
		fprintf(f, ", \"suggested_bound\": ");
		json_string(f, h->suggest_text[0] ? h->suggest_text : NULL);
		fprintf(f, ", \"at_risk\": %s}", h->at_risk ? "true" :
		    "false");
	}
	fputs("]", f);
}

void
evidence_json_seeds(FILE *f, const struct report_evidence *ev,
    int64_t test_id)
{
	struct flaky_seed_evidence se;
	const struct flaky_headroom_site *v;
	size_t	 n = evidence_headroom(ev, test_id, &v);

	seed_json(f, evidence_seed(ev, test_id, &se) ? &se : NULL, NULL);
	headroom_json(f, v, n);
}

int
evidence_seed_words(const struct report_evidence *ev, int64_t test_id,
    struct flaky_buf *b)
{
	struct flaky_seed_evidence se;

	if (!evidence_seed(ev, test_id, &se) || se.failures == 0)
		return 0;
	flaky_seed_words(&se, b);
	return 1;
}

void
diag_json_seeds(FILE *f, const struct flaky_diagnosis *d)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	if (d->seed_ev.sensitive)
		flaky_repro(d, NULL, &b);
	seed_json(f, d->seed_ev.runs > 0 ? &d->seed_ev : NULL,
	    b.len ? flaky_buf_cstr(&b) : NULL);
	headroom_json(f, d->headroom, d->nheadroom);
	flaky_buf_free(&b);
}

void
diag_seed_lines(const struct flaky_diagnosis *d, const char *seeds,
    const char *headroom, const char *repro, int evidence_shown)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	/* SEED's evidence line, where there is one, says it already */
	if (d->seed_ev.runs > 0 && !(d->seed_sig && evidence_shown)) {
		if (d->seed_ev.failures == 0)
			flaky_buf_printf(&b, "passes for all %lld seed%s",
			    (long long)d->seed_ev.runs, d->seed_ev.runs == 1 ?
			    "" : "s");
		else
			flaky_seed_words(&d->seed_ev, &b);
		printf("%s%s\n", seeds, flaky_buf_cstr(&b));
	}
	for (size_t i = 0; i < d->nheadroom; i++) {
		flaky_buf_reset(&b);
		flaky_headroom_words(&d->headroom[i], &b);
		printf("%s%s\n", headroom, flaky_buf_cstr(&b));
	}
	if (d->seed_ev.sensitive && d->seed_ev.seed[0] != '\0') {
		flaky_buf_reset(&b);
		flaky_repro(d, NULL, &b);
		printf("%s%s\n", repro, flaky_buf_cstr(&b));
	}
	flaky_buf_free(&b);
}
