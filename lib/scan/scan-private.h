/* The scan's internals: the state of one scan over a token stream (the
 * def and class scopes, the raw findings, the seeding marks) shared by
 * structure.c (statements and scopes), rules.c (the finding rules), seed.c
 * (the seeding signal) and result.c (the public result). Not a public
 * header: programs include scan/scan.h. */
#ifndef FLAKY_SCAN_PRIVATE_H
#define FLAKY_SCAN_PRIVATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "scan/lex-private.h"
#include "scan/scan.h"

/* Bounds on what a user controls in the output. */
#define MAXSOURCE	240
#define MAXTOLVALUE	64
#define MAXFIXTUREDEPTH	16

struct pyscan_arena {
	struct pyscan_arena	*next;
	size_t			 used, cap;
	char			 data[];
};

/* A def or class. */
struct scope {
	int		 kind;		/* KW_DEF or KW_CLASS */
	int		 parent;	/* enclosing scope or -1 */
	int		 line;
	uint32_t	 name_off, name_len;
	int32_t		 params_open;	/* token of "(" of a def, or -1 */
	int		 seeds;		/* code directly in it seeds */
	int		 fixture, autouse;
	int		 resolved;	/* 0 unknown, 1 no, 2 yes, 3 visiting */
	int		 test_index;
	int		 hooks;		/* class: a setUp ... seeds */
	int		 autouse_head;	/* class: first autouse fixture */
	int		 autouse_next;	/* next in the parent's list */
	const char	*classes, *function, *test;	/* cached strings */
	int		 test_scope;	/* nearest enclosing test* def */
};

struct rawfinding {
	int		 line;
	int		 category;
	int		 scope;
	const char	*tolerance;
};

struct scan {
	struct lexer		*lx;
	struct flaky_scan_result *res;
	struct scope		*scopes;
	size_t			 nscopes, capscopes;
	int			 stack[MAXINDENT + 2];	/* scopes open */
	int			 nstack;
	struct rawfinding	*finds;
	size_t			 nfinds, capfinds;
	int32_t			*memo;		/* primary starts, by token */
	int			*fixtures;	/* fixture scopes by name */
	size_t			 nfixtures;
	int			 module_seeds;
	int			 module_hooks;	/* a setup_module ... seeds */
	int			 module_autouse; /* first autouse fixture */
	int			 deco_fixture, deco_autouse, deco_pending;
	int			 oom;
};

/* Whether t is the operator op. */
static inline int
tok_is_op(const struct tok *t, uint32_t op)
{
	return t->type == T_OP && t->op == op;
}

/* A name that can be an operand: identifiers, True, False, None. */
static inline int
tok_is_name(const struct tok *t)
{
	return t->type == T_NAME && (t->kw == KW_NONE || t->kw == KW_FALSE ||
	    t->kw == KW_NONE_ || t->kw == KW_TRUE);
}

/* A plain name: an identifier, not a keyword (True/None/False included). */
static inline int
tok_is_ident(const struct tok *t)
{
	return t->type == T_NAME && t->kw == KW_NONE;
}

/* Whether t is the name str. */
static inline int
tok_eq(const struct scan *sc, const struct tok *t, const char *str)
{
	size_t	 n = strlen(str);

	return t->type == T_NAME && t->len == n &&
	    memcmp(sc->lx->src + t->off, str, n) == 0;
}

/* The function expression of a call spans [x, y]. Finds its last name
 * (when it is a Name or an Attribute, through parentheses), whether it is
 * an attribute, and whether it is a pure dotted name rooted at "torch". */
struct callee {
	size_t	 last;		/* token of the last name */
	int	 has_last;
	int	 is_attr;
	int	 is_bare;	/* a Name */
	int	 torch;		/* torch.<...>.last */
	size_t	 x;		/* first token after unwrapping parentheses */
};

/* structure.c */
int	 scan_tokens(struct scan *);
size_t	 scan_find_level(const struct tok *, size_t, size_t, uint32_t, int);

/* rules.c */
int	 scan_ends_primary(const struct tok *);
size_t	 scan_primary_start(const struct tok *, size_t, size_t, int32_t *);
void	 scan_callee(struct scan *, size_t, size_t, struct callee *);
void	 scan_calls(struct scan *, size_t, size_t, size_t, size_t, size_t);
void	 scan_assert(struct scan *, size_t, size_t, size_t *, size_t *);
void	 scan_add_finding(struct scan *, int, int, const char *);
int	 scan_current_scope(const struct scan *);

/* seed.c */
void	 scan_mark_seeds(struct scan *);
int	 scan_call_seeds(struct scan *, size_t, const struct callee *);
int	 scan_index_scopes(struct scan *);
int	 scan_scope_seeded(struct scan *, int, int);

/* result.c */
const char *scan_strndup(struct flaky_scan_result *, const char *, size_t);
int	 scan_build_result(struct scan *);

#endif
