/* JSON for the whole tree: the one string escaper (every program's JSON
 * output goes through it, so one rule for invalid UTF-8 holds everywhere),
 * a writer that places the commas, and a small strict reader with bounds
 * on size, depth and the number of values, for text we did not write
 * ourselves (a daemon's reply). docs/json.md states the escaping rule.
 * Like the rest of libflaky: no output, no logging, no exits; functions
 * return 0 or a negative errno and fill an error message the caller owns. */
#ifndef FLAKY_JSON_H
#define FLAKY_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* Append s[0..n) as a quoted JSON string. '"' and '\' are escaped, \n \r
 * \t by their short forms, other control characters and DEL as \u00XX;
 * valid UTF-8 passes as it is; every byte that does not start or belong to
 * a valid UTF-8 sequence (overlong forms, surrogates and code points past
 * U+10FFFF included) becomes \ufffd. 0 or -ENOMEM. */
int	 flaky_json_escape(struct flaky_buf *, const char *s, size_t n);
/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0: the
 * rule the escaper judges by, for other writers of text (lib/fleet). */
size_t	 flaky_utf8_len(const unsigned char *s, size_t n);
/* The same for a C string; NULL becomes null. */
int	 flaky_json_escape_str(struct flaky_buf *, const char *s);

/* Append v as a JSON number: the shortest text that reads back as the
 * same double (652.023, not 652.02300000000002); NaN and infinities as
 * null. 0 or -ENOMEM. The writer below and flakyctl's JSON use it. */
int	 flaky_json_number(struct flaky_buf *, double v);

/* A writer of one compact JSON text into a flaky_buf: keys, values and
 * nesting in document order, commas placed for the caller. An error (out
 * of memory, nesting past FLAKY_JSON_WRITE_DEPTH, a value where a key is
 * due) sticks and is returned by flaky_jw_finish. */
#define FLAKY_JSON_WRITE_DEPTH	32

struct flaky_jw {
	struct flaky_buf *buf;
	int		 depth;
	int		 err;
	uint8_t		 count[FLAKY_JSON_WRITE_DEPTH];	/* 0, 1: more */
	uint8_t		 is_obj[FLAKY_JSON_WRITE_DEPTH];
	int		 after_key;
};

void	 flaky_jw_init(struct flaky_jw *, struct flaky_buf *);
void	 flaky_jw_object_begin(struct flaky_jw *);
void	 flaky_jw_object_end(struct flaky_jw *);
void	 flaky_jw_array_begin(struct flaky_jw *);
void	 flaky_jw_array_end(struct flaky_jw *);
void	 flaky_jw_key(struct flaky_jw *, const char *);
void	 flaky_jw_string(struct flaky_jw *, const char *);	/* NULL: null */
void	 flaky_jw_int(struct flaky_jw *, long long);
void	 flaky_jw_double(struct flaky_jw *, double);	/* NaN, inf: null */
void	 flaky_jw_bool(struct flaky_jw *, int);
void	 flaky_jw_null(struct flaky_jw *);
/* 0 once every object and array is closed, or the first error. */
int	 flaky_jw_finish(struct flaky_jw *);

/* A parsed value. Strings are valid UTF-8, NUL-terminated, without NUL
 * inside. Objects keep their members in order; duplicate keys are an
 * error, so a lookup cannot depend on which of two a reader picks. */
enum flaky_json_type {
	FLAKY_JSON_NULL,
	FLAKY_JSON_BOOL,
	FLAKY_JSON_NUMBER,
	FLAKY_JSON_STRING,
	FLAKY_JSON_ARRAY,
	FLAKY_JSON_OBJECT,
};

struct flaky_json {
	enum flaky_json_type type;
	int		 boolean;
	double		 number;
	char		*str;		/* STRING */
	size_t		 len;		/* STRING: bytes; else: items */
	struct flaky_json *items;	/* ARRAY, OBJECT: the values */
	char		**keys;		/* OBJECT: the keys */
};

/* What the reader accepts at most: bytes of input, nesting of arrays and
 * objects, values in all. The values bound the memory a small input can
 * cost ("[0,0,0,..." is a value per two bytes). */
struct flaky_json_limits {
	size_t		 max_bytes;
	int		 max_depth;
	size_t		 max_values;
};
#define FLAKY_JSON_LIMITS_DEFAULT { 1024 * 1024, 32, 65536 }

/* Parse exactly one JSON text (RFC 8259, white space around it allowed)
 * from s[0..n) into *ret, to be freed with flaky_json_free. NULL limits:
 * the defaults. Errors, with the byte offset in err: -EMSGSIZE (longer
 * than max_bytes), -E2BIG (deeper than max_depth or more than max_values),
 * -EILSEQ (invalid UTF-8, a lone surrogate, \u0000), -EBADMSG (anything
 * else malformed, a truncated text included), -ENOMEM. */
int	 flaky_json_parse(const char *s, size_t n,
	    const struct flaky_json_limits *, struct flaky_json **ret,
	    char *err, size_t errlen);
void	 flaky_json_free(struct flaky_json *);

/* Lookups that forgive a missing member or a value of another type, as
 * optional reply fields need. */
const struct flaky_json *flaky_json_get(const struct flaky_json *obj,
	    const char *key);
/* A string member, or NULL. */
const char *flaky_json_get_str(const struct flaky_json *obj, const char *key);
/* A number member (a boolean as 0 or 1), or NaN. */
double	 flaky_json_get_num(const struct flaky_json *obj, const char *key);

#endif
