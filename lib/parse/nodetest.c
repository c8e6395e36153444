/* node:test (Node 20's spec reporter) output -> results.
 *
 *	▶ cart				(a suite, or a test with subtests)
 *	  ✔ adds items (25.77ms)
 *	  ✖ pays (2.08ms)
 *	    AssertionError [ERR_ASSERTION]: Expected values ...
 *	        at TestContext.<anonymous> (/app/test/cart.test.js:18:14)
 *	  ﹣ refunds (0.10ms) # SKIP
 *	  ✔ later (0.08ms) # TODO
 *	✖ cart (32.57ms)		(its end, at its own indentation)
 *	ℹ tests 7
 *	ℹ suites 3
 *	...
 *	✖ failing tests:			(the failures again, with where)
 *	test at test/cart.test.js:17:5
 *	✖ pays (2.08ms)
 *
 * The id is the names from the outermost group down joined by " > ", as the
 * TAP parser names node's TAP reporter's points ("cart > pays"): a file is
 * in no name. The spec reporter prints a suite (describe) and a test with
 * subtests (t.test) alike; node counts the first among its suites, the
 * second among its tests. So when node counts no suite, every group is a
 * test and a result (as node and its TAP reporter count them); when it
 * counts some, the groups are not results (a suite's outcome is its
 * children's: a flaky test would make its suites look flaky too), but a
 * group that failed with none of its tests failing (a hook, an assertion
 * outside its subtests) is, as an error. A file that fails outside its
 * tests is a failed test named after the file (relative to the run's
 * directory). "# TODO" marks a todo test: xfail when it failed, xpass when
 * it passed. "test at file:line:col" of the failing tests' list is added
 * to its test's message. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

#define NAME_SEP	" > "		/* as the TAP parser joins names */

#define M_GROUP		"\xe2\x96\xb6 "		/* ▶ */
#define M_PASS		"\xe2\x9c\x94 "		/* ✔ */
#define M_FAIL		"\xe2\x9c\x96 "		/* ✖ */
#define M_SKIP		"\xef\xb9\xa3 "		/* ﹣ */
#define M_INFO		"\xe2\x84\xb9 "		/* ℹ */

enum nt_mode {
	N_TREE,		/* the tree of tests */
	N_FAILING,	/* "✖ failing tests:" to the end */
};

struct nt_state {
	struct flaky_buf	 clean;
	struct flaky_buf	 id;
	struct parse_tree	 tree;
	/* a failed test below each open group of the tree */
	unsigned char		 failed_below[PARSE_TREE_DEPTH];
	unsigned char		*group;		/* per result: G_* */
	size_t			 gcap;
	enum nt_mode		 mode;
	long			 last;		/* error lines go to it, -1 */
	size_t			 last_indent;
	int			 last_at;	/* its "at" line was kept */
	char			*where;		/* "test at file:1:2", held */
	unsigned		 ninfo;		/* "ℹ tests N" lines */
	long			 suites;	/* "ℹ suites N" */
	long			 counted;	/* tests + suites */
};
#define G_TEST		0		/* a test, not a group */
#define G_GROUP		1		/* a suite or a test with subtests */
#define G_OWN		2		/* a group that failed on its own */

/* The marker at s: its outcome (-1 for ▶), its length in *len; -2 when
 * there is none. */
static int
mark(const char *s, size_t n, size_t *len)
{
	static const struct {
		const char	*m;
		int		 outcome;
	} marks[] = {
		{ M_GROUP, -1 }, { M_PASS, FLAKY_PASS }, { M_FAIL, FLAKY_FAIL },
		{ M_SKIP, FLAKY_SKIP },
	};

	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(marks); k++)
		if (parse_starts(s, n, marks[k].m)) {
			*len = strlen(marks[k].m);
			return marks[k].outcome;
		}
	return -2;
}

/* "name (1.23ms)[ # comment]": the name's length, the duration, and
 * whether a comment follows; 0 when there is no duration. */
static size_t
name_dur(const char *s, size_t n, int64_t *us, int *comment)
{
	for (const char *p = s; (p = memmem(p, n - (size_t)(p - s), "ms)",
	    3)) != NULL; p += 3) {
		const char *q = p, *end = p + 3;

		while (q > s && ((q[-1] >= '0' && q[-1] <= '9') ||
		    q[-1] == '.'))
			q--;
		if (q == p || q - s < 2 || q[-1] != '(' || q[-2] != ' ')
			continue;
		if (end != s + n && !parse_starts(end, n - (size_t)(end - s),
		    " # "))
			continue;
		*us = parse_duration_us(q, (size_t)(p + 2 - q));
		*comment = end != s + n;
		return (size_t)(q - 2 - s);
	}
	return 0;
}

/* "ℹ tests 7": 't' and 7, "ℹ suites 3": 's'; else 0. */
static int
info_line(const char *s, size_t n, long *v)
{
	size_t	 i;
	int	 which;

	if (parse_starts(s, n, M_INFO "tests "))
		i = 4 + 6, which = 't';
	else if (parse_starts(s, n, M_INFO "suites "))
		i = 4 + 7, which = 's';
	else
		return 0;
	for (*v = 0; i < n && s[i] >= '0' && s[i] <= '9' && *v < 100000000L;
	    i++)
		*v = *v * 10 + (s[i] - '0');
	return i == n ? which : 0;
}

/* "ℹ tests N" is certain; "▶ name" and a test line with node's decimal
 * duration are maybes. */
static int
score(const char *s, size_t n)
{
	size_t	 i = parse_indent(s, n), k, nl;
	int64_t	 us;
	int	 c, o;
	long	 x;

	if (info_line(s, n, &x) == 't')
		return 2;
	return (o = mark(s + i, n - i, &k)) == -1 || (o >= 0 &&
	    (nl = name_dur(s + i + k, n - i - k, &us, &c)) > 0 &&
	    memchr(s + i + k + nl, '.', n - i - k - nl) != NULL);
}

/* node colours its spec on a terminal: scored without. */
static int
detect(const char *line, size_t len)
{
	return parse_detect_clean(line, len, score);
}

/* The state for one stream: no failed test for error lines yet. */
static int
init(struct parse_ctx *ctx)
{
	struct nt_state	*st = parse_state(ctx, sizeof *st);

	return st == NULL ? -ENOMEM : (st->last = -1, 0);
}

/* A test's (or a group's closing) line at indent: its result. */
static int
add_test(struct parse_ctx *ctx, struct nt_state *st, size_t indent,
    int outcome, const char *s, size_t n)
{
	int64_t	 us = -1;
	int	 comment = 0, g = G_TEST, d;
	size_t	 nl = name_dur(s, n, &us, &comment);
	long	 idx;

	if (nl == 0)
		nl = n;
	/* the end of the group "▶ name" opened at this indentation */
	d = st->tree.depth;
	if (d > 0 && st->tree.v[d - 1].indent == indent &&
	    strlen(st->tree.v[d - 1].title) == nl &&
	    memcmp(st->tree.v[d - 1].title, s, nl) == 0)
		g = outcome == FLAKY_FAIL && !st->failed_below[d - 1] ?
		    G_OWN : G_GROUP;
	/* "# TODO": a todo test; "# SKIP" and skip reasons come with ﹣ */
	if (comment && outcome == FLAKY_PASS)
		outcome = FLAKY_XPASS;
	else if (comment && outcome == FLAKY_FAIL)
		outcome = FLAKY_XFAIL;
	parse_tree_pop(&st->tree, indent);
	parse_tree_path(&st->tree, NAME_SEP, &st->id);
	if (indent == 0)
		parse_relative(ctx, &s, &nl);
	flaky_buf_add(&st->id, s, nl);
	parse_id_bound(&st->id, PARSE_ID_MAX);
	if (st->id.oom)
		return -ENOMEM;
	if ((idx = parse_add(ctx, st->id.data, st->id.len, outcome, us)) < 0)
		return (int)idx;
	if (flaky_array_grow(&st->group, &st->gcap, (size_t)idx, 1) < 0)
		return -ENOMEM;
	st->group[idx] = (unsigned char)g;
	for (d = 0; outcome == FLAKY_FAIL && d < st->tree.depth; d++)
		st->failed_below[d] = 1;
	st->last = outcome == FLAKY_FAIL ? idx : -1;
	st->last_indent = indent;
	st->last_at = 0;
	return 0;
}

/* The lines under a failed test: its error, up to the first "at" line
 * (kept); the rest of the stack and the error's properties are not. */
static int
error_line(struct parse_ctx *ctx, struct nt_state *st, const char *s,
    size_t n)
{
	size_t	 i = parse_indent(s, n);

	if (st->last < 0 || st->last_at)
		return 0;
	if (i < st->last_indent + 2) {
		if (i < n)
			st->last = -1;
		return 0;
	}
	if (parse_starts(s + i, n - i, "at ")) {
		st->last_at = 1;
		return parse_message(ctx, st->last, s + i, n - i);
	}
	i = st->last_indent + 2;
	return parse_message(ctx, st->last, s + i, n - i);
}

/* The failing tests' list: "test at file:1:2" before a test's line goes
 * to the message of the failed test of that name and duration. */
static int
failing_line(struct parse_ctx *ctx, struct nt_state *st, const char *s,
    size_t n)
{
	struct flaky_results *r = ctx->res;
	size_t	 k, nl, tl;
	int64_t	 us = -1;
	int	 c;

	if (parse_starts(s, n, "test at ")) {
		free(st->where);
		st->where = flaky_strndup(s, n < 512 ? n : 512);
		return st->where == NULL ? -ENOMEM : 0;
	}
	if (st->where == NULL || mark(s, n, &k) != FLAKY_FAIL ||
	    (nl = name_dur(s + k, n - k, &us, &c)) == 0)
		return 0;
	for (size_t i = 0; i < r->n; i++) {
		const char *t = r->v[i].test, *leaf = t, *p;

		if (r->v[i].outcome != FLAKY_FAIL || r->v[i].duration_us != us)
			continue;
		for (p = t; (p = strstr(p, NAME_SEP)) != NULL; p += 3)
			leaf = p + 3;
		tl = strlen(leaf);
		if (tl == nl && memcmp(leaf, s + k, nl) == 0 &&
		    (r->v[i].message == NULL ||
		    strstr(r->v[i].message, "test at ") == NULL)) {
			int e = parse_message(ctx, (long)i, st->where,
			    strlen(st->where));

			free(st->where);
			st->where = NULL;
			return e;
		}
	}
	return 0;
}

/* One line of node:test's spec output. */
static int
line(struct parse_ctx *ctx, const char *raw, size_t rawlen)
{
	struct nt_state	*st = ctx->state;
	const char	*s = raw;
	size_t		 n = rawlen, i, k;
	long		 v;
	int		 o, which;

	if (parse_strip_colour(&st->clean, &s, &n) < 0)
		return -ENOMEM;
	if ((which = info_line(s, n, &v)) != 0) {
		if (which == 't' && st->ninfo++ == 0)
			ctx->res->summary_total = 0;
		st->counted += v;
		if (which == 't')
			ctx->res->summary_total += v;
		else
			st->suites += v;
		st->mode = N_TREE;
		st->last = -1;
		parse_tree_pop(&st->tree, 0);
		return 0;
	}
	if (parse_starts(s, n, M_FAIL "failing tests:")) {
		st->mode = N_FAILING;
		return 0;
	}
	if (st->mode == N_FAILING)
		return failing_line(ctx, st, s, n);
	i = parse_indent(s, n);
	if ((o = mark(s + i, n - i, &k)) == -1) {
		int	 e = parse_tree_push(&st->tree, i, s + i + k,
		    n - i - k);

		if (st->tree.depth > 0)
			st->failed_below[st->tree.depth - 1] = 0;
		return e;
	}
	if (o >= 0)
		return add_test(ctx, st, i, o, s + i + k, n - i - k);
	return error_line(ctx, st, s, n);
}

/* node counts suites: the groups go, but for those that failed on their
 * own (an error then); the results keep their order. */
static void
drop_groups(struct parse_ctx *ctx, struct nt_state *st)
{
	struct flaky_results	*r = ctx->res;
	size_t			 k = 0;

	for (size_t i = 0; i < r->n; i++) {
		if (st->group[i] == G_GROUP) {
			free(r->v[i].test);
			free(r->v[i].message);
			continue;
		}
		if (st->group[i] == G_OWN)
			r->v[i].outcome = FLAKY_ERROR;
		r->v[k] = r->v[i];
		r->v[k].position = (unsigned)k;
		k++;
	}
	r->n = k;
}

/* Do the results hold every test and suite node counted? */
static int
finish(struct parse_ctx *ctx)
{
	struct nt_state		*st = ctx->state;
	struct flaky_results	*r = ctx->res;
	long			 n = (long)r->n;

	if (st->suites > 0)
		drop_groups(ctx, st);
	if (st->ninfo == 0)
		return parse_incomplete(ctx, "the run ended without "
		    "node:test's summary (ℹ tests N): it was killed or "
		    "stopped early");
	if (n != st->counted)
		return parse_incomplete(ctx, "node:test counts %ld tests and "
		    "suites, %ld were parsed: %s", st->counted, n,
		    n < st->counted ? "the run stopped early" :
		    "more than it ran (output of another process mixed in); "
		    "report the output to flaky");
	return 0;
}

/* Free the state; NULL is fine. */
static void
nt_free(struct parse_ctx *ctx)
{
	struct nt_state	*st = ctx->state;

	if (st == NULL)
		return;
	parse_tree_pop(&st->tree, 0);
	flaky_buf_free(&st->clean);
	flaky_buf_free(&st->id);
	free(st->where);
	free(st->group);
	free(st);
	ctx->state = NULL;
}

const struct runner runner_nodetest = {
	.name = "nodetest",
	.detect = detect,
	.init = init,
	.line = line,
	.finish = finish,
	.free = nt_free,
};
