/* go test (-v or plain) output -> results.
 *
 *	=== RUN   TestTable
 *	=== RUN   TestTable/one
 *	    calc_test.go:41: want 2	(-v: output before the result)
 *	--- FAIL: TestTable (0.00s)
 *	    --- FAIL: TestTable/one (0.00s)
 *	        calc_test.go:41: ...			(plain: output after it)
 *	FAIL	example.com/pkg	0.004s
 *
 * The package is only named by its closing "ok"/"FAIL" line, so a package's
 * tests are held until that line and then emitted as "package/TestX/sub" in
 * the order they started (=== RUN), which is the order in which they ran.
 * Output lines go to the test named by the last RUN/CONT/NAME line (-v) or
 * by the last result line (plain); they become the message of a failed
 * test. A test that started but never got a result (a panic, go's own
 * timeout, a killed run) fails with the panic as its message ("SIGQUIT:
 * quit" when flaky took the goroutines before the kill). */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

/* Tests held for one package; more than this and the rest are dropped
 * (go prints a package line at least per package, so this is generous). */
#define PENDING_MAX	(1024 * 1024)

struct gt_test {
	char		*name;
	size_t		 namelen;
	int		 outcome;	/* -1 while it runs */
	int64_t		 duration_us;
	struct flaky_buf msg;
};

struct gt_state {
	struct gt_test	*v;
	size_t		 n, cap;
	uint32_t	*hash;		/* index + 1 by name, open addressing */
	size_t		 hcap;		/* a power of two, > 2 * n */
	long		 cur;		/* output goes here (-v) */
	long		 after;		/* ... or here (after a result line) */
	struct flaky_buf panic;		/* "panic: ..." of the package */
	int		 panicking;	/* after it: a stack, not messages */
	unsigned	 nrun;		/* "=== RUN" lines seen (-v) */
	unsigned	 nok;		/* "ok pkg" lines */
	unsigned	 ncached;	/* ... of which served from the cache */
	unsigned	 nresult;	/* "--- PASS" and friends */
};

/* The number of leading blanks. */
static size_t
skip_space(const char *s, size_t len)
{
	size_t	 i = 0;

	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

/* "--- PASS: ", "--- FAIL: ", "--- SKIP: ": 1 with the outcome, else 0. */
static int
result_line(const char *s, size_t len, int *outcome)
{
	if (parse_starts(s, len, "--- PASS: "))
		*outcome = FLAKY_PASS;
	else if (parse_starts(s, len, "--- FAIL: "))
		*outcome = FLAKY_FAIL;
	else if (parse_starts(s, len, "--- SKIP: "))
		*outcome = FLAKY_SKIP;
	else
		return 0;
	return 1;
}

/* "ok  \tpkg\t0.01s", "FAIL\tpkg\t...", "?   \tpkg\t[no test files]". */
static int
package_line(const char *s, size_t len, const char **pkg, size_t *pkglen,
    int *failed)
{
	size_t	 i, j;

	if (parse_starts(s, len, "ok  \t"))
		*failed = 0;
	else if (parse_starts(s, len, "FAIL\t"))
		*failed = 1;
	else if (parse_starts(s, len, "?   \t"))
		*failed = -1;
	else
		return 0;
	i = 5;
	for (j = i; j < len && s[j] != '\t' && s[j] != ' '; j++)
		;
	if (j == i)
		return 0;
	*pkg = s + i;
	*pkglen = j - i;
	return 1;
}

/* "=== RUN" and result lines are certain; a package line is a maybe. */
static int
detect(const char *line, size_t len)
{
	size_t	 i = skip_space(line, len), pl;
	int	 o;
	const char *p;

	if (parse_starts(line, len, "=== RUN   ") ||
	    result_line(line + i, len - i, &o))
		return 2;
	if (package_line(line, len, &p, &pl, &o))
		return 1;
	return 0;
}

/* The state for one stream. */
static int
init(struct parse_ctx *ctx)
{
	struct gt_state	*st;

	if ((st = calloc(1, sizeof *st)) == NULL)
		return -ENOMEM;
	st->cur = st->after = -1;
	ctx->state = st;
	return 0;
}

/* Forget the held tests once their package is emitted. */
static void
clear(struct gt_state *st)
{
	for (size_t i = 0; i < st->n; i++) {
		free(st->v[i].name);
		flaky_buf_free(&st->v[i].msg);
	}
	st->n = 0;
	if (st->hash != NULL)
		memset(st->hash, 0, st->hcap * sizeof *st->hash);
	st->cur = st->after = -1;
	st->panicking = 0;
	flaky_buf_free(&st->panic);
}

/* Index the held tests by name (a package may have thousands). */
static int
rehash(struct gt_state *st, size_t hcap)
{
	uint32_t	*h;

	if ((h = calloc(hcap, sizeof *h)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < st->n; i++) {
		size_t	 j = flaky_hash64(st->v[i].name, st->v[i].namelen,
		    FLAKY_HASH_SEED) & (hcap - 1);

		while (h[j] != 0)
			j = (j + 1) & (hcap - 1);
		h[j] = (uint32_t)i + 1;
	}
	free(st->hash);
	st->hash = h;
	st->hcap = hcap;
	return 0;
}

/* The held test with this name, added when new; -1 when full. */
static long
find_test(struct gt_state *st, const char *name, size_t len, int *err)
{
	struct gt_test	*t;
	size_t		 j = 0;

	if (st->hcap > 0) {
		j = flaky_hash64(name, len, FLAKY_HASH_SEED) & (st->hcap - 1);
		for (; st->hash[j] != 0; j = (j + 1) & (st->hcap - 1)) {
			t = &st->v[st->hash[j] - 1];
			if (t->namelen == len &&
			    memcmp(t->name, name, len) == 0)
				return (long)(st->hash[j] - 1);
		}
	}
	if (st->n >= PENDING_MAX)
		return -1;
	if (st->n == st->cap) {
		size_t	 cap = st->cap ? st->cap * 2 : 32;

		if ((t = realloc(st->v, cap * sizeof *t)) == NULL)
			return *err = -ENOMEM, -1;
		st->v = t;
		st->cap = cap;
	}
	t = &st->v[st->n];
	memset(t, 0, sizeof *t);
	if ((t->name = flaky_strndup(name, len)) == NULL)
		return *err = -ENOMEM, -1;
	t->namelen = len;
	t->outcome = -1;
	t->duration_us = -1;
	st->n++;
	if (2 * st->n >= st->hcap) {
		if ((*err = rehash(st, st->hcap ? st->hcap * 2 : 64)) < 0) {
			free(t->name);
			st->n--;
			return -1;
		}
	} else {
		while (st->hash[j] != 0)
			j = (j + 1) & (st->hcap - 1);
		st->hash[j] = (uint32_t)st->n;
	}
	return (long)st->n - 1;
}

/* "0.01s" -> microseconds, -1 if it is not a duration. */
static int64_t
seconds_us(const char *s, size_t len)
{
	int64_t	 sec = 0, frac = 0, scale = 1000000;
	size_t	 i = 0;

	if (len < 2 || s[len - 1] != 's')
		return -1;
	len--;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		if ((sec = sec * 10 + (s[i] - '0')) > 100000000)
			return -1;
	if (i == 0)
		return -1;
	if (i < len && s[i] == '.')
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			if (scale > 1) {
				scale /= 10;
				frac += (s[i] - '0') * scale;
			}
	return i == len ? sec * 1000000 + frac : -1;
}

/* Emit the held tests under the package's name. */
static int
flush(struct parse_ctx *ctx, struct gt_state *st, const char *pkg,
    size_t pkglen, int failed)
{
	static const char nothing_ran[] = "the package failed without "
	    "running a test (build or setup failed)";
	static const char no_result[] = "no result printed: the test was "
	    "still running when the package ended";
	struct flaky_buf	 id;
	int			 e = 0;

	flaky_buf_init(&id);
	if (st->n == 0 && failed == 1 && pkglen > 0) {
		/* "FAIL pkg [build failed]": nothing ran. */
		long	 idx = parse_add(ctx, pkg, pkglen, FLAKY_ERROR, -1);

		if (idx < 0)
			e = (int)idx;
		else if (st->panic.len > 0)
			e = parse_message(ctx, idx, st->panic.data,
			    st->panic.len);
		else
			e = parse_message(ctx, idx, nothing_ran,
			    strlen(nothing_ran));
		goto out;
	}
	for (size_t i = 0; i < st->n; i++) {
		struct gt_test	*t = &st->v[i];
		long		 idx;
		int		 o = t->outcome;

		if (o < 0 && failed == 0)
			continue;	/* cannot tell; invent nothing */
		if (o < 0) {
			o = FLAKY_FAIL;
			if (st->panic.len > 0)
				parse_msg_line(&t->msg, st->panic.data,
				    st->panic.len);
			else
				parse_msg_line(&t->msg, no_result,
				    strlen(no_result));
		}
		flaky_buf_reset(&id);
		if (pkglen > 0) {
			flaky_buf_add(&id, pkg, pkglen);
			flaky_buf_addc(&id, '/');
		}
		flaky_buf_adds(&id, t->name);
		if (id.oom || t->msg.oom) {
			e = -ENOMEM;
			goto out;
		}
		if ((idx = parse_add(ctx, id.data, id.len, o,
		    t->duration_us)) < 0) {
			e = (int)idx;
			goto out;
		}
		if (FLAKY_FAILED(o) && t->msg.len > 0 &&
		    (e = parse_message(ctx, idx, t->msg.data, t->msg.len)) < 0)
			goto out;
	}
out:
	flaky_buf_free(&id);
	clear(st);
	return e;
}

/* One line of go test's output. */
static int
line(struct parse_ctx *ctx, const char *s, size_t len)
{
	struct gt_state	*st = ctx->state;
	const char	*p;
	size_t		 i, n;
	long		 idx;
	int		 o, e = 0;

	if (parse_starts(s, len, "=== RUN   ") ||
	    parse_starts(s, len, "=== CONT  ") ||
	    parse_starts(s, len, "=== NAME  ")) {
		p = s + 10;
		n = len - 10;
		st->nrun += s[4] == 'R';
		idx = find_test(st, p, n, &e);
		st->cur = idx;
		st->after = -1;
		return e;
	}
	if (parse_starts(s, len, "=== PAUSE ")) {
		st->cur = st->after = -1;
		return 0;
	}
	i = skip_space(s, len);
	if (result_line(s + i, len - i, &o)) {
		const char	*name = s + i + 10;
		size_t		 nl = len - i - 10, k;
		int64_t		 dur = -1;

		/* "name (0.01s)" */
		for (k = nl; k > 0 && name[k - 1] != '('; k--)
			;
		if (k >= 2 && name[k - 2] == ' ' && nl > k &&
		    name[nl - 1] == ')' &&
		    (dur = seconds_us(name + k, nl - k - 1)) >= 0)
			nl = k - 2;
		if ((idx = find_test(st, name, nl, &e)) < 0)
			return e;
		st->nresult++;
		st->v[idx].outcome = o;
		st->v[idx].duration_us = dur;
		st->after = idx;
		return 0;
	}
	if (package_line(s, len, &p, &n, &o)) {
		if (o == 0) {
			st->nok++;
			/* "ok  \tpkg\t(cached)": go replayed an old run. */
			if (memmem(p + n, len - (size_t)(p + n - s),
			    "\t(cached)", 9) != NULL)
				st->ncached++;
		}
		return flush(ctx, st, p, n, o);
	}
	/* A panic, or the SIGQUIT flaky sends before killing a run at its
	 * time limit (issue 33): a goroutine dump follows, not messages. */
	if (parse_starts(s, len, "panic: ") ||
	    parse_starts(s, len, "SIGQUIT: quit")) {
		st->panicking = 1;
		parse_msg_line(&st->panic, s, len);
		if (st->after >= 0 && st->v[st->after].outcome == FLAKY_FAIL)
			parse_msg_line(&st->v[st->after].msg, s, len);
		return st->panic.oom ? -ENOMEM : 0;
	}
	/* Indented: the output of a test (t.Log, t.Error). */
	if (i > 0 && i < len && !st->panicking) {
		idx = st->after >= 0 ? st->after : st->cur;
		if (idx >= 0) {
			parse_msg_line(&st->v[idx].msg, s + i, len - i);
			if (st->v[idx].msg.oom)
				return -ENOMEM;
		}
	}
	return 0;
}

/* End of output: emit what is held, warn when -v was missing. */
static int
finish(struct parse_ctx *ctx)
{
	struct gt_state	*st = ctx->state;
	int		 e;

	/* No package line: the run was cut short; tests still running
	 * count as failed. */
	if (st->n > 0) {
		if ((e = flush(ctx, st, "", 0, 1)) < 0)
			return e;
		if ((e = parse_incomplete(ctx, "the run ended before go test's "
		    "package result (ok or FAIL PKG): it was killed or "
		    "stopped early")) < 0)
			return e;
	}
	if (st->ncached > 0 && (e = parse_incomplete(ctx, "go test served "
	    "these results from its cache ((cached)): add -count=1")) < 0)
		return e;
	/* Without -v: an "ok" package names no test, a failing one names
	 * its failures only. A package that did not build names none. */
	if (st->nrun == 0 && st->nok + st->nresult > 0 &&
	    (e = parse_incomplete(ctx, "go test printed only failing tests "
	    "(not -v): run it with -v")) < 0)
		return e;
	/* Without -v go names failing tests only (a package that did not
	 * build is not a sign of that). */
	if (st->nrun == 0 && st->nok + st->nresult > 0 && ctx->res->n > 0) {
		free(ctx->res->warning);
		ctx->res->warning = strdup("go test listed failing tests "
		    "only (not -v): passing tests are not listed; run go test "
		    "-v for per-test evidence");
		if (ctx->res->warning == NULL)
			return -ENOMEM;
	}
	return 0;
}

/* Free the state; NULL is fine. */
static void
gt_free(struct parse_ctx *ctx)
{
	struct gt_state	*st = ctx->state;

	if (st == NULL)
		return;
	clear(st);
	free(st->v);
	free(st->hash);
	free(st);
	ctx->state = NULL;
}

const struct runner runner_gotest = {
	.name = "gotest",
	.detect = detect,
	.init = init,
	.line = line,
	.finish = finish,
	.free = gt_free,
};
