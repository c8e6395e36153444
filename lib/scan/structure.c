/* The statement structure over the token stream: logical lines, simple
 * and compound statements, decorators, and the def and class scopes kept
 * by indentation. It also rejects the parser-level errors the tokens show
 * by themselves (unexpected indent, a missing block, a decorator without a
 * def, Python 2 left-overs). The rules and the seeding signal are applied
 * to each statement from here. */
#include "buildconf.h"

#include <stdlib.h>
#include <string.h>

#include "scan/scan-private.h"

/* Next token at this bracket level in [k, b) that is op (lambda colons
 * and parameters skipped when lambda_aware), or b. */
size_t
scan_find_level(const struct tok *toks, size_t k, size_t b, uint32_t op,
    int lambda_aware)
{
	int	 lambdas = 0;

	for (; k < b; k++) {
		const struct tok *t = &toks[k];

		if (t->match >= 0 && (size_t)t->match > k) {
			k = (size_t)t->match;
			continue;
		}
		if (lambda_aware && t->type == T_NAME && t->kw == KW_LAMBDA) {
			lambdas++;
			continue;
		}
		if (lambdas > 0 && tok_is_op(t, OP1(':'))) {
			lambdas--;
			continue;
		}
		if (lambdas > 0 && tok_is_op(t, OP1(',')))
			continue;
		if (t->type == T_OP && t->op == op)
			return k;
	}
	return b;
}

/* Keywords that only begin a statement: one inside [a, b) is an error
 * ("x = import y", "asser return z"). */
static int
stray_keyword(struct scan *sc, size_t a, size_t b)
{
	const struct tok *toks = sc->lx->toks;

	for (size_t k = a; k < b; k++)
		switch (toks[k].kw) {
		case KW_IMPORT: case KW_RETURN: case KW_PASS: case KW_BREAK:
		case KW_CONTINUE: case KW_DEL: case KW_GLOBAL: case KW_NONLOCAL:
		case KW_ASSERT: case KW_RAISE: case KW_DEF: case KW_CLASS:
		case KW_TRY: case KW_WHILE: case KW_EXCEPT: case KW_FINALLY:
		case KW_ELIF:
			return lex_error(sc->lx, toks[k].line, "invalid syntax");
		}
	return 0;
}

/* One simple statement, tokens [a, b). */
static void
scan_simple(struct scan *sc, size_t a, size_t b)
{
	const struct tok *toks = sc->lx->toks;
	size_t		 ca = 0, cb = 0;

	if (a >= b)
		return;
	if (toks[a].kw != KW_FROM && toks[a].kw != KW_IMPORT &&
	    stray_keyword(sc, a + 1, b) < 0)
		return;
	if (toks[a].kw == KW_RAISE && scan_find_level(toks, a, b, OP1(','), 1) < b) {
		lex_error(sc->lx, toks[a].line, "invalid syntax");	/* py2 */
		return;
	}
	if (toks[a].type == T_NAME && toks[a].kw == KW_ASSERT)
		scan_assert(sc, a, b, &ca, &cb);
	scan_calls(sc, a, b, ca, cb, (size_t)-1);
}

/* Simple statements separated by ";" in [a, b). */
static void
scan_simple_list(struct scan *sc, size_t a, size_t b)
{
	const struct tok *toks = sc->lx->toks;

	while (a < b) {
		size_t	 e = scan_find_level(toks, a, b, OP1(';'), 0);

		scan_simple(sc, a, e);
		a = e + 1;
	}
}

/* Whether t begins a compound statement with a header colon. */
static int
is_compound(const struct scan *sc, const struct tok *t)
{
	switch (t->kw) {
	case KW_IF: case KW_ELIF: case KW_ELSE: case KW_FOR: case KW_WHILE:
	case KW_TRY: case KW_EXCEPT: case KW_FINALLY: case KW_WITH:
		return 1;
	}
	return tok_eq(sc, t, "match") || tok_eq(sc, t, "case");
}

/* A new def or class record, its decorators' fixture flags taken. */
static int
new_scope(struct scan *sc, int kind, const struct tok *name, size_t open)
{
	struct scope	*s;

	if (sc->nscopes == sc->capscopes) {
		size_t	 cap = sc->capscopes ? sc->capscopes * 2 : 64;
		void	*p;

		if ((p = realloc(sc->scopes, cap * sizeof(*sc->scopes))) ==
		    NULL) {
			sc->oom = 1;
			return -1;
		}
		sc->scopes = p;
		sc->capscopes = cap;
	}
	s = &sc->scopes[sc->nscopes];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->parent = scan_current_scope(sc);
	s->line = name->line;
	s->name_off = name->off;
	s->name_len = name->len;
	s->params_open = kind == KW_DEF ? (int32_t)open : -1;
	s->fixture = sc->deco_fixture;
	s->autouse = sc->deco_autouse;
	s->test_index = -1;
	s->test_scope = -1;
	s->autouse_head = s->autouse_next = -1;
	return (int)sc->nscopes++;
}

/* A decorator line "@expr": is it a fixture, is it autouse. */
static void
scan_decorator(struct scan *sc, size_t a, size_t b)
{
	const struct tok *toks = sc->lx->toks;
	size_t		 y = b - 1;

	scan_calls(sc, a, b, 0, 0, (size_t)-1);
	if (tok_is_op(&toks[y], OP1(')')) && (size_t)toks[y].match > a)
		y = (size_t)toks[y].match - 1;
	if (y >= a && tok_eq(sc, &toks[y], "fixture"))
		sc->deco_fixture = 1;
	for (size_t k = a; k + 2 < b; k++)
		if (tok_eq(sc, &toks[k], "autouse") &&
		    tok_is_op(&toks[k + 1], OP1('=')) &&
		    toks[k + 2].kw == KW_TRUE)
			sc->deco_autouse = 1;
}

/* Grammar errors the tokens of one logical line show by themselves, most
 * of them Python 2 left-overs: two operands side by side ("print x",
 * "exec code in ns", "ur''", "123L"), a keyword as an attribute name,
 * "lambda (x, y):". */
static int
check_line(struct scan *sc, size_t a, size_t b)
{
	struct lexer	*lx = sc->lx;
	const struct tok *toks = lx->toks;

	if (toks[a].kw == KW_FROM || toks[a].kw == KW_IMPORT)
		return 0;	/* "from ...pkg import x" */
	for (size_t k = a + 1; k < b; k++) {
		const struct tok *p = &toks[k - 1], *c = &toks[k];

		if (tok_is_op(p, OP1('.')) && c->type == T_NAME &&
		    c->kw != KW_NONE && c->kw != KW_IMPORT)
			return lex_error(lx, c->line, "invalid syntax");
		if (p->type == T_NAME && p->kw == KW_LAMBDA &&
		    tok_is_op(c, OP1('(')))
			return lex_error(lx, c->line, "invalid syntax");
		if (!scan_ends_primary(p))
			continue;
		if (c->type == T_STRING) {
			if (p->type == T_STRING || p->type == T_FEND)
				continue;
		} else if (!tok_is_name(c) && c->type != T_NUMBER &&
		    !tok_is_op(c, OP1('{')) && !tok_is_op(c, OP3('.', '.', '.')))
			continue;
		/* The soft keywords: "match x:", "case [a, b]:". */
		if (k - 1 == a && (tok_eq(sc, p, "match") ||
		    tok_eq(sc, p, "case")) &&
		    scan_find_level(toks, k, b, OP1(':'), 1) < b)
			continue;
		return lex_error(lx, c->line, "invalid syntax");
	}
	return 0;
}

/* A token an operand can start with (permissive: star expressions). */
static int
starts_operand(const struct tok *t)
{
	switch (t->type) {
	case T_NAME:
		return t->kw == KW_NONE || t->kw == KW_FALSE ||
		    t->kw == KW_NONE_ || t->kw == KW_TRUE ||
		    t->kw == KW_LAMBDA || t->kw == KW_NOT ||
		    t->kw == KW_AWAIT || t->kw == KW_YIELD;
	case T_NUMBER:
	case T_STRING:
		return 1;
	case T_OP:
		switch (t->op) {
		case OP1('('): case OP1('['): case OP1('{'): case OP1('-'):
		case OP1('+'): case OP1('~'): case OP1('*'): case OP2('*', '*'):
		case OP3('.', '.', '.'):
			return 1;
		}
	}
	return 0;
}

/* An operator that needs an operand after it. "*" and "/" are left out:
 * "import *", "def f(a, *, b, /)". */
static int
needs_operand(const struct tok *t)
{
	if (t->type == T_NAME)
		return t->kw == KW_AND || t->kw == KW_OR || t->kw == KW_IN ||
		    t->kw == KW_IS || t->kw == KW_NOT;
	if (t->type != T_OP)
		return 0;
	switch (t->op) {
	case OP1('+'): case OP1('-'): case OP1('%'): case OP1('@'):
	case OP1('&'): case OP1('|'): case OP1('^'): case OP1('~'):
	case OP1('<'): case OP1('>'): case OP1('='): case OP1('.'):
	case OP2('*', '*'): case OP2('/', '/'): case OP2('<', '<'):
	case OP2('>', '>'): case OP2('<', '='): case OP2('>', '='):
	case OP2('=', '='): case OP2('!', '='): case OP2('-', '>'):
	case OP2(':', '='): case OP2('+', '='): case OP2('-', '='):
	case OP2('*', '='): case OP2('/', '='): case OP2('%', '='):
	case OP2('&', '='): case OP2('|', '='): case OP2('^', '='):
	case OP2('@', '='): case OP3('*', '*', '='): case OP3('/', '/', '='):
	case OP3('>', '>', '='): case OP3('<', '<', '='):
		return 1;
	}
	return 0;
}

/* Operators without an operand after them ("x = ", "a + )", "l <"),
 * stray semicolons: errors the token order shows. */
static int
check_operators(struct scan *sc, size_t a, size_t b)
{
	struct lexer	*lx = sc->lx;
	const struct tok *toks = lx->toks;

	if (toks[a].kw == KW_FROM || toks[a].kw == KW_IMPORT)
		return 0;
	if (tok_is_op(&toks[a], OP1(';')))
		return lex_error(lx, toks[a].line, "invalid syntax");
	for (size_t k = a; k < b; k++) {
		const struct tok *t = &toks[k], *n = k + 1 < b ? &toks[k + 1] :
		    NULL;

		if (tok_is_op(t, OP1(';')) && n != NULL && tok_is_op(n, OP1(';')))
			return lex_error(lx, t->line, "invalid syntax");
		if (!needs_operand(t))
			continue;
		if (n == NULL)
			return lex_error(lx, t->line, "invalid syntax");
		if (tok_is_op(t, OP1('.'))) {
			if (n->type != T_NAME)
				return lex_error(lx, t->line, "invalid syntax");
			continue;
		}
		if (t->kw == KW_NOT && n->kw == KW_IN)
			continue;		/* "not in" */
		if (!starts_operand(n))
			return lex_error(lx, t->line, "invalid syntax");
	}
	return 0;
}

/* One logical line, tokens [a, b) without its NEWLINE. Returns 1 when it
 * is a block header waiting for its indented body, 0, or -1 on a syntax
 * error (recorded in the lexer). */
static int
scan_line(struct scan *sc, size_t a, size_t b, int *pending)
{
	struct lexer	*lx = sc->lx;
	const struct tok *toks = lx->toks;
	size_t		 t = a, hc;
	int		 kw;

	*pending = -1;
	if (tok_is_op(&toks[a], OP1('@'))) {
		if (b == a + 1)
			return lex_error(lx, toks[a].line, "invalid syntax");
		scan_decorator(sc, a + 1, b);
		sc->deco_pending = 1;
		return 0;
	}
	kw = toks[a].kw;
	if (kw == KW_ASYNC && a + 1 < b) {
		t = a + 1;
		kw = toks[t].kw;
		if (kw != KW_DEF && kw != KW_FOR && kw != KW_WITH)
			return lex_error(lx, toks[a].line, "invalid syntax");
	}
	if (sc->deco_pending && kw != KW_DEF && kw != KW_CLASS)
		return lex_error(lx, toks[a].line, "invalid syntax");
	sc->deco_pending = 0;
	if (kw == KW_DEF || kw == KW_CLASS) {
		size_t	 open = (size_t)-1;
		int	 si;

		if (t + 1 >= b || !tok_is_ident(&toks[t + 1]))
			return lex_error(lx, toks[t].line, "invalid syntax");
		if (t + 2 < b && tok_is_op(&toks[t + 2], OP1('(')))
			open = t + 2;
		else if (kw == KW_DEF || t + 2 >= b ||
		    !tok_is_op(&toks[t + 2], OP1(':')))
			return lex_error(lx, toks[t].line, "invalid syntax");
		hc = scan_find_level(toks, t + 2, b, OP1(':'), 0);
		if (hc == b)
			return lex_error(lx, toks[t].line, "expected ':'");
		for (size_t k = open + 1; kw == KW_DEF &&
		    k < (size_t)toks[open].match; k++) {
			if (tok_is_op(&toks[k], OP1('(')) &&
			    (tok_is_op(&toks[k - 1], OP1('(')) ||
			    tok_is_op(&toks[k - 1], OP1(','))))
				return lex_error(lx, toks[k].line,
				    "invalid syntax");
			if (toks[k].match >= 0 && (size_t)toks[k].match > k)
				k = (size_t)toks[k].match;
		}
		if (stray_keyword(sc, t + 2, hc) < 0)
			return -1;
		scan_calls(sc, a, hc, 0, 0, open);
		if ((si = new_scope(sc, kw, &toks[t + 1], open)) < 0)
			return -1;
		sc->deco_fixture = sc->deco_autouse = 0;
		if (hc + 1 == b) {
			*pending = si;
			return 1;
		}
		sc->stack[sc->nstack++] = si;
		scan_simple_list(sc, hc + 1, b);
		sc->nstack--;
		return 0;
	}
	if (is_compound(sc, &toks[t]) || kw == KW_FOR || kw == KW_WITH) {
		hc = scan_find_level(toks, t, b, OP1(':'), 1);
		if (hc < b && kw == KW_EXCEPT &&
		    scan_find_level(toks, t + 1, hc, OP1(','), 1) < hc)
			return lex_error(lx, toks[t].line, "multiple exception "
			    "types must be parenthesized");
		if (hc < b) {
			if (stray_keyword(sc, t + 1, hc) < 0)
				return -1;
			scan_calls(sc, a, hc, 0, 0, (size_t)-1);
			scan_simple_list(sc, hc + 1, b);
			return hc + 1 == b;
		}
		if (toks[t].kw != KW_NONE)
			return lex_error(lx, toks[t].line, "expected ':'");
	}
	if (tok_is_op(&toks[b - 1], OP1(':')))
		return lex_error(lx, toks[b - 1].line, "invalid syntax");
	scan_simple_list(sc, a, b);
	return 0;
}

/* Walk the logical lines, keeping the def/class scopes by indentation. */
int
scan_tokens(struct scan *sc)
{
	struct lexer	*lx = sc->lx;
	const struct tok *toks = lx->toks;
	int		 levels[MAXINDENT + 2];	/* scope pushed per INDENT */
	int		 nlevels = 0, expect = 0, pending = -1;
	size_t		 i = 0;

	while (toks[i].type != T_END && !sc->oom) {
		size_t	 e;
		int	 r;

		if (toks[i].type == T_INDENT) {
			if (!expect)
				return lex_error(lx, toks[i].line,
				    "unexpected indent");
			levels[nlevels++] = pending;
			if (pending >= 0)
				sc->stack[sc->nstack++] = pending;
			expect = 0;
			pending = -1;
			i++;
			continue;
		}
		if (expect)
			return lex_error(lx, toks[i].line, "expected an "
			    "indented block");
		if (toks[i].type == T_DEDENT) {
			if (sc->deco_pending)
				return lex_error(lx, toks[i].line,
				    "invalid syntax");
			if (nlevels > 0 && levels[--nlevels] >= 0)
				sc->nstack--;
			i++;
			continue;
		}
		for (e = i; toks[e].type != T_NEWLINE && toks[e].type != T_END;
		    e++)
			;
		if (e == i) {
			/* Nothing but a continuation: "\\" then a blank line. */
			i = toks[e].type == T_NEWLINE ? e + 1 : e;
			continue;
		}
		if (check_line(sc, i, e) < 0 || check_operators(sc, i, e) < 0 ||
		    (r = scan_line(sc, i, e, &pending)) < 0)
			return -1;
		if (lx->failed)
			return -1;
		expect = r;
		i = toks[e].type == T_NEWLINE ? e + 1 : e;
	}
	if (expect)
		return lex_error(lx, toks[i].line, "expected an indented block");
	if (sc->deco_pending)
		return lex_error(lx, toks[i].line, "invalid syntax");
	return 0;
}
