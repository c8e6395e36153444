/* The inside of the pytest parser, shared by its files: pytest.c reads
 * the run (-v and xdist lines, sections, the id of each result),
 * pytest_blocks.c the FAILURES / ERRORS blocks that give messages, and
 * pytest_summary.c the short summary, --durations and the final counts,
 * and decides whether the results are complete. */
#ifndef FLAKY_PARSE_PYTEST_H
#define FLAKY_PARSE_PYTEST_H

#include <stddef.h>
#include <stdint.h>

#include "runner.h"

enum section {
	S_RUN,		/* the header and the -v lines */
	S_FAILURES,	/* "=== FAILURES ===" blocks */
	S_ERRORS,	/* "=== ERRORS ===" blocks */
	S_PASSES,	/* -rA's captured output of passing tests: ignored */
	S_SUMMARY,	/* "=== short test summary info ===" */
	S_DURATIONS,	/* --durations: "0.50s call     path::test" */
	S_WARNINGS,	/* "warnings summary": ids of tests that warned */
	S_OTHER,	/* plugins' sections */
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
	struct parse_ids ids;		/* id -> result */

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
	/* Why pytest stopped before any test, if it did (stop_line()); in
	 * a conftest's import error, where its exception's line goes. */
	struct flaky_buf stop;
	size_t		 conftest;
};

/* An ASCII digit, whatever the locale says. */
static inline int
pytest_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* pytest.c */
/* The status word that starts s, -1 if none; *wl gets its length. */
int	 pytest_word_at(const char *, size_t, size_t *wl);
/* Where the node id at the start of s ends, 0 if s starts with none. */
size_t	 pytest_nodeid_end(const char *, size_t);
/* The first result (in run order) with this id and none of the flags in
 * skip; -1 if none. */
long	 pytest_lookup(struct parse_ctx *, struct pytest *, const char *,
	    size_t, unsigned skip);
/* Append a result and index it; its index or -ENOMEM. */
long	 pytest_add(struct parse_ctx *, struct pytest *, const char *, size_t,
	    int outcome);

/* pytest_blocks.c */
/* A line inside a FAILURES or ERRORS section. */
int	 pytest_block_line(struct pytest *, const char *, size_t);
/* The current block is complete: keep its decisive lines for later. */
int	 pytest_end_block(struct pytest *);
/* Give each failed result the message of its block. */
int	 pytest_match_blocks(struct parse_ctx *, struct pytest *);

/* pytest_summary.c */
/* A final counts line: the number of tests, or -1 when s is none. */
long	 pytest_final_counts(const char *, size_t);
/* A final counts line's total; sessions in one output add up. */
void	 pytest_add_total(struct parse_ctx *, struct pytest *, long);
/* One line of the short test summary. */
int	 pytest_summary_line(struct parse_ctx *, struct pytest *, const char *,
	    size_t);
/* "0.50s call     path::test": --durations adds the phases' times. */
void	 pytest_duration_line(struct parse_ctx *, struct pytest *,
	    const char *, size_t);
/* Do the results hold every test pytest counted? 0 or -ENOMEM. */
int	 pytest_completeness(struct parse_ctx *, struct pytest *);

#endif
