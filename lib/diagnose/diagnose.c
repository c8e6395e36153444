/* Why a test fails: the evidence of its stored runs folded into failure
 * modes, a signature, a suspected polluter, a verdict per revision and
 * timing. What needs many runs is decided here, at query time, over the
 * window (DESIGN.md "Data flow"). */
#include "buildconf.h"

#include "classify/classify.h"
#include "diagnose_int.h"
#include "stats/stats.h"

/* The name of a test id, or NULL. */
char *
diag_ref_name(const struct flaky_test_ref *refs, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (refs[i].id == id)
			return strdup(refs[i].name);
	return NULL;
}

/* Keep only the failed rows (moved into d->failed); frees the rest. */
static int
keep_failed(struct flaky_diagnosis *d, struct flaky_result_row *rows,
    size_t n)
{
	struct flaky_result_row *f;
	size_t	 k = 0;

	if ((f = calloc(d->failures ? (size_t)d->failures : 1,
	    sizeof *f)) == NULL) {
		flaky_result_rows_free(rows, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (FLAKY_FAILED(rows[i].outcome) &&
		    k < (size_t)d->failures) {
			f[k++] = rows[i];
			memset(&rows[i], 0, sizeof rows[i]);
		}
	}
	flaky_result_rows_free(rows, n);
	d->failed = f;
	d->nfailed = k;
	return 0;
}

/* What one pass over a target's results collects. */
struct scan_state {
	struct flaky_order_acc	*acc;
	struct flaky_run_order	 o;	/* the run being read */
	size_t			 cap;
	const int64_t		*wanted;	/* sorted */
	size_t			 nwanted;
	struct rowvec {
		struct flaky_result_row	*v;
		size_t			 n, cap;
	}			*rows;	/* per wanted test */
};

/* A copy of s, or NULL; *oom set when the copy failed. */
static char *
dup_or_null(const char *s, int *oom)
{
	char	*d;

	if (s == NULL)
		return NULL;
	if ((d = strdup(s)) == NULL)
		*oom = 1;
	return d;
}

/* flaky_store_scan_target callback: the run order and the wanted rows. */
static int
scan_cb(const struct flaky_scan_row *x, void *arg)
{
	struct scan_state *st = arg;
	struct flaky_result_row *c;
	struct rowvec *rv;
	const int64_t *hit;
	int	 r, oom = 0;

	if (st->o.n > 0 && x->r.run_id != st->o.run_id) {
		if ((r = flaky_order_add_run(st->acc, &st->o)) < 0)
			return r;
		st->o.n = 0;
	}
	st->o.run_id = x->r.run_id;
	if (st->o.n == st->cap) {
		size_t	 cap = st->cap ? st->cap * 2 : 256;
		void	*p;

		if ((p = realloc(st->o.test_ids, cap * sizeof *st->o.test_ids))
		    == NULL)
			return -ENOMEM;
		st->o.test_ids = p;
		if ((p = realloc(st->o.outcomes, cap * sizeof *st->o.outcomes))
		    == NULL)
			return -ENOMEM;
		st->o.outcomes = p;
		st->cap = cap;
	}
	st->o.test_ids[st->o.n] = x->test_id;
	st->o.outcomes[st->o.n++] = x->r.outcome;
	if (!x->wanted || (hit = bsearch(&x->test_id, st->wanted, st->nwanted,
	    sizeof *st->wanted, diag_cmp_i64)) == NULL)
		return 0;
	rv = &st->rows[hit - st->wanted];
	if (rv->n == rv->cap) {
		size_t	 cap = rv->cap ? rv->cap * 2 : 64;
		void	*p = realloc(rv->v, cap * sizeof *rv->v);

		if (p == NULL)
			return -ENOMEM;
		rv->v = p;
		rv->cap = cap;
	}
	c = &rv->v[rv->n++];
	*c = x->r;
	c->revision = dup_or_null(x->r.revision, &oom);
	c->seed = dup_or_null(x->r.seed, &oom);
	c->runner = dup_or_null(x->r.runner, &oom);
	c->box = dup_or_null(x->r.box, &oom);
	c->perturbation = dup_or_null(x->r.perturbation, &oom);
	c->signature = FLAKY_FAILED(x->r.outcome) ?
	    dup_or_null(x->r.signature, &oom) : NULL;
	c->normalized = FLAKY_FAILED(x->r.outcome) ?
	    dup_or_null(x->r.normalized, &oom) : NULL;
	c->message = FLAKY_FAILED(x->r.outcome) ?
	    dup_or_null(x->r.message, &oom) : NULL;
	return oom ? -ENOMEM : 0;
}

/* One pass over a target's results for up to FLAKY_ORDER_VICTIMS_MAX of
 * its tests (sorted ids): their evidence and their polluters. */
static int
diagnose_target(struct flaky_store *s, int64_t target_id,
    const struct flaky_query *q, const int64_t *ids, size_t n,
    struct flaky_diagnosis **d, const struct flaky_test_ref *refs,
    size_t nrefs, char *err, size_t errlen)
{
	struct scan_state st;
	int	 r;

	memset(&st, 0, sizeof st);
	st.wanted = ids;
	st.nwanted = n;
	if ((st.rows = calloc(n, sizeof *st.rows)) == NULL ||
	    flaky_order_new(ids, n, &st.acc) < 0) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	r = flaky_store_scan_target(s, target_id, q, ids, n, scan_cb, &st,
	    err, errlen);
	if (r == 0 && st.o.n > 0)
		r = flaky_order_add_run(st.acc, &st.o);
	if (r == -ENOMEM)
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
	if (r < 0)
		goto out;
	for (size_t k = 0; k < n; k++) {
		struct flaky_diagnosis *x = d[k];

		if (flaky_diagnose_rows(x, st.rows[k].v, st.rows[k].n) < 0) {
			r = flaky_error(err, errlen, ENOMEM, "out of memory");
			goto out;
		}
		/* keep_failed takes the rows whatever it returns */
		r = keep_failed(x, st.rows[k].v, st.rows[k].n);
		st.rows[k].v = NULL;
		st.rows[k].n = 0;
		if (r < 0) {
			r = flaky_error(err, errlen, ENOMEM, "out of memory");
			goto out;
		}
		if (x->failures > 0 && x->failures < x->runs &&
		    flaky_order_result(st.acc, k, &x->order) == 1) {
			/* the order is the more specific evidence: it wins
			 * over RACE from timing */
			if (x->order.polluter_id != 0)
				x->polluter = diag_ref_name(refs, nrefs,
				    x->order.polluter_id);
			else
				x->depends_on = diag_ref_name(refs, nrefs,
				    x->order.provider_id);
			x->signature = flaky_signature_name(
			    FLAKY_SIG_ORDER_DEPENDENT);
			x->race_timing = 0;
		}
	}
out:
	for (size_t k = 0; st.rows != NULL && k < n; k++)
		flaky_result_rows_free(st.rows[k].v, st.rows[k].n);
	free(st.rows);
	free(st.o.test_ids);
	free(st.o.outcomes);
	flaky_order_free(st.acc);
	return r;
}

struct by_id {
	int64_t	 id, target_id;
	size_t	 at;	/* index in the caller's array */
};

/* Tests grouped by target, then by id. */
static int
cmp_by_target(const void *a, const void *b)
{
	const struct by_id *x = a, *y = b;

	if (x->target_id != y->target_id)
		return x->target_id < y->target_id ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The test's rates per perturbation, and RACE when it fails more under
 * stress and nothing more specific (its order, a message) says why. */
static int
diagnose_stress(struct flaky_store *s, const struct flaky_query *q,
    struct flaky_diagnosis *d, char *err, size_t errlen)
{
	int	 r;

	if ((r = flaky_store_perturb_stats(s, q, d->test_id, &d->perturbs,
	    &d->nperturbs, err, errlen)) < 0)
		return r;
	if (!flaky_stress_sensitive(d->perturbs, d->nperturbs, &d->stress))
		return 0;
	if (d->signature != NULL && d->polluter == NULL &&
	    d->depends_on == NULL && !d->passes_alone && !d->fails_alone &&
	    strcmp(flaky_stress_signature(d->signature), d->signature) != 0) {
		d->signature = flaky_stress_signature(d->signature);
		d->stress_race = 1;
		d->race_timing = 0;
	}
	return 0;
}

/* The polluters flakyctl polluter stored for the test: confirmed. */
static int
diagnose_polluters(struct flaky_store *s, struct flaky_diagnosis *d,
    char *err, size_t errlen)
{
	struct flaky_polluter_row row;
	char	*c, *e;
	size_t	 n = 1;
	int	 r;

	if ((r = flaky_store_polluter_get(s, d->test_id, &row, err,
	    errlen)) <= 0)
		return r;
	for (c = row.members; c != NULL && *c; c++)
		n += *c == '\n';
	if ((d->polluters = calloc(n, sizeof *d->polluters)) == NULL)
		goto oom;
	for (c = row.members; c != NULL && *c; c = e) {
		if ((e = strchr(c, '\n')) != NULL)
			*e++ = '\0';
		if ((d->polluters[d->npolluters++] = strdup(c)) == NULL)
			goto oom;
	}
	d->polluters_minimal = row.minimal;
	flaky_polluter_row_clear(&row);
	return 0;
oom:
	flaky_polluter_row_clear(&row);
	return flaky_error(err, errlen, ENOMEM, "out of memory");
}

/* The revisions it failed and passed on in the window (issue 29). */
static int
diagnose_flips(struct flaky_store *s, const struct flaky_query *q,
    struct flaky_diagnosis *d, char *err, size_t errlen)
{
	d->since_ms = q->since_ms;
	d->until_ms = q->until_ms;
	return flaky_store_test_flips(s, d->test_id, q->since_ms, q->until_ms,
	    &d->flips, &d->nflips, err, errlen);
}

/* Why a test has no result in the window: its target's runs there, and
 * how many of them were incomplete (their outcomes count for nothing). */
static int
diagnose_unrun(struct flaky_store *s, const struct flaky_query *q,
    struct flaky_diagnosis *d, char *err, size_t errlen)
{
	struct flaky_query tq = *q;
	struct flaky_run_counts rc;
	int	 r;

	d->target_runs = d->target_incomplete = -1;
	if (d->runs > 0 || d->skips > 0)
		return 0;
	tq.target = d->target;
	if ((r = flaky_store_run_counts(s, &tq, &rc, err, errlen)) < 0)
		return r;
	d->target_runs = rc.runs;
	d->target_incomplete = rc.incomplete;
	if (rc.incomplete > 0)
		return flaky_incomplete_why(s, d->target_id, q,
		    &d->incomplete_why, err, errlen);
	return 0;
}

int
flaky_incomplete_why(struct flaky_store *s, int64_t target_id,
    const struct flaky_query *q, char **ret, char *err, size_t errlen)
{
	struct flaky_run_view *v;
	unsigned kinds = flaky_query_kinds(q);
	size_t	 n;
	int	 r;

	*ret = NULL;
	if ((r = flaky_store_runs_recent(s, target_id, q->box,
	    FLAKY_WHY_RUNS, &v, &n, err, errlen)) < 0)
		return r;
	for (size_t i = 0; i < n && *ret == NULL; i++) {
		int	 kind = -1;

		for (int k = FLAKY_KIND_SUITE; k <= FLAKY_KIND_INGESTED; k++)
			if (strcmp(v[i].kind, flaky_run_kind_name(k)) == 0)
				kind = k;
		if (v[i].incomplete == NULL || kind < 0 ||
		    !(kinds & FLAKY_KIND_MASK(kind)) ||
		    v[i].started_ms < q->since_ms ||
		    v[i].started_ms >= q->until_ms)
			continue;
		if ((*ret = strdup(v[i].incomplete)) == NULL)
			r = flaky_error(err, errlen, ENOMEM, "out of memory");
	}
	flaky_run_views_free(v, n);
	return r;
}

/* Diagnose n tests, one pass per target and chunk of tests. */
int
flaky_diagnose_tests(struct flaky_store *s, const int64_t *ids, size_t n,
    const struct flaky_query *q, struct flaky_diagnosis **ret, char *err,
    size_t errlen)
{
	struct flaky_test_ref *refs = NULL;
	struct by_id	*b = NULL;
	struct flaky_diagnosis *chunk_d[FLAKY_ORDER_VICTIMS_MAX];
	int64_t		 chunk_id[FLAKY_ORDER_VICTIMS_MAX];
	size_t		 nrefs = 0;
	int		 r;

	memset(ret, 0, n * sizeof *ret);
	if ((r = flaky_store_tests(s, NULL, &refs, &nrefs, err, errlen)) < 0)
		return r;
	if ((b = calloc(n ? n : 1, sizeof *b)) == NULL)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		const struct flaky_test_ref *t = NULL;
		struct flaky_diagnosis *d;

		for (size_t k = 0; k < nrefs && t == NULL; k++)
			if (refs[k].id == ids[i])
				t = &refs[k];
		if (t == NULL) {
			r = flaky_error(err, errlen, ENOENT, "no test with id "
			    "%lld", (long long)ids[i]);
			goto fail;
		}
		if ((d = ret[i] = calloc(1, sizeof *d)) == NULL)
			goto oom;
		d->test_id = ids[i];
		d->target_id = t->target_id;
		if ((d->target = strdup(t->target)) == NULL ||
		    (d->test = strdup(t->name)) == NULL)
			goto oom;
		if ((r = flaky_store_target_info(s, d->target_id, &d->command,
		    &d->dir, err, errlen)) < 0)
			goto fail;
		b[i].id = ids[i];
		b[i].target_id = t->target_id;
		b[i].at = i;
	}
	if (n > 1)
		qsort(b, n, sizeof *b, cmp_by_target);
	/* one pass per target and up to FLAKY_ORDER_VICTIMS_MAX tests */
	for (size_t i = 0; i < n; ) {
		size_t	 k = 0;

		while (i + k < n && k < FLAKY_ORDER_VICTIMS_MAX &&
		    b[i + k].target_id == b[i].target_id &&
		    (k == 0 || b[i + k].id != b[i + k - 1].id)) {
			chunk_id[k] = b[i + k].id;
			chunk_d[k] = ret[b[i + k].at];
			k++;
		}
		if (k == 0) {
			/* the same test asked twice: diagnose it again */
			chunk_id[0] = b[i].id;
			chunk_d[0] = ret[b[i].at];
			k = 1;
		}
		if ((r = diagnose_target(s, b[i].target_id, q, chunk_id, k,
		    chunk_d, refs, nrefs, err, errlen)) < 0)
			goto fail;
		i += k;
	}
	/* one box before stress: it says why the test fails there */
	if ((r = diag_boxes(s, q, ids, n, ret, err, errlen)) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if ((r = diagnose_stress(s, q, ret[i], err, errlen)) < 0 ||
		    (r = diag_seeds(s, q, ret[i], err, errlen)) < 0 ||
		    (r = diagnose_unrun(s, q, ret[i], err, errlen)) < 0 ||
		    (r = diagnose_polluters(s, ret[i], err, errlen)) < 0 ||
		    (r = diagnose_flips(s, q, ret[i], err, errlen)) < 0 ||
		    (r = flaky_store_test_hangs(s, ret[i]->test_id, q,
		    &ret[i]->hangs, err, errlen)) < 0)
			goto fail;
	free(b);
	flaky_test_refs_free(refs, nrefs);
	return 0;
oom:
	r = flaky_error(err, errlen, ENOMEM, "out of memory");
fail:
	for (size_t i = 0; i < n; i++) {
		flaky_diagnosis_free(ret[i]);
		ret[i] = NULL;
	}
	free(b);
	flaky_test_refs_free(refs, nrefs);
	return r;
}

/* Diagnose one test. */
int
flaky_diagnose_test(struct flaky_store *s, int64_t test_id,
    const struct flaky_query *q, struct flaky_diagnosis **ret, char *err,
    size_t errlen)
{
	return flaky_diagnose_tests(s, &test_id, 1, q, ret, err, errlen);
}

/* The rule of verify applied to quarantine: passes in a row that a test
 * still failing at its rate p reaches with a chance of at most 5%
 * (flakyctl quarantine list, flakyd's release alerts). */
long long
flaky_release_after(struct flaky_store *s, int64_t test_id, long long fixed,
    double *p)
{
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0, 0 };
	struct flaky_diagnosis *d;
	char	 err[1024];
	int64_t	 need = -1;

	*p = -1;
	if (fixed > 0)
		return fixed;
	if (flaky_diagnose_test(s, test_id, &q, &d, err, sizeof err) < 0)
		return FLAKY_RELEASE_AFTER;
	if (d->failures > 0 && d->runs > 0) {
		*p = (double)d->failures / (double)d->runs;
		need = flaky_passes_needed(*p, FLAKY_PROOF_ALPHA);
	}
	flaky_diagnosis_free(d);
	return need > 0 ? need : FLAKY_RELEASE_AFTER;
}
