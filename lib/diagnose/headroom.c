/* Tolerance headroom (issue 34; docs/triage.md "Tolerance headroom"):
 * per call site of a test's approximate assertions, how much of its bound
 * the runs of a seed sweep used, and a generalized extreme value fit of
 * the margin towards failure (lib/stats/gev.c): how often the bound would
 * be crossed, and which bound would hold. */
#include "buildconf.h"
/* its own header first: it must stand alone */
#include "diagnose/diagnose.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose_int.h"
#include "parse/parse.h"

/* Does the kind bound the quantity from above (tol, x < b)? */
static int
upper(const char *kind)
{
	return kind[0] == 't' || kind[0] == 'l';
}

/* The margin towards failure: larger is worse, failing past the site's
 * B (1 for tol, 0 else). */
static double
towards(const char *kind, double q, double b)
{
	if (kind[0] == 't')
		return q;
	return upper(kind) ? q - b : b - q;
}

/* The share of the bound a quantity used, NAN where signs forbid. */
static double
share(const char *kind, double q, double b)
{
	if (kind[0] == 't')
		return q;
	if (upper(kind))
		return b > 0 && q >= 0 ? q / b : NAN;
	return b > 0 && q > 0 ? b / q : NAN;
}

/* qsort order of doubles. */
static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The p-quantile of sorted x[n] (type 7, as numpy's default). */
static double
quantile(const double *x, size_t n, double p)
{
	double	 h = p * (double)(n - 1), f = floor(h);
	size_t	 i = (size_t)f;

	if (i + 1 >= n)
		return x[n - 1];
	return x[i] + (h - f) * (x[i + 1] - x[i]);
}

/* One "name=value" list scaled by k: decimal= and places= move by
 * -log10(k) digits (floor: the new bound is at least k times wider). */
static void
scale_tolerance(const char *tol, double k, char *out, size_t len)
{
	char	 copy[256], *save = NULL, *item;
	size_t	 w = 0;

	out[0] = '\0';
	if (tol == NULL || snprintf(copy, sizeof copy, "%s", tol) >=
	    (int)sizeof copy)
		return;
	for (item = strtok_r(copy, ", ", &save); item != NULL && w < len;
	    item = strtok_r(NULL, ", ", &save)) {
		char	*eq = strchr(item, '='), *end;
		double	 v;

		if (eq == NULL)
			continue;
		*eq = '\0';
		v = strtod(eq + 1, &end);
		if (*end != '\0' || !isfinite(v) || v == 0)
			continue;
		if (strcmp(item, "decimal") == 0 || strcmp(item, "places") ==
		    0)
			w += (size_t)snprintf(out + w, len - w, "%s%s=%.0f",
			    w ? ", " : "", item, floor(v - log10(k)));
		else
			w += (size_t)snprintf(out + w, len - w, "%s%s=%.2g",
			    w ? ", " : "", item, v * k);
	}
}

/* How many distinct values z[n] holds (sorted). */
static size_t
distinct(const double *z, size_t n)
{
	size_t	 k = n > 0;

	for (size_t i = 1; i < n; i++)
		k += z[i] != z[i - 1];
	return k;
}

/* The tail of z[n]: Gumbel's (shape 0), unless a shape above 0 fits
 * better than chance would (likelihood ratio, chi-squared with one
 * degree of freedom at 95%): with tens of runs a free shape follows the
 * noise of the few largest values. 0, or what flaky_gev_fit gives. */
static int
fit_tail(const double *z, size_t n, struct flaky_gev *g)
{
	struct flaky_gev free_shape;
	int	 r;

	if ((r = flaky_gumbel_fit(z, n, FLAKY_GEV_CENSOR, g)) < 0)
		return flaky_gev_fit_min(z, n, FLAKY_GEV_CENSOR,
		    FLAKY_HEADROOM_XI_MIN, g);
	/* chi-squared with one degree of freedom at 95% */
	if (flaky_gev_fit_min(z, n, FLAKY_GEV_CENSOR, FLAKY_HEADROOM_XI_MIN,
	    &free_shape) == 0 && 2 * (g->nll - free_shape.nll) > 3.8414588)
		*g = free_shape;
	return 0;
}

/* The fit of the site whose margins are z[n] (sorted), its rate of
 * failure and the bound it suggests. Failures seen often enough are
 * counted rather than extrapolated: the fit is for the tail runs have
 * not reached. A margin of a few values (a counter, a step) has no tail
 * to fit. */
static void
fit_site(struct flaky_headroom_site *st, const double *z, size_t n)
{
	double	 B = st->kind[0] == 't' ? 1 : 0, z6, lo, hi;
	int	 finite = 1;

	for (size_t i = 0; i < n; i++)
		finite &= isfinite(z[i]);
	st->rate = st->rate_lo = st->rate_hi = st->suggest = NAN;
	st->distinct = distinct(z, n);
	if (st->constant) {
		/* seeded by the test itself: its margin never moves */
		st->rate = st->fails > 0 ? 1 : 0;
		st->rate_lo = st->rate_hi = st->rate;
		return;
	}
	if (n >= FLAKY_GEV_MIN_RUNS && finite &&
	    st->distinct >= FLAKY_HEADROOM_MIN_VALUES &&
	    fit_tail(z, n, &st->gev) == 0) {
		st->fitted = 1;
		st->rate = flaky_gev_exceed(&st->gev, B);
		if (flaky_gev_exceed_interval(z, n, &st->gev, B, &lo,
		    &hi) == 0) {
			st->rate_lo = lo;
			st->rate_hi = hi;
		}
		z6 = flaky_gev_quantile(&st->gev, FLAKY_HEADROOM_TARGET);
		if (st->kind[0] == 't') {
			st->suggest = z6;
			if (z6 > 0)
				scale_tolerance(st->tolerance, z6,
				    st->suggest_text,
				    sizeof st->suggest_text);
		} else {
			st->suggest = upper(st->kind) ? st->bound + z6 :
			    st->bound - z6;
			snprintf(st->suggest_text, sizeof st->suggest_text,
			    "x %s %.3g", st->kind[0] == 'l' ? (st->kind[1] ==
			    't' ? "<" : "<=") : (st->kind[1] == 't' ? ">" :
			    ">="), st->suggest);
		}
	}
	if (st->fails >= FLAKY_HEADROOM_COUNTED || (!st->fitted &&
	    st->fails > 0 && n >= FLAKY_GEV_MIN_RUNS)) {
		st->counted = 1;
		st->rate = (double)st->fails / (double)n;
		flaky_wilson((int64_t)st->fails, (int64_t)n, FLAKY_Z95,
		    &st->rate_lo, &st->rate_hi);
	}
}

/* The site of rows[from, to). */
static int
one_site(const struct flaky_headroom_row *rows, size_t from, size_t to,
    struct flaky_headroom_site *st)
{
	size_t	 n = to - from, k = 0;
	double	*z, *u;
	const struct flaky_headroom_row *last = &rows[to - 1];

	memset(st, 0, sizeof *st);
	if ((st->path = strdup(last->path)) == NULL ||
	    (last->tolerance != NULL && (st->tolerance =
	    strdup(last->tolerance)) == NULL) || (last->assertion != NULL &&
	    (st->assertion = strdup(last->assertion)) == NULL))
		return -ENOMEM;
	st->line = last->line;
	memcpy(st->kind, last->kind, sizeof st->kind);
	st->bound = last->bound;
	st->n = n;
	z = calloc(n, sizeof *z);
	u = calloc(n, sizeof *u);
	if (z == NULL || u == NULL) {
		free(z);
		free(u);
		return -ENOMEM;
	}
	st->constant = 1;
	for (size_t i = 0; i < n; i++) {
		const struct flaky_headroom_row *r = &rows[from + i];
		double	 s = share(r->kind, r->quantity, r->bound);

		z[i] = towards(r->kind, r->quantity, r->bound);
		st->fails += flaky_headroom_fails(r->kind, r->quantity,
		    r->bound);
		if (z[i] != z[0])
			st->constant = 0;
		if (!isnan(s))
			u[k++] = s;
	}
	/* z sorted: the fit, the quantity's median and worst 1% */
	qsort(z, n, sizeof *z, cmp_double);
	fit_site(st, z, n);
	st->median = st->kind[0] == 't' ? quantile(z, n, 0.5) :
	    upper(st->kind) ? st->bound + quantile(z, n, 0.5) :
	    st->bound - quantile(z, n, 0.5);
	{
		double	 w = st->fitted ? flaky_gev_quantile(&st->gev, 0.01) :
		    quantile(z, n, 0.99);

		st->worst1 = st->kind[0] == 't' ? w : upper(st->kind) ?
		    st->bound + w : st->bound - w;
		qsort(u, k, sizeof *u, cmp_double);
		st->used_median = k == n ? quantile(u, k, 0.5) : NAN;
		st->used_p99 = k == n ? share(st->kind, st->worst1,
		    st->bound) : NAN;
	}
	st->at_risk = st->fails > 0 || ((st->fitted || st->counted) &&
	    st->rate >= FLAKY_HEADROOM_RISK);
	free(z);
	free(u);
	return 0;
}

int
flaky_headroom_sites(const struct flaky_headroom_row *rows, size_t n,
    struct flaky_headroom_site **ret, size_t *ret_n)
{
	struct flaky_headroom_site *v = NULL;
	size_t	 nv = 0, cap = 0, j;
	int	 r;

	*ret = NULL;
	*ret_n = 0;
	for (size_t i = 0; i < n; i = j) {
		for (j = i + 1; j < n && rows[j].line == rows[i].line &&
		    strcmp(rows[j].path, rows[i].path) == 0 &&
		    strcmp(rows[j].kind, rows[i].kind) == 0; j++)
			;
		if ((r = flaky_array_grow(&v, &cap, nv, sizeof *v)) < 0 ||
		    (r = one_site(rows, i, j, &v[nv++])) < 0) {
			flaky_headroom_sites_free(v, nv);
			return r;
		}
	}
	*ret = v;
	*ret_n = nv;
	return 0;
}

void
flaky_headroom_sites_free(struct flaky_headroom_site *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++) {
		free(v[i].path);
		free(v[i].tolerance);
		free(v[i].assertion);
	}
	free(v);
}

void
flaky_rate_words(double rate, struct flaky_buf *b)
{
	double	 inv;

	if (isnan(rate))
		flaky_buf_adds(b, "?");
	else if (rate <= 0)
		flaky_buf_adds(b, "never");
	else if (rate >= 0.5)
		flaky_buf_printf(b, "%.0f%% of runs", 100 * rate);
	else if ((inv = 1 / rate) >= 1e6)
		flaky_buf_printf(b, "1 in 10^%.0f", floor(log10(inv)));
	else {
		/* two significant digits, with thousands separators */
		double	 mag = pow(10, floor(log10(inv)) - 1);
		long long v = (long long)(round(inv / mag) * mag);

		if (v >= 1000)
			flaky_buf_printf(b, "1 in ~%lld,%03lld", v / 1000,
			    v % 1000);
		else
			flaky_buf_printf(b, "1 in ~%lld", v);
	}
}

/* "x > 0.9" or "rtol=1e-06" */
static void
bound_words(const struct flaky_headroom_site *st, struct flaky_buf *b)
{
	if (st->kind[0] == 't')
		flaky_buf_printf(b, "%s", st->tolerance ? st->tolerance :
		    "its tolerance");
	else
		flaky_buf_printf(b, "x %s %.6g", st->kind[0] == 'l' ?
		    (st->kind[1] == 't' ? "<" : "<=") : (st->kind[1] == 't' ?
		    ">" : ">="), st->bound);
}

void
flaky_headroom_words(const struct flaky_headroom_site *st,
    struct flaky_buf *b)
{
	/* "assert x > 0.9", "assertGreater (x > 0.9)", "approx (rel=...)" */
	if (st->kind[0] != 't' && (st->assertion == NULL ||
	    strcmp(st->assertion, "compare") == 0)) {
		flaky_buf_printf(b, "%s:%d assert ", st->path, st->line);
		bound_words(st, b);
		flaky_buf_adds(b, ": ");
	} else {
		flaky_buf_printf(b, "%s:%d %s (", st->path, st->line,
		    st->assertion ? st->assertion : "assertion");
		bound_words(st, b);
		flaky_buf_adds(b, "): ");
	}
	if (st->kind[0] == 't')
		flaky_buf_printf(b, "uses %.0f%% of its tolerance at the "
		    "median, %.0f%% at the 99th percentile",
		    100 * st->used_median, 100 * st->used_p99);
	else {
		flaky_buf_printf(b, "x is %.4g at the median, %.4g at the "
		    "worst 1%%", st->median, st->worst1);
		if (!isnan(st->used_p99))
			flaky_buf_printf(b, " (%.0f%% of its bound)",
			    100 * st->used_p99);
	}
	if (st->fails > 0)
		flaky_buf_printf(b, "; failed in %zu of %zu runs", st->fails,
		    st->n);
	if (st->constant) {
		flaky_buf_adds(b, "; the same in every run: it does not "
		    "follow the seed");
		return;
	}
	if (!st->fitted && !st->counted) {
		if (st->n < FLAKY_GEV_MIN_RUNS)
			flaky_buf_printf(b, "; %zu run%s: too few to fit (%d "
			    "needed)", st->n, st->n == 1 ? "" : "s",
			    FLAKY_GEV_MIN_RUNS);
		else
			flaky_buf_printf(b, "; its margin took %zu value%s: "
			    "no tail to fit", st->distinct,
			    st->distinct == 1 ? "" : "s");
		return;
	}
	if (st->counted) {
		flaky_buf_printf(b, "; fails in %.3g%% of runs (counted, 95%% "
		    "%.2g-%.2g%%)", 100 * st->rate, 100 * st->rate_lo,
		    100 * st->rate_hi);
		return;
	}
	flaky_buf_adds(b, "; estimated to fail ");
	flaky_rate_words(st->rate, b);
	/* Gumbel's is the GEV at shape 0 (fit_tail) */
	flaky_buf_printf(b, " (%s fit, 95%% ", st->gev.xi_max == 0 ?
	    "Gumbel" : "GEV");
	if (st->rate_lo > 0)
		flaky_rate_words(st->rate_lo, b);
	else
		flaky_buf_adds(b, "under 1 in 10^16");
	flaky_buf_adds(b, " to ");
	flaky_rate_words(st->rate_hi, b);
	flaky_buf_adds(b, ")");
	if (st->rate > FLAKY_HEADROOM_TARGET && st->suggest_text[0] != '\0')
		flaky_buf_printf(b, "; a bound of %s would fail 1 in 10^%.0f",
		    st->suggest_text, -log10(FLAKY_HEADROOM_TARGET));
}
