/* cli/table.c: display widths in a UTF-8 locale (›, CJK, emoji, a byte
 * that is no character) and in the C locale, cells padded or shortened in
 * the middle to exactly their width, cutting and wrapping. */
#include "buildconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "util/util.h"

/* Each test runs in its own process (check forks): the locale table.c
 * caches is the one set here. */
static void
utf8_locale(void)
{
	setenv("LC_ALL", "C.UTF-8", 1);
}

static void
c_locale(void)
{
	setenv("LC_ALL", "C", 1);
}

START_TEST(test_width_utf8)
{
	ck_assert_uint_eq(table_width(""), 0);
	ck_assert_uint_eq(table_width("abc"), 3);
	ck_assert_uint_eq(table_width("Cart \u203a adds"), 11);
	ck_assert_uint_eq(table_width("\u652f\u6255\u3044"), 6);
	ck_assert_uint_eq(table_width("\U0001f680"), 2);
	ck_assert_uint_eq(table_width("a\xff" "b"), 3);
	/* cut short: each byte is a column, as a terminal's replacement */
	ck_assert_uint_eq(table_width("\xe2\x80"), 2);
}
END_TEST

START_TEST(test_width_c)
{
	/* one column per code point, whatever it is */
	ck_assert_uint_eq(table_width("\u652f\u6255\u3044"), 3);
	ck_assert_uint_eq(table_width("a \u203a b"), 5);
	ck_assert_uint_eq(table_width("\U0001f680"), 1);
}
END_TEST

/* table_cell(s, w) is want, and takes exactly w columns. */
static void
cell_is(const char *s, size_t w, int right, const char *want)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	table_cell(&b, s, w, right);
	ck_assert_str_eq(flaky_buf_cstr(&b), want);
	ck_assert_uint_eq(table_width(flaky_buf_cstr(&b)), w);
	flaky_buf_free(&b);
}

START_TEST(test_cell)
{
	cell_is("ab", 4, 0, "ab  ");
	cell_is("ab", 4, 1, "  ab");
	cell_is("abcdefghij", 5, 0, "ab\u2026ij");
	cell_is("abcdefghij", 6, 0, "abc\u2026ij");
	cell_is("abcdefghij", 1, 0, "\u2026");
	cell_is("abcdefghij", 10, 0, "abcdefghij");
	/* wide characters that do not fit leave a blank */
	cell_is("\u652f\u6255\u3044\u652f\u6255\u3044", 7, 0,
	    "\u652f\u2026\u3044  ");
	cell_is("\u652f\u6255\u3044\u652f\u6255\u3044", 8, 0,
	    "\u652f\u6255\u2026\u3044 ");
	cell_is("tests/t.py::test_x[\U0001f680-go]", 12, 0,
	    "tests/\u2026-go] ");
	cell_is("Checkout \u203a talks to slow API", 11, 0,
	    "Check\u2026w API");
}
END_TEST

START_TEST(test_cut)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	table_cut(&b, "abcdef", 4);
	ck_assert_str_eq(flaky_buf_cstr(&b), "abc\u2026");
	flaky_buf_reset(&b);
	table_cut(&b, "abc", 4);
	ck_assert_str_eq(flaky_buf_cstr(&b), "abc");
	flaky_buf_reset(&b);
	table_cut(&b, "\u652f\u6255\u3044", 4);
	ck_assert_str_eq(flaky_buf_cstr(&b), "\u652f\u2026");
	flaky_buf_free(&b);
}
END_TEST

START_TEST(test_wrap)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	table_wrap(&b, "aa bb cc", ' ', " ", 0, 5);
	ck_assert_str_eq(flaky_buf_cstr(&b), "aa bb\ncc\n");
	flaky_buf_reset(&b);
	/* pieces keep their blanks; the first line starts at the indent
	 * (written by the caller), the next ones are indented */
	table_wrap(&b, "a b\037cc\037dd", '\037', "  ", 2, 8);
	ck_assert_str_eq(flaky_buf_cstr(&b), "a b\n  cc  dd\n");
	flaky_buf_reset(&b);
	/* no width: one line */
	table_wrap(&b, "aa bb cc", ' ', " ", 0, 0);
	ck_assert_str_eq(flaky_buf_cstr(&b), "aa bb cc\n");
	flaky_buf_reset(&b);
	/* a piece wider than a line is cut */
	table_wrap(&b, "abcdefgh", ' ', " ", 0, 5);
	ck_assert_str_eq(flaky_buf_cstr(&b), "abcd\u2026\n");
	flaky_buf_free(&b);
	ck_assert_str_eq(plural(1), "");
	ck_assert_str_eq(plural(0), "s");
	ck_assert_str_eq(plural(2), "s");
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("cli_table");
	TCase	*tc = tcase_create("utf8"), *c = tcase_create("c");
	SRunner	*sr;
	int	 failed;

	tcase_add_unchecked_fixture(tc, utf8_locale, NULL);
	tcase_add_test(tc, test_width_utf8);
	tcase_add_test(tc, test_cell);
	tcase_add_test(tc, test_cut);
	tcase_add_test(tc, test_wrap);
	suite_add_tcase(s, tc);
	tcase_add_unchecked_fixture(c, c_locale, NULL);
	tcase_add_test(c, test_width_c);
	suite_add_tcase(s, c);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
