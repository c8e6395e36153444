/* Flips (issue 29) in what the query commands print: under a report's
 * row and in its JSON, in show and triage, and in a diagnosis' JSON. A
 * flip is a revision the test failed and passed on; a break and its fix
 * (every run of a revision failed, the next one passed) is none, so no
 * line here can name it one. */
#include "buildconf.h"

#include <stdlib.h>
#include <string.h>

#include "evidence.h"
#include "flakyctl.h"
#include "log.h"

/* By test id, for bsearch. */
static int
cmp_flips(const void *a, const void *b)
{
	const struct report_flips *x = a, *y = b;

	return x->test_id < y->test_id ? -1 : x->test_id > y->test_id;
}

static int
cmp_id(const void *a, const void *b)
{
	int64_t	 x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

void
evidence_load_flips(struct report_evidence *ev, struct flaky_store *s,
    const struct flaky_query *q, const struct flaky_test_row *rows,
    size_t n)
{
	struct flaky_flip_count *c = NULL;
	int64_t	*ids;
	size_t	 nc = 0;
	char	 err[512];

	ev->flip_since = q->since_ms;
	ev->flip_until = q->until_ms;
	if (flaky_store_flip_counts(s, 0, q->since_ms, q->until_ms, &c, &nc,
	    err, sizeof err) < 0) {
		fprintf(stderr, "flakyctl: flips: %s\n", err);
		return;
	}
	ids = xcalloc(n ? n : 1, sizeof *ids);
	for (size_t i = 0; i < n; i++)
		ids[i] = rows[i].test_id;
	qsort(ids, n, sizeof *ids, cmp_id);
	ev->flips = xcalloc(nc ? nc : 1, sizeof *ev->flips);
	/* the details of the tests the report has, newest first */
	for (size_t i = 0; i < nc; i++) {
		struct report_flips *f = &ev->flips[ev->nflips];

		if (bsearch(&c[i].test_id, ids, n, sizeof *ids, cmp_id) == NULL)
			continue;
		f->test_id = c[i].test_id;
		if (flaky_store_test_flips(s, f->test_id, q->since_ms,
		    q->until_ms, &f->v, &f->n, err, sizeof err) < 0) {
			fprintf(stderr, "flakyctl: flips: %s\n", err);
			break;
		}
		if (f->n > 0)
			ev->nflips++;
	}
	free(ids);
	free(c);
}

void
evidence_free_flips(struct report_evidence *ev)
{
	for (size_t i = 0; i < ev->nflips; i++)
		flaky_flips_free(ev->flips[i].v, ev->flips[i].n);
	free(ev->flips);
	ev->flips = NULL;
	ev->nflips = 0;
}

const struct report_flips *
evidence_flips(const struct report_evidence *ev, int64_t test_id)
{
	struct report_flips key = { .test_id = test_id };

	if (ev->nflips == 0)
		return NULL;
	return bsearch(&key, ev->flips, ev->nflips, sizeof *ev->flips,
	    cmp_flips);
}

int
evidence_flip_words(const struct report_evidence *ev, int64_t test_id,
    struct flaky_buf *b)
{
	const struct report_flips *f = evidence_flips(ev, test_id);

	if (f == NULL)
		return 0;
	flaky_flip_words(f->v, f->n, ev->flip_since, ev->flip_until,
	    FLAKY_FLIP_DETAILS, b);
	return 1;
}

void
evidence_json_flips(FILE *fp, const struct report_evidence *ev,
    int64_t test_id)
{
	const struct report_flips *f = evidence_flips(ev, test_id);

	fprintf(fp, ", \"flips\": %zu", f != NULL ? f->n : 0);
}

/* One flip as JSON: the revision, its counts, a failed and a passed run
 * with their CI jobs. */
static void
flip_json(FILE *fp, const struct flaky_flip *f)
{
	char	 t[32];

	fprintf(fp, "{\"revision\": ");
	json_string(fp, f->revision);
	fprintf(fp, ", \"fails\": %lld, \"passes\": %lld, \"first_run\": "
	    "\"%s\"", (long long)f->fails, (long long)f->passes,
	    flaky_format_time(f->first_ms, t, sizeof t));
	fprintf(fp, ", \"last_run\": \"%s\", \"failed_run_id\": %lld, "
	    "\"failed_job\": ", flaky_format_time(f->last_ms, t, sizeof t),
	    (long long)f->fail_run);
	json_string(fp, f->fail_job);
	fprintf(fp, ", \"failed_attempt\": ");
	if (f->fail_attempt > 0)
		fprintf(fp, "%d", f->fail_attempt);
	else
		fputs("null", fp);
	fprintf(fp, ", \"passed_run_id\": %lld, \"passed_job\": ",
	    (long long)f->pass_run);
	json_string(fp, f->pass_job);
	fprintf(fp, ", \"passed_attempt\": ");
	if (f->pass_attempt > 0)
		fprintf(fp, "%d}", f->pass_attempt);
	else
		fputs("null}", fp);
}

void
diag_json_flips(FILE *fp, const struct flaky_diagnosis *d)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	fprintf(fp, ", \"flips\": %zu, \"flip_revisions\": [", d->nflips);
	for (size_t i = 0; i < d->nflips; i++) {
		fputs(i ? ", " : "", fp);
		flip_json(fp, &d->flips[i]);
	}
	fputs("]", fp);
	flaky_flip_words(d->flips, d->nflips, d->since_ms, d->until_ms,
	    FLAKY_FLIP_DETAILS, &b);
	fprintf(fp, ", \"flip_summary\": ");
	json_string(fp, b.len ? flaky_buf_cstr(&b) : NULL);
	flaky_buf_free(&b);
}
