/* What several runners share beyond the result list: the table that finds
 * a result by its test id (pytest and unittest name a test again after its
 * line, in summaries and failure blocks), the removal of colours, and
 * durations in seconds. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

uint64_t
parse_id_hash(const char *s, size_t n)
{
	uint64_t	 z = flaky_hash64(s, n, FLAKY_HASH_SEED);

	/* FNV's low bits, which pick the slot, differ little between ids
	 * that differ in a digit: mix them (splitmix64's finalizer). */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Put idx in its slot; the table has room. */
static void
ids_put(struct parse_ids *ids, const struct flaky_results *r, size_t idx)
{
	size_t	 mask = ids->size - 1, h;

	h = parse_id_hash(r->v[idx].test, strlen(r->v[idx].test)) & mask;
	while (ids->tab[h] != 0)
		h = (h + 1) & mask;
	ids->tab[h] = (uint32_t)idx + 1;
	ids->used++;
}

int
parse_ids_add(struct parse_ids *ids, const struct flaky_results *r,
    size_t idx)
{
	if ((ids->used + 1) * 2 > ids->size) {
		size_t	  size = ids->size ? ids->size * 2 : 256;
		uint32_t *t;

		if (size > UINT32_MAX || (t = calloc(size, sizeof *t)) == NULL)
			return -ENOMEM;
		free(ids->tab);
		ids->tab = t;
		ids->size = size;
		ids->used = 0;
		for (size_t i = 0; i < r->n; i++)
			if (i != idx)
				ids_put(ids, r, i);
	}
	ids_put(ids, r, idx);
	return 0;
}

long
parse_ids_next(const struct parse_ids *ids, const struct flaky_results *r,
    const char *s, size_t n, size_t *pos)
{
	size_t	 mask, h;

	if (ids->size == 0)
		return -1;
	mask = ids->size - 1;
	h = *pos == 0 ? parse_id_hash(s, n) & mask : *pos & mask;
	for (; ids->tab[h] != 0; h = (h + 1) & mask) {
		size_t	 i = ids->tab[h] - 1;

		/* The stored id is a C string; s may hold a NUL. */
		if (i < r->n && strnlen(r->v[i].test, n + 1) == n &&
		    memcmp(r->v[i].test, s, n) == 0) {
			*pos = h + 1;
			return (long)i;
		}
	}
	return -1;
}

long
parse_ids_last(const struct parse_ids *ids, const struct flaky_results *r,
    const char *s, size_t n, size_t from)
{
	size_t	 pos = 0;
	long	 i, best = -1;

	while ((i = parse_ids_next(ids, r, s, n, &pos)) >= 0)
		if ((size_t)i >= from && i > best)
			best = i;
	return best;
}

long
parse_add_indexed(struct parse_ctx *ctx, struct parse_ids *ids,
    const char *test, size_t len, int outcome, int64_t duration_us)
{
	long	 i = parse_add(ctx, test, len, outcome, duration_us);

	if (i >= 0 && parse_ids_add(ids, ctx->res, (size_t)i) < 0)
		return -ENOMEM;
	return i;
}

void
parse_ids_free(struct parse_ids *ids)
{
	free(ids->tab);
	ids->tab = NULL;
	ids->size = ids->used = 0;
}

int
parse_strip_colour(struct flaky_buf *clean, const char **sp, size_t *np)
{
	const char	*s = *sp;
	size_t		 n = *np;

	if (memchr(s, '\033', n) == NULL)
		return 0;
	flaky_buf_reset(clean);
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\033') {
			flaky_buf_addc(clean, s[i]);
			continue;
		}
		if (i + 1 < n && s[i + 1] == '[')
			for (i += 2; i < n && !(s[i] >= 0x40 && s[i] <= 0x7e);
			    i++)
				;
	}
	if (clean->oom)
		return -ENOMEM;
	*sp = clean->data ? clean->data : "";
	*np = clean->len;
	return 0;
}

int64_t
parse_seconds_us(const char *s, size_t n)
{
	int64_t	 us = 0, scale = 1000000;
	size_t	 i = 0;

	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		if ((us = us * 10 + (s[i] - '0')) > 100000000)
			return -1;
	if (i == 0)
		return -1;
	us *= 1000000;
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			if (scale > 1)
				us += (s[i] - '0') * (scale /= 10);
	return i == n ? us : -1;
}
