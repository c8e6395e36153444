/* The inside of the parser: one state machine per runner, fed whole lines. */
#ifndef FLAKY_PARSE_RUNNER_H
#define FLAKY_PARSE_RUNNER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "parse/parse.h"
#include "util/util.h"

struct parse_ctx;

/* Each runner's file (pytest.c, ...) defines one of these. */
struct runner {
	const char *name;
	/* How sure a line makes us that this is the runner's output: 0 no
	 * idea, 1 maybe, 2 certain. The first line scoring 2, or the runner
	 * with most 1s once the look-ahead is full, wins. */
	int	 (*detect)(const char *line, size_t len);
	/* Allocate the state; 0 or -ENOMEM. */
	int	 (*init)(struct parse_ctx *);
	/* One line, without its newline (a trailing \r is kept out too). */
	int	 (*line)(struct parse_ctx *, const char *line, size_t len);
	/* End of input: flush what is pending. */
	int	 (*finish)(struct parse_ctx *);
	void	 (*free)(struct parse_ctx *);
};

struct parse_ctx {
	struct flaky_results	*res;
	const char		*rundir;
	void			*state;		/* the runner's own */
};

/* Helpers for runners. All copy their arguments; 0 or -ENOMEM. */
/* Append a result; returns its index or -ENOMEM. duration_us -1 unknown. */
long	 parse_add(struct parse_ctx *, const char *test, size_t testlen,
	    int outcome, int64_t duration_us);
/* Set or append to a result's message, keeping FLAKY_MESSAGE_MAX. */
int	 parse_message(struct parse_ctx *, long idx, const char *, size_t);
/* Record attempt number attempt (0: the first) of result idx, with its
 * outcome and message (NULL, or len bytes kept up to 1 KiB). 0 or
 * -ENOMEM. */
int	 parse_attempt(struct parse_ctx *, long idx, int attempt, int outcome,
	    const char *msg, size_t len);
int	 parse_set_version(struct parse_ctx *, const char *, size_t);
int	 parse_set_seed(struct parse_ctx *, const char *, size_t);
/* Say why the results are incomplete (flaky_results.incomplete): one
 * user-facing sentence that names the fix. The first reason given stays.
 * 0 or -ENOMEM. */
int	 parse_incomplete(struct parse_ctx *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* Append to a held message, within FLAKY_MESSAGE_MAX; _line puts a
 * newline before it when the message is not empty. */
void	 parse_msg_add(struct flaky_buf *, const char *, size_t);
void	 parse_msg_line(struct flaky_buf *, const char *, size_t);
/* Tests with the same id get " #2", " #3" in run order (also for JUnit
 * files). 0 or -ENOMEM. */
int	 parse_dedupe(struct flaky_results *);

/* Results by test id (ids.c), for runners that name a test again after
 * its line: an open-addressing table of result index + 1. A slot left by
 * an id no longer there is harmless: each hit is checked against the
 * result's id. Zeroed is empty. */
struct parse_ids {
	uint32_t	*tab;
	size_t		 size, used;
};
/* Index result idx (the last added); 0 or -ENOMEM. */
int	 parse_ids_add(struct parse_ids *, const struct flaky_results *,
	    size_t idx);
/* The results with this id (n bytes, which may hold a NUL), one per call
 * in no particular order: *pos starts at 0; -1 after the last. */
long	 parse_ids_next(const struct parse_ids *, const struct flaky_results *,
	    const char *, size_t, size_t *pos);
void	 parse_ids_free(struct parse_ids *);
/* The last result with this id at index from or later, else -1 (a run's
 * results when an output holds several runs or binaries). */
long	 parse_ids_last(const struct parse_ids *, const struct flaky_results *,
	    const char *, size_t, size_t from);
/* parse_add, then index the result: its index or -ENOMEM. */
long	 parse_add_indexed(struct parse_ctx *, struct parse_ids *,
	    const char *test, size_t len, int outcome, int64_t duration_us);
/* The table's hash of an id, also for runners' own lookups by name. */
uint64_t parse_id_hash(const char *, size_t);
/* --color=yes: when the line holds escapes, point *s and *n at a copy
 * without them in clean, so that the text is what is matched. 0 or
 * -ENOMEM. */
int	 parse_strip_colour(struct flaky_buf *clean, const char **s,
	    size_t *n);
/* "12", "0.013" (seconds, as cargo, ctest and RSpec print them) ->
 * microseconds; -1 when s is not such a number. */
int64_t	 parse_seconds_us(const char *s, size_t n);

/* Whether s (n bytes, not NUL-terminated) starts with p. */
static inline int
parse_starts(const char *s, size_t n, const char *p)
{
	size_t	 l = strlen(p);

	return n >= l && memcmp(s, p, l) == 0;
}

/* The number of leading spaces. */
static inline size_t
parse_indent(const char *s, size_t n)
{
	size_t	 i = 0;

	while (i < n && s[i] == ' ')
		i++;
	return i;
}

/* What the JavaScript runners' reporters share (titles.c). */
/* A runner's zeroed state of size bytes in ctx->state; NULL when out of
 * memory. */
void	*parse_state(struct parse_ctx *, size_t);
/* detect() of a runner whose lines may be coloured: score's verdict on
 * the line without its escapes (0 when out of memory). */
int	 parse_detect_clean(const char *line, size_t len,
	    int (*score)(const char *, size_t));
/* Test ids repeat their parents' titles: cut at this many bytes. */
#define PARSE_ID_MAX	(8 * 1024)
/* "5ms", "3.0s", "1.5m", "0.648903ms", "2h": the duration in µs, or -1
 * when s (n bytes) is not one. */
int64_t	 parse_duration_us(const char *s, size_t n);
/* When s[0..*n) ends with " (TEXT)", cut it: *n shortened, the text in
 * *in and *inlen; 1 when cut, else 0. */
int	 parse_cut_paren(const char *s, size_t *n, const char **in,
	    size_t *inlen);
/* A path made relative to the run's directory when it lies below it
 * (runners print some paths absolute): *p and *n moved past it. */
void	 parse_relative(const struct parse_ctx *, const char **p, size_t *n);
/* Describe blocks by indentation, for reporters that print a tree
 * (Mocha's spec, node:test's spec): a title at an indentation is the
 * parent of the lines indented deeper that follow it. */
#define PARSE_TREE_DEPTH	64
struct parse_tree {
	struct {
		size_t	 indent;
		char	*title;
	}		 v[PARSE_TREE_DEPTH];
	int		 depth;
};
/* Forget the titles indented at or beyond indent. */
void	 parse_tree_pop(struct parse_tree *, size_t indent);
/* A title at indent (after popping those at or beyond it); 0 or -ENOMEM.
 * Past PARSE_TREE_DEPTH levels titles are not kept. */
int	 parse_tree_push(struct parse_tree *, size_t indent, const char *,
	    size_t);
/* The titles, outermost first, each followed by sep, into b (reset
 * first). */
void	 parse_tree_path(const struct parse_tree *, const char *sep,
	    struct flaky_buf *b);
/* Ids repeat their parents' titles: cut b at max bytes, at a UTF-8
 * character boundary. */
void	 parse_id_bound(struct flaky_buf *b, size_t max);

extern const struct runner runner_pytest;
extern const struct runner runner_unittest;
extern const struct runner runner_jest;
extern const struct runner runner_gotest;
extern const struct runner runner_tap;
extern const struct runner runner_cargo;
extern const struct runner runner_gtest;
extern const struct runner runner_rspec;
extern const struct runner runner_phpunit;
extern const struct runner runner_vitest;
extern const struct runner runner_playwright;
extern const struct runner runner_mocha;
extern const struct runner runner_nodetest;

#endif
