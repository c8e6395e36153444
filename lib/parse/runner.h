/* The inside of the parser: one state machine per runner, fed whole lines. */
#ifndef FLAKY_PARSE_RUNNER_H
#define FLAKY_PARSE_RUNNER_H

#include <stddef.h>

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

extern const struct runner runner_pytest;
extern const struct runner runner_unittest;
extern const struct runner runner_jest;
extern const struct runner runner_gotest;
extern const struct runner runner_tap;

#endif
