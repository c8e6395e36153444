/* pytest's short test summary, --durations and final counts, and whether
 * the results hold every test those counted. */
#include "buildconf.h"

#include <stdint.h>
#include <string.h>

#include "pytest.h"


/*
 * "7 failed, 17 passed, 2 skipped, 1 xfailed, 1 xpassed, 2 errors in 0.54s"
 * (or "no tests ran in 0.01s"), optionally with " (0:01:15)": the number of
 * tests, or -1 when s is not such a line.
 */
long
pytest_final_counts(const char *s, size_t n)
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
		if (i < n && pytest_digit(s[i]))
			in = p;
	}
	if (in == NULL)
		return -1;
	i = (size_t)(in - s) + 4;
	while (i < n && (pytest_digit(s[i]) || s[i] == '.'))
		i++;
	if (i >= n || s[i] != 's' ||
	    !(i + 1 == n || parse_starts(s + i + 1, n - i - 1, " (")))
		return -1;
	m = (size_t)(in - s);
	if (m == 12 && memcmp(s, "no tests ran", 12) == 0)
		return 0;
	for (i = 0; i < m;) {
		long	 v = 0;
		size_t	 w;

		if (!pytest_digit(s[i]))
			return -1;
		while (i < m && pytest_digit(s[i])) {
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
		if (!parse_starts(s + i, m - i, ", "))
			return -1;
		i += 2;
	}
	return total;
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

	if (pytest_lookup(ctx, st, s, n, 0) >= 0)
		return n;
	/* Ids may hold the separator: try the known ids, a few places. */
	for (p = s; tries++ < MAX_SPLITS &&
	    (p = memmem(p, n - (size_t)(p - s), sep, sl)) != NULL; p++)
		if (pytest_lookup(ctx, st, s, (size_t)(p - s), 0) >= 0)
			return (size_t)(p - s);
	if ((e = pytest_nodeid_end(s, n)) > 0)
		return e;
	if ((p = memmem(s, n, sep, sl)) != NULL)
		return (size_t)(p - s);
	return n;
}

/* One line of the short test summary. */
int
pytest_summary_line(struct parse_ctx *ctx, struct pytest *st, const char *s,
    size_t n)
{
	size_t	 wl, il;
	long	 idx;
	int	 o;

	if ((o = pytest_word_at(s, n, &wl)) < 0 || wl >= n || s[wl] != ' ')
		return 0;
	/* "SKIPPED [1] src/x.py:12: reason" names a place, not a test: it
	 * counts the skips there. */
	if (o == FLAKY_SKIP && parse_starts(s + wl, n - wl, " [")) {
		size_t	 k = 0;

		for (size_t i = wl + 2; i < n && pytest_digit(s[i]) &&
		    k < 1000000; i++)
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
	if ((idx = pytest_lookup(ctx, st, s, il, F_SUMMARY)) < 0) {
		if ((idx = pytest_lookup(ctx, st, s, il, 0)) < 0) {
			if ((idx = pytest_add(ctx, st, s, il, o)) < 0)
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
	    parse_starts(s + il, n - il, " - "))
		return parse_message(ctx, idx, s + il + 3, n - il - 3);
	return 0;
}

/* "0.50s call     path::test": --durations adds the phases' times. */
void
pytest_duration_line(struct parse_ctx *ctx, struct pytest *st, const char *s,
    size_t n)
{
	static const char *const phases[] = { "setup", "call", "teardown" };
	int64_t		 us = 0, scale = 1000000;
	size_t		 i = 0;
	long		 idx;
	int		 frac = 0, ok = 0;

	for (; i < n && (pytest_digit(s[i]) || (s[i] == '.' && !frac)); i++) {
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
	if (i == 0 || !parse_starts(s + i, n - i, "s "))
		return;
	i += 2;
	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(phases); k++)
		if (parse_starts(s + i, n - i, phases[k])) {
			i += strlen(phases[k]);
			ok = 1;
			break;
		}
	if (!ok || i >= n || s[i] != ' ')
		return;
	while (i < n && s[i] == ' ')
		i++;
	if ((idx = pytest_lookup(ctx, st, s + i, n - i, 0)) < 0)
		return;
	if (ctx->res->v[idx].duration_us < 0)
		ctx->res->v[idx].duration_us = 0;
	ctx->res->v[idx].duration_us += us;
}

/* A final counts line; sessions in one output ("pytest a; pytest b")
 * add up. */
void
pytest_add_total(struct parse_ctx *ctx, struct pytest *st, long total)
{
	struct flaky_results	*r = ctx->res;

	r->summary_total = st->nfinal++ > 0 ? r->summary_total + total : total;
}

/*
 * Do the results hold every test pytest counted? A test that errors in
 * teardown after it passed or failed is counted twice ("1 failed, 1
 * error"); -rA names skips by place ("SKIPPED [2] x.py:3: why"), not by
 * test; deselected tests, warnings and reruns are not counted at all.
 */
int
pytest_completeness(struct parse_ctx *ctx, struct pytest *st)
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
