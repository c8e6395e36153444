/* cargo test (libtest's output) -> results.
 *
 *	running 4 tests				(one block per test binary)
 *	test cart::tests::adds_items ... ok
 *	test cart::tests::refunds ... ignored
 *	test cart::tests::retries_payment ... FAILED
 *
 *	failures:
 *
 *	---- cart::tests::retries_payment stdout ----
 *	thread 'cart::tests::retries_payment' panicked at ...
 *
 *	failures:
 *	    cart::tests::retries_payment
 *
 *	test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; ...
 *
 * The id is libtest's test name, the one `cargo test -- --exact NAME`
 * selects: `module::test`, or rustdoc's `src/lib.rs - item (line 7)` for
 * a doctest. libtest writes to stdout and cargo names the binaries
 * ("Running unittests src/lib.rs") on stderr, which flaky reads as a
 * stream of its own, so the binary is not part of the id. With -q (or
 * --format terse) libtest prints a dot per test and names only failures
 * (in its failures list): the block's summary then counts more tests than
 * were named, and the run is incomplete. cargo stops after the first test
 * binary that fails unless given --no-fail-fast; its stderr line "error:
 * test failed, to rerun pass `--lib`" without the closing "error: N
 * targets failed" says so, and that run is incomplete too. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

struct cargo_state {
	struct parse_ids ids;
	size_t		 first;		/* the block's first result */
	int		 in_block;	/* "running N tests" without result */
	int		 section;	/* 0, 'f' failures, 's' successes */
	long		 msg;		/* ---- NAME stdout ---- goes here */
	struct flaky_buf pending;	/* "test NAME ... " awaiting status */
	long		 total;		/* the summaries' counts, -1 */
	long		 short_by;	/* tests counted, not named */
	int		 stopped;	/* cargo stopped at a failing binary */
	int		 all_failed;	/* "error: N targets failed" */
};

/* The status word of a test line: outcome, or -1. Accepts libtest's
 * "ok", "FAILED", "ignored", "ignored, reason" and a "<0.001s>" time. */
static int
status_word(const char *s, size_t n, int64_t *dur)
{
	const char	*lt = memchr(s, '<', n);
	int		 o;

	*dur = -1;
	if (parse_starts(s, n, "ok"))
		o = n == 2 || s[2] == ' ' ? FLAKY_PASS : -1;
	else if (parse_starts(s, n, "FAILED"))
		o = n == 6 || s[6] == ' ' ? FLAKY_FAIL : -1;
	else if (parse_starts(s, n, "ignored"))
		o = n == 7 || s[7] == ' ' || s[7] == ',' ? FLAKY_SKIP : -1;
	else
		return -1;
	if (o == FLAKY_SKIP || lt == NULL)
		return o;
	/* "ok <0.012s>": --report-time */
	{
		const char *e = memchr(lt, 's', (size_t)(s + n - lt));

		if (e != NULL)
			*dur = parse_seconds_us(lt + 1, (size_t)(e - lt - 1));
	}
	return o;
}

/* "test NAME ... STATUS": the name (without libtest's " - should panic"
 * or " - compile fail" mark) and where the status starts; 0 if not. */
static int
test_line(const char *s, size_t n, size_t *namelen, size_t *status)
{
	static const char *const marks[] = { " - should panic",
	    " - compile fail", " - compile" };
	const char	*dots;
	size_t		 nl;

	if (!parse_starts(s, n, "test ") || n < 10 || s[5] == '(' ||
	    s[5] == ' ')
		return 0;
	if ((dots = memmem(s + 5, n - 5, " ... ", 5)) != NULL)
		*status = (size_t)(dots - s) + 5;
	else if (n >= 9 && memcmp(s + n - 4, " ...", 4) == 0 &&
	    (dots = s + n - 4) != NULL)
		*status = n;	/* the status comes later (--nocapture) */
	else
		return 0;
	nl = (size_t)(dots - s) - 5;
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(marks); i++) {
		size_t	 ml = strlen(marks[i]);
		const char *m;

		/* "should panic with `msg`" too */
		for (m = s + 5; m + ml <= s + 5 + nl; m++)
			if (memcmp(m, marks[i], ml) == 0 &&
			    (m + ml == s + 5 + nl || m[ml] == ' ')) {
				nl = (size_t)(m - s) - 5;
				break;
			}
	}
	*namelen = nl;
	/* libtest's names hold no blank but a doctest's ("src/lib.rs -
	 * item (line 7)"): a unittest docstring such as "test that it
	 * adds ... ok" is not one */
	if (memchr(s + 5, ' ', nl) != NULL && (memmem(s + 5, nl, " - ", 3) ==
	    NULL || nl < 8 || s[5 + nl - 1] != ')' ||
	    memmem(s + 5, nl, " (line ", 7) == NULL))
		return 0;
	return nl > 0;
}

/* "test result: ok. 3 passed; 1 failed; 2 ignored; 0 measured; ...":
 * the tests it counts (passed, failed, ignored, measured), -1 if not. */
static long
result_count(const char *s, size_t n)
{
	static const char *const words[] = { " passed", " failed",
	    " ignored", " measured" };
	long	 sum = 0;

	if (!parse_starts(s, n, "test result: "))
		return -1;
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(words); i++) {
		const char *w = memmem(s, n, words[i], strlen(words[i]));
		const char *d = w;

		if (w == NULL)
			return -1;
		while (d > s && d[-1] >= '0' && d[-1] <= '9')
			d--;
		sum += strtol(d, NULL, 10);
	}
	return sum;
}

/* libtest's lines are certain; "running N tests" is a maybe. */
static int
detect(const char *s, size_t n)
{
	size_t	 nl, st;
	int64_t	 d;

	if (result_count(s, n) >= 0 || parse_starts(s, n,
	    "error: test failed, to rerun pass `"))
		return 2;
	if (test_line(s, n, &nl, &st) && (st == n ||
	    status_word(s + st, n - st, &d) >= 0))
		return 2;
	if (parse_starts(s, n, "running ") && n >= 14 &&
	    (memcmp(s + n - 6, " tests", 6) == 0 ||
	    memcmp(s + n - 5, " test", 5) == 0 || s[n - 1] == ')'))
		return 1;
	return 0;
}

/* The state for one stream. */
static int
init(struct parse_ctx *ctx)
{
	struct cargo_state *st;

	if ((st = calloc(1, sizeof *st)) == NULL)
		return -ENOMEM;
	st->msg = -1;
	st->total = -1;
	flaky_buf_init(&st->pending);
	ctx->state = st;
	return 0;
}

/* The end of a binary's block: its summary against what was named. */
static void
block_end(struct cargo_state *st, struct parse_ctx *ctx, long count)
{
	long	 named = (long)(ctx->res->n - st->first);

	st->total = (st->total < 0 ? 0 : st->total) + count;
	if (named < count)
		st->short_by += count - named;
	st->in_block = 0;
	st->section = 0;
	st->msg = -1;
}

/* A test line whose status is known. */
static int
test_result(struct cargo_state *st, struct parse_ctx *ctx, const char *name,
    size_t n, int o, int64_t dur)
{
	long	 i = parse_add_indexed(ctx, &st->ids, name, n, o, dur);

	return i < 0 ? (int)i : 0;
}

/* One line of libtest's (or cargo's) output. */
static int
line(struct parse_ctx *ctx, const char *s, size_t n)
{
	struct cargo_state *st = ctx->state;
	size_t		 nl, at;
	int64_t		 dur;
	long		 count, i;
	int		 o;

	if (parse_starts(s, n, "running ") && detect(s, n) == 1) {
		const char *seed = memmem(s, n, "(shuffle seed: ", 15);

		st->in_block = 1;
		st->first = ctx->res->n;
		st->section = 0;
		st->msg = -1;
		flaky_buf_reset(&st->pending);
		if (seed != NULL && s[n - 1] == ')')
			return parse_set_seed(ctx, seed + 15,
			    (size_t)(s + n - 1 - seed - 15));
		return 0;
	}
	if ((count = result_count(s, n)) >= 0) {
		block_end(st, ctx, count);
		return 0;
	}
	if (parse_starts(s, n, "error: test failed, to rerun pass `")) {
		st->stopped = 1;
		return 0;
	}
	if (parse_starts(s, n, "error: ") && n > 15 &&
	    (memcmp(s + n - 15, " target failed:", 15) == 0 ||
	    memcmp(s + n - 16, " targets failed:", 16) == 0)) {
		st->all_failed = 1;
		return 0;
	}
	if (!st->in_block)
		return 0;
	if (st->section == 0 && test_line(s, n, &nl, &at)) {
		if (at == n) {
			/* "test x ... " then the test's own output */
			flaky_buf_reset(&st->pending);
			flaky_buf_add(&st->pending, s + 5, nl);
			return st->pending.oom ? -ENOMEM : 0;
		}
		if ((o = status_word(s + at, n - at, &dur)) >= 0)
			return test_result(st, ctx, s + 5, nl, o, dur);
		/* --nocapture: the test's own output, then the status */
		flaky_buf_reset(&st->pending);
		flaky_buf_add(&st->pending, s + 5, nl);
		return st->pending.oom ? -ENOMEM : 0;
	}
	if (st->pending.len > 0 && (o = status_word(s, n, &dur)) >= 0) {
		int	 e = test_result(st, ctx, st->pending.data,
		    st->pending.len, o, dur);

		flaky_buf_reset(&st->pending);
		return e;
	}
	if (n == 9 && memcmp(s, "failures:", 9) == 0) {
		st->section = 'f';
		st->msg = -1;
		return 0;
	}
	if (n == 10 && memcmp(s, "successes:", 10) == 0) {
		st->section = 's';
		st->msg = -1;
		return 0;
	}
	if (st->section == 0)
		return 0;
	if (parse_starts(s, n, "---- ") && n > 17 &&
	    memcmp(s + n - 12, " stdout ----", 12) == 0) {
		const char *name = s + 5;

		nl = n - 17;
		st->msg = -1;
		if (st->section != 'f')
			return 0;
		if ((i = parse_ids_last(&st->ids, ctx->res, name, nl,
		    st->first)) < 0 && (i = parse_add_indexed(ctx, &st->ids,
		    name, nl, FLAKY_FAIL, -1)) < 0)
			return (int)i;
		if (FLAKY_FAILED(ctx->res->v[i].outcome))
			st->msg = i;
		return 0;
	}
	if (st->section == 'f' && parse_starts(s, n, "    ") && n > 4 &&
	    s[4] != ' ' && st->msg < 0) {
		/* the failures list: terse output named no failure before */
		if (parse_ids_last(&st->ids, ctx->res, s + 4, n - 4,
		    st->first) < 0 && (i = parse_add_indexed(ctx, &st->ids,
		    s + 4, n - 4, FLAKY_FAIL, -1)) < 0)
			return (int)i;
		return 0;
	}
	if (st->msg >= 0 && n > 0 &&
	    !(n == 9 && memcmp(s, "failures:", 9) == 0))
		return parse_message(ctx, st->msg, s, n);
	return 0;
}

/* End of output: a block cut short, failures only, a stop at the first
 * failing binary. */
static int
finish(struct parse_ctx *ctx)
{
	struct cargo_state *st = ctx->state;
	int		 e = 0;

	if (st->total >= 0)
		ctx->res->summary_total = st->total;
	if (st->in_block)
		e = parse_incomplete(ctx, "a test binary ended before "
		    "libtest's summary (test result:): it crashed, was killed "
		    "or aborted (a test that aborts ends its whole binary)");
	else if (st->short_by > 0)
		e = parse_incomplete(ctx, "libtest printed only failing tests "
		    "(%ld in its summaries, %zu parsed): run it without -q or "
		    "with -- --format pretty", ctx->res->summary_total,
		    ctx->res->n);
	if (e == 0 && st->stopped && !st->all_failed) {
		e = parse_incomplete(ctx, "cargo test stopped at the first "
		    "test binary that failed, so the binaries after it did "
		    "not run: add --no-fail-fast");
		if (e == 0 && ctx->res->n == 0) {
			free(ctx->res->warning);
			if ((ctx->res->warning = strdup(ctx->res->incomplete))
			    == NULL)
				e = -ENOMEM;
		}
	}
	return e;
}

/* Free the state; NULL is fine. */
static void
cargo_free(struct parse_ctx *ctx)
{
	struct cargo_state *st = ctx->state;

	if (st == NULL)
		return;
	parse_ids_free(&st->ids);
	flaky_buf_free(&st->pending);
	free(st);
	ctx->state = NULL;
}

const struct runner runner_cargo = {
	.name = "cargo",
	.detect = detect,
	.init = init,
	.line = line,
	.finish = finish,
	.free = cargo_free,
};
