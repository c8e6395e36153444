/* python -m unittest -v output -> results.
 *
 * A verbose run prints "test_b (pkg.mod.TestA.test_b) ... ok" per test
 * (Python 3.11; older ones print "(pkg.mod.TestA)"), but the line breaks
 * easily: a docstring's first line comes before " ... ", the test's own
 * output may sit between " ... " and the status, and failing subtests print
 * their own indented lines with no status for the parent. So a test stays
 * pending until its status shows up. The "FAIL:" / "ERROR:" blocks after the
 * run give the messages, and name tests a non-verbose run never named. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

#define SEP_LEN		70	/* unittest's "=====" and "-----" rules */

enum block_kind { B_NONE, B_FAIL, B_ERROR, B_XPASS };

struct unittest {
	struct flaky_buf clean;		/* the line without ANSI colours */

	/* The test whose status has not come yet. */
	int		 pending;
	int		 pend_doc;	/* its docstring line comes next */
	int		 pend_doctest;	/* and must be "Doctest: ..." */
	int		 pend_sub;	/* worst outcome of its subtests, -1 */
	struct flaky_buf pend_id;
	/* The result whose status was read glued to the test's output. */
	long		 soft;

	/* The "FAIL: ..." block being read. */
	enum block_kind	 block;
	int		 body;		/* past its "-----" rule */
	int		 in_tb, in_exc, stdio;
	int		 report;	/* in a doctest's report, past its rule */
	struct flaky_buf bid, bsub, bfile, bexc;
	/* The last line no test took: a doctest file's path, perhaps. */
	struct flaky_buf prev;

	struct parse_ids ids;		/* so that blocks find their test */

	unsigned	 nran;		/* "Ran N tests" lines */
	size_t		 nverbose;	/* -v lines that named a test */
};

/* unittest's 70-character rule of c, which frames its blocks. */
static int
is_rule(const char *s, size_t n, char c)
{
	if (n != SEP_LEN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] != c)
			return 0;
	return 1;
}

/*
 * "name (dotted.id)[ sub] ... rest": *idn gets the end of the name, *da and
 * *db the bounds of the dotted part, *after the position after ")". 0 when
 * s does not start with that shape.
 */
static int
test_head(const char *s, size_t n, size_t *idn, size_t *da, size_t *db,
    size_t *after)
{
	size_t	 i = 0, d;
	int	 dot = 0, ident = 1;

	while (i < n && s[i] != ' ' && s[i] != '(' && s[i] != ')')
		i++;
	if (i == 0 || i + 2 >= n || s[i] != ' ' || s[i + 1] != '(')
		return 0;
	*idn = i;
	d = i + 2;
	for (i = d; i < n && s[i] != ')'; i++) {
		if (s[i] == ' ' || s[i] == '(')
			return 0;
		if (s[i] == '.')
			dot = 1;
		else if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' &&
		    s[i] <= '9') || (unsigned char)s[i] >= 0x80))
			ident = 0;
	}
	if (!dot && !ident)
		return 0;
	if (i == n || i == d || s[d] == '.' || s[i - 1] == '.')
		return 0;
	*da = d;
	*db = i;
	*after = i + 1;
	/* "add (calc)": a doctest of a top-level module, when a line
	 * "Doctest: calc.add ... ok" follows (the caller checks) */
	return dot ? 1 : 2;
}

/* "Ran 12 tests in 0.003s" */
static int
is_ran(const char *s, size_t n)
{
	size_t	 i = 4;

	if (!parse_starts(s, n, "Ran "))
		return 0;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	return i > 4 && (parse_starts(s + i, n - i, " tests in ") ||
	    parse_starts(s + i, n - i, " test in "));
}

/* The test id: "pkg.mod.TestA.test_b" from either Python's form. In
 * 3.11's, the parentheses hold the id, which ends with "." and the name,
 * a name with dots too: a module that failed to import is "pkg.test_x
 * (unittest.loader._FailedTest.pkg.test_x)". */
static int
make_id(struct flaky_buf *b, const char *s, size_t idn, size_t da, size_t db)
{
	flaky_buf_reset(b);
	flaky_buf_add(b, s + da, db - da);
	if (db - da <= idn || s[db - idn - 1] != '.' ||
	    memcmp(s + db - idn, s, idn) != 0) {
		/* Python < 3.11: "(pkg.mod.TestA)" names only the class. */
		flaky_buf_addc(b, '.');
		flaky_buf_add(b, s, idn);
	}
	return b->oom ? -ENOMEM : 0;
}

/*
 * The status that ends s: "ok", "FAIL", "ERROR", "skipped 'why'",
 * "expected failure", "unexpected success". Returns the outcome or -1;
 * *pos gets where the status starts (0 when s is the status alone).
 */
static int
status_end(const char *s, size_t n, size_t *pos)
{
	static const struct {
		const char	*w;
		int		 o;
	} st[] = {
		{ "ok", FLAKY_PASS }, { "FAIL", FLAKY_FAIL },
		{ "ERROR", FLAKY_ERROR }, { "expected failure", FLAKY_XFAIL },
		{ "unexpected success", FLAKY_XPASS },
	};
	const char	*p;

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(st); i++) {
		size_t	 l = strlen(st[i].w);

		if (n >= l && memcmp(s + n - l, st[i].w, l) == 0) {
			*pos = n - l;
			return st[i].o;
		}
	}
	/* skipped 'reason' or skipped "reason" (repr picks the quote) */
	if (n < 10 || (s[n - 1] != '\'' && s[n - 1] != '"'))
		return -1;
	for (p = s; (p = memmem(p, n - (size_t)(p - s), "skipped ", 8)) !=
	    NULL; p++)
		if ((size_t)(p - s) + 9 < n && p[8] == s[n - 1]) {
			*pos = (size_t)(p - s);
			return FLAKY_SKIP;
		}
	return -1;
}

/* The last result with this id (s holds no NUL), -1 if none. */
static long
lookup(struct parse_ctx *ctx, struct unittest *st, const char *s, size_t n)
{
	size_t	 pos = 0;
	long	 i, best = -1;

	while ((i = parse_ids_next(&st->ids, ctx->res, s, n, &pos)) >= 0)
		if (i > best)
			best = i;
	return best;
}

/* Append a result and index it; its index or -ENOMEM. */
static long
add(struct parse_ctx *ctx, struct unittest *st, const char *id, size_t n,
    int outcome, int soft)
{
	long	 idx;
	int	 e;

	if ((idx = parse_add(ctx, id, n, outcome, -1)) < 0)
		return idx;
	if ((e = parse_ids_add(&st->ids, ctx->res, (size_t)idx)) < 0)
		return e;
	st->soft = soft ? idx : -1;
	return idx;
}

/* The pending test's status came (or never will: o < 0). */
static int
resolve(struct parse_ctx *ctx, struct unittest *st, int o, int soft)
{
	long	 idx;

	if (!st->pending)
		return 0;
	st->pending = 0;
	st->pend_doc = 0;
	/* Failing subtests print no status for their parent. */
	if (st->pend_sub >= 0 && (o < 0 || o == FLAKY_PASS))
		o = st->pend_sub;
	if (o < 0)
		return 0;
	idx = add(ctx, st, st->pend_id.data, st->pend_id.len, o, soft);
	return idx < 0 ? (int)idx : 0;
}

/* What follows " ... ": the status, output then the status, or output. */
static int
rest_of(struct parse_ctx *ctx, struct unittest *st, const char *s, size_t n)
{
	size_t	 pos;
	int	 o;

	while (n > 0 && s[n - 1] == ' ')
		n--;
	if ((o = status_end(s, n, &pos)) >= 0)
		return resolve(ctx, st, o, pos > 0);
	return 0;
}

/* The decisive part of a finished block goes to its test. */
static int
end_block(struct parse_ctx *ctx, struct unittest *st)
{
	struct flaky_buf	 m;
	long			 idx;
	int			 o, e = 0;

	if (st->block == B_NONE)
		return 0;
	o = st->block == B_FAIL ? FLAKY_FAIL : st->block == B_ERROR ?
	    FLAKY_ERROR : FLAKY_XPASS;
	st->block = B_NONE;
	/* An id is kept up to a NUL (parse_add copies a C string). */
	if (st->bid.len > 0)
		st->bid.len = strnlen(st->bid.data, st->bid.len);
	if (st->bid.len == 0)
		return 0;
	if ((idx = lookup(ctx, st, st->bid.data, st->bid.len)) < 0) {
		/* Not named before: a quiet run, or setUpClass failing. */
		if ((idx = add(ctx, st, st->bid.data, st->bid.len, o, 0)) < 0)
			return (int)idx;
	} else if (FLAKY_FAILED(o) && !FLAKY_FAILED(ctx->res->v[idx].outcome))
		ctx->res->v[idx].outcome = o;
	while (st->bexc.len > 0 && st->bexc.data[st->bexc.len - 1] == '\n')
		st->bexc.data[--st->bexc.len] = '\0';
	flaky_buf_init(&m);
	if (st->bsub.len > 0) {
		flaky_buf_add(&m, st->bsub.data, st->bsub.len);
		flaky_buf_adds(&m, ": ");
	}
	if (st->bexc.len > 0)
		flaky_buf_add(&m, st->bexc.data, st->bexc.len);
	if (st->bfile.len > 0) {
		if (st->bexc.len > 0)
			flaky_buf_addc(&m, '\n');
		flaky_buf_add(&m, st->bfile.data, st->bfile.len);
	}
	if (m.oom)
		e = -ENOMEM;
	else if (m.len > 0 && st->bexc.len + st->bfile.len > 0)
		e = parse_message(ctx, idx, m.data, m.len);
	flaky_buf_free(&m);
	return e;
}

/* A doctest file's test (DocFileSuite): unittest prints its path, then
 * "Doctest: NAME ... ok", NAME the path's last part, and its id() is
 * NAME with "_" for ".". s is what follows "Doctest: ", prev the line
 * before. 1 when it is one, its id in b; -ENOMEM. */
static int
docfile_id(struct flaky_buf *b, const struct flaky_buf *prev, const char *s,
    size_t n)
{
	const char *e = memmem(s, n, " ...", 4);
	size_t	 nl = e != NULL ? (size_t)(e - s) : n;

	if (nl == 0 || prev->len < nl || memcmp(prev->data + prev->len - nl,
	    s, nl) != 0 || (prev->len > nl && prev->data[prev->len - nl -
	    1] != '/'))
		return 0;
	flaky_buf_reset(b);
	for (size_t i = 0; i < nl; i++)
		flaky_buf_addc(b, s[i] == '.' ? '_' : s[i]);
	return b->oom ? -ENOMEM : 1;
}

/* "FAIL: test_b (pkg.mod.TestA.test_b) (i=1)" starts a block. */
static int
block_head(struct unittest *st, const char *s, size_t n)
{
	static const struct {
		const char	*w;
		enum block_kind	 k;
	} heads[] = {
		{ "FAIL: ", B_FAIL }, { "ERROR: ", B_ERROR },
		{ "UNEXPECTED SUCCESS: ", B_XPASS },
	};
	size_t	 idn, da, db, after, l = 0;
	enum block_kind k = B_NONE;

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(heads); i++)
		if (parse_starts(s, n, heads[i].w)) {
			l = strlen(heads[i].w);
			k = heads[i].k;
		}
	if (k == B_NONE)
		return 0;
	st->block = k;
	st->body = st->in_tb = st->in_exc = st->stdio = st->report = 0;
	flaky_buf_reset(&st->bid);
	flaky_buf_reset(&st->bsub);
	flaky_buf_reset(&st->bfile);
	flaky_buf_reset(&st->bexc);
	s += l;
	n -= l;
	if (!test_head(s, n, &idn, &da, &db, &after)) {
		/* a doctest file's path: its "Doctest:" line comes next */
		flaky_buf_reset(&st->prev);
		flaky_buf_add(&st->prev, s, n);
		return st->prev.oom ? -ENOMEM : 1;
	}
	if (make_id(&st->bid, s, idn, da, db) < 0)
		return -ENOMEM;
	while (after < n && s[after] == ' ')
		after++;
	flaky_buf_add(&st->bsub, s + after, n - after < 1024 ? n - after :
	    1024);
	return st->bsub.oom ? -ENOMEM : 1;
}

/* A line of a block's traceback: keep the last frame and the exception. */
static int
block_line(struct unittest *st, const char *s, size_t n)
{
	if (parse_starts(s, n, "Traceback (most recent call last):")) {
		st->in_tb = 1;
		st->in_exc = 0;
		st->stdio = 0;
		flaky_buf_reset(&st->bexc);
		return 0;
	}
	if (!st->in_tb || st->stdio)
		return 0;
	if (!st->in_exc && n > 0 && s[0] == ' ') {
		if (parse_starts(s, n, "  File \"")) {
			flaky_buf_reset(&st->bfile);
			flaky_buf_add(&st->bfile, s + 2, n - 2 < 1024 ?
			    n - 2 : 1024);
		}
		return st->bfile.oom ? -ENOMEM : 0;
	}
	/* -b adds the captured output after the exception. */
	if ((n == 7 && memcmp(s, "Stdout:", 7) == 0) ||
	    (n == 7 && memcmp(s, "Stderr:", 7) == 0)) {
		st->stdio = 1;
		return 0;
	}
	st->in_exc = 1;
	if (st->bexc.len + n + 1 > FLAKY_MESSAGE_MAX)
		return 0;
	flaky_buf_add(&st->bexc, s, n);
	flaky_buf_addc(&st->bexc, '\n');
	return st->bexc.oom ? -ENOMEM : 0;
}

/* One line of unittest output: a rule, a block, a test line or output. */
static int
line(struct parse_ctx *ctx, const char *s, size_t n)
{
	struct unittest	*st = ctx->state;
	size_t		 idn, da, db, after, pos;
	const char	*p;
	int		 o, e, sub, head;

	if ((e = parse_strip_colour(&st->clean, &s, &n)) < 0)
		return e;
	if (is_rule(s, n, '=')) {
		st->soft = -1;
		if ((e = resolve(ctx, st, -1, 0)) < 0 ||
		    (e = end_block(ctx, st)) < 0)
			return e;
		st->block = B_NONE;
		st->body = 0;
		return 0;
	}
	if (is_ran(s, n)) {
		long	 v = 0;

		if ((e = resolve(ctx, st, -1, 0)) < 0 ||
		    (e = end_block(ctx, st)) < 0)
			return e;
		for (size_t i = 4; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			if (v < 100000000)
				v = v * 10 + (s[i] - '0');
		/* Runs in one output ("unittest a; unittest b") add up. */
		ctx->res->summary_total = st->nran++ > 0 ?
		    ctx->res->summary_total + v : v;
		return 0;
	}
	if (st->block != B_NONE) {
		if (!st->body) {
			if (is_rule(s, n, '-'))
				st->body = 1;
			else if (st->bid.len == 0 && parse_starts(s, n,
			    "Doctest: ") && (e = docfile_id(&st->bid,
			    &st->prev, s + 9, n - 9)) < 0)
				return e;
			return 0;
		}
		if (is_rule(s, n, '-')) {
			/* a doctest's report (the example, what was
			 * expected, what came) follows a rule of its own */
			if (!st->report && parse_starts(st->bexc.data,
			    st->bexc.len, "AssertionError: Failed doctest "
			    "test for ")) {
				st->report = 1;
				return 0;
			}
			return end_block(ctx, st);
		}
		return block_line(st, s, n);
	}
	if ((e = block_head(st, s, n)) != 0) {
		if (e < 0)
			return e;
		return resolve(ctx, st, -1, 0);
	}
	sub = parse_starts(s, n, "  ");
	if ((head = test_head(s + 2 * sub, n - 2 * sub, &idn, &da, &db,
	    &after)) != 0 && (head == 1 || (!sub &&
	    after == n && !st->pending))) {
		const char	*t = s + 2 * sub;
		size_t		 tn = n - 2 * sub;

		if (sub) {
			/* A subtest: counts against the pending parent. */
			if (!st->pending)
				return 0;
			if ((p = memmem(t + after, tn - after, " ... ", 5)) ==
			    NULL)
				return 0;
			p += 5;
			tn -= (size_t)(p - t);
			while (tn > 0 && p[tn - 1] == ' ')
				tn--;
			o = status_end(p, tn, &pos);
			if (FLAKY_FAILED(o) && (st->pend_sub < 0 ||
			    o == FLAKY_ERROR))
				st->pend_sub = o;
			return 0;
		}
		if ((e = resolve(ctx, st, -1, 0)) < 0)
			return e;
		st->soft = -1;
		if (make_id(&st->pend_id, t, idn, da, db) < 0)
			return -ENOMEM;
		st->nverbose++;
		st->pending = 1;
		st->pend_sub = -1;
		st->pend_doc = 0;
		st->pend_doctest = head == 2;
		if (after == tn) {
			/* The docstring's first line and the status follow. */
			st->pend_doc = 1;
			return 0;
		}
		if ((p = memmem(t + after, tn - after, " ...", 4)) == NULL) {
			st->pending = 0;
			return 0;
		}
		p += 4;
		if (p < t + tn && *p == ' ')
			p++;
		return rest_of(ctx, st, p, tn - (size_t)(p - t));
	}
	if (!st->pending && parse_starts(s, n, "Doctest: ") &&
	    (p = memmem(s, n, " ...", 4)) != NULL) {
		if ((e = docfile_id(&st->pend_id, &st->prev, s + 9, n - 9)) < 0)
			return e;
		if (e > 0) {
			st->soft = -1;
			st->nverbose++;
			st->pending = 1;
			st->pend_sub = -1;
			st->pend_doc = st->pend_doctest = 0;
			p += 4;
			if (p < s + n && *p == ' ')
				p++;
			return rest_of(ctx, st, p, n - (size_t)(p - s));
		}
	}
	if (!st->pending) {
		flaky_buf_reset(&st->prev);
		if (n <= 4096)
			flaky_buf_add(&st->prev, s, n);
		if (st->prev.oom)
			return -ENOMEM;
		/* A bare status corrects one read from the test's output. */
		while (n > 0 && s[n - 1] == ' ')
			n--;
		if (st->soft >= 0 && (o = status_end(s, n, &pos)) >= 0 &&
		    pos == 0) {
			ctx->res->v[st->soft].outcome = o;
			st->soft = -1;
		}
		return 0;
	}
	if (st->pend_doctest) {
		/* not a doctest after all: an ordinary line */
		st->pend_doctest = 0;
		if (!parse_starts(s, n, "Doctest: ")) {
			st->pending = 0;
			st->nverbose--;
			return line(ctx, s, n);
		}
	}
	if (st->pend_doc) {
		st->pend_doc = 0;
		/* The docstring's last " ... " is unittest's. */
		for (p = NULL, pos = 0; pos + 5 <= n; pos++)
			if (memcmp(s + pos, " ... ", 5) == 0)
				p = s + pos + 5;
		if (p == NULL && n >= 4 && memcmp(s + n - 4, " ...", 4) == 0)
			return 0;
		if (p != NULL)
			return rest_of(ctx, st, p, n - (size_t)(p - s));
	}
	return rest_of(ctx, st, s, n);
}

/* A class's or module's fixture that failed ("setUpClass (m.T)"): a
 * result of ours that "Ran N tests" does not count. */
static int
is_fixture(const char *id)
{
	static const char *const names[] = {
		".setUpClass", ".tearDownClass", ".setUpModule",
		".tearDownModule",
	};
	size_t	 n = strlen(id);

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(names); i++) {
		size_t	 l = strlen(names[i]);

		if (n > l && memcmp(id + n - l, names[i], l) == 0)
			return 1;
	}
	return 0;
}

/* Do the results hold every test "Ran N tests" counted? It counts skips,
 * expected failures and a test with subtests once. */
static int
completeness(struct parse_ctx *ctx, struct unittest *st)
{
	struct flaky_results	*r = ctx->res;
	size_t			 have = 0;

	if (st->nran == 0)
		return parse_incomplete(ctx, "the run ended without "
		    "unittest's summary line (Ran N tests): it was killed or "
		    "stopped early");
	for (size_t i = 0; i < r->n; i++)
		have += !is_fixture(r->v[i].test);
	if ((long)have == r->summary_total)
		return 0;
	if (st->nverbose == 0 && (long)have < r->summary_total)
		return parse_incomplete(ctx, "unittest printed only failing "
		    "tests (%ld in its summary, %zu parsed): run it with -v",
		    r->summary_total, have);
	return parse_incomplete(ctx, "unittest's summary counts %ld tests, "
	    "%zu were parsed: the tests' own output broke its lines; run it "
	    "with -v -b", r->summary_total, have);
}

/* End of output: the last block and a test still waiting. */
static int
finish(struct parse_ctx *ctx)
{
	struct unittest	*st = ctx->state;
	int		 e;

	if ((e = end_block(ctx, st)) < 0)
		return e;
	/* "word (word)" last, with no "Doctest:" line after it: no test */
	if (st->pending && st->pend_doctest) {
		st->pending = 0;
		st->nverbose--;
	}
	if (st->pending && st->pend_sub < 0) {
		/* The run died while this test ran: that is its outcome. */
		static const char died[] = "no outcome: the output ended "
		    "while this test ran (killed or crashed)";

		if ((e = resolve(ctx, st, FLAKY_ERROR, 0)) < 0)
			return e;
		if ((e = parse_message(ctx, (long)ctx->res->n - 1, died,
		    sizeof died - 1)) < 0)
			return e;
	} else if ((e = resolve(ctx, st, -1, 0)) < 0)
		return e;
	return completeness(ctx, st);
}

/* The state of one unittest output. */
static int
init(struct parse_ctx *ctx)
{
	struct unittest	*st;

	if ((st = calloc(1, sizeof *st)) == NULL)
		return -ENOMEM;
	st->soft = -1;
	st->pend_sub = -1;
	ctx->state = st;
	return 0;
}

/* Free the state; the results belong to the parser. */
static void
state_free(struct parse_ctx *ctx)
{
	struct unittest	*st = ctx->state;

	if (st == NULL)
		return;
	flaky_buf_free(&st->clean);
	flaky_buf_free(&st->pend_id);
	flaky_buf_free(&st->bid);
	flaky_buf_free(&st->bsub);
	flaky_buf_free(&st->bfile);
	flaky_buf_free(&st->bexc);
	flaky_buf_free(&st->prev);
	parse_ids_free(&st->ids);
	free(st);
	ctx->state = NULL;
}

/* 2 for a verbose status line or "Ran N tests in", 1 for the rules and
 * block heads unittest prints. */
static int
detect(const char *s, size_t n)
{
	size_t	 idn, da, db, after, pos;
	const char	*p;

	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\r'))
		n--;
	if (is_ran(s, n))
		return 2;
	if (test_head(s, n, &idn, &da, &db, &after) &&
	    (p = memmem(s + after, n - after, " ... ", 5)) != NULL) {
		p += 5;
		if (status_end(p, n - (size_t)(p - s), &pos) >= 0 && pos == 0)
			return 2;
		return 1;
	}
	if (is_rule(s, n, '='))
		return 1;
	if ((parse_starts(s, n, "FAIL: ") &&
	    test_head(s + 6, n - 6, &idn, &da, &db, &after)) ||
	    (parse_starts(s, n, "ERROR: ") &&
	    test_head(s + 7, n - 7, &idn, &da, &db, &after)))
		return 1;
	return 0;
}

const struct runner runner_unittest = {
	.name = "unittest",
	.detect = detect,
	.init = init,
	.line = line,
	.finish = finish,
	.free = state_free,
};
