/* Number literals as CPython 3.11's tokenizer reads them: decimal, hex,
 * octal, binary, floats, exponents, imaginary, underscores between digits,
 * and what may touch the end of a number. */
#include "buildconf.h"

#include <stddef.h>
#include <string.h>

#include "scan/lex-private.h"

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
const char *
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
