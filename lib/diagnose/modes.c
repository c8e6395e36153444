/* One test's results folded: its state and transitions per revision, the
 * verdict at the latest, timing (medians, early failures, whether the
 * outcome goes with the duration) and its failure modes and signatures. */
#include "buildconf.h"

#include <math.h>

#include "classify/classify.h"
#include "diagnose_int.h"
#include "stats/stats.h"

/* Name of an enum flaky_rev_state. */
const char *
flaky_rev_state_name(int s)
{
	switch (s) {
	case FLAKY_REV_FLAKY: return "flaky";
	case FLAKY_REV_BROKEN: return "broken";
	default: return "stable";
	}
}

/* Name of an enum flaky_transition, NULL for none. */
const char *
flaky_transition_name(int t)
{
	switch (t) {
	case FLAKY_TRANS_FIXED: return "fixed";
	case FLAKY_TRANS_REGRESSED: return "regressed";
	default: return NULL;
	}
}

/* Name of an enum flaky_verdict. */
const char *
flaky_verdict_name(int v)
{
	switch (v) {
	case FLAKY_VERDICT_FLAKY: return "flaky";
	case FLAKY_VERDICT_BROKEN: return "broken";
	case FLAKY_VERDICT_FIXED: return "fixed";
	case FLAKY_VERDICT_SKIPPED: return "skipped";
	case FLAKY_VERDICT_NONE: return "no evidence";
	default: return "stable";
	}
}

/* Two revisions are the same (NULL only equals NULL). */
static int
same_rev(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Outcomes that count as a run of the test (not skips). */
static int
counts(int outcome)
{
	return FLAKY_FAILED(outcome) || outcome == FLAKY_PASS ||
	    outcome == FLAKY_XPASS;
}

/* Per revision, in the order first seen (rows come oldest run first). */
static int
fold_revisions(struct flaky_diagnosis *d, const struct flaky_result_row *rows,
    size_t n)
{
	struct flaky_rev_stat *prev = NULL, *last = NULL;
	size_t	 cap = 0;
	int	 ever_failed = 0;

	for (size_t i = 0; i < n; i++) {
		struct flaky_rev_stat *rs = NULL;

		if (!counts(rows[i].outcome))
			continue;
		/* the newest revision first: runs come in order */
		for (size_t k = d->nrevs; k-- > 0; )
			if (same_rev(d->revs[k].revision, rows[i].revision)) {
				rs = &d->revs[k];
				break;
			}
		if (rs == NULL) {
			if (d->nrevs == cap) {
				size_t	 c = cap ? cap * 2 : 8;
				void	*p = realloc(d->revs, c * sizeof *d->revs);

				if (p == NULL)
					return -ENOMEM;
				d->revs = p;
				cap = c;
			}
			rs = &d->revs[d->nrevs++];
			memset(rs, 0, sizeof *rs);
			if (rows[i].revision != NULL && (rs->revision =
			    strdup(rows[i].revision)) == NULL)
				return -ENOMEM;
			rs->first_ms = rows[i].started_ms;
		}
		rs->runs++;
		rs->failures += FLAKY_FAILED(rows[i].outcome);
		rs->last_ms = rows[i].started_ms;
	}
	for (size_t k = 0; k < d->nrevs; k++) {
		struct flaky_rev_stat *rs = &d->revs[k];

		rs->state = rs->failures == 0 ? FLAKY_REV_STABLE :
		    rs->failures == rs->runs ? FLAKY_REV_BROKEN :
		    FLAKY_REV_FLAKY;
		flaky_wilson(rs->failures, rs->runs, FLAKY_Z95, &rs->ci_low,
		    &rs->ci_high);
		if (prev != NULL && prev->state != FLAKY_REV_STABLE &&
		    rs->state == FLAKY_REV_STABLE)
			rs->transition = FLAKY_TRANS_FIXED;
		else if (prev != NULL && prev->state == FLAKY_REV_STABLE &&
		    rs->state != FLAKY_REV_STABLE)
			rs->transition = FLAKY_TRANS_REGRESSED;
		if (rs->failures > 0)
			ever_failed = 1;
		prev = last = rs;
	}
	if (last == NULL)
		/* not one counted run: no verdict but why */
		d->verdict = d->skips > 0 ? FLAKY_VERDICT_SKIPPED :
		    FLAKY_VERDICT_NONE;
	else if (!ever_failed)
		d->verdict = FLAKY_VERDICT_STABLE;
	else if (last->state == FLAKY_REV_BROKEN)
		d->verdict = FLAKY_VERDICT_BROKEN;
	else if (last->state == FLAKY_REV_FLAKY)
		d->verdict = FLAKY_VERDICT_FLAKY;
	else
		d->verdict = FLAKY_VERDICT_FIXED;
	return 0;
}

/* The q-quantile of sorted values by the nearest-rank rule, in ms. */
static double
quantile_ms(const int64_t *v, size_t n, double q)
{
	size_t	 rank;

	if (n == 0)
		return NAN;
	rank = (size_t)ceil(q * (double)n);
	if (rank == 0)
		rank = 1;
	return (double)v[rank - 1] / 1000.0;
}

/* Median and p90 of failing and passing durations; early or near a limit;
 * whether the outcome goes with the duration. */
void
flaky_timing_fold(struct flaky_timing *t, int64_t *pass, size_t np,
    int64_t *fail, size_t nf)
{
	/* either may be NULL when empty (a report's test with no pass) */
	if (np > 0)
		qsort(pass, np, sizeof *pass, diag_cmp_i64);
	if (nf > 0)
		qsort(fail, nf, sizeof *fail, diag_cmp_i64);
	t->n_pass = (int64_t)np;
	t->n_fail = (int64_t)nf;
	t->median_pass = quantile_ms(pass, np, .5);
	t->p90_pass = quantile_ms(pass, np, .9);
	t->median_fail = quantile_ms(fail, nf, .5);
	t->p90_fail = quantile_ms(fail, nf, .9);
	t->min_fail = nf ? (double)fail[0] / 1000.0 : NAN;
	t->max_fail = nf ? (double)fail[nf - 1] / 1000.0 : NAN;
	/* Early: failures are over before a typical pass is half done (an
	 * assertion or a refused connection, not a wait). */
	t->early = np > 0 && nf > 0 && t->median_pass >= 5 &&
	    t->p90_fail * 2 <= t->median_pass;
	/* Near a limit: failures take about one time, at least 50 ms and as
	 * long as 90% of passes or longer (a timeout fired). The median and
	 * p90 rather than min and max: on a loaded machine a timer fires late
	 * now and then, and one late failure must not hide the cluster. */
	t->near_limit = nf >= 2 && t->median_fail >= 50 &&
	    t->p90_fail <= 2 * t->median_fail &&
	    (np == 0 || t->median_fail >= t->p90_pass);
	/* Varies with timing: failing and passing durations differ beyond
	 * chance (a few of each say nothing), and not because a limit cut the
	 * failures off (that is a timeout, not a race). */
	t->mw_p = NAN;
	t->varies = 0;
	if (np >= FLAKY_TIMING_MIN && nf >= FLAKY_TIMING_MIN) {
		t->mw_p = flaky_mann_whitney(fail, nf, pass, np, NULL);
		t->varies = t->mw_p < FLAKY_TIMING_ALPHA && !t->near_limit;
	}
}

/* The known durations of passing and failing results into d->timing. */
static int
fold_timing(struct flaky_diagnosis *d, const struct flaky_result_row *rows,
    size_t n)
{
	int64_t	*pass, *fail;
	size_t	 np = 0, nf = 0;

	pass = malloc((n ? n : 1) * sizeof *pass);
	fail = malloc((n ? n : 1) * sizeof *fail);
	if (pass == NULL || fail == NULL) {
		free(pass);
		free(fail);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (rows[i].duration_us < 0)
			continue;
		if (FLAKY_FAILED(rows[i].outcome))
			fail[nf++] = rows[i].duration_us;
		else if (rows[i].outcome == FLAKY_PASS ||
		    rows[i].outcome == FLAKY_XPASS)
			pass[np++] = rows[i].duration_us;
	}
	flaky_timing_fold(&d->timing, pass, np, fail, nf);
	free(pass);
	free(fail);
	return 0;
}

/* RACE from timing: no message said more than UNKNOWN, but the failures
 * go with their durations (DESIGN.md: "outcome varies with timing"). */
int
diag_race_from_timing(const char *dominant, const struct flaky_timing *t)
{
	return dominant != NULL && strcmp(dominant,
	    flaky_signature_name(FLAKY_SIG_UNKNOWN)) == 0 && t->varies;
}

/* Failure modes, most frequent first, then the newest. */
static int
cmp_modes(const void *a, const void *b)
{
	const struct flaky_failure_mode *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->last_run_id > y->last_run_id ? -1 :
	    x->last_run_id < y->last_run_id;
}

/* Signatures, most frequent first, then by name. */
static int
cmp_tally(const void *a, const void *b)
{
	const struct flaky_sig_tally *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Add n to a signature's count in a tally list. */
int
diag_tally_add(struct flaky_sig_tally **v, size_t *nv, const char *name,
    int64_t n)
{
	void	*p;

	for (size_t i = 0; i < *nv; i++)
		if (strcmp((*v)[i].name, name) == 0) {
			(*v)[i].count += n;
			return 0;
		}
	if ((p = realloc(*v, (*nv + 1) * sizeof **v)) == NULL)
		return -ENOMEM;
	*v = p;
	if (((*v)[*nv].name = strdup(name)) == NULL)
		return -ENOMEM;
	(*v)[(*nv)++].count = n;
	return 0;
}

/* Failure modes by fingerprint and signatures with counts. */
static int
fold_modes(struct flaky_diagnosis *d, const struct flaky_result_row *rows,
    size_t n)
{
	size_t	 cap = 0;
	int	 r;

	for (size_t i = 0; i < n; i++) {
		const struct flaky_result_row *x = &rows[i];
		struct flaky_failure_mode *m = NULL;
		const char *sig = x->signature ? x->signature : "UNKNOWN";

		if (!FLAKY_FAILED(x->outcome))
			continue;
		if ((r = diag_tally_add(&d->sigs, &d->nsigs, sig, 1)) < 0)
			return r;
		for (size_t k = 0; k < d->nmodes; k++)
			if (d->modes[k].fingerprint == x->fingerprint) {
				m = &d->modes[k];
				break;
			}
		if (m == NULL) {
			if (d->nmodes == cap) {
				size_t	 c = cap ? cap * 2 : 8;
				void	*p = realloc(d->modes, c *
				    sizeof *d->modes);

				if (p == NULL)
					return -ENOMEM;
				d->modes = p;
				cap = c;
			}
			m = &d->modes[d->nmodes++];
			memset(m, 0, sizeof *m);
			m->fingerprint = x->fingerprint;
			if (x->normalized != NULL && (m->normalized =
			    strdup(x->normalized)) == NULL)
				return -ENOMEM;
		}
		m->count++;
		m->last_run_id = x->run_id;
		free(m->signature);
		free(m->example);
		m->signature = strdup(sig);
		m->example = x->message ? strdup(x->message) : NULL;
		if (m->signature == NULL || (x->message && m->example == NULL))
			return -ENOMEM;
		free(d->seed);
		free(d->runner);
		d->seed = x->seed ? strdup(x->seed) : NULL;
		d->runner = x->runner ? strdup(x->runner) : NULL;
	}
	if (d->nmodes > 1)
		qsort(d->modes, d->nmodes, sizeof *d->modes, cmp_modes);
	if (d->nsigs > 1)
		qsort(d->sigs, d->nsigs, sizeof *d->sigs, cmp_tally);
	d->signature = d->nsigs > 0 ? d->sigs[0].name : NULL;
	d->race_timing = 0;
	if (diag_race_from_timing(d->signature, &d->timing)) {
		d->signature = flaky_signature_name(FLAKY_SIG_RACE);
		d->race_timing = 1;
	}
	if (d->passes_alone || d->fails_alone) {
		d->signature = flaky_signature_name(FLAKY_SIG_ORDER_DEPENDENT);
		d->race_timing = 0;
	}
	return 0;
}

/* Fold one test's results (oldest first) into d. */
int
flaky_diagnose_rows(struct flaky_diagnosis *d,
    const struct flaky_result_row *rows, size_t n)
{
	int	 r;

	d->runs = d->failures = d->skips = 0;
	for (size_t i = 0; i < n; i++) {
		if (counts(rows[i].outcome)) {
			d->runs++;
			d->failures += FLAKY_FAILED(rows[i].outcome);
		} else
			d->skips++;
		if (i == 0 || rows[i].started_ms < d->first_ms)
			d->first_ms = rows[i].started_ms;
		if (i == 0 || rows[i].started_ms > d->last_ms)
			d->last_ms = rows[i].started_ms;
	}
	/* Alone (flakyctl confirm) against in the suite: passing alone every
	 * time while failing with the others is order dependence. */
	d->alone_runs = d->alone_failures = 0;
	for (size_t i = 0; i < n; i++) {
		if (!counts(rows[i].outcome))
			continue;
		if (rows[i].kind == FLAKY_KIND_ALONE) {
			d->alone_runs++;
			d->alone_failures += FLAKY_FAILED(rows[i].outcome);
		}
	}
	d->suite_runs = d->runs - d->alone_runs;
	d->suite_failures = d->failures - d->alone_failures;
	d->alone_p = flaky_fisher_greater(d->suite_failures, d->suite_runs,
	    d->failures, d->runs);
	d->passes_alone = d->alone_runs > 0 && d->alone_failures == 0 &&
	    d->suite_failures > 0 && d->alone_p < FLAKY_ALONE_ALPHA;
	/* Failing alone every time while passing with the others: all the
	 * passes in the suite's runs by chance? */
	d->alone_pass_p = flaky_fisher_greater(d->suite_runs -
	    d->suite_failures, d->suite_runs, d->runs - d->failures, d->runs);
	d->fails_alone = d->alone_runs > 0 &&
	    d->alone_failures == d->alone_runs &&
	    d->suite_failures < d->suite_runs &&
	    d->alone_pass_p < FLAKY_ALONE_ALPHA;
	if ((r = fold_revisions(d, rows, n)) < 0 ||
	    (r = fold_timing(d, rows, n)) < 0 ||
	    (r = fold_modes(d, rows, n)) < 0)
		return r;
	return 0;
}

/* Free a diagnosis; NULL is fine. */
void
flaky_diagnosis_free(struct flaky_diagnosis *d)
{
	if (d == NULL)
		return;
	free(d->target);
	free(d->test);
	for (size_t i = 0; i < d->nsigs; i++)
		free(d->sigs[i].name);
	free(d->sigs);
	for (size_t i = 0; i < d->nmodes; i++) {
		free(d->modes[i].signature);
		free(d->modes[i].normalized);
		free(d->modes[i].example);
	}
	free(d->modes);
	free(d->polluter);
	for (size_t i = 0; i < d->npolluters; i++)
		free(d->polluters[i]);
	free(d->polluters);
	free(d->depends_on);
	free(d->incomplete_why);
	for (size_t i = 0; i < d->nrevs; i++)
		free(d->revs[i].revision);
	free(d->revs);
	free(d->seed);
	free(d->runner);
	free(d->command);
	free(d->dir);
	flaky_result_rows_free(d->failed, d->nfailed);
	flaky_perturb_rows_free(d->perturbs, d->nperturbs);
	flaky_hangs_clear(&d->hangs);
	free(d->boxes);
	flaky_flips_free(d->flips, d->nflips);
	flaky_headroom_sites_free(d->headroom, d->nheadroom);
	free(d);
}
