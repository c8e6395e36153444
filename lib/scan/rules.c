/* The finding rules of docs/scan.md over one statement's tokens: a
 * comparison in an assert, and calls by the name they end in (unittest's
 * assertAlmostEqual and friends, torch's assert_close, numpy.testing,
 * approx in an assert's condition), with their tolerance arguments. */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan-private.h"
#include "util/util.h"

/* Whether token k ends a primary (an atom or a trailer), so that a "("
 * after it is a call. */
int
scan_ends_primary(const struct tok *t)
{
	switch (t->type) {
	case T_NAME:
		return tok_is_name(t);
	case T_NUMBER:
	case T_STRING:
	case T_FEND:
		return 1;
	case T_OP:
		return t->op == OP1(')') || t->op == OP1(']') ||
		    t->op == OP1('}') || t->op == OP3('.', '.', '.');
	}
	return 0;
}

/* First token of a run of adjacent strings ending at k (a T_STRING or the
 * T_FEND of an f-string's last field). */
static size_t
string_start(const struct tok *toks, size_t k, size_t lo)
{
	for (;;) {
		while (toks[k].type == T_FEND)
			k = (size_t)toks[k].match - 1;
		if (k > lo && (toks[k - 1].type == T_STRING ||
		    toks[k - 1].type == T_FEND)) {
			k--;
			continue;
		}
		return k;
	}
}

/* Where the primary (atom and trailers) that ends at token k starts, not
 * before lo: "np.testing.assert_allclose", "a[0].f(x).g", "(f)". memo
 * (or NULL) remembers the answers of one statement, so a chain of n calls
 * "f()()()..." costs n steps, not n * n. */
size_t
scan_primary_start(const struct tok *toks, size_t k, size_t lo, int32_t *memo)
{
	size_t	 from = k, r;

	for (;;) {
		const struct tok *t = &toks[k];

		if (memo != NULL && memo[k] >= 0) {
			r = (size_t)memo[k];
			break;
		}

		if (t->type == T_STRING || t->type == T_FEND) {
			r = string_start(toks, k, lo);
			break;
		}
		if (t->type == T_OP && (t->op == OP1(')') ||
		    t->op == OP1(']') || t->op == OP1('}'))) {
			size_t	 o = (size_t)t->match;

			if (t->op != OP1('}') && o > lo &&
			    scan_ends_primary(&toks[o - 1])) {
				k = o - 1;	/* a call or subscript trailer */
				continue;
			}
			r = o;
			break;
		}
		if (k >= lo + 2 && tok_is_op(&toks[k - 1], OP1('.')) &&
		    scan_ends_primary(&toks[k - 2])) {
			k -= 2;
			continue;
		}
		r = k;
		break;
	}
	if (memo != NULL)
		memo[from] = (int32_t)r;
	return r;
}

/* Fill ce for the callee [x, y] of a call (see struct callee). */
void
scan_callee(struct scan *sc, size_t x, size_t y, struct callee *ce)
{
	const struct tok *toks = sc->lx->toks;

	size_t		 x0 = x;

	memset(ce, 0, sizeof(*ce));
	/* Unwrap "(expr)" when the parentheses span the whole callee. */
	while (y > x && tok_is_op(&toks[y], OP1(')')) &&
	    (size_t)toks[y].match == x) {
		x++;
		y--;
	}
	/* Without parentheses [x, y] is a primary by construction; inside
	 * them it must be one ("(a + b.c)(x)" calls a BinOp). */
	if (y < x || !tok_is_ident(&toks[y]) ||
	    (x != x0 && scan_primary_start(toks, y, x, NULL) != x))
		return;
	ce->has_last = 1;
	ce->last = y;
	ce->x = x;
	if (y == x) {
		ce->is_bare = 1;
		return;
	}
	ce->is_attr = tok_is_op(&toks[y - 1], OP1('.'));
	if (!ce->is_attr)
		return;
	/* A pure chain a.b.c (parenthesized parts allowed) down to x. */
	{
		size_t	 k = y;

		for (;;) {
			if (tok_is_ident(&toks[k])) {
				if (k == x) {
					ce->torch = tok_eq(sc, &toks[k],
					    "torch");
					return;
				}
				if (k >= x + 2 &&
				    tok_is_op(&toks[k - 1], OP1('.'))) {
					k -= 2;
					continue;
				}
				return;
			}
			if (tok_is_op(&toks[k], OP1(')')) &&
			    (size_t)toks[k].match >= x) {
				size_t	 o = (size_t)toks[k].match;

				if (o != x)
					return;	/* a call in the chain */
				x++;
				k--;
				continue;
			}
			return;
		}
	}
}

/* Whether t is one of the names of a NULL-terminated set. */
static int
name_in(struct scan *sc, const struct tok *t, const char *const *set)
{
	for (; *set != NULL; set++)
		if (tok_eq(sc, t, *set))
			return 1;
	return 0;
}

/* The names the call rules match (docs/scan.md), and the keyword
 * arguments reported as a finding's tolerance. */
static const char *const unittest_names[] = {
	"assertGreater", "assertGreaterEqual", "assertLess", "assertLessEqual",
	"assertAlmostEqual", "assertNotAlmostEqual", "assertAlmostEquals",
	"assertNotAlmostEquals", NULL
};
static const char *const numpy_names[] = {
	"assert_allclose", "assert_array_almost_equal", "assert_almost_equal",
	"assert_approx_equal", "assert_array_almost_equal_nulp",
	"assert_array_max_ulp", "assert_array_less", NULL
};
static const char *const approx_names[] = {
	"approx", "allclose", "isclose", NULL
};
static const char *const tolerance_names[] = {
	"rtol", "atol", "places", "delta", "decimal", "abs", "rel", NULL
};

/* Positional tolerance parameters of the common signatures. */
static const struct {
	const char	*func;
	const char	*params[5];
} positional[] = {
	{ "assertAlmostEqual", { NULL, NULL, "places", NULL, "delta" } },
	{ "assertNotAlmostEqual", { NULL, NULL, "places", NULL, "delta" } },
	{ "assertAlmostEquals", { NULL, NULL, "places", NULL, "delta" } },
	{ "assertNotAlmostEquals", { NULL, NULL, "places", NULL, "delta" } },
	{ "assert_allclose", { NULL, NULL, "rtol", "atol", NULL } },
	{ "assert_almost_equal", { NULL, NULL, "decimal", NULL, NULL } },
	{ "assert_array_almost_equal", { NULL, NULL, "decimal", NULL, NULL } },
	{ "allclose", { NULL, NULL, "rtol", "atol", NULL } },
	{ "isclose", { NULL, NULL, "rtol", "atol", NULL } },
	{ "approx", { NULL, "rel", "abs", NULL, NULL } },
};

/* Append "name=value" (value bounded, whitespace runs folded) to buf. */
static void
tolerance_add(struct scan *sc, struct flaky_buf *buf, const char *name,
    size_t from, size_t to)
{
	const struct tok *toks = sc->lx->toks;
	const char	*s = sc->lx->src;
	size_t		 a, b, n = 0;
	int		 space = 0;

	if (to <= from)
		return;
	a = toks[from].off;
	b = toks[to - 1].off + toks[to - 1].len;
	if (buf->len > 0)
		flaky_buf_adds(buf, ", ");
	flaky_buf_adds(buf, name);
	flaky_buf_addc(buf, '=');
	for (size_t i = a; i < b; i++) {
		unsigned char	 c = (unsigned char)s[i];

		/* Stop at the bound, but not inside a UTF-8 sequence. */
		if (n >= MAXTOLVALUE && (c & 0xc0) != 0x80)
			break;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
		    c == '\f' || c == '\\') {
			space = 1;
			continue;
		}
		if (space && n > 0) {
			flaky_buf_addc(buf, ' ');
			n++;
		}
		space = 0;
		flaky_buf_addc(buf, (char)c);
		n++;
	}
}

/* The tolerance arguments of the call whose "(" is token open, by keyword
 * and, for known signatures, by position. */
static const char *
call_tolerance(struct scan *sc, size_t open, const struct tok *last)
{
	const struct tok *toks = sc->lx->toks;
	struct flaky_buf buf;
	size_t		 close = (size_t)toks[open].match, a = open + 1;
	int		 argn = 0, pos = -1;
	const char	*ret;

	for (size_t k = 0; last != NULL && k < FLAKY_ARRAY_SIZE(positional);
	    k++)
		if (tok_eq(sc, last, positional[k].func))
			pos = (int)k;
	flaky_buf_init(&buf);
	while (a < close) {
		size_t	 b = a;

		/* One argument: up to a "," at this level. */
		while (b < close && !tok_is_op(&toks[b], OP1(','))) {
			if (toks[b].match >= 0 && (size_t)toks[b].match > b)
				b = (size_t)toks[b].match;
			b++;
		}
		if (b > a + 2 && tok_is_ident(&toks[a]) &&
		    tok_is_op(&toks[a + 1], OP1('='))) {
			if (name_in(sc, &toks[a], tolerance_names)) {
				char	 name[16];

				snprintf(name, sizeof name, "%.*s",
				    (int)toks[a].len, sc->lx->src + toks[a].off);
				tolerance_add(sc, &buf, name, a + 2, b);
			}
		} else if (b > a && !tok_is_op(&toks[a], OP1('*')) &&
		    !tok_is_op(&toks[a], OP2('*', '*'))) {
			if (pos >= 0 && argn < 5 &&
			    positional[pos].params[argn] != NULL)
				tolerance_add(sc, &buf,
				    positional[pos].params[argn], a, b);
			argn++;
		}
		a = b + 1;
	}
	if (buf.oom) {
		flaky_buf_free(&buf);
		sc->oom = 1;
		return "";
	}
	ret = buf.len ? scan_strndup(sc->res, buf.data, buf.len) : "";
	flaky_buf_free(&buf);
	if (ret == NULL) {
		sc->oom = 1;
		ret = "";
	}
	return ret;
}

/* The innermost def or class open, or -1 at module level. */
int
scan_current_scope(const struct scan *sc)
{
	return sc->nstack > 0 ? sc->stack[sc->nstack - 1] : -1;
}

/* Record a finding in the current scope (strings come later). */
void
scan_add_finding(struct scan *sc, int line, int category, const char *tol)
{
	struct rawfinding *f;

	if (sc->nfinds == sc->capfinds) {
		size_t	 cap = sc->capfinds ? sc->capfinds * 2 : 64;
		void	*p;

		if ((p = realloc(sc->finds, cap * sizeof(*sc->finds))) == NULL) {
			sc->oom = 1;
			return;
		}
		sc->finds = p;
		sc->capfinds = cap;
	}
	f = &sc->finds[sc->nfinds++];
	f->line = line;
	f->category = category;
	f->scope = scan_current_scope(sc);
	f->tolerance = tol;
}

/* An assert statement, tokens [a, b): the comparison rule ("<", "<=", ">",
 * ">=" in its condition), and the span of the condition in *ca, *cb, where
 * an approx() call counts as a finding. */
void
scan_assert(struct scan *sc, size_t a, size_t b, size_t *ca, size_t *cb)
{
	const struct tok *toks = sc->lx->toks;

	*ca = a + 1;
	*cb = scan_find_level(toks, *ca, b, OP1(','), 1);
	for (size_t k = *ca; k < *cb; k++)
		if (toks[k].type == T_OP && (toks[k].op == OP1('<') ||
		    toks[k].op == OP1('>') ||
		    toks[k].op == OP2('<', '=') ||
		    toks[k].op == OP2('>', '='))) {
			scan_add_finding(sc, toks[a].line,
			    FLAKY_FINDING_COMPARISON, "");
			break;
		}
}

/* Every call in tokens [a, b) of one statement; cond_a..cond_b is an
 * assert's condition (empty when none); skip is the "(" of a def or class
 * header, which is no call. */
void
scan_calls(struct scan *sc, size_t a, size_t b, size_t cond_a, size_t cond_b,
    size_t skip)
{
	const struct tok *toks = sc->lx->toks;

	for (size_t j = a + 1; j < b; j++) {
		struct callee	 ce;
		const struct tok *l;
		size_t		 x;
		int		 cat = -1;

		if (!tok_is_op(&toks[j], OP1('(')) || j == skip ||
		    !scan_ends_primary(&toks[j - 1]))
			continue;
		x = scan_primary_start(toks, j - 1, a, sc->memo);
		scan_callee(sc, x, j - 1, &ce);
		if (scan_call_seeds(sc, j, &ce))
			scan_mark_seeds(sc);
		if (!ce.has_last)
			continue;
		l = &toks[ce.last];
		if (ce.is_attr && name_in(sc, l, unittest_names))
			cat = FLAKY_FINDING_UNITTEST;
		else if ((ce.torch && (tok_eq(sc, l, "assert_close") ||
		    tok_eq(sc, l, "assert_allclose"))) ||
		    (ce.is_bare && tok_eq(sc, l, "assert_close")))
			cat = FLAKY_FINDING_TORCH;
		else if (name_in(sc, l, numpy_names))
			cat = FLAKY_FINDING_NUMPY;
		else if (j >= cond_a && j < cond_b &&
		    name_in(sc, l, approx_names))
			cat = FLAKY_FINDING_APPROX;
		if (cat >= 0)
			scan_add_finding(sc, toks[x].line, cat,
			    call_tolerance(sc, j, l));
	}
}
