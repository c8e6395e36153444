/* RSpec (the documentation and progress formatters) -> results.
 *
 *	Randomized with seed 3			(--order rand)
 *
 *	Cart					(a group: a deeper line follows)
 *	  adds items				(an example)
 *	  checkout
 *	    talks to the legacy API (FAILED - 1)
 *	    refunds (PENDING: not written yet)
 *
 *	Failures:
 *
 *	  1) Cart checkout talks to the legacy API
 *	     Failure/Error: expect(Cart.total([1])).to eq(2)
 *	     ...
 *	Finished in 0.04984 seconds (files took 0.20116 seconds to load)
 *	9 examples, 1 failure, 2 pending
 *
 *	Failed examples:
 *
 *	rspec ./spec/cart_spec.rb:16 # Cart checkout talks to the legacy API
 *
 * The id is the example's full description, as RSpec itself names it in
 * "Failed examples" (group and example titles joined by a blank). A line
 * of the tree is
 * a group when the next line is indented deeper, else an example. The
 * progress formatter prints a character per example and names only the
 * failures (in "Failures:" and "Failed examples:"): the count then says
 * more examples ran than were named, and the run is incomplete. A file
 * that fails to load is an error result named after the file. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

#define DEPTH_MAX	64

struct rspec_state {
	struct parse_ids ids;
	struct flaky_buf clean;		/* a line without colours */
	struct flaky_buf held;		/* the last tree line */
	size_t		 held_indent;
	int		 have_held;
	struct flaky_buf groups[DEPTH_MAX];
	size_t		 depth;
	int		 tree;		/* in the tree (before Failures:) */
	int		 open;		/* a top-level group began it */
	int		 after_blank;	/* the last line was blank */
	int		 section;	/* 'f' Failures, 'p' Pending, 'l' load,
					 * 'T' --profile's slowest examples */
	long		 slow;		/* the example --profile timed */
	long		 msg;		/* the message goes to this result */
	size_t		 first;		/* this run's first result */
	long		 total;		/* examples counted, -1 */
	long		 short_by;
	int		 errors_outside;
};

/* "9 examples, 1 failure, 2 pending": the count of examples, or -1. */
static long
count_line(const char *s, size_t n)
{
	size_t	 i = 0;

	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	if (i == 0 || !(parse_starts(s + i, n - i, " examples, ") ||
	    parse_starts(s + i, n - i, " example, ")) ||
	    memmem(s, n, " failure", 8) == NULL)
		return -1;
	return strtol(s, NULL, 10);
}

/* " (FAILED - 3)" or " (PENDING: why)" at the end of a tree line: the
 * outcome and the title's length; FLAKY_PASS when neither. */
static int
tree_outcome(const char *s, size_t n, size_t *title)
{
	const char *p;

	*title = n;
	if (n > 12 && s[n - 1] == ')') {
		for (p = s + n - 2; p > s && *p != '('; p--)
			;
		if (p > s && p[-1] == ' ' && parse_starts(p, (size_t)(s + n -
		    p), "(FAILED - ")) {
			*title = (size_t)(p - s) - 1;
			return FLAKY_FAIL;
		}
	}
	if ((p = memmem(s, n, " (PENDING: ", 11)) != NULL && s[n - 1] == ')') {
		*title = (size_t)(p - s);
		return FLAKY_SKIP;
	}
	return FLAKY_PASS;
}

/* RSpec's summary lines are certain, and so are the tree's marks. */
static int
detect(const char *s, size_t n)
{
	size_t	 t, i = parse_indent(s, n);

	if (count_line(s, n) >= 0 || parse_starts(s, n, "Randomized with seed ")
	    || (parse_starts(s, n, "Finished in ") &&
	    memmem(s, n, " seconds", 8) != NULL) ||
	    (parse_starts(s, n, "rspec ./") && memmem(s, n, " # ", 3)))
		return 2;
	if (i >= 2 && i % 2 == 0 && tree_outcome(s + i, n - i, &t) !=
	    FLAKY_PASS && t > 0)
		return 2;
	return 0;
}

/* The state for one stream. */
static int
init(struct parse_ctx *ctx)
{
	struct rspec_state *st;

	if ((st = calloc(1, sizeof *st)) == NULL)
		return -ENOMEM;
	st->tree = 1;
	st->after_blank = 1;
	st->msg = -1;
	st->total = -1;
	flaky_buf_init(&st->clean);
	flaky_buf_init(&st->held);
	for (size_t i = 0; i < DEPTH_MAX; i++)
		flaky_buf_init(&st->groups[i]);
	ctx->state = st;
	return 0;
}

/* Join a title to its group's description as RSpec does (a blank; a
 * group's own arguments, "Cart, '#total'", are one title already). */
static void
join(struct flaky_buf *b, const char *t, size_t n)
{
	if (b->len > 0)
		flaky_buf_addc(b, ' ');
	flaky_buf_add(b, t, n);
}

/* The held tree line is an example: its result under the groups. */
static int
emit_held(struct rspec_state *st, struct parse_ctx *ctx)
{
	struct flaky_buf id;
	size_t		 title;
	int		 o, e = 0;

	if (!st->have_held)
		return 0;
	st->have_held = 0;
	o = tree_outcome(st->held.data, st->held.len, &title);
	flaky_buf_init(&id);
	for (size_t i = 0; i < st->depth && i < st->held_indent / 2; i++)
		join(&id, st->groups[i].data, st->groups[i].len);
	join(&id, st->held.data, title);
	if (id.oom)
		e = -ENOMEM;
	else if (title > 0 && parse_add_indexed(ctx, &st->ids, id.data, id.len,
	    o, -1) < 0)
		e = -ENOMEM;
	flaky_buf_free(&id);
	return e;
}

/* Forget the tree read so far: it was not RSpec's (lines that came
 * before RSpec's output, replayed from detection's window). */
static void
tree_reset(struct rspec_state *st, struct parse_ctx *ctx)
{
	struct flaky_results *r = ctx->res;

	while (r->n > st->first) {
		r->n--;
		free(r->v[r->n].test);
		free(r->v[r->n].message);
	}
	st->have_held = 0;
	st->depth = 0;
	st->open = 0;
}

/* A line of the documentation tree. RSpec prints a blank line before
 * each top-level group, and nests by two blanks: a line at the margin
 * without a blank line before it, in an open tree, means the tree was
 * something else's (a setup script's output replayed to us), and a line
 * indented deeper than the tree allows is not part of it. */
static int
tree_line(struct rspec_state *st, struct parse_ctx *ctx, const char *s,
    size_t n)
{
	size_t	 in = parse_indent(s, n), lvl;
	int	 e, blank = st->after_blank;

	st->after_blank = n == in;
	if (n == in)
		return emit_held(st, ctx);
	/* the progress formatter's characters; options and odd indents */
	if ((in == 0 && strspn(s, ".F*E") == n) || in % 2 != 0 ||
	    parse_starts(s, n, "Run options:") ||
	    parse_starts(s, n, "All examples were filtered out"))
		return 0;
	if (in == 0 && !blank) {
		if (st->open)
			tree_reset(st, ctx);
		return 0;
	}
	if (in > 0 && (!st->open || (st->have_held ? in > st->held_indent +
	    2 : in / 2 > st->depth)))
		return 0;
	st->open = 1;
	if (st->have_held && in > st->held_indent &&
	    (lvl = st->held_indent / 2) < DEPTH_MAX) {
		/* the held line was a group */
		flaky_buf_reset(&st->groups[lvl]);
		flaky_buf_add(&st->groups[lvl], st->held.data, st->held.len);
		st->depth = lvl + 1;
		st->have_held = 0;
	} else if ((e = emit_held(st, ctx)) < 0)
		return e;
	if (in / 2 < st->depth)
		st->depth = in / 2;
	flaky_buf_reset(&st->held);
	flaky_buf_add(&st->held, s + in, n - in);
	st->held_indent = in;
	st->have_held = 1;
	return st->held.oom ? -ENOMEM : 0;
}

/* "  1) Cart checkout talks to the legacy API" in Failures: the result
 * its message goes to (made for the progress formatter). */
static int
failure_head(struct rspec_state *st, struct parse_ctx *ctx, const char *s,
    size_t n)
{
	size_t	 i = parse_indent(s, n), j = i;
	long	 r;

	while (j < n && s[j] >= '0' && s[j] <= '9')
		j++;
	if (j == i || j + 2 > n || s[j] != ')' || s[j + 1] != ' ')
		return 0;
	st->msg = -1;
	if (st->section != 'f')
		return 1;
	s += j + 2;
	n -= j + 2;
	if ((r = parse_ids_last(&st->ids, ctx->res, s, n, st->first)) < 0 &&
	    (r = parse_add_indexed(ctx, &st->ids, s, n, FLAKY_FAIL,
	    -1)) < 0)
		return (int)r;
	st->msg = r;
	return 1;
}

/* One line of RSpec's output. */
static int
line(struct parse_ctx *ctx, const char *s, size_t n)
{
	struct rspec_state *st = ctx->state;
	long		 c;
	int		 e;

	if ((e = parse_strip_colour(&st->clean, &s, &n)) < 0)
		return e;
	if (parse_starts(s, n, "Randomized with seed ")) {
		/* at the start, RSpec's first line: nothing before is ours */
		if (st->tree)
			tree_reset(st, ctx);
		return parse_set_seed(ctx, s + 21, n - 21);
	}
	if (parse_starts(s, n, "Pending: ") || (n == 9 &&
	    memcmp(s, "Failures:", 9) == 0) ||
	    parse_starts(s, n, "An error occurred while loading ")) {
		if (st->tree && (e = emit_held(st, ctx)) < 0)
			return e;
		st->tree = 0;
		st->msg = -1;
		st->section = s[0] == 'F' ? 'f' : s[0] == 'P' ? 'p' : 'l';
		if (st->section == 'l') {
			/* "... loading ./spec/x_spec.rb." */
			size_t	 k = strlen("An error occurred while loading ");
			long	 r;

			if ((r = parse_add_indexed(ctx, &st->ids, s + k, n - k -
			    (s[n - 1] == '.'), FLAKY_ERROR, -1)) < 0)
				return (int)r;
			st->msg = r;
		}
		return 0;
	}
	if (parse_starts(s, n, "Top ") && memmem(s, n, " slowest example",
	    16) != NULL) {
		/* --profile: "  Cart adds items" then "    0.03 seconds ..." */
		if (st->tree && (e = emit_held(st, ctx)) < 0)
			return e;
		st->tree = 0;
		st->msg = -1;
		st->slow = -1;
		st->section = memmem(s, n, "example groups", 14) ? 'g' : 'T';
		return 0;
	}
	if (st->section == 'T') {
		size_t	 in = parse_indent(s, n);

		if (in == 2)
			st->slow = parse_ids_last(&st->ids, ctx->res, s + 2,
			    n - 2, st->first);
		else if (in == 4 && st->slow >= 0) {
			const char *sp = memchr(s + 4, ' ', n - 4);
			int64_t	 us = sp ? parse_seconds_us(s + 4,
			    (size_t)(sp - s - 4)) : -1;

			if (us >= 0)
				ctx->res->v[st->slow].duration_us = us;
			st->slow = -1;
		}
		return 0;
	}
	if (parse_starts(s, n, "Finished in ")) {
		if (st->tree && (e = emit_held(st, ctx)) < 0)
			return e;
		st->tree = 0;
		st->section = 0;
		st->msg = -1;
		return 0;
	}
	if ((c = count_line(s, n)) >= 0) {
		long	 named = (long)(ctx->res->n - st->first);

		if (memmem(s, n, "occurred outside of examples", 28) != NULL) {
			st->errors_outside = 1;
			named = 0;
			for (size_t i = st->first; i < ctx->res->n; i++)
				named += ctx->res->v[i].outcome != FLAKY_ERROR;
		}
		st->total = (st->total < 0 ? 0 : st->total) + c;
		if (named < c)
			st->short_by += c - named;
		/* "Failed examples:" follow; no tree after the summary */
		st->tree = 0;
		st->section = 'x';
		st->msg = -1;
		return 0;
	}
	if (st->tree)
		return tree_line(st, ctx, s, n);
	if (parse_starts(s, n, "rspec ./") || parse_starts(s, n, "rspec '")) {
		/* Failed examples: the full description after " # " */
		const char *h = memmem(s, n, " # ", 3);
		long	 r;

		size_t	 hl = h != NULL ? (size_t)(s + n - h - 3) : 0;

		if (h != NULL && parse_ids_last(&st->ids, ctx->res, h + 3, hl,
		    st->first) < 0 && (r = parse_add_indexed(ctx, &st->ids,
		    h + 3, hl, FLAKY_FAIL, -1)) < 0)
			return (int)r;
		return 0;
	}
	if (st->section != 0 && (e = failure_head(st, ctx, s, n)) != 0)
		return e < 0 ? e : 0;
	if (st->msg >= 0 && n > 0 && (parse_indent(s, n) > 0 ||
	    st->section == 'l'))
		return parse_message(ctx, st->msg, s + parse_indent(s, n),
		    n - parse_indent(s, n));
	return 0;
}

/* End of output: an example held, a count that names more. */
static int
finish(struct parse_ctx *ctx)
{
	struct rspec_state *st = ctx->state;
	int		 e;

	if (st->tree && (e = emit_held(st, ctx)) < 0)
		return e;
	if (st->total >= 0)
		ctx->res->summary_total = st->total;
	if (st->total < 0 && ctx->res->n > 0)
		return parse_incomplete(ctx, "the run ended before RSpec's "
		    "summary (N examples, M failures): it was killed or "
		    "stopped early");
	if (st->errors_outside)
		return parse_incomplete(ctx, "an error occurred outside of "
		    "examples (a spec file failed to load, or a hook around "
		    "all of them failed), and RSpec then runs none of them: "
		    "the run holds only that error");
	if (st->short_by > 0)
		return parse_incomplete(ctx, "RSpec printed only failing "
		    "examples (%ld in its summary, %zu parsed): run it with "
		    "--format documentation", ctx->res->summary_total,
		    ctx->res->n);
	return 0;
}

/* Free the state; NULL is fine. */
static void
rspec_free(struct parse_ctx *ctx)
{
	struct rspec_state *st = ctx->state;

	if (st == NULL)
		return;
	parse_ids_free(&st->ids);
	flaky_buf_free(&st->clean);
	flaky_buf_free(&st->held);
	for (size_t i = 0; i < DEPTH_MAX; i++)
		flaky_buf_free(&st->groups[i]);
	free(st);
	ctx->state = NULL;
}

const struct runner runner_rspec = {
	.name = "rspec",
	.detect = detect,
	.init = init,
	.line = line,
	.finish = finish,
	.free = rspec_free,
};
