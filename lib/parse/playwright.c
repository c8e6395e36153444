/* Playwright Test (list reporter) output -> results.
 *
 *	Running 6 tests using 2 workers
 *	  ✓  1 [chromium] › tests/a.spec.js:4:1 › has a title (3.0s)
 *	  ✘  2 [chromium] › tests/a.spec.js:9:3 › shop › pays (64ms)
 *	  ✓  3 [chromium] › tests/a.spec.js:9:3 › shop › pays (retry #1) (50ms)
 *	  -  4 [chromium] › tests/a.spec.js:20:8 › shop › refunds
 *
 *	  1) [chromium] › tests/a.spec.js:9:3 › shop › pays ───────
 *	    Error: expect(received).toBe(expected)
 *	    ...
 *	    Retry #1 ───────			(an attempt's own errors)
 *
 *	  1 flaky
 *	    [chromium] › tests/a.spec.js:9:3 › shop › pays ───────
 *	  1 skipped
 *	  4 passed (9.2s)
 *
 * Each test ran is one result, named "file:line › [project] › titles" (no
 * project name: "file:line › titles"; the brackets tell a project from a
 * describe title). A retry ("(retry #1)") is another
 * attempt of the same result: the result keeps its first attempt's outcome
 * (a test that passed on a retry failed first: it is flaky evidence) and
 * every attempt is recorded. --repeat-each runs a test several times:
 * several results of one name (" #2" in run order). A "✘" that the summary
 * does not list as failed, flaky or interrupted failed as expected
 * (test.fail()): an xfail. The list reporter prints lines whole as tests
 * end, so workers do not interleave inside a line. */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

#define SEP		" \xe2\x80\xba "	/* " › " */
#define M_PASS		"\xe2\x9c\x93"		/* ✓ */
#define M_FAIL		"\xe2\x9c\x98"		/* ✘ */
#define RULE		"\xe2\x94\x80"		/* ─ */

enum pw_mode {
	P_TESTS,	/* test lines as they end */
	P_BLOCK,	/* a failure's details: "  1) title ───" */
	P_SUMMARY,	/* "  1 failed" and the tests it lists */
};

/* What a result's attempts and the summary said of it. */
struct pw_test {
	int		 attempt;	/* its last attempt so far */
	int		 outcome;	/* that attempt's */
	int		 listed;	/* named by the summary as failing */
	int		 detailed;	/* a failure block was its */
};

struct pw_state {
	struct flaky_buf	 clean;
	struct flaky_buf	 id;
	struct flaky_buf	 msg;		/* the open block section's */
	struct parse_ids	 ids;
	struct pw_test		*t;
	size_t			 tcap;
	enum pw_mode		 mode;
	long			 block;		/* its result, -1 */
	int			 block_attempt;
	int			 block_at;	/* its "at" line was kept */
	int			 listing;	/* the summary's list is of
						 * failing tests */
	unsigned		 nlist;		/* test lines */
	unsigned		 nrunning;	/* "Running N tests" lines */
	unsigned		 nsummary;	/* summary count lines */
	long			 didnotrun, interrupted, counted;
};

/* "Running 6 tests using 2 workers": N, else -1. */
static long
running_line(const char *s, size_t n)
{
	long	 v = 0;
	size_t	 i = 8;

	if (!parse_starts(s, n, "Running "))
		return -1;
	for (; i < n && s[i] >= '0' && s[i] <= '9' && v < 100000000L; i++)
		v = v * 10 + (s[i] - '0');
	if (i == 8 || (!parse_starts(s + i, n - i, " tests using ") &&
	    !parse_starts(s + i, n - i, " test using ")))
		return -1;
	return v;
}

/* "  ✓  12 title": the outcome, the title at *title; -1 if not one. */
static int
test_line(const char *s, size_t n, const char **title, size_t *tlen)
{
	static const struct {
		const char	*mark;
		int		 outcome;
	} marks[] = {
		{ M_PASS, FLAKY_PASS }, { M_FAIL, FLAKY_FAIL },
		{ "-", FLAKY_SKIP },
	};
	size_t	 i, k, d;

	if (n < 8 || s[0] != ' ' || s[1] != ' ')
		return -1;
	for (k = 0; k < FLAKY_ARRAY_SIZE(marks); k++)
		if (parse_starts(s + 2, n - 2, marks[k].mark))
			break;
	if (k == FLAKY_ARRAY_SIZE(marks))
		return -1;
	i = 2 + strlen(marks[k].mark);
	if (i >= n || s[i] != ' ')
		return -1;
	while (i < n && s[i] == ' ')
		i++;
	for (d = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		d++;
	if (d == 0 || d > 9 || i + 1 >= n || s[i] != ' ')
		return -1;
	*title = s + i + 1;
	*tlen = n - i - 1;
	return marks[k].outcome;
}

/* "Running N tests using M workers" is certain; a test line is a maybe. */
static int
score(const char *s, size_t n)
{
	const char	*t;
	size_t		 tl;

	if (running_line(s, n) >= 0)
		return 2;
	return test_line(s, n, &t, &tl) >= 0 && memmem(t, tl, SEP, 5) &&
	    memchr(t, ':', tl) != NULL;
}

/* Playwright colours its lines with FORCE_COLOR: scored without. */
static int
detect(const char *line, size_t len)
{
	return parse_detect_clean(line, len, score);
}

/* The state for one stream: no failure block open yet. */
static int
init(struct parse_ctx *ctx)
{
	struct pw_state	*st = parse_state(ctx, sizeof *st);

	if (st != NULL)
		st->block = -1;
	return st != NULL ? 0 : -ENOMEM;
}

/* Playwright's title, "[project] › file:12:5 › a › b", as the id
 * "file:12 › [project] › a › b" into b; a trailing " ───" rule is
 * dropped. 0, or -1 when it is no test title. */
static int
title_id(struct flaky_buf *b, const char *s, size_t n)
{
	const char	*proj = NULL, *file, *sep, *colon;
	size_t		 plen = 0, flen;

	/* "title ───────" in the failures and the summary's lists */
	while (n >= 3 && memcmp(s + n - 3, RULE, 3) == 0)
		n -= 3;
	while (n > 0 && s[n - 1] == ' ')
		n--;
	if (n > 2 && s[0] == '[') {
		const char *e = memmem(s, n, "]" SEP, 1 + 5);

		if (e == NULL)
			return -1;
		proj = s + 1;
		plen = (size_t)(e - s) - 1;
		n -= (size_t)(e - s) + 6;
		s = e + 6;
	}
	file = s;
	if ((sep = memmem(s, n, SEP, 5)) == NULL)
		return -1;
	flen = (size_t)(sep - s);
	/* drop the column of "file:12:5" */
	for (colon = sep; colon > file && colon[-1] != ':'; colon--)
		;
	if (colon > file + 1 && colon < sep && memchr(file, ':', (size_t)(
	    colon - 1 - file)) != NULL)
		flen = (size_t)(colon - 1 - file);
	else if (colon <= file + 1)
		return -1;
	flaky_buf_reset(b);
	flaky_buf_add(b, file, flen);
	if (proj != NULL) {
		flaky_buf_adds(b, SEP "[");
		flaky_buf_add(b, proj, plen);
		flaky_buf_addc(b, ']');
	}
	flaky_buf_add(b, sep, n - (size_t)(sep - s));
	parse_id_bound(b, PARSE_ID_MAX);
	return b->oom ? -ENOMEM : 0;
}

/* Room for the side record of result idx. */
static int
side(struct pw_state *st, size_t idx)
{
	while (idx >= st->tcap) {
		size_t	 cap = st->tcap ? st->tcap * 2 : 64;
		struct pw_test *t = reallocarray(st->t, cap, sizeof *t);

		if (t == NULL)
			return -ENOMEM;
		memset(t + st->tcap, 0, (cap - st->tcap) * sizeof *t);
		st->t = t;
		st->tcap = cap;
	}
	return 0;
}

/* The result of id whose last attempt failed as attempt-1, for a
 * retry; -1 if none. */
static long
retried(struct parse_ctx *ctx, struct pw_state *st, int attempt)
{
	size_t	 pos = 0;
	long	 idx, best = -1;

	while ((idx = parse_ids_next(&st->ids, ctx->res, st->id.data,
	    st->id.len, &pos)) >= 0)
		if (st->t[idx].attempt == attempt - 1 &&
		    FLAKY_FAILED(st->t[idx].outcome) &&
		    (best < 0 || idx < best))
			best = idx;
	return best;
}

/* A test line: a new result, or another attempt of one. */
static int
add_test(struct parse_ctx *ctx, struct pw_state *st, int outcome,
    const char *t, size_t n)
{
	const char	*in;
	size_t		 il;
	int64_t		 us = -1;
	int		 attempt = 0, e;
	long		 idx;
	size_t		 m = n;

	/* " (retry #1)" then " (64ms)" follow the title */
	if (outcome != FLAKY_SKIP && parse_cut_paren(t, &m, &in, &il) &&
	    (us = parse_duration_us(in, il)) >= 0)
		n = m;
	m = n;
	if (parse_cut_paren(t, &m, &in, &il) && il > 7 && il < 12 &&
	    parse_starts(in, il, "retry #")) {
		for (size_t k = 7; k < il && in[k] >= '0' && in[k] <= '9'; k++)
			attempt = attempt * 10 + (in[k] - '0');
		n = m;
	}
	if ((e = title_id(&st->id, t, n)) != 0)
		return e < 0 ? e : 0;
	st->nlist++;
	if (attempt > 0 && (idx = retried(ctx, st, attempt)) >= 0) {
		if (st->t[idx].attempt == 0 && (e = parse_attempt(ctx, idx, 0,
		    st->t[idx].outcome, NULL, 0)) < 0)
			return e;
		st->t[idx].attempt = attempt;
		st->t[idx].outcome = outcome;
		if ((e = parse_attempt(ctx, idx, attempt, outcome, NULL,
		    0)) < 0)
			return e;
		if (outcome == FLAKY_PASS) {
			char	 msg[64];

			snprintf(msg, sizeof msg, "passed on retry #%d",
			    attempt);
			return parse_message(ctx, idx, msg, strlen(msg));
		}
		return 0;
	}
	if ((idx = parse_add(ctx, st->id.data, st->id.len, outcome, us)) < 0)
		return (int)idx;
	if ((e = side(st, (size_t)idx)) < 0 ||
	    (e = parse_ids_add(&st->ids, ctx->res, (size_t)idx)) < 0)
		return e;
	st->t[idx].outcome = outcome;
	return 0;
}

/* "  1 failed", "  4 passed (9.2s)": the kind, else 0. */
static int
summary_count(struct pw_state *st, const char *s, size_t n)
{
	static const struct {
		const char	*word;
		int		 kind;
	} words[] = {
		{ "failed", 'F' }, { "flaky", 'K' }, { "interrupted", 'I' },
		{ "skipped", 'S' }, { "did not run", 'D' }, { "passed", 'P' },
	};
	size_t	 i = 2, l;
	long	 v = 0;

	if (n < 5 || s[0] != ' ' || s[1] != ' ' || s[2] < '0' || s[2] > '9')
		return 0;
	for (; i < n && s[i] >= '0' && s[i] <= '9' && v < 100000000L; i++)
		v = v * 10 + (s[i] - '0');
	if (i >= n || s[i++] != ' ')
		return 0;
	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(words); k++) {
		l = strlen(words[k].word);
		if (n - i < l || memcmp(s + i, words[k].word, l) != 0 ||
		    (n - i > l && (words[k].kind != 'P' || s[i + l] != ' ')))
			continue;
		st->counted += v;
		if (words[k].kind == 'D')
			st->didnotrun += v;
		if (words[k].kind == 'I')
			st->interrupted += v;
		return words[k].kind;
	}
	return 0;
}

/* The open section of a failure block ends: its text goes to the result
 * (the first attempt) or to its attempt. */
static int
block_flush(struct parse_ctx *ctx, struct pw_state *st)
{
	struct flaky_results *r = ctx->res;
	int	 e = 0;

	if (st->block < 0 || st->msg.len == 0)
		goto out;
	if (st->msg.oom)
		return -ENOMEM;
	if (st->block_attempt == 0) {
		char	*old = r->v[st->block].message;

		/* the error first, then "passed on retry #1" */
		r->v[st->block].message = NULL;
		e = parse_message(ctx, st->block, st->msg.data, st->msg.len);
		if (e == 0 && old != NULL)
			e = parse_message(ctx, st->block, old, strlen(old));
		free(old);
	}
	/* the attempt's own message (attempt 0 is the result's too) */
	for (size_t i = 0; e == 0 && i < r->nattempts; i++) {
		struct flaky_attempt *a = &r->attempts[i];
		size_t	 l = st->msg.len < 1024 ? st->msg.len : 1024;

		if (a->result != (size_t)st->block ||
		    a->attempt != st->block_attempt || a->message != NULL)
			continue;
		while (l > 0 && l < st->msg.len &&
		    ((unsigned char)st->msg.data[l] & 0xc0) == 0x80)
			l--;
		if ((a->message = flaky_strndup(st->msg.data, l)) == NULL)
			e = -ENOMEM;
		break;
	}
out:
	flaky_buf_reset(&st->msg);
	st->block_at = 0;
	return e;
}

/* "  1) title ───": the result it explains, the first failing one of that
 * name without details yet. The title may end with the steps that
 * failed (" › step"): the id is then a prefix of it. */
static int
block_start(struct parse_ctx *ctx, struct pw_state *st, const char *s,
    size_t n)
{
	struct flaky_results *r = ctx->res;
	int	 e;

	if ((e = block_flush(ctx, st)) < 0)
		return e;
	st->mode = P_BLOCK;
	st->block = -1;
	st->block_attempt = 0;
	if (title_id(&st->id, s, n) != 0)
		return st->id.oom ? -ENOMEM : 0;
	for (size_t i = 0; i < r->n; i++) {
		size_t	 l = strlen(r->v[i].test);

		if (st->t[i].detailed || !FLAKY_FAILED(r->v[i].outcome) ||
		    l > st->id.len || memcmp(r->v[i].test, st->id.data, l) ||
		    (l < st->id.len && !parse_starts(st->id.data + l,
		    st->id.len - l, SEP)))
			continue;
		st->t[i].detailed = 1;
		st->block = (long)i;
		break;
	}
	return 0;
}

/* A line of a failure block: the error and the first "at" line; code
 * frames and the paths of attachments (they change per run) are
 * dropped. */
static int
block_line(struct parse_ctx *ctx, struct pw_state *st, const char *s,
    size_t n)
{
	size_t	 i = parse_indent(s, n), j;
	int	 e;

	if (parse_starts(s + i, n - i, "Retry #")) {
		int	 a = 0;

		if ((e = block_flush(ctx, st)) < 0)
			return e;
		for (j = i + 7; j < n && j < i + 12 && s[j] >= '0' &&
		    s[j] <= '9'; j++)
			a = a * 10 + (s[j] - '0');
		st->block_attempt = a;
		return 0;
	}
	if (st->block < 0 || i == n || st->block_at ||
	    parse_starts(s + i, n - i, "Error Context: ") ||
	    parse_starts(s + i, n - i, "attachment #"))
		return 0;
	if (parse_starts(s + i, n - i, "at ")) {
		st->block_at = 1;
		parse_msg_line(&st->msg, s + i, n - i);
		return 0;
	}
	/* code frame: "  20 |", "> 22 |", "     |" */
	j = i;
	if (j < n && s[j] == '>')
		for (j++; j < n && s[j] == ' '; j++)
			;
	while (j < n && s[j] >= '0' && s[j] <= '9')
		j++;
	while (j < n && s[j] == ' ')
		j++;
	if (j < n && s[j] == '|')
		return 0;
	parse_msg_line(&st->msg, s + (i < 4 ? i : 4), n - (i < 4 ? i : 4));
	return 0;
}

/* A test the summary lists under failed, flaky or interrupted. */
static int
listed(struct parse_ctx *ctx, struct pw_state *st, const char *s, size_t n)
{
	size_t	 pos = 0;
	long	 idx, best = -1;

	if (title_id(&st->id, s + 4, n - 4) != 0)
		return st->id.oom ? -ENOMEM : 0;
	while ((idx = parse_ids_next(&st->ids, ctx->res, st->id.data,
	    st->id.len, &pos)) >= 0)
		if (!st->t[idx].listed && (best < 0 || idx < best))
			best = idx;
	if (best >= 0)
		st->t[best].listed = 1;
	return 0;
}

/* One line of Playwright's output. */
static int
line(struct parse_ctx *ctx, const char *raw, size_t rawlen)
{
	struct pw_state	*st = ctx->state;
	const char	*s = raw, *t, *p;
	size_t		 n = rawlen, tl, i;
	long		 total;
	int		 o, kind, e;

	if (parse_strip_colour(&st->clean, &s, &n) < 0)
		return -ENOMEM;
	if ((total = running_line(s, n)) >= 0) {
		if (st->nrunning++ > 0)
			total += ctx->res->summary_total;
		ctx->res->summary_total = total;
		if ((p = memmem(s, n, ", shuffle seed ", 15)) != NULL &&
		    s + n - (p + 15) > 0 && s + n - (p + 15) < 32)
			return parse_set_seed(ctx, p + 15,
			    (size_t)(s + n - (p + 15)));
		return 0;
	}
	if ((kind = summary_count(st, s, n)) != 0) {
		if ((e = block_flush(ctx, st)) < 0)
			return e;
		st->mode = P_SUMMARY;
		st->block = -1;
		st->nsummary++;
		st->listing = kind == 'F' || kind == 'K' || kind == 'I';
		return 0;
	}
	if ((o = test_line(s, n, &t, &tl)) >= 0) {
		st->mode = P_TESTS;
		return add_test(ctx, st, o, t, tl);
	}
	i = parse_indent(s, n);
	if (i == 2 && n > 5 && s[2] >= '0' && s[2] <= '9' &&
	    (p = memmem(s, n, ") ", 2)) != NULL && (size_t)(p - s) < 12)
		return block_start(ctx, st, p + 2, n - (size_t)(p + 2 - s));
	if (st->mode == P_BLOCK)
		return block_line(ctx, st, s, n);
	if (st->mode == P_SUMMARY && st->listing && i == 4)
		return listed(ctx, st, s, n);
	return 0;
}

/* Expected failures, and whether every test Playwright ran is here. */
static int
finish(struct parse_ctx *ctx)
{
	struct pw_state		*st = ctx->state;
	struct flaky_results	*r = ctx->res;
	int			 e;

	if ((e = block_flush(ctx, st)) < 0)
		return e;
	/* A "✘" not listed as failing, flaky or interrupted failed as
	 * expected (test.fail()). */
	for (size_t i = 0; st->nsummary > 0 && i < r->n; i++)
		if (r->v[i].outcome == FLAKY_FAIL && !st->t[i].listed &&
		    st->t[i].attempt == 0)
			r->v[i].outcome = FLAKY_XFAIL;
	if (st->nsummary == 0)
		return parse_incomplete(ctx, "the run ended without "
		    "Playwright's summary (N passed): it was killed or stopped "
		    "early");
	if (st->nlist == 0 && r->summary_total > 0)
		return parse_incomplete(ctx, "Playwright printed only failing "
		    "tests (%ld tests ran, its reporter is not list): run it "
		    "with --reporter=list", r->summary_total);
	if (st->didnotrun > 0)
		return parse_incomplete(ctx, "Playwright did not run %ld of "
		    "its %ld tests (--max-failures or -x stopped it, or an "
		    "error outside the tests): they have no outcome",
		    st->didnotrun, r->summary_total);
	if (st->interrupted > 0)
		return parse_incomplete(ctx, "Playwright interrupted %ld "
		    "tests (the run was stopped, or --global-timeout): they "
		    "have no outcome", st->interrupted);
	if ((long)r->n != r->summary_total)
		return parse_incomplete(ctx, "Playwright counts %ld tests, %zu "
		    "were parsed: %s", r->summary_total, r->n,
		    (long)r->n < r->summary_total ? "the run stopped early" :
		    "more than it ran (output of another process mixed in); "
		    "report the output to flaky");
	return 0;
}

/* Free the state; NULL is fine. */
static void
pw_free(struct parse_ctx *ctx)
{
	struct pw_state	*st = ctx->state;

	if (st == NULL)
		return;
	flaky_buf_free(&st->clean);
	flaky_buf_free(&st->id);
	flaky_buf_free(&st->msg);
	parse_ids_free(&st->ids);
	free(st->t);
	free(st);
	ctx->state = NULL;
}

const struct runner runner_playwright = {
	.name = "playwright",
	.detect = detect,
	.init = init,
	.line = line,
	.finish = finish,
	.free = pw_free,
};
