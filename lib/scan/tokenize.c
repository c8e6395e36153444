/* The Python tokenizer (3.11 rules): the driver over a source range, names
 * and keywords, operators, brackets across lines, continuations, and the
 * indentation that becomes INDENT and DEDENT tokens (tabs vs spaces, CRLF
 * and CR). Strings, numbers and the source encoding have files of their
 * own. It rejects what CPython's tokenizer rejects, so that a file Python
 * cannot parse is reported as skipped rather than scanned wrongly. */
#include "buildconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan/lex-private.h"
#include "util/util.h"

/* Python 3.11's hard keywords; the soft ones (match, case, _) are names,
 * which the statement structure tells apart by position. */
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

/* Record the first error (the one CPython would report first, mostly). */
int
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
int
lex_add_tok(struct lexer *lx, int type, size_t off, size_t len, int line)
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
int
lex_newline(struct lexer *lx, size_t next)
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

/* Push an opening bracket (or an f-string field, "F"). */
int
lex_open_bracket(struct lexer *lx, char c, int line)
{
	if (lx->depth >= MAXLEVEL)
		return lex_error(lx, line, "too many nested parentheses");
	lx->brtok[lx->depth] = (int32_t)(lx->ntoks - 1);
	lx->brchar[lx->depth] = c;
	lx->depth++;
	return 0;
}

/* Pop a bracket, linking the pair of tokens through match. */
int
lex_close_bracket(struct lexer *lx, char c, int line)
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
			if (lex_newline(lx, i + 1) < 0)
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
		if (lex_add_tok(lx, T_INDENT, i, 0, lx->line) < 0)
			return -1;
	} else {
		while (lx->nindent > 0 && col < lx->indents[lx->nindent]) {
			lx->nindent--;
			if (lex_add_tok(lx, T_DEDENT, i, 0, lx->line) < 0)
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
int
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
				if (lex_newline(lx, lx->pos) < 0)
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
				if (lex_add_tok(lx, T_NEWLINE, i, 0, lx->line) < 0)
					return -1;
				lx->atbol = 1;
			}
			lx->pos = i + nl;
			if (lex_newline(lx, lx->pos) < 0)
				return -1;
			continue;
		}
		if (c == '\\') {
			if (i + 1 < end && (nl = newline_len(s, i + 1, end))) {
				lx->pos = i + 1 + nl;
				if (lex_newline(lx, lx->pos) < 0)
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
			    (flags = lex_string_prefix(s + i, k - i)) != 0) {
				if (lex_string(lx, i, k, flags) < 0)
					return -1;
				continue;
			}
			if (lx->check_utf8 && lx->fdepth == 0) {
				const char *e = NULL;

				for (size_t h = i; h < k; h++)
					if ((unsigned char)s[h] >= 0x80) {
						e = lex_check_name(
						    (const unsigned char *)s + i,
						    k - i);
						break;
					}
				if (e != NULL)
					return lex_error(lx, lx->line, e);
			}
			if (lex_add_tok(lx, T_NAME, i, k - i, lx->line) < 0)
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
			if (lex_add_tok(lx, T_NUMBER, i, k - i, lx->line) < 0)
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
		if (lex_add_tok(lx, T_OP, i, nl, lx->line) < 0)
			return -1;
		lx->toks[lx->ntoks - 1].op = op;
		lx->pos = i + nl;
		if (nl == 1) {
			if (c == '(' || c == '[' || c == '{') {
				if (lex_open_bracket(lx, (char)c, lx->line) < 0)
					return -1;
			} else if (c == ')' || c == ']' || c == '}') {
				if (lex_close_bracket(lx, (char)c, lx->line) < 0)
					return -1;
			}
		}
	}
	return lx->failed ? -1 : 0;
}

/* Tokenize a whole file into lx: 0, or -1 when it is not valid Python
 * (lx->errmsg) or out of memory (lx->oom). */
int
lex_file(struct lexer *lx, const char *src, size_t len)
{
	size_t		 start = 0;

	lx->src = src;
	lx->len = len;
	lx->line = 1;
	lx->atbol = 1;
	if (lex_newline(lx, 0) < 0)	/* line 1 starts at 0 */
		return -1;
	lx->line = 1;
	if (len > 0 && memchr(src, '\0', len) != NULL) {
		lex_error(lx, 1, "source code cannot contain null bytes");
		return -1;
	}
	if (lex_encoding(lx, &start) < 0)
		return -1;
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
	    lex_add_tok(lx, T_NEWLINE, len, 0, lx->line) < 0)
		return -1;
	while (lx->nindent > 0) {
		lx->nindent--;
		if (lex_add_tok(lx, T_DEDENT, len, 0, lx->line) < 0)
			return -1;
	}
	if (lex_add_tok(lx, T_END, len, 0, lx->line) < 0)
		return -1;

	return 0;
}
