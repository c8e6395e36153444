/* TAP (13 and 14) -> results.
 *
 *	TAP version 13
 *	# Subtest: suite
 *	    ok 1 - inner passes			(a subtest: indented by 4)
 *	    1..1
 *	not ok 1 - suite # TODO later
 *	  ---					(YAML diagnostics)
 *	  duration_ms: 1.68
 *	  error: 'connection refused'
 *	  ...
 *	#   Failed test 'suite'			(comments, Test::More)
 *	1..1
 *
 * The id is the description ("#N" when there is none). A subtest's points
 * come before the point that closes it, so they are held until then and
 * named "parent > child": the parent's description is the only name TAP is
 * sure to give (the "# Subtest:" comment is optional). prove -v prefixes
 * each file's stream with "file .. "; then ids are "file > description",
 * as numbering and descriptions restart per file. summary_total is the sum
 * of the top-level plans (or prove's "Tests=N"): it counts top-level
 * points, while subtests are results of their own. A point that node's
 * TAP marks "type: 'suite'" (a describe block) is no result: node counts
 * its tests, not its suites. */
#include "buildconf.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>

#include "runner.h"

#define SEP		" > "
#define DEPTH_MAX	64
/* An id repeats its parents' titles, so nesting multiplies the input: ids
 * are cut at this many bytes (a long title stays whole; a long title
 * times 64 levels does not). */
#define ID_MAX		(8 * 1024)
#define PENDING_MAX	(1024 * 1024)

struct tap_point {
	char		*name;		/* its own description */
	long		 parent;	/* the point that closed it, -1 */
	int		 depth;
	int		 outcome;
	int64_t		 duration_us;
	struct flaky_buf msg;
	int		 suite;		/* node's describe: no result */
};

struct tap_state {
	struct tap_point *v;			/* held until depth 0 closes */
	size_t		 n, cap;
	unsigned	 count[DEPTH_MAX];	/* points per level, for "#N" */
	char		*file;			/* prove's current file */
	long		 last;			/* diagnostics go here */
	int		 yaml;			/* in a YAML block */
	size_t		 yaml_indent;
	int		 yaml_key;		/* in a block scalar we keep */
	size_t		 key_indent;
	long		 plans;			/* sum of top-level plans */
	int		 prove_total;		/* "Tests=N" seen */
	/* The stream of one file (prove) or the whole stream: its plan (-1
	 * none yet) and top-level points, checked when it ends. */
	long		 seg_plan, seg_points;
	long		 points;		/* top-level points in all */
	char		*bailed;		/* "Bail out!" line, or NULL */
};

/* "ok", "not ok" at the start: the length of the keyword, or 0. */
static size_t
point_word(const char *s, size_t len, int *ok)
{
	size_t	 n;

	if (parse_starts(s, len, "ok")) {
		*ok = 1;
		n = 2;
	} else if (parse_starts(s, len, "not ok")) {
		*ok = 0;
		n = 6;
	} else
		return 0;
	if (n < len && s[n] != ' ')
		return 0;
	return n;
}

/* "1..N": N, or -1. */
static long
plan_line(const char *s, size_t len)
{
	long	 n = 0;
	size_t	 i;

	if (!parse_starts(s, len, "1.."))
		return -1;
	for (i = 3; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		if ((n = n * 10 + (s[i] - '0')) > 100000000L)
			return -1;
	if (i == 3 || (i < len && s[i] != ' '))
		return -1;
	return n;
}

/* At d[k], the "(0x5651af129de8)" of a Perl reference as it prints
 * (CODE, HASH, ARRAY, GLOB, SCALAR, REF, Regexp, IO, after a type name or
 * a class's "Foo=HASH"): its length, else 0. */
static size_t
perl_address(const char *d, size_t n, size_t k)
{
	static const char *const types[] = { "CODE", "HASH", "ARRAY", "GLOB",
	    "SCALAR", "REF", "Regexp", "IO", "LVALUE", "VSTRING", "FORMAT" };
	size_t	 j = k + 3, t;

	if (n - k < 5 || memcmp(d + k, "(0x", 3) != 0)
		return 0;
	for (t = 0; t < FLAKY_ARRAY_SIZE(types); t++) {
		size_t	 l = strlen(types[t]);

		if (k >= l && memcmp(d + k - l, types[t], l) == 0)
			break;
	}
	if (t == FLAKY_ARRAY_SIZE(types))
		return 0;
	while (j < n && ((d[j] >= '0' && d[j] <= '9') ||
	    (d[j] >= 'a' && d[j] <= 'f')))
		j++;
	return j > k + 3 && j < n && d[j] == ')' ? j + 1 - k : 0;
}

/* prove's "t/x.t .. " header: the file, or NULL. */
static const char *
prove_header(const char *s, size_t len, size_t *ret_len)
{
	size_t	 i;

	while (len > 0 && s[len - 1] == ' ')
		len--;
	if (len < 4 || memcmp(s + len - 2, "..", 2) != 0)
		return NULL;
	for (i = len - 2; i > 0 && s[i - 1] == '.'; i--)
		;
	if (i < 2 || s[i - 1] != ' ' || memchr(s, ' ', i - 1) != NULL ||
	    s[0] == '#' || s[0] == ' ')
		return NULL;
	*ret_len = i - 1;
	return s;
}

/* "TAP version", prove's "Files=3, Tests=9" and a numbered test point at
 * the margin ("ok 1", "not ok 12 - x") are certain; other points and
 * plans are a maybe. go's "ok  \tpkg" is not a point. */
static int
detect(const char *line, size_t len)
{
	size_t	 i = parse_indent(line, len), w;
	int	 ok;

	if (parse_starts(line, len, "TAP version 1") ||
	    (parse_starts(line, len, "Files=") &&
	    memmem(line, len, ", Tests=", 8)))
		return 2;
	if ((w = point_word(line + i, len - i, &ok)) > 0) {
		if (i == 0 && w + 1 < len && line[w] == ' ' &&
		    line[w + 1] >= '0' && line[w + 1] <= '9')
			return 2;
		if (memchr(line + i, '\t', len - i) != NULL)
			return 0;
		return 1;
	}
	if (plan_line(line, len) >= 0)
		return 1;
	return 0;
}

/* The state for one stream. */
static int
init(struct parse_ctx *ctx)
{
	struct tap_state	*st;

	if ((st = calloc(1, sizeof *st)) == NULL)
		return -ENOMEM;
	st->last = -1;
	st->seg_plan = -1;
	ctx->state = st;
	return 0;
}

/* The full id: the descriptions of the closing points, outermost first,
 * bounded like a line (cut at a UTF-8 character boundary). */
static void
full_name(struct tap_state *st, size_t i, struct flaky_buf *b)
{
	long	 chain[DEPTH_MAX + 1];
	int	 n = 0;

	flaky_buf_reset(b);
	for (long k = (long)i; k >= 0 && n <= DEPTH_MAX; k = st->v[k].parent)
		chain[n++] = k;
	while (n-- > 0 && b->len < ID_MAX) {
		flaky_buf_adds(b, st->v[chain[n]].name);
		if (n > 0)
			flaky_buf_adds(b, SEP);
	}
	if (b->len > ID_MAX && !b->oom) {
		size_t	 k = ID_MAX;

		while (k > 0 && ((unsigned char)b->data[k] & 0xc0) == 0x80)
			k--;
		b->len = k;
		b->data[k] = '\0';
	}
}

/* Hand the first `upto` held points to the results, in the order they were
 * printed; the rest (the point whose diagnostics may still come) stays. */
static int
flush(struct parse_ctx *ctx, struct tap_state *st, size_t upto)
{
	struct flaky_buf	 name;
	int			 e = 0;

	flaky_buf_init(&name);
	for (size_t i = 0; i < upto; i++) {
		struct tap_point	*p = &st->v[i];
		long			 idx;

		if (p->suite)
			continue;
		if (e == 0) {
			full_name(st, i, &name);
			if (p->msg.oom || name.oom)
				e = -ENOMEM;
		}
		if (e == 0 && (idx = parse_add(ctx, name.data, name.len,
		    p->outcome, p->duration_us)) < 0)
			e = (int)idx;
		if (e == 0 && p->msg.len > 0 &&
		    (p->outcome == FLAKY_FAIL || p->outcome == FLAKY_XFAIL))
			e = parse_message(ctx, idx, p->msg.data, p->msg.len);
	}
	for (size_t i = 0; i < upto; i++) {
		free(st->v[i].name);
		flaky_buf_free(&st->v[i].msg);
	}
	if (upto > 0 && st->n > upto)
		memmove(st->v, st->v + upto, (st->n - upto) * sizeof *st->v);
	st->n -= upto;
	for (size_t i = 0; i < st->n; i++)
		st->v[i].parent = -1;	/* only a top-level point stays */
	st->last = st->n > 0 ? (long)st->n - 1 : -1;
	if (st->n == 0)
		st->yaml = st->yaml_key = 0;
	flaky_buf_free(&name);
	return e;
}

/* One test point at this depth; s starts after "ok"/"not ok". */
static int
point(struct parse_ctx *ctx, struct tap_state *st, int depth, int ok,
    const char *s, size_t len)
{
	struct flaky_buf	 name;
	struct tap_point	*p;
	const char		*d, *dir = NULL;
	size_t			 i = 0, dl;
	unsigned long		 num = 0;
	int			 have_num = 0, outcome;

	while (i < len && s[i] == ' ')
		i++;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		have_num = 1;
		if (num < 100000000UL)
			num = num * 10 + (unsigned long)(s[i] - '0');
	}
	while (i < len && s[i] == ' ')
		i++;
	if (i < len && s[i] == '-' && (i + 1 == len || s[i + 1] == ' '))
		for (i++; i < len && s[i] == ' '; i++)
			;
	d = s + i;
	dl = len - i;
	/* The description ends at an unescaped "#": the directive. */
	for (size_t k = 0; k < dl; k++)
		if (d[k] == '#' && (k == 0 || d[k - 1] != '\\')) {
			dir = d + k + 1;
			dl = k;
			break;
		}
	while (dl > 0 && d[dl - 1] == ' ')
		dl--;
	outcome = ok ? FLAKY_PASS : FLAKY_FAIL;
	if (dir != NULL) {
		while (*dir == ' ')
			dir++;
		if (strncasecmp(dir, "skip", 4) == 0)
			outcome = FLAKY_SKIP;
		else if (strncasecmp(dir, "todo", 4) == 0)
			outcome = ok ? FLAKY_XPASS : FLAKY_XFAIL;
	}
	if (depth < DEPTH_MAX) {
		st->count[depth]++;
		if (depth + 1 < DEPTH_MAX)
			st->count[depth + 1] = 0;
	}
	flaky_buf_init(&name);
	if (depth == 0 && st->file != NULL) {
		flaky_buf_adds(&name, st->file);
		flaky_buf_adds(&name, SEP);
	}
	if (dl > 0) {
		/* "\#" is an escaped "#"; a Perl reference's address changes
		 * from run to run: "CODE(0x5651af129de8)" is "CODE(0x...)". */
		for (size_t k = 0; k < dl; k++) {
			size_t	 a = perl_address(d, dl, k);

			if (a > 0) {
				flaky_buf_adds(&name, "(0x...)");
				k += a - 1;
			} else if (!(d[k] == '\\' && k + 1 < dl &&
			    (d[k + 1] == '#' || d[k + 1] == '\\')))
				flaky_buf_addc(&name, d[k]);
			else
				flaky_buf_addc(&name, d[++k]);
		}
	} else
		flaky_buf_printf(&name, "#%lu", have_num ? num :
		    (unsigned long)st->count[depth < DEPTH_MAX ? depth : 0]);
	if (name.oom)
		goto oom;
	if (st->n >= PENDING_MAX) {
		flaky_buf_free(&name);
		return 0;
	}
	/* The points held at a deeper level without a parent yet are this
	 * one's subtests (their own subtests already have one). */
	for (size_t k = st->n; k-- > 0 && st->v[k].depth > depth;)
		if (st->v[k].parent < 0)
			st->v[k].parent = (long)st->n;
	if (st->n == st->cap) {
		size_t	 cap = st->cap ? st->cap * 2 : 32;

		if ((p = realloc(st->v, cap * sizeof *p)) == NULL)
			goto oom;
		st->v = p;
		st->cap = cap;
	}
	if (depth == 0) {
		st->seg_points++;
		st->points++;
	}
	p = &st->v[st->n];
	memset(p, 0, sizeof *p);
	p->name = flaky_buf_steal(&name);
	p->parent = -1;
	p->depth = depth;
	p->outcome = outcome;
	p->duration_us = -1;
	st->last = (long)st->n++;
	/* What came before is complete now: the previous top-level point
	 * with its diagnostics, and this one's subtests. This one waits for
	 * its own YAML block and comments. */
	if (depth == 0)
		return flush(ctx, st, st->n - 1);
	return 0;
oom:
	flaky_buf_free(&name);
	return -ENOMEM;
}

/* Where diagnostics go: the point just printed, or NULL. */
static struct flaky_buf *
last_msg(struct tap_state *st)
{
	if (st->last >= 0 && (size_t)st->last < st->n)
		return &st->v[st->last].msg;
	return NULL;
}

/* A YAML line: duration_ms and the error/message keys. */
static int
yaml_line(struct parse_ctx *ctx, struct tap_state *st, const char *s,
    size_t len, size_t ind, struct flaky_buf *msg, int64_t *dur)
{
	const char	*v;
	size_t		 vl;

	(void)ctx;
	if (st->yaml_key) {
		if (ind > st->key_indent || ind == len) {
			if (msg != NULL)
				parse_msg_line(msg, s + (ind < len ? ind : len),
				    len - (ind < len ? ind : len));
			return 0;
		}
		st->yaml_key = 0;
	}
	s += ind;
	len -= ind;
	/* node's TAP marks a describe block: a suite is no test (as node
	 * counts them), its points stay its tests' parents */
	if (parse_starts(s, len, "type: 'suite'") && st->last >= 0 &&
	    (size_t)st->last < st->n) {
		st->v[st->last].suite = 1;
		return 0;
	}
	if (parse_starts(s, len, "duration_ms: ")) {
		double	 ms = strtod(s + 13, NULL);

		if (ms >= 0 && ms < 1e12 && dur != NULL)
			*dur = (int64_t)(ms * 1000.0 + 0.5);
		return 0;
	}
	if (parse_starts(s, len, "error: "))
		v = s + 7;
	else if (parse_starts(s, len, "message: "))
		v = s + 9;
	else
		return 0;
	vl = len - (size_t)(v - s);
	if (vl > 0 && (v[0] == '|' || v[0] == '>')) {
		st->yaml_key = 1;
		st->key_indent = ind;
		return 0;
	}
	if (vl >= 2 && (v[0] == '\'' || v[0] == '"') && v[vl - 1] == v[0]) {
		v++;
		vl -= 2;
	}
	if (msg != NULL)
		parse_msg_line(msg, v, vl);
	return 0;
}

/* The stream of one file (or the whole stream) ended: did it have all
 * the points its plan announced? */
static int
segment_end(struct parse_ctx *ctx, struct tap_state *st)
{
	const char	*f = st->file != NULL ? st->file : "the stream";
	int		 e = 0;

	if (st->seg_plan < 0 && st->seg_points > 0)
		e = parse_incomplete(ctx, "the TAP of %s ended without its "
		    "plan (1..N): it was killed or stopped early", f);
	else if (st->seg_plan >= 0 && st->seg_points > st->seg_plan)
		e = parse_incomplete(ctx, "the TAP plan of %s announced %ld "
		    "tests, %ld were reported: more than planned (the plan "
		    "is wrong, or another stream mixed in)", f, st->seg_plan,
		    st->seg_points);
	else if (st->seg_plan >= 0 && st->seg_points != st->seg_plan)
		e = parse_incomplete(ctx, "the TAP plan of %s announced %ld "
		    "tests, %ld were reported: the run stopped early", f,
		    st->seg_plan, st->seg_points);
	st->seg_plan = -1;
	st->seg_points = 0;
	return e;
}

/* One line of a TAP stream. */
static int
line(struct parse_ctx *ctx, const char *s, size_t len)
{
	struct tap_state	*st = ctx->state;
	struct flaky_buf	*msg = last_msg(st);
	size_t			 ind = parse_indent(s, len), fl;
	const char		*t = s + ind, *f;
	size_t			 tl = len - ind;
	long			 plan;
	int			 ok;
	size_t			 w;

	if (st->yaml) {
		if (ind == st->yaml_indent && tl == 3 &&
		    memcmp(t, "...", 3) == 0) {
			st->yaml = st->yaml_key = 0;
			return 0;
		}
		return yaml_line(ctx, st, s, len, ind, msg,
		    st->last >= 0 ? &st->v[st->last].duration_us : NULL);
	}
	if (tl == 3 && memcmp(t, "---", 3) == 0 && st->last >= 0) {
		st->yaml = 1;
		st->yaml_indent = ind;
		return 0;
	}
	if ((w = point_word(t, tl, &ok)) > 0) {
		/* prove's own "ok" after a file whose plan is complete is its
		 * verdict on the file, not a test. */
		if (ind == 0 && st->file != NULL && ok && st->seg_plan >= 0 &&
		    st->seg_points >= st->seg_plan)
			return 0;
		return point(ctx, st, ind / 4 < DEPTH_MAX ? (int)(ind / 4) :
		    DEPTH_MAX - 1, ok, t + w, tl - w);
	}
	if (ind == 0 && parse_starts(t, tl, "Bail out!") &&
	    st->bailed == NULL) {
		if ((st->bailed = flaky_strndup(t, tl < 200 ? tl : 200)) ==
		    NULL)
			return -ENOMEM;
		return 0;
	}
	if (t[0] == '#' && tl > 0) {
		/* Diagnostics right after a failed point are its message. */
		if (msg != NULL && st->v[st->last].outcome != FLAKY_PASS &&
		    !parse_starts(t, tl, "# Subtest") &&
		    !parse_starts(t, tl, "# Looks like")) {
			t++;
			tl--;
			while (tl > 0 && *t == ' ')
				t++, tl--;
			parse_msg_line(msg, t, tl);
			return msg->oom ? -ENOMEM : 0;
		}
		st->last = -1;
		return 0;
	}
	st->last = -1;
	if (ind == 0 && (plan = plan_line(t, tl)) >= 0) {
		int	 e;

		if ((e = flush(ctx, st, st->n)) < 0)
			return e;
		st->plans += plan;
		if (st->seg_plan < 0)
			st->seg_plan = plan;
		if (!st->prove_total)
			ctx->res->summary_total = st->plans;
		return 0;
	}
	if (ind == 0 && parse_starts(t, tl, "Files=") &&
	    (f = strstr(t, ", Tests=")) != NULL) {
		ctx->res->summary_total = strtol(f + 8, NULL, 10);
		st->prove_total = 1;
		return 0;
	}
	if (ind == 0 && (f = prove_header(t, tl, &fl)) != NULL) {
		int	 e;

		if ((e = flush(ctx, st, st->n)) < 0 ||
		    (e = segment_end(ctx, st)) < 0)
			return e;
		free(st->file);
		if ((st->file = flaky_strndup(f, fl)) == NULL)
			return -ENOMEM;
	}
	return 0;
}

/* End of output: subtests whose parent never closed (a cut-off run)
 * still count. */
static int
finish(struct parse_ctx *ctx)
{
	struct tap_state	*st = ctx->state;
	int			 e;

	/* Subtests whose parent never closed (a cut-off run) still count. */
	if ((e = flush(ctx, st, st->n)) < 0)
		return e;
	if (st->bailed != NULL && (e = parse_incomplete(ctx, "the TAP "
	    "producer bailed out (%s): the run stopped early", st->bailed)) < 0)
		return e;
	if ((e = segment_end(ctx, st)) < 0)
		return e;
	if (st->prove_total && ctx->res->summary_total != st->points)
		return parse_incomplete(ctx, "prove counts %ld tests (Tests=), "
		    "%ld were parsed: run it with -v", ctx->res->summary_total,
		    st->points);
	return 0;
}

/* Free the state; NULL is fine. */
static void
tap_free(struct parse_ctx *ctx)
{
	struct tap_state	*st = ctx->state;

	if (st == NULL)
		return;
	for (size_t i = 0; i < st->n; i++) {
		free(st->v[i].name);
		flaky_buf_free(&st->v[i].msg);
	}
	free(st->v);
	free(st->file);
	free(st->bailed);
	free(st);
	ctx->state = NULL;
}

const struct runner runner_tap = {
	.name = "tap",
	.detect = detect,
	.line = line,
	.init = init,
	.finish = finish,
	.free = tap_free,
};
