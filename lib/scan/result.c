/* The public result of a scan: its strings in an arena the result owns,
 * the tests and findings with their enclosing classes, function and test,
 * sorted as tsv prints them. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan-private.h"
#include "util/util.h"

static const char *const category_names[] = {
	[FLAKY_FINDING_COMPARISON] = "comparison",
	[FLAKY_FINDING_UNITTEST] = "unittest",
	[FLAKY_FINDING_TORCH] = "torch",
	[FLAKY_FINDING_NUMPY] = "numpy",
	[FLAKY_FINDING_APPROX] = "approx",
};

/* The name of a category as tsv and JSON print it. */
const char *
flaky_finding_category_name(int category)
{
	if (category < 0 || category >= FLAKY_FINDING_NCATEGORIES)
		return NULL;
	return category_names[category];
}

/* A copy of s[0..n) that lives as long as the result. */
const char *
scan_strndup(struct flaky_scan_result *res, const char *s, size_t n)
{
	struct pyscan_arena	*a = res->arena;
	char			*p;

	if (n == 0)
		return "";
	if (a == NULL || a->cap - a->used < n + 1) {
		size_t	 cap = n + 1 > 16384 ? n + 1 : 16384;

		if ((a = malloc(sizeof(*a) + cap)) == NULL)
			return NULL;
		a->cap = cap;
		a->used = 0;
		a->next = res->arena;
		res->arena = a;
	}
	p = a->data + a->used;
	memcpy(p, s, n);
	p[n] = '\0';
	a->used += n + 1;
	return p;
}

/* Free a result and every string it handed out. */
void
flaky_scan_result_free(struct flaky_scan_result *res)
{
	struct pyscan_arena	*a, *next;

	if (res == NULL)
		return;
	for (a = res->arena; a != NULL; a = next) {
		next = a->next;
		free(a);
	}
	free(res->findings);
	free(res->tests);
	free(res);
}

/* The classes / function / test strings of a scope, cached. */
static int
scope_strings(struct scan *sc, int si)
{
	struct scope	*s = &sc->scopes[si];
	struct flaky_buf buf;
	int		 chain[MAXINDENT + 2], n = 0;
	const char	*src = sc->lx->src;

	if (s->classes != NULL)
		return 0;
	for (int p = si; p >= 0 && n < MAXINDENT + 2; p = sc->scopes[p].parent)
		chain[n++] = p;
	flaky_buf_init(&buf);
	s->function = "";
	s->test = "";
	for (int k = n - 1; k >= 0; k--) {
		struct scope *c = &sc->scopes[chain[k]];

		if (c->kind == KW_CLASS) {
			if (buf.len > 0)
				flaky_buf_addc(&buf, '.');
			flaky_buf_add(&buf, src + c->name_off, c->name_len);
		}
	}
	for (int k = 0; k < n; k++) {
		struct scope *c = &sc->scopes[chain[k]];

		if (c->kind != KW_DEF)
			continue;
		if (*s->function == '\0' &&
		    (s->function = scan_strndup(sc->res, src + c->name_off,
		    c->name_len)) == NULL)
			goto fail;
		if (c->name_len >= 4 && memcmp(src + c->name_off, "test",
		    4) == 0) {
			s->test = scan_strndup(sc->res, src + c->name_off,
			    c->name_len);
			if (s->test == NULL)
				goto fail;
			s->test_scope = chain[k];
			break;
		}
	}
	if (buf.oom || (s->classes = scan_strndup(sc->res,
	    buf.len ? buf.data : "", buf.len)) == NULL)
		goto fail;
	flaky_buf_free(&buf);
	return 0;
fail:
	flaky_buf_free(&buf);
	sc->oom = 1;
	return -ENOMEM;
}

/* Findings by line, category name, classes, function (tsv order). */
static int
finding_cmp(const void *pa, const void *pb)
{
	const struct flaky_finding *a = pa, *b = pb;
	int	 c;

	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if ((c = strcmp(category_names[a->category],
	    category_names[b->category])) != 0)
		return c;
	if ((c = strcmp(a->classes, b->classes)) != 0)
		return c;
	return strcmp(a->function, b->function);
}

/* The source line (trimmed, bounded at a UTF-8 boundary) of line n. */
static const char *
source_line(struct scan *sc, int n)
{
	struct lexer	*lx = sc->lx;
	size_t		 a, b, k;
	const char	*p;

	if (n < 1 || (size_t)n > lx->nlines)
		return "";
	a = lx->lines[n - 1];
	b = (size_t)n < lx->nlines ? lx->lines[n] : lx->len;
	while (a < b && strchr(" \t\f", lx->src[a]) != NULL)
		a++;
	while (b > a && (lx->src[b - 1] == '\n' || lx->src[b - 1] == '\r' ||
	    lx->src[b - 1] == ' ' || lx->src[b - 1] == '\t'))
		b--;
	if (b - a > MAXSOURCE) {
		b = a + MAXSOURCE;
		for (k = 0; k < 3 && b > a &&
		    ((unsigned char)lx->src[b] & 0xc0) == 0x80; k++)
			b--;
	}
	if ((p = scan_strndup(sc->res, lx->src + a, b - a)) == NULL) {
		sc->oom = 1;
		return "";
	}
	return p;
}

/* Turn the raw findings and scopes into the public result. */
int
scan_build_result(struct scan *sc)
{
	struct flaky_scan_result *res = sc->res;
	const char	*src = sc->lx->src;
	size_t		 ntests = 0;

	res->module_seeded = sc->module_seeds;
	if (scan_index_scopes(sc) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < sc->nscopes; i++) {
		struct scope *s = &sc->scopes[i];

		if (s->kind == KW_DEF && s->name_len >= 4 &&
		    memcmp(src + s->name_off, "test", 4) == 0)
			ntests++;
	}
	if (ntests > 0 &&
	    (res->tests = calloc(ntests, sizeof(*res->tests))) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < sc->nscopes; i++) {
		struct scope *s = &sc->scopes[i];
		struct flaky_scan_test *t;

		if (s->kind != KW_DEF || s->name_len < 4 ||
		    memcmp(src + s->name_off, "test", 4) != 0)
			continue;
		if (scope_strings(sc, (int)i) < 0)
			return -ENOMEM;
		t = &res->tests[res->ntests];
		s->test_index = (int)res->ntests++;
		t->line = s->line;
		t->classes = s->classes;
		t->name = s->function;
		t->seeded = scan_scope_seeded(sc, (int)i, 0);
	}
	if (sc->nfinds > 0 && (res->findings = calloc(sc->nfinds,
	    sizeof(*res->findings))) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < sc->nfinds; i++) {
		struct rawfinding *r = &sc->finds[i];
		struct flaky_finding *f = &res->findings[i];

		f->line = r->line;
		f->category = r->category;
		f->tolerance = r->tolerance ? r->tolerance : "";
		f->classes = f->function = f->test = "";
		f->test_index = -1;
		f->seeded = sc->module_seeds;
		if (r->scope >= 0) {
			struct scope *s = &sc->scopes[r->scope];

			if (scope_strings(sc, r->scope) < 0)
				return -ENOMEM;
			f->classes = s->classes;
			f->function = s->function;
			f->test = s->test;
			if (s->test_scope >= 0) {
				struct scope *ts = &sc->scopes[s->test_scope];

				f->test_index = ts->test_index;
				f->seeded = scan_scope_seeded(sc, s->test_scope, 0);
				if (ts->test_index >= 0)
					res->tests[ts->test_index].nfindings++;
			}
		}
		f->source = source_line(sc, f->line);
	}
	res->nfindings = sc->nfinds;
	if (res->nfindings > 1)
		qsort(res->findings, res->nfindings, sizeof(*res->findings),
		    finding_cmp);
	return sc->oom ? -ENOMEM : 0;
}
