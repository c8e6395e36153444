/* Vitest (3 and 4) output -> results.
 *
 * The verbose reporter (--reporter=verbose) names every test as it ends:
 *
 *	 RUN  v3.2.7 /home/me/shop
 *	 ✓ test/cart.test.js > cart > adds items 21ms
 *	 × test/cart.test.js > cart > checkout > pays 10ms
 *	   → expected { v: 1 } to deeply equal { v: 2 }
 *	 ↓ test/cart.test.js > cart > refunds
 *	 Test Files  1 failed | 1 passed (2)
 *	      Tests  1 failed | 5 passed | 1 skipped (7)
 *
 * Vitest 4 may add ":line:col" to the file (includeTaskLocation), "|name| "
 * before it (a project), " (retry x2)" and " 12 MB heap used" after the
 * duration. The default reporter prints one line per file and names only
 * the tests of a file that failed (and slow ones), without the file:
 *
 *	 ❯ test/cart.test.js (4 tests | 1 failed | 1 skipped) 41ms
 *	   ✓ cart > adds items 22ms
 *	   × cart > checkout > pays 15ms
 *	     → expected { v: 1 } to deeply equal { v: 2 }
 *	 ✓ test/search.test.js (3 tests) 2ms
 *
 * The test id is "file > describe > test" as the verbose reporter prints
 * it. Vitest writes the details of failures ("Failed Tests", " FAIL  id")
 * to stderr: in a merged stream they replace the short message of their
 * test, and a " FAIL  file [ file ]" of "Failed Suites" (a file that
 * failed to load, a hook outside a test) is an error result for the
 * file; on its own (stderr parsed apart) that output is no runner's. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

#define SEP		" > "

#define M_CHECK		"\xe2\x9c\x93"		/* ✓ */
#define M_CROSS		"\xc3\x97"		/* × */
#define M_DOWN		"\xe2\x86\x93"		/* ↓ */
#define M_POINTER	"\xe2\x9d\xaf"		/* ❯ */
#define M_RIGHT		"\xe2\x86\x92"		/* → */
#define M_RULE		"\xe2\x8e\xaf"		/* ⎯ */

enum vitest_mode {
	V_TESTS,	/* test lines and their "→" messages */
	V_DETAIL,	/* a " FAIL  id" block of the failures' details */
	V_DONE,		/* after the summary */
};

struct vitest_state {
	struct flaky_buf	 clean;
	struct flaky_buf	 id;
	struct parse_ids	 ids;
	enum vitest_mode	 mode;
	char			*file;		/* the default reporter's */
	long			 last;		/* "→" lines go to it, -1 */
	long			 detail;	/* the result of a block, -1 */
	int			 detail_new;	/* its message not yet reset */
	unsigned		 nverbose;	/* tests named with a file */
	unsigned		 nplain;	/* tests under a file line */
	unsigned		 nsuite;	/* files that failed alone */
	unsigned		 ntotals;	/* "Tests  N" lines */
	long			 files_failed;	/* "Test Files  N failed" */
};

/* The line's marker among those given: its length, else 0. */
static size_t
marker(const char *s, size_t n, const char *const *marks, size_t nmarks,
    size_t *which)
{
	for (size_t i = 0; i < nmarks; i++) {
		size_t	 l = strlen(marks[i]);

		if (n > l && memcmp(s, marks[i], l) == 0 && s[l] == ' ') {
			*which = i;
			return l + 1;
		}
	}
	return 0;
}

/* The count in "... (7)" at the end of a summary line, or -1. */
static long
summary_total(const char *s, size_t n)
{
	const char	*in;
	size_t		 il, k;
	long		 v = 0;

	if (!parse_cut_paren(s, &n, &in, &il) || il == 0 || il > 9)
		return -1;
	for (k = 0; k < il; k++) {
		if (in[k] < '0' || in[k] > '9')
			return -1;
		v = v * 10 + (in[k] - '0');
	}
	return v;
}

/* "Tests  1 failed | 5 passed (7)" and "Test Files  ...": which, or 0. */
static int
summary_line(const char *s, size_t n, long *total)
{
	size_t	 i = parse_indent(s, n);

	if ((*total = summary_total(s, n)) < 0)
		return 0;
	if (parse_starts(s + i, n - i, "Test Files  "))
		return 'F';
	if (parse_starts(s + i, n - i, "Tests  "))
		return 'T';
	return 0;
}

/* " RUN  v3.2.7 /root" and the summary lines are certain; a verbose test
 * line (" ✓ file > name") is a maybe. */
static int
score(const char *s, size_t n)
{
	static const char *const marks[] = { M_CHECK, M_CROSS };
	size_t		 k, w;
	long		 t;

	if ((parse_starts(s, n, " RUN  v") && n > 7 && s[7] >= '0' &&
	    s[7] <= '9') || summary_line(s, n, &t))
		return 2;
	return n > 1 && s[0] == ' ' && (k = marker(s + 1, n - 1, marks, 2,
	    &w)) > 0 && memmem(s + 1 + k, n - 1 - k, SEP, 3) != NULL;
}

/* Vitest 4 colours its lines even into a pipe: scored without. */
static int
detect(const char *line, size_t len)
{
	return parse_detect_clean(line, len, score);
}

/* The state for one stream: no test to add "→" lines to yet. */
static int
init(struct parse_ctx *ctx)
{
	struct vitest_state	*st = parse_state(ctx, sizeof *st);

	if (st == NULL)
		return -ENOMEM;
	st->last = st->detail = -1;
	st->files_failed = -1;
	return 0;
}

/* What Vitest appends to a test's name, cut off the end of s[0..*n):
 * " [note]" (a skipped test), " 12 MB heap used", " (repeat x2)",
 * " (retry x2)" (the retries, in *retries), " 21ms" (a run test). */
static int64_t
suffixes(const char *s, size_t *n, int ran, int *retries)
{
	size_t	 len = *n, j;
	int64_t	 us = -1;
	const char *in;
	size_t	 il;

	*retries = 0;
	if (!ran && len > 2 && s[len - 1] == ']' && (in = memmem(s, len,
	    " [", 2)) != NULL) {
		while ((j = (size_t)(in - s)) + 2 < len &&
		    (in = memmem(s + j + 2, len - j - 2, " [", 2)) != NULL)
			;
		len = j;
	}
	if (len > 13 && memcmp(s + len - 13, " MB heap used", 13) == 0) {
		for (j = len - 13; j > 0 && s[j - 1] >= '0' && s[j - 1] <= '9';
		    j--)
			;
		if (j > 0 && j < len - 13 && s[j - 1] == ' ')
			len = j - 1;
	}
	for (int k = 0; k < 2; k++) {
		size_t	 m = len;

		if (!parse_cut_paren(s, &m, &in, &il) || il < 7)
			break;
		if (memcmp(in, "repeat x", 8) == 0)
			len = m;
		else if (memcmp(in, "retry x", 7) == 0) {
			for (size_t d = 7; d < il && d < 12 &&
			    in[d] >= '0' && in[d] <= '9'; d++)
				*retries = *retries * 10 + (in[d] - '0');
			len = m;
		} else
			break;
	}
	if (ran && len > 3 && s[len - 1] == 's' && s[len - 2] == 'm') {
		for (j = len - 2; j > 0 && s[j - 1] >= '0' && s[j - 1] <= '9';
		    j--)
			;
		if (j > 0 && j < len - 2 && s[j - 1] == ' ') {
			us = parse_duration_us(s + j, len - j);
			len = j - 1;
		}
	}
	*n = len;
	return us;
}

/* "|project| " and Vitest 4's " TS " label before the file: kept in the
 * id (the project; the same file may run in two), dropped (the label). */
static void
labels(struct flaky_buf *id, const char **s, size_t *n)
{
	const char	*p = *s, *e;
	size_t		 len = *n;

	if (len > 2 && p[0] == '|' && (e = memchr(p + 1, '|', len - 1)) !=
	    NULL && (size_t)(e - p) + 1 < len && e[1] == ' ') {
		flaky_buf_add(id, p, (size_t)(e - p) + 2);
		len -= (size_t)(e - p) + 2;
		p = e + 2;
	}
	if (parse_starts(p, len, " TS  ")) {
		p += 5;
		len -= 5;
	}
	*s = p;
	*n = len;
}

/* The file of a verbose id without Vitest 4's ":line:col". */
static void
add_file(struct flaky_buf *id, const char *s, size_t n)
{
	size_t	 e = n, c = 0;

	for (int k = 0; k < 2; k++) {
		size_t	 d = e;

		while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
			d--;
		if (d == e || d < 2 || s[d - 1] != ':')
			break;
		e = d - 1;
		c++;
	}
	flaky_buf_add(id, s, c == 2 ? e : n);
}

/* A test ran, its outcome and retries known: the result, its attempts. */
static int
add_test(struct parse_ctx *ctx, struct vitest_state *st, int outcome,
    int64_t us, int retries)
{
	long	 idx;
	int	 e;

	parse_id_bound(&st->id, PARSE_ID_MAX);
	if (st->id.oom)
		return -ENOMEM;
	/* Passed on a retry: the first attempt failed, and counts. */
	idx = parse_add(ctx, st->id.data, st->id.len, retries > 0 ?
	    FLAKY_FAIL : outcome, us);
	if (idx < 0)
		return (int)idx;
	if ((e = parse_ids_add(&st->ids, ctx->res, (size_t)idx)) < 0)
		return e;
	st->last = outcome == FLAKY_FAIL || retries > 0 ? idx : -1;
	for (int a = 0; a <= retries && retries > 0 && a < 100; a++)
		if ((e = parse_attempt(ctx, idx, a, a == retries ? outcome :
		    FLAKY_FAIL, NULL, 0)) < 0)
			return e;
	if (retries > 0 && outcome == FLAKY_PASS) {
		struct flaky_buf m;

		flaky_buf_init(&m);
		flaky_buf_printf(&m, "failed, then passed on retry %d "
		    "(Vitest's retry)", retries);
		e = m.oom ? -ENOMEM : parse_message(ctx, idx, m.data, m.len);
		flaky_buf_free(&m);
		return e;
	}
	return 0;
}

/* A test line of either reporter (verbose when it names its file): 1 if
 * it was one, with *err set. */
static int
test_line(struct parse_ctx *ctx, struct vitest_state *st, const char *s,
    size_t n, int *err)
{
	static const char *const marks[] = { M_CHECK, M_CROSS, M_DOWN };
	static const int outcomes[] = { FLAKY_PASS, FLAKY_FAIL, FLAKY_SKIP };
	size_t		 i = parse_indent(s, n), k, w;
	int		 retries;
	int64_t		 us;

	if (i == 0 || (k = marker(s + i, n - i, marks, 3, &w)) == 0)
		return 0;
	s += i + k;
	n -= i + k;
	us = suffixes(s, &n, outcomes[w] != FLAKY_SKIP, &retries);
	flaky_buf_reset(&st->id);
	if (i == 1) {
		const char *sep;

		labels(&st->id, &s, &n);
		if ((sep = memmem(s, n, SEP, 3)) == NULL)
			return 0;
		add_file(&st->id, s, (size_t)(sep - s));
		flaky_buf_add(&st->id, sep, n - (size_t)(sep - s));
		st->nverbose++;
	} else {
		if (st->file == NULL)
			return 0;
		flaky_buf_adds(&st->id, st->file);
		flaky_buf_adds(&st->id, SEP);
		flaky_buf_add(&st->id, s, n);
		st->nplain++;
	}
	*err = add_test(ctx, st, outcomes[w], us, retries);
	return 1;
}

/* The default reporter's " ❯ file (4 tests | 1 failed) 41ms": 1 if it was
 * one (the file is kept for the test lines below it). */
static int
file_line(struct vitest_state *st, const char *s, size_t n, int *err)
{
	static const char *const marks[] = { M_CHECK, M_POINTER, M_DOWN };
	struct flaky_buf f;
	const char	*in, *p;
	size_t		 k, w, il;
	int		 retries;

	if (n < 2 || s[0] != ' ' || (k = marker(s + 1, n - 1, marks, 3,
	    &w)) == 0 || memmem(s, n, SEP, 3) != NULL)
		return 0;
	s += 1 + k;
	n -= 1 + k;
	(void)suffixes(s, &n, 1, &retries);
	if (!parse_cut_paren(s, &n, &in, &il) || il < 6 || in[0] < '0' ||
	    in[0] > '9' || (p = memmem(in, il, " test", 5)) == NULL)
		return 0;
	flaky_buf_init(&f);
	labels(&f, &s, &n);
	flaky_buf_add(&f, s, n);
	free(st->file);
	st->file = flaky_buf_steal(&f);
	if (st->file == NULL)
		*err = -ENOMEM;
	return 1;
}

/* " FAIL  id" of the failures' details (in a merged stream): the test it
 * explains; "file [ file ]" of Failed Suites is an error result. */
static int
detail_start(struct parse_ctx *ctx, struct vitest_state *st, const char *s,
    size_t n)
{
	size_t	 pos = 0;
	long	 idx;

	while (n > 0 && s[n - 1] == ' ')
		n--;
	st->detail = -1;
	st->detail_new = 1;
	flaky_buf_reset(&st->id);
	labels(&st->id, &s, &n);
	if (n > 4 && s[n - 1] == ']' && memmem(s, n, " [ ", 3) != NULL) {
		/* a file that failed outside its tests */
		const char *b = memmem(s, n, " [ ", 3);

		flaky_buf_add(&st->id, s, (size_t)(b - s));
		if (st->id.oom)
			return -ENOMEM;
		if (parse_ids_next(&st->ids, ctx->res, st->id.data, st->id.len,
		    &pos) >= 0)
			return 0;
		if ((idx = parse_add(ctx, st->id.data, st->id.len, FLAKY_ERROR,
		    -1)) < 0)
			return (int)idx;
		st->nsuite++;
		st->detail = idx;
		return parse_ids_add(&st->ids, ctx->res, (size_t)idx);
	}
	flaky_buf_add(&st->id, s, n);
	if (st->id.oom)
		return -ENOMEM;
	parse_id_bound(&st->id, PARSE_ID_MAX);
	while ((idx = parse_ids_next(&st->ids, ctx->res, st->id.data,
	    st->id.len, &pos)) >= 0)
		if (FLAKY_FAILED(ctx->res->v[idx].outcome)) {
			st->detail = idx;
			break;
		}
	return 0;
}

/* A line of a details block: the error and its diff replace the short
 * message, up to the " ❯ file:line:col" that says where (kept). */
static int
detail_line(struct parse_ctx *ctx, struct vitest_state *st, const char *s,
    size_t n)
{
	struct flaky_result *r;
	size_t	 i = parse_indent(s, n);
	int	 where;

	if (st->detail < 0)
		return 0;
	r = &ctx->res->v[st->detail];
	if (st->detail_new) {
		if (i == n)
			return 0;
		free(r->message);
		r->message = NULL;
		st->detail_new = 0;
	}
	where = parse_starts(s + i, n - i, M_POINTER " ");
	if (i == n && (r->message == NULL || *r->message == '\0'))
		return 0;
	if (parse_message(ctx, st->detail, s, n) < 0)
		return -ENOMEM;
	if (where)
		st->detail = -1;
	return 0;
}

/* One line of Vitest's output. */
static int
line(struct parse_ctx *ctx, const char *raw, size_t rawlen)
{
	struct vitest_state	*st = ctx->state;
	const char		*s = raw, *p;
	size_t			 n = rawlen, i;
	long			 total;
	int			 e = 0, which;

	if (parse_strip_colour(&st->clean, &s, &n) < 0)
		return -ENOMEM;
	i = parse_indent(s, n);
	if (parse_starts(s, n, " RUN  v")) {
		for (p = s + 7; p < s + n && *p != ' '; p++)
			;
		st->mode = V_TESTS;
		st->last = -1;
		if (p - s - 7 > 0 && p - s - 7 < 32)
			return parse_set_version(ctx, s + 7,
			    (size_t)(p - s - 7));
		return 0;
	}
	if ((p = memmem(s, n, "Running tests with seed \"", 25)) != NULL) {
		const char *q = p + 25, *end = memchr(q, '"', n - (size_t)(q -
		    s));

		if (end != NULL && end > q && end - q < 32)
			return parse_set_seed(ctx, q, (size_t)(end - q));
		return 0;
	}
	if ((which = summary_line(s, n, &total)) != 0) {
		if (which == 'T') {
			if (st->ntotals++ > 0)
				total += ctx->res->summary_total;
			ctx->res->summary_total = total;
			st->mode = V_DONE;
		} else {
			const char *f = memmem(s, n, " failed", 7);
			long	 v = 0, m = 1;

			/* the number before " failed" */
			for (; f != NULL && f > s && f[-1] >= '0' &&
			    f[-1] <= '9' && m < 1000000000L; f--, m *= 10)
				v += (f[-1] - '0') * m;
			st->files_failed = v + (st->files_failed > 0 ?
			    st->files_failed : 0);
		}
		return 0;
	}
	/* The failures' details: a rule names the section, " FAIL  id"
	 * opens a block (in a merged stream, or stderr alone). */
	if (parse_starts(s, n, M_RULE)) {
		st->mode = V_DETAIL;
		st->detail = -1;
		return 0;
	}
	if (st->mode == V_DETAIL) {
		if (parse_starts(s, n, " FAIL  "))
			return detail_start(ctx, st, s + 7, n - 7);
		return detail_line(ctx, st, s, n);
	}
	if (st->mode == V_DONE)
		return 0;
	if (file_line(st, s, n, &e) || test_line(ctx, st, s, n, &e))
		return e;
	if (st->last >= 0 && i >= 3 && parse_starts(s + i, n - i, M_RIGHT " "))
		return parse_message(ctx, st->last, s + i + 4, n - i - 4);
	if (i < n)
		st->last = -1;
	return 0;
}

/* Comparison of two strings for qsort. */
static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files with a failed result: how many distinct. */
static long
failing_files(const struct flaky_results *r, long *ret)
{
	char	**v;
	size_t	 n = 0;
	long	 distinct = 0;

	if ((v = calloc(r->n + 1, sizeof *v)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++) {
		const char *t = r->v[i].test, *sep;

		if (!FLAKY_FAILED(r->v[i].outcome))
			continue;
		sep = strstr(t, SEP);
		if ((v[n++] = sep ? flaky_strndup(t, (size_t)(sep - t)) :
		    strdup(t)) == NULL) {
			distinct = -ENOMEM;
			goto out;
		}
	}
	qsort(v, n, sizeof *v, cmp_str);
	for (size_t i = 0; i < n; i++)
		distinct += i == 0 || strcmp(v[i], v[i - 1]) != 0;
out:
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	*ret = distinct;
	return distinct < 0 ? distinct : 0;
}

/* Do the results hold every test Vitest counted? */
static int
finish(struct parse_ctx *ctx)
{
	struct vitest_state	*st = ctx->state;
	struct flaky_results	*r = ctx->res;
	long			 have = (long)(r->n - st->nsuite), files;
	int			 e;

	if (st->ntotals == 0)
		return parse_incomplete(ctx, "the run ended without Vitest's "
		    "summary (Tests  N): it was killed or stopped early");
	if (st->nverbose == 0 && have < r->summary_total)
		return parse_incomplete(ctx, "Vitest printed only the tests of "
		    "failing files (%ld in its summary, %ld parsed): run it "
		    "with --reporter=verbose", r->summary_total, have);
	if (have != r->summary_total)
		return parse_incomplete(ctx, "Vitest's summary counts %ld "
		    "tests, %ld were parsed: %s", r->summary_total, have,
		    have < r->summary_total ? "the run stopped early" :
		    "more than it ran (output of another process mixed in); "
		    "report the output to flaky");
	if ((e = failing_files(r, &files)) < 0)
		return e;
	if (st->files_failed > files)
		return parse_incomplete(ctx, "Vitest counts %ld failed test "
		    "files, %ld had a failing test: a file failed to load or "
		    "a hook failed outside its tests, and the tests it holds "
		    "have no outcome (its error is under \"Failed Suites\" on "
		    "Vitest's stderr)", st->files_failed, files);
	return 0;
}

/* Free the state; NULL is fine. */
static void
vitest_free(struct parse_ctx *ctx)
{
	struct vitest_state	*st = ctx->state;

	if (st == NULL)
		return;
	flaky_buf_free(&st->clean);
	flaky_buf_free(&st->id);
	parse_ids_free(&st->ids);
	free(st->file);
	free(st);
	ctx->state = NULL;
}

const struct runner runner_vitest = {
	.name = "vitest",
	.detect = detect,
	.init = init,
	.line = line,
	.finish = finish,
	.free = vitest_free,
};
