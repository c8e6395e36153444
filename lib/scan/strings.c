/* String literals: prefixes, triple quotes, escapes Python decodes at
 * compile time, adjacent literals, and the replacement fields of f-strings,
 * whose expressions are tokenized into the stream between FSTART and FEND
 * as CPython 3.11 compiles them. */
#include "buildconf.h"

#include <stdint.h>
#include <string.h>

#include "scan/lex-private.h"

/* 1 raw, 2 f-string, 4 valid prefix, 8 bytes; 0 when s[0..n) is not a
 * prefix. */
int
lex_string_prefix(const char *s, size_t n)
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

static int	fstring_literal(struct lexer *, size_t *, size_t, int *, int,
	    int);

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
	if (lex_add_tok(lx, T_FSTART, estart, 0, *line) < 0 ||
	    lex_open_bracket(lx, 'F', *line) < 0)
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
	if (lex_add_tok(lx, T_FEND, eend, 0, *line) < 0)
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
int
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
				if (lex_newline(lx, i) < 0)
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
			if (lex_newline(lx, i) < 0)
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
	    lex_utf8_check((const unsigned char *)s + start, i - start) != 0)
		return lex_error(lx, line, "(unicode error) invalid UTF-8");
	if (!(flags & 1)) {
		const char *e = check_escapes(s, body, bodyend, flags & 8);

		if (e != NULL)
			return lex_error(lx, line, e);
	}
	if (lex_add_tok(lx, T_STRING, start, i - start, line) < 0)
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
