/* Jest (29) output -> results.
 *
 * Jest reports on stderr, one block per test file, each printed whole when
 * the file finishes (so several workers never interleave inside a block):
 *
 *	FAIL tests/b.test.js
 *	  describe
 *	    ✓ passes (5 ms)		(--verbose, or a run of one file)
 *	    ✕ fails (3 ms)
 *	    ○ skipped title
 *	    ✎ todo title
 *
 *	  ● describe › fails		(one block per failed test)
 *
 *	    message, code frame, "at" lines
 *
 * then "Summary of all failing tests" (a repeat of the blocks, skipped here)
 * when many files ran, then "Seed:", "Tests: ... N total". The test id is
 * "file › describe › test": the nesting of the verbose tree comes from its
 * indentation, that of a failure block from its title. Without --verbose Jest
 * names failing tests only; those are all we emit (with a warning), never
 * invented passes. */
#include "buildconf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

#define SEP		" \xe2\x80\xba "	/* " › " as Jest prints it */
/* An id repeats its parents' titles, so nesting multiplies the input: ids
 * are cut at this many bytes (a long title stays whole; a long title
 * times 64 levels does not). */
#define ID_MAX		(8 * 1024)
#define DEPTH_MAX	64			/* describe nesting kept */

enum jest_mode {
	M_NONE,		/* before the first file, or between files */
	M_TREE,		/* after "PASS file": the verbose tree */
	M_BLOCK,	/* inside a "●" failure block */
	M_SUMMARY,	/* "Summary of all failing tests", until the totals */
};

struct jest_state {
	struct flaky_buf	 clean;		/* the line without colours */
	struct flaky_buf	 id;		/* scratch for test ids */
	char			*file;		/* the current test file */
	size_t			 file_start;	/* its first result */
	enum jest_mode		 mode;
	long			 block;		/* result of the "●" block, -1 */
	int			 block_at;	/* its "at" line was kept */
	struct {
		int		 indent;
		char		*title;
	}			 stack[DEPTH_MAX];
	int			 depth;
	unsigned		 nfiles;
	unsigned		 nverbose;	/* verbose test lines seen */
	unsigned		 nsuite;	/* files that failed to run */
	unsigned		 ntotals;	/* "Tests: ... N total" lines */
	long			 nskipped;	/* their skipped and todo */
	/* What cut the run short: "Test Suites: ... 1 of 4 total" (--bail),
	 * a test's process.exit; NULL when nothing did. */
	char			*stopped;
	/* Jest's "process.exit called with ..." and the file of the first
	 * "at" line of its block, which names where the exit was. */
	char			*exit_what;
	char			*exit_file;
	int			 in_exit;
};

/* Copy a line into b without ANSI escape sequences (FORCE_COLOR output). */
static const char *
strip_ansi(struct flaky_buf *b, const char *s, size_t len, size_t *ret_len)
{
	size_t	 i = 0;

	flaky_buf_reset(b);
	while (i < len) {
		size_t	 j = i;

		while (j < len && s[j] != '\033')
			j++;
		flaky_buf_add(b, s + i, j - i);
		if (j >= len)
			break;
		/* ESC [ params final, or ESC and one more byte. */
		if (j + 1 < len && s[j + 1] == '[') {
			j += 2;
			while (j < len && !(s[j] >= 0x40 && s[j] <= 0x7e))
				j++;
			j++;
		} else
			j += 2;
		i = j;
	}
	*ret_len = b->len;
	return b->oom ? NULL : flaky_buf_cstr(b);
}

/* Ids are bounded like lines; cut at a UTF-8 character boundary. */
static void
id_bound(struct flaky_buf *b)
{
	size_t	 n = b->len;

	if (n <= ID_MAX)
		return;
	n = ID_MAX;
	while (n > 0 && ((unsigned char)b->data[n] & 0xc0) == 0x80)
		n--;
	b->len = n;
	b->data[n] = '\0';
}

/* Whether s (len bytes) ends with suffix. */
static int
ends(const char *s, size_t len, const char *suffix)
{
	size_t	 n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* The digits at the start of s (n bytes): how many, at most 12. */
static size_t
digits(const char *s, size_t n)
{
	size_t	 i = 0;

	while (i < n && i < 12 && s[i] >= '0' && s[i] <= '9')
		i++;
	return i;
}

/* What Jest prints in a file's parentheses when it ran slowly: "5.2 s"
 * (Jest 26 on) or "5.617s" (Jest 25 and before). */
static int
file_time(const char *s, size_t n)
{
	size_t	 i = digits(s, n);

	if (i == 0)
		return 0;
	if (i < n && s[i] == '.') {
		size_t	 f = digits(s + i + 1, n - i - 1);

		if (f == 0)
			return 0;
		i += 1 + f;
	}
	if (i < n && s[i] == ' ')
		i++;
	return (n - i == 1 && s[i] == 's') ||
	    (n - i == 2 && s[i] == 'm' && s[i + 1] == 's');
}

/* "PASS path" / "FAIL path": the path, or NULL. Jest may add the
 * project's displayName before the path (kept: the same file can run in
 * two projects) and " (5.2 s, 40 MB heap size)" or, before Jest 26,
 * " (5.617s)" after it (dropped: it changes from run to run). */
static const char *
file_line(const char *s, size_t len, size_t *ret_len)
{
	size_t	 i = parse_indent(s, len), j;

	if (i > 1 || (!parse_starts(s + i, len - i, "PASS ") &&
	    !parse_starts(s + i, len - i, "FAIL ")))
		return NULL;
	i += 5;
	while (i < len && s[i] == ' ')
		i++;
	while (len > i && s[len - 1] == ' ')
		len--;
	if (len > i + 4 && s[len - 1] == ')') {
		for (j = len - 1; j > i && s[j] != '('; j--)
			;
		if (j > i + 1 && s[j - 1] == ' ' && (file_time(s + j + 1,
		    len - j - 2) || ends(s, len, " heap size)")))
			len = j - 1;
	}
	/* Vitest's " FAIL  file > test" and " FAIL  file [ file ]" are
	 * no Jest file. */
	if (len <= i || memchr(s + i, '\t', len - i) != NULL ||
	    memchr(s + i, '.', len - i) == NULL ||
	    memmem(s + i, len - i, " > ", 3) != NULL ||
	    (len - i > 2 && memcmp(s + len - 2, " ]", 2) == 0))
		return NULL;
	*ret_len = len - i;
	return s + i;
}

/* "Tests:       1 failed, 5 passed, 6 total": the total, or -1. */
static long
totals_line(const char *s, size_t len)
{
	const char	*p;
	long		 n = 0;

	if (!parse_starts(s, len, "Tests:") || len < 6 ||
	    (p = strstr(s, " total")) == NULL || (size_t)(p - s) + 6 != len)
		return -1;
	while (p > s && p[-1] >= '0' && p[-1] <= '9')
		p--;
	for (; *p >= '0' && *p <= '9' && n < 1000000000L; p++)
		n = n * 10 + (*p - '0');
	return n;
}

/* A file header or the totals line is certain; a failure title or a tick
 * mark is a maybe. */
static int
detect(const char *line, size_t len)
{
	struct flaky_buf	 b;
	const char		*s;
	size_t			 n, fl;
	int			 v = 0;

	flaky_buf_init(&b);
	if ((s = strip_ansi(&b, line, len, &n)) == NULL)
		goto out;
	if (file_line(s, n, &fl) != NULL || totals_line(s, n) >= 0 ||
	    parse_starts(s, n, "Test Suites: "))
		v = 2;
	else if (parse_starts(s, n, "  \xe2\x97\x8f ") ||
	    strstr(s, "\xe2\x9c\x93 ") != NULL ||
	    strstr(s, "\xe2\x9c\x95 ") != NULL)
		v = 1;
out:
	flaky_buf_free(&b);
	return v;
}

/* The state for one stream. */
static int
init(struct parse_ctx *ctx)
{
	struct jest_state	*st;

	if ((st = calloc(1, sizeof *st)) == NULL)
		return -ENOMEM;
	st->block = -1;
	ctx->state = st;
	return 0;
}

/* Leave the describe blocks indented at or beyond indent. */
static void
pop_to(struct jest_state *st, int indent)
{
	while (st->depth > 0 && st->stack[st->depth - 1].indent >= indent)
		free(st->stack[--st->depth].title);
}

/* Start the id with the file: "file › " (or nothing without a file). */
static void
id_start(struct jest_state *st)
{
	flaky_buf_reset(&st->id);
	if (st->file != NULL) {
		flaky_buf_adds(&st->id, st->file);
		flaky_buf_adds(&st->id, SEP);
	}
}

/* A new file block; the path is made relative to the run's directory when
 * Jest printed it absolute. */
static int
new_file(struct parse_ctx *ctx, struct jest_state *st, const char *p,
    size_t n)
{
	size_t	 rl;

	if (p[0] == '/' && ctx->rundir != NULL &&
	    (rl = strlen(ctx->rundir)) > 0 && n > rl + 1 &&
	    memcmp(p, ctx->rundir, rl) == 0) {
		if (ctx->rundir[rl - 1] != '/' && p[rl] == '/')
			rl++;
		if (p[rl - 1] == '/') {
			p += rl;
			n -= rl;
		}
	}
	free(st->file);
	if ((st->file = flaky_strndup(p, n)) == NULL)
		return -ENOMEM;
	st->file_start = ctx->res->n;
	st->mode = M_TREE;
	st->block = -1;
	pop_to(st, 0);
	st->nfiles++;
	return 0;
}

/* " (5 ms)" (Jest 26 on) or " (5ms)" at the end of a run test's line:
 * the duration in µs, and *tl cut before it; -1 when there is none. */
static int64_t
tree_duration(const char *t, size_t *tl)
{
	size_t	 n = *tl, j, d;
	int64_t	 ms = 0;

	if (n < 6 || memcmp(t + n - 3, "ms)", 3) != 0)
		return -1;
	j = n - 3;
	if (t[j - 1] == ' ')
		j--;
	for (d = 0; j > 0 && d < 12 && t[j - 1] >= '0' && t[j - 1] <= '9';
	    d++)
		j--;
	if (d == 0 || d == 12 || j < 2 || t[j - 1] != '(' || t[j - 2] != ' ')
		return -1;
	for (size_t k = j; k < j + d; k++)
		ms = ms * 10 + (t[k] - '0');
	*tl = j - 2;
	return ms * 1000;
}

/* "skipped 3 tests" (or "skipped 1 test"): Jest 23 and before print the
 * skipped tests of a describe block as one count, without their titles. */
static int
skipped_count(const char *t, size_t tl)
{
	size_t	 d;

	if (!parse_starts(t, tl, "skipped "))
		return 0;
	t += 8;
	tl -= 8;
	if ((d = digits(t, tl)) == 0 || d == 12)
		return 0;
	t += d;
	tl -= d;
	return (tl == 5 && memcmp(t, " test", 5) == 0) ||
	    (tl == 6 && memcmp(t, " tests", 6) == 0);
}

/* A verbose test line: "✓ title (5 ms)" and friends. 1 if it was one.
 * Skipped tests are "○ skipped title" (Jest 24 on), "○ title" (with
 * --expand) or, up to Jest 23, one "○ skipped 3 tests" for a block,
 * which names no test: Jest's own count of skipped tests covers them. */
static int
tree_test(struct parse_ctx *ctx, struct jest_state *st, const char *s,
    size_t len, int indent, int *err)
{
	static const struct {
		const char	*mark;
		int		 outcome;
	} marks[] = {
		{ "\xe2\x9c\x93 ", FLAKY_PASS },		/* ✓ */
		{ "\xe2\x9c\x95 ", FLAKY_FAIL },		/* ✕ */
		{ "\xe2\x9c\x8e todo ", FLAKY_SKIP },		/* ✎ */
		{ "\xe2\x97\x8b ", FLAKY_SKIP },		/* ○ */
	};
	const char	*t = s + indent;
	size_t		 tl = len - (size_t)indent;
	int64_t		 dur = -1;
	size_t		 i;
	long		 idx;

	for (i = 0; i < FLAKY_ARRAY_SIZE(marks); i++)
		if (parse_starts(t, tl, marks[i].mark))
			break;
	if (i == FLAKY_ARRAY_SIZE(marks))
		return 0;
	t += strlen(marks[i].mark);
	tl -= strlen(marks[i].mark);
	if (marks[i].outcome == FLAKY_SKIP && i == 3) {
		if (skipped_count(t, tl))
			return 1;
		if (parse_starts(t, tl, "skipped ")) {
			t += 8;
			tl -= 8;
		}
	}
	/* The duration is only printed on run tests. */
	if (marks[i].outcome <= FLAKY_FAIL)
		dur = tree_duration(t, &tl);
	pop_to(st, indent);
	id_start(st);
	for (int d = 0; d < st->depth; d++) {
		flaky_buf_adds(&st->id, st->stack[d].title);
		flaky_buf_adds(&st->id, SEP);
	}
	flaky_buf_add(&st->id, t, tl);
	if (st->id.oom)
		return *err = -ENOMEM, 1;
	id_bound(&st->id);
	idx = parse_add(ctx, st->id.data, st->id.len, marks[i].outcome, dur);
	if (idx < 0)
		return *err = (int)idx, 1;
	st->nverbose++;
	return 1;
}

/* Note what stopped the run, once. */
static int	 stopped(struct jest_state *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static int
stopped(struct jest_state *st, const char *fmt, ...)
{
	struct flaky_buf	 b;
	va_list			 ap;

	if (st->stopped != NULL)
		return 0;
	flaky_buf_init(&b);
	va_start(ap, fmt);
	flaky_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	st->stopped = flaky_buf_steal(&b);
	return st->stopped == NULL ? -ENOMEM : 0;
}

/* The counts of a summary line: "Tests:       1 failed, 2 skipped,
 * 1 todo, 5 passed, 9 total", "Test Suites: 1 failed, 1 of 4 total". */
struct counts {
	long	 listed;	/* the sum of the items before the total */
	long	 skipped;	/* skipped and todo */
	long	 done, of;	/* "1 of 4 total", or -1 */
};

/* Read a summary line's items; 0 when it has none. */
static int
summary_counts(const char *s, size_t len, struct counts *c)
{
	const char	*p = memchr(s, ':', len), *end = s + len;

	c->listed = c->skipped = 0;
	c->done = c->of = -1;
	if (p == NULL)
		return 0;
	for (p++; p < end;) {
		long	 n = 0;

		while (p < end && (*p == ' ' || *p == ','))
			p++;
		if (p == end || *p < '0' || *p > '9')
			return 0;
		for (; p < end && *p >= '0' && *p <= '9'; p++)
			if (n < 1000000000L)
				n = n * 10 + (*p - '0');
		if (p == end || *p++ != ' ')
			return 0;
		if (end - p >= 3 && memcmp(p, "of ", 3) == 0) {
			c->done = n;
			for (p += 3, c->of = 0; p < end && *p >= '0' &&
			    *p <= '9' && c->of < 1000000000L; p++)
				c->of = c->of * 10 + (*p - '0');
			return 1;
		}
		if (end - p >= 5 && memcmp(p, "total", 5) == 0)
			return 1;
		if ((end - p >= 7 && memcmp(p, "skipped", 7) == 0) ||
		    (end - p >= 4 && memcmp(p, "todo", 4) == 0))
			c->skipped += n;
		c->listed += n;
		while (p < end && *p != ',')
			p++;
	}
	return 0;
}

/* "Test Suites: 1 failed, 1 of 4 total": Jest did not run every file
 * (--bail, or the run was interrupted). With -t the files whose tests are
 * all filtered out are "skipped" and the items add up to the total. */
static int
suites_line(struct jest_state *st, const char *s, size_t len)
{
	struct counts	 c;

	if (!parse_starts(s, len, "Test Suites:") ||
	    !summary_counts(s, len, &c) || c.of < 0 || c.listed >= c.of)
		return 0;
	return stopped(st, "Jest ran %ld of %ld test files: it stopped early "
	    "(--bail, or it was interrupted), so the files it did not run "
	    "have no outcome; run it without --bail", c.done, c.of);
}

/* "● title": find the failed test it explains (verbose) or add it. */
static int
block_start(struct parse_ctx *ctx, struct jest_state *st, const char *t,
    size_t tl)
{
	struct flaky_results	*r = ctx->res;
	long			 idx = -1;

	st->mode = M_BLOCK;
	st->block_at = 0;
	st->block = -1;
	st->in_exit = 0;
	/* "●  process.exit called with "1"" (two blanks) is Jest's own
	 * report that a test ended the process; a block before any file is
	 * not a test's either. Neither is made a test. */
	if (tl > 0 && t[0] == ' ') {
		while (tl > 0 && t[0] == ' ')
			t++, tl--;
		if (st->exit_what != NULL)
			return 0;
		st->in_exit = 1;
		st->exit_what = flaky_strndup(t, tl < 200 ? tl : 200);
		return st->exit_what == NULL ? -ENOMEM : 0;
	}
	if (tl == 24 && memcmp(t, "Test suite failed to run", 24) == 0) {
		/* The file could not run: one error result for the file. */
		flaky_buf_reset(&st->id);
		if (st->file != NULL)
			flaky_buf_adds(&st->id, st->file);
		else
			flaky_buf_add(&st->id, t, tl);
		if (st->id.oom)
			return -ENOMEM;
		idx = parse_add(ctx, st->id.data, st->id.len, FLAKY_ERROR, -1);
		st->nsuite++;
		goto found;
	}
	if (st->file == NULL)
		return 0;
	id_start(st);
	flaky_buf_add(&st->id, t, tl);
	if (st->id.oom)
		return -ENOMEM;
	id_bound(&st->id);
	/* Two tests may share a title: take the first unexplained failure. */
	for (size_t i = st->file_start; i < r->n; i++)
		if (r->v[i].outcome == FLAKY_FAIL && r->v[i].message == NULL &&
		    strcmp(r->v[i].test, st->id.data) == 0) {
			idx = (long)i;
			break;
		}
	if (idx < 0)
		idx = parse_add(ctx, st->id.data, st->id.len, FLAKY_FAIL, -1);
found:
	if (idx < 0)
		return (int)idx;
	st->block = idx;
	/* An empty message marks it explained even if no text follows. */
	return parse_message(ctx, idx, "", 0);
}

/* "Object.exit (abort/b.test.js:4:11)" or "abort/b.test.js:4:11": the
 * file where a test called process.exit. */
static int
exit_file(struct jest_state *st, const char *s, size_t n)
{
	const char	*p = memchr(s, '(', n), *e;

	if (p != NULL) {
		n -= (size_t)(p + 1 - s);
		s = p + 1;
	}
	/* path:line:col, the path up to the second colon from the end */
	for (e = s + n; e > s && e[-1] != ':'; e--)
		;
	if (e > s)
		for (e--; e > s && e[-1] != ':'; e--)
			;
	if (e <= s + 1 || memchr(s, ' ', (size_t)(e - 1 - s)) != NULL)
		return 0;
	st->exit_file = flaky_strndup(s, (size_t)(e - 1 - s));
	return st->exit_file == NULL ? -ENOMEM : 0;
}

/* A line of a failure block: keep the message and the first "at" line,
 * drop code frames and the rest of the stack. */
static int
block_line(struct parse_ctx *ctx, struct jest_state *st, const char *s,
    size_t len)
{
	size_t	 i = parse_indent(s, len), j;

	if (st->in_exit && st->exit_file == NULL &&
	    parse_starts(s + i, len - i, "at "))
		return exit_file(st, s + i + 3, len - i - 3);
	if (st->block < 0 || i == len)
		return 0;
	if (parse_starts(s + i, len - i, "at ")) {
		if (st->block_at)
			return 0;
		st->block_at = 1;
		return parse_message(ctx, st->block, s + i, len - i);
	}
	if (st->block_at)
		return 0;
	/* Code frame: "  12 | code", "> 12 | code", "     |    ^". */
	j = i;
	if (j < len && s[j] == '>')
		for (j++; j < len && s[j] == ' '; j++)
			;
	while (j < len && s[j] >= '0' && s[j] <= '9')
		j++;
	while (j < len && s[j] == ' ')
		j++;
	if (j < len && s[j] == '|')
		return 0;
	/* The message itself is indented by four. */
	if (i > 4)
		i = 4;
	return parse_message(ctx, st->block, s + i, len - i);
}

/* One line of Jest's report. */
static int
line(struct parse_ctx *ctx, const char *raw, size_t rawlen)
{
	struct jest_state	*st = ctx->state;
	const char		*s, *p;
	size_t			 len, n, ind;
	long			 total;
	int			 e = 0;

	if ((s = strip_ansi(&st->clean, raw, rawlen, &len)) == NULL)
		return -ENOMEM;
	/* The totals end a run; another may follow in the same stream
	 * ("jest a && jest b"), so counts add up. */
	if ((total = totals_line(s, len)) >= 0) {
		struct counts	 c;

		if (summary_counts(s, len, &c))
			st->nskipped += c.skipped;
		if (st->ntotals++ > 0)
			total += ctx->res->summary_total;
		ctx->res->summary_total = total;
		st->mode = M_NONE;
		st->block = -1;
		return 0;
	}
	if (parse_starts(s, len, "Seed:")) {
		p = s + 5;
		while (*p == ' ')
			p++;
		n = len - (size_t)(p - s);
		if (n > 0 && n < 32)
			return parse_set_seed(ctx, p, n);
		return 0;
	}
	if (parse_starts(s, len, "Summary of all failing tests") ||
	    parse_starts(s, len, "Test Suites:")) {
		st->mode = M_SUMMARY;
		return suites_line(st, s, len);
	}
	if (st->mode == M_SUMMARY)
		return 0;
	if ((p = file_line(s, len, &n)) != NULL)
		return new_file(ctx, st, p, n);
	ind = parse_indent(s, len);
	if (ind == 2 && parse_starts(s + 2, len - 2, "\xe2\x97\x8f "))
		return block_start(ctx, st, s + 6, len - 6);
	/* Console output comes between files ("  console.log", then the
	 * text indented by four): it must not extend a failure message, and
	 * a "✓" in it must not become a test. The verbose tree ends with a
	 * blank line, and console blocks only come after one. */
	if (st->mode == M_BLOCK && ind == 2 &&
	    parse_starts(s + 2, len - 2, "console."))
		st->mode = M_NONE;
	if (st->mode == M_BLOCK)
		return block_line(ctx, st, s, len);
	if (st->mode == M_TREE && ind == len) {
		st->mode = M_NONE;
		return 0;
	}
	if (st->mode != M_TREE || ind < 2)
		return 0;
	if (tree_test(ctx, st, s, len, (int)ind, &e))
		return e;
	/* Anything else indented is a describe title (or console output,
	 * which the next title at its indentation pops again). */
	pop_to(st, (int)ind);
	if (st->depth < DEPTH_MAX) {
		char	*t;

		if ((t = flaky_strndup(s + ind, len - ind)) == NULL)
			return -ENOMEM;
		st->stack[st->depth].indent = (int)ind;
		st->stack[st->depth++].title = t;
	}
	return 0;
}

/* Do the results hold every test Jest counted? Its total counts skipped
 * and todo tests: the verbose tree lists them, but not those of a file
 * whose tests -t filtered out entirely (no outcome lost there). Files
 * that failed to run are not in it (a result each here). */
static int
completeness(struct parse_ctx *ctx, struct jest_state *st)
{
	struct flaky_results	*r = ctx->res;
	long			 have = (long)(r->n - st->nsuite), skips = 0;

	if (st->exit_what != NULL)
		return parse_incomplete(ctx, "a test in %s ended Jest's process "
		    "(%s): the tests after it have no outcome. The test must "
		    "not exit; if the file passes when you run Jest yourself, "
		    "a test may read process.argv, which holds the flags "
		    "flakyctl added (--verbose, --cacheDirectory: "
		    "--no-runner-cache leaves the second out)",
		    st->exit_file != NULL ? st->exit_file : "a file",
		    st->exit_what);
	if (st->stopped != NULL)
		return parse_incomplete(ctx, "%s", st->stopped);
	if (st->ntotals == 0)
		return parse_incomplete(ctx, "the run ended without Jest's "
		    "summary (Tests: N total): it was killed or stopped early");
	for (size_t i = 0; i < r->n; i++)
		skips += r->v[i].outcome == FLAKY_SKIP;
	if (have == r->summary_total || (have < r->summary_total &&
	    r->summary_total - have <= st->nskipped - skips))
		return 0;
	if (st->nverbose == 0 && have < r->summary_total)
		return parse_incomplete(ctx, "Jest printed only failing tests "
		    "(%ld in its summary, %ld parsed): run it with --verbose",
		    r->summary_total, have);
	if (have > r->summary_total)
		return parse_incomplete(ctx, "Jest's summary counts %ld tests, "
		    "%ld were parsed: more than it ran (output of another "
		    "process mixed in, or a line flaky misread); report the "
		    "output to flaky", r->summary_total, have);
	return parse_incomplete(ctx, "Jest's summary counts %ld tests, %ld "
	    "were reported: the run stopped early", r->summary_total, have);
}

/* End of output: warn when Jest named the failures only. */
static int
finish(struct parse_ctx *ctx)
{
	struct jest_state	*st = ctx->state;
	struct flaky_results	*r = ctx->res;
	int			 e;

	if ((e = completeness(ctx, st)) < 0)
		return e;
	/* Files that failed to run are results but not in Jest's count. */
	if (st->nverbose > 0 || st->nfiles == 0 ||
	    (r->summary_total >= 0 &&
	    (long)(r->n - st->nsuite) >= r->summary_total))
		return 0;
	free(r->warning);
	r->warning = strdup("Jest listed failing tests only (not --verbose): "
	    "passing tests are not listed; run Jest with --verbose for "
	    "per-test evidence");
	return r->warning == NULL ? -ENOMEM : 0;
}

/* Free the state; NULL is fine. */
static void
jest_free(struct parse_ctx *ctx)
{
	struct jest_state	*st = ctx->state;

	if (st == NULL)
		return;
	pop_to(st, 0);
	flaky_buf_free(&st->clean);
	flaky_buf_free(&st->id);
	free(st->file);
	free(st->stopped);
	free(st->exit_what);
	free(st->exit_file);
	free(st);
	ctx->state = NULL;
}

const struct runner runner_jest = {
	.name = "jest",
	.detect = detect,
	.init = init,
	.line = line,
	.finish = finish,
	.free = jest_free,
};
