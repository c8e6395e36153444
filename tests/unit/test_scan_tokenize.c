/* scan, the tokenizer (tokenize.c, strings.c, numbers.c, encoding.c): the
 * token stream and what it rejects, on small inputs with exact expected
 * lines. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "scan_test.h"
#include "util/util.h"

START_TEST(tok_basic)
{
	ck_tokens("async def f(x):\n    return x  # c\n",
	    "1 NAME async\n1 NAME def\n1 NAME f\n1 OP (\n1 NAME x\n1 OP )\n"
	    "1 OP :\n1 NEWLINE\n2 INDENT\n2 NAME return\n2 NAME x\n"
	    "2 NEWLINE\n3 DEDENT\n3 END\n");
	/* Operators by longest match; "->" and ":=" are one token. */
	ck_tokens("a **= b >>= c -> d := e <= f != g ... h @ i\n",
	    "1 NAME a\n1 OP **=\n1 NAME b\n1 OP >>=\n1 NAME c\n1 OP ->\n"
	    "1 NAME d\n1 OP :=\n1 NAME e\n1 OP <=\n1 NAME f\n1 OP !=\n"
	    "1 NAME g\n1 OP ...\n1 NAME h\n1 OP @\n1 NAME i\n1 NEWLINE\n"
	    "2 END\n");
	/* No final newline: one is made up, as Python does. */
	ck_tokens("x", "1 NAME x\n1 NEWLINE\n1 END\n");
	ck_tokens("", "1 END\n");
	ck_tokens("# only\n\n   \n", "4 END\n");
}
END_TEST

START_TEST(tok_strings)
{
	/* Prefixes, escaped quotes, triple quotes over lines: a token's line
	 * is where it starts. */
	ck_tokens("a = rb'\\'' Br\"x\"; U\"x\" '''1\n2\n3''' f'{x}'\nb = 1\n",
	    "1 NAME a\n1 OP =\n1 STRING rb'\\''\n1 STRING Br\"x\"\n1 OP ;\n"
	    "1 STRING U\"x\"\n"
	    "1 STRING '''1\n2\n3'''\n3 STRING f'{x}'\n3 FSTART\n3 NAME x\n"
	    "3 FEND\n3 NEWLINE\n4 NAME b\n4 OP =\n4 NUMBER 1\n4 NEWLINE\n"
	    "5 END\n");
	/* A name that is not a prefix stays a name. */
	ck_tokens("ur\n", "1 NAME ur\n1 NEWLINE\n2 END\n");
	/* A backslash-newline inside a string continues it. */
	ck_tokens("s = 'a\\\nb'\nt\n", "1 NAME s\n1 OP =\n1 STRING 'a\\\nb'\n"
	    "2 NEWLINE\n3 NAME t\n3 NEWLINE\n4 END\n");
}
END_TEST

START_TEST(tok_fstrings)
{
	/* Fields are tokenized, format specs and conversions are not; the
	 * lines inside a triple-quoted f-string count. */
	ck_tokens("f'''a\n{x:>{w}} {y!r} {{z}} {a<b}'''\n",
	    "1 STRING f'''a\n{x:>{w}} {y!r} {{z}} {a<b}'''\n2 FSTART\n2 NAME x\n"
	    "2 FEND\n2 FSTART\n2 NAME w\n2 FEND\n2 FSTART\n2 NAME y\n2 FEND\n"
	    "2 FSTART\n2 NAME a\n2 OP <\n2 NAME b\n2 FEND\n2 NEWLINE\n3 END\n");
	ck_tokens("f\"{f'{x}'}\"\n", "1 STRING f\"{f'{x}'}\"\n1 FSTART\n"
	    "1 STRING f'{x}'\n1 FSTART\n1 NAME x\n1 FEND\n1 FEND\n1 NEWLINE\n"
	    "2 END\n");
	ck_tokens("f'{x=}' rf'\\d{y}'\n", "1 STRING f'{x=}'\n1 FSTART\n"
	    "1 NAME x\n1 FEND\n1 STRING rf'\\d{y}'\n1 FSTART\n1 NAME y\n"
	    "1 FEND\n1 NEWLINE\n2 END\n");
}
END_TEST

START_TEST(tok_lines)
{
	/* Brackets join lines (no NEWLINE), so does a backslash. */
	ck_tokens("x = (1,\n  2)\ny = 1 + \\\n  2\n",
	    "1 NAME x\n1 OP =\n1 OP (\n1 NUMBER 1\n1 OP ,\n2 NUMBER 2\n2 OP )\n"
	    "2 NEWLINE\n3 NAME y\n3 OP =\n3 NUMBER 1\n3 OP +\n4 NUMBER 2\n"
	    "4 NEWLINE\n5 END\n");
	/* CRLF, a lone CR, a BOM. */
	ck_tokens("\xef\xbb\xbf" "a\r\nb\rc\n", "1 NAME a\n1 NEWLINE\n"
	    "2 NAME b\n2 NEWLINE\n3 NAME c\n3 NEWLINE\n4 END\n");
	/* Tabs to multiples of 8, consistent with the spaces before. */
	ck_tokens("if x:\n\tif y:\n\t\tz\n\tw\n",
	    "1 NAME if\n1 NAME x\n1 OP :\n1 NEWLINE\n2 INDENT\n2 NAME if\n"
	    "2 NAME y\n2 OP :\n2 NEWLINE\n3 INDENT\n3 NAME z\n3 NEWLINE\n"
	    "4 DEDENT\n4 NAME w\n4 NEWLINE\n5 DEDENT\n5 END\n");
	/* Comments and blank lines at any indentation do not count. */
	ck_tokens("if x:\n    y\n  # c\n\n    z\n",
	    "1 NAME if\n1 NAME x\n1 OP :\n1 NEWLINE\n2 INDENT\n2 NAME y\n"
	    "2 NEWLINE\n5 NAME z\n5 NEWLINE\n6 DEDENT\n6 END\n");
	/* Non-ASCII names. */
	ck_tokens("π = 1\n", "1 NAME π\n1 OP =\n1 NUMBER 1\n1 NEWLINE\n"
	    "2 END\n");
	/* Numbers as CPython reads them: "1if" is 1 then if. */
	ck_tokens("1if 0x_ff else 1_0.5e-3j\n", "1 NUMBER 1\n1 NAME if\n"
	    "1 NUMBER 0x_ff\n1 NAME else\n1 NUMBER 1_0.5e-3j\n1 NEWLINE\n"
	    "2 END\n");
}
END_TEST

START_TEST(tok_invalid)
{
	static const struct { const char *src; const char *why; } bad[] = {
		{ "x = (1,\n", "line 1: bracket was never closed" },
		{ "x = [1)\n", "line 1: closing parenthesis does not match "
		    "opening parenthesis" },
		{ "x)\n", "line 1: unmatched ')'" },
		{ "x = 'a\n", "line 1: unterminated string literal" },
		{ "x = 1\ny = '''a\n", "line 2: unterminated triple-quoted "
		    "string literal" },
		{ "if x:\n        a\n    b\n", "line 3: unindent does not match "
		    "any outer indentation level" },
		{ "if x:\n\ta\n        b\n", "line 3: inconsistent use of tabs "
		    "and spaces in indentation" },
		{ "x = 1 \\ 2\n", "line 1: unexpected character after line "
		    "continuation character" },
		{ "x = $\n", "line 1: invalid character" },
		{ "x = 0777\n", "line 1: leading zeros in decimal integer "
		    "literals are not permitted" },
		{ "x = 1_\n", "line 1: invalid decimal literal" },
		{ "x = f'{}'\n", "line 1: f-string: empty expression not "
		    "allowed" },
		{ "x = f'}'\n", "line 1: f-string: single '}' is not allowed" },
		{ "x = b'a' 'b'\n", "line 1: cannot mix bytes and nonbytes "
		    "literals" },
		{ "x = '\\u12'\n", "line 1: (unicode error) truncated \\uXXXX "
		    "escape" },
		{ "x = '\xff'\n", "line 1: (unicode error) invalid UTF-8" },
		{ "# coding: nope\n", "line 1: unknown encoding: nope" },
		{ "x = 1 <> 2\n", "line 1: invalid syntax" },
		/* The structure: indentation against the statements. */
		{ "x = 1\n  y = 2\n", "line 2: unexpected indent" },
		{ "def f():\nx = 1\n", "line 2: expected an indented block" },
		{ "def f():\n", "line 2: expected an indented block" },
		{ "if x\n    y\n", "line 1: expected ':'" },
		{ "@dec\nx = 1\n", "line 2: invalid syntax" },
		/* Python 2. */
		{ "print 'x'\n", "line 1: invalid syntax" },
		{ "except E, e:\n    pass\n", "line 1: multiple exception types "
		    "must be parenthesized" },
		{ "raise E, 'x'\n", "line 1: invalid syntax" },
		{ "x = 10L\n", "line 1: invalid decimal literal" },
		/* Operators without operands, stray keywords. */
		{ "x =\n", "line 1: invalid syntax" },
		{ "assert x <\n", "line 1: invalid syntax" },
		{ "f(a +)\n", "line 1: invalid syntax" },
		{ "x = a.\n", "line 1: invalid syntax" },
		{ ";x\n", "line 1: invalid syntax" },
		{ "x = import y\n", "line 1: invalid syntax" },
		{ "if return:\n    pass\n", "line 1: invalid syntax" },
	};

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(bad); i++)
		ck_assert_str_eq(invalid(bad[i].src, strlen(bad[i].src)),
		    bad[i].why);
	ck_assert_str_eq(INVALID("x = 1\0\n"), "line 1: source code cannot "
	    "contain null bytes");
	/* Valid despite appearances. */
	ck_assert_str_eq(INVALID("# \xff in a comment is fine\nx = 1\n"), "");
	ck_assert_str_eq(INVALID("# coding: latin-1\nx = '\xe9'\n"), "");
	ck_assert_str_eq(INVALID("match x:\n    case [a, b]: pass\n"), "");
	ck_assert_str_eq(INVALID("from ...a import b\n"), "");
	ck_assert_str_eq(INVALID("def f(a, /, b, *, c): x = not a not in b\n"),
	    "");
	ck_assert_str_eq(INVALID("from x import *; y = *a, b; yield from z;\n"),
	    "");
	ck_assert_str_eq(INVALID("raise E from None\nx = yield\n"), "");
	/* Found by the fuzzer: a backslash continues a line's indentation. */
	ck_assert_str_eq(INVALID("\\\r\n\n"), "");
	ck_assert_str_eq(INVALID("if x:\n\\\n\n    pass\n"), "");
	ck_assert_str_eq(INVALID("x = 1\n    \\\ny = 2\n"),
	    "line 3: unexpected indent");
	ck_assert_str_eq(INVALID(""), "");
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("scan_tokenize");
	TCase	*tc = tcase_create("scan_tokenize");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, tok_basic);
	tcase_add_test(tc, tok_strings);
	tcase_add_test(tc, tok_fstrings);
	tcase_add_test(tc, tok_lines);
	tcase_add_test(tc, tok_invalid);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
