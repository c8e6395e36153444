/* pyscan: the tokenizer, the scope structure, each finding rule, the
 * tolerance arguments, the seeding signal and the directory walk, on small
 * inputs with exact expected lines. */
#include "buildconf.h"

#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scan/scan.h"
#include "util.h"

/* The token dump of src, as a string the test frees. */
static char *
tokens(const char *src)
{
	struct flaky_buf b;
	char		 err[256];

	flaky_buf_init(&b);
	ck_assert_msg(flaky_pyscan_tokens(src, strlen(src), &b, err,
	    sizeof err) == 0, "tokens failed: %s", err);
	flaky_buf_cstr(&b);
	return flaky_buf_steal(&b);
}

/* Why src is not valid Python, or "" when it is. */
static const char *
invalid(const char *src, size_t len)
{
	static char	 err[256];
	struct flaky_buf b;
	int		 rc;

	flaky_buf_init(&b);
	err[0] = '\0';
	rc = flaky_pyscan_tokens(src, len, &b, err, sizeof err);
	flaky_buf_free(&b);
	if (rc == 0) {
		struct flaky_scan_result *r;

		/* The tokens may be fine and the structure not. */
		ck_assert_int_eq(flaky_pyscan_buffer(src, len, &r, err,
		    sizeof err), 0);
		snprintf(err, sizeof err, "%s", r->skipped ? r->reason : "");
		flaky_scan_result_free(r);
		return err;
	}
	ck_assert_int_eq(rc, -EINVAL);
	return err;
}

/* For literals, NUL bytes included. */
#define INVALID(lit)	invalid((lit), sizeof(lit) - 1)

static struct flaky_scan_result *
scan(const char *src)
{
	struct flaky_scan_result *r;
	char		 err[256];

	ck_assert_int_eq(flaky_pyscan_buffer(src, strlen(src), &r, err,
	    sizeof err), 0);
	ck_assert_msg(!r->skipped, "skipped: %s", r->reason);
	return r;
}

/* The findings as "line category class function test" lines. */
static char *
rows(const char *src)
{
	struct flaky_scan_result *r = scan(src);
	struct flaky_buf b;

	flaky_buf_init(&b);
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct flaky_finding *f = &r->findings[i];

		flaky_buf_printf(&b, "%d %s %s %s %s\n", f->line,
		    flaky_finding_category_name(f->category),
		    *f->classes ? f->classes : "-",
		    *f->function ? f->function : "-",
		    *f->test ? f->test : "-");
	}
	flaky_scan_result_free(r);
	flaky_buf_cstr(&b);
	return flaky_buf_steal(&b);
}

#define ck_rows(src, want) do {						\
	char *got_ = rows(src);						\
	ck_assert_str_eq(got_, want);					\
	free(got_);							\
} while (0)

#define ck_tokens(src, want) do {					\
	char *got_ = tokens(src);					\
	ck_assert_str_eq(got_, want);					\
	free(got_);							\
} while (0)

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

START_TEST(rule_comparison)
{
	ck_rows("def test_a():\n"
	    "    assert x < 1\n"
	    "    assert x == 1, 'x < 1 only in the message'\n"
	    "    assert 0 <= x <= 1 and y >= 2\n"
	    "    assert (x\n"
	    "            > 1)\n"
	    "    assert [v for v in x if v > 0]\n"
	    "    assert x >> 1 and x << 1 and x != 2\n"
	    "    assert f'{x > 1}'\n"
	    "    if x: assert x > 0; assert x < 9\n",
	    "2 comparison - test_a test_a\n"
	    "4 comparison - test_a test_a\n"
	    "5 comparison - test_a test_a\n"
	    "7 comparison - test_a test_a\n"
	    "9 comparison - test_a test_a\n"
	    "10 comparison - test_a test_a\n"
	    "10 comparison - test_a test_a\n");
}
END_TEST

START_TEST(rule_unittest)
{
	ck_rows("class T(unittest.TestCase):\n"
	    "    def test_a(self):\n"
	    "        self.assertAlmostEqual(a, b, places=3)\n"
	    "        self.assertGreater(a, b)\n"
	    "        self.assertEqual(a, b)\n"
	    "        assertLess(a, b)\n"
	    "        self.assertNotAlmostEquals(a, b)\n",
	    "3 unittest T test_a test_a\n"
	    "4 unittest T test_a test_a\n"
	    "7 unittest T test_a test_a\n");
}
END_TEST

START_TEST(rule_torch_numpy)
{
	ck_rows("def test_t():\n"
	    "    torch.testing.assert_close(a, b)\n"
	    "    torch.testing.assert_allclose(a, b)\n"
	    "    assert_close(a, b)\n"
	    "    np.testing.assert_allclose(a, b)\n"
	    "    npt.assert_array_less(a, b)\n"
	    "    assert_almost_equal(a, b)\n"
	    "    x.y().assert_array_max_ulp(a)\n"
	    "    np.testing.assert_equal(a, b)\n"
	    "    torchx.assert_close(a, b)\n"
	    "    (np.testing\n"
	    "       .assert_allclose)(a, b)\n"
	    "    np.testing.assert_allclose \\\n"
	    "        (a, b)\n",
	    "2 torch - test_t test_t\n"
	    "3 torch - test_t test_t\n"
	    "4 torch - test_t test_t\n"
	    "5 numpy - test_t test_t\n"
	    "6 numpy - test_t test_t\n"
	    "7 numpy - test_t test_t\n"
	    "8 numpy - test_t test_t\n"
	    "11 numpy - test_t test_t\n"
	    "13 numpy - test_t test_t\n");
}
END_TEST

START_TEST(rule_approx)
{
	ck_rows("def test_p():\n"
	    "    assert x == pytest.approx(1)\n"
	    "    assert np.allclose(a, b), np.isclose(a, b)\n"
	    "    y = math.isclose(a, b)\n"
	    "    assert all(map(lambda v: torch.allclose(v, 1), xs))\n"
	    "    assert np.testing.assert_allclose(a, b) is None\n"
	    "    assert approx(1) == 1 < 2\n",
	    "2 approx - test_p test_p\n"
	    "3 approx - test_p test_p\n"
	    "5 approx - test_p test_p\n"
	    "6 numpy - test_p test_p\n"
	    "7 approx - test_p test_p\n"
	    "7 comparison - test_p test_p\n");
}
END_TEST

START_TEST(scopes)
{
	/* Classes outermost first, the innermost def also across a class,
	 * the test is the nearest def named test*; decorators, defaults and
	 * bases belong to the outer scope. */
	ck_rows("@mark(np.testing.assert_allclose(1, 1))\n"
	    "def test_outer(a=assert_allclose(1, 1)):\n"
	    "    class Local(Base):\n"
	    "        def helper(self):\n"
	    "            assert x < 1\n"
	    "    def inner():\n"
	    "        assert x < 2\n"
	    "class A:\n"
	    "    class B:\n"
	    "        async def test_b(self):\n"
	    "            assert x < 3\n"
	    "        x = assert_allclose(1, 1)\n"
	    "    def test_c(self): assert x > 4\n"
	    "assert x < 5\n",
	    "1 numpy - - -\n"
	    "2 numpy - - -\n"
	    "5 comparison Local helper test_outer\n"
	    "7 comparison - inner test_outer\n"
	    "11 comparison A.B test_b test_b\n"
	    "12 numpy A.B - -\n"
	    "13 comparison A test_c test_c\n"
	    "14 comparison - - -\n");
}
END_TEST

START_TEST(tolerance_and_source)
{
	struct flaky_scan_result *r = scan(
	    "def test_a(self):\n"
	    "    np.testing.assert_allclose(a, b, rtol=1e-6,\n"
	    "        atol = 0)\n"
	    "    assert_almost_equal(a, b, 6)\n"
	    "    self.assertAlmostEqual(a, b, 3, 'msg', delta=0.5)\n"
	    "    assert x == pytest.approx(1, 1e-3, abs=1e-9)\n"
	    "    assert x < 1\n");

	ck_assert_uint_eq(r->nfindings, 5);
	ck_assert_str_eq(r->findings[0].tolerance, "rtol=1e-6, atol=0");
	ck_assert_str_eq(r->findings[0].source,
	    "np.testing.assert_allclose(a, b, rtol=1e-6,");
	ck_assert_str_eq(r->findings[1].tolerance, "decimal=6");
	ck_assert_str_eq(r->findings[2].tolerance, "places=3, delta=0.5");
	ck_assert_str_eq(r->findings[3].tolerance, "rel=1e-3, abs=1e-9");
	ck_assert_str_eq(r->findings[4].tolerance, "");
	ck_assert_str_eq(r->findings[4].source, "assert x < 1");
	flaky_scan_result_free(r);
}
END_TEST

/* The seeded flag of the test named name. */
static int
seeded(const struct flaky_scan_result *r, const char *name)
{
	for (size_t i = 0; i < r->ntests; i++)
		if (strcmp(r->tests[i].name, name) == 0)
			return r->tests[i].seeded;
	ck_abort_msg("no test %s", name);
	return -1;
}

START_TEST(seeding)
{
	struct flaky_scan_result *r = scan(
	    "@pytest.fixture\n"
	    "def rng():\n"
	    "    return np.random.default_rng(0)\n"
	    "@pytest.fixture\n"
	    "def loose():\n"
	    "    return np.random.default_rng()\n"
	    "@pytest.fixture\n"
	    "def wrapped(rng):\n"
	    "    return rng\n"
	    "def test_self():\n"
	    "    np.random.seed(1)\n"
	    "    assert x < 1\n"
	    "def test_fixture(rng):\n"
	    "    assert x < 1\n"
	    "def test_fixture_chain(wrapped):\n"
	    "    pass\n"
	    "def test_loose(loose):\n"
	    "    assert x < 1\n"
	    "def test_kwarg():\n"
	    "    m = Model(random_state=42)\n"
	    "def test_kwarg_none():\n"
	    "    m = Model(random_state=None)\n"
	    "def test_torch():\n"
	    "    torch.manual_seed(0)\n"
	    "def test_tf():\n"
	    "    tf.random.set_seed(0)\n"
	    "def test_rs():\n"
	    "    r = RandomState(None)\n"
	    "class TestCls(unittest.TestCase):\n"
	    "    def setUp(self):\n"
	    "        random.seed(3)\n"
	    "    def test_m(self):\n"
	    "        self.assertLess(a, b)\n"
	    "class TestAuto:\n"
	    "    @pytest.fixture(autouse=True)\n"
	    "    def _seed(self):\n"
	    "        np.random.seed(0)\n"
	    "    def test_n(self):\n"
	    "        pass\n"
	    "class TestNone:\n"
	    "    def test_o(self):\n"
	    "        pass\n");

	ck_assert_int_eq(r->module_seeded, 0);
	ck_assert_uint_eq(r->ntests, 12);
	ck_assert_int_eq(seeded(r, "test_self"), 1);
	ck_assert_int_eq(seeded(r, "test_fixture"), 1);
	ck_assert_int_eq(seeded(r, "test_fixture_chain"), 1);
	ck_assert_int_eq(seeded(r, "test_loose"), 0);
	ck_assert_int_eq(seeded(r, "test_kwarg"), 1);
	ck_assert_int_eq(seeded(r, "test_kwarg_none"), 0);
	ck_assert_int_eq(seeded(r, "test_torch"), 1);
	ck_assert_int_eq(seeded(r, "test_tf"), 1);
	ck_assert_int_eq(seeded(r, "test_rs"), 0);
	ck_assert_int_eq(seeded(r, "test_m"), 1);
	ck_assert_int_eq(seeded(r, "test_n"), 1);
	ck_assert_int_eq(seeded(r, "test_o"), 0);
	/* Findings carry their test's flag. */
	ck_assert_int_eq(r->findings[0].line, 12);
	ck_assert_int_eq(r->findings[0].seeded, 1);
	ck_assert_int_eq(r->findings[2].line, 18);
	ck_assert_int_eq(r->findings[2].seeded, 0);
	ck_assert_int_eq(r->tests[r->findings[2].test_index].nfindings, 1);
	flaky_scan_result_free(r);

	/* Module-level code seeds every test in the file. */
	r = scan("import numpy as np\nnp.random.seed(0)\n"
	    "def test_a():\n    assert x < 1\n");
	ck_assert_int_eq(r->module_seeded, 1);
	ck_assert_int_eq(seeded(r, "test_a"), 1);
	ck_assert_int_eq(r->findings[0].seeded, 1);
	flaky_scan_result_free(r);
}
END_TEST

START_TEST(files_and_walk)
{
	char	 dir[] = "/tmp/test_pyscan.XXXXXX", path[256], err[256];
	char	**paths = NULL;
	size_t	  npaths = 0;
	struct flaky_scan_result *r;
	static const char *const files[] = { "b.py", "a.py", "sub/c.py",
	    "sub/d.txt", "A.py" };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/sub", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	/* An empty directory, alone and inside the tree (UBSan once saw
	 * qsort called with NULL for it). */
	ck_assert_int_eq(flaky_pyscan_paths(path, &paths, &npaths, NULL, NULL,
	    err, sizeof err), 0);
	ck_assert_uint_eq(npaths, 0);
	flaky_pyscan_paths_free(paths, npaths);
	paths = NULL;
	snprintf(path, sizeof path, "%s/empty", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(files); i++) {
		FILE	*f;

		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		ck_assert_ptr_nonnull(f = fopen(path, "w"));
		fputs("def test_x():\n    assert x < 1\n", f);
		fclose(f);
	}
	ck_assert_int_eq(flaky_pyscan_paths(dir, &paths, &npaths, NULL, NULL,
	    err, sizeof err), 0);
	ck_assert_uint_eq(npaths, 4);
	snprintf(path, sizeof path, "%s/A.py", dir);
	ck_assert_str_eq(paths[0], path);
	snprintf(path, sizeof path, "%s/a.py", dir);
	ck_assert_str_eq(paths[1], path);
	snprintf(path, sizeof path, "%s/sub/c.py", dir);
	ck_assert_str_eq(paths[3], path);

	ck_assert_int_eq(flaky_pyscan_file(paths[3], &r, err, sizeof err), 0);
	ck_assert_uint_eq(r->nfindings, 1);
	ck_assert_int_eq(r->findings[0].line, 2);
	flaky_scan_result_free(r);
	flaky_pyscan_paths_free(paths, npaths);

	snprintf(path, sizeof path, "%s/missing.py", dir);
	ck_assert_int_eq(flaky_pyscan_file(path, &r, err, sizeof err),
	    -ENOENT);
	ck_assert_ptr_null(r);
	ck_assert_ptr_nonnull(strstr(err, "missing.py"));
	paths = NULL;
	npaths = 0;
	ck_assert_int_eq(flaky_pyscan_paths(path, &paths, &npaths, NULL, NULL,
	    err, sizeof err), -ENOENT);
	/* A FIFO is refused at once, not waited on. */
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(flaky_pyscan_file(path, &r, err, sizeof err),
	    -EINVAL);
	ck_assert_str_eq(strstr(err, "missing.py"), "missing.py: not a regular "
	    "file");
	unlink(path);

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof path, "%s/sub", dir);
	rmdir(path);
	snprintf(path, sizeof path, "%s/empty", dir);
	rmdir(path);
	ck_assert_int_eq(rmdir(dir), 0);
	flaky_scan_result_free(NULL);
	flaky_pyscan_paths_free(NULL, 0);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("pyscan");
	TCase	*tc = tcase_create("pyscan");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, tok_basic);
	tcase_add_test(tc, tok_strings);
	tcase_add_test(tc, tok_fstrings);
	tcase_add_test(tc, tok_lines);
	tcase_add_test(tc, tok_invalid);
	tcase_add_test(tc, rule_comparison);
	tcase_add_test(tc, rule_unittest);
	tcase_add_test(tc, rule_torch_numpy);
	tcase_add_test(tc, rule_approx);
	tcase_add_test(tc, scopes);
	tcase_add_test(tc, tolerance_and_source);
	tcase_add_test(tc, seeding);
	tcase_add_test(tc, files_and_walk);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
