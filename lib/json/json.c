/* JSON out: the tree's one string escaper and a writer that places the
 * commas. The reader is json_read.c; both judge UTF-8 with the same
 * function, so what one writes the other accepts. */
#include "buildconf.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "json_int.h"

/* Length of the valid UTF-8 sequence at s (json_int.h). */
size_t
json_utf8_len(const unsigned char *s, size_t n)
{
	size_t	 len;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* json_utf8_len for the rest of the tree (json.h). */
size_t
flaky_utf8_len(const unsigned char *s, size_t n)
{
	return json_utf8_len(s, n);
}

/* The one escaping rule of the tree (json.h, docs/json.md). */
int
flaky_json_escape(struct flaky_buf *b, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t		 i = 0, run;

	flaky_buf_addc(b, '"');
	while (i < n) {
		unsigned char	 c = s[i];
		size_t		 l;

		/* Plain printable ASCII goes out in runs, not byte by byte. */
		for (run = i; run < n && s[run] >= 0x20 && s[run] < 0x7f &&
		    s[run] != '"' && s[run] != '\\'; run++)
			;
		if (run > i) {
			flaky_buf_add(b, s + i, run - i);
			i = run;
			continue;
		}
		switch (c) {
		case '"': flaky_buf_add(b, "\\\"", 2); i++; continue;
		case '\\': flaky_buf_add(b, "\\\\", 2); i++; continue;
		case '\n': flaky_buf_add(b, "\\n", 2); i++; continue;
		case '\r': flaky_buf_add(b, "\\r", 2); i++; continue;
		case '\t': flaky_buf_add(b, "\\t", 2); i++; continue;
		}
		if (c < 0x20 || c == 0x7f) {
			char	 u[6] = { '\\', 'u', '0', '0', hex[c >> 4],
			    hex[c & 15] };

			flaky_buf_add(b, u, sizeof u);
			i++;
			continue;
		}
		if ((l = json_utf8_len(s + i, n - i)) == 0) {
			/* One replacement per invalid byte: simple to state,
			 * and the length of the damage stays visible. */
			flaky_buf_add(b, "\\ufffd", 6);
			i++;
			continue;
		}
		flaky_buf_add(b, s + i, l);
		i += l;
	}
	flaky_buf_addc(b, '"');
	return b->oom ? -ENOMEM : 0;
}

/* A C string as a JSON string, NULL as null. */
int
flaky_json_escape_str(struct flaky_buf *b, const char *s)
{
	if (s == NULL) {
		flaky_buf_add(b, "null", 4);
		return b->oom ? -ENOMEM : 0;
	}
	return flaky_json_escape(b, s, strlen(s));
}

/* The shortest text of 15 to 17 significant digits that reads back as
 * v: DBL_DIG (15) digits give back every decimal of 15 digits or fewer
 * (652.023 stays 652.023, not %.17g's 652.02300000000002); 16, then 17,
 * for the doubles that need them. -0 is 0; NaN and infinities, which
 * JSON lacks, null. */
int
flaky_json_number(struct flaky_buf *b, double v)
{
	char	 s[40];

	if (isnan(v) || isinf(v)) {
		flaky_buf_add(b, "null", 4);
		return b->oom ? -ENOMEM : 0;
	}
	if (v == 0)
		v = 0;		/* -0.0 prints as "-0" */
	for (int digits = DBL_DIG; digits <= DBL_DECIMAL_DIG; digits++) {
		snprintf(s, sizeof s, "%.*g", digits, v);
		if (strtod(s, NULL) == v)
			break;
	}
	flaky_buf_adds(b, s);
	return b->oom ? -ENOMEM : 0;
}

/* Start writing one JSON text at the end of buf. */
void
flaky_jw_init(struct flaky_jw *w, struct flaky_buf *buf)
{
	memset(w, 0, sizeof *w);
	w->buf = buf;
}

/* Before a value: the comma, or an error when a key is due instead. */
static int
jw_value(struct flaky_jw *w)
{
	if (w->err != 0)
		return -1;
	if (w->after_key) {
		w->after_key = 0;
		return 0;
	}
	if (w->is_obj[w->depth] || (w->depth == 0 && w->count[0])) {
		w->err = -EINVAL;
		return -1;
	}
	if (w->count[w->depth])
		flaky_buf_addc(w->buf, ',');
	w->count[w->depth] = 1;
	return 0;
}

/* Open an object or an array. */
static void
jw_begin(struct flaky_jw *w, int obj)
{
	if (jw_value(w) < 0)
		return;
	if (w->depth + 1 >= FLAKY_JSON_WRITE_DEPTH) {
		w->err = -E2BIG;
		return;
	}
	w->depth++;
	w->count[w->depth] = 0;
	w->is_obj[w->depth] = (uint8_t)obj;
	flaky_buf_addc(w->buf, obj ? '{' : '[');
}

/* Close what jw_begin opened, if that is what is open. */
static void
jw_end(struct flaky_jw *w, int obj)
{
	if (w->err != 0)
		return;
	if (w->depth == 0 || w->is_obj[w->depth] != obj || w->after_key) {
		w->err = -EINVAL;
		return;
	}
	flaky_buf_addc(w->buf, obj ? '}' : ']');
	w->depth--;
}

/* Open an object; keys and values follow. */
void
flaky_jw_object_begin(struct flaky_jw *w)
{
	jw_begin(w, 1);
}

/* Close the innermost object. */
void
flaky_jw_object_end(struct flaky_jw *w)
{
	jw_end(w, 1);
}

/* Open an array; values follow. */
void
flaky_jw_array_begin(struct flaky_jw *w)
{
	jw_begin(w, 0);
}

/* Close the innermost array. */
void
flaky_jw_array_end(struct flaky_jw *w)
{
	jw_end(w, 0);
}

/* A member's key; its value comes next. */
void
flaky_jw_key(struct flaky_jw *w, const char *key)
{
	if (w->err != 0)
		return;
	if (w->depth == 0 || !w->is_obj[w->depth] || w->after_key ||
	    key == NULL) {
		w->err = -EINVAL;
		return;
	}
	if (w->count[w->depth])
		flaky_buf_addc(w->buf, ',');
	w->count[w->depth] = 1;
	flaky_json_escape_str(w->buf, key);
	flaky_buf_addc(w->buf, ':');
	w->after_key = 1;
}

/* A string value, or null. */
void
flaky_jw_string(struct flaky_jw *w, const char *s)
{
	if (jw_value(w) == 0)
		flaky_json_escape_str(w->buf, s);
}

/* An integer value. */
void
flaky_jw_int(struct flaky_jw *w, long long v)
{
	if (jw_value(w) == 0)
		flaky_buf_printf(w->buf, "%lld", v);
}

/* A number value; JSON has no NaN or infinity, so those are null. */
void
flaky_jw_double(struct flaky_jw *w, double v)
{
	if (jw_value(w) == 0)
		flaky_json_number(w->buf, v);
}

/* true or false. */
void
flaky_jw_bool(struct flaky_jw *w, int v)
{
	if (jw_value(w) == 0)
		flaky_buf_adds(w->buf, v ? "true" : "false");
}

/* null. */
void
flaky_jw_null(struct flaky_jw *w)
{
	if (jw_value(w) == 0)
		flaky_buf_add(w->buf, "null", 4);
}

/* The writer's verdict: a whole text was written, or the first error. */
int
flaky_jw_finish(struct flaky_jw *w)
{
	if (w->err != 0)
		return w->err;
	if (w->buf->oom)
		return -ENOMEM;
	if (w->depth != 0 || w->after_key || !w->count[0])
		return -EINVAL;
	return 0;
}
