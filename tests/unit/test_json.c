/* json: the one string escaper (its rule for invalid UTF-8 included), the
 * writer, and the bounded reader on valid, truncated, too deep, too long
 * and invalid input. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "util/util.h"

/* Escape n bytes of in and compare with want (a C string). */
static void
escape_is(const char *in, size_t n, const char *want)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	ck_assert_int_eq(flaky_json_escape(&b, in, n), 0);
	ck_assert_msg(strcmp(flaky_buf_cstr(&b), want) == 0,
	    "escaped to %s, expected %s", flaky_buf_cstr(&b), want);
	flaky_buf_free(&b);
}

/* Parse s with limits; the return code, *ret freed unless kept. */
static int
parse(const char *s, const struct flaky_json_limits *lim,
    struct flaky_json **keep)
{
	struct flaky_json *j = NULL;
	char		 err[256] = "";
	int		 rc;

	rc = flaky_json_parse(s, strlen(s), lim, &j, err, sizeof err);
	if (rc < 0) {
		ck_assert_ptr_null(j);
		ck_assert_msg(err[0] != '\0', "%s: no error message", s);
	} else
		ck_assert_ptr_nonnull(j);
	if (keep != NULL)
		*keep = j;
	else
		flaky_json_free(j);
	return rc;
}

/* Parse a string value and return its bytes (malloc'd). */
static char *
parse_string(const char *s)
{
	struct flaky_json *j;
	char		*r;

	ck_assert_int_eq(parse(s, NULL, &j), 0);
	ck_assert_int_eq(j->type, FLAKY_JSON_STRING);
	ck_assert_uint_eq(strlen(j->str), j->len);
	r = strdup(j->str);
	flaky_json_free(j);
	return r;
}

START_TEST(escape_ascii)
{
	escape_is("", 0, "\"\"");
	escape_is("plain text 123", 14, "\"plain text 123\"");
	escape_is("say \"hi\"", 8, "\"say \\\"hi\\\"\"");
	escape_is("C:\\dir\\", 7, "\"C:\\\\dir\\\\\"");
	escape_is("a/b", 3, "\"a/b\"");
	escape_is("l1\nl2\r\n\tx", 9, "\"l1\\nl2\\r\\n\\tx\"");
	escape_is("\x01\x08\x0c\x1f\x7f", 5,
	    "\"\\u0001\\u0008\\u000c\\u001f\\u007f\"");
	/* A NUL inside a counted string is a control character too. */
	escape_is("a\0b", 3, "\"a\\u0000b\"");
}
END_TEST

START_TEST(escape_utf8)
{
	/* Valid UTF-8 of every length passes as it is. */
	escape_is("caf\xc3\xa9", 5, "\"caf\xc3\xa9\"");
	escape_is("\xe2\x82\xac 5", 5, "\"\xe2\x82\xac 5\"");
	escape_is("\xf0\x9f\x98\x80", 4, "\"\xf0\x9f\x98\x80\"");
	escape_is("\xf4\x8f\xbf\xbf", 4, "\"\xf4\x8f\xbf\xbf\"");	/* U+10FFFF */
	escape_is("\xe2\x80\xa8", 3, "\"\xe2\x80\xa8\"");	/* U+2028 */
}
END_TEST

START_TEST(escape_invalid)
{
	/* The rule (docs/json.md): each invalid byte is one \ufffd. */
	escape_is("\x80", 1, "\"\\ufffd\"");
	escape_is("a\xffz", 3, "\"a\\ufffdz\"");
	escape_is("\xc0\xaf", 2, "\"\\ufffd\\ufffd\"");		/* overlong / */
	escape_is("\xe0\x80\xaf", 3, "\"\\ufffd\\ufffd\\ufffd\"");
	escape_is("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"");	/* D800 */
	escape_is("\xf4\x90\x80\x80", 4,
	    "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");			/* 110000 */
	escape_is("\xf8\x88\x80\x80\x80", 5,
	    "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* Cut short: at the end, and before an ASCII byte. */
	escape_is("x\xe2\x82", 3, "\"x\\ufffd\\ufffd\"");
	escape_is("\xe2\x82z", 3, "\"\\ufffd\\ufffdz\"");
	/* A valid sequence right after an invalid byte survives. */
	escape_is("\xff\xc3\xa9", 3, "\"\\ufffd\xc3\xa9\"");
}
END_TEST

START_TEST(escape_null_and_round_trip)
{
	struct flaky_buf b;
	char		 all[128];
	char		*back;

	flaky_buf_init(&b);
	ck_assert_int_eq(flaky_json_escape_str(&b, NULL), 0);
	ck_assert_str_eq(flaky_buf_cstr(&b), "null");
	/* Every ASCII byte but NUL, and some UTF-8, come back as they were. */
	for (int i = 1; i < 128; i++)
		all[i - 1] = (char)i;
	all[127] = '\0';
	flaky_buf_reset(&b);
	ck_assert_int_eq(flaky_json_escape_str(&b, all), 0);
	back = parse_string(flaky_buf_cstr(&b));
	ck_assert_str_eq(back, all);
	free(back);
	flaky_buf_reset(&b);
	ck_assert_int_eq(flaky_json_escape_str(&b,
	    "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), 0);
	back = parse_string(flaky_buf_cstr(&b));
	ck_assert_str_eq(back, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	free(back);
	/* Invalid bytes come back as U+FFFD each: the reader accepts what
	 * the escaper writes, whatever it was given. */
	flaky_buf_reset(&b);
	ck_assert_int_eq(flaky_json_escape_str(&b, "a\xff\xfe"), 0);
	back = parse_string(flaky_buf_cstr(&b));
	ck_assert_str_eq(back, "a\xef\xbf\xbd\xef\xbf\xbd");
	free(back);
	flaky_buf_free(&b);
}
END_TEST

START_TEST(writer)
{
	struct flaky_buf b;
	struct flaky_jw	 w;

	flaky_buf_init(&b);
	flaky_jw_init(&w, &b);
	flaky_jw_object_begin(&w);
	flaky_jw_key(&w, "a");
	flaky_jw_int(&w, -3);
	flaky_jw_key(&w, "b\"");
	flaky_jw_array_begin(&w);
	flaky_jw_string(&w, "x");
	flaky_jw_null(&w);
	flaky_jw_bool(&w, 1);
	flaky_jw_double(&w, 0.5);
	flaky_jw_double(&w, NAN);
	flaky_jw_string(&w, NULL);
	flaky_jw_object_begin(&w);
	flaky_jw_object_end(&w);
	flaky_jw_array_begin(&w);
	flaky_jw_array_end(&w);
	flaky_jw_array_end(&w);
	flaky_jw_key(&w, "c");
	flaky_jw_bool(&w, 0);
	flaky_jw_object_end(&w);
	ck_assert_int_eq(flaky_jw_finish(&w), 0);
	ck_assert_str_eq(flaky_buf_cstr(&b), "{\"a\":-3,\"b\\\"\":[\"x\",null,"
	    "true,0.5,null,null,{},[]],\"c\":false}");
	/* What it writes, the reader reads. */
	ck_assert_int_eq(parse(flaky_buf_cstr(&b), NULL, NULL), 0);
	flaky_buf_free(&b);
}
END_TEST

/* Numbers: the shortest text that reads back as the same double (issue
 * 28: a duration of 652023 us was 652.02300000000002), never a lossy one
 * (flakyctl's JSON had %.6g: 1234567.891 ms became 1.23457e+06). */
START_TEST(writer_numbers)
{
	static const struct {
		double		 v;
		const char	*text;
	} want[] = {
		{ 652023 / 1e3, "652.023" }, { 0.1, "0.1" }, { 0.17, "0.17" },
		{ 1.0 / 3, "0.3333333333333333" }, { 2.0 / 3, "0.6666666666666666" },
		{ 1234567.891, "1234567.891" }, { 30012, "30012" }, { 0, "0" },
		{ -0.0, "0" }, { -2.5, "-2.5" }, { 1e21, "1e+21" },
		{ 5e-324, "4.94065645841247e-324" },
		{ 0.30000000000000004, "0.30000000000000004" },
	};
	struct flaky_buf b;
	struct flaky_json *j;
	struct flaky_jw	 w;
	char	 err[128];

	flaky_buf_init(&b);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		flaky_buf_reset(&b);
		ck_assert_int_eq(flaky_json_number(&b, want[i].v), 0);
		ck_assert_str_eq(flaky_buf_cstr(&b), want[i].text);
		/* and the reader gives back the very double */
		ck_assert_int_eq(flaky_json_parse(b.data, b.len, NULL, &j, err,
		    sizeof err), 0);
		ck_assert_msg(j->number == (want[i].v == 0 ? 0 : want[i].v),
		    "%s", want[i].text);
		flaky_json_free(j);
	}
	flaky_buf_reset(&b);
	ck_assert_int_eq(flaky_json_number(&b, INFINITY), 0);
	ck_assert_str_eq(flaky_buf_cstr(&b), "null");
	/* the writer's numbers are these */
	flaky_buf_reset(&b);
	flaky_jw_init(&w, &b);
	flaky_jw_array_begin(&w);
	flaky_jw_double(&w, 652023 / 1e3);
	flaky_jw_double(&w, 0.1 + 0.2);
	flaky_jw_array_end(&w);
	ck_assert_int_eq(flaky_jw_finish(&w), 0);
	ck_assert_str_eq(flaky_buf_cstr(&b), "[652.023,0.30000000000000004]");
	flaky_buf_free(&b);
}
END_TEST

START_TEST(writer_misuse)
{
	struct flaky_buf b;
	struct flaky_jw	 w;

	flaky_buf_init(&b);
	/* A value where a key is due. */
	flaky_jw_init(&w, &b);
	flaky_jw_object_begin(&w);
	flaky_jw_int(&w, 1);
	ck_assert_int_eq(flaky_jw_finish(&w), -EINVAL);
	/* A key in an array; a container left open; nothing at all. */
	flaky_jw_init(&w, &b);
	flaky_jw_array_begin(&w);
	flaky_jw_key(&w, "k");
	ck_assert_int_eq(flaky_jw_finish(&w), -EINVAL);
	flaky_jw_init(&w, &b);
	flaky_jw_array_begin(&w);
	ck_assert_int_eq(flaky_jw_finish(&w), -EINVAL);
	flaky_jw_init(&w, &b);
	ck_assert_int_eq(flaky_jw_finish(&w), -EINVAL);
	/* The wrong closer, a key without its value, two texts. */
	flaky_jw_init(&w, &b);
	flaky_jw_array_begin(&w);
	flaky_jw_object_end(&w);
	ck_assert_int_eq(flaky_jw_finish(&w), -EINVAL);
	flaky_jw_init(&w, &b);
	flaky_jw_object_begin(&w);
	flaky_jw_key(&w, "k");
	flaky_jw_object_end(&w);
	ck_assert_int_eq(flaky_jw_finish(&w), -EINVAL);
	flaky_jw_init(&w, &b);
	flaky_jw_int(&w, 1);
	flaky_jw_int(&w, 2);
	ck_assert_int_eq(flaky_jw_finish(&w), -EINVAL);
	/* Too deep for the writer's stack. */
	flaky_jw_init(&w, &b);
	for (int i = 0; i < FLAKY_JSON_WRITE_DEPTH + 1; i++)
		flaky_jw_array_begin(&w);
	ck_assert_int_eq(flaky_jw_finish(&w), -E2BIG);
	flaky_buf_free(&b);
}
END_TEST

START_TEST(read_valid)
{
	struct flaky_json *j;
	const struct flaky_json *v;
	char		*s;

	ck_assert_int_eq(parse(" {\"s\":\"x\", \"n\" : -1.25E-2,\"i\":0,"
	    "\"t\":true,\"f\":false,\"z\":null,\"a\":[1,[2,{}],[]],"
	    "\"o\":{\"k\":\"v\"}}\r\n\t", NULL, &j), 0);
	ck_assert_int_eq(j->type, FLAKY_JSON_OBJECT);
	ck_assert_uint_eq(j->len, 8);
	ck_assert_str_eq(flaky_json_get_str(j, "s"), "x");
	ck_assert(flaky_json_get_num(j, "n") == -1.25E-2);
	ck_assert(flaky_json_get_num(j, "i") == 0);
	ck_assert(flaky_json_get_num(j, "t") == 1);
	ck_assert(flaky_json_get_num(j, "f") == 0);
	ck_assert(isnan(flaky_json_get_num(j, "s")));
	ck_assert(isnan(flaky_json_get_num(j, "missing")));
	ck_assert_ptr_null(flaky_json_get_str(j, "n"));
	ck_assert_int_eq(flaky_json_get(j, "z")->type, FLAKY_JSON_NULL);
	v = flaky_json_get(j, "a");
	ck_assert_int_eq(v->type, FLAKY_JSON_ARRAY);
	ck_assert_uint_eq(v->len, 3);
	ck_assert_uint_eq(v->items[1].len, 2);
	ck_assert_int_eq(v->items[1].items[1].type, FLAKY_JSON_OBJECT);
	ck_assert_str_eq(flaky_json_get_str(flaky_json_get(j, "o"), "k"),
	    "v");
	ck_assert_ptr_null(flaky_json_get(v, "k"));	/* not an object */
	flaky_json_free(j);
	/* Scalars at the top, numbers of every form. */
	ck_assert_int_eq(parse("-0", NULL, NULL), 0);
	ck_assert_int_eq(parse("1e3", NULL, NULL), 0);
	ck_assert_int_eq(parse("12.5e+2", NULL, NULL), 0);
	ck_assert_int_eq(parse("\"\"", NULL, NULL), 0);
	ck_assert_int_eq(parse("1e-400", NULL, NULL), 0);	/* underflow: 0 */
	/* Escapes, a surrogate pair included. */
	s = parse_string("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20AC"
	    "\\ud83d\\ude00\"");
	ck_assert_str_eq(s, "\"\\/\b\f\n\r\t\xc3\xa9\xe2\x82\xac"
	    "\xf0\x9f\x98\x80");
	free(s);
}
END_TEST

START_TEST(read_unterminated_input)
{
	/* The input need not end with a NUL: the reader stays inside n. */
	static const char *docs[] = { "123", "-1.5e7", "true", "\"ab\"",
	    "[1]" };

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(docs); i++) {
		size_t		 n = strlen(docs[i]);
		char		*p = malloc(n);
		struct flaky_json *j;

		memcpy(p, docs[i], n);
		ck_assert_int_eq(flaky_json_parse(p, n, NULL, &j, NULL, 0), 0);
		flaky_json_free(j);
		/* One byte short is a truncated text, or another number. */
		if (flaky_json_parse(p, n - 1, NULL, &j, NULL, 0) == 0)
			flaky_json_free(j);
		free(p);
	}
}
END_TEST

START_TEST(read_truncated)
{
	static const char doc[] = "{\"ok\":true,\"n\":-12.5e3,\"s\":"
	    "\"a\\u00e9\\ud83d\\ude00\xc3\xa9\",\"a\":[null,false,{}]}";
	struct flaky_json *j;
	char		 err[256];

	/* Every strict prefix of an object is a truncated text. */
	for (size_t n = 0; n < sizeof doc - 1; n++) {
		/* Cut inside the é, it is a UTF-8 sequence cut short. */
		int	 want = n > 0 && ((unsigned char)doc[n - 1] & 0xc0) ==
		    0xc0 ? -EILSEQ : -EBADMSG;

		err[0] = '\0';
		ck_assert_msg(flaky_json_parse(doc, n, NULL, &j, err,
		    sizeof err) == want, "prefix %zu: %s", n, err);
		ck_assert_ptr_null(j);
		ck_assert(err[0] != '\0');
	}
	ck_assert_int_eq(flaky_json_parse(doc, sizeof doc - 1, NULL, &j, err,
	    sizeof err), 0);
	flaky_json_free(j);
	ck_assert_int_eq(flaky_json_parse(doc, 20, NULL, &j, err, sizeof err),
	    -EBADMSG);
	ck_assert_msg(strstr(err, "byte 20") != NULL &&
	    strstr(err, "ends too early") != NULL, "%s", err);
}
END_TEST

START_TEST(read_malformed)
{
	static const char *bad[] = {
		"", "   ", "[1,]", "{\"a\":1,}", "[1 2]", "{\"a\" 1}", "{1:2}",
		"01", "+1", "1.", ".5", "1e", "-", "--1", "0x10", "NaN",
		"Infinity", "tru", "nul", "truex", "'a'", "\"a\nb\"", "\"\\x\"",
		"\"\\u12\"", "\"\\u12g4\"", "[1]x", "{} {}", "1e400", "\x01",
		"{\"a\":1,\"a\":2}",
	};
	struct flaky_json *j;

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(bad); i++)
		ck_assert_msg(parse(bad[i], NULL, NULL) == -EBADMSG,
		    "'%s' accepted or wrong error", bad[i]);
	/* A NUL byte is no JSON, in a string or between values. */
	ck_assert_int_eq(flaky_json_parse("[1\0]", 4, NULL, &j, NULL, 0),
	    -EBADMSG);
	ck_assert_int_eq(flaky_json_parse("\"a\0\"", 4, NULL, &j, NULL, 0),
	    -EBADMSG);
}
END_TEST

START_TEST(read_duplicates_large)
{
	struct flaky_buf b;

	/* Past the pairwise check: 100 members, the last one a repeat. */
	flaky_buf_init(&b);
	flaky_buf_addc(&b, '{');
	for (int i = 0; i < 100; i++)
		flaky_buf_printf(&b, "\"k%d\":%d,", i, i);
	flaky_buf_adds(&b, "\"k42\":0}");
	ck_assert_int_eq(parse(flaky_buf_cstr(&b), NULL, NULL), -EBADMSG);
	memcpy(b.data + b.len - 7, "k99", 3);	/* the last one repeated */
	ck_assert_int_eq(parse(flaky_buf_cstr(&b), NULL, NULL), -EBADMSG);
	memcpy(b.data + b.len - 7, "kxy", 3);	/* a new key */
	ck_assert_int_eq(parse(flaky_buf_cstr(&b), NULL, NULL), 0);
	flaky_buf_free(&b);
}
END_TEST

START_TEST(read_too_deep)
{
	struct flaky_json_limits lim = FLAKY_JSON_LIMITS_DEFAULT;
	struct flaky_buf b;
	char		 err[256];
	struct flaky_json *j;

	flaky_buf_init(&b);
	/* max_depth arrays deep is fine, one more is not. */
	for (int i = 0; i < lim.max_depth; i++)
		flaky_buf_addc(&b, '[');
	for (int i = 0; i < lim.max_depth; i++)
		flaky_buf_addc(&b, ']');
	ck_assert_int_eq(parse(flaky_buf_cstr(&b), &lim, NULL), 0);
	flaky_buf_reset(&b);
	for (int i = 0; i <= lim.max_depth; i++)
		flaky_buf_adds(&b, "{\"k\":");
	ck_assert_int_eq(flaky_json_parse(b.data, b.len, &lim, &j, err,
	    sizeof err), -E2BIG);
	ck_assert_msg(strstr(err, "deeper than 32") != NULL, "%s", err);
	/* A caller's huge limit is capped, so the stack is bounded. */
	lim.max_depth = 1 << 30;
	lim.max_values = 1 << 20;
	flaky_buf_reset(&b);
	for (int i = 0; i < 100000; i++)
		flaky_buf_addc(&b, '[');
	ck_assert_int_eq(parse(flaky_buf_cstr(&b), &lim, NULL), -E2BIG);
	flaky_buf_free(&b);
}
END_TEST

START_TEST(read_too_long)
{
	struct flaky_json_limits lim = { 16, 8, 4 };
	char		 err[256];
	struct flaky_json *j;

	ck_assert_int_eq(parse("\"0123456789abcd\"", &lim, NULL), 0);
	ck_assert_int_eq(flaky_json_parse("\"0123456789abcde\"", 17, &lim,
	    &j, err, sizeof err), -EMSGSIZE);
	ck_assert_msg(strstr(err, "17 bytes") != NULL, "%s", err);
	/* Values are bounded too: four fit, five do not. */
	ck_assert_int_eq(parse("[1,2,3]", &lim, NULL), 0);
	ck_assert_int_eq(parse("[1,2,3,4]", &lim, NULL), -E2BIG);
}
END_TEST

START_TEST(read_invalid_utf8)
{
	static const char *bad[] = {
		"\"\xff\"", "\"a\x80\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"",
		"\"\xf4\x90\x80\x80\"", "\"\xe2\x82\"", "{\"\xc3\":1}",
		"\"\\ud800\"", "\"\\ud800x\"", "\"\\ud800\\u0041\"",
		"\"\\udc00\"", "\"\\u0000\"",
	};

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(bad); i++)
		ck_assert_msg(parse(bad[i], NULL, NULL) == -EILSEQ,
		    "bad %zu accepted or wrong error", i);
	/* Outside a string a high byte is just not JSON. */
	ck_assert_int_eq(parse("[\xc3\xa9]", NULL, NULL), -EBADMSG);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("json");
	TCase	*esc = tcase_create("escape");
	TCase	*wr = tcase_create("writer");
	TCase	*rd = tcase_create("reader");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(esc, 30);
	tcase_add_test(esc, escape_ascii);
	tcase_add_test(esc, escape_utf8);
	tcase_add_test(esc, escape_invalid);
	tcase_add_test(esc, escape_null_and_round_trip);
	suite_add_tcase(s, esc);
	tcase_set_timeout(wr, 30);
	tcase_add_test(wr, writer);
	tcase_add_test(wr, writer_misuse);
	tcase_add_test(wr, writer_numbers);
	suite_add_tcase(s, wr);
	tcase_set_timeout(rd, 30);
	tcase_add_test(rd, read_valid);
	tcase_add_test(rd, read_unterminated_input);
	tcase_add_test(rd, read_truncated);
	tcase_add_test(rd, read_malformed);
	tcase_add_test(rd, read_duplicates_large);
	tcase_add_test(rd, read_too_deep);
	tcase_add_test(rd, read_too_long);
	tcase_add_test(rd, read_invalid_utf8);
	suite_add_tcase(s, rd);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
