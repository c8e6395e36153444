/* JSON in: a strict reader (RFC 8259) with bounds on bytes, depth and
 * values, for text from another process. It is recursive; the depth is
 * bounded by the caller's limit and by JSON_DEPTH_HARD, so the stack is. */
#include "buildconf.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "json_int.h"

/* Whatever a caller asks, the recursion goes no deeper than this. */
#define JSON_DEPTH_HARD		512
/* Objects up to this size are checked for duplicate keys pairwise; larger
 * ones by sorting, so a big object cannot cost quadratic time. */
#define JSON_DUP_PAIRWISE	32

/* The reader's state over one input. */
struct jr {
	const unsigned char *s;
	size_t		 n, pos;
	size_t		 values, max_values;
	int		 max_depth;
	char		*err;
	size_t		 errlen;
};

static int	jr_fail(struct jr *, int, const char *, ...)
		    __attribute__((format(printf, 3, 4)));

/* Fail at the current byte with code and a message. */
static int
jr_fail(struct jr *r, int code, const char *fmt, ...)
{
	char	 msg[160];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return flaky_error(r->err, r->errlen, code, "byte %zu: %s", r->pos,
	    msg);
}

/* The end of the input where more was due: a truncated text. */
static int
jr_truncated(struct jr *r)
{
	return jr_fail(r, EBADMSG, "the text ends too early");
}

/* Skip JSON white space (the four RFC 8259 allows, no more). */
static void
jr_ws(struct jr *r)
{
	while (r->pos < r->n && (r->s[r->pos] == ' ' || r->s[r->pos] == '\t' ||
	    r->s[r->pos] == '\n' || r->s[r->pos] == '\r'))
		r->pos++;
}

/* Free what a value holds, not the value itself. */
static void
json_clear(struct flaky_json *j)
{
	free(j->str);
	if (j->type == FLAKY_JSON_ARRAY || j->type == FLAKY_JSON_OBJECT) {
		for (size_t i = 0; i < j->len; i++) {
			json_clear(&j->items[i]);
			if (j->keys != NULL)
				free(j->keys[i]);
		}
	}
	free(j->items);
	free(j->keys);
	memset(j, 0, sizeof *j);
}

/* Four hex digits of a \u escape at r->pos. */
static int
jr_hex4(struct jr *r, unsigned *ret)
{
	unsigned v = 0;

	if (r->n - r->pos < 4)
		return jr_truncated(r);
	for (int i = 0; i < 4; i++) {
		unsigned char c = r->s[r->pos + (size_t)i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return jr_fail(r, EBADMSG, "a \\u escape needs four "
			    "hex digits");
	}
	r->pos += 4;
	*ret = v;
	return 0;
}

/* A code point as UTF-8. */
static void
utf8_put(struct flaky_buf *b, unsigned cp)
{
	char	 u[4];
	size_t	 n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	flaky_buf_add(b, u, n);
}

/* A \u escape (the backslash and u consumed): one code point, or a
 * surrogate pair; a lone surrogate has no UTF-8 form and is refused. */
static int
jr_unicode(struct jr *r, struct flaky_buf *b)
{
	unsigned cp, lo;
	int	 rc;

	if ((rc = jr_hex4(r, &cp)) < 0)
		return rc;
	if (cp == 0)
		return jr_fail(r, EILSEQ, "\\u0000 is not allowed in a string");
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return jr_fail(r, EILSEQ, "a lone low surrogate");
	if (cp >= 0xd800 && cp <= 0xdbff) {
		/* Its low half must follow at once. */
		for (int i = 0; i < 2; i++) {
			if (r->pos + (size_t)i >= r->n)
				return jr_truncated(r);
			if (r->s[r->pos + (size_t)i] != "\\u"[i])
				return jr_fail(r, EILSEQ, "a lone high "
				    "surrogate");
		}
		r->pos += 2;
		if ((rc = jr_hex4(r, &lo)) < 0)
			return rc;
		if (lo < 0xdc00 || lo > 0xdfff)
			return jr_fail(r, EILSEQ, "a lone high surrogate");
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	utf8_put(b, cp);
	return 0;
}

/* A string at r->pos (on its opening quote) into *ret, *ret_len. */
static int
jr_string(struct jr *r, char **ret, size_t *ret_len)
{
	struct flaky_buf b;
	int		 rc = 0;

	flaky_buf_init(&b);
	r->pos++;
	for (;;) {
		unsigned char	 c;
		size_t		 l;

		if (r->pos >= r->n) {
			rc = jr_truncated(r);
			goto out;
		}
		c = r->s[r->pos];
		if (c == '"')
			break;
		if (c < 0x20) {
			rc = jr_fail(r, EBADMSG, "a control character in a "
			    "string must be escaped");
			goto out;
		}
		if (c != '\\') {
			l = json_utf8_len(r->s + r->pos, r->n - r->pos);
			if (l == 0) {
				rc = jr_fail(r, EILSEQ, "invalid UTF-8");
				goto out;
			}
			flaky_buf_add(&b, r->s + r->pos, l);
			r->pos += l;
			continue;
		}
		if (++r->pos >= r->n) {
			rc = jr_truncated(r);
			goto out;
		}
		c = r->s[r->pos++];
		switch (c) {
		case '"':
		case '\\':
		case '/':
			flaky_buf_addc(&b, (char)c);
			break;
		case 'b': flaky_buf_addc(&b, '\b'); break;
		case 'f': flaky_buf_addc(&b, '\f'); break;
		case 'n': flaky_buf_addc(&b, '\n'); break;
		case 'r': flaky_buf_addc(&b, '\r'); break;
		case 't': flaky_buf_addc(&b, '\t'); break;
		case 'u':
			if ((rc = jr_unicode(r, &b)) < 0)
				goto out;
			break;
		default:
			r->pos--;
			rc = jr_fail(r, EBADMSG, "an unknown escape \\%c",
			    c >= 0x20 && c < 0x7f ? c : '?');
			goto out;
		}
	}
	r->pos++;
	*ret_len = b.len;
	if ((*ret = flaky_buf_steal(&b)) == NULL)
		rc = jr_fail(r, ENOMEM, "out of memory");
out:
	flaky_buf_free(&b);
	return rc;
}

/* A number: the RFC 8259 grammar checked here, the value from strtod. */
static int
jr_number(struct jr *r, double *ret)
{
	size_t	 start = r->pos, len;
	char	 small[64], *copy = small, *end;
	int	 rc = 0;

#define DIGIT(i)	((i) < r->n && r->s[i] >= '0' && r->s[i] <= '9')
	if (r->pos < r->n && r->s[r->pos] == '-')
		r->pos++;
	if (r->pos >= r->n)
		return jr_truncated(r);
	if (r->s[r->pos] == '0')
		r->pos++;
	else if (DIGIT(r->pos))
		while (DIGIT(r->pos))
			r->pos++;
	else
		return jr_fail(r, EBADMSG, "a number needs a digit here");
	if (r->pos < r->n && r->s[r->pos] == '.') {
		r->pos++;
		if (!DIGIT(r->pos))
			return r->pos >= r->n ? jr_truncated(r) : jr_fail(r,
			    EBADMSG, "a digit must follow the decimal point");
		while (DIGIT(r->pos))
			r->pos++;
	}
	if (r->pos < r->n && (r->s[r->pos] == 'e' || r->s[r->pos] == 'E')) {
		r->pos++;
		if (r->pos < r->n && (r->s[r->pos] == '+' ||
		    r->s[r->pos] == '-'))
			r->pos++;
		if (!DIGIT(r->pos))
			return r->pos >= r->n ? jr_truncated(r) : jr_fail(r,
			    EBADMSG, "an exponent needs a digit");
		while (DIGIT(r->pos))
			r->pos++;
	}
#undef DIGIT
	/* strtod needs a NUL, and the input need not have one. */
	len = r->pos - start;
	if (len >= sizeof small && (copy = malloc(len + 1)) == NULL)
		return jr_fail(r, ENOMEM, "out of memory");
	memcpy(copy, r->s + start, len);
	copy[len] = '\0';
	*ret = strtod(copy, &end);
	if (isinf(*ret))
		rc = jr_fail(r, EBADMSG, "a number out of range");
	if (copy != small)
		free(copy);
	return rc;
}

/* Order of keys, for the duplicate check of large objects. */
static int
key_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Refuse an object with a key twice. */
static int
jr_no_duplicates(struct jr *r, const struct flaky_json *o)
{
	const char	*dup = NULL;
	char		**sorted;

	if (o->len <= JSON_DUP_PAIRWISE) {
		for (size_t i = 1; i < o->len && dup == NULL; i++)
			for (size_t k = 0; k < i; k++)
				if (strcmp(o->keys[i], o->keys[k]) == 0) {
					dup = o->keys[i];
					break;
				}
	} else {
		if ((sorted = malloc(o->len * sizeof *sorted)) == NULL)
			return jr_fail(r, ENOMEM, "out of memory");
		memcpy(sorted, o->keys, o->len * sizeof *sorted);
		qsort(sorted, o->len, sizeof *sorted, key_cmp);
		for (size_t i = 1; i < o->len && dup == NULL; i++)
			if (strcmp(sorted[i], sorted[i - 1]) == 0)
				dup = sorted[i];
		free(sorted);
	}
	if (dup != NULL)
		return jr_fail(r, EBADMSG, "the key \"%.40s\" twice in an "
		    "object", dup);
	return 0;
}

static int	jr_value(struct jr *, struct flaky_json *, int);

/* An array or object at r->pos (on its bracket), its items at depth. */
static int
jr_container(struct jr *r, struct flaky_json *out, int depth)
{
	int	 obj = r->s[r->pos] == '{';
	char	 close = obj ? '}' : ']';
	size_t	 cap = 0;
	int	 rc;

	if (depth > r->max_depth)
		return jr_fail(r, E2BIG, "nested deeper than %d", r->max_depth);
	out->type = obj ? FLAKY_JSON_OBJECT : FLAKY_JSON_ARRAY;
	r->pos++;
	jr_ws(r);
	if (r->pos < r->n && r->s[r->pos] == close) {
		r->pos++;
		return 0;
	}
	for (;;) {
		char	*key = NULL;
		size_t	 klen;

		jr_ws(r);
		if (r->pos >= r->n)
			return jr_truncated(r);
		if (obj) {
			if (r->s[r->pos] != '"')
				return jr_fail(r, EBADMSG, "a key (a string) "
				    "is due here");
			if ((rc = jr_string(r, &key, &klen)) < 0)
				return rc;
			jr_ws(r);
			if (r->pos >= r->n || r->s[r->pos] != ':') {
				free(key);
				return r->pos >= r->n ? jr_truncated(r) :
				    jr_fail(r, EBADMSG, "':' is due after a "
				    "key");
			}
			r->pos++;
		}
		if (out->len == cap) {
			size_t		 ncap = cap ? cap * 2 : 8;
			struct flaky_json *items;
			char		**keys;

			items = realloc(out->items, ncap * sizeof *items);
			if (items == NULL) {
				free(key);
				return jr_fail(r, ENOMEM, "out of memory");
			}
			out->items = items;
			if (obj) {
				keys = realloc(out->keys, ncap * sizeof *keys);
				if (keys == NULL) {
					free(key);
					return jr_fail(r, ENOMEM,
					    "out of memory");
				}
				out->keys = keys;
			}
			cap = ncap;
		}
		memset(&out->items[out->len], 0, sizeof out->items[0]);
		if (obj)
			out->keys[out->len] = key;
		/* Counted at once, so that a failure below frees the key. */
		out->len++;
		if ((rc = jr_value(r, &out->items[out->len - 1], depth)) < 0)
			return rc;
		jr_ws(r);
		if (r->pos >= r->n)
			return jr_truncated(r);
		if (r->s[r->pos] == ',') {
			r->pos++;
			continue;
		}
		if (r->s[r->pos] != close)
			return jr_fail(r, EBADMSG, "',' or '%c' is due here",
			    close);
		r->pos++;
		return obj ? jr_no_duplicates(r, out) : 0;
	}
}

/* A literal: true, false or null. */
static int
jr_literal(struct jr *r, const char *word)
{
	size_t	 len = strlen(word);

	for (size_t i = 0; i < len; i++, r->pos++) {
		if (r->pos >= r->n)
			return jr_truncated(r);
		if (r->s[r->pos] != (unsigned char)word[i])
			return jr_fail(r, EBADMSG, "not a JSON value (%s?)",
			    word);
	}
	return 0;
}

/* One value at r->pos, inside depth containers. On failure *out holds
 * what it had parsed, for the caller to free with the rest. */
static int
jr_value(struct jr *r, struct flaky_json *out, int depth)
{
	jr_ws(r);
	if (r->pos >= r->n)
		return jr_truncated(r);
	if (++r->values > r->max_values)
		return jr_fail(r, E2BIG, "more than %zu values",
		    r->max_values);
	switch (r->s[r->pos]) {
	case '{':
	case '[':
		return jr_container(r, out, depth + 1);
	case '"':
		out->type = FLAKY_JSON_STRING;
		return jr_string(r, &out->str, &out->len);
	case 't':
		out->type = FLAKY_JSON_BOOL;
		out->boolean = 1;
		return jr_literal(r, "true");
	case 'f':
		out->type = FLAKY_JSON_BOOL;
		return jr_literal(r, "false");
	case 'n':
		out->type = FLAKY_JSON_NULL;
		return jr_literal(r, "null");
	default:
		if (r->s[r->pos] == '-' || (r->s[r->pos] >= '0' &&
		    r->s[r->pos] <= '9')) {
			out->type = FLAKY_JSON_NUMBER;
			return jr_number(r, &out->number);
		}
		return jr_fail(r, EBADMSG, "not a JSON value");
	}
}

/* Parse one bounded JSON text (json.h). */
int
flaky_json_parse(const char *s, size_t n, const struct flaky_json_limits *lim,
    struct flaky_json **ret, char *err, size_t errlen)
{
	static const struct flaky_json_limits def = FLAKY_JSON_LIMITS_DEFAULT;
	struct flaky_json *j;
	struct jr	 r;
	int		 rc;

	*ret = NULL;
	if (lim == NULL)
		lim = &def;
	if (n > lim->max_bytes)
		return flaky_error(err, errlen, EMSGSIZE, "%zu bytes of JSON, "
		    "more than the %zu allowed", n, lim->max_bytes);
	memset(&r, 0, sizeof r);
	r.s = (const unsigned char *)s;
	r.n = n;
	r.max_values = lim->max_values;
	r.max_depth = lim->max_depth < JSON_DEPTH_HARD ? lim->max_depth :
	    JSON_DEPTH_HARD;
	r.err = err;
	r.errlen = errlen;
	if ((j = calloc(1, sizeof *j)) == NULL)
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	if ((rc = jr_value(&r, j, 0)) == 0) {
		jr_ws(&r);
		if (r.pos < r.n)
			rc = jr_fail(&r, EBADMSG, "more text after the value");
	}
	if (rc < 0) {
		flaky_json_free(j);
		return rc;
	}
	*ret = j;
	return 0;
}

/* Free a parsed value and everything in it; NULL is fine. */
void
flaky_json_free(struct flaky_json *j)
{
	if (j == NULL)
		return;
	json_clear(j);
	free(j);
}

/* The first member named key of an object, or NULL. */
const struct flaky_json *
flaky_json_get(const struct flaky_json *o, const char *key)
{
	if (o == NULL || o->type != FLAKY_JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < o->len; i++)
		if (strcmp(o->keys[i], key) == 0)
			return &o->items[i];
	return NULL;
}

/* A string member, or NULL. */
const char *
flaky_json_get_str(const struct flaky_json *o, const char *key)
{
	const struct flaky_json *v = flaky_json_get(o, key);

	return v != NULL && v->type == FLAKY_JSON_STRING ? v->str : NULL;
}

/* A number or boolean member, or NaN. */
double
flaky_json_get_num(const struct flaky_json *o, const char *key)
{
	const struct flaky_json *v = flaky_json_get(o, key);

	if (v != NULL && v->type == FLAKY_JSON_NUMBER)
		return v->number;
	if (v != NULL && v->type == FLAKY_JSON_BOOL)
		return v->boolean;
	return NAN;
}
