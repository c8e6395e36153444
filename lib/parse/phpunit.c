/* PHPUnit 9 (default, --debug, --testdox, -v) -> results.
 *
 *	PHPUnit 9.6.7 by Sebastian Bergmann and contributors.
 *	Test 'Demo\Tests\CartTest::testAddsItems' started	(--debug)
 *	Test 'Demo\Tests\CartTest::testAddsItems' ended
 *	 ✔ Adds items						(--testdox)
 *	.FFS.....                            9 / 9 (100%)	(default)
 *
 *	There were 2 failures:
 *
 *	1) Demo\Tests\CartTest::testRetriesPayment
 *	payment gateway timed out (run 1)
 *	...
 *	FAILURES!
 *	Tests: 9, Assertions: 8, Failures: 2, Skipped: 1.
 *
 * The id is PHPUnit's name of the test, `Class::method`, with ` with
 * data set "name"` or ` with data set #0` for a data provider's (the
 * arguments PHPUnit prints after it are not part of it): what --filter
 * matches. --debug names every test as it starts; the outcome comes from
 * the lists at the end (failures, errors; skipped and incomplete tests
 * only with -v) or from --testdox's mark printed after it ends. The
 * default format prints a character per test and names only the tests in
 * its lists, and --testdox alone names tests in prose that --filter cannot
 * select: both runs are incomplete. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

struct phpunit_state {
	struct parse_ids ids;
	struct flaky_buf id;		/* an id without its data */
	struct flaky_buf cls;		/* testdox's class, alone */
	size_t		 first;		/* this run's first result */
	long		 ended;		/* the test --debug said ended */
	int		 list;		/* outcome of the list we are in */
	long		 msg;		/* its message goes here */
	int		 debug;		/* --debug lines seen */
	int		 prose;		/* results named by --testdox alone */
	int		 dox_summary;	/* testdox's summary repeats tests */
	long		 total;		/* "Tests: N", -1 */
	long		 short_by;
	long		 skips_said;	/* "Skipped: N" + "Incomplete: N" */
};

/* "Class::method with data set "x" (args)" -> without " (args)". */
static size_t
without_data(const char *s, size_t n)
{
	const char *d = memmem(s, n, " with data set ", 15), *e;
	size_t	 k;

	if (d == NULL)
		return n;
	k = (size_t)(d - s) + 15;
	if (k < n && s[k] == '#') {
		for (k++; k < n && s[k] >= '0' && s[k] <= '9'; k++)
			;
		return k;
	}
	if (k < n && s[k] == '"' && (e = memmem(s + k + 1, n - k - 1, "\" (",
	    3)) != NULL && s[n - 1] == ')')
		return (size_t)(e - s) + 1;
	return n;
}

/* "Test 'ID' started" or "... ended": 1 started, 2 ended, 0; the id. */
static int
debug_line(const char *s, size_t n, const char **id, size_t *len)
{
	int	 w;

	if (!parse_starts(s, n, "Test '"))
		return 0;
	if (n > 15 && memcmp(s + n - 9, "' started", 9) == 0)
		w = 1;
	else if (n > 13 && memcmp(s + n - 7, "' ended", 7) == 0)
		w = 2;
	else
		return 0;
	*id = s + 6;
	*len = n - 6 - (w == 1 ? 9 : 7);
	return w;
}

/* "Tests: 9, Assertions: ..." or "OK (9 tests, ...)": the count, -1. */
static long
count_line(const char *s, size_t n, long *skips)
{
	static const char *const sk[] = { "Skipped: ", "Incomplete: " };

	*skips = 0;
	if (parse_starts(s, n, "OK (") && memmem(s, n, " assertion", 10))
		return strtol(s + 4, NULL, 10);
	if (!parse_starts(s, n, "Tests: ") ||
	    memmem(s, n, ", Assertions: ", 14) == NULL)
		return -1;
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(sk); i++) {
		const char *p = memmem(s, n, sk[i], strlen(sk[i]));

		if (p != NULL)
			*skips += strtol(p + strlen(sk[i]), NULL, 10);
	}
	return strtol(s + 7, NULL, 10);
}

/* "There were 2 failures:": the outcome its items get, -1 if not a list
 * head; 0 (pass) for lists that do not change one (risky, warnings). */
static int
list_head(const char *s, size_t n)
{
	static const struct {
		const char	*word;
		int		 outcome;
	} kinds[] = {
		{ " failure", FLAKY_FAIL }, { " error", FLAKY_ERROR },
		{ " skipped test", FLAKY_SKIP },
		{ " incomplete test", FLAKY_SKIP },
		{ " risky test", FLAKY_PASS }, { " warning", FLAKY_PASS },
	};

	if (!(parse_starts(s, n, "There was 1") ||
	    parse_starts(s, n, "There were ")) || s[n - 1] != ':')
		return -1;
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(kinds); i++)
		if (memmem(s, n, kinds[i].word, strlen(kinds[i].word)))
			return kinds[i].outcome;
	return -1;
}

/* --testdox's mark at the start of a line (" ✔ Title"): the outcome and
 * the title's offset, -1 if none. */
static int
testdox_mark(const char *s, size_t n, size_t *title)
{
	static const struct {
		const char	*mark;
		int		 outcome;
	} marks[] = {
		{ " \xe2\x9c\x94 ", FLAKY_PASS },	/* ✔ */
		{ " \xe2\x9c\x98 ", FLAKY_FAIL },	/* ✘ */
		{ " \xe2\x86\xa9 ", FLAKY_SKIP },	/* ↩ skipped */
		{ " \xe2\x88\x85 ", FLAKY_SKIP },	/* ∅ incomplete */
		{ " \xe2\x98\xa2 ", FLAKY_PASS },	/* ☢ risky */
		{ " \xe2\x9a\xa0 ", FLAKY_PASS },	/* ⚠ warning */
	};

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(marks); i++)
		if (parse_starts(s, n, marks[i].mark)) {
			*title = strlen(marks[i].mark);
			return marks[i].outcome;
		}
	return -1;
}

/* PHPUnit's banner, --debug's lines and the summary are certain. */
static int
detect(const char *s, size_t n)
{
	const char *id;
	size_t	 len;
	long	 sk;

	if ((parse_starts(s, n, "PHPUnit ") &&
	    memmem(s, n, " by Sebastian Bergmann", 22) != NULL) ||
	    debug_line(s, n, &id, &len) || count_line(s, n, &sk) >= 0)
		return 2;
	return 0;
}

/* The state for one stream. */
static int
init(struct parse_ctx *ctx)
{
	struct phpunit_state *st;

	if ((st = calloc(1, sizeof *st)) == NULL)
		return -ENOMEM;
	st->ended = st->msg = -1;
	st->list = -1;
	st->total = -1;
	flaky_buf_init(&st->id);
	flaky_buf_init(&st->cls);
	ctx->state = st;
	return 0;
}

/* "1) ID" in a list: the result it names gets the list's outcome. */
static int
list_item(struct phpunit_state *st, struct parse_ctx *ctx, const char *s,
    size_t n)
{
	size_t	 j = 0, len;
	long	 r;

	while (j < n && s[j] >= '0' && s[j] <= '9')
		j++;
	if (j == 0 || j + 2 > n || s[j] != ')' || s[j + 1] != ' ')
		return 0;
	s += j + 2;
	n -= j + 2;
	len = without_data(s, n);
	if (memmem(s, len, "::", 2) == NULL) {
		st->msg = -1;	/* a warning of the run, not of a test */
		return 1;
	}
	if ((r = parse_ids_last(&st->ids, ctx->res, s, len, st->first)) < 0) {
		if (st->list == FLAKY_PASS) {
			st->msg = -1;
			return 1;
		}
		if ((r = parse_add_indexed(ctx, &st->ids, s, len, st->list,
		    -1)) < 0)
			return (int)r;
	}
	if (st->list != FLAKY_PASS)
		ctx->res->v[r].outcome = st->list;
	st->msg = FLAKY_FAILED(st->list) ? r : -1;
	return 1;
}

/* One line of PHPUnit's output. */
static int
line(struct parse_ctx *ctx, const char *s, size_t n)
{
	struct phpunit_state *st = ctx->state;
	const char	*id;
	size_t		 len, t;
	long		 c, r, sk;
	int		 w, o;

	if (parse_starts(s, n, "PHPUnit ") &&
	    memmem(s, n, " by Sebastian Bergmann", 22) != NULL) {
		const char *v = s + 8, *e = memchr(v, ' ', n - 8);

		st->first = ctx->res->n;
		return e != NULL ? parse_set_version(ctx, v, (size_t)(e - v)) :
		    0;
	}
	if (parse_starts(s, n, "Random Seed:")) {
		size_t	 k = 12 + parse_indent(s + 12, n - 12);

		return parse_set_seed(ctx, s + k, n - k);
	}
	if ((w = debug_line(s, n, &id, &len)) != 0) {
		st->debug = 1;
		len = without_data(id, len);
		if (w == 2) {
			st->ended = parse_ids_last(&st->ids, ctx->res, id, len,
			    st->first);
			return 0;
		}
		st->ended = -1;
		return parse_add_indexed(ctx, &st->ids, id, len, FLAKY_PASS,
		    -1) < 0 ? -ENOMEM : 0;
	}
	if (parse_starts(s, n, "Summary of non-successful tests:")) {
		st->dox_summary = 1;
		st->msg = -1;
		return 0;
	}
	if ((o = testdox_mark(s, n, &t)) >= 0) {
		if (st->dox_summary)
			return 0;
		if (st->debug) {
			if (st->ended >= 0)
				ctx->res->v[st->ended].outcome = o;
			st->msg = FLAKY_FAILED(o) ? st->ended : -1;
			st->ended = -1;
			return 0;
		}
		/* testdox alone: "Class > Title" */
		flaky_buf_reset(&st->id);
		flaky_buf_add(&st->id, st->cls.data, st->cls.len);
		flaky_buf_adds(&st->id, " > ");
		flaky_buf_add(&st->id, s + t, n - t);
		if (st->id.oom || (r = parse_add_indexed(ctx, &st->ids,
		    st->id.data, st->id.len, o, -1)) < 0)
			return -ENOMEM;
		st->prose = 1;
		st->msg = FLAKY_FAILED(o) ? r : -1;
		return 0;
	}
	if ((c = count_line(s, n, &sk)) >= 0) {
		long	 named = (long)(ctx->res->n - st->first), skips = 0;

		for (size_t i = st->first; i < ctx->res->n; i++)
			skips += ctx->res->v[i].outcome == FLAKY_SKIP;
		st->total = (st->total < 0 ? 0 : st->total) + c;
		if (named < c)
			st->short_by += c - named;
		if (sk > skips)
			st->skips_said += sk - skips;
		st->list = -1;
		st->msg = -1;
		st->dox_summary = 0;
		st->first = ctx->res->n;
		return 0;
	}
	if (n > 3 && s[0] != ' ' && s[n - 1] == ')' && st->list < 0 &&
	    memmem(s, n, " (", 2) != NULL && !st->debug &&
	    memmem(s, n, "::", 2) == NULL) {
		/* testdox's class: "Cart (Demo\Tests\Cart)" */
		const char *p = memmem(s, n, " (", 2);

		flaky_buf_reset(&st->cls);
		flaky_buf_add(&st->cls, p + 2, (size_t)(s + n - p - 3));
		return st->cls.oom ? -ENOMEM : 0;
	}
	if ((o = list_head(s, n)) >= 0) {
		st->list = o;
		st->msg = -1;
		return 0;
	}
	if (st->list >= 0) {
		if (n == 2 && memcmp(s, "--", 2) == 0) {
			st->msg = -1;
			return 0;
		}
		if ((w = list_item(st, ctx, s, n)) != 0)
			return w < 0 ? w : 0;
		if (parse_starts(s, n, "FAILURES!") ||
		    parse_starts(s, n, "ERRORS!") ||
		    parse_starts(s, n, "OK, but "))
			st->list = -1, st->msg = -1;
	}
	if (st->msg >= 0 && n > 0) {
		/* testdox's "   │ " frame */
		if (parse_starts(s, n, "   \xe2\x94\x82"))
			s += 6, n -= 6;
		while (n > 0 && *s == ' ')
			s++, n--;
		return n > 0 ? parse_message(ctx, st->msg, s, n) : 0;
	}
	return 0;
}

/* End of output: no summary, tests not named, skips not named. */
static int
finish(struct parse_ctx *ctx)
{
	struct phpunit_state *st = ctx->state;

	if (st->total >= 0)
		ctx->res->summary_total = st->total;
	if (st->total < 0 && ctx->res->n > 0)
		return parse_incomplete(ctx, "the run ended before PHPUnit's "
		    "summary (Tests: N or OK (N tests)): it was killed or "
		    "stopped early");
	if (st->short_by > 0)
		return parse_incomplete(ctx, "PHPUnit printed only the tests "
		    "that did not pass (%ld in its summary, %zu parsed): run "
		    "it with --debug -v", ctx->res->summary_total,
		    ctx->res->n);
	if (st->prose)
		return parse_incomplete(ctx, "PHPUnit's --testdox names tests "
		    "in prose, which --filter cannot select: add --debug");
	if (st->skips_said > 0)
		return parse_incomplete(ctx, "PHPUnit skipped %ld tests "
		    "without naming them (it lists skipped and incomplete "
		    "tests only with -v): run it with -v", st->skips_said);
	return 0;
}

/* Free the state; NULL is fine. */
static void
phpunit_free(struct parse_ctx *ctx)
{
	struct phpunit_state *st = ctx->state;

	if (st == NULL)
		return;
	parse_ids_free(&st->ids);
	flaky_buf_free(&st->id);
	flaky_buf_free(&st->cls);
	free(st);
	ctx->state = NULL;
}

const struct runner runner_phpunit = {
	.name = "phpunit",
	.detect = detect,
	.init = init,
	.line = line,
	.finish = finish,
	.free = phpunit_free,
};
