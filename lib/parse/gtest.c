/* GoogleTest (a test binary's output, --gtest_brief) and ctest running
 * it (plain, -V, --output-on-failure) -> results.
 *
 *	[==========] Running 8 tests from 4 test suites.
 *	[ RUN      ] Cart.RetriesPayment
 *	shop_test.cc:36: Failure		(the message)
 *	[  FAILED  ] Cart.RetriesPayment (0 ms)
 *	[  FAILED  ] Small/Prices.ArePositive/0, where GetParam() = 1 (0 ms)
 *	[==========] 8 tests from 4 test suites ran. (0 ms total)
 *
 *	Test project /tmp/build			(ctest)
 *	    Start 2: Cart.RetriesPayment
 *	2: [ RUN      ] Cart.RetriesPayment	(-V: its output, numbered)
 *	2/9 Test #2: Cart.RetriesPayment ......***Failed    0.00 sec
 *	75% tests passed, 2 tests failed out of 8
 *
 * A binary's ids are GoogleTest's `Suite.Test` (`Inst/Suite.Test/0` for a
 * parameterized test, `Suite/0.Test` for a typed one), which
 * --gtest_filter selects; what a parameterized failure adds (", where
 * GetParam() = 1") is not part of it. Under ctest the ids are ctest's test
 * names, which `ctest -R '^NAME$'` selects (gtest_discover_tests names
 * typed and parameterized tests its own way, and a test added with
 * add_test is a whole binary); the tests' own GoogleTest lines are then
 * their messages. Disabled tests are skips that GoogleTest does not
 * count. --gtest_brief prints only failures: the summary then counts more
 * tests than were named, and the run is incomplete. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

/* Messages held for ctest -V's numbered tests, by number. */
#define HELD_MAX	4096
/* Tests ctest runs at once, at most (-j), that a cut run names. */
#define STARTED_MAX	64

struct gtest_state {
	int		 ctest;		/* ctest's output */
	int		 in_run;	/* after "Running N tests" */
	int		 summary;	/* after "N tests ... ran." */
	size_t		 first;		/* the binary's first result */
	size_t		 disabled;	/* ... of which disabled */
	struct flaky_buf cur;		/* the test running (RUN) */
	struct flaky_buf msg;		/* its output so far */
	long		 total;		/* the runners' counts, -1 */
	long		 short_by;	/* counted, not named */
	long		 after;		/* ctest: output of a failed test */
	struct flaky_buf held[HELD_MAX];/* ctest -V: output per number */
	/* ctest: tests started and not ended ("Start 2: NAME"), the ones a
	 * killed run was running (ctest -j runs several) */
	struct {
		long		 k;
		char		*name;
	}		 started[STARTED_MAX];
	size_t		 nstarted;
};

/* "[ RUN      ] ", "[       OK ] ", ...: the tag's text, or NULL. */
static const char *
tag(const char *s, size_t n, size_t *rest)
{
	static const char *const tags[] = { "[ RUN      ] ",
	    "[       OK ] ", "[  FAILED  ] ", "[  SKIPPED ] ",
	    "[ DISABLED ] ", "[==========] ", "[----------] ",
	    "[  PASSED  ] " };

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(tags); i++)
		if (parse_starts(s, n, tags[i])) {
			*rest = 13;
			return tags[i];
		}
	return NULL;
}

/* ctest's "K: " before a test's line under -V: its length, or 0. */
static size_t
number_prefix(const char *s, size_t n, long *k)
{
	size_t	 i = 0;

	while (i < n && i < 9 && s[i] >= '0' && s[i] <= '9')
		i++;
	if (i == 0 || i + 1 >= n || s[i] != ':' || s[i + 1] != ' ')
		return 0;
	*k = strtol(s, NULL, 10);
	return i + 2;
}

/* ctest's "1/9 Test #1: NAME .....   Passed    0.01 sec": the name, the
 * status text and the time; 0 if not such a line. */
static int
ctest_result(const char *s, size_t n, const char **name, size_t *namelen,
    const char **status, size_t *statuslen, int64_t *dur, long *k)
{
	size_t	 i = parse_indent(s, n), j, end;
	const char *hash;

	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	if (i == parse_indent(s, n) || i >= n || s[i] != '/')
		return 0;
	for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		;
	if (!parse_starts(s + i, n - i, " Test ") ||
	    (hash = memchr(s + i, '#', n - i)) == NULL)
		return 0;
	*k = strtol(hash + 1, NULL, 10);
	if ((hash = memchr(hash, ':', (size_t)(s + n - hash))) == NULL ||
	    hash + 2 > s + n)
		return 0;
	i = (size_t)(hash - s) + 2;
	/* the name ends at " ." followed by the padding dots */
	for (j = i; j + 2 < n; j++)
		if (s[j] == ' ' && s[j + 1] == '.' && s[j + 2] == '.')
			break;
	if (j + 2 >= n || j == i)
		return 0;
	*name = s + i;
	*namelen = j - i;
	for (j++; j < n && s[j] == '.'; j++)
		;
	while (j < n && (s[j] == ' ' || s[j] == '*'))
		j++;
	/* "Passed    0.01 sec" */
	if (n < 4 || memcmp(s + n - 4, " sec", 4) != 0 || n - 4 < j)
		return 0;	/* no status before " sec" */
	end = n - 4;
	while (end > j && s[end - 1] != ' ')
		end--;
	*dur = parse_seconds_us(s + end, n - 4 - end);
	while (end > j && (s[end - 1] == ' ' || s[end - 1] == '*'))
		end--;
	*status = s + j;
	*statuslen = end - j;
	return 1;
}

/* GoogleTest's frame lines and ctest's result lines are certain; "Test
 * project" is a maybe. */
static int
detect(const char *s, size_t n)
{
	const char *a, *b;
	size_t	 an, bn, r;
	int64_t	 d;
	long	 k;

	if (parse_starts(s, n, "[==========] Running ") ||
	    (parse_starts(s, n, "[==========] ") && memmem(s, n,
	    " ran. (", 7) != NULL) || parse_starts(s, n, "[ RUN      ] ") ||
	    (parse_starts(s, n, "[  FAILED  ] ") && tag(s, n, &r) != NULL &&
	    n > 18 && memcmp(s + n - 4, " ms)", 4) == 0))
		return 2;
	if (ctest_result(s, n, &a, &an, &b, &bn, &d, &k))
		return 2;
	if (parse_starts(s, n, "Test project /"))
		return 1;
	return 0;
}

/* The state for one stream. */
static int
init(struct parse_ctx *ctx)
{
	struct gtest_state *st;

	if ((st = calloc(1, sizeof *st)) == NULL)
		return -ENOMEM;
	st->total = -1;
	st->after = -1;
	flaky_buf_init(&st->cur);
	flaky_buf_init(&st->msg);
	for (size_t i = 0; i < HELD_MAX; i++)
		flaky_buf_init(&st->held[i]);
	ctx->state = st;
	return 0;
}

/* "NAME (12 ms)" or "NAME, where GetParam() = 1 (0 ms)": the name's
 * length, whether a time ends it (*timed: a result's line, not the
 * summary's) and the duration (-1 when none, or too long to be one). */
static size_t
name_and_time(const char *s, size_t n, int *timed, int64_t *dur)
{
	const char *w = memmem(s, n, ", where ", 8);
	size_t	 nl = n;

	*timed = 0;
	*dur = -1;
	if (n > 6 && memcmp(s + n - 4, " ms)", 4) == 0) {
		size_t	 k = n - 4;

		while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9')
			k--;
		if (k >= 2 && s[k - 1] == '(' && s[k - 2] == ' ' && k < n - 4) {
			/* more digits than any run's ms: no duration */
			if (n - 4 - k <= 12)
				*dur = strtoll(s + k, NULL, 10) * 1000;
			*timed = 1;
			nl = k - 2;
		}
	}
	if (w != NULL && (size_t)(w - s) < nl)
		nl = (size_t)(w - s);
	return nl;
}

/* A GoogleTest result line of the binary's own output. */
static int
gtest_result(struct gtest_state *st, struct parse_ctx *ctx, int outcome,
    const char *s, size_t n)
{
	int64_t	 dur;
	int	 timed;
	size_t	 nl = name_and_time(s, n, &timed, &dur);
	long	 i;

	/* the summary's lists repeat names without a time */
	if (st->summary || (!timed && outcome != FLAKY_SKIP) || nl == 0)
		return 0;
	if ((i = parse_add(ctx, s, nl, outcome, dur)) < 0)
		return (int)i;
	if (FLAKY_FAILED(outcome) && st->msg.len > 0 &&
	    (i = parse_message(ctx, i, st->msg.data, st->msg.len)) < 0)
		return (int)i;
	flaky_buf_reset(&st->msg);
	flaky_buf_reset(&st->cur);
	return 0;
}

/* The end of a binary's run: its count against what was named. */
static void
binary_end(struct gtest_state *st, struct parse_ctx *ctx, long count)
{
	long	 named = (long)(ctx->res->n - st->first - st->disabled);

	st->total = (st->total < 0 ? 0 : st->total) + count;
	if (named < count)
		st->short_by += count - named;
	st->summary = 1;
	st->in_run = 0;
}

/* A line of a test binary's own output (not under ctest). */
static int
binary_line(struct gtest_state *st, struct parse_ctx *ctx, const char *s,
    size_t n)
{
	const char	*t;
	size_t		 r;
	int64_t		 d;
	int		 timed;

	if ((t = tag(s, n, &r)) == NULL) {
		const char *seed = "Note: Randomizing tests' orders with a "
		    "seed of ";

		if (parse_starts(s, n, seed) && n > strlen(seed)) {
			size_t	 k = strlen(seed), e = k;

			while (e < n && s[e] >= '0' && s[e] <= '9')
				e++;
			return parse_set_seed(ctx, s + k, e - k);
		}
		if (!st->summary && !parse_starts(s, n, "Running main() ") &&
		    !parse_starts(s, n, "Note: Google Test filter"))
			parse_msg_line(&st->msg, s, n);
		return st->msg.oom ? -ENOMEM : 0;
	}
	s += r;
	n -= r;
	switch (t[3]) {
	case '=':		/* [==========] */
		if (parse_starts(s, n, "Running ")) {
			st->in_run = 1;
			st->summary = 0;
			st->first = ctx->res->n;
			st->disabled = 0;
			flaky_buf_reset(&st->msg);
		} else if (n > 0 && s[0] >= '0' && s[0] <= '9' &&
		    memmem(s, n, " ran.", 5) != NULL)
			binary_end(st, ctx, strtol(s, NULL, 10));
		return 0;
	case 'U':		/* [ RUN      ] */
		flaky_buf_reset(&st->cur);
		flaky_buf_add(&st->cur, s, n);
		flaky_buf_reset(&st->msg);
		return st->cur.oom ? -ENOMEM : 0;
	case ' ':		/* [       OK ] */
		return gtest_result(st, ctx, FLAKY_PASS, s, n);
	case 'F':		/* [  FAILED  ] */
		return gtest_result(st, ctx, FLAKY_FAIL, s, n);
	case 'S':		/* [  SKIPPED ] */
		return name_and_time(s, n, &timed, &d), !timed ? 0 :
		    gtest_result(st, ctx, FLAKY_SKIP, s, n);
	case 'I':		/* [ DISABLED ] */
		if (st->summary)
			return 0;
		st->disabled++;
		return parse_add(ctx, s, n, FLAKY_SKIP, -1) < 0 ? -ENOMEM : 0;
	}
	return 0;
}

/* ctest's status word -> outcome. */
static int
ctest_outcome(const char *s, size_t n)
{
	if (parse_starts(s, n, "Passed"))
		return FLAKY_PASS;
	if (parse_starts(s, n, "Skipped") ||
	    parse_starts(s, n, "Not Run (Disabled)"))
		return FLAKY_SKIP;
	if (parse_starts(s, n, "Failed") || parse_starts(s, n, "Timeout"))
		return FLAKY_FAIL;
	return FLAKY_ERROR;	/* Exception: SegFault, Not Run, ... */
}

/* Is the line one of ctest's own, or GoogleTest's frame (kept out of a
 * test's message)? */
static int
noise(const char *s, size_t n)
{
	static const char *const pre[] = { "Test command: ",
	    "Working Directory: ", "Test timeout computed", "Running main() ",
	    "Note: Google Test filter", "Environment variables:",
	    "Test time = ", "Test Passed.", "Test Failed.", "Test Skipped",
	    "----------------------------------------------------------",
	    "Output of the test", "<end of output>" };
	size_t	 r;

	if (tag(s, n, &r) != NULL && !parse_starts(s, n, "[  FAILED  ] "))
		return 1;
	if (parse_starts(s, n, "[  FAILED  ] ") && n > 4 &&
	    memcmp(s + n - 4, " ms)", 4) != 0)
		return 1;
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(pre); i++)
		if (parse_starts(s, n, pre[i]))
			return 1;
	/* -V's "test 4" before "Start 4: NAME" */
	if (parse_starts(s, n, "test ") && n > 5 &&
	    strspn(s + 5, "0123456789") == n - 5)
		return 1;
	return n == 0;
}

/* "Start 2: NAME" (after "Start "): the test runs until its result. */
static int
ctest_started(struct gtest_state *st, const char *s, size_t n)
{
	const char	*c = memchr(s, ':', n);
	long		 k = strtol(s, NULL, 10);

	if (c == NULL || c + 2 > s + n || st->nstarted == STARTED_MAX)
		return 0;
	st->started[st->nstarted].k = k;
	if ((st->started[st->nstarted].name = flaky_strndup(c + 2,
	    (size_t)(s + n - c - 2))) == NULL)
		return -ENOMEM;
	st->nstarted++;
	return 0;
}

/* Test number k has its result. */
static void
ctest_ended(struct gtest_state *st, long k)
{
	for (size_t i = 0; i < st->nstarted; i++)
		if (st->started[i].k == k) {
			free(st->started[i].name);
			st->started[i] = st->started[--st->nstarted];
			return;
		}
}

/* The tests ctest was running when its output ended: failures of their
 * own, so that a run killed at its limit names the test that hung. */
static int
ctest_cut(struct gtest_state *st, struct parse_ctx *ctx)
{
	static const char cut[] = "no result printed: ctest's output "
	    "ended while this test ran (killed, or ctest crashed)";
	long	 i;
	int	 e;

	for (size_t j = 0; j < st->nstarted; j++) {
		long	 k = st->started[j].k;

		if ((i = parse_add(ctx, st->started[j].name,
		    strlen(st->started[j].name), FLAKY_FAIL, -1)) < 0)
			return (int)i;
		if ((e = parse_message(ctx, i, cut, sizeof cut - 1)) < 0)
			return e;
		if (k >= 0 && k < HELD_MAX && st->held[k].len > 0 &&
		    (e = parse_message(ctx, i, st->held[k].data,
		    st->held[k].len)) < 0)
			return e;
	}
	return 0;
}

/* One line of ctest's output. */
static int
ctest_line(struct gtest_state *st, struct parse_ctx *ctx, const char *s,
    size_t n)
{
	const char	*name, *status;
	size_t		 nl, sl, p;
	int64_t		 dur;
	long		 k, i;
	int		 o;

	if (ctest_result(s, n, &name, &nl, &status, &sl, &dur, &k)) {
		o = ctest_outcome(status, sl);
		if ((i = parse_add(ctx, name, nl, o, dur)) < 0)
			return (int)i;
		st->after = FLAKY_FAILED(o) ? i : -1;
		if (FLAKY_FAILED(o) && !parse_starts(status, sl, "Failed") &&
		    (i = parse_message(ctx, i, status, sl)) < 0)
			return (int)i;
		ctest_ended(st, k);
		if (k >= 0 && k < HELD_MAX) {
			if (FLAKY_FAILED(o) && st->held[k].len > 0 &&
			    parse_message(ctx, st->after, st->held[k].data,
			    st->held[k].len) < 0)
				return -ENOMEM;
			flaky_buf_free(&st->held[k]);
		}
		return 0;
	}
	if (parse_starts(s + parse_indent(s, n), n - parse_indent(s, n),
	    "Start ")) {
		st->after = -1;
		return ctest_started(st, s + parse_indent(s, n) + 6, n -
		    parse_indent(s, n) - 6);
	}
	if (n > 0 && s[n - 1] >= '0' && s[n - 1] <= '9' &&
	    memmem(s, n, "% tests passed, ", 16) != NULL) {
		const char *o2 = memmem(s, n, " out of ", 8);

		st->after = -1;
		if (o2 != NULL)
			st->total = strtol(o2 + 8, NULL, 10);
		return 0;
	}
	if ((p = number_prefix(s, n, &k)) > 0) {
		if (k >= 0 && k < HELD_MAX && !noise(s + p, n - p)) {
			parse_msg_line(&st->held[k], s + p, n - p);
			return st->held[k].oom ? -ENOMEM : 0;
		}
		return 0;
	}
	/* --output-on-failure: the output follows the failed test's line */
	if (st->after >= 0 && !noise(s, n))
		return parse_message(ctx, st->after, s, n);
	return 0;
}

/* One line: ctest's once it has spoken, else the binary's. */
static int
line(struct parse_ctx *ctx, const char *s, size_t n)
{
	struct gtest_state *st = ctx->state;
	const char	*a, *b;
	size_t		 an, bn;
	int64_t		 d;
	long		 k;

	if (!st->ctest && (parse_starts(s, n, "Test project /") ||
	    ctest_result(s, n, &a, &an, &b, &bn, &d, &k)))
		st->ctest = 1;
	if (st->ctest)
		return ctest_line(st, ctx, s, n);
	return binary_line(st, ctx, s, n);
}

/* End of output: a test that never ended, a brief run, a cut summary. */
static int
finish(struct parse_ctx *ctx)
{
	struct gtest_state *st = ctx->state;
	long		 i;
	int		 e = 0;

	if (st->total >= 0)
		ctx->res->summary_total = st->total;
	if (st->ctest) {
		if ((e = ctest_cut(st, ctx)) < 0)
			return e;
		if (st->total < 0 && ctx->res->n > 0)
			e = parse_incomplete(ctx, "the run ended before "
			    "ctest's summary (N%% tests passed ... out of "
			    "N): it was killed or stopped early");
		return e;
	}
	if (st->cur.len > 0) {
		/* it crashed the binary: no line of its own */
		if ((i = parse_add(ctx, st->cur.data, st->cur.len, FLAKY_FAIL,
		    -1)) < 0)
			return (int)i;
		parse_msg_line(&st->msg, "no result printed: the test binary "
		    "ended while this test ran (a crash, abort or kill)", 80);
		if (!st->msg.oom && (e = parse_message(ctx, i, st->msg.data,
		    st->msg.len)) < 0)
			return e;
	}
	if (st->in_run)
		e = parse_incomplete(ctx, "a test binary ended before "
		    "GoogleTest's summary (N tests from M test suites ran): "
		    "it crashed or was killed");
	else if (st->short_by > 0)
		e = parse_incomplete(ctx, "GoogleTest printed only failing "
		    "tests (%ld in its summary, %zu parsed): run it without "
		    "--gtest_brief", ctx->res->summary_total, ctx->res->n);
	return e;
}

/* Free the state; NULL is fine. */
static void
gtest_free(struct parse_ctx *ctx)
{
	struct gtest_state *st = ctx->state;

	if (st == NULL)
		return;
	flaky_buf_free(&st->cur);
	flaky_buf_free(&st->msg);
	for (size_t i = 0; i < HELD_MAX; i++)
		flaky_buf_free(&st->held[i]);
	for (size_t i = 0; i < st->nstarted; i++)
		free(st->started[i].name);
	free(st);
	ctx->state = NULL;
}

const struct runner runner_gtest = {
	.name = "gtest",
	.detect = detect,
	.init = init,
	.line = line,
	.finish = finish,
	.free = gtest_free,
};
