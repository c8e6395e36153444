/* pytest output -> results.
 *
 * pytest names its tests in three places, and a run may use any mix of them:
 * the -v lines ("path::test STATUS [ 10%]", or "[gw0] [ 10%] STATUS path::test"
 * under pytest-xdist), the "short test summary info" section (-rA, or the
 * default -rfE that names only failures) and the FAILURES / ERRORS sections,
 * whose blocks are headed by a short name ("TestA.test_b[1]") and carry the
 * traceback. A -v line gives the position; a summary line adds the message
 * and names tests no -v line named; the blocks give the best message and are
 * matched to results at the end, when every name is known. A test is counted
 * once however many of these name it. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pytest.h"

static const struct {
	const char	*word;
	size_t		 len;
	int		 outcome;
} words[] = {
	{ "PASSED", 6, FLAKY_PASS },
	{ "FAILED", 6, FLAKY_FAIL },
	{ "ERROR", 5, FLAKY_ERROR },
	{ "SKIPPED", 7, FLAKY_SKIP },
	{ "XFAIL", 5, FLAKY_XFAIL },
	{ "XPASS", 5, FLAKY_XPASS },
};

/* The status word that starts s, -1 if none; *wl gets its length. */
int
pytest_word_at(const char *s, size_t n, size_t *wl)
{
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(words); i++)
		if (n >= words[i].len && memcmp(s, words[i].word,
		    words[i].len) == 0) {
			*wl = words[i].len;
			return words[i].outcome;
		}
	return -1;
}

/*
 * The length of s without a trailing progress mark and blanks: "[ 10%]",
 * or "[ 3/29]" with console_output_style=count. pytest puts a blank before
 * it; a parametrized id ("test[5%]") has none.
 */
static size_t
strip_progress(const char *s, size_t n)
{
	size_t	 i;
	int	 digit = 0;

	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n < 4 || s[n - 1] != ']')
		return n;
	for (i = n - 1; i > 0 && s[i - 1] != '['; i--) {
		char	 c = s[i - 1];

		if (pytest_digit(c))
			digit = 1;
		else if (c != ' ' && c != '%' && c != '/')
			return n;
	}
	if (i < 2 || !digit || s[i - 2] != ' ')
		return n;
	n = i - 1;
	while (n > 0 && s[n - 1] == ' ')
		n--;
	return n;
}

static long	 find_status(const char *, size_t, size_t, int *);

/*
 * Where the node id at the start of s ends, 0 if s does not start with one.
 * A node id is PATH::name(::name)* with an optional [parameters] part; for
 * Python files names are identifiers (or dotted, for doctests), so the end is
 * certain up to the parameters, whose brackets are balanced in practice.
 * Other files (plugins' items) may use any name: the rest of s is the id.
 */
size_t
pytest_nodeid_end(const char *s, size_t n)
{
	const char	*p;
	size_t		 i, path;
	int		 depth;

	if (n < 4 || s[0] == ' ' || s[0] == '[')
		return 0;
	if ((p = memmem(s, n, "::", 2)) == NULL || p == s)
		return 0;
	path = (size_t)(p - s);
	if (!(path > 3 && memcmp(p - 3, ".py", 3) == 0)) {
		long	 st;
		int	 o;

		if (memchr(s, ' ', path) != NULL)
			return 0;
		/* Any name: up to the status word or the message. */
		if ((st = find_status(s, n, path, &o)) > 0 && s[st - 1] == ' ')
			return (size_t)st - 1;
		if ((p = memmem(s, n, " - ", 3)) != NULL)
			return (size_t)(p - s);
		return n;
	}
	i = path;
	while (i + 1 < n && s[i] == ':' && s[i + 1] == ':') {
		size_t	 start = i += 2;

		while (i < n && (s[i] == '_' || s[i] == '.' ||
		    pytest_digit(s[i]) ||
		    (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (unsigned char)s[i] >= 0x80))
			i++;
		if (i == start)
			return 0;
	}
	if (i == n || s[i] != '[')
		return i;
	for (depth = 0; i < n; i++) {
		if (s[i] == '[')
			depth++;
		else if (s[i] == ']' && --depth == 0)
			return i + 1;
	}
	/* Unbalanced: the parameters run to the last ']'. */
	for (i = n; i > path; i--)
		if (s[i - 1] == ']')
			return i;
	return n;
}

/*
 * The first status word at or after from that ends the line, alone or with
 * a "(reason)": "PASSED", "SKIPPED (not here)". Returns its position or -1;
 * *outcome gets the outcome.
 */
static long
find_status(const char *s, size_t n, size_t from, int *outcome)
{
	size_t	 wl;
	int	 o;

	for (size_t p = from; p < n; p++) {
		if ((o = pytest_word_at(s + p, n - p, &wl)) < 0)
			continue;
		if (p + wl == n || (p + wl + 2 < n && s[p + wl] == ' ' &&
		    s[p + wl + 1] == '(' && s[n - 1] == ')')) {
			*outcome = o;
			return (long)p;
		}
	}
	return -1;
}

/* The first result (in run order) with this id and none of the flags in
 * skip; -1 if none. */
long
pytest_lookup(struct parse_ctx *ctx, struct pytest *st, const char *s,
    size_t n, unsigned skip)
{
	size_t	 pos = 0;
	long	 i, best = -1;

	while ((i = parse_ids_next(&st->ids, ctx->res, s, n, &pos)) >= 0)
		if ((st->flags[i] & skip) == 0 && (best < 0 || i < best))
			best = i;
	return best;
}

/* Append a result and index it; its index or -ENOMEM. */
long
pytest_add(struct parse_ctx *ctx, struct pytest *st, const char *id,
    size_t n, int outcome)
{
	long	 idx;
	int	 e;

	if ((idx = parse_add(ctx, id, n, outcome, -1)) < 0)
		return idx;
	if ((size_t)idx >= st->nflags) {
		size_t		 cap = st->nflags ? st->nflags * 2 : 64;
		unsigned char	*f;

		while (cap <= (size_t)idx)
			cap *= 2;
		if ((f = realloc(st->flags, cap)) == NULL)
			return -ENOMEM;
		memset(f + st->nflags, 0, cap - st->nflags);
		st->flags = f;
		st->nflags = cap;
	}
	st->flags[idx] = 0;
	if ((e = parse_ids_add(&st->ids, ctx->res, (size_t)idx)) < 0)
		return e;
	return idx;
}

/* A -v (or xdist) line names a test with its outcome. A teardown error
 * prints a second line for a test that passed: it is the same test (the
 * first of that id not already seen twice, for outputs of two runs). */
static int
vresult(struct parse_ctx *ctx, struct pytest *st, const char *id, size_t n,
    int outcome, int soft)
{
	long	 idx;

	if (outcome == FLAKY_ERROR &&
	    (idx = pytest_lookup(ctx, st, id, n, F_TWICE)) >= 0) {
		struct flaky_result *v = &ctx->res->v[idx];

		if (!FLAKY_FAILED(v->outcome))
			v->outcome = FLAKY_ERROR;
		st->flags[idx] |= F_TWICE;
		st->soft = -1;
		return 0;
	}
	if ((idx = pytest_add(ctx, st, id, n, outcome)) < 0)
		return (int)idx;
	st->nverbose++;
	st->soft = soft ? idx : -1;
	return 0;
}

/* Version and seeds, wherever they appear in the header. */
static int
header_line(struct parse_ctx *ctx, const char *s, size_t n)
{
	static const char *const seeds[] = {
		"Using --random-order-seed=", "Using --randomly-seed=",
	};
	const char	*p;
	size_t		 i;

	if (parse_starts(s, n, "platform ") &&
	    (p = memmem(s, n, ", pytest-", 9)) != NULL) {
		p += 9;
		for (i = 0; p + i < s + n && p[i] != ',' && p[i] != ' '; i++)
			;
		if (i > 0 && i < 64)
			return parse_set_version(ctx, p, i);
		return 0;
	}
	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(seeds); k++) {
		size_t	 l = strlen(seeds[k]);

		if (!parse_starts(s, n, seeds[k]))
			continue;
		for (i = l; i < n && s[i] != ' '; i++)
			;
		if (i > l && i - l < 64)
			return parse_set_seed(ctx, s + l, i - l);
	}
	return 0;
}

/* "==== title ====": the title's bounds, or 0 when s is no such line. */
static int
section_title(const char *s, size_t n, size_t *a, size_t *b)
{
	size_t	 i = 0, j = n;

	while (i < n && s[i] == '=')
		i++;
	while (j > i && s[j - 1] == '=')
		j--;
	if (i == 0 || j == n || j < i + 3 || s[i] != ' ' || s[j - 1] != ' ')
		return 0;
	*a = i + 1;
	*b = j - 1;
	return 1;
}

/* A line outside the sections with blocks: -v and xdist lines, -s output. */
static int
run_line(struct parse_ctx *ctx, struct pytest *st, const char *s, size_t n)
{
	size_t	 end, wl;
	long	 p;
	int	 o;

	/* "[gw0] [ 50%] PASSED tests/test_x.py::test_a" */
	if (parse_starts(s, n, "[gw")) {
		size_t	 i = 3;

		while (i < n && pytest_digit(s[i]))
			i++;
		if (i == 3 || !parse_starts(s + i, n - i, "] "))
			return 0;
		st->xdist = 1;
		i += 2;
		if (i < n && s[i] == '[') {
			while (i < n && s[i] != ']')
				i++;
			i++;
			while (i < n && s[i] == ' ')
				i++;
		}
		if (i >= n || (o = pytest_word_at(s + i, n - i, &wl)) < 0 ||
		    i + wl >= n || s[i + wl] != ' ')
			return 0;
		i += wl + 1;
		if (pytest_nodeid_end(s + i, n - i) == 0)
			return 0;
		return vresult(ctx, st, s + i, n - i, o, 0);
	}
	if (parse_starts(s, n, "scheduling tests via ") ||
	    (parse_starts(s, n, "gw0 ") && memmem(s, n, " / gw1", 6) != NULL))
		st->xdist = 1;
	n = strip_progress(s, n);
	end = pytest_nodeid_end(s, n);
	if (end == 0) {
		/* --timeout-method=thread ends the process with this. */
		if (st->pending && n > 20 && s[0] == '+' && s[n - 1] == '+' &&
		    memmem(s, n, "+ Timeout +", 11) != NULL)
			st->pend_timeout = 1;
		/* The test's own output, or the status after it. */
		if ((p = find_status(s, n, 0, &o)) < 0)
			return 0;
		if (st->pending) {
			st->pending = 0;
			return vresult(ctx, st, st->pend_id.data,
			    st->pend_id.len, o, p > 0);
		}
		if (p == 0 && st->soft >= 0) {
			ctx->res->v[st->soft].outcome = o;
			st->soft = -1;
		}
		return 0;
	}
	/* xdist prints the id alone when a test starts: not a result. */
	if (st->xdist)
		return 0;
	st->pending = 0;
	if ((p = find_status(s, n, end, &o)) >= 0) {
		size_t	 q = (size_t)p;

		if (q == end + 1 && s[end] == ' ')
			return vresult(ctx, st, s, end, o, 0);
		/* "path::test <- base.py PASSED": inherited from elsewhere. */
		if (q > end + 4 && parse_starts(s + end, n - end, " <- ") &&
		    memchr(s + end + 4, ' ', q - end - 5) == NULL)
			return vresult(ctx, st, s, end, o, 0);
		/* Output between the id and the status. */
		return vresult(ctx, st, s, end, o, 1);
	}
	/* "path::test hello from the test": the status comes later. Not
	 * after the run: the warnings summary lists bare ids. */
	if (st->section != S_RUN)
		return 0;
	flaky_buf_reset(&st->pend_id);
	flaky_buf_add(&st->pend_id, s, end);
	if (st->pend_id.oom)
		return -ENOMEM;
	st->pending = 1;
	st->pend_timeout = 0;
	return 0;
}

/* The lines pytest prints when it stops before any test, the reason into
 * st->stop: a plugin's INTERNALERROR (its last line), a conftest that
 * cannot be imported (its exception's "E" line), a usage error, a path
 * not found. 1 when s was one of them, -ENOMEM. */
static int
stop_line(struct pytest *st, const char *s, size_t n)
{
	static const char conftest[] = "ImportError while loading conftest '";
	struct flaky_buf *b = &st->stop;

	if (parse_starts(s, n, "INTERNALERROR> ")) {
		flaky_buf_reset(b);
		flaky_buf_printf(b, "stopped with an internal error: %.*s",
		    (int)(n - 15), s + 15);
	} else if (parse_starts(s, n, conftest)) {
		flaky_buf_reset(b);
		flaky_buf_printf(b, "could not import conftest '%.*s",
		    (int)(n - (sizeof conftest - 1)), s + sizeof conftest - 1);
		while (b->len > 0 && b->data[b->len - 1] == '.')
			b->data[--b->len] = '\0';	/* its sentence's end */
		st->conftest = b->len;
	} else if (st->conftest > 0 && n > 4 && memcmp(s, "E   ", 4) == 0) {
		b->data[b->len = st->conftest] = '\0';
		flaky_buf_printf(b, ": %.*s", (int)(n - 4), s + 4);
	} else if (parse_starts(s, n, "pytest: error: ") ||
	    (parse_starts(s, n, "ERROR: ") && !parse_starts(s, n,
	    "ERROR: usage: "))) {
		size_t	 k = s[0] == 'p' ? 15 : 7;

		flaky_buf_reset(b);
		flaky_buf_printf(b, "stopped: %.*s", (int)(n - k), s + k);
	} else
		return 0;
	return b->oom ? -ENOMEM : 1;
}

/* One line of pytest output: find its section, hand it on. */
static int
line(struct parse_ctx *ctx, const char *s, size_t n)
{
	struct pytest	*st = ctx->state;
	size_t		 a, b;
	long		 total;
	int		 e;

	if ((e = parse_strip_colour(&st->clean, &s, &n)) < 0)
		return e;
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if ((e = header_line(ctx, s, n)) < 0)
		return e;
	if ((e = stop_line(st, s, n)) != 0)
		return e < 0 ? e : 0;
	if (section_title(s, n, &a, &b)) {
		st->conftest = 0;
		const char	*t = s + a;
		size_t		 tl = b - a;
		enum section	 next = st->section == S_RUN ? S_RUN : S_OTHER;

		if ((total = pytest_final_counts(t, tl)) >= 0) {
			pytest_add_total(ctx, st, total);
			next = S_OTHER;
		} else if (tl == 8 && memcmp(t, "FAILURES", 8) == 0)
			next = S_FAILURES;
		else if (tl == 6 && memcmp(t, "ERRORS", 6) == 0)
			next = S_ERRORS;
		else if (tl == 6 && memcmp(t, "PASSES", 6) == 0)
			next = S_PASSES;
		else if (tl == 23 && memcmp(t, "short test summary info",
		    23) == 0)
			next = S_SUMMARY;
		else if (tl == 16 && memcmp(t, "warnings summary", 16) == 0)
			/* after the run, even a green one: its bare ids
			 * are the tests that warned, not tests starting */
			next = S_WARNINGS;
		else if (tl == 19 && memcmp(t, "test session starts", 19) == 0)
			next = S_RUN;
		else if (parse_starts(t, tl, "slowest ") && tl >= 17 &&
		    memcmp(t + tl - 10, " durations", 10) == 0)
			next = S_DURATIONS;
		if (next != S_RUN && next != S_OTHER)
			st->pending = 0;
		if ((e = pytest_end_block(st)) < 0)
			return e;
		st->section = next;
		return 0;
	}
	/* -q prints the final counts without the rule. */
	if (n > 0 && pytest_digit(s[0]) &&
	    (total = pytest_final_counts(s, n)) >= 0) {
		pytest_add_total(ctx, st, total);
		st->section = S_OTHER;
		return 0;
	}
	switch (st->section) {
	case S_FAILURES:
	case S_ERRORS:
		return pytest_block_line(st, s, n);
	case S_SUMMARY:
		return pytest_summary_line(ctx, st, s, n);
	case S_PASSES:
	case S_WARNINGS:
		return 0;
	case S_DURATIONS:
		pytest_duration_line(ctx, st, s, n);
		return 0;
	default:
		return run_line(ctx, st, s, n);
	}
}

/* End of output: the last block, then every block to its test. */
static int
finish(struct parse_ctx *ctx)
{
	struct pytest	*st = ctx->state;
	int		 e;

	if ((e = pytest_end_block(st)) < 0)
		return e;
	if (st->pending) {
		/* The run died while this test ran: that is its outcome. */
		static const char timeout[] = "Failed: Timeout (pytest-timeout "
		    "ended the run while this test ran)";
		static const char died[] = "no outcome: the output ended "
		    "while this test ran (killed or crashed)";
		long	 idx;

		st->pending = 0;
		idx = pytest_add(ctx, st, st->pend_id.data, st->pend_id.len,
		    st->pend_timeout ? FLAKY_FAIL : FLAKY_ERROR);
		if (idx < 0)
			return (int)idx;
		if ((e = st->pend_timeout ?
		    parse_message(ctx, idx, timeout, sizeof timeout - 1) :
		    parse_message(ctx, idx, died, sizeof died - 1)) < 0)
			return e;
	}
	if ((e = pytest_match_blocks(ctx, st)) < 0)
		return e;
	if (st->stop.len > 0 && ctx->res->n == 0 &&
	    ctx->res->warning == NULL) {
		/* pytest stopped before any test: why, not "no test result" */
		if (st->stop.len > 300)
			st->stop.data[st->stop.len = 300] = '\0';
		ctx->res->warning = flaky_buf_steal(&st->stop);
	}
	return pytest_completeness(ctx, st);
}

/* The state of one pytest output. */
static int
init(struct parse_ctx *ctx)
{
	struct pytest	*st;

	if ((st = calloc(1, sizeof *st)) == NULL)
		return -ENOMEM;
	st->soft = -1;
	ctx->state = st;
	return 0;
}

/* Free the state; the results belong to the parser. */
static void
state_free(struct parse_ctx *ctx)
{
	struct pytest	*st = ctx->state;

	if (st == NULL)
		return;
	for (size_t i = 0; i < st->nblocks; i++) {
		free(st->blocks[i].title);
		free(st->blocks[i].msg);
	}
	free(st->blocks);
	flaky_buf_free(&st->btitle);
	flaky_buf_free(&st->bmsg);
	flaky_buf_free(&st->blast);
	flaky_buf_free(&st->bloc);
	flaky_buf_free(&st->btail);
	flaky_buf_free(&st->clean);
	flaky_buf_free(&st->pend_id);
	flaky_buf_free(&st->stop);
	free(st->flags);
	parse_ids_free(&st->ids);
	free(st);
	ctx->state = NULL;
}

/* 2 for lines only pytest prints, 1 for lines that look like its -v. */
static int
detect(const char *s, size_t n)
{
	size_t	 a, b, wl;

	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\r'))
		n--;
	if (section_title(s, n, &a, &b)) {
		/* -q prints no header: its FAILURES come first. */
		if ((b - a == 19 && memcmp(s + a, "test session starts",
		    19) == 0) || (b - a == 23 && memcmp(s + a,
		    "short test summary info", 23) == 0) ||
		    (b - a == 8 && memcmp(s + a, "FAILURES", 8) == 0) ||
		    (b - a == 6 && memcmp(s + a, "ERRORS", 6) == 0) ||
		    pytest_final_counts(s + a, b - a) >= 0)
			return 2;
		return 0;
	}
	if (parse_starts(s, n, "ImportError while loading conftest '") ||
	    parse_starts(s, n, "ERROR: usage: pytest ") ||
	    parse_starts(s, n, "ERROR: file or directory not found: "))
		return 2;
	if (parse_starts(s, n, "platform ") &&
	    memmem(s, n, " -- Python ", 11) != NULL &&
	    memmem(s, n, ", pytest-", 9) != NULL)
		return 2;
	if (n > 0 && pytest_digit(s[0]) && pytest_final_counts(s, n) > 0)
		return 2;
	if (parse_starts(s, n, "[gw") && memmem(s, n, "::", 2) != NULL)
		return 1;
	n = strip_progress(s, n);
	if ((a = pytest_nodeid_end(s, n)) > 0 && a + 1 < n && s[a] == ' ' &&
	    pytest_word_at(s + a + 1, n - a - 1, &wl) >= 0)
		return 1;
	return 0;
}

const struct runner runner_pytest = {
	.name = "pytest",
	.detect = detect,
	.init = init,
	.line = line,
	.finish = finish,
	.free = state_free,
};
