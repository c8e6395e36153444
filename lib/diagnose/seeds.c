/* SEED (issue 34): a test that fails for some seeds of a seed sweep and
 * passes for others, when replaying a failing seed fails again (or was
 * not tried): its failures follow the seed. A replay that passes shows
 * randomness no seed controls, and the signature stays what the messages
 * say. */
#include "buildconf.h"

#include <stdio.h>
#include <string.h>

#include "classify/classify.h"
#include "diagnose/diagnose.h"
#include "diagnose_int.h"

int
flaky_seed_evidence(const struct flaky_perturb_row *v, size_t n,
    const struct flaky_replay_row *rp, size_t nrp,
    struct flaky_seed_evidence *ev)
{
	memset(ev, 0, sizeof *ev);
	for (size_t i = 0; i < n; i++)
		if (v[i].perturbation != NULL &&
		    strcmp(v[i].perturbation, FLAKY_PERTURB_SEED) == 0) {
			ev->runs = v[i].runs;
			ev->failures = v[i].failures;
		}
	if (ev->runs == 0)
		return 0;
	flaky_wilson(ev->failures, ev->runs, FLAKY_Z95, &ev->lo, &ev->hi);
	for (size_t i = 0; i < nrp; i++) {
		ev->replays++;
		ev->replays_failed += rp[i].failed;
		/* the seed a replay failed with, else one replayed */
		if (rp[i].seed != NULL && (ev->seed[0] == '\0' ||
		    (rp[i].failed && ev->replays_failed == 1)))
			snprintf(ev->seed, sizeof ev->seed, "%s", rp[i].seed);
	}
	ev->not_seed = ev->replays_failed < ev->replays;
	ev->sensitive = ev->failures > 0 && ev->failures < ev->runs &&
	    !ev->not_seed;
	return ev->sensitive;
}

const char *
flaky_seed_signature(const char *signature)
{
	if (signature == NULL || strcmp(signature,
	    flaky_signature_name(FLAKY_SIG_UNKNOWN)) == 0)
		return flaky_signature_name(FLAKY_SIG_SEED);
	return signature;
}

void
flaky_seed_sigs(struct flaky_test_sig *sigs, size_t nsigs,
    const struct flaky_perturb_row *v, size_t n,
    const struct flaky_replay_row *rp, size_t nrp)
{
	struct flaky_seed_evidence ev;
	size_t	 i = 0, j, k = 0, a = 0, b;

	while (i < n) {
		for (j = i; j < n && v[j].test_id == v[i].test_id; j++)
			;
		while (k < nsigs && sigs[k].test_id < v[i].test_id)
			k++;
		while (a < nrp && rp[a].test_id < v[i].test_id)
			a++;
		for (b = a; b < nrp && rp[b].test_id == v[i].test_id; b++)
			;
		if (k < nsigs && sigs[k].test_id == v[i].test_id &&
		    sigs[k].signature != NULL &&
		    flaky_seed_evidence(v + i, j - i, rp + a, b - a, &ev) &&
		    strcmp(flaky_seed_signature(sigs[k].signature),
		    sigs[k].signature) != 0) {
			/* borrowed, as flaky_stress_sigs: a name of the
			 * table, never owned */
			sigs[k].signature = (char *)flaky_seed_signature(
			    sigs[k].signature);
			sigs[k].seed_sensitive = 1;
		}
		i = j;
	}
}

void
flaky_seed_words(const struct flaky_seed_evidence *ev, struct flaky_buf *b)
{
	if (ev->runs == 0)
		return;
	flaky_buf_printf(b, "fails for %lld of %lld seed%s (%.3g%%, 95%% "
	    "%.2g-%.2g%%)", (long long)ev->failures, (long long)ev->runs,
	    ev->runs == 1 ? "" : "s", 100.0 * (double)ev->failures /
	    (double)ev->runs, 100 * ev->lo, 100 * ev->hi);
	if (ev->replays > 0 && ev->not_seed)
		flaky_buf_printf(b, "; replaying a failing seed passed (%lld "
		    "of %lld replays failed): randomness no seed controls",
		    (long long)ev->replays_failed, (long long)ev->replays);
	else if (ev->replays > 0)
		flaky_buf_printf(b, "; seed %s fails again when replayed (%lld "
		    "of %lld replays)", ev->seed, (long long)ev->replays_failed,
		    (long long)ev->replays);
	else if (ev->seed[0] != '\0')
		flaky_buf_printf(b, "; seed %s failed, not replayed", ev->seed);
}

/* A failing seed of the test's sweep runs, when no replay named one. */
static int
failing_seed(struct flaky_store *s, const struct flaky_query *q,
    struct flaky_diagnosis *d, char *err, size_t errlen)
{
	struct flaky_seed_row *v;
	size_t	 n;
	int	 r;

	if ((r = flaky_store_failing_seeds(s, q, d->test_id, 16, &v, &n, err,
	    errlen)) < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if (v[i].perturbation != NULL && v[i].seed != NULL &&
		    strcmp(v[i].perturbation, FLAKY_PERTURB_SEED) == 0) {
			snprintf(d->seed_ev.seed, sizeof d->seed_ev.seed, "%s",
			    v[i].seed);
			break;
		}
	flaky_seed_rows_free(v, n);
	return 0;
}

int
diag_seeds(struct flaky_store *s, const struct flaky_query *q,
    struct flaky_diagnosis *d, char *err, size_t errlen)
{
	struct flaky_replay_row *rp = NULL;
	struct flaky_headroom_row *h = NULL;
	size_t	 nrp = 0, nh = 0;
	int	 r;

	if ((r = flaky_store_seeded(s, q, err, errlen)) <= 0)
		return r;
	if ((r = flaky_store_seed_replays(s, q, d->test_id, &rp, &nrp, err,
	    errlen)) < 0)
		return r;
	flaky_seed_evidence(d->perturbs, d->nperturbs, rp, nrp, &d->seed_ev);
	flaky_replay_rows_free(rp, nrp);
	if (d->seed_ev.failures > 0 && d->seed_ev.seed[0] == '\0' &&
	    (r = failing_seed(s, q, d, err, errlen)) < 0)
		return r;
	/* what a message says (TIMEOUT) and order or stress evidence stay */
	if (d->seed_ev.sensitive && d->signature != NULL &&
	    d->polluter == NULL && d->depends_on == NULL && !d->stress_race &&
	    !d->box_infra && strcmp(flaky_seed_signature(d->signature),
	    d->signature) != 0) {
		d->signature = flaky_seed_signature(d->signature);
		d->seed_sig = 1;
	}
	if ((r = flaky_store_headroom(s, q, d->test_id, &h, &nh, err,
	    errlen)) < 0)
		return r;
	r = flaky_headroom_sites(h, nh, &d->headroom, &d->nheadroom);
	flaky_headroom_rows_free(h, nh);
	if (r < 0)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	return 0;
}
