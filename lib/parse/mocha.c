/* Mocha (spec reporter, its default) output -> results.
 *
 *	  cart				(a suite: indented by two per level)
 *	    ✔ adds items (49ms)		(a duration only past half of "slow")
 *	    - refunds			(pending)
 *	    checkout
 *	      1) talks to the legacy API	(the first failure)
 *
 *	  5 passing (61ms)
 *	  1 pending
 *	  1 failing
 *
 *	  1) cart
 *	       checkout
 *	         talks to the legacy API:
 *	     AssertionError [ERR_ASSERTION]: Expected values ...
 *	      at Context.<anonymous> (test/cart.test.js:18:14)
 *
 * The test id is Mocha's full title, the titles of the suites and the test
 * joined by blanks ("cart checkout talks to the legacy API"), as Mocha's
 * --grep matches it and its TAP reporter names it. A failing hook ("\"before
 * each\" hook for \"x\"") is an error result: Mocha counts it among the
 * failing, and the tests it kept from running are in no count. Output the
 * tests print at the margin is no suite title. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

#define FAILS_MAX	100000		/* numbered failures kept */

enum mocha_mode {
	MO_TREE,	/* the tree of suites and tests */
	MO_LIST,	/* after "N passing": the failures' details */
};

struct mocha_state {
	struct flaky_buf	 clean;
	struct flaky_buf	 id;
	struct parse_tree	 tree;
	enum mocha_mode		 mode;
	long			*fails;		/* result of failure N - 1 */
	size_t			 nfails, fcap;
	long			 block;		/* result of the detail, -1 */
	int			 in_title;	/* its title lines go on */
	int			 block_at;
	unsigned		 ntests;	/* test lines */
	unsigned		 nsummary;	/* "N passing" lines */
	long			 counted;	/* passing, pending, failing */
};

/* "✔ " (log-symbols' "√" is Windows'): its length, else 0. */
static size_t
tick(const char *s, size_t n)
{
	return parse_starts(s, n, "\xe2\x9c\x94 ") ? 4 : 0;
}

/* "  5 passing (61ms)": 5, else -1. */
static long
passing_line(const char *s, size_t n)
{
	const char	*in;
	size_t		 il, i = 2;
	long		 v = 0;

	if (n < 14 || s[0] != ' ' || s[1] != ' ' || s[2] < '0' || s[2] > '9' ||
	    !parse_cut_paren(s, &n, &in, &il) || parse_duration_us(in, il) < 0)
		return -1;
	for (; i < n && s[i] >= '0' && s[i] <= '9' && v < 100000000L; i++)
		v = v * 10 + (s[i] - '0');
	return n - i == 8 && memcmp(s + i, " passing", 8) == 0 ? v : -1;
}

/* Does a tick line end with a duration of node:test's ("(0.64ms)")? */
static int
decimal_ms(const char *s, size_t n)
{
	const char	*in;
	size_t		 il;

	return parse_cut_paren(s, &n, &in, &il) && memchr(in, '.', il) &&
	    parse_duration_us(in, il) >= 0;
}

/* "N passing (T)" is certain; an indented tick without node:test's
 * decimal duration is a maybe. */
static int
score(const char *s, size_t n)
{
	size_t	 i = parse_indent(s, n);

	if (passing_line(s, n) >= 0)
		return 2;
	return i >= 2 && i % 2 == 0 && tick(s + i, n - i) &&
	    !decimal_ms(s, n);
}

/* Mocha colours its lines on a terminal: scored without. */
static int
detect(const char *line, size_t len)
{
	return parse_detect_clean(line, len, score);
}

/* The state for one stream, the tree empty. */
static int
init(struct parse_ctx *ctx)
{
	struct mocha_state	*st = parse_state(ctx, sizeof *st);

	if (st == NULL)
		return -ENOMEM;
	st->block = -1;		/* no failure's details yet */
	return 0;
}

/* A test of the tree at indent: the full title, the result. */
static int
add_test(struct parse_ctx *ctx, struct mocha_state *st, size_t indent,
    const char *t, size_t n, int outcome, int64_t us)
{
	long	 idx;

	parse_tree_pop(&st->tree, indent);
	parse_tree_path(&st->tree, " ", &st->id);
	flaky_buf_add(&st->id, t, n);
	parse_id_bound(&st->id, PARSE_ID_MAX);
	if (st->id.oom)
		return -ENOMEM;
	if ((idx = parse_add(ctx, st->id.data, st->id.len, outcome, us)) < 0)
		return (int)idx;
	st->ntests++;
	if (!FLAKY_FAILED(outcome) || st->nfails >= FAILS_MAX)
		return 0;
	if (flaky_array_grow(&st->fails, &st->fcap, st->nfails,
	    sizeof *st->fails) < 0)
		return -ENOMEM;
	st->fails[st->nfails++] = idx;
	return 0;
}

/* A line of the tree: a test, a pending test, a failure, or a suite. */
static int
tree_line(struct parse_ctx *ctx, struct mocha_state *st, const char *s,
    size_t n)
{
	size_t	 i = parse_indent(s, n), k, d;
	const char *in;
	size_t	 il;
	int64_t	 us = -1;

	/* Mocha prints nothing at the margin but its blank lines: the
	 * tests' own output */
	if (i < 2 || i == n)
		return 0;
	if ((k = tick(s + i, n - i)) > 0) {
		s += i + k;
		n -= i + k;
		if (parse_cut_paren(s, &n, &in, &il) &&
		    (us = parse_duration_us(in, il)) < 0)
			n += il + 3;
		return add_test(ctx, st, i, s, n, FLAKY_PASS, us);
	}
	if (parse_starts(s + i, n - i, "- "))
		return add_test(ctx, st, i, s + i + 2, n - i - 2, FLAKY_SKIP,
		    -1);
	for (d = i; d < n && s[d] >= '0' && s[d] <= '9'; d++)
		;
	if (d > i && d - i < 10 && parse_starts(s + d, n - d, ") ")) {
		/* a hook is no test of its own: an error */
		int	 hook = parse_starts(s + d + 2, n - d - 2, "\"") &&
		    memmem(s + d + 2, n - d - 2, "\" hook", 6) != NULL;

		return add_test(ctx, st, i, s + d + 2, n - d - 2, hook ?
		    FLAKY_ERROR : FLAKY_FAIL, -1);
	}
	return parse_tree_push(&st->tree, i, s + i, n - i);
}

/* "  1) cart" opens a failure's details: the title goes on, indented, up
 * to the line that ends with ":"; then the message and its "at" lines. */
static int
list_line(struct parse_ctx *ctx, struct mocha_state *st, const char *s,
    size_t n)
{
	size_t	 i = parse_indent(s, n), d;
	long	 num = 0;

	for (d = i; d < n && s[d] >= '0' && s[d] <= '9' && num < 1000000;
	    d++)
		num = num * 10 + (s[d] - '0');
	if (i == 2 && d > i && parse_starts(s + d, n - d, ") ")) {
		st->block = num >= 1 && (size_t)num <= st->nfails ?
		    st->fails[num - 1] : -1;
		if (st->block >= 0 && ctx->res->v[st->block].message != NULL)
			st->block = -1;
		st->in_title = !(n > 0 && s[n - 1] == ':');
		st->block_at = 0;
		return 0;
	}
	if (st->block < 0 || i == n)
		return 0;
	if (st->in_title) {
		st->in_title = !(s[n - 1] == ':');
		return 0;
	}
	if (parse_starts(s + i, n - i, "at ")) {
		if (st->block_at)
			return 0;
		st->block_at = 1;
		return parse_message(ctx, st->block, s + i, n - i);
	}
	if (st->block_at)
		return 0;
	return parse_message(ctx, st->block, s + (i < 6 ? i : 6),
	    n - (i < 6 ? i : 6));
}

/* "  1 pending", "  2 failing" after "N passing". */
static int
count_line(struct mocha_state *st, const char *s, size_t n)
{
	size_t	 i = 2;
	long	 v = 0;

	if (n < 5 || s[0] != ' ' || s[1] != ' ' || s[2] < '0' || s[2] > '9')
		return 0;
	for (; i < n && s[i] >= '0' && s[i] <= '9' && v < 100000000L; i++)
		v = v * 10 + (s[i] - '0');
	if ((n - i == 8 && memcmp(s + i, " pending", 8) == 0) ||
	    (n - i == 8 && memcmp(s + i, " failing", 8) == 0)) {
		st->counted += v;
		return 1;
	}
	return 0;
}

/* One line of Mocha's output. */
static int
line(struct parse_ctx *ctx, const char *raw, size_t rawlen)
{
	struct mocha_state	*st = ctx->state;
	const char		*s = raw;
	size_t			 n = rawlen;
	long			 v;

	if (parse_strip_colour(&st->clean, &s, &n) < 0)
		return -ENOMEM;
	if ((v = passing_line(s, n)) >= 0) {
		st->counted += v;
		st->nsummary++;
		st->mode = MO_LIST;
		st->block = -1;
		parse_tree_pop(&st->tree, 0);
		return 0;
	}
	if (st->mode == MO_LIST) {
		if (count_line(st, s, n))
			return 0;
		/* another run's tree ("mocha a; mocha b") */
		if (parse_indent(s, n) >= 2 && tick(s + parse_indent(s, n),
		    n - parse_indent(s, n)) && st->block < 0) {
			st->mode = MO_TREE;
			st->nfails = 0;
		} else
			return list_line(ctx, st, s, n);
	}
	return tree_line(ctx, st, s, n);
}

/* Do the results hold every test Mocha counted? */
static int
finish(struct parse_ctx *ctx)
{
	struct mocha_state	*st = ctx->state;
	struct flaky_results	*r = ctx->res;

	if (st->nsummary == 0)
		return parse_incomplete(ctx, "the run ended without Mocha's "
		    "summary (N passing): it was killed or stopped early");
	r->summary_total = st->counted;
	if (st->ntests == 0 && st->counted > 0)
		return parse_incomplete(ctx, "Mocha named no test (%ld in its "
		    "summary): its reporter is not spec; run it with "
		    "--reporter spec", st->counted);
	if ((long)r->n != st->counted)
		return parse_incomplete(ctx, "Mocha's summary counts %ld "
		    "tests, %zu were parsed: %s", st->counted, r->n,
		    (long)r->n < st->counted ? "the run stopped early" :
		    "more than it ran (output of another process mixed in, or "
		    "a test printed lines that look like Mocha's); report the "
		    "output to flaky");
	return 0;
}

/* Free the state; NULL is fine. */
static void
mocha_free(struct parse_ctx *ctx)
{
	struct mocha_state	*st = ctx->state;

	if (st == NULL)
		return;
	parse_tree_pop(&st->tree, 0);
	flaky_buf_free(&st->clean);
	flaky_buf_free(&st->id);
	free(st->fails);
	free(st);
	ctx->state = NULL;
}

const struct runner runner_mocha = {
	.name = "mocha",
	.detect = detect,
	.init = init,
	.line = line,
	.finish = finish,
	.free = mocha_free,
};
