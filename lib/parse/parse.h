/* Runner output -> per-test results.
 *
 * A parser is fed a run's output as it arrives, in chunks of any size, one
 * parser per stream (stdout, stderr). It splits lines itself, detects the
 * runner from the lines it sees (pytest, unittest, Jest, Vitest,
 * Playwright, Mocha, node:test, go test, TAP) and hands each line to that
 * runner's state machine, so memory is bounded by the number of tests, not
 * by the size of the output. JUnit XML is a file, read
 * with expat by flaky_parse_junit(). */
#ifndef FLAKY_PARSE_H
#define FLAKY_PARSE_H

#include <stddef.h>
#include <stdint.h>

enum flaky_outcome {
	FLAKY_PASS = 0,
	FLAKY_FAIL = 1,
	FLAKY_ERROR = 2,
	FLAKY_SKIP = 3,
	FLAKY_XFAIL = 4,	/* expected failure */
	FLAKY_XPASS = 5,	/* unexpected pass (non-strict) */
};
#define FLAKY_OUTCOME_MAX	FLAKY_XPASS
#define FLAKY_FAILED(o)		((o) == FLAKY_FAIL || (o) == FLAKY_ERROR)

/* A failure message kept per result is bounded to this many bytes. */
#define FLAKY_MESSAGE_MAX	4096
/* Lines longer than this are cut (the rest is dropped, not split). */
#define FLAKY_LINE_MAX		(64 * 1024)

struct flaky_result {
	char		*test;		/* the runner's own test id, UTF-8 */
	int		 outcome;	/* enum flaky_outcome */
	int64_t		 duration_us;	/* -1 when the runner did not print it */
	char		*message;	/* failure message or NULL; bounded */
	unsigned	 position;	/* 0-based order in which tests ran */
	/* Set by classification (flaky_classify_results), not by the
	 * parsers; the store writes it as given and never classifies. */
	char		*signature;	/* failed results: "TIMEOUT", ... */
};

/* One attempt of a test its runner retried itself (JUnit's flakyFailure,
 * Playwright's retries). Attempt 0 is the first (the result's own
 * outcome). */
struct flaky_attempt {
	size_t		 result;	/* index into flaky_results.v */
	int		 attempt;
	int		 outcome;
	char		*message;	/* bounded, or NULL */
};

/* Issue 34: one approximate assertion of a test in a run, measured by
 * flaky's seed hook (lib/parse/headroom.c reads its file, docs/runners.md
 * "Seed sweeps"): its worst call at one call site. kind "tol": quantity
 * is the share of the tolerance used (failing past 1, the bound); "lt",
 * "le", "gt", "ge": `quantity OP bound` must hold. */
struct flaky_headroom_obs {
	size_t		 result;	/* index into flaky_results.v */
	char		*path;		/* relative to the run's directory
					 * when below it */
	int		 line;
	char		 kind[4];
	double		 quantity, bound;
	int		 calls;		/* at the site in the test */
	double		 abs_err, rel_err;	/* NAN: not known */
	char		*tolerance;	/* "rtol=1e-07, atol=0"; NULL */
	char		*assertion;	/* "assert_allclose", "compare" */
};

struct flaky_results {
	char			 runner[16];	/* "pytest", ..., "" if unknown */
	char			*version;	/* runner version or NULL */
	char			*seed;		/* random-order seed or NULL */
	struct flaky_result	*v;
	size_t			 n, cap;
	long			 summary_total;	/* the runner's own count, -1 */
	char			*warning;	/* why nothing was parsed, or NULL */
	/* Why the results do not hold every test's outcome (the runner
	 * printed only failures, its summary disagrees, it stopped early,
	 * it served results from a cache), with the fix; NULL when they
	 * are complete. An incomplete run gives no test a rate. */
	char			*incomplete;
	/* Every attempt of the tests the runner retried itself, from its
	 * output (Playwright's retries, Vitest's "(retry x2)"); empty when
	 * none was. The store keeps them beside the results (attempts). */
	struct flaky_attempt	*attempts;
	size_t			 nattempts, acap;
	/* Issue 34: the margins of approximate assertions, when the run
	 * was seeded by flaky's hook; empty otherwise. */
	struct flaky_headroom_obs *headroom;
	size_t			 nheadroom;
};

/* The runners whose output the parsers know, for messages. */
/* The warning of a stream whose runner was known but named no test. */
#define FLAKY_PARSE_NO_RESULT	"the runner was recognized but no test " \
	"result was found"
#define FLAKY_PARSE_RUNNERS	"pytest, unittest, Jest, Vitest, " \
	"Playwright, Mocha, node:test, go test, TAP, cargo test, GoogleTest, " \
	"RSpec, PHPUnit"

struct flaky_parser;

/* rundir: the run's working directory, for making paths relative (Jest). */
int	 flaky_parser_new(struct flaky_parser **ret, const char *rundir);
int	 flaky_parser_feed(struct flaky_parser *, const char *, size_t);
/* Ends the input and moves the results into *out (which the caller frees
 * with flaky_results_free). Tests with the same id in one run get a stable
 * suffix " #2", " #3" in the order they ran. */
int	 flaky_parser_finish(struct flaky_parser *, struct flaky_results *out);
void	 flaky_parser_free(struct flaky_parser *);

/* Parse a whole buffer (ingest, tests). */
int	 flaky_parse_buffer(const char *, size_t, const char *rundir,
	    struct flaky_results *out);

/* Read a JUnit XML file (no external entities, no entity expansion beyond
 * the predefined ones). Returns 0, or a negative errno with err filled:
 * "FILE:LINE:COL: what was expected". */
int	 flaky_parse_junit(const char *path, struct flaky_results *out,
	    char *err, size_t errlen);
int	 flaky_parse_junit_buffer(const char *name, const char *, size_t,
	    struct flaky_results *out, char *err, size_t errlen);

/* What a JUnit file holds beyond the results, for ingest: the first
 * <testsuite timestamp=> and each attempt of a retried test (Surefire's and
 * pytest-rerunfailures' flakyFailure, flakyError, rerunFailure, rerunError).
 * struct flaky_attempt is above. */
struct flaky_junit_extra {
	int64_t			 timestamp_ms;	/* -1: none or unreadable */
	struct flaky_attempt	*attempts;
	size_t			 nattempts, cap;
};
int	 flaky_parse_junit_ex(const char *path, struct flaky_results *out,
	    struct flaky_junit_extra *extra, char *err, size_t errlen);
void	 flaky_junit_extra_free(struct flaky_junit_extra *);

/* A JUnit file parsed as it is read, for files of any size (flakyctl
 * ingest): each <testcase> is handed to fn when it ends, with its
 * attempts, and forgotten. What a stream holds is bounded by the limits
 * of one testcase, not by the file. r->test is the id before duplicates
 * get their " #2" (the caller sees every result, so it numbers them);
 * r->position counts testcases from 0; attempts[].result is 0. fn returns
 * 0, or a negative errno with err (the one given to feed) filled: the
 * parse stops and feed returns it. Same bounds, checks and error messages
 * as flaky_parse_junit, except the file size: the caller bounds that. */
typedef int (*flaky_junit_fn)(void *arg, const struct flaky_result *r,
	    const struct flaky_attempt *attempts, size_t nattempts,
	    char *err, size_t errlen);
struct flaky_junit_stream;
struct flaky_junit_info {
	char		 runner[16];	/* "pytest" or "junit" */
	long		 summary_total;	/* tests= of the file, -1 */
	size_t		 n;		/* testcases handed over */
	size_t		 nattempts;	/* attempts handed over */
	int64_t		 timestamp_ms;	/* the first <testsuite timestamp=> */
};
int	 flaky_junit_stream_new(struct flaky_junit_stream **, const char *name,
	    flaky_junit_fn fn, void *arg);
/* Any len; final on the last piece (len may be 0 then). */
int	 flaky_junit_stream_feed(struct flaky_junit_stream *, const char *,
	    size_t len, int final, char *err, size_t errlen);
/* The first <testsuite timestamp=> read so far, -1: none yet. */
int64_t	 flaky_junit_stream_timestamp(const struct flaky_junit_stream *);
/* After the final feed: what the file says beyond its testcases. */
int	 flaky_junit_stream_end(struct flaky_junit_stream *,
	    struct flaky_junit_info *, char *err, size_t errlen);
void	 flaky_junit_stream_free(struct flaky_junit_stream *);

/* Merge src into dst (results appended, positions continued); src emptied. */
int	 flaky_results_merge(struct flaky_results *dst, struct flaky_results *src);
void	 flaky_results_init(struct flaky_results *);
void	 flaky_results_free(struct flaky_results *);

const char *flaky_outcome_name(int);	/* "pass", "fail", ... */

/* The seed hook's file of margins (issue 34): each line whose test is
 * one of r's results goes into r->headroom. Paths below rundir (as given
 * or real) become relative to it. A missing file is no error (no
 * approximate assertion ran); 0, or -EFBIG, -ENOMEM, the errno of an
 * unreadable file, with err filled. At most FLAKY_HEADROOM_MAX lines. */
#define FLAKY_HEADROOM_MAX	100000
int	 flaky_parse_headroom(const char *path, const char *rundir,
	    struct flaky_results *r, char *err, size_t errlen);
/* Does the kind's observation fail its bound? */
int	 flaky_headroom_fails(const char *kind, double quantity, double bound);

#endif
