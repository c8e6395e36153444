/* The tokenizer's internals, shared by tokenize.c (the driver, indentation,
 * operators, brackets), strings.c, numbers.c and encoding.c, and read by
 * the statement structure that walks the token stream. Not a public header:
 * programs include scan/scan.h. */
#ifndef FLAKY_SCAN_LEX_PRIVATE_H
#define FLAKY_SCAN_LEX_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

/* CPython's own limits (tokenizer.h MAXINDENT, MAXLEVEL). */
#define MAXINDENT	100
#define MAXLEVEL	200
/* f-strings inside f-string fields: quotes run out after four levels. */
#define MAXFDEPTH	8

/* Token types, as flaky_pyscan_tokens() names them: NAME ... END. FSTART
 * and FEND bracket the tokens of an f-string's replacement field. */
enum {
	T_NAME = 1, T_NUMBER, T_STRING, T_OP, T_NEWLINE, T_INDENT, T_DEDENT,
	T_FSTART, T_FEND, T_END
};

/* What a NAME token is: not a keyword (KW_NONE), or one of the hard
 * keywords (KW_NONE_ is the keyword None). */
enum {
	KW_NONE, KW_FALSE, KW_NONE_, KW_TRUE, KW_AND, KW_AS, KW_ASSERT,
	KW_ASYNC, KW_AWAIT, KW_BREAK, KW_CLASS, KW_CONTINUE, KW_DEF, KW_DEL,
	KW_ELIF, KW_ELSE, KW_EXCEPT, KW_FINALLY, KW_FOR, KW_FROM, KW_GLOBAL,
	KW_IF, KW_IMPORT, KW_IN, KW_IS, KW_LAMBDA, KW_NONLOCAL, KW_NOT, KW_OR,
	KW_PASS, KW_RAISE, KW_RETURN, KW_TRY, KW_WHILE, KW_WITH, KW_YIELD
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

/* tokenize.c */
int	 lex_file(struct lexer *, const char *, size_t);
int	 lex_range(struct lexer *, size_t, size_t);
int	 lex_error(struct lexer *, int, const char *);
int	 lex_add_tok(struct lexer *, int, size_t, size_t, int);
int	 lex_newline(struct lexer *, size_t);
int	 lex_open_bracket(struct lexer *, char, int);
int	 lex_close_bracket(struct lexer *, char, int);

/* strings.c */
int	 lex_string_prefix(const char *, size_t);
int	 lex_string(struct lexer *, size_t, size_t, int);

/* numbers.c */
const char *lex_number(const char *, size_t, size_t, size_t *);

/* encoding.c */
int	 lex_encoding(struct lexer *, size_t *);
size_t	 lex_utf8_check(const unsigned char *, size_t);
const char *lex_check_name(const unsigned char *, size_t);

#endif
