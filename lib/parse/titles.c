/* What the JavaScript runners' reporters share (Vitest, Playwright, Mocha,
 * node:test): durations as they print them ("5ms", "3.0s", "0.64ms"), a
 * trailing "(...)", paths relative to the run's directory, and the tree
 * of describe titles that an indented reporter prints. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

/* A runner's zeroed state (runner.h). */
void *
parse_state(struct parse_ctx *ctx, size_t size)
{
	return ctx->state = calloc(1, size);
}

/* detect() on the line without its colours (runner.h). */
int
parse_detect_clean(const char *line, size_t len,
    int (*score)(const char *, size_t))
{
	struct flaky_buf b;
	const char	*s = line;
	size_t		 n = len;
	int		 v = 0;

	flaky_buf_init(&b);
	if (parse_strip_colour(&b, &s, &n) == 0)
		v = score(s, n);
	flaky_buf_free(&b);
	return v;
}

/* "5ms", "3.0s", "0.64ms" as µs (runner.h). */
int64_t
parse_duration_us(const char *s, size_t n)
{
	static const struct {
		const char	*unit;
		double		 us;
	} units[] = {
		{ "ms", 1e3 }, { "s", 1e6 }, { "m", 60e6 }, { "h", 3600e6 },
	};
	double	 v = 0, scale = 1;
	size_t	 i = 0, d = 0;
	int	 dot = 0;

	for (; i < n && ((s[i] >= '0' && s[i] <= '9') || (s[i] == '.' &&
	    !dot)); i++) {
		if (s[i] == '.') {
			dot = 1;
			continue;
		}
		if (++d > 15)
			return -1;
		if (dot)
			scale /= 10;
		v = v * 10 + (s[i] - '0');
	}
	if (d == 0)
		return -1;
	for (size_t k = 0; k < FLAKY_ARRAY_SIZE(units); k++)
		if (n - i == strlen(units[k].unit) &&
		    memcmp(s + i, units[k].unit, n - i) == 0)
			return (int64_t)(v * scale * units[k].us + 0.5);
	return -1;
}

/* A trailing " (TEXT)" cut off (runner.h). */
int
parse_cut_paren(const char *s, size_t *n, const char **in, size_t *inlen)
{
	size_t	 len = *n, j;

	if (len < 4 || s[len - 1] != ')')
		return 0;
	for (j = len - 1; j > 0 && s[j] != '('; j--)
		;
	if (j < 2 || s[j] != '(' || s[j - 1] != ' ')
		return 0;
	*in = s + j + 1;
	*inlen = len - j - 2;
	*n = j - 1;
	return 1;
}

/* A path made relative to the run's directory (runner.h). */
void
parse_relative(const struct parse_ctx *ctx, const char **pp, size_t *np)
{
	const char	*p = *pp;
	size_t		 n = *np, rl;

	if (n == 0 || p[0] != '/' || ctx->rundir == NULL ||
	    (rl = strlen(ctx->rundir)) == 0 || n <= rl + 1 ||
	    memcmp(p, ctx->rundir, rl) != 0)
		return;
	if (ctx->rundir[rl - 1] != '/') {
		if (p[rl] != '/')
			return;
		rl++;
	}
	*pp = p + rl;
	*np = n - rl;
}

/* Leave the titles indented at or beyond indent. */
void
parse_tree_pop(struct parse_tree *t, size_t indent)
{
	while (t->depth > 0 && t->v[t->depth - 1].indent >= indent)
		free(t->v[--t->depth].title);
}

/* A title at its indentation (runner.h). */
int
parse_tree_push(struct parse_tree *t, size_t indent, const char *s,
    size_t n)
{
	char	*c;

	parse_tree_pop(t, indent);
	if (t->depth == PARSE_TREE_DEPTH)
		return 0;
	if ((c = flaky_strndup(s, n)) == NULL)
		return -ENOMEM;
	t->v[t->depth].indent = indent;
	t->v[t->depth++].title = c;
	return 0;
}

/* The open titles joined by sep (runner.h). */
void
parse_tree_path(const struct parse_tree *t, const char *sep,
    struct flaky_buf *b)
{
	flaky_buf_reset(b);
	for (int d = 0; d < t->depth; d++) {
		flaky_buf_adds(b, t->v[d].title);
		flaky_buf_adds(b, sep);
	}
}

/* An id cut at a character boundary (runner.h). */
void
parse_id_bound(struct flaky_buf *b, size_t max)
{
	size_t	 n = max;

	if (b->len <= max || b->oom)
		return;
	while (n > 0 && ((unsigned char)b->data[n] & 0xc0) == 0x80)
		n--;
	b->len = n;
	b->data[n] = '\0';
}
