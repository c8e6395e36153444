/* The seeding signal: which code seeds its randomness (random.seed,
 * np.random.seed, torch.manual_seed, ...), and whether a test does, itself
 * or through the fixtures it names, the setup hooks and class bodies of
 * its classes, autouse fixtures or the module. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan-private.h"

/* Code in the current scope seeds randomness: mark every function it is
 * in, or the class whose body it is in, or the module. */
void
scan_mark_seeds(struct scan *sc)
{
	int	 any = 0;

	if (sc->nstack == 0) {
		sc->module_seeds = 1;
		return;
	}
	if (sc->scopes[sc->stack[sc->nstack - 1]].kind == KW_CLASS) {
		sc->scopes[sc->stack[sc->nstack - 1]].seeds = 1;
		return;
	}
	for (int i = 0; i < sc->nstack; i++)
		if (sc->scopes[sc->stack[i]].kind == KW_DEF) {
			sc->scopes[sc->stack[i]].seeds = 1;
			any = 1;
		}
	if (!any)
		sc->module_seeds = 1;
}

/* Whether the call at token open (callee ending at open - 1) seeds:
 * random.seed, np.random.seed, torch.manual_seed, tf.random.set_seed,
 * default_rng(<seed>), RandomState(<seed>), or any random_state=<int>. */
int
scan_call_seeds(struct scan *sc, size_t open, const struct callee *ce)
{
	const struct tok *toks = sc->lx->toks;
	size_t		 close = (size_t)toks[open].match;

	if (ce->has_last) {
		const struct tok *l = &toks[ce->last];
		int		 prev_random = ce->is_attr &&
		    ce->last >= 2 && tok_eq(sc, &toks[ce->last - 2], "random");

		if (tok_eq(sc, l, "manual_seed") ||
		    ((tok_eq(sc, l, "seed") || tok_eq(sc, l, "set_seed")) &&
		    prev_random))
			return 1;
		if ((tok_eq(sc, l, "default_rng") ||
		    tok_eq(sc, l, "RandomState")) && close > open + 1 &&
		    !(close == open + 2 && toks[open + 1].kw == KW_NONE_))
			return 1;
	}
	for (size_t k = open + 1; k + 2 < close; k++)
		if (tok_eq(sc, &toks[k], "random_state") &&
		    tok_is_op(&toks[k + 1], OP1('=')) &&
		    (tok_is_op(&toks[k - 1], OP1(',')) ||
		    tok_is_op(&toks[k - 1], OP1('('))) &&
		    toks[k + 2].type == T_NUMBER &&
		    (tok_is_op(&toks[k + 3], OP1(',')) ||
		    tok_is_op(&toks[k + 3], OP1(')')))) {
			const char *v = sc->lx->src + toks[k + 2].off;

			if (memchr(v, '.', toks[k + 2].len) == NULL &&
			    memchr(v, 'j', toks[k + 2].len) == NULL &&
			    memchr(v, 'e', toks[k + 2].len) == NULL)
				return 1;
		}
	return 0;
}

/* qsort_r() order of fixtures: by name, byte-wise. */
static int
fixture_cmp(const void *pa, const void *pb, void *arg)
{
	const struct scan *sc = arg;
	const struct scope *a = &sc->scopes[*(const int *)pa];
	const struct scope *b = &sc->scopes[*(const int *)pb];
	size_t	 n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int	 c = memcmp(sc->lx->src + a->name_off, sc->lx->src + b->name_off,
	    n);

	if (c != 0)
		return c;
	return a->name_len < b->name_len ? -1 : a->name_len > b->name_len;
}

/* Compare a fixture's name to the token name[0..n). */
static int
fixture_name_cmp(const struct scan *sc, int f, const char *name, size_t n)
{
	const struct scope *s = &sc->scopes[f];
	size_t	 m = s->name_len < n ? s->name_len : n;
	int	 c = memcmp(sc->lx->src + s->name_off, name, m);

	if (c != 0)
		return c;
	return s->name_len < n ? -1 : s->name_len > n;
}

/* One pass over the scopes: fixtures sorted by name, setup hooks that
 * seed and autouse fixtures hung on their class (or the module). */
int
scan_index_scopes(struct scan *sc)
{
	static const char *const class_hooks[] = { "setUp", "setup_method",
	    "setUpClass", "setup_class", "setup", "setUpTestData", NULL };
	static const char *const module_hooks[] = { "setup_module",
	    "setUpModule", "setup_function", "setup", NULL };

	sc->module_autouse = -1;
	if (sc->nscopes > 0 &&
	    (sc->fixtures = calloc(sc->nscopes, sizeof(int))) == NULL)
		return -ENOMEM;
	for (size_t i = sc->nscopes; i-- > 0;) {
		struct scope	*s = &sc->scopes[i];
		const char *const *hooks = s->parent < 0 ? module_hooks :
		    class_hooks;
		int		*head = s->parent < 0 ? &sc->module_autouse :
		    &sc->scopes[s->parent].autouse_head;
		int		*flag = s->parent < 0 ? &sc->module_hooks :
		    &sc->scopes[s->parent].hooks;

		if (s->kind != KW_DEF)
			continue;
		if (s->fixture)
			sc->fixtures[sc->nfixtures++] = (int)i;
		if (s->fixture && s->autouse) {
			s->autouse_next = *head;
			*head = (int)i;
			continue;
		}
		if (s->seeds && (s->parent < 0 ||
		    sc->scopes[s->parent].kind == KW_CLASS))
			for (int h = 0; hooks[h] != NULL; h++) {
				size_t	 n = strlen(hooks[h]);

				if (s->name_len == n && memcmp(sc->lx->src +
				    s->name_off, hooks[h], n) == 0)
					*flag = 1;
			}
	}
	if (sc->nfixtures > 1)
		qsort_r(sc->fixtures, sc->nfixtures, sizeof(int), fixture_cmp,
		    sc);
	return 0;
}

/* Does the def-scope si name (as a parameter) a fixture that seeds? */
static int
fixture_params_seed(struct scan *sc, int si, int depth)
{
	const struct tok *toks = sc->lx->toks;
	int32_t		 open = sc->scopes[si].params_open;
	size_t		 close;

	if (open < 0 || sc->nfixtures == 0)
		return 0;
	close = (size_t)toks[open].match;
	for (size_t k = (size_t)open + 1; k < close; k++) {
		const struct tok *p = &toks[k - 1];
		const char	*name = sc->lx->src + toks[k].off;
		size_t		 lo = 0, hi = sc->nfixtures;

		if (toks[k].match >= 0 && (size_t)toks[k].match > k) {
			k = (size_t)toks[k].match;
			continue;
		}
		if (!tok_is_ident(&toks[k]) || !(tok_is_op(p, OP1('(')) ||
		    tok_is_op(p, OP1(',')) || tok_is_op(p, OP1('*')) ||
		    tok_is_op(p, OP2('*', '*'))))
			continue;
		/* The first fixture of that name, then all of them. */
		while (lo < hi) {
			size_t	 mid = lo + (hi - lo) / 2;

			if (fixture_name_cmp(sc, sc->fixtures[mid], name,
			    toks[k].len) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < sc->nfixtures && fixture_name_cmp(sc,
		    sc->fixtures[lo], name, toks[k].len) == 0; lo++)
			if (sc->fixtures[lo] != si &&
			    scan_scope_seeded(sc, sc->fixtures[lo], depth + 1))
				return 1;
	}
	return 0;
}

/* Setup hooks and autouse fixtures directly in parent (-1: module). */
static int
hooks_seed(struct scan *sc, int parent, int depth)
{
	int	*flag = parent < 0 ? &sc->module_hooks :
	    &sc->scopes[parent].hooks;
	int	 f = parent < 0 ? sc->module_autouse :
	    sc->scopes[parent].autouse_head;

	if (*flag == 1)
		return 1;
	for (; f >= 0; f = sc->scopes[f].autouse_next)
		if (scan_scope_seeded(sc, f, depth + 1)) {
			*flag = 1;
			return 1;
		}
	return 0;
}

/* The seeding signal of a def: itself, the fixtures it names, setup hooks
 * and class-body code of its classes, autouse fixtures, the module. */
int
scan_scope_seeded(struct scan *sc, int si, int depth)
{
	struct scope	*s = &sc->scopes[si];
	int		 yes = 0;

	if (s->resolved == 1 || s->resolved == 2)
		return s->resolved == 2;
	if (s->resolved == 3 || depth > MAXFIXTUREDEPTH)
		return 0;	/* a cycle through fixtures */
	s->resolved = 3;
	if (s->seeds || sc->module_seeds)
		yes = 1;
	if (!yes)
		yes = fixture_params_seed(sc, si, depth);
	for (int p = s->parent; !yes && p >= 0; p = sc->scopes[p].parent)
		if (sc->scopes[p].kind == KW_CLASS)
			yes = sc->scopes[p].seeds || hooks_seed(sc, p, depth);
	if (!yes && !s->fixture)
		yes = hooks_seed(sc, -1, depth);
	s->resolved = yes ? 2 : 1;
	return yes;
}
