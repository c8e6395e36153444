/* The box as evidence (issue 15): a test that fails on one build box and
 * never on the others fails because of that box (its image, its network,
 * its disk), not because of its code; for one whose messages said nothing
 * more (UNKNOWN) that is its signature, INFRA. */
#include "buildconf.h"

#include "classify/classify.h"
#include "diagnose/diagnose.h"
#include "diagnose_int.h"
#include "stats/stats.h"

/* The evidence against box i: the other boxes with enough runs, none of
 * them failing. 1 when they say it fails there only. */
static int
box_alone(const struct flaky_box_row *v, size_t n, size_t i,
    struct flaky_box_evidence *ev)
{
	int64_t	 other = 0;
	int	 boxes = 0;

	if (v[i].runs < FLAKY_BOX_MIN_RUNS ||
	    v[i].failures < FLAKY_BOX_MIN_FAILS)
		return 0;
	for (size_t j = 0; j < n; j++) {
		if (j == i)
			continue;
		/* a failure anywhere else: not this box's doing alone */
		if (v[j].failures > 0)
			return 0;
		if (v[j].runs >= FLAKY_BOX_MIN_RUNS) {
			other += v[j].runs;
			boxes++;
		}
	}
	if (boxes == 0)
		return 0;
	ev->p = flaky_fisher_greater(v[i].failures, v[i].runs,
	    v[i].failures, v[i].runs + other);
	if (ev->p >= FLAKY_BOX_ALPHA)
		return 0;
	ev->box = v[i].box;
	ev->runs = v[i].runs;
	ev->failures = v[i].failures;
	ev->other_runs = other;
	ev->other_boxes = boxes;
	return 1;
}

int
flaky_box_infra(const struct flaky_box_row *v, size_t n,
    struct flaky_box_evidence *ev)
{
	memset(ev, 0, sizeof *ev);
	/* at most one box can fail while every other passes */
	for (size_t i = 0; i < n; i++)
		if (v[i].failures > 0)
			return box_alone(v, n, i, ev);
	return 0;
}

const char *
flaky_box_signature(const char *signature)
{
	if (signature == NULL || strcmp(signature,
	    flaky_signature_name(FLAKY_SIG_UNKNOWN)) == 0)
		return flaky_signature_name(FLAKY_SIG_INFRA);
	return signature;
}

/* The rows of test_id from *i on (v sorted by test id): how many. */
static size_t
rows_of(const struct flaky_box_row *v, size_t n, size_t *i, int64_t test_id)
{
	size_t	 j;

	while (*i < n && v[*i].test_id < test_id)
		(*i)++;
	for (j = *i; j < n && v[j].test_id == test_id; j++)
		;
	return j - *i;
}

void
flaky_box_sigs(struct flaky_test_sig *sigs, size_t nsigs,
    const struct flaky_box_row *v, size_t n)
{
	struct flaky_box_evidence ev;
	size_t	 i = 0, m;

	for (size_t k = 0; k < nsigs; k++) {
		if ((m = rows_of(v, n, &i, sigs[k].test_id)) == 0 ||
		    sigs[k].signature == NULL || sigs[k].polluter != NULL ||
		    sigs[k].depends_on != NULL || !flaky_box_infra(v + i, m,
		    &ev) || strcmp(flaky_box_signature(sigs[k].signature),
		    sigs[k].signature) == 0)
			continue;
		/* borrowed, as stress.c has it: the table's name */
		sigs[k].signature = (char *)flaky_box_signature(
		    sigs[k].signature);
		sigs[k].box_infra = 1;
		sigs[k].race_timing = 0;
	}
}

/* One diagnosis' rows (a copy) and its evidence. */
static int
diag_box(struct flaky_diagnosis *d, const struct flaky_box_row *v, size_t m)
{
	if ((d->boxes = calloc(m, sizeof *d->boxes)) == NULL)
		return -ENOMEM;
	memcpy(d->boxes, v, m * sizeof *v);
	d->nboxes = m;
	if (!flaky_box_infra(d->boxes, m, &d->box))
		return 0;
	if (d->signature != NULL && d->polluter == NULL &&
	    d->depends_on == NULL && !d->passes_alone && !d->fails_alone &&
	    strcmp(flaky_box_signature(d->signature), d->signature) != 0) {
		d->signature = flaky_box_signature(d->signature);
		d->box_infra = 1;
		d->race_timing = 0;
	}
	return 0;
}

int
diag_boxes(struct flaky_store *s, const struct flaky_query *q,
    const int64_t *ids, size_t n, struct flaky_diagnosis **ds, char *err,
    size_t errlen)
{
	struct flaky_box_row *v = NULL;
	size_t	 nv = 0, i, m;
	int	 r;

	if ((r = flaky_store_box_stats(s, q, ids, n, FLAKY_BOX_ROWS, &v, &nv,
	    err, errlen)) < 0)
		return r;
	for (size_t k = 0; k < n && nv > 0; k++) {
		i = 0;
		if ((m = rows_of(v, nv, &i, ids[k])) == 0)
			continue;
		if ((r = diag_box(ds[k], v + i, m)) < 0) {
			r = flaky_error(err, errlen, ENOMEM, "out of memory");
			break;
		}
	}
	free(v);
	return r;
}
