/* pyscan: a Python tokenizer (3.11 rules: string prefixes, triple quotes,
 * f-string replacement fields, continuations, brackets across lines, tabs
 * vs spaces, CRLF and CR, a BOM) and, over its tokens, the statements with
 * their enclosing classes and functions by indentation. On that structure
 * the finding rules of docs/scan.md and the seeding signal. The tokenizer
 * rejects what CPython's tokenizer rejects and a few parser-level errors
 * (unexpected indent, missing block, decorators without a def), so a file
 * Python cannot parse is reported as skipped rather than scanned wrongly. */
#include "buildconf.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pyscan.h"
#include "util.h"

/* CPython's own limits (tokenizer.h MAXINDENT, MAXLEVEL). */
#define MAXINDENT	100
#define MAXLEVEL	200
/* f-strings inside f-string fields: quotes run out after four levels. */
#define MAXFDEPTH	8
/* Bounds on what a user controls in the output. */
#define MAXSOURCE	240
#define MAXTOLVALUE	64
#define MAXFIXTUREDEPTH	16

enum {
	T_NAME = 1, T_NUMBER, T_STRING, T_OP, T_NEWLINE, T_INDENT, T_DEDENT,
	T_FSTART, T_FEND, T_END
};

enum {
	KW_NONE, KW_FALSE, KW_NONE_, KW_TRUE, KW_AND, KW_AS, KW_ASSERT,
	KW_ASYNC, KW_AWAIT, KW_BREAK, KW_CLASS, KW_CONTINUE, KW_DEF, KW_DEL,
	KW_ELIF, KW_ELSE, KW_EXCEPT, KW_FINALLY, KW_FOR, KW_FROM, KW_GLOBAL,
	KW_IF, KW_IMPORT, KW_IN, KW_IS, KW_LAMBDA, KW_NONLOCAL, KW_NOT, KW_OR,
	KW_PASS, KW_RAISE, KW_RETURN, KW_TRY, KW_WHILE, KW_WITH, KW_YIELD
};

static const struct {
	const char	*name;
	unsigned char	 len;
	unsigned char	 kw;
} keywords[] = {
	{ "False", 5, KW_FALSE }, { "None", 4, KW_NONE_ },
	{ "True", 4, KW_TRUE }, { "and", 3, KW_AND }, { "as", 2, KW_AS },
	{ "assert", 6, KW_ASSERT }, { "async", 5, KW_ASYNC },
	{ "await", 5, KW_AWAIT }, { "break", 5, KW_BREAK },
	{ "class", 5, KW_CLASS }, { "continue", 8, KW_CONTINUE },
	{ "def", 3, KW_DEF }, { "del", 3, KW_DEL }, { "elif", 4, KW_ELIF },
	{ "else", 4, KW_ELSE }, { "except", 6, KW_EXCEPT },
	{ "finally", 7, KW_FINALLY }, { "for", 3, KW_FOR },
	{ "from", 4, KW_FROM }, { "global", 6, KW_GLOBAL }, { "if", 2, KW_IF },
	{ "import", 6, KW_IMPORT }, { "in", 2, KW_IN }, { "is", 2, KW_IS },
	{ "lambda", 6, KW_LAMBDA }, { "nonlocal", 8, KW_NONLOCAL },
	{ "not", 3, KW_NOT }, { "or", 2, KW_OR }, { "pass", 4, KW_PASS },
	{ "raise", 5, KW_RAISE }, { "return", 6, KW_RETURN },
	{ "try", 3, KW_TRY }, { "while", 5, KW_WHILE }, { "with", 4, KW_WITH },
	{ "yield", 5, KW_YIELD },
};

/* Operators are stored as up to three bytes packed in an int. */
#define OP1(a)		((uint32_t)(unsigned char)(a))
#define OP2(a, b)	(OP1(a) | OP1(b) << 8)
#define OP3(a, b, c)	(OP2(a, b) | OP1(c) << 16)

struct tok {
	uint32_t	 off;		/* byte offset of the first byte */
	uint32_t	 len;
	int32_t		 line;
	uint32_t	 op;		/* T_OP: packed bytes */
	int32_t		 match;		/* brackets: index of the partner */
	unsigned char	 type;
	unsigned char	 kw;		/* T_NAME: keyword or KW_NONE */
};

struct lexer {
	const char	*src;
	size_t		 len;		/* of the whole source */
	size_t		 pos;
	size_t		 end;		/* of the range being tokenized */
	int		 line;
	int		 atbol;		/* at the beginning of a line */
	int		 fdepth;	/* f-string fields being tokenized */

	struct tok	*toks;
	size_t		 ntoks, captoks;

	uint32_t	*lines;		/* offset where each line starts */
	size_t		 nlines, caplines;

	int		 indents[MAXINDENT + 1];
	int		 altindents[MAXINDENT + 1];
	int		 nindent;

	int32_t		 brtok[MAXLEVEL + 1];	/* token of each open bracket */
	char		 brchar[MAXLEVEL + 1];
	int		 depth;

	int		 check_utf8;	/* no cookie for another encoding */
	int		 oom;
	int		 failed;
	int		 errline;
	char		 errmsg[128];
};

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

/* --- arena: the strings a result hands out ------------------------------ */

/* A copy of s[0..n) that lives as long as the result. */
static const char *
arena_strndup(struct flaky_scan_result *res, const char *s, size_t n)
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

/* --- tokenizer ---------------------------------------------------------- */

/* Record the first error (the one CPython would report first, mostly). */
static int
lex_error(struct lexer *lx, int line, const char *msg)
{
	if (!lx->failed) {
		lx->failed = 1;
		lx->errline = line;
		snprintf(lx->errmsg, sizeof lx->errmsg, "%s", msg);
	}
	return -1;
}

/* Append a token; on allocation failure the lexer stops with oom set. */
static int
add_tok(struct lexer *lx, int type, size_t off, size_t len, int line)
{
	struct tok	*t;

	if (lx->ntoks == lx->captoks) {
		size_t	 cap = lx->captoks ? lx->captoks * 2 : 1024;
		void	*p;

		if ((p = realloc(lx->toks, cap * sizeof(*lx->toks))) == NULL) {
			lx->oom = 1;
			return lex_error(lx, line, "out of memory");
		}
		lx->toks = p;
		lx->captoks = cap;
	}
	t = &lx->toks[lx->ntoks++];
	t->off = (uint32_t)off;
	t->len = (uint32_t)len;
	t->line = line;
	t->type = (unsigned char)type;
	t->kw = KW_NONE;
	t->op = 0;
	t->match = -1;
	return 0;
}

/* A newline ends at pos; count it (the outermost string or line owns the
 * line table, f-string fields are scanned a second time). */
static int
count_newline(struct lexer *lx, size_t next)
{
	lx->line++;
	if (lx->fdepth > 0)
		return 0;
	if (lx->nlines == lx->caplines) {
		size_t	 cap = lx->caplines ? lx->caplines * 2 : 1024;
		void	*p;

		if ((p = realloc(lx->lines, cap * sizeof(*lx->lines))) == NULL) {
			lx->oom = 1;
			return lex_error(lx, lx->line, "out of memory");
		}
		lx->lines = p;
		lx->caplines = cap;
	}
	lx->lines[lx->nlines++] = (uint32_t)next;
	return 0;
}

/* Length of the newline at i: 2 for CRLF, 1 for LF or a lone CR, else 0. */
static inline size_t
newline_len(const char *s, size_t i, size_t end)
{
	if (s[i] == '\n')
		return 1;
	if (s[i] == '\r')
		return i + 1 < end && s[i + 1] == '\n' ? 2 : 1;
	return 0;
}

/* Identifier bytes: ASCII letters, "_" and any non-ASCII byte. */
static inline int
is_name_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    c >= 0x80;
}

/* Identifier continuation bytes: is_name_start() and digits. */
static inline int
is_name_char(unsigned char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

/* An ASCII digit. */
static inline int
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* The keyword a name is, or KW_NONE (soft keywords are names). */
static int
keyword(const char *s, size_t n)
{
	/* Keywords start with one of these; most names do not. */
	static const char initial[] = "FNTacdefgilnoprtwy";

	if (n < 2 || n > 8 || memchr(initial, s[0], sizeof initial - 1) == NULL)
		return KW_NONE;
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(keywords); i++)
		if (keywords[i].len == n && keywords[i].name[0] == s[0] &&
		    memcmp(keywords[i].name, s, n) == 0)
			return keywords[i].kw;
	return KW_NONE;
}

/* 1 raw, 2 f-string, 4 valid prefix, 8 bytes; 0 when s[0..n) is not a
 * prefix. */
static int
string_prefix(const char *s, size_t n)
{
	int	 r = 0, f = 0, b = 0, u = 0;

	if (n > 2)
		return 0;
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case 'r': case 'R': r++; break;
		case 'f': case 'F': f++; break;
		case 'b': case 'B': b++; break;
		case 'u': case 'U': u++; break;
		default: return 0;
		}
	}
	if (r > 1 || f > 1 || b > 1 || u > 1 || (u && n > 1) || (f && b))
		return 0;
	return 4 | (r ? 1 : 0) | (f ? 2 : 0) | (b ? 8 : 0);
}

static int	lex_range(struct lexer *, size_t, size_t);
static size_t	utf8_check(const unsigned char *, size_t);
static const char *check_name_utf8(const unsigned char *, size_t);
static int	fstring_literal(struct lexer *, size_t *, size_t, int *, int,
		    int);

/* Push an opening bracket (or an f-string field, "F"). */
static int
open_bracket(struct lexer *lx, char c, int line)
{
	if (lx->depth >= MAXLEVEL)
		return lex_error(lx, line, "too many nested parentheses");
	lx->brtok[lx->depth] = (int32_t)(lx->ntoks - 1);
	lx->brchar[lx->depth] = c;
	lx->depth++;
	return 0;
}

/* Pop a bracket, linking the pair of tokens through match. */
static int
close_bracket(struct lexer *lx, char c, int line)
{
	char	 o, want;
	int32_t	 ti;

	if (lx->depth == 0 || lx->brchar[lx->depth - 1] == 'F')
		return lex_error(lx, line, c == ')' ? "unmatched ')'" :
		    c == ']' ? "unmatched ']'" : "unmatched '}'");
	o = lx->brchar[lx->depth - 1];
	want = o == '(' ? ')' : o == '[' ? ']' : '}';
	if (c != want)
		return lex_error(lx, line, "closing parenthesis does not match "
		    "opening parenthesis");
	ti = lx->brtok[--lx->depth];
	lx->toks[ti].match = (int32_t)(lx->ntoks - 1);
	lx->toks[lx->ntoks - 1].match = ti;
	return 0;
}

/* One replacement field of an f-string, *pi just after its "{": the
 * expression (tokenized into the stream between T_FSTART and T_FEND), an
 * optional "=", conversion and format spec, up to the closing "}". Follows
 * CPython 3.11's fstring_find_expr. */
static int
fstring_field(struct lexer *lx, size_t *pi, size_t end, int *line, int raw,
    int lvl)
{
	const char	*s = lx->src;
	size_t		 i = *pi, estart = *pi, eend;
	char		 parens[MAXLEVEL];
	int		 nested = 0, quote = 0, triple = 0, saveline, rc;
	size_t		 savepos, saveend;

	if (lvl >= 2)
		return lex_error(lx, *line, "f-string: expressions nested too "
		    "deeply");
	for (; i < end; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\')
			return lex_error(lx, *line, "f-string expression part "
			    "cannot include a backslash");
		if (quote) {
			if (c == quote) {
				if (triple) {
					if (i + 2 < end && s[i + 1] == quote &&
					    s[i + 2] == quote) {
						i += 2;
						quote = 0;
					}
				} else
					quote = 0;
			}
			continue;
		}
		if (c == '\'' || c == '"') {
			triple = i + 2 < end && s[i + 1] == c && s[i + 2] == c;
			if (triple)
				i += 2;
			quote = c;
		} else if (c == '[' || c == '{' || c == '(') {
			if (nested >= MAXLEVEL)
				return lex_error(lx, *line, "f-string: too many "
				    "nested parenthesis");
			parens[nested++] = (char)c;
		} else if (c == '#') {
			return lex_error(lx, *line, "f-string expression part "
			    "cannot include '#'");
		} else if (nested == 0 && (c == '!' || c == ':' || c == '}' ||
		    c == '=' || c == '>' || c == '<')) {
			if (i + 1 < end) {
				char	 n = s[i + 1];

				if ((c == '!' && n == '=') ||
				    (c == '=' && n == '=') ||
				    (c == '<' && n == '=') ||
				    (c == '>' && n == '=')) {
					i++;
					continue;
				}
			}
			if (c == '>' || c == '<')
				continue;
			break;
		} else if (c == ']' || c == '}' || c == ')') {
			char	 o;

			if (nested == 0)
				return lex_error(lx, *line, "f-string: unmatched "
				    "closing parenthesis");
			o = parens[--nested];
			if ((o == '(' && c != ')') || (o == '[' && c != ']') ||
			    (o == '{' && c != '}'))
				return lex_error(lx, *line, "f-string: closing "
				    "parenthesis does not match opening "
				    "parenthesis");
		}
	}
	if (quote)
		return lex_error(lx, *line, "f-string: unterminated string");
	if (nested)
		return lex_error(lx, *line, "f-string: unmatched parenthesis");
	if (i >= end)
		return lex_error(lx, *line, "f-string: expecting '}'");
	eend = i;
	{
		size_t	 k;

		for (k = estart; k < eend; k++)
			if (strchr(" \t\n\r\f\v", s[k]) == NULL)
				break;
		if (k == eend)
			return lex_error(lx, *line, "f-string: empty "
			    "expression not allowed");
	}

	/* Tokenize the expression as if in parentheses (CPython compiles
	 * "(" expr ")"), its lines counted from where it starts. */
	if (add_tok(lx, T_FSTART, estart, 0, *line) < 0 ||
	    open_bracket(lx, 'F', *line) < 0)
		return -1;
	savepos = lx->pos;
	saveend = lx->end;
	saveline = lx->line;
	lx->line = *line;
	lx->fdepth++;
	rc = lex_range(lx, estart, eend);
	lx->fdepth--;
	*line = lx->line;
	lx->pos = savepos;
	lx->end = saveend;
	lx->line = saveline;
	if (rc < 0)
		return -1;
	if (lx->depth == 0 || lx->brchar[lx->depth - 1] != 'F')
		return lex_error(lx, *line, "f-string: unmatched parenthesis");
	if (add_tok(lx, T_FEND, eend, 0, *line) < 0)
		return -1;
	{
		int32_t ti = lx->brtok[--lx->depth];

		lx->toks[ti].match = (int32_t)(lx->ntoks - 1);
		lx->toks[lx->ntoks - 1].match = ti;
	}

	i = eend;
	if (s[i] == '=') {
		i++;
		while (i < end && strchr(" \t\n\r\f\v", s[i]) != NULL) {
			size_t	 nl = newline_len(s, i, end);

			if (nl) {
				(*line)++;
				i += nl;
			} else
				i++;
		}
	}
	if (i < end && s[i] == '!') {
		i++;
		if (i >= end)
			return lex_error(lx, *line, "f-string: expecting '}'");
		if (s[i] != 's' && s[i] != 'r' && s[i] != 'a')
			return lex_error(lx, *line, "f-string: invalid "
			    "conversion character");
		i++;
	}
	if (i < end && s[i] == ':') {
		i++;
		if (i >= end)
			return lex_error(lx, *line, "f-string: expecting '}'");
		if (fstring_literal(lx, &i, end, line, raw, lvl + 1) < 0)
			return -1;
	}
	if (i >= end || s[i] != '}')
		return lex_error(lx, *line, "f-string: expecting '}'");
	*pi = i + 1;
	return 0;
}

/* The literal part of an f-string body (lvl 0) or of a format spec (lvl
 * > 0, which ends at a "}"), with the fields in it. */
static int
fstring_literal(struct lexer *lx, size_t *pi, size_t end, int *line, int raw,
    int lvl)
{
	const char	*s = lx->src;
	size_t		 i = *pi;

	while (i < end) {
		unsigned char	 c = (unsigned char)s[i];
		size_t		 nl;

		if (!raw && c == '\\' && i + 1 < end) {
			i++;
			c = (unsigned char)s[i];
			if (c == 'N' && i + 1 < end && s[i + 1] == '{') {
				/* \N{NAME} is not a field. */
				for (i += 2; i < end && s[i] != '}'; i++)
					if ((nl = newline_len(s, i, end))) {
						(*line)++;
						i += nl - 1;
					}
				if (i < end)
					i++;
				continue;
			}
		}
		if (c == '{') {
			if (lvl == 0 && i + 1 < end && s[i + 1] == '{') {
				i += 2;
				continue;
			}
			i++;
			if (fstring_field(lx, &i, end, line, raw, lvl) < 0)
				return -1;
			continue;
		}
		if (c == '}') {
			if (lvl > 0)
				break;
			if (i + 1 < end && s[i + 1] == '}') {
				i += 2;
				continue;
			}
			return lex_error(lx, *line, "f-string: single '}' is "
			    "not allowed");
		}
		if ((nl = newline_len(s, i, end))) {
			(*line)++;
			i += nl;
		} else
			i++;
	}
	*pi = i;
	return 0;
}

/* Exactly n hex digits at s[i]; their value in *v. */
static int
hexdigits(const char *s, size_t i, size_t end, size_t n, unsigned long *v)
{
	*v = 0;
	if (end - i < n)
		return 0;
	for (size_t k = 0; k < n; k++) {
		char	 c = s[i + k];
		int	 d = c >= '0' && c <= '9' ? c - '0' :
		    (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 :
		    -1;

		if (d < 0)
			return 0;
		*v = *v << 4 | (unsigned long)d;
	}
	return 1;
}

/* The escapes Python decodes at compile time must be well formed:
 * \xhh, and in str literals \uxxxx, \Uxxxxxxxx and \N{name}. */
static const char *
check_escapes(const char *s, size_t i, size_t end, int bytes)
{
	unsigned long	 v;

	for (; i < end; i++) {
		if (s[i] != '\\')
			continue;
		if (++i >= end)
			break;
		switch (s[i]) {
		case 'x':
			if (!hexdigits(s, i + 1, end, 2, &v))
				return "(unicode error) truncated \\xXX escape";
			break;
		case 'u':
			if (!bytes && !hexdigits(s, i + 1, end, 4, &v))
				return "(unicode error) truncated \\uXXXX escape";
			break;
		case 'U':
			if (!bytes && (!hexdigits(s, i + 1, end, 8, &v) ||
			    v > 0x10ffff))
				return "(unicode error) bad \\UXXXXXXXX escape";
			break;
		case 'N':
			if (bytes)
				break;
			if (i + 1 >= end || s[i + 1] != '{')
				return "(unicode error) malformed \\N character "
				    "escape";
			{
				size_t	 k = i + 2;

				while (k < end && s[k] != '}' && s[k] != '\n' &&
				    s[k] != '\\' && s[k] != '"' && s[k] != '\'')
					k++;
				if (k >= end || s[k] != '}' || k == i + 2)
					return "(unicode error) malformed \\N "
					    "character escape";
			}
			break;
		}
	}
	return NULL;
}

/* A string literal from its prefix at start, the quote at q. */
static int
lex_string(struct lexer *lx, size_t start, size_t q, int flags)
{
	const char	*s = lx->src;
	size_t		 end = lx->end, i, body, bodyend;
	char		 quote = s[q];
	int		 triple, line = lx->line;

	triple = q + 2 < end && s[q + 1] == quote && s[q + 2] == quote;
	i = body = q + (triple ? 3 : 1);
	for (;;) {
		size_t	 nl;

		if (i >= end)
			return lex_error(lx, line, triple ? "unterminated "
			    "triple-quoted string literal" :
			    "unterminated string literal");
		if (s[i] == '\\') {
			if (i + 1 < end && (nl = newline_len(s, i + 1, end))) {
				i += 1 + nl;
				if (count_newline(lx, i) < 0)
					return -1;
			} else
				i += 2;
			continue;
		}
		if ((nl = newline_len(s, i, end))) {
			if (!triple)
				return lex_error(lx, line, "unterminated string "
				    "literal");
			i += nl;
			if (count_newline(lx, i) < 0)
				return -1;
			continue;
		}
		if (s[i] == quote) {
			if (!triple) {
				bodyend = i;
				i++;
				break;
			}
			if (i + 2 < end && s[i + 1] == quote &&
			    s[i + 2] == quote) {
				bodyend = i;
				i += 3;
				break;
			}
		}
		i++;
	}
	/* Adjacent literals concatenate; bytes and str do not mix. */
	if (lx->ntoks > 0 && (lx->toks[lx->ntoks - 1].type == T_FEND ||
	    lx->toks[lx->ntoks - 1].type == T_STRING) &&
	    (lx->toks[lx->ntoks - 1].type == T_FEND ? 0 :
	    lx->toks[lx->ntoks - 1].kw) != ((flags & 8) != 0))
		return lex_error(lx, line, "cannot mix bytes and nonbytes "
		    "literals");
	if (lx->check_utf8 && lx->fdepth == 0 &&
	    utf8_check((const unsigned char *)s + start, i - start) != 0)
		return lex_error(lx, line, "(unicode error) invalid UTF-8");
	if (!(flags & 1)) {
		const char *e = check_escapes(s, body, bodyend, flags & 8);

		if (e != NULL)
			return lex_error(lx, line, e);
	}
	if (add_tok(lx, T_STRING, start, i - start, line) < 0)
		return -1;
	lx->toks[lx->ntoks - 1].kw = (flags & 8) != 0;
	lx->pos = i;
	if (flags & 2) {
		int	 fline = line;
		size_t	 k = body;

		if (lx->fdepth >= MAXFDEPTH)
			return lex_error(lx, line, "f-string: expressions "
			    "nested too deeply");
		if (fstring_literal(lx, &k, bodyend, &fline, flags & 1, 0) < 0)
			return -1;
	}
	return 0;
}

/* The byte at p, or -1 past the end: the tokenizer's tok_nextc(). */
#define NC(p)	((p) < end ? (int)(unsigned char)s[p] : -1)

/* is_name_char() for a tok_nextc()-style int, -1 at the end. */
static inline int
is_ident_char(int c)
{
	return c >= 0 && is_name_char((unsigned char)c);
}

/* CPython's verify_end_of_number(): a number may touch a keyword that can
 * follow it ("1if x else 2"), not another name. */
static int
number_end_ok(const char *s, size_t p, size_t end)
{
	static const char *const kws[] = { "and", "else", "for", "if", "in",
	    "is", "or", "not", NULL };

	if (!is_ident_char(NC(p)))
		return 1;
	for (int k = 0; kws[k] != NULL; k++) {
		size_t	 n = strlen(kws[k]);

		if (kws[k][0] == 'i' && p + 1 < end && s[p] == 'i' &&
		    (s[p + 1] == 'f' || s[p + 1] == 'n' || s[p + 1] == 's'))
			return 1;
		if (kws[k][0] != 'i' && end - p >= n &&
		    memcmp(s + p, kws[k], n) == 0)
			return 1;
	}
	return !is_ident_char(NC(p));
}

/* Digits with single underscores between them, from p (just after the
 * first digit). Returns the position after them or 0 on a bad "_". */
static size_t
decimal_tail(const char *s, size_t p, size_t end)
{
	for (;;) {
		while (NC(p) >= '0' && NC(p) <= '9')
			p++;
		if (NC(p) != '_')
			return p;
		p++;
		if (!(NC(p) >= '0' && NC(p) <= '9'))
			return 0;
	}
}

/* A number at s[i] (a digit, or "." and a digit), as CPython 3.11's
 * tokenizer reads it; *ret_end is where it ends. Returns NULL or the
 * syntax error. */
static const char *
lex_number(const char *s, size_t i, size_t end, size_t *ret_end)
{
	size_t	 p = i + 1;
	int	 c;

	if (s[i] == '.')
		goto fraction_digits;
	if (s[i] == '0') {
		c = NC(p);
		if (c == 'x' || c == 'X' || c == 'o' || c == 'O' || c == 'b' ||
		    c == 'B') {
			int	 base = c | 0x20;

			p++;
			do {
				if (NC(p) == '_')
					p++;
				c = NC(p);
				if (!(base == 'x' ? (c >= 0 && strchr(
				    "0123456789abcdefABCDEF", c) != NULL &&
				    c != 0) : base == 'o' ? (c >= '0' &&
				    c <= '7') : (c == '0' || c == '1')))
					return c >= '0' && c <= '9' ?
					    "invalid digit in literal" :
					    "invalid number literal";
				while (c = NC(p), base == 'x' ? (c >= 0 &&
				    c != 0 && strchr("0123456789abcdefABCDEF",
				    c) != NULL) : base == 'o' ? (c >= '0' &&
				    c <= '7') : (c == '0' || c == '1'))
					p++;
			} while (NC(p) == '_');
			if (base != 'x' && NC(p) >= '0' && NC(p) <= '9')
				return "invalid digit in literal";
			if (!number_end_ok(s, p, end))
				return "invalid number literal";
			*ret_end = p;
			return NULL;
		}
		/* Zeros, maybe an old-style octal (not allowed any more). */
		{
			int	 nonzero = 0;

			for (;;) {
				if (NC(p) == '_') {
					p++;
					if (!(NC(p) >= '0' && NC(p) <= '9'))
						return "invalid decimal literal";
				}
				if (NC(p) != '0')
					break;
				p++;
			}
			if (NC(p) >= '0' && NC(p) <= '9') {
				nonzero = 1;
				if ((p = decimal_tail(s, p + 1, end)) == 0)
					return "invalid decimal literal";
			}
			c = NC(p);
			if (c == '.') {
				p++;
				goto fraction;
			}
			if (c == 'e' || c == 'E')
				goto exponent;
			if (c == 'j' || c == 'J')
				goto imaginary;
			if (nonzero)
				return "leading zeros in decimal integer "
				    "literals are not permitted";
			if (!number_end_ok(s, p, end))
				return "invalid decimal literal";
			*ret_end = p;
			return NULL;
		}
	}
	if ((p = decimal_tail(s, p, end)) == 0)
		return "invalid decimal literal";
	if (NC(p) == '.') {
		p++;
		goto fraction;
	}
	goto exponent;
fraction_digits:
	/* p is just after the "." of ".5". */
fraction:
	if (NC(p) >= '0' && NC(p) <= '9' &&
	    (p = decimal_tail(s, p + 1, end)) == 0)
		return "invalid decimal literal";
exponent:
	c = NC(p);
	if (c == 'e' || c == 'E') {
		size_t	 e = p;

		p++;
		if (NC(p) == '+' || NC(p) == '-') {
			p++;
			if (!(NC(p) >= '0' && NC(p) <= '9'))
				return "invalid decimal literal";
		} else if (!(NC(p) >= '0' && NC(p) <= '9')) {
			/* "1else": the number ends before the "e". */
			if (!number_end_ok(s, e, end))
				return "invalid decimal literal";
			*ret_end = e;
			return NULL;
		}
		if ((p = decimal_tail(s, p + 1, end)) == 0)
			return "invalid decimal literal";
	}
	c = NC(p);
imaginary:
	if (c == 'j' || c == 'J') {
		p++;
		if (!number_end_ok(s, p, end))
			return "invalid imaginary literal";
	} else if (!number_end_ok(s, p, end))
		return "invalid decimal literal";
	*ret_end = p;
	return NULL;
}

/* Length of the operator at s[i], 0 when there is none. */
static size_t
lex_operator(const char *s, size_t i, size_t end, uint32_t *op)
{
	char	 c = s[i], c1 = i + 1 < end ? s[i + 1] : '\0';
	char	 c2 = i + 2 < end ? s[i + 2] : '\0';

	switch (c) {
	case '(': case ')': case '[': case ']': case '{': case '}':
	case ',': case ';': case '~':
		*op = OP1(c);
		return 1;
	case '*': case '/': case '<': case '>':
		/* **, //, <<, >> and their augmented forms. */
		if (c1 == c) {
			if (c2 == '=') {
				*op = OP3(c, c, '=');
				return 3;
			}
			*op = OP2(c, c);
			return 2;
		}
		if (c1 == '=') {
			*op = OP2(c, '=');
			return 2;
		}
		*op = OP1(c);
		return 1;
	case '+': case '%': case '&': case '|': case '^': case '@': case '=':
		if (c1 == '=') {
			*op = OP2(c, '=');
			return 2;
		}
		*op = OP1(c);
		return 1;
	case '-':
		if (c1 == '=' || c1 == '>') {
			*op = OP2(c, c1);
			return 2;
		}
		*op = OP1(c);
		return 1;
	case ':':
		if (c1 == '=') {
			*op = OP2(c, '=');
			return 2;
		}
		*op = OP1(c);
		return 1;
	case '!':
		if (c1 == '=') {
			*op = OP2(c, '=');
			return 2;
		}
		return 0;
	case '.':
		if (c1 == '.' && c2 == '.') {
			*op = OP3('.', '.', '.');
			return 3;
		}
		*op = OP1(c);
		return 1;
	}
	return 0;
}

/* Indentation at the start of a logical line: INDENT / DEDENT tokens or
 * an error. Returns 1 when the line is blank (skipped), 0 or -1. */
static int
lex_indent(struct lexer *lx)
{
	const char	*s = lx->src;
	size_t		 i = lx->pos, end = lx->end;
	int		 col = 0, altcol = 0, cont = 0;
	size_t		 nl;

	for (; i < end; i++) {
		if (s[i] == ' ') {
			col++;
			altcol++;
		} else if (s[i] == '\t') {
			col = (col / 8 + 1) * 8;
			altcol++;
		} else if (s[i] == '\f')
			col = altcol = 0;
		else if (s[i] == '\\') {
			/* Indentation does not continue over a backslash: the
			 * first one sets the level (CPython's cont_line_col). */
			cont = cont ? cont : col;
			if (i + 1 >= end || !(nl = newline_len(s, i + 1, end)))
				return lex_error(lx, lx->line, "unexpected "
				    "character after line continuation "
				    "character");
			i += nl;
			if (count_newline(lx, i + 1) < 0)
				return -1;
			if (i + 1 >= end)
				return lex_error(lx, lx->line, "unexpected EOF "
				    "while parsing");
		} else
			break;
	}
	lx->pos = i;
	if (i >= end || s[i] == '#' || newline_len(s, i, end))
		return 1;	/* blank lines do not count */
	if (cont) {
		col = cont;
		altcol = cont;
	}
	if (col == lx->indents[lx->nindent]) {
		if (altcol != lx->altindents[lx->nindent])
			return lex_error(lx, lx->line, "inconsistent use of "
			    "tabs and spaces in indentation");
	} else if (col > lx->indents[lx->nindent]) {
		if (lx->nindent + 1 >= MAXINDENT)
			return lex_error(lx, lx->line, "too many levels of "
			    "indentation");
		if (altcol <= lx->altindents[lx->nindent])
			return lex_error(lx, lx->line, "inconsistent use of "
			    "tabs and spaces in indentation");
		lx->nindent++;
		lx->indents[lx->nindent] = col;
		lx->altindents[lx->nindent] = altcol;
		if (add_tok(lx, T_INDENT, i, 0, lx->line) < 0)
			return -1;
	} else {
		while (lx->nindent > 0 && col < lx->indents[lx->nindent]) {
			lx->nindent--;
			if (add_tok(lx, T_DEDENT, i, 0, lx->line) < 0)
				return -1;
		}
		if (col != lx->indents[lx->nindent])
			return lex_error(lx, lx->line, "unindent does not match "
			    "any outer indentation level");
		if (altcol != lx->altindents[lx->nindent])
			return lex_error(lx, lx->line, "inconsistent use of "
			    "tabs and spaces in indentation");
	}
	return 0;
}

/* Tokenize src[start..end): the whole file, or (fdepth > 0) the
 * expression of an f-string field. */
static int
lex_range(struct lexer *lx, size_t start, size_t end)
{
	const char	*s = lx->src;

	lx->pos = start;
	lx->end = end;
	while (!lx->failed) {
		size_t		 i, nl;
		unsigned char	 c;
		uint32_t	 op;
		int		 r;

		if (lx->atbol && lx->depth == 0 && lx->fdepth == 0) {
			if ((r = lex_indent(lx)) < 0)
				return -1;
			if (r == 1) {
				/* Blank or comment-only line. */
				i = lx->pos;
				while (i < end && !newline_len(s, i, end))
					i++;
				if (i >= end) {
					lx->pos = i;
					break;
				}
				lx->pos = i + newline_len(s, i, end);
				if (count_newline(lx, lx->pos) < 0)
					return -1;
				continue;
			}
			lx->atbol = 0;
		}
		i = lx->pos;
		while (i < end && (s[i] == ' ' || s[i] == '\t' || s[i] == '\f'))
			i++;
		lx->pos = i;
		if (i >= end)
			break;
		c = (unsigned char)s[i];
		if (c == '#') {
			if (lx->fdepth > 0)
				return lex_error(lx, lx->line, "f-string "
				    "expression part cannot include '#'");
			while (i < end && !newline_len(s, i, end))
				i++;
			lx->pos = i;
			continue;
		}
		if ((nl = newline_len(s, i, end))) {
			if (lx->depth == 0) {
				if (add_tok(lx, T_NEWLINE, i, 0, lx->line) < 0)
					return -1;
				lx->atbol = 1;
			}
			lx->pos = i + nl;
			if (count_newline(lx, lx->pos) < 0)
				return -1;
			continue;
		}
		if (c == '\\') {
			if (i + 1 < end && (nl = newline_len(s, i + 1, end))) {
				lx->pos = i + 1 + nl;
				if (count_newline(lx, lx->pos) < 0)
					return -1;
				if (lx->pos >= end)
					return lex_error(lx, lx->line,
					    "unexpected EOF while parsing");
				continue;
			}
			return lex_error(lx, lx->line, "unexpected character "
			    "after line continuation character");
		}
		if (is_name_start(c)) {
			size_t	 k = i + 1;
			int	 flags;

			while (k < end && is_name_char((unsigned char)s[k]))
				k++;
			if (k < end && (s[k] == '\'' || s[k] == '"') &&
			    (flags = string_prefix(s + i, k - i)) != 0) {
				if (lex_string(lx, i, k, flags) < 0)
					return -1;
				continue;
			}
			if (lx->check_utf8 && lx->fdepth == 0) {
				const char *e = NULL;

				for (size_t h = i; h < k; h++)
					if ((unsigned char)s[h] >= 0x80) {
						e = check_name_utf8(
						    (const unsigned char *)s + i,
						    k - i);
						break;
					}
				if (e != NULL)
					return lex_error(lx, lx->line, e);
			}
			if (add_tok(lx, T_NAME, i, k - i, lx->line) < 0)
				return -1;
			lx->toks[lx->ntoks - 1].kw =
			    (unsigned char)keyword(s + i, k - i);
			lx->pos = k;
			continue;
		}
		if (c == '\'' || c == '"') {
			if (lex_string(lx, i, i, 4) < 0)
				return -1;
			continue;
		}
		if (is_digit(c) || (c == '.' && i + 1 < end &&
		    is_digit((unsigned char)s[i + 1]))) {
			size_t		 k = i;
			const char	*e;

			if ((e = lex_number(s, i, end, &k)) != NULL)
				return lex_error(lx, lx->line, e);
			if (add_tok(lx, T_NUMBER, i, k - i, lx->line) < 0)
				return -1;
			lx->pos = k;
			continue;
		}
		if ((nl = lex_operator(s, i, end, &op)) == 0) {
			if (c == '!')
				return lex_error(lx, lx->line, "invalid syntax");
			return lex_error(lx, lx->line, "invalid character");
		}
		if (op == OP1('<') && i + 1 < end && s[i + 1] == '>')
			return lex_error(lx, lx->line, "invalid syntax");
		if (add_tok(lx, T_OP, i, nl, lx->line) < 0)
			return -1;
		lx->toks[lx->ntoks - 1].op = op;
		lx->pos = i + nl;
		if (nl == 1) {
			if (c == '(' || c == '[' || c == '{') {
				if (open_bracket(lx, (char)c, lx->line) < 0)
					return -1;
			} else if (c == ')' || c == ']' || c == '}') {
				if (close_bracket(lx, (char)c, lx->line) < 0)
					return -1;
			}
		}
	}
	return lx->failed ? -1 : 0;
}

/* Valid UTF-8 (what CPython decodes a file without a coding cookie as);
 * returns 0 or the offset + 1 of the first bad byte. */
static size_t
utf8_check(const unsigned char *s, size_t n)
{
	size_t	 i = 0;

	while (i < n) {
		unsigned char	 c = s[i];
		unsigned	 cp;
		size_t		 len;

		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			len = 2;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4;
			cp = c & 0x07;
		} else
			return i + 1;
		if (len > n - i)
			return i + 1;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return i + 1;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return i + 1;
		i += len;
	}
	return 0;
}

/* A PEP 263 coding cookie in the first two lines: 1 and its name,
 * normalized as CPython's get_normal_name() does ("utf_8" -> "utf-8",
 * "latin-1" -> "iso-8859-1"), or 0 when there is none. */
static int
coding_cookie(const char *s, size_t n, char *name, size_t namelen)
{
	size_t	 i = 0;

	for (int line = 0; line < 2 && i < n; line++) {
		size_t	 e = i, k;

		while (e < n && s[e] != '\n' && s[e] != '\r')
			e++;
		k = i;
		while (k < e && (s[k] == ' ' || s[k] == '\t' || s[k] == '\f'))
			k++;
		if (k < e && s[k] == '#') {
			for (size_t j = k; j + 7 < e; j++) {
				size_t	 m = 0, v;

				if (memcmp(s + j, "coding", 6) != 0 ||
				    (s[j + 6] != ':' && s[j + 6] != '='))
					continue;
				v = j + 7;
				while (v < e && (s[v] == ' ' || s[v] == '\t'))
					v++;
				/* CPython takes ASCII letters, digits, "-", "_"
				 * and "." here; a name too long for us is no
				 * codec anyway. */
				while (v < e && ((s[v] >= 'a' && s[v] <= 'z') ||
				    (s[v] >= 'A' && s[v] <= 'Z') ||
				    (s[v] >= '0' && s[v] <= '9') || s[v] == '-' ||
				    s[v] == '_' || s[v] == '.')) {
					char	 c = s[v++];

					if (c >= 'A' && c <= 'Z')
						c |= 0x20;
					if (m + 1 < namelen)
						name[m] = c == '_' ? '-' : c;
					m++;
				}
				if (m == 0)
					continue;
				if (m + 1 > namelen) {
					snprintf(name, namelen, "(too long)");
					return 1;
				}
				name[m] = '\0';
				if (strcmp(name, "utf-8") == 0 ||
				    strncmp(name, "utf-8-", 6) == 0)
					snprintf(name, namelen, "utf-8");
				else if (strcmp(name, "latin-1") == 0 ||
				    strcmp(name, "iso-8859-1") == 0 ||
				    strcmp(name, "iso-latin-1") == 0 ||
				    strncmp(name, "latin-1-", 8) == 0 ||
				    strncmp(name, "iso-8859-1-", 11) == 0 ||
				    strncmp(name, "iso-latin-1-", 12) == 0)
					snprintf(name, namelen, "iso-8859-1");
				return 1;
			}
		} else if (k < e)
			return 0;	/* code: no cookie on line 2 */
		i = e;
		if (i < n)
			i += newline_len(s, i, n);
	}
	return 0;
}

enum { ENC_UTF8, ENC_ASCII, ENC_OTHER, ENC_UNKNOWN };

/* Generated from Python 3.11's encodings package: every alias and codec
 * module that is a text encoding, by normalized name; where 1 = an alias
 * (also found with '.' read as '_'), 2 = a module name. */
static const struct {
	const char	*name;
	unsigned char	 kind;
	unsigned char	 where;
} codec_names[] = {
	{ "037", ENC_OTHER, 1 },
	{ "1026", ENC_OTHER, 1 },
	{ "1125", ENC_OTHER, 1 },
	{ "1140", ENC_OTHER, 1 },
	{ "1250", ENC_OTHER, 1 },
	{ "1251", ENC_OTHER, 1 },
	{ "1252", ENC_OTHER, 1 },
	{ "1253", ENC_OTHER, 1 },
	{ "1254", ENC_OTHER, 1 },
	{ "1255", ENC_OTHER, 1 },
	{ "1256", ENC_OTHER, 1 },
	{ "1257", ENC_OTHER, 1 },
	{ "1258", ENC_OTHER, 1 },
	{ "273", ENC_OTHER, 1 },
	{ "424", ENC_OTHER, 1 },
	{ "437", ENC_OTHER, 1 },
	{ "500", ENC_OTHER, 1 },
	{ "646", ENC_ASCII, 1 },
	{ "775", ENC_OTHER, 1 },
	{ "850", ENC_OTHER, 1 },
	{ "852", ENC_OTHER, 1 },
	{ "855", ENC_OTHER, 1 },
	{ "857", ENC_OTHER, 1 },
	{ "858", ENC_OTHER, 1 },
	{ "860", ENC_OTHER, 1 },
	{ "861", ENC_OTHER, 1 },
	{ "862", ENC_OTHER, 1 },
	{ "863", ENC_OTHER, 1 },
	{ "864", ENC_OTHER, 1 },
	{ "865", ENC_OTHER, 1 },
	{ "866", ENC_OTHER, 1 },
	{ "869", ENC_OTHER, 1 },
	{ "8859", ENC_OTHER, 1 },
	{ "932", ENC_OTHER, 1 },
	{ "936", ENC_OTHER, 1 },
	{ "949", ENC_OTHER, 1 },
	{ "950", ENC_OTHER, 1 },
	{ "ansi_x3.4_1968", ENC_ASCII, 1 },
	{ "ansi_x3.4_1986", ENC_ASCII, 1 },
	{ "ansi_x3_4_1968", ENC_ASCII, 1 },
	{ "arabic", ENC_OTHER, 1 },
	{ "ascii", ENC_ASCII, 2 },
	{ "asmo_708", ENC_OTHER, 1 },
	{ "big5", ENC_OTHER, 2 },
	{ "big5_hkscs", ENC_OTHER, 1 },
	{ "big5_tw", ENC_OTHER, 1 },
	{ "big5hkscs", ENC_OTHER, 2 },
	{ "charmap", ENC_OTHER, 2 },
	{ "chinese", ENC_OTHER, 1 },
	{ "cp037", ENC_OTHER, 2 },
	{ "cp1006", ENC_OTHER, 2 },
	{ "cp1026", ENC_OTHER, 2 },
	{ "cp1051", ENC_OTHER, 1 },
	{ "cp1125", ENC_OTHER, 2 },
	{ "cp1140", ENC_OTHER, 2 },
	{ "cp1250", ENC_OTHER, 2 },
	{ "cp1251", ENC_OTHER, 2 },
	{ "cp1252", ENC_OTHER, 2 },
	{ "cp1253", ENC_OTHER, 2 },
	{ "cp1254", ENC_OTHER, 2 },
	{ "cp1255", ENC_OTHER, 2 },
	{ "cp1256", ENC_OTHER, 2 },
	{ "cp1257", ENC_OTHER, 2 },
	{ "cp1258", ENC_OTHER, 2 },
	{ "cp1361", ENC_OTHER, 1 },
	{ "cp154", ENC_OTHER, 1 },
	{ "cp273", ENC_OTHER, 2 },
	{ "cp367", ENC_ASCII, 1 },
	{ "cp424", ENC_OTHER, 2 },
	{ "cp437", ENC_OTHER, 2 },
	{ "cp500", ENC_OTHER, 2 },
	{ "cp65001", ENC_UTF8, 1 },
	{ "cp720", ENC_OTHER, 2 },
	{ "cp737", ENC_OTHER, 2 },
	{ "cp775", ENC_OTHER, 2 },
	{ "cp819", ENC_OTHER, 1 },
	{ "cp850", ENC_OTHER, 2 },
	{ "cp852", ENC_OTHER, 2 },
	{ "cp855", ENC_OTHER, 2 },
	{ "cp856", ENC_OTHER, 2 },
	{ "cp857", ENC_OTHER, 2 },
	{ "cp858", ENC_OTHER, 2 },
	{ "cp860", ENC_OTHER, 2 },
	{ "cp861", ENC_OTHER, 2 },
	{ "cp862", ENC_OTHER, 2 },
	{ "cp863", ENC_OTHER, 2 },
	{ "cp864", ENC_OTHER, 2 },
	{ "cp865", ENC_OTHER, 2 },
	{ "cp866", ENC_OTHER, 2 },
	{ "cp866u", ENC_OTHER, 1 },
	{ "cp869", ENC_OTHER, 2 },
	{ "cp874", ENC_OTHER, 2 },
	{ "cp875", ENC_OTHER, 2 },
	{ "cp932", ENC_OTHER, 2 },
	{ "cp936", ENC_OTHER, 1 },
	{ "cp949", ENC_OTHER, 2 },
	{ "cp950", ENC_OTHER, 2 },
	{ "cp_gr", ENC_OTHER, 1 },
	{ "cp_is", ENC_OTHER, 1 },
	{ "csHPRoman8", ENC_OTHER, 1 },
	{ "csascii", ENC_ASCII, 1 },
	{ "csbig5", ENC_OTHER, 1 },
	{ "csibm037", ENC_OTHER, 1 },
	{ "csibm1026", ENC_OTHER, 1 },
	{ "csibm273", ENC_OTHER, 1 },
	{ "csibm424", ENC_OTHER, 1 },
	{ "csibm500", ENC_OTHER, 1 },
	{ "csibm855", ENC_OTHER, 1 },
	{ "csibm857", ENC_OTHER, 1 },
	{ "csibm858", ENC_OTHER, 1 },
	{ "csibm860", ENC_OTHER, 1 },
	{ "csibm861", ENC_OTHER, 1 },
	{ "csibm863", ENC_OTHER, 1 },
	{ "csibm864", ENC_OTHER, 1 },
	{ "csibm865", ENC_OTHER, 1 },
	{ "csibm866", ENC_OTHER, 1 },
	{ "csibm869", ENC_OTHER, 1 },
	{ "csiso2022jp", ENC_OTHER, 1 },
	{ "csiso2022kr", ENC_OTHER, 1 },
	{ "csiso58gb231280", ENC_OTHER, 1 },
	{ "csisolatin1", ENC_OTHER, 1 },
	{ "csisolatin2", ENC_OTHER, 1 },
	{ "csisolatin3", ENC_OTHER, 1 },
	{ "csisolatin4", ENC_OTHER, 1 },
	{ "csisolatin5", ENC_OTHER, 1 },
	{ "csisolatin6", ENC_OTHER, 1 },
	{ "csisolatinarabic", ENC_OTHER, 1 },
	{ "csisolatincyrillic", ENC_OTHER, 1 },
	{ "csisolatingreek", ENC_OTHER, 1 },
	{ "csisolatinhebrew", ENC_OTHER, 1 },
	{ "cskoi8r", ENC_OTHER, 1 },
	{ "cspc775baltic", ENC_OTHER, 1 },
	{ "cspc850multilingual", ENC_OTHER, 1 },
	{ "cspc862latinhebrew", ENC_OTHER, 1 },
	{ "cspc8codepage437", ENC_OTHER, 1 },
	{ "cspcp852", ENC_OTHER, 1 },
	{ "csptcp154", ENC_OTHER, 1 },
	{ "csshiftjis", ENC_OTHER, 1 },
	{ "cyrillic", ENC_OTHER, 1 },
	{ "cyrillic_asian", ENC_OTHER, 1 },
	{ "ebcdic_cp_be", ENC_OTHER, 1 },
	{ "ebcdic_cp_ca", ENC_OTHER, 1 },
	{ "ebcdic_cp_ch", ENC_OTHER, 1 },
	{ "ebcdic_cp_he", ENC_OTHER, 1 },
	{ "ebcdic_cp_nl", ENC_OTHER, 1 },
	{ "ebcdic_cp_us", ENC_OTHER, 1 },
	{ "ebcdic_cp_wt", ENC_OTHER, 1 },
	{ "ecma_114", ENC_OTHER, 1 },
	{ "ecma_118", ENC_OTHER, 1 },
	{ "elot_928", ENC_OTHER, 1 },
	{ "euc_cn", ENC_OTHER, 1 },
	{ "euc_jis2004", ENC_OTHER, 1 },
	{ "euc_jis_2004", ENC_OTHER, 2 },
	{ "euc_jisx0213", ENC_OTHER, 2 },
	{ "euc_jp", ENC_OTHER, 2 },
	{ "euc_kr", ENC_OTHER, 2 },
	{ "euccn", ENC_OTHER, 1 },
	{ "eucgb2312_cn", ENC_OTHER, 1 },
	{ "eucjis2004", ENC_OTHER, 1 },
	{ "eucjisx0213", ENC_OTHER, 1 },
	{ "eucjp", ENC_OTHER, 1 },
	{ "euckr", ENC_OTHER, 1 },
	{ "gb18030", ENC_OTHER, 2 },
	{ "gb18030_2000", ENC_OTHER, 1 },
	{ "gb2312", ENC_OTHER, 2 },
	{ "gb2312_1980", ENC_OTHER, 1 },
	{ "gb2312_80", ENC_OTHER, 1 },
	{ "gbk", ENC_OTHER, 2 },
	{ "greek", ENC_OTHER, 1 },
	{ "greek8", ENC_OTHER, 1 },
	{ "hebrew", ENC_OTHER, 1 },
	{ "hkscs", ENC_OTHER, 1 },
	{ "hp_roman8", ENC_OTHER, 2 },
	{ "hz", ENC_OTHER, 2 },
	{ "hz_gb", ENC_OTHER, 1 },
	{ "hz_gb_2312", ENC_OTHER, 1 },
	{ "hzgb", ENC_OTHER, 1 },
	{ "ibm037", ENC_OTHER, 1 },
	{ "ibm039", ENC_OTHER, 1 },
	{ "ibm1026", ENC_OTHER, 1 },
	{ "ibm1051", ENC_OTHER, 1 },
	{ "ibm1125", ENC_OTHER, 1 },
	{ "ibm1140", ENC_OTHER, 1 },
	{ "ibm273", ENC_OTHER, 1 },
	{ "ibm367", ENC_ASCII, 1 },
	{ "ibm424", ENC_OTHER, 1 },
	{ "ibm437", ENC_OTHER, 1 },
	{ "ibm500", ENC_OTHER, 1 },
	{ "ibm775", ENC_OTHER, 1 },
	{ "ibm819", ENC_OTHER, 1 },
	{ "ibm850", ENC_OTHER, 1 },
	{ "ibm852", ENC_OTHER, 1 },
	{ "ibm855", ENC_OTHER, 1 },
	{ "ibm857", ENC_OTHER, 1 },
	{ "ibm858", ENC_OTHER, 1 },
	{ "ibm860", ENC_OTHER, 1 },
	{ "ibm861", ENC_OTHER, 1 },
	{ "ibm862", ENC_OTHER, 1 },
	{ "ibm863", ENC_OTHER, 1 },
	{ "ibm864", ENC_OTHER, 1 },
	{ "ibm865", ENC_OTHER, 1 },
	{ "ibm866", ENC_OTHER, 1 },
	{ "ibm869", ENC_OTHER, 1 },
	{ "idna", ENC_OTHER, 2 },
	{ "iso2022_jp", ENC_OTHER, 2 },
	{ "iso2022_jp_1", ENC_OTHER, 2 },
	{ "iso2022_jp_2", ENC_OTHER, 2 },
	{ "iso2022_jp_2004", ENC_OTHER, 2 },
	{ "iso2022_jp_3", ENC_OTHER, 2 },
	{ "iso2022_jp_ext", ENC_OTHER, 2 },
	{ "iso2022_kr", ENC_OTHER, 2 },
	{ "iso2022jp", ENC_OTHER, 1 },
	{ "iso2022jp_1", ENC_OTHER, 1 },
	{ "iso2022jp_2", ENC_OTHER, 1 },
	{ "iso2022jp_2004", ENC_OTHER, 1 },
	{ "iso2022jp_3", ENC_OTHER, 1 },
	{ "iso2022jp_ext", ENC_OTHER, 1 },
	{ "iso2022kr", ENC_OTHER, 1 },
	{ "iso646_us", ENC_ASCII, 1 },
	{ "iso8859", ENC_OTHER, 1 },
	{ "iso8859_1", ENC_OTHER, 3 },
	{ "iso8859_10", ENC_OTHER, 2 },
	{ "iso8859_11", ENC_OTHER, 2 },
	{ "iso8859_13", ENC_OTHER, 2 },
	{ "iso8859_14", ENC_OTHER, 2 },
	{ "iso8859_15", ENC_OTHER, 2 },
	{ "iso8859_16", ENC_OTHER, 2 },
	{ "iso8859_2", ENC_OTHER, 2 },
	{ "iso8859_3", ENC_OTHER, 2 },
	{ "iso8859_4", ENC_OTHER, 2 },
	{ "iso8859_5", ENC_OTHER, 2 },
	{ "iso8859_6", ENC_OTHER, 2 },
	{ "iso8859_7", ENC_OTHER, 2 },
	{ "iso8859_8", ENC_OTHER, 2 },
	{ "iso8859_9", ENC_OTHER, 2 },
	{ "iso_2022_jp", ENC_OTHER, 1 },
	{ "iso_2022_jp_1", ENC_OTHER, 1 },
	{ "iso_2022_jp_2", ENC_OTHER, 1 },
	{ "iso_2022_jp_2004", ENC_OTHER, 1 },
	{ "iso_2022_jp_3", ENC_OTHER, 1 },
	{ "iso_2022_jp_ext", ENC_OTHER, 1 },
	{ "iso_2022_kr", ENC_OTHER, 1 },
	{ "iso_646.irv_1991", ENC_ASCII, 1 },
	{ "iso_8859_1", ENC_OTHER, 1 },
	{ "iso_8859_10", ENC_OTHER, 1 },
	{ "iso_8859_10_1992", ENC_OTHER, 1 },
	{ "iso_8859_11", ENC_OTHER, 1 },
	{ "iso_8859_11_2001", ENC_OTHER, 1 },
	{ "iso_8859_13", ENC_OTHER, 1 },
	{ "iso_8859_14", ENC_OTHER, 1 },
	{ "iso_8859_14_1998", ENC_OTHER, 1 },
	{ "iso_8859_15", ENC_OTHER, 1 },
	{ "iso_8859_16", ENC_OTHER, 1 },
	{ "iso_8859_16_2001", ENC_OTHER, 1 },
	{ "iso_8859_1_1987", ENC_OTHER, 1 },
	{ "iso_8859_2", ENC_OTHER, 1 },
	{ "iso_8859_2_1987", ENC_OTHER, 1 },
	{ "iso_8859_3", ENC_OTHER, 1 },
	{ "iso_8859_3_1988", ENC_OTHER, 1 },
	{ "iso_8859_4", ENC_OTHER, 1 },
	{ "iso_8859_4_1988", ENC_OTHER, 1 },
	{ "iso_8859_5", ENC_OTHER, 1 },
	{ "iso_8859_5_1988", ENC_OTHER, 1 },
	{ "iso_8859_6", ENC_OTHER, 1 },
	{ "iso_8859_6_1987", ENC_OTHER, 1 },
	{ "iso_8859_7", ENC_OTHER, 1 },
	{ "iso_8859_7_1987", ENC_OTHER, 1 },
	{ "iso_8859_8", ENC_OTHER, 1 },
	{ "iso_8859_8_1988", ENC_OTHER, 1 },
	{ "iso_8859_9", ENC_OTHER, 1 },
	{ "iso_8859_9_1989", ENC_OTHER, 1 },
	{ "iso_celtic", ENC_OTHER, 1 },
	{ "iso_ir_100", ENC_OTHER, 1 },
	{ "iso_ir_101", ENC_OTHER, 1 },
	{ "iso_ir_109", ENC_OTHER, 1 },
	{ "iso_ir_110", ENC_OTHER, 1 },
	{ "iso_ir_126", ENC_OTHER, 1 },
	{ "iso_ir_127", ENC_OTHER, 1 },
	{ "iso_ir_138", ENC_OTHER, 1 },
	{ "iso_ir_144", ENC_OTHER, 1 },
	{ "iso_ir_148", ENC_OTHER, 1 },
	{ "iso_ir_157", ENC_OTHER, 1 },
	{ "iso_ir_166", ENC_OTHER, 1 },
	{ "iso_ir_199", ENC_OTHER, 1 },
	{ "iso_ir_226", ENC_OTHER, 1 },
	{ "iso_ir_58", ENC_OTHER, 1 },
	{ "iso_ir_6", ENC_ASCII, 1 },
	{ "jisx0213", ENC_OTHER, 1 },
	{ "johab", ENC_OTHER, 2 },
	{ "koi8_r", ENC_OTHER, 2 },
	{ "koi8_t", ENC_OTHER, 2 },
	{ "koi8_u", ENC_OTHER, 2 },
	{ "korean", ENC_OTHER, 1 },
	{ "ks_c_5601", ENC_OTHER, 1 },
	{ "ks_c_5601_1987", ENC_OTHER, 1 },
	{ "ks_x_1001", ENC_OTHER, 1 },
	{ "ksc5601", ENC_OTHER, 1 },
	{ "ksx1001", ENC_OTHER, 1 },
	{ "kz1048", ENC_OTHER, 2 },
	{ "kz_1048", ENC_OTHER, 1 },
	{ "l1", ENC_OTHER, 1 },
	{ "l10", ENC_OTHER, 1 },
	{ "l2", ENC_OTHER, 1 },
	{ "l3", ENC_OTHER, 1 },
	{ "l4", ENC_OTHER, 1 },
	{ "l5", ENC_OTHER, 1 },
	{ "l6", ENC_OTHER, 1 },
	{ "l7", ENC_OTHER, 1 },
	{ "l8", ENC_OTHER, 1 },
	{ "l9", ENC_OTHER, 1 },
	{ "latin", ENC_OTHER, 1 },
	{ "latin1", ENC_OTHER, 1 },
	{ "latin10", ENC_OTHER, 1 },
	{ "latin2", ENC_OTHER, 1 },
	{ "latin3", ENC_OTHER, 1 },
	{ "latin4", ENC_OTHER, 1 },
	{ "latin5", ENC_OTHER, 1 },
	{ "latin6", ENC_OTHER, 1 },
	{ "latin7", ENC_OTHER, 1 },
	{ "latin8", ENC_OTHER, 1 },
	{ "latin9", ENC_OTHER, 1 },
	{ "latin_1", ENC_OTHER, 2 },
	{ "mac_arabic", ENC_OTHER, 2 },
	{ "mac_centeuro", ENC_OTHER, 1 },
	{ "mac_croatian", ENC_OTHER, 2 },
	{ "mac_cyrillic", ENC_OTHER, 2 },
	{ "mac_farsi", ENC_OTHER, 2 },
	{ "mac_greek", ENC_OTHER, 2 },
	{ "mac_iceland", ENC_OTHER, 2 },
	{ "mac_latin2", ENC_OTHER, 2 },
	{ "mac_roman", ENC_OTHER, 2 },
	{ "mac_romanian", ENC_OTHER, 2 },
	{ "mac_turkish", ENC_OTHER, 2 },
	{ "maccentraleurope", ENC_OTHER, 1 },
	{ "maccyrillic", ENC_OTHER, 1 },
	{ "macgreek", ENC_OTHER, 1 },
	{ "maciceland", ENC_OTHER, 1 },
	{ "macintosh", ENC_OTHER, 1 },
	{ "maclatin2", ENC_OTHER, 1 },
	{ "macroman", ENC_OTHER, 1 },
	{ "macturkish", ENC_OTHER, 1 },
	{ "ms1361", ENC_OTHER, 1 },
	{ "ms932", ENC_OTHER, 1 },
	{ "ms936", ENC_OTHER, 1 },
	{ "ms949", ENC_OTHER, 1 },
	{ "ms950", ENC_OTHER, 1 },
	{ "ms_kanji", ENC_OTHER, 1 },
	{ "mskanji", ENC_OTHER, 1 },
	{ "palmos", ENC_OTHER, 2 },
	{ "pt154", ENC_OTHER, 1 },
	{ "ptcp154", ENC_OTHER, 2 },
	{ "punycode", ENC_UNKNOWN, 2 },
	{ "r8", ENC_OTHER, 1 },
	{ "raw_unicode_escape", ENC_OTHER, 2 },
	{ "rk1048", ENC_OTHER, 1 },
	{ "roman8", ENC_OTHER, 1 },
	{ "ruscii", ENC_OTHER, 1 },
	{ "s_jis", ENC_OTHER, 1 },
	{ "s_jis_2004", ENC_OTHER, 1 },
	{ "s_jisx0213", ENC_OTHER, 1 },
	{ "shift_jis", ENC_OTHER, 2 },
	{ "shift_jis_2004", ENC_OTHER, 2 },
	{ "shift_jisx0213", ENC_OTHER, 2 },
	{ "shiftjis", ENC_OTHER, 1 },
	{ "shiftjis2004", ENC_OTHER, 1 },
	{ "shiftjisx0213", ENC_OTHER, 1 },
	{ "sjis", ENC_OTHER, 1 },
	{ "sjis_2004", ENC_OTHER, 1 },
	{ "sjisx0213", ENC_OTHER, 1 },
	{ "strk1048_2002", ENC_OTHER, 1 },
	{ "thai", ENC_OTHER, 1 },
	{ "tis620", ENC_OTHER, 1 },
	{ "tis_620", ENC_OTHER, 2 },
	{ "tis_620_0", ENC_OTHER, 1 },
	{ "tis_620_2529_0", ENC_OTHER, 1 },
	{ "tis_620_2529_1", ENC_OTHER, 1 },
	{ "u16", ENC_UNKNOWN, 1 },
	{ "u32", ENC_UNKNOWN, 1 },
	{ "u7", ENC_OTHER, 1 },
	{ "u8", ENC_UTF8, 1 },
	{ "u_jis", ENC_OTHER, 1 },
	{ "uhc", ENC_OTHER, 1 },
	{ "ujis", ENC_OTHER, 1 },
	{ "undefined", ENC_UNKNOWN, 2 },
	{ "unicode_1_1_utf_7", ENC_OTHER, 1 },
	{ "unicode_escape", ENC_OTHER, 2 },
	{ "unicodebigunmarked", ENC_UNKNOWN, 1 },
	{ "unicodelittleunmarked", ENC_UNKNOWN, 1 },
	{ "us", ENC_ASCII, 1 },
	{ "us_ascii", ENC_ASCII, 1 },
	{ "utf", ENC_UTF8, 1 },
	{ "utf16", ENC_UNKNOWN, 1 },
	{ "utf32", ENC_UNKNOWN, 1 },
	{ "utf7", ENC_OTHER, 1 },
	{ "utf8", ENC_UTF8, 1 },
	{ "utf8_ucs2", ENC_UTF8, 1 },
	{ "utf8_ucs4", ENC_UTF8, 1 },
	{ "utf_16", ENC_UNKNOWN, 2 },
	{ "utf_16_be", ENC_UNKNOWN, 2 },
	{ "utf_16_le", ENC_UNKNOWN, 2 },
	{ "utf_16be", ENC_UNKNOWN, 1 },
	{ "utf_16le", ENC_UNKNOWN, 1 },
	{ "utf_32", ENC_UNKNOWN, 2 },
	{ "utf_32_be", ENC_UNKNOWN, 2 },
	{ "utf_32_le", ENC_UNKNOWN, 2 },
	{ "utf_32be", ENC_UNKNOWN, 1 },
	{ "utf_32le", ENC_UNKNOWN, 1 },
	{ "utf_7", ENC_OTHER, 2 },
	{ "utf_8", ENC_UTF8, 2 },
	{ "utf_8_sig", ENC_UTF8, 2 },
	{ "windows_1250", ENC_OTHER, 1 },
	{ "windows_1251", ENC_OTHER, 1 },
	{ "windows_1252", ENC_OTHER, 1 },
	{ "windows_1253", ENC_OTHER, 1 },
	{ "windows_1254", ENC_OTHER, 1 },
	{ "windows_1255", ENC_OTHER, 1 },
	{ "windows_1256", ENC_OTHER, 1 },
	{ "windows_1257", ENC_OTHER, 1 },
	{ "windows_1258", ENC_OTHER, 1 },
	{ "x_mac_japanese", ENC_OTHER, 1 },
	{ "x_mac_korean", ENC_OTHER, 1 },
	{ "x_mac_simp_chinese", ENC_OTHER, 1 },
	{ "x_mac_trad_chinese", ENC_OTHER, 1 },
};

/* bsearch() comparison of a name with a codec_names entry. */
static int
codec_cmp(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

/* What a cookie's encoding means for the scan, looked up as Python's
 * encodings.search_function() does: non-alphanumerics (but ".") collapse
 * to "_", then an alias, an alias with "." read as "_", or a module. The
 * codecs that cannot decode a source file (UTF-16/32, ...) count as
 * unknown. */
static int
encoding_kind(const char *name)
{
	char	 norm[64];
	size_t	 m = 0;
	int	 punct = 0;

	for (const char *p = name; *p != '\0'; p++) {
		char	 c = *p;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.') {
			if (m + 3 >= sizeof norm)
				return ENC_UNKNOWN;
			if (punct && m > 0)
				norm[m++] = '_';
			norm[m++] = (char)(c >= 'A' && c <= 'Z' ? c | 0x20 : c);
			punct = 0;
		} else
			punct = 1;
	}
	norm[m] = '\0';
	for (int pass = 0; pass < 2; pass++) {
		const void *hit;

		if (pass == 1) {
			if (strchr(norm, '.') == NULL)
				break;
			for (char *p = norm; *p != '\0'; p++)
				if (*p == '.')
					*p = '_';
		}
		hit = bsearch(norm, codec_names, FLAKY_ARRAY_SIZE(codec_names),
		    sizeof(codec_names[0]), codec_cmp);
		if (hit != NULL) {
			size_t	 i = (size_t)((const char *)hit -
			    (const char *)codec_names) / sizeof(codec_names[0]);

			if (pass == 0 || (codec_names[i].where & 1))
				return codec_names[i].kind;
		}
	}
	return ENC_UNKNOWN;
}

/* Code points Python rejects in identifiers that show up in real files
 * (no-break and other spaces, typographic quotes, currency, symbols,
 * emoji). An approximation of XID_Start/XID_Continue; see docs/scan.md. */
static int
bad_identifier_char(unsigned cp)
{
	if (cp >= 0xa0 && cp <= 0xbf)
		return cp != 0xaa && cp != 0xb5 && cp != 0xba && cp != 0xb7;
	if (cp == 0xd7 || cp == 0xf7)
		return 1;
	if (cp >= 0x2000 && cp <= 0x206f)
		return cp != 0x203f && cp != 0x2040 && cp != 0x2054;
	return (cp >= 0x20a0 && cp <= 0x20cf) ||
	    (cp >= 0x2190 && cp <= 0x23ff) || (cp >= 0x2500 && cp <= 0x27bf) ||
	    (cp >= 0x3000 && cp <= 0x3003) || cp == 0xfeff || cp == 0xfffd ||
	    (cp >= 0x1f300 && cp <= 0x1faff);
}

/* A NAME token with bytes >= 0x80: valid UTF-8 of identifier characters.
 * Returns NULL or the error. */
static const char *
check_name_utf8(const unsigned char *s, size_t n)
{
	if (utf8_check(s, n) != 0)
		return "invalid UTF-8";
	for (size_t i = 0; i < n;) {
		unsigned	 cp;
		size_t		 len;

		if (s[i] < 0x80) {
			i++;
			continue;
		}
		len = (s[i] & 0xe0) == 0xc0 ? 2 : (s[i] & 0xf0) == 0xe0 ? 3 : 4;
		cp = s[i] & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
		for (size_t k = 1; k < len; k++)
			cp = (cp << 6) | (s[i + k] & 0x3f);
		if (bad_identifier_char(cp))
			return "invalid character";
		i += len;
	}
	return NULL;
}

/* --- structure and rules ------------------------------------------------ */

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

/* Whether token k ends a primary (an atom or a trailer), so that a "("
 * after it is a call. */
static int
ends_primary(const struct tok *t)
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
static size_t
primary_start(const struct tok *toks, size_t k, size_t lo, int32_t *memo)
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
			    ends_primary(&toks[o - 1])) {
				k = o - 1;	/* a call or subscript trailer */
				continue;
			}
			r = o;
			break;
		}
		if (k >= lo + 2 && tok_is_op(&toks[k - 1], OP1('.')) &&
		    ends_primary(&toks[k - 2])) {
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

/* Fill ce for the callee [x, y] of a call (see struct callee). */
static void
callee_info(struct scan *sc, size_t x, size_t y, struct callee *ce)
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
	    (x != x0 && primary_start(toks, y, x, NULL) != x))
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
	ret = buf.len ? arena_strndup(sc->res, buf.data, buf.len) : "";
	flaky_buf_free(&buf);
	if (ret == NULL) {
		sc->oom = 1;
		ret = "";
	}
	return ret;
}

/* The innermost def or class open, or -1 at module level. */
static int
current_scope(const struct scan *sc)
{
	return sc->nstack > 0 ? sc->stack[sc->nstack - 1] : -1;
}

/* Record a finding in the current scope (strings come later). */
static void
add_finding(struct scan *sc, int line, int category, const char *tol)
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
	f->scope = current_scope(sc);
	f->tolerance = tol;
}

/* Code in the current scope seeds randomness: mark every function it is
 * in, or the class whose body it is in, or the module. */
static void
mark_seeds(struct scan *sc)
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
static int
call_seeds(struct scan *sc, size_t open, const struct callee *ce)
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

/* Every call in tokens [a, b) of one statement; cond_a..cond_b is an
 * assert's condition (empty when none); skip is the "(" of a def or class
 * header, which is no call. */
static void
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
		    !ends_primary(&toks[j - 1]))
			continue;
		x = primary_start(toks, j - 1, a, sc->memo);
		callee_info(sc, x, j - 1, &ce);
		if (call_seeds(sc, j, &ce))
			mark_seeds(sc);
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
			add_finding(sc, toks[x].line, cat,
			    call_tolerance(sc, j, l));
	}
}

/* Next token at this bracket level in [k, b) that is op (lambda colons
 * and parameters skipped when lambda_aware), or b. */
static size_t
find_level(const struct tok *toks, size_t k, size_t b, uint32_t op,
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
	if (toks[a].kw == KW_RAISE && find_level(toks, a, b, OP1(','), 1) < b) {
		lex_error(sc->lx, toks[a].line, "invalid syntax");	/* py2 */
		return;
	}
	if (toks[a].type == T_NAME && toks[a].kw == KW_ASSERT) {
		ca = a + 1;
		cb = find_level(toks, ca, b, OP1(','), 1);
		for (size_t k = ca; k < cb; k++)
			if (toks[k].type == T_OP && (toks[k].op == OP1('<') ||
			    toks[k].op == OP1('>') ||
			    toks[k].op == OP2('<', '=') ||
			    toks[k].op == OP2('>', '='))) {
				add_finding(sc, toks[a].line,
				    FLAKY_FINDING_COMPARISON, "");
				break;
			}
	}
	scan_calls(sc, a, b, ca, cb, (size_t)-1);
}

/* Simple statements separated by ";" in [a, b). */
static void
scan_simple_list(struct scan *sc, size_t a, size_t b)
{
	const struct tok *toks = sc->lx->toks;

	while (a < b) {
		size_t	 e = find_level(toks, a, b, OP1(';'), 0);

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
	s->parent = current_scope(sc);
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
		if (!ends_primary(p))
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
		    find_level(toks, k, b, OP1(':'), 1) < b)
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
		hc = find_level(toks, t + 2, b, OP1(':'), 0);
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
		hc = find_level(toks, t, b, OP1(':'), 1);
		if (hc < b && kw == KW_EXCEPT &&
		    find_level(toks, t + 1, hc, OP1(','), 1) < hc)
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
static int
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

/* --- seeding and results ------------------------------------------------ */

static int	scope_seeded(struct scan *, int, int);

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
static int
index_scopes(struct scan *sc)
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
			    scope_seeded(sc, sc->fixtures[lo], depth + 1))
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
		if (scope_seeded(sc, f, depth + 1)) {
			*flag = 1;
			return 1;
		}
	return 0;
}

/* The seeding signal of a def: itself, the fixtures it names, setup hooks
 * and class-body code of its classes, autouse fixtures, the module. */
static int
scope_seeded(struct scan *sc, int si, int depth)
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
		    (s->function = arena_strndup(sc->res, src + c->name_off,
		    c->name_len)) == NULL)
			goto fail;
		if (c->name_len >= 4 && memcmp(src + c->name_off, "test",
		    4) == 0) {
			s->test = arena_strndup(sc->res, src + c->name_off,
			    c->name_len);
			if (s->test == NULL)
				goto fail;
			s->test_scope = chain[k];
			break;
		}
	}
	if (buf.oom || (s->classes = arena_strndup(sc->res,
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
	if ((p = arena_strndup(sc->res, lx->src + a, b - a)) == NULL) {
		sc->oom = 1;
		return "";
	}
	return p;
}

/* Turn the raw findings and scopes into the public result. */
static int
build_result(struct scan *sc)
{
	struct flaky_scan_result *res = sc->res;
	const char	*src = sc->lx->src;
	size_t		 ntests = 0;

	res->module_seeded = sc->module_seeds;
	if (index_scopes(sc) < 0)
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
		t->seeded = scope_seeded(sc, (int)i, 0);
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
				f->seeded = scope_seeded(sc, s->test_scope, 0);
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

/* Tokenize a whole file into lx: 0, or -1 when it is not valid Python
 * (lx->errmsg) or out of memory (lx->oom). */
static int
lex_file(struct lexer *lx, const char *src, size_t len)
{
	size_t		 start = 0;
	char		 encname[32];

	lx->src = src;
	lx->len = len;
	lx->line = 1;
	lx->atbol = 1;
	if (count_newline(lx, 0) < 0)	/* line 1 starts at 0 */
		return -1;
	lx->line = 1;
	if (len > 0 && memchr(src, '\0', len) != NULL) {
		lex_error(lx, 1, "source code cannot contain null bytes");
		return -1;
	}
	if (len >= 3 && memcmp(src, "\xef\xbb\xbf", 3) == 0)
		start = 3;
	lx->check_utf8 = 1;
	if (coding_cookie(src + start, len - start, encname,
	    sizeof encname)) {
		int	 kind = encoding_kind(encname);
		char	 msg[96];

		if (start > 0 && strcmp(encname, "utf-8") != 0) {
			snprintf(msg, sizeof msg, "encoding problem: %s with BOM",
			    encname);
			lex_error(lx, 1, msg);
			return -1;
		}
		if (kind == ENC_UNKNOWN) {
			snprintf(msg, sizeof msg, "unknown encoding: %s", encname);
			lex_error(lx, 1, msg);
			return -1;
		}
		if (kind == ENC_ASCII) {
			for (size_t i = start; i < len; i++)
				if ((unsigned char)src[i] >= 0x80) {
					lex_error(lx, 1, "non-ASCII byte in an "
					    "ASCII file");
					return -1;
				}
		}
		lx->check_utf8 = kind == ENC_UTF8;
		/* Only a cookie that reads "utf-8" leaves the bytes alone;
		 * any other makes Python decode the whole file, comments
		 * included. */
		if (kind == ENC_UTF8 && strcmp(encname, "utf-8") != 0 &&
		    utf8_check((const unsigned char *)src + start,
		    len - start) != 0) {
			lex_error(lx, 1, "(unicode error) invalid UTF-8");
			return -1;
		}
	}
	if (lex_range(lx, start, len) < 0)
		return -1;
	if (lx->fdepth == 0 && lx->depth > 0) {
		lex_error(lx, lx->toks[lx->brtok[lx->depth - 1]].line,
		    "bracket was never closed");
		return -1;
	}
	if (lx->ntoks > 0 && lx->toks[lx->ntoks - 1].type != T_NEWLINE &&
	    lx->toks[lx->ntoks - 1].type != T_DEDENT &&
	    lx->toks[lx->ntoks - 1].type != T_INDENT &&
	    add_tok(lx, T_NEWLINE, len, 0, lx->line) < 0)
		return -1;
	while (lx->nindent > 0) {
		lx->nindent--;
		if (add_tok(lx, T_DEDENT, len, 0, lx->line) < 0)
			return -1;
	}
	if (add_tok(lx, T_END, len, 0, lx->line) < 0)
		return -1;

	return 0;
}

/* Scan one source buffer (see pyscan.h). */
int
flaky_pyscan_buffer(const char *src, size_t len,
    struct flaky_scan_result **ret, char *err, size_t errlen)
{
	struct flaky_scan_result *res;
	struct lexer	*lx = NULL;
	struct scan	 sc;
	int		 rc = 0;

	*ret = NULL;
	memset(&sc, 0, sizeof sc);
	if (len > FLAKY_PYSCAN_MAX_BYTES)
		return flaky_error(err, errlen, EFBIG, "larger than %d bytes",
		    FLAKY_PYSCAN_MAX_BYTES);
	if ((res = calloc(1, sizeof(*res))) == NULL ||
	    (lx = calloc(1, sizeof(*lx))) == NULL) {
		rc = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	res->bytes = len;
	if (lex_file(lx, src, len) < 0)
		goto invalid;
	sc.lx = lx;
	sc.res = res;
	if ((sc.memo = malloc(lx->ntoks * sizeof(*sc.memo))) == NULL)
		goto oom;
	memset(sc.memo, 0xff, lx->ntoks * sizeof(*sc.memo));
	if (scan_tokens(&sc) < 0 && !sc.oom)
		goto invalid;
	if (sc.oom || lx->oom || build_result(&sc) < 0)
		goto oom;
	*ret = res;
	res = NULL;
	goto out;
invalid:
	if (lx->oom)
		goto oom;
	/* Not valid Python: a skipped file, not an error. */
	flaky_scan_result_free(res);
	if ((res = calloc(1, sizeof(*res))) == NULL)
		goto oom;
	res->skipped = 1;
	res->bytes = len;
	snprintf(res->reason, sizeof res->reason, "line %d: %s", lx->errline,
	    lx->errmsg);
	*ret = res;
	res = NULL;
	goto out;
oom:
	rc = flaky_error(err, errlen, ENOMEM, "out of memory");
out:
	flaky_scan_result_free(res);
	if (lx != NULL) {
		free(lx->toks);
		free(lx->lines);
		free(lx);
	}
	free(sc.scopes);
	free(sc.finds);
	free(sc.memo);
	free(sc.fixtures);
	return rc;
}

/* The token dump of a source buffer (see pyscan.h). */
int
flaky_pyscan_tokens(const char *src, size_t len, struct flaky_buf *out,
    char *err, size_t errlen)
{
	static const char *const names[] = { "?", "NAME", "NUMBER", "STRING",
	    "OP", "NEWLINE", "INDENT", "DEDENT", "FSTART", "FEND", "END" };
	struct lexer	*lx;
	int		 rc = 0;

	if (len > FLAKY_PYSCAN_MAX_BYTES)
		return flaky_error(err, errlen, EFBIG, "larger than %d bytes",
		    FLAKY_PYSCAN_MAX_BYTES);
	if ((lx = calloc(1, sizeof(*lx))) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	if (lex_file(lx, src, len) < 0) {
		rc = lx->oom ? flaky_error(err, errlen, ENOMEM, "out of memory") :
		    flaky_error(err, errlen, EINVAL, "line %d: %s", lx->errline,
		    lx->errmsg);
		goto out;
	}
	for (size_t i = 0; i < lx->ntoks; i++) {
		const struct tok *t = &lx->toks[i];

		flaky_buf_printf(out, "%d %s", t->line, names[t->type]);
		if (t->type <= T_OP) {
			flaky_buf_addc(out, ' ');
			flaky_buf_add(out, src + t->off, t->len);
		}
		flaky_buf_addc(out, '\n');
	}
	if (out->oom)
		rc = flaky_error(err, errlen, ENOMEM, "out of memory");
out:
	free(lx->toks);
	free(lx->lines);
	free(lx);
	return rc;
}

/* Read a regular file whole and scan it (see pyscan.h). */
int
flaky_pyscan_file(const char *path, struct flaky_scan_result **ret,
    char *err, size_t errlen)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 len = 0, cap;
	int		 fd, rc;

	*ret = NULL;
	/* O_NONBLOCK: a FIFO named x.py must not hang the scan. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		return flaky_error(err, errlen, errno, "%s: %s", path,
		    strerror(errno));
	if (fstat(fd, &st) == -1) {
		rc = flaky_error(err, errlen, errno, "%s: %s", path,
		    strerror(errno));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = flaky_error(err, errlen, EISDIR, "%s: %s", path,
		    strerror(EISDIR));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = flaky_error(err, errlen, EINVAL, "%s: not a regular file",
		    path);
		goto out;
	}
	if (st.st_size > FLAKY_PYSCAN_MAX_BYTES) {
		rc = flaky_error(err, errlen, EFBIG, "%s: larger than %d bytes",
		    path, FLAKY_PYSCAN_MAX_BYTES);
		goto out;
	}
	/* Read to EOF: the size may change, and pipes have none. */
	cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
	if ((buf = malloc(cap)) == NULL) {
		rc = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		ssize_t	 n;

		if (len == cap) {
			char	*p;

			if (cap > FLAKY_PYSCAN_MAX_BYTES) {
				rc = flaky_error(err, errlen, EFBIG, "%s: larger "
				    "than %d bytes", path,
				    FLAKY_PYSCAN_MAX_BYTES);
				goto out;
			}
			if ((p = realloc(buf, cap * 2)) == NULL) {
				rc = flaky_error(err, errlen, ENOMEM,
				    "out of memory");
				goto out;
			}
			buf = p;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			rc = flaky_error(err, errlen, errno, "%s: %s", path,
			    strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if ((rc = flaky_pyscan_buffer(buf, len, ret, err, errlen)) < 0 &&
	    err != NULL && errlen > 0) {
		char	 msg[256];

		snprintf(msg, sizeof msg, "%s", err);
		flaky_error(err, errlen, -rc, "%s: %s", path, msg);
	}
out:
	free(buf);
	close(fd);
	return rc;
}

/* --- directory walk ----------------------------------------------------- */

struct pathlist {
	char	**v;
	size_t	  n, cap;
};

/* Append p (owned from now on; freed on failure) to pl. */
static int
pathlist_add(struct pathlist *pl, char *p)
{
	if (p == NULL)
		return -ENOMEM;
	if (pl->n == pl->cap) {
		size_t	 cap = pl->cap ? pl->cap * 2 : 64;
		void	*v;

		if ((v = realloc(pl->v, cap * sizeof(*pl->v))) == NULL) {
			free(p);
			return -ENOMEM;
		}
		pl->v = v;
		pl->cap = cap;
	}
	pl->v[pl->n++] = p;
	return 0;
}

/* qsort() order of directory entries: byte-wise. */
static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* dir "/" name, without doubling a trailing "/" of dir. */
static char *
path_join(const char *dir, const char *name)
{
	size_t	 n = strlen(dir);
	char	*p;

	if (asprintf(&p, "%s%s%s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/",
	    name) == -1)
		return NULL;
	return p;
}

/* Whether a file name ends in ".py". */
static int
has_py_suffix(const char *name)
{
	size_t	 n = strlen(name);

	return n >= 3 && strcmp(name + n - 3, ".py") == 0;
}

/* The .py files below dir, sorted, depth first. depth bounds the walk. */
static int
walk(const char *dir, struct pathlist *pl, flaky_pyscan_walk_error onerror,
    void *arg, int depth)
{
	struct pathlist	 names = { NULL, 0, 0 };
	struct dirent	*de;
	DIR		*d;
	int		 rc = 0;

	if (depth > 256 || (d = opendir(dir)) == NULL) {
		if (onerror != NULL)
			onerror(arg, dir, depth > 256 ? ELOOP : errno);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if ((rc = pathlist_add(&names, strdup(de->d_name))) < 0)
			break;
	}
	closedir(d);
	/* An empty directory has no array: qsort(NULL, 0) is undefined. */
	if (rc == 0 && names.n > 1)
		qsort(names.v, names.n, sizeof(*names.v), name_cmp);
	for (size_t i = 0; rc == 0 && i < names.n; i++) {
		struct stat	 st;
		char		*full = path_join(dir, names.v[i]);

		if (full == NULL) {
			rc = -ENOMEM;
			break;
		}
		if (lstat(full, &st) == -1) {
			if (onerror != NULL)
				onerror(arg, full, errno);
			free(full);
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			if (has_py_suffix(names.v[i]) &&
			    stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
				rc = pathlist_add(pl, full);
				continue;
			}
			free(full);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			rc = walk(full, pl, onerror, arg, depth + 1);
			free(full);
			continue;
		}
		if (S_ISREG(st.st_mode) && has_py_suffix(names.v[i])) {
			rc = pathlist_add(pl, full);
			continue;
		}
		free(full);
	}
	flaky_pyscan_paths_free(names.v, names.n);
	return rc;
}

/* The files a scan of path covers (see pyscan.h). */
int
flaky_pyscan_paths(const char *path, char ***paths, size_t *npaths,
    flaky_pyscan_walk_error onerror, void *arg, char *err, size_t errlen)
{
	struct pathlist	 pl = { *paths, *npaths, *npaths };
	struct stat	 st;
	int		 rc;

	if (stat(path, &st) == -1)
		return flaky_error(err, errlen, errno, "%s: %s", path,
		    strerror(errno));
	if (S_ISDIR(st.st_mode))
		rc = walk(path, &pl, onerror, arg, 0);
	else
		rc = pathlist_add(&pl, strdup(path));
	*paths = pl.v;
	*npaths = pl.n;
	if (rc < 0)
		return flaky_error(err, errlen, -rc, "out of memory");
	return 0;
}

/* Free what flaky_pyscan_paths() returned. */
void
flaky_pyscan_paths_free(char **paths, size_t npaths)
{
	if (paths == NULL)
		return;
	for (size_t i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
}
