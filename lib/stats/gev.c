/* The generalized extreme value distribution (issue 34, docs/triage.md
 * "Tolerance headroom"): fitted by maximum likelihood to the margins an
 * approximate assertion used, one per run, to tell how often the bound
 * would be crossed and which bound would hold; the interval of that rate
 * from the profile likelihood (Coles, "An Introduction to Statistical
 * Modeling of Extreme Values", 2001, sections 3.3 and 2.6.6). The lowest
 * share of the values may be censored (known only to lie at or below
 * the highest of them): the tail is fitted, not the bulk.
 *
 * G(z) = exp(-(1 + xi (z - mu) / sigma)^(-1/xi)), exp(-exp(-(z - mu) /
 * sigma)) at xi = 0. The data are standardized first (mean 0, sd 1), so
 * that one set of starting points and tolerances serves margins of 1e-9
 * and of 1e3 alike; the parameters are given back in the data's units. */
#include "buildconf.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"

#define BIG		1e300
#define XI_MIN		(-0.95)	/* below -1 the likelihood is unbounded */
#define XI_MAX		3.0
#define XI_ZERO		1e-7	/* |xi| under this: the Gumbel limit */
#define U_MIN		(-16.0)	/* log10 of the smallest rate told */

/* What the optimizer minimizes: -log likelihood at three parameters,
 * or at two of them with the third fixed by a rate (the profile). */
struct nll {
	const double	*y;		/* the values above the threshold */
	size_t		 n;
	size_t		 below;		/* censored: at or below u */
	double		 u;
	int		 profile;
	double		 bound, yp;	/* profile: G(bound) = exp(-yp) */
	double		 xi_min, xi_max;	/* the shapes searched; equal:
					 * the shape is fixed there */
};

/* -log G(u) under (mu, sigma, xi): what each censored value adds. */
static double
censored_nll(double u, double mu, double sigma, double xi)
{
	double	 z = (u - mu) / sigma, t;

	if (fabs(xi) < XI_ZERO)
		return exp(-z);
	t = 1 + xi * z;
	if (!(t > 0))
		return xi > 0 ? BIG : 0;
	return pow(t, -1 / xi);
}

/* -log likelihood of y under (mu, sigma, xi), with below values known
 * only to be at or below u; BIG when a point lies outside the support or
 * the parameters are out of bounds. */
static double
gev_nll(const struct nll *f, double mu, double sigma, double xi)
{
	const double *y = f->y;
	size_t	 n = f->n;
	double	 s = 0;

	if (!(sigma > 0) || xi < f->xi_min || xi > f->xi_max || !isfinite(mu))
		return BIG;
	if (f->below > 0)
		s += (double)f->below * censored_nll(f->u, mu, sigma, xi);
	for (size_t i = 0; i < n; i++) {
		double z = (y[i] - mu) / sigma;

		if (fabs(xi) < XI_ZERO)
			s += z + exp(-z);
		else {
			double t = 1 + xi * z;

			if (!(t > 0))
				return BIG;
			s += (1 + 1 / xi) * log(t) + pow(t, -1 / xi);
		}
	}
	s += (double)n * log(sigma);
	return isfinite(s) ? s : BIG;
}

/* mu that puts exp(-yp) of the mass at or below bound, given sigma and
 * xi (the profile's constraint). */
static double
profile_mu(double bound, double yp, double sigma, double xi)
{
	if (fabs(xi) < XI_ZERO)
		return bound + sigma * log(yp);
	return bound - sigma * (pow(yp, -xi) - 1) / xi;
}

/* The objective at a point of the search: x = (mu, log sigma, xi), or
 * (log sigma, xi) for the profile. */
static double
objective(const struct nll *f, const double *x)
{
	double	 sigma, xi, mu;

	if (f->profile) {
		sigma = exp(x[0]);
		xi = f->xi_min == f->xi_max ? f->xi_min : x[1];
		mu = profile_mu(f->bound, f->yp, sigma, xi);
	} else {
		mu = x[0];
		sigma = exp(x[1]);
		xi = x[2];
	}
	/* a fixed shape: the search's third coordinate is left flat */
	if (f->xi_min == f->xi_max)
		xi = f->xi_min;
	return gev_nll(f, mu, sigma, xi);
}

/* Nelder-Mead from x (d <= 3 dimensions, initial steps step), restarted
 * once from its own answer (a simplex collapsed early stops short). The
 * best point is left in x; returns its objective. */
static double
minimize(const struct nll *f, double *x, const double *step, int d)
{
	double	 p[4][3], v[4], c[3], xr[3], xe[3], fr, fe, best = BIG;

	for (int round = 0; round < 2; round++) {
		for (int i = 0; i <= d; i++) {
			memset(p[i], 0, sizeof p[i]);
			memcpy(p[i], x, (size_t)d * sizeof *x);
			if (i > 0)
				p[i][i - 1] += step[i - 1];
			v[i] = objective(f, p[i]);
		}
		for (int it = 0; it < 1500; it++) {
			int	 hi = 0, lo = 0, nh = 0;

			for (int i = 1; i <= d; i++) {
				if (v[i] > v[hi])
					hi = i;
				if (v[i] < v[lo])
					lo = i;
			}
			nh = lo;
			for (int i = 0; i <= d; i++)
				if (i != hi && v[i] > v[nh])
					nh = i;
			if (fabs(v[hi] - v[lo]) <= 1e-11 * (fabs(v[lo]) + 1e-11)
			    && it > 10)
				break;
			for (int j = 0; j < d; j++) {
				c[j] = 0;
				for (int i = 0; i <= d; i++)
					if (i != hi)
						c[j] += p[i][j] / d;
			}
			for (int j = 0; j < d; j++)
				xr[j] = c[j] + (c[j] - p[hi][j]);
			fr = objective(f, xr);
			if (fr < v[lo]) {
				for (int j = 0; j < d; j++)
					xe[j] = c[j] + 2 * (c[j] - p[hi][j]);
				fe = objective(f, xe);
				if (fe < fr) {
					memcpy(p[hi], xe, sizeof p[hi]);
					v[hi] = fe;
				} else {
					memcpy(p[hi], xr, sizeof p[hi]);
					v[hi] = fr;
				}
			} else if (fr < v[nh]) {
				memcpy(p[hi], xr, sizeof p[hi]);
				v[hi] = fr;
			} else {
				/* contract towards the better of hi and xr */
				int	 out = fr < v[hi];

				for (int j = 0; j < d; j++)
					xe[j] = c[j] + 0.5 * ((out ? xr[j] :
					    p[hi][j]) - c[j]);
				fe = objective(f, xe);
				if (fe < (out ? fr : v[hi])) {
					memcpy(p[hi], xe, sizeof p[hi]);
					v[hi] = fe;
				} else {
					for (int i = 0; i <= d; i++) {
						if (i == lo)
							continue;
						for (int j = 0; j < d; j++)
							p[i][j] = p[lo][j] +
							    0.5 * (p[i][j] -
							    p[lo][j]);
						v[i] = objective(f, p[i]);
					}
				}
			}
		}
		for (int i = 0; i <= d; i++)
			if (v[i] < best) {
				best = v[i];
				memcpy(x, p[i], (size_t)d * sizeof *x);
			}
	}
	return best;
}

/* Mean and standard deviation of x. */
static void
moments(const double *x, size_t n, double *m, double *s)
{
	double	 a = 0, q = 0;

	for (size_t i = 0; i < n; i++)
		a += x[i];
	a /= (double)n;
	for (size_t i = 0; i < n; i++)
		q += (x[i] - a) * (x[i] - a);
	*m = a;
	*s = n > 1 ? sqrt(q / (double)(n - 1)) : 0;
}

/* qsort order of doubles. */
static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* x[n] standardized by (shift, scale) and sorted into a new array, the
 * lowest censor * n of them censored at the highest of them: f set up;
 * the array (for free) or NULL. */
static double *
standardize(const double *x, size_t n, double shift, double scale,
    double censor, struct nll *f)
{
	double	*y;
	size_t	 k = (size_t)(censor * (double)n);

	if ((y = malloc(n * sizeof *y)) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		y[i] = (x[i] - shift) / scale;
	qsort(y, n, sizeof *y, cmp_double);
	if (k >= n)
		k = n - 1;
	f->below = k;
	f->u = k > 0 ? y[k - 1] : 0;
	f->y = y + k;
	f->n = n - k;
	return y;
}

static int fit_shapes(const double *, size_t, double, double, double,
    struct flaky_gev *);

int
flaky_gev_fit(const double *x, size_t n, double censor, struct flaky_gev *g)
{
	return flaky_gev_fit_min(x, n, censor, XI_MIN, g);
}

int
flaky_gev_fit_min(const double *x, size_t n, double censor, double xi_min,
    struct flaky_gev *g)
{
	return fit_shapes(x, n, censor, xi_min, XI_MAX, g);
}

int
flaky_gumbel_fit(const double *x, size_t n, double censor,
    struct flaky_gev *g)
{
	return fit_shapes(x, n, censor, 0, 0, g);
}

/* The fit with the shape within [xi_min, xi_max] (equal: fixed). */
static int
fit_shapes(const double *x, size_t n, double censor, double xi_min,
    double xi_max, struct flaky_gev *g)
{
	static const double xis[] = { -0.2, 0.0, 0.2 };
	struct nll f;
	double	*y, m, s, best = BIG, step[3] = { 0.3, 0.3, 0.1 };

	memset(g, 0, sizeof *g);
	memset(&f, 0, sizeof f);
	if (n < 3 || censor < 0 || censor >= 1 || !(xi_min >= XI_MIN) ||
	    !(xi_max <= XI_MAX) || xi_min > xi_max)
		return -EINVAL;
	f.xi_min = xi_min;
	f.xi_max = xi_max;
	moments(x, n, &m, &s);
	if (!(s > 0) || !isfinite(s))
		return -EDOM;
	if ((y = standardize(x, n, m, s, censor, &f)) == NULL)
		return -ENOMEM;
	/* Gumbel's moments at sd 1, with three shapes to start from */
	for (size_t k = 0; k < sizeof xis / sizeof xis[0]; k++) {
		double	 p[3] = { -0.5772 * 0.7797, log(0.7797),
		    xi_min == xi_max ? xi_min : fmax(xis[k], xi_min + 0.01) };
		double	 v = minimize(&f, p, step, 3);

		if (v < best) {
			best = v;
			g->mu = p[0];
			g->sigma = exp(p[1]);
			g->xi = xi_min == xi_max ? xi_min : p[2];
		}
	}
	free(y);
	if (best >= BIG)
		return -EDOM;
	g->scale = s;
	g->shift = m;
	g->censor = censor;
	g->xi_min = xi_min;
	g->xi_max = xi_max;
	/* back in the data's units: the density of each value not censored
	 * takes log s (the Jacobian) */
	g->nll = best + (double)f.n * log(s);
	g->mu = m + s * g->mu;
	g->sigma *= s;
	g->n = n;
	return 0;
}

double
flaky_gev_cdf(const struct flaky_gev *g, double z)
{
	double	 t = (z - g->mu) / g->sigma;

	if (fabs(g->xi) < XI_ZERO)
		return exp(-exp(-t));
	t = 1 + g->xi * t;
	if (t <= 0)
		return g->xi > 0 ? 0 : 1;
	return exp(-pow(t, -1 / g->xi));
}

double
flaky_gev_exceed(const struct flaky_gev *g, double z)
{
	double	 t = (z - g->mu) / g->sigma, e;

	/* 1 - exp(-e) with e the tail's -log G: exact for tiny rates */
	if (fabs(g->xi) < XI_ZERO)
		e = exp(-t);
	else {
		t = 1 + g->xi * t;
		if (t <= 0)
			return g->xi > 0 ? 1 : 0;
		e = pow(t, -1 / g->xi);
	}
	return -expm1(-e);
}

double
flaky_gev_quantile(const struct flaky_gev *g, double exceed)
{
	double	 yp = -log1p(-exceed);	/* -log G at the quantile */

	if (fabs(g->xi) < XI_ZERO)
		return g->mu - g->sigma * log(yp);
	return g->mu + g->sigma * (pow(yp, -g->xi) - 1) / g->xi;
}

/* -log profile likelihood (standardized) of the rate 10^u of exceeding
 * bound b (standardized); x holds (log sigma, xi), warm between calls. */
static double
profile_at(struct nll *f, double b, double u, double *x)
{
	static const double step[2] = { 0.3, 0.1 };
	double	 p = pow(10, u), best, y[2];

	f->profile = 1;
	f->bound = b;
	f->yp = -log1p(-p);
	best = minimize(f, x, step, 2);
	/* a second start: the warm one may sit in a far basin */
	y[0] = x[0];
	y[1] = x[1] > 0 ? fmax(-0.1, f->xi_min + 0.01) : 0.2;
	if (minimize(f, y, step, 2) < best) {
		best = objective(f, y);
		x[0] = y[0];
		x[1] = y[1];
	}
	return best;
}

int
flaky_gev_exceed_interval(const double *x, size_t n,
    const struct flaky_gev *g, double bound, double *lo, double *hi)
{
	/* chi-squared with one degree of freedom at 95%, halved */
	const double crit = 3.841458820694124 / 2;
	struct nll f;
	double	*y, nll0, b, uh, a, c, w[2], p;
	int	 r = 0;

	*lo = 0;
	*hi = 1;
	memset(&f, 0, sizeof f);
	if (g->n != n || n < 3 || !(g->scale > 0))
		return -EINVAL;
	f.xi_min = g->xi_min;
	f.xi_max = g->xi_max;
	if ((y = standardize(x, n, g->shift, g->scale, g->censor, &f)) ==
	    NULL)
		return -ENOMEM;
	b = (bound - g->shift) / g->scale;
	nll0 = g->nll - (double)f.n * log(g->scale);
	p = flaky_gev_exceed(g, bound);
	uh = p > 0 ? log10(p) : U_MIN;
	if (uh < U_MIN)
		uh = U_MIN;
	if (uh > -1e-9)
		uh = -1e-9;
	/* lower end: from the estimate down, the profile falls off */
	w[0] = log(g->sigma / g->scale);
	w[1] = g->xi;
	if (profile_at(&f, b, U_MIN, w) - nll0 <= crit)
		*lo = 0;
	else {
		a = U_MIN;
		c = uh;
		w[0] = log(g->sigma / g->scale);
		w[1] = g->xi;
		for (int i = 0; i < 40 && c - a > 1e-3; i++) {
			double	 m = (a + c) / 2;

			if (profile_at(&f, b, m, w) - nll0 > crit)
				a = m;
			else
				c = m;
		}
		*lo = pow(10, c);
	}
	/* upper end: from the estimate up to a rate of one */
	a = uh;
	c = log10(0.999999);
	w[0] = log(g->sigma / g->scale);
	w[1] = g->xi;
	if (profile_at(&f, b, c, w) - nll0 <= crit)
		*hi = 1;
	else {
		w[0] = log(g->sigma / g->scale);
		w[1] = g->xi;
		for (int i = 0; i < 40 && c - a > 1e-3; i++) {
			double	 m = (a + c) / 2;

			if (profile_at(&f, b, m, w) - nll0 > crit)
				c = m;
			else
				a = m;
		}
		*hi = pow(10, a);
	}
	if (*lo > p)
		*lo = p;
	if (*hi < p)
		*hi = p;
	free(y);
	return r;
}
