/* The parser front: line splitting, runner detection and the result list
 * that every runner's state machine fills. */
#include "buildconf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static const struct runner *const runners[] = {
	&runner_pytest,
	&runner_unittest,
	/* before Jest: their lines have Jest's tick marks too */
	&runner_vitest,
	&runner_playwright,
	&runner_jest,
	&runner_mocha,
	&runner_nodetest,
	&runner_gotest,
	&runner_tap,
	&runner_cargo,
	&runner_gtest,
	&runner_rspec,
	&runner_phpunit,
};
#define NRUNNERS FLAKY_ARRAY_SIZE(runners)

/*
 * While the runner is not known, every line is shown to every runner's
 * detect(), wherever it comes in the output, and the most recent lines are
 * held back in a window so that the chosen runner also sees the header that
 * came before its first decisive line (prove's "t/x.t .. ", pytest's
 * "platform" line). The window is bounded, so a flood of unrecognized output
 * costs this much memory and no more.
 */
#define WINDOW_LINES	512
#define WINDOW_BYTES	(256 * 1024)
/* Maybe-votes (detect() == 1) decide only when this many are in the window
 * as its oldest voting line would leave it, or at the end of the output: a
 * stray line that happens to look like a runner's does not decide alone. */
#define VOTES_MIN	2

/* A held line: this header, then its bytes (lines may hold NUL bytes). */
struct held_line {
	size_t		 len;
	unsigned char	 votes[NRUNNERS];
};

struct flaky_parser {
	struct flaky_results	 res;
	struct parse_ctx	 ctx;
	const struct runner	*runner;
	/* Chosen on maybe-votes: while it has found no result, a line that
	 * is certainly another runner's still takes the run over. */
	int			 tentative;
	char			*rundir;
	struct flaky_buf	 line;		/* the partial line */
	int			 line_cut;	/* the line passed LINE_MAX */
	struct flaky_buf	 held;		/* the window: held_line... */
	size_t			 head;		/* its oldest line in held */
	size_t			 nheld;
	int			 votes[NRUNNERS];	/* over the window */
	int			 error;		/* first -errno seen */
};

const char *
flaky_outcome_name(int o)
{
	static const char *const names[] = {
		"pass", "fail", "error", "skip", "xfail", "xpass"
	};

	if (o < 0 || o > FLAKY_OUTCOME_MAX)
		return "unknown";
	return names[o];
}

void
flaky_results_init(struct flaky_results *r)
{
	memset(r, 0, sizeof *r);
	r->summary_total = -1;
}

void
flaky_results_free(struct flaky_results *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].test);
		free(r->v[i].message);
		free(r->v[i].signature);
	}
	free(r->v);
	for (size_t i = 0; i < r->nattempts; i++)
		free(r->attempts[i].message);
	free(r->attempts);
	for (size_t i = 0; i < r->nheadroom; i++) {
		free(r->headroom[i].path);
		free(r->headroom[i].tolerance);
		free(r->headroom[i].assertion);
	}
	free(r->headroom);
	free(r->version);
	free(r->seed);
	free(r->warning);
	free(r->incomplete);
	flaky_results_init(r);
}

int
flaky_results_merge(struct flaky_results *dst, struct flaky_results *src)
{
	struct flaky_result	*v;
	unsigned		 base = 0;
	size_t			 first = dst->n;

	if (src->n == 0)
		goto meta;
	for (size_t i = 0; i < dst->n; i++)
		if (dst->v[i].position + 1 > base)
			base = dst->v[i].position + 1;
	if (dst->n + src->n > dst->cap) {
		size_t	 cap = dst->n + src->n;

		if ((v = realloc(dst->v, cap * sizeof *v)) == NULL)
			return -ENOMEM;
		dst->v = v;
		dst->cap = cap;
	}
	for (size_t i = 0; i < src->n; i++) {
		dst->v[dst->n] = src->v[i];
		dst->v[dst->n].position += base;
		dst->n++;
	}
	src->n = 0;
	/* The attempts follow their results to their new indices. */
	for (size_t i = 0; i < src->nattempts; i++) {
		if (flaky_array_grow(&dst->attempts, &dst->acap,
		    dst->nattempts, sizeof *dst->attempts) < 0)
			return -ENOMEM;
		dst->attempts[dst->nattempts] = src->attempts[i];
		dst->attempts[dst->nattempts++].result += first;
		src->attempts[i].message = NULL;
	}
meta:
	if (dst->runner[0] == '\0')
		memcpy(dst->runner, src->runner, sizeof dst->runner);
	if (dst->version == NULL) {
		dst->version = src->version;
		src->version = NULL;
	}
	if (dst->incomplete == NULL) {
		dst->incomplete = src->incomplete;
		src->incomplete = NULL;
	}
	if (dst->seed == NULL) {
		dst->seed = src->seed;
		src->seed = NULL;
	}
	if (src->summary_total >= 0)
		dst->summary_total = (dst->summary_total >= 0 ?
		    dst->summary_total : 0) + src->summary_total;
	flaky_results_free(src);
	return 0;
}

long
parse_add(struct parse_ctx *ctx, const char *test, size_t len, int outcome,
    int64_t duration_us)
{
	struct flaky_results	*r = ctx->res;
	struct flaky_result	*v;

	if (r->n == r->cap) {
		size_t	 cap = r->cap ? r->cap * 2 : 64;

		if ((v = realloc(r->v, cap * sizeof *v)) == NULL)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	v = &r->v[r->n];
	if ((v->test = flaky_strndup(test, len)) == NULL)
		return -ENOMEM;
	v->outcome = outcome;
	v->duration_us = duration_us;
	v->message = NULL;
	v->signature = NULL;
	v->position = (unsigned)r->n;
	return (long)r->n++;
}

int
parse_attempt(struct parse_ctx *ctx, long idx, int attempt, int outcome,
    const char *msg, size_t len)
{
	struct flaky_results	*r = ctx->res;
	struct flaky_attempt	*a;

	if (flaky_array_grow(&r->attempts, &r->acap, r->nattempts,
	    sizeof *r->attempts) < 0)
		return -ENOMEM;
	a = &r->attempts[r->nattempts];
	a->result = (size_t)idx;
	a->attempt = attempt;
	a->outcome = outcome;
	a->message = NULL;
	if (len > 1024)		/* cut at a character boundary */
		for (len = 1024; len > 0 &&
		    ((unsigned char)msg[len] & 0xc0) == 0x80; len--)
			;
	if (msg != NULL && (a->message = flaky_strndup(msg, len)) == NULL)
		return -ENOMEM;
	r->nattempts++;
	return 0;
}

int
parse_message(struct parse_ctx *ctx, long idx, const char *s, size_t len)
{
	struct flaky_result	*v = &ctx->res->v[idx];
	size_t			 have = v->message ? strlen(v->message) : 0;
	size_t			 room, n;
	char			*p;

	if (have >= FLAKY_MESSAGE_MAX - 1)
		return 0;
	room = FLAKY_MESSAGE_MAX - 1 - have - (have > 0);
	n = len < room ? len : room;
	if ((p = realloc(v->message, have + (have > 0) + n + 1)) == NULL)
		return -ENOMEM;
	if (have > 0)
		p[have++] = '\n';
	memcpy(p + have, s, n);
	p[have + n] = '\0';
	v->message = p;
	return 0;
}

void
parse_msg_add(struct flaky_buf *b, const char *s, size_t len)
{
	if (b->len >= FLAKY_MESSAGE_MAX - 1)
		return;
	if (len > FLAKY_MESSAGE_MAX - 1 - b->len)
		len = FLAKY_MESSAGE_MAX - 1 - b->len;
	flaky_buf_add(b, s, len);
}

void
parse_msg_line(struct flaky_buf *b, const char *s, size_t len)
{
	if (b->len >= FLAKY_MESSAGE_MAX - 1)
		return;
	if (b->len > 0)
		flaky_buf_addc(b, '\n');
	parse_msg_add(b, s, len);
}

static int
set_str(char **dst, const char *s, size_t len)
{
	char	*p;

	if ((p = flaky_strndup(s, len)) == NULL)
		return -ENOMEM;
	free(*dst);
	*dst = p;
	return 0;
}

int
parse_set_version(struct parse_ctx *ctx, const char *s, size_t len)
{
	return set_str(&ctx->res->version, s, len);
}

int
parse_set_seed(struct parse_ctx *ctx, const char *s, size_t len)
{
	return set_str(&ctx->res->seed, s, len);
}

int
parse_incomplete(struct parse_ctx *ctx, const char *fmt, ...)
{
	struct flaky_buf	 b;
	va_list			 ap;

	if (ctx->res->incomplete != NULL)
		return 0;
	flaky_buf_init(&b);
	va_start(ap, fmt);
	flaky_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (b.oom) {
		flaky_buf_free(&b);
		return -ENOMEM;
	}
	ctx->res->incomplete = flaky_buf_steal(&b);
	return ctx->res->incomplete != NULL ? 0 : -ENOMEM;
}

int
flaky_parser_new(struct flaky_parser **ret, const char *rundir)
{
	struct flaky_parser	*p;

	if ((p = calloc(1, sizeof *p)) == NULL)
		return -ENOMEM;
	flaky_results_init(&p->res);
	flaky_buf_init(&p->line);
	flaky_buf_init(&p->held);
	if (rundir != NULL && (p->rundir = strdup(rundir)) == NULL) {
		free(p);
		return -ENOMEM;
	}
	p->ctx.res = &p->res;
	p->ctx.rundir = p->rundir;
	*ret = p;
	return 0;
}

void
flaky_parser_free(struct flaky_parser *p)
{
	if (p == NULL)
		return;
	if (p->runner != NULL && p->runner->free != NULL)
		p->runner->free(&p->ctx);
	flaky_results_free(&p->res);
	flaky_buf_free(&p->line);
	flaky_buf_free(&p->held);
	free(p->rundir);
	free(p);
}

/* Forget the window. */
static void
window_clear(struct flaky_parser *p)
{
	flaky_buf_free(&p->held);
	p->head = 0;
	p->nheld = 0;
	memset(p->votes, 0, sizeof p->votes);
}

/* The window's oldest line. */
static struct held_line
window_oldest(const struct flaky_parser *p)
{
	struct held_line	 h;

	memcpy(&h, p->held.data + p->head, sizeof h);
	return h;
}

/* Drop the window's oldest line; the space is reused once half the buffer
 * is dead, so each byte is moved a bounded number of times. */
static void
window_drop(struct flaky_parser *p)
{
	struct held_line	 h = window_oldest(p);

	for (size_t i = 0; i < NRUNNERS; i++)
		p->votes[i] -= h.votes[i];
	p->head += sizeof h + h.len;
	p->nheld--;
	if (p->nheld == 0) {
		flaky_buf_reset(&p->held);
		p->head = 0;
	} else if (p->head > p->held.len / 2) {
		memmove(p->held.data, p->held.data + p->head,
		    p->held.len - p->head);
		p->held.len -= p->head;
		p->head = 0;
	}
}

/* Keep a line, with its votes, at the window's end. */
static int
window_add(struct flaky_parser *p, const char *s, size_t n, const int *v)
{
	struct held_line	 h;

	h.len = n;
	for (size_t i = 0; i < NRUNNERS; i++) {
		h.votes[i] = (unsigned char)v[i];
		p->votes[i] += v[i];
	}
	flaky_buf_add(&p->held, &h, sizeof h);
	flaky_buf_add(&p->held, s, n);
	p->nheld++;
	return p->held.oom ? -ENOMEM : 0;
}

/* Does one of the window's oldest lines vote? A choice made on votes then
 * replays the lines just before the first vote too: Mocha's suite title
 * comes before its first test line, which is its first vote. */
#define HEADER_LINES	16
static int
window_votes_soon(const struct flaky_parser *p)
{
	const char	*s = p->held.data + p->head;
	size_t		 k = 0;

	for (; k < p->nheld && k <= HEADER_LINES; k++) {
		struct held_line h;

		memcpy(&h, s, sizeof h);
		for (size_t i = 0; i < NRUNNERS; i++)
			if (h.votes[i] > 0)
				return 1;
		s += sizeof h + h.len;
	}
	return 0;
}

/* The runner with most votes in the window (the first on a tie). */
static size_t
window_best(const struct flaky_parser *p)
{
	size_t	 best = 0;

	for (size_t i = 1; i < NRUNNERS; i++)
		if (p->votes[i] > p->votes[best])
			best = i;
	return best;
}

/* Pick the runner and replay the window to it. The window is kept while
 * the choice is tentative, for a runner that may take over. */
static int
choose(struct flaky_parser *p, const struct runner *r, int tentative)
{
	const char	*s, *end;
	int		 e;

	if (p->runner != NULL) {
		/* Taken over: what the first runner made of the window
		 * (no result, but perhaps a version or a total) goes. */
		if (p->runner->free != NULL)
			p->runner->free(&p->ctx);
		flaky_results_free(&p->res);
	}
	p->runner = r;
	p->tentative = tentative;
	memcpy(p->res.runner, r->name, strlen(r->name) + 1);
	if (r->init != NULL && (e = r->init(&p->ctx)) < 0)
		return e;
	s = p->held.data != NULL ? p->held.data + p->head : NULL;
	end = s + (p->held.len - p->head);
	while (s != NULL && s < end) {
		struct held_line h;

		memcpy(&h, s, sizeof h);
		s += sizeof h;
		if ((e = r->line(&p->ctx, s, h.len)) < 0)
			return e;
		s += h.len;
	}
	if (!tentative)
		window_clear(p);
	return 0;
}

/* Show one line to every runner's detect(): 1 and the runner when one is
 * certain, else 0 with the votes in v. */
static int
detect_all(const char *s, size_t n, int *v, size_t *certain)
{
	for (size_t i = 0; i < NRUNNERS; i++) {
		v[i] = runners[i]->detect(s, n);
		if (v[i] >= 2) {
			*certain = i;
			return 1;
		}
	}
	return 0;
}

/* One line while the runner is unknown, or chosen on votes only. */
static int
detect_line(struct flaky_parser *p, const char *s, size_t n)
{
	int	 v[NRUNNERS] = { 0 };
	size_t	 certain;
	int	 e, sure = detect_all(s, n, v, &certain);

	if (sure && p->runner == runners[certain]) {
		/* The tentative runner was right: it has seen the window. */
		window_clear(p);
		p->tentative = 0;
		return p->runner->line(&p->ctx, s, n);
	}
	if (sure) {
		memset(v, 0, sizeof v);
		if ((e = window_add(p, s, n, v)) < 0)
			return e;
		return choose(p, runners[certain], 0);
	}
	if (p->runner != NULL) {
		/* Tentative: held in case another runner takes over. */
		memset(v, 0, sizeof v);
		if ((e = window_add(p, s, n, v)) < 0)
			return e;
		while (p->nheld > 1 && (p->nheld > WINDOW_LINES ||
		    p->held.len - p->head > WINDOW_BYTES))
			window_drop(p);
		return p->runner->line(&p->ctx, s, n);
	}
	if ((e = window_add(p, s, n, v)) < 0)
		return e;
	while (p->nheld > WINDOW_LINES ||
	    (p->held.len - p->head > WINDOW_BYTES && p->nheld > 1)) {
		size_t	 best = window_best(p);

		if (p->votes[best] >= VOTES_MIN && window_votes_soon(p))
			return choose(p, runners[best], 1);
		window_drop(p);
	}
	return 0;
}

/* One whole line: to the runner, or to detection. */
static int
one_line(struct flaky_parser *p, const char *s, size_t n)
{
	if (n > 0 && s[n - 1] == '\r')
		n--;
	if (p->tentative && p->res.n > 0) {
		/* It found results: the choice stands. */
		p->tentative = 0;
		window_clear(p);
	}
	if (p->runner != NULL && !p->tentative)
		return p->runner->line(&p->ctx, s, n);
	return detect_line(p, s, n);
}

int
flaky_parser_feed(struct flaky_parser *p, const char *data, size_t len)
{
	const char	*s = data, *end = data + len, *nl;
	int		 e;

	if (p->error < 0)
		return p->error;
	while (s < end) {
		size_t	 n, room;

		nl = memchr(s, '\n', (size_t)(end - s));
		n = (size_t)((nl != NULL ? nl : end) - s);
		if (!p->line_cut) {
			room = FLAKY_LINE_MAX - p->line.len;
			if (n > room) {
				flaky_buf_add(&p->line, s, room);
				p->line_cut = 1;
			} else
				flaky_buf_add(&p->line, s, n);
		}
		if (p->line.oom)
			return p->error = -ENOMEM;
		if (nl == NULL)
			break;
		e = one_line(p, p->line.data ? p->line.data : "", p->line.len);
		if (e < 0)
			return p->error = e;
		flaky_buf_reset(&p->line);
		p->line_cut = 0;
		s = nl + 1;
	}
	return 0;
}

/* Tests with the same id get " #2", " #3" in run order. */
static int
cmp_index(const void *a, const void *b, void *arg)
{
	const struct flaky_result *v = arg;
	size_t	 i = *(const size_t *)a, j = *(const size_t *)b;
	int	 c = strcmp(v[i].test, v[j].test);

	if (c != 0)
		return c;
	return i < j ? -1 : i > j;
}

int
parse_dedupe(struct flaky_results *r)
{
	size_t	*ix;
	int	 e = 0;

	if (r->n < 2)
		return 0;
	if ((ix = malloc(r->n * sizeof *ix)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++)
		ix[i] = i;
	qsort_r(ix, r->n, sizeof *ix, cmp_index, r->v);
	/* The first of a group keeps its name; later ones get a suffix. */
	for (size_t i = 1, g = 0; i < r->n; i++) {
		struct flaky_result *b = &r->v[ix[i]];
		struct flaky_buf nb;

		if (strcmp(r->v[ix[g]].test, b->test) != 0) {
			g = i;
			continue;
		}
		flaky_buf_init(&nb);
		flaky_buf_printf(&nb, "%s #%zu", b->test, i - g + 1);
		if (nb.oom) {
			e = -ENOMEM;
			break;
		}
		free(b->test);
		b->test = flaky_buf_steal(&nb);
	}
	free(ix);
	return e;
}

int
flaky_parser_finish(struct flaky_parser *p, struct flaky_results *out)
{
	int	 e;

	if (p->error < 0)
		return p->error;
	if (p->line.len > 0 || p->line_cut) {
		if ((e = one_line(p, p->line.data, p->line.len)) < 0)
			return p->error = e;
		flaky_buf_reset(&p->line);
	}
	if (p->runner == NULL && p->nheld > 0) {
		size_t	 best = window_best(p);

		if (p->votes[best] > 0 && (e = choose(p, runners[best], 0)) < 0)
			return p->error = e;
	}
	window_clear(p);
	if (p->runner != NULL && p->runner->finish != NULL &&
	    (e = p->runner->finish(&p->ctx)) < 0)
		return p->error = e;
	if ((p->runner == NULL || p->res.n == 0) && p->res.warning == NULL) {
		p->res.warning = strdup(p->runner == NULL ?
		    "no known test runner output (" FLAKY_PARSE_RUNNERS ") was "
		    "recognized" :
		    FLAKY_PARSE_NO_RESULT);
	}
	if ((e = parse_dedupe(&p->res)) < 0)
		return p->error = e;
	*out = p->res;
	flaky_results_init(&p->res);
	return 0;
}

int
flaky_parse_buffer(const char *s, size_t len, const char *rundir,
    struct flaky_results *out)
{
	struct flaky_parser	*p;
	int			 e;

	if ((e = flaky_parser_new(&p, rundir)) < 0)
		return e;
	if ((e = flaky_parser_feed(p, s, len)) == 0)
		e = flaky_parser_finish(p, out);
	flaky_parser_free(p);
	return e;
}
