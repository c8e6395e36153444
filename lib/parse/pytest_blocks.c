/* pytest's FAILURES and ERRORS sections: each block's decisive lines,
 * kept until the end, then matched to the result they describe. */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pytest.h"


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
	if (memchr(s, ' ', i) != NULL || i < 3 || !pytest_digit(s[i - 1]))
		return 0;
	while (i > 0 && pytest_digit(s[i - 1]))
		i--;
	if (i < 2 || s[i - 1] != ':')
		return 0;
	i = (size_t)(p - s) + 2;
	if (i >= n || parse_starts(s + i, n - i, "in "))
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
int
pytest_end_block(struct pytest *st)
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
	if (parse_starts(t, tl, "ERROR at setup of ")) {
		t += 18;
		tl -= 18;
	} else if (parse_starts(t, tl, "ERROR at teardown of ")) {
		t += 21;
		tl -= 21;
	} else if (parse_starts(t, tl, "ERROR collecting ")) {
		t += 17;
		tl -= 17;
		collect = 1;
	} else if (parse_starts(t, tl, "[doctest] ")) {
		t += 10;
		tl -= 10;
	}
	/* pytest-xdist: "worker 'gw1' crashed while running 'path::test'" */
	if (!collect && memmem(t, tl, "::", 2) == NULL && st->blast.len > 0 &&
	    parse_starts(st->blast.data, st->blast.len, "worker '")) {
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
int
pytest_block_line(struct pytest *st, const char *s, size_t n)
{
	size_t	 a, b;
	int	 e;

	if (block_title(s, n, &a, &b)) {
		if ((e = pytest_end_block(st)) < 0)
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
		else if (s[0] != '>' && !parse_starts(s, n, "[gw")) {
			if (st->tail_broken)
				flaky_buf_reset(&st->btail);
			st->tail_broken = 0;
			msg_line(&st->btail, s, n);
		}
	}
	return st->bmsg.oom || st->bloc.oom || st->blast.oom ||
	    st->btail.oom ? -ENOMEM : 0;
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
int
pytest_match_blocks(struct parse_ctx *ctx, struct pytest *st)
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
		k[nk].h = parse_id_hash(sn.data ? sn.data : "", sn.len);
		k[nk++].idx = i;
	}
	if (nk > 0)
		qsort(k, nk, sizeof *k, cmp_keyed);
	for (size_t bi = 0; bi < st->nblocks; bi++) {
		struct block	*b = &st->blocks[bi];
		uint64_t	 h = parse_id_hash(b->title, strlen(b->title));
		size_t		 lo = 0, hi = nk;
		long		 first = -1, free_one = -1;

		if (b->collect == 2) {
			first = pytest_lookup(ctx, st, b->title,
			    strlen(b->title), 0);
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
			if ((free_one = pytest_add(ctx, st, b->title,
			    strlen(b->title), FLAKY_ERROR)) < 0) {
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
