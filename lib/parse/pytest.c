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
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

enum section {
	S_RUN,		/* the header and the -v lines */
	S_FAILURES,	/* "=== FAILURES ===" blocks */
	S_ERRORS,	/* "=== ERRORS ===" blocks */
	S_PASSES,	/* -rA's captured output of passing tests: ignored */
	S_SUMMARY,	/* "=== short test summary info ===" */
	S_DURATIONS,	/* --durations: "0.50s call     path::test" */
	S_OTHER,	/* warnings, plugins' sections */
};

/* Per-result flags. */
#define F_SUMMARY	0x01	/* a summary line named it already */
#define F_BLOCK		0x02	/* its message comes from a FAILURES block */
#define F_TWICE		0x04	/* pytest counts it twice: it failed or passed,
				 * then errored in teardown */

/* Bounds on what a hostile output can make us keep. */
#define MAX_BLOCKS	32768	/* kept FAILURES blocks (each <= 4 KiB) */
#define MAX_TITLE	2048	/* a longer block title is not kept */
#define MAX_SPLITS	64	/* places tried where a summary id may end */

/* A FAILURES / ERRORS block, kept until every result is known. */
struct block {
	char	*title;		/* short name as in the header */
	char	*msg;
	int	 collect;	/* 1: "ERROR collecting PATH", 2: a crashed
				 * xdist worker; the title is the node id */
};

struct pytest {
	enum section	 section;
	int		 xdist;		/* "[gwN]" lines seen */
	struct flaky_buf clean;		/* the line without ANSI colours */

	/* -s: the test whose status word has not come yet. */
	int		 pending;
	int		 pend_timeout;	/* pytest-timeout's "+++ Timeout +++" */
	struct flaky_buf pend_id;
	/* The result whose status was read glued to the test's own output;
	 * a bare status line right after it corrects it. */
	long		 soft;

	unsigned char	*flags;
	size_t		 nflags;

	/* id -> result index (+1), open addressing; stale slots are harmless
	 * because a hit is always checked against the result's id. */
	uint32_t	*tab;
	size_t		 tabsize, tabused;

	/* The block being read and those read. */
	int		 in_block, captured, tail_broken;
	/* Its "E" lines, last line, "file:line: Error" line, and last run of
	 * unindented lines (the exception of a --tb=native traceback). */
	struct flaky_buf btitle, bmsg, blast, bloc, btail;
	struct block	*blocks;
	size_t		 nblocks, capblocks;

	/* What the completeness check needs: the final counts lines seen,
	 * -v lines, -rA's PASSED lines, and skips -rA counts by place. */
	unsigned	 nfinal;
	size_t		 nverbose, npassed, place_skips;
};

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

/* Does s (n bytes, not NUL-terminated) start with p? */
static int
has_prefix(const char *s, size_t n, const char *p)
{
	size_t	 l = strlen(p);

	return n >= l && memcmp(s, p, l) == 0;
}

/* An ASCII digit, whatever the locale says. */
static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The status word that starts s, -1 if none; *wl gets its length. */
static int
word_at(const char *s, size_t n, size_t *wl)
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

		if (is_digit(c))
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
static size_t
nodeid_end(const char *s, size_t n)
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

		while (i < n && (s[i] == '_' || s[i] == '.' || is_digit(s[i]) ||
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
		if ((o = word_at(s + p, n - p, &wl)) < 0)
			continue;
		if (p + wl == n || (p + wl + 2 < n && s[p + wl] == ' ' &&
		    s[p + wl + 1] == '(' && s[n - 1] == ')')) {
			*outcome = o;
			return (long)p;
		}
	}
	return -1;
}

/* The id table's hash of an id. */
static uint64_t
id_hash(const char *s, size_t n)
{
	uint64_t	 z = flaky_hash64(s, n, FLAKY_HASH_SEED);

	/* FNV's low bits, which pick the slot, differ little between ids
	 * that differ in a digit: mix them (splitmix64's finalizer). */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Is a stored id (a C string) equal to n bytes that may hold a NUL? */
static int
id_eq(const char *test, const char *s, size_t n)
{
	return strnlen(test, n + 1) == n && memcmp(test, s, n) == 0;
}

/* Put result idx in the id table, growing (and so rebuilding) it. */
static int
index_add(struct parse_ctx *ctx, struct pytest *st, size_t idx)
{
	struct flaky_results	*r = ctx->res;
	size_t			 mask, h;

	if ((st->tabused + 1) * 2 > st->tabsize) {
		size_t	  size = st->tabsize ? st->tabsize * 2 : 256;
		uint32_t *t;

		if (size > UINT32_MAX || (t = calloc(size, sizeof *t)) == NULL)
			return -ENOMEM;
		free(st->tab);
		st->tab = t;
		st->tabsize = size;
		st->tabused = 0;
		mask = size - 1;
		for (size_t i = 0; i < r->n; i++) {
			if (i == idx)
				continue;
			h = id_hash(r->v[i].test, strlen(r->v[i].test)) & mask;
			while (st->tab[h] != 0)
				h = (h + 1) & mask;
			st->tab[h] = (uint32_t)i + 1;
			st->tabused++;
		}
	}
	mask = st->tabsize - 1;
	h = id_hash(r->v[idx].test, strlen(r->v[idx].test)) & mask;
	while (st->tab[h] != 0)
		h = (h + 1) & mask;
	st->tab[h] = (uint32_t)idx + 1;
	st->tabused++;
	return 0;
}

/* The first result (in run order) with this id and none of the flags in
 * skip; -1 if none. */
static long
lookup(struct parse_ctx *ctx, struct pytest *st, const char *s, size_t n,
    unsigned skip)
{
	struct flaky_results	*r = ctx->res;
	size_t			 mask, h;
	long			 best = -1;

	if (st->tabsize == 0)
		return -1;
	mask = st->tabsize - 1;
	for (h = id_hash(s, n) & mask; st->tab[h] != 0; h = (h + 1) & mask) {
		size_t	 i = st->tab[h] - 1;

		if (i < r->n && id_eq(r->v[i].test, s, n) &&
		    (st->flags[i] & skip) == 0 && (best < 0 || (long)i < best))
			best = (long)i;
	}
	return best;
}

/* Append a result and index it; its index or -ENOMEM. */
static long
add(struct parse_ctx *ctx, struct pytest *st, const char *id, size_t n,
    int outcome)
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
	if ((e = index_add(ctx, st, (size_t)idx)) < 0)
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
	    (idx = lookup(ctx, st, id, n, F_TWICE)) >= 0) {
		struct flaky_result *v = &ctx->res->v[idx];

		if (!FLAKY_FAILED(v->outcome))
			v->outcome = FLAKY_ERROR;
		st->flags[idx] |= F_TWICE;
		st->soft = -1;
		return 0;
	}
	if ((idx = add(ctx, st, id, n, outcome)) < 0)
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

	if (has_prefix(s, n, "platform ") &&
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

		if (!has_prefix(s, n, seeds[k]))
			continue;
		for (i = l; i < n && s[i] != ' '; i++)
			;
		if (i > l && i - l < 64)
			return parse_set_seed(ctx, s + l, i - l);
	}
	return 0;
}

/*
 * "7 failed, 17 passed, 2 skipped, 1 xfailed, 1 xpassed, 2 errors in 0.54s"
 * (or "no tests ran in 0.01s"), optionally with " (0:01:15)": the number of
 * tests, or -1 when s is not such a line.
 */
static long
final_counts(const char *s, size_t n)
{
	static const char *const counted[] = {
		"failed", "passed", "skipped", "xfailed", "xpassed", "error",
		"errors",
	};
	const char	*in = NULL, *p;
	size_t		 i, m;
	long		 total = 0;

	/* The last " in <digits>[.digits]s" ends the counts. */
	for (p = s; (p = memmem(p, n - (size_t)(p - s), " in ", 4)) != NULL;
	    p += 4) {
		i = (size_t)(p - s) + 4;
		if (i < n && is_digit(s[i]))
			in = p;
	}
	if (in == NULL)
		return -1;
	i = (size_t)(in - s) + 4;
	while (i < n && (is_digit(s[i]) || s[i] == '.'))
		i++;
	if (i >= n || s[i] != 's' ||
	    !(i + 1 == n || has_prefix(s + i + 1, n - i - 1, " (")))
		return -1;
	m = (size_t)(in - s);
	if (m == 12 && memcmp(s, "no tests ran", 12) == 0)
		return 0;
	for (i = 0; i < m;) {
		long	 v = 0;
		size_t	 w;

		if (!is_digit(s[i]))
			return -1;
		while (i < m && is_digit(s[i])) {
			if (v < 100000000)
				v = v * 10 + (s[i] - '0');
			i++;
		}
		if (i >= m || s[i] != ' ')
			return -1;
		w = ++i;
		while (i < m && s[i] >= 'a' && s[i] <= 'z')
			i++;
		if (i == w)
			return -1;
		for (size_t k = 0; k < FLAKY_ARRAY_SIZE(counted); k++)
			if (i - w == strlen(counted[k]) &&
			    memcmp(s + w, counted[k], i - w) == 0)
				total += v;
		/* Plugins' items of more words ("3 subtests passed") are
		 * not pytest's tests. */
		while (i + 1 < m && s[i] == ' ' && s[i + 1] >= 'a' &&
		    s[i + 1] <= 'z')
			for (i++; i < m && s[i] >= 'a' && s[i] <= 'z'; i++)
				;
		if (i == m)
			break;
		if (!has_prefix(s + i, m - i, ", "))
			return -1;
		i += 2;
	}
	return total;
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

/* "____ TestA.test_b[1] ____": the title's bounds, or 0. */
static int
block_title(const char *s, size_t n, size_t *a, size_t *b)
{
	size_t	 i = 0, j = n;
	int	 real = 0;

	while (i < n && s[i] == '_')
		i++;
	while (j > i && s[j - 1] == '_')
		j--;
	if (i == 0 || j == n || j < i + 3 || s[i] != ' ' || s[j - 1] != ' ')
		return 0;
	/* "_ _ _ _" separates the parts of a long traceback. */
	for (size_t k = i + 1; k < j - 1; k++)
		if (s[k] != '_' && s[k] != ' ')
			real = 1;
	if (!real)
		return 0;
	*a = i + 1;
	*b = j - 1;
	return 1;
}

/* "src/x.py:14: AssertionError": where the traceback ended and what. */
static int
is_location(const char *s, size_t n)
{
	const char	*p;
	size_t		 i;

	if (n == 0 || s[0] == ' ' || (p = memmem(s, n, ": ", 2)) == NULL)
		return 0;
	i = (size_t)(p - s);
	if (memchr(s, ' ', i) != NULL || i < 3 || !is_digit(s[i - 1]))
		return 0;
	while (i > 0 && is_digit(s[i - 1]))
		i--;
	if (i < 2 || s[i - 1] != ':')
		return 0;
	i = (size_t)(p - s) + 2;
	if (i >= n || has_prefix(s + i, n - i, "in "))
		return 0;
	return memchr(s + i, ' ', n - i) == NULL;
}

/* Append one line to a message buffer, keeping the message bound. */
static void
msg_line(struct flaky_buf *b, const char *s, size_t n)
{
	if (b->len >= FLAKY_MESSAGE_MAX)
		return;
	if (n > FLAKY_MESSAGE_MAX - b->len)
		n = FLAKY_MESSAGE_MAX - b->len;
	if (b->len > 0)
		flaky_buf_addc(b, '\n');
	flaky_buf_add(b, s, n);
}

/* The current block is complete: keep its decisive lines for later. */
static int
end_block(struct pytest *st)
{
	struct flaky_buf	 m;
	struct block		*b;
	const char		*t;
	size_t			 tl;
	int			 collect = 0;

	if (!st->in_block)
		return 0;
	st->in_block = 0;
	if (st->nblocks >= MAX_BLOCKS || st->btitle.len == 0)
		return 0;
	flaky_buf_init(&m);
	if (st->bmsg.len > 0)
		flaky_buf_add(&m, st->bmsg.data, st->bmsg.len);
	else if (st->btail.len > 0)
		flaky_buf_add(&m, st->btail.data, st->btail.len);
	else if (st->blast.len > 0)
		flaky_buf_add(&m, st->blast.data, st->blast.len);
	if (st->bloc.len > 0)
		msg_line(&m, st->bloc.data, st->bloc.len);
	if (m.oom || st->btitle.oom || st->bmsg.oom)
		goto oom;
	if (st->nblocks == st->capblocks) {
		size_t	 cap = st->capblocks ? st->capblocks * 2 : 16;

		if ((b = realloc(st->blocks, cap * sizeof *b)) == NULL)
			goto oom;
		st->blocks = b;
		st->capblocks = cap;
	}
	t = st->btitle.data ? st->btitle.data : "";
	tl = st->btitle.len;
	if (has_prefix(t, tl, "ERROR at setup of ")) {
		t += 18;
		tl -= 18;
	} else if (has_prefix(t, tl, "ERROR at teardown of ")) {
		t += 21;
		tl -= 21;
	} else if (has_prefix(t, tl, "ERROR collecting ")) {
		t += 17;
		tl -= 17;
		collect = 1;
	} else if (has_prefix(t, tl, "[doctest] ")) {
		t += 10;
		tl -= 10;
	}
	/* pytest-xdist: "worker 'gw1' crashed while running 'path::test'" */
	if (!collect && memmem(t, tl, "::", 2) == NULL && st->blast.len > 0 &&
	    has_prefix(st->blast.data, st->blast.len, "worker '")) {
		const char	*p = memmem(st->blast.data, st->blast.len,
		    "crashed while running '", 23);

		if (p != NULL && st->blast.data[st->blast.len - 1] == '\'') {
			t = p + 23;
			tl = (size_t)(st->blast.data + st->blast.len - 1 - t);
			collect = 2;
		}
	}
	b = &st->blocks[st->nblocks];
	if ((b->title = flaky_strndup(t, tl)) == NULL)
		goto oom;
	b->msg = flaky_buf_steal(&m);
	b->collect = collect;
	st->nblocks++;
	flaky_buf_free(&m);
	return 0;
oom:
	flaky_buf_free(&m);
	return -ENOMEM;
}

/* A line inside a FAILURES or ERRORS section. */
static int
block_line(struct pytest *st, const char *s, size_t n)
{
	size_t	 a, b;
	int	 e;

	if (block_title(s, n, &a, &b)) {
		if ((e = end_block(st)) < 0)
			return e;
		st->in_block = 1;
		st->captured = 0;
		flaky_buf_reset(&st->btitle);
		flaky_buf_reset(&st->bmsg);
		flaky_buf_reset(&st->blast);
		flaky_buf_reset(&st->bloc);
		flaky_buf_reset(&st->btail);
		st->tail_broken = 0;
		/* A cut title would match no test: keep none. */
		if (b - a <= MAX_TITLE)
			flaky_buf_add(&st->btitle, s + a, b - a);
		return st->btitle.oom ? -ENOMEM : 0;
	}
	if (!st->in_block || st->captured || n == 0)
		return 0;
	/* "----- Captured stdout call -----" and the like: not the failure. */
	if (s[0] == '-' && n > 2 && s[n - 1] == '-' &&
	    memmem(s, n, " Captured ", 10) != NULL) {
		st->captured = 1;
		return 0;
	}
	if (s[0] == 'E' && (n == 1 || s[1] == ' ')) {
		size_t	 k = 1;

		/* pytest indents "E" lines by 7; keep what is beyond. */
		while (k < n && k < 8 && s[k] == ' ')
			k++;
		msg_line(&st->bmsg, s + k, n - k);
	} else if (is_location(s, n)) {
		flaky_buf_reset(&st->bloc);
		flaky_buf_add(&st->bloc, s, n < 1024 ? n : 1024);
	} else {
		if (s[0] != ' ' || st->blast.len == 0) {
			flaky_buf_reset(&st->blast);
			flaky_buf_add(&st->blast, s, n < 1024 ? n : 1024);
		}
		if (s[0] == ' ')
			st->tail_broken = 1;
		else if (s[0] != '>' && !has_prefix(s, n, "[gw")) {
			if (st->tail_broken)
				flaky_buf_reset(&st->btail);
			st->tail_broken = 0;
			msg_line(&st->btail, s, n);
		}
	}
	return st->bmsg.oom || st->bloc.oom || st->blast.oom ||
	    st->btail.oom ? -ENOMEM : 0;
}

/* "FAILED id - message", "PASSED id", "XPASS id reason": the id's length. */
static size_t
summary_id(struct parse_ctx *ctx, struct pytest *st, const char *s, size_t n,
    int outcome)
{
	const char	*sep = outcome == FLAKY_XPASS ? " " : " - ";
	size_t		 sl = strlen(sep), e;
	const char	*p;
	int		 tries = 0;

	if (lookup(ctx, st, s, n, 0) >= 0)
		return n;
	/* Ids may hold the separator: try the known ids, a few places. */
	for (p = s; tries++ < MAX_SPLITS &&
	    (p = memmem(p, n - (size_t)(p - s), sep, sl)) != NULL; p++)
		if (lookup(ctx, st, s, (size_t)(p - s), 0) >= 0)
			return (size_t)(p - s);
	if ((e = nodeid_end(s, n)) > 0)
		return e;
	if ((p = memmem(s, n, sep, sl)) != NULL)
		return (size_t)(p - s);
	return n;
}

/* One line of the short test summary. */
static int
summary_line(struct parse_ctx *ctx, struct pytest *st, const char *s,
    size_t n)
{
	size_t	 wl, il;
	long	 idx;
	int	 o;

	if ((o = word_at(s, n, &wl)) < 0 || wl >= n || s[wl] != ' ')
		return 0;
	/* "SKIPPED [1] src/x.py:12: reason" names a place, not a test: it
	 * counts the skips there. */
	if (o == FLAKY_SKIP && has_prefix(s + wl, n - wl, " [")) {
		size_t	 k = 0;

		for (size_t i = wl + 2; i < n && is_digit(s[i]) && k < 1000000;
		    i++)
			k = k * 10 + (size_t)(s[i] - '0');
		st->place_skips += k;
		return 0;
	}
	if (o == FLAKY_PASS)
		st->npassed++;
	s += wl + 1;
	n -= wl + 1;
	if (n == 0)
		return 0;
	il = summary_id(ctx, st, s, n, o);
	if (il == 0)
		return 0;
	if ((idx = lookup(ctx, st, s, il, F_SUMMARY)) < 0) {
		if ((idx = lookup(ctx, st, s, il, 0)) < 0) {
			if ((idx = add(ctx, st, s, il, o)) < 0)
				return (int)idx;
		} else if (st->flags[idx] & F_SUMMARY) {
			/* "PASSED t" (or "FAILED t") then "ERROR t": a
			 * teardown error, and pytest counts both. */
			if (FLAKY_FAILED(o) &&
			    !FLAKY_FAILED(ctx->res->v[idx].outcome))
				ctx->res->v[idx].outcome = o;
			st->flags[idx] |= F_TWICE;
		} else if (FLAKY_FAILED(o) &&
		    !FLAKY_FAILED(ctx->res->v[idx].outcome))
			ctx->res->v[idx].outcome = o;
	}
	st->flags[idx] |= F_SUMMARY;
	if (FLAKY_FAILED(o) && ctx->res->v[idx].message == NULL &&
	    has_prefix(s + il, n - il, " - "))
		return parse_message(ctx, idx, s + il + 3, n - il - 3);
	return 0;
}

/* "0.50s call     path::test": --durations adds the phases' times. */
static void
duration_line(struct parse_ctx *ctx, struct pytest *st, const char *s,
    size_t n)
{
	static const char *const phases[] = { "setup", "call", "teardown" };
	int64_t		 us = 0, scale = 1000000;
	size_t		 i = 0;
	long		 idx;
	int		 frac = 0, ok = 0;

	for (; i < n && (is_digit(s[i]) || (s[i] == '.' && !frac)); i++) {
		if (s[i] == '.') {
			frac = 1;
			continue;
		}
		if (us > INT64_MAX / 100)
			return;
		if (!frac)
			us = us * 10 + (s[i] - '0') * 1000000;
		else if (scale > 1) {
			scale /= 10;
			us += (s[i] - '0') * scale;
		}
	}
	if (i == 0 || !has_prefix(s + i, n - i, "s "))
		return;
	i += 2;
	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(phases); k++)
		if (has_prefix(s + i, n - i, phases[k])) {
			i += strlen(phases[k]);
			ok = 1;
			break;
		}
	if (!ok || i >= n || s[i] != ' ')
		return;
	while (i < n && s[i] == ' ')
		i++;
	if ((idx = lookup(ctx, st, s + i, n - i, 0)) < 0)
		return;
	if (ctx->res->v[idx].duration_us < 0)
		ctx->res->v[idx].duration_us = 0;
	ctx->res->v[idx].duration_us += us;
}

/* A line outside the sections with blocks: -v and xdist lines, -s output. */
static int
run_line(struct parse_ctx *ctx, struct pytest *st, const char *s, size_t n)
{
	size_t	 end, wl;
	long	 p;
	int	 o;

	/* "[gw0] [ 50%] PASSED tests/test_x.py::test_a" */
	if (has_prefix(s, n, "[gw")) {
		size_t	 i = 3;

		while (i < n && is_digit(s[i]))
			i++;
		if (i == 3 || !has_prefix(s + i, n - i, "] "))
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
		if (i >= n || (o = word_at(s + i, n - i, &wl)) < 0 ||
		    i + wl >= n || s[i + wl] != ' ')
			return 0;
		i += wl + 1;
		if (nodeid_end(s + i, n - i) == 0)
			return 0;
		return vresult(ctx, st, s + i, n - i, o, 0);
	}
	if (has_prefix(s, n, "scheduling tests via ") ||
	    (has_prefix(s, n, "gw0 ") && memmem(s, n, " / gw1", 6) != NULL))
		st->xdist = 1;
	n = strip_progress(s, n);
	end = nodeid_end(s, n);
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
		if (q > end + 4 && has_prefix(s + end, n - end, " <- ") &&
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

/* A final counts line; sessions in one output ("pytest a; pytest b")
 * add up. */
static void
add_total(struct parse_ctx *ctx, struct pytest *st, long total)
{
	struct flaky_results	*r = ctx->res;

	r->summary_total = st->nfinal++ > 0 ? r->summary_total + total : total;
}

/* One line of pytest output: find its section, hand it on. */
static int
line(struct parse_ctx *ctx, const char *s, size_t n)
{
	struct pytest	*st = ctx->state;
	size_t		 a, b;
	long		 total;
	int		 e;

	/* --color=yes: drop the escapes, so the text is what we match. */
	if (memchr(s, '\033', n) != NULL) {
		flaky_buf_reset(&st->clean);
		for (size_t i = 0; i < n; i++) {
			if (s[i] != '\033') {
				flaky_buf_addc(&st->clean, s[i]);
				continue;
			}
			if (i + 1 < n && s[i + 1] == '[') {
				for (i += 2; i < n && !(s[i] >= 0x40 &&
				    s[i] <= 0x7e); i++)
					;
			}
		}
		if (st->clean.oom)
			return -ENOMEM;
		s = st->clean.data ? st->clean.data : "";
		n = st->clean.len;
	}
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if ((e = header_line(ctx, s, n)) < 0)
		return e;
	if (section_title(s, n, &a, &b)) {
		const char	*t = s + a;
		size_t		 tl = b - a;
		enum section	 next = st->section == S_RUN ? S_RUN : S_OTHER;

		if ((total = final_counts(t, tl)) >= 0) {
			add_total(ctx, st, total);
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
		else if (tl == 19 && memcmp(t, "test session starts", 19) == 0)
			next = S_RUN;
		else if (has_prefix(t, tl, "slowest ") && tl >= 17 &&
		    memcmp(t + tl - 10, " durations", 10) == 0)
			next = S_DURATIONS;
		if (next != S_RUN && next != S_OTHER)
			st->pending = 0;
		if ((e = end_block(st)) < 0)
			return e;
		st->section = next;
		return 0;
	}
	/* -q prints the final counts without the rule. */
	if (n > 0 && is_digit(s[0]) && (total = final_counts(s, n)) >= 0) {
		add_total(ctx, st, total);
		st->section = S_OTHER;
		return 0;
	}
	switch (st->section) {
	case S_FAILURES:
	case S_ERRORS:
		return block_line(st, s, n);
	case S_SUMMARY:
		return summary_line(ctx, st, s, n);
	case S_PASSES:
		return 0;
	case S_DURATIONS:
		duration_line(ctx, st, s, n);
		return 0;
	default:
		return run_line(ctx, st, s, n);
	}
}

/* A node id's short name as block headers print it: "TestA.test_b[1]". */
static void
short_name(const char *id, struct flaky_buf *b)
{
	const char	*p = strstr(id, "::");
	size_t		 n;

	flaky_buf_reset(b);
	if (p == NULL) {
		flaky_buf_adds(b, id);
		return;
	}
	p += 2;
	n = strcspn(p, "[");
	for (size_t i = 0; i < n; i++) {
		if (p[i] == ':' && p[i + 1] == ':') {
			flaky_buf_addc(b, '.');
			i++;
		} else
			flaky_buf_addc(b, p[i]);
	}
	flaky_buf_adds(b, p + n);
}

struct keyed {
	uint64_t	 h;
	size_t		 idx;
};

/* qsort order of (hash, index) pairs: by hash, then run order. */
static int
cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Give each failed result the message of its block; blocks are in run
 * order, so the first result of a name not yet given one is the one. */
static int
match_blocks(struct parse_ctx *ctx, struct pytest *st)
{
	struct flaky_results	*r = ctx->res;
	struct flaky_buf	 sn;
	struct keyed		*k = NULL;
	size_t			 nk = 0;
	int			 e = 0;

	if (st->nblocks == 0)
		return 0;
	flaky_buf_init(&sn);
	if (r->n > 0 && (k = calloc(r->n, sizeof *k)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++) {
		if (!FLAKY_FAILED(r->v[i].outcome))
			continue;
		short_name(r->v[i].test, &sn);
		if (sn.oom) {
			e = -ENOMEM;
			goto out;
		}
		k[nk].h = id_hash(sn.data ? sn.data : "", sn.len);
		k[nk++].idx = i;
	}
	if (nk > 0)
		qsort(k, nk, sizeof *k, cmp_keyed);
	for (size_t bi = 0; bi < st->nblocks; bi++) {
		struct block	*b = &st->blocks[bi];
		uint64_t	 h = id_hash(b->title, strlen(b->title));
		size_t		 lo = 0, hi = nk;
		long		 first = -1, free_one = -1;

		if (b->collect == 2) {
			first = lookup(ctx, st, b->title, strlen(b->title), 0);
			if (first >= 0 && (st->flags[first] & F_BLOCK) == 0)
				free_one = first;
			lo = nk;
		}
		while (lo < hi) {
			size_t	 mid = lo + (hi - lo) / 2;

			if (k[mid].h < h)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < nk && k[lo].h == h; lo++) {
			size_t	 i = k[lo].idx;

			short_name(r->v[i].test, &sn);
			if (sn.oom) {
				e = -ENOMEM;
				goto out;
			}
			if (strcmp(sn.data ? sn.data : "", b->title) != 0)
				continue;
			if (first < 0)
				first = (long)i;
			if (!(st->flags[i] & F_BLOCK)) {
				free_one = (long)i;
				break;
			}
		}
		if (free_one < 0 && first < 0 && b->collect == 1) {
			/* A module that failed to import ran no test. */
			if ((free_one = add(ctx, st, b->title, strlen(b->title),
			    FLAKY_ERROR)) < 0) {
				e = (int)free_one;
				goto out;
			}
		}
		if (free_one >= 0) {
			free(r->v[free_one].message);
			r->v[free_one].message = NULL;
			st->flags[free_one] |= F_BLOCK;
		} else if ((free_one = first) < 0)
			continue;
		if (b->msg != NULL && b->msg[0] != '\0' &&
		    (e = parse_message(ctx, free_one, b->msg,
		    strlen(b->msg))) < 0)
			goto out;
	}
out:
	free(k);
	flaky_buf_free(&sn);
	return e;
}

/*
 * Do the results hold every test pytest counted? A test that errors in
 * teardown after it passed or failed is counted twice ("1 failed, 1
 * error"); -rA names skips by place ("SKIPPED [2] x.py:3: why"), not by
 * test; deselected tests, warnings and reruns are not counted at all.
 */
static int
completeness(struct parse_ctx *ctx, struct pytest *st)
{
	struct flaky_results	*r = ctx->res;
	size_t			 have = r->n, skips = 0;

	if (st->nfinal == 0)
		return parse_incomplete(ctx, "the run ended without pytest's "
		    "summary line (\"N passed in S s\"): it was killed or "
		    "stopped early (or -qq hid the line)");
	for (size_t i = 0; i < r->n; i++) {
		have += (st->flags[i] & F_TWICE) != 0;
		skips += r->v[i].outcome == FLAKY_SKIP;
	}
	if (st->place_skips > skips)
		have += st->place_skips - skips;
	if ((long)have == r->summary_total)
		return 0;
	if (st->nverbose == 0 && st->npassed == 0 &&
	    (long)have < r->summary_total)
		return parse_incomplete(ctx, "pytest printed only failing "
		    "tests (%ld in its summary, %zu parsed): run it with -rA "
		    "or -v", r->summary_total, r->n);
	return parse_incomplete(ctx, "pytest's summary counts %ld tests, "
	    "%zu were parsed: run it with -rA, so that its summary names "
	    "every test", r->summary_total, r->n);
}

/* End of output: the last block, then every block to its test. */
static int
finish(struct parse_ctx *ctx)
{
	struct pytest	*st = ctx->state;
	int		 e;

	if ((e = end_block(st)) < 0)
		return e;
	if (st->pending) {
		/* The run died while this test ran: that is its outcome. */
		static const char timeout[] = "Failed: Timeout (pytest-timeout "
		    "ended the run while this test ran)";
		static const char died[] = "no outcome: the output ended "
		    "while this test ran (killed or crashed)";
		long	 idx;

		st->pending = 0;
		idx = add(ctx, st, st->pend_id.data, st->pend_id.len,
		    st->pend_timeout ? FLAKY_FAIL : FLAKY_ERROR);
		if (idx < 0)
			return (int)idx;
		if ((e = st->pend_timeout ?
		    parse_message(ctx, idx, timeout, sizeof timeout - 1) :
		    parse_message(ctx, idx, died, sizeof died - 1)) < 0)
			return e;
	}
	if ((e = match_blocks(ctx, st)) < 0)
		return e;
	return completeness(ctx, st);
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
	free(st->flags);
	free(st->tab);
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
		    final_counts(s + a, b - a) >= 0)
			return 2;
		return 0;
	}
	if (has_prefix(s, n, "platform ") &&
	    memmem(s, n, " -- Python ", 11) != NULL &&
	    memmem(s, n, ", pytest-", 9) != NULL)
		return 2;
	if (n > 0 && is_digit(s[0]) && final_counts(s, n) > 0)
		return 2;
	if (has_prefix(s, n, "[gw") && memmem(s, n, "::", 2) != NULL)
		return 1;
	n = strip_progress(s, n);
	if ((a = nodeid_end(s, n)) > 0 && a + 1 < n && s[a] == ' ' &&
	    word_at(s + a + 1, n - a - 1, &wl) >= 0)
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
