/* Stress as evidence (issue 18): a test that fails much more under a
 * perturbation than calm has a timing or resource race; for one whose
 * messages said nothing more (UNKNOWN) that is its signature, RACE. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "classify/classify.h"
#include "diagnose/diagnose.h"
#include "stats/stats.h"

int
flaky_stress_sensitive(const struct flaky_perturb_row *v, size_t n,
    struct flaky_stress_evidence *ev)
{
	int64_t	 cr = 0, cf = 0;
	size_t	 i = 0;

	memset(ev, 0, sizeof *ev);
	if (n > 0 && v[0].perturbation == NULL) {
		cr = v[0].runs;
		cf = v[0].failures;
		i = 1;
	}
	if (cr == 0)
		return 0;
	for (; i < n; i++) {
		double	 p, calm = (double)cf / (double)cr;
		double	 rate = v[i].runs ? (double)v[i].failures /
		    (double)v[i].runs : 0;

		/* shuffled: order, not stress (order.c tells that); seeded:
		 * the seed, not stress (seeds.c tells that) */
		if (flaky_perturb_is_shuffle(v[i].perturbation) ||
		    flaky_perturb_is_seed(v[i].perturbation) ||
		    v[i].failures < FLAKY_STRESS_MIN_FAILS ||
		    rate < FLAKY_STRESS_RATIO * calm)
			continue;
		p = flaky_fisher_greater(v[i].failures, v[i].runs,
		    v[i].failures + cf, v[i].runs + cr);
		if (p >= FLAKY_STRESS_ALPHA ||
		    (ev->perturbation != NULL && p >= ev->p))
			continue;
		ev->perturbation = v[i].perturbation;
		ev->calm_runs = cr;
		ev->calm_failures = cf;
		ev->runs = v[i].runs;
		ev->failures = v[i].failures;
		ev->p = p;
	}
	return ev->perturbation != NULL;
}

const char *
flaky_stress_signature(const char *signature)
{
	if (signature == NULL || strcmp(signature,
	    flaky_signature_name(FLAKY_SIG_UNKNOWN)) == 0)
		return flaky_signature_name(FLAKY_SIG_RACE);
	return signature;
}

int
flaky_stress_sigs(struct flaky_test_sig *sigs, size_t nsigs,
    const struct flaky_perturb_row *v, size_t n)
{
	struct flaky_stress_evidence ev;
	size_t	 i = 0, j, k = 0;

	while (i < n) {
		for (j = i; j < n && v[j].test_id == v[i].test_id; j++)
			;
		while (k < nsigs && sigs[k].test_id < v[i].test_id)
			k++;
		if (k < nsigs && sigs[k].test_id == v[i].test_id &&
		    sigs[k].signature != NULL &&
		    flaky_stress_sensitive(v + i, j - i, &ev) &&
		    strcmp(flaky_stress_signature(sigs[k].signature),
		    sigs[k].signature) != 0) {
			/* signature is borrowed (a name of the table or of
			 * the test's tallies), never owned: point it at the
			 * table's name. */
			sigs[k].signature = (char *)flaky_stress_signature(
			    sigs[k].signature);
			sigs[k].stress_race = 1;
		}
		i = j;
	}
	return 0;
}
