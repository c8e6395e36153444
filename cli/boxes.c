/* The box as a dimension (issue 15) in what the query commands print: a
 * test's rate per box under its report row, in show and triage, and in
 * their JSON; and the evidence of a test that fails on one box only. */
#include "buildconf.h"

#include <stdio.h>

#include "evidence.h"
#include "flakyctl.h"

void
box_words(const struct flaky_box_row *v, size_t n, struct flaky_buf *b)
{
	struct flaky_box_evidence ev;

	for (size_t i = 0; i < n; i++)
		flaky_buf_printf(b, "%s%.0f%% on %s (%lld/%lld)", i ? ", " : "",
		    v[i].runs ? 100.0 * (double)v[i].failures /
		    (double)v[i].runs : 0.0, v[i].box,
		    (long long)v[i].failures, (long long)v[i].runs);
	if (flaky_box_infra(v, n, &ev))
		flaky_buf_printf(b, "; fails on %s only (Fisher p = %.2g)",
		    ev.box, ev.p);
}

/* The JSON member boxes: [] when the test ran on one box. */
static void
json_boxes(FILE *f, const struct flaky_box_row *v, size_t n)
{
	fprintf(f, ", \"boxes\": [");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{\"box\": ", i ? ", " : "");
		json_string(f, v[i].box);
		fprintf(f, ", \"runs\": %lld, \"failures\": %lld, \"rate\": ",
		    (long long)v[i].runs, (long long)v[i].failures);
		json_double(f, v[i].runs ? (double)v[i].failures /
		    (double)v[i].runs : 0);
		fputs("}", f);
	}
	fputs("]", f);
}

/* A test's rows among the report's: how many, from *first on. */
static size_t
evidence_boxes(const struct report_evidence *ev, int64_t test_id,
    size_t *first)
{
	size_t	 i = 0, n = 0;

	while (i < ev->nboxes && ev->boxes[i].test_id < test_id)
		i++;
	while (i + n < ev->nboxes && ev->boxes[i + n].test_id == test_id)
		n++;
	*first = i;
	return n;
}

int
evidence_box_words(const struct report_evidence *ev, int64_t test_id,
    struct flaky_buf *b)
{
	size_t	 first, n = evidence_boxes(ev, test_id, &first);

	if (n < 2)
		return 0;
	box_words(&ev->boxes[first], n, b);
	return 1;
}

void
evidence_json_boxes(FILE *f, const struct report_evidence *ev,
    int64_t test_id)
{
	size_t	 first, n = evidence_boxes(ev, test_id, &first);

	json_boxes(f, n ? &ev->boxes[first] : NULL, n);
}

void
evidence_load_boxes(struct report_evidence *ev, struct flaky_store *s,
    const struct flaky_query *q, const int64_t *ids, size_t n)
{
	char	 err[512];

	if (flaky_store_box_stats(s, q, ids, n, FLAKY_BOX_ROWS,
	    &ev->boxes, &ev->nboxes, err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: boxes: %s\n", err);
		ev->boxes = NULL;
		ev->nboxes = 0;
	}
	flaky_box_sigs(ev->sigs, ev->nsigs, ev->boxes, ev->nboxes);
}

void
diag_box_words(const struct flaky_diagnosis *d, struct flaky_buf *b)
{
	if (d->nboxes > 1)
		box_words(d->boxes, d->nboxes, b);
}

void
diag_json_boxes(FILE *f, const struct flaky_diagnosis *d)
{
	const struct flaky_box_evidence *e = &d->box;

	json_boxes(f, d->boxes, d->nboxes);
	fprintf(f, ", \"box_evidence\": ");
	if (e->box == NULL) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"box\": ");
	json_string(f, e->box);
	fprintf(f, ", \"runs\": %lld, \"failures\": %lld, \"other_runs\": "
	    "%lld, \"other_failures\": 0, \"other_boxes\": %d, \"p\": ",
	    (long long)e->runs, (long long)e->failures,
	    (long long)e->other_runs, e->other_boxes);
	json_double(f, e->p);
	fprintf(f, ", \"infra\": %s}", d->box_infra ? "true" : "false");
}
