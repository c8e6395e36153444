/* What the parser suites (test_parse_*.c) share: parsing a fixture whole
 * and in small chunks (the results must not differ), checking results
 * against a table, and running one suite. */
#ifndef FLAKY_PARSE_TEST_H
#define FLAKY_PARSE_TEST_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/parse.h"

/* A result expected at its position (pt_check). */
struct want {
	const char	*test;
	int		 outcome;
	int64_t		 duration_us;	/* -2: do not check */
	const char	*msg;		/* substring; NULL: no message */
};

/* A result expected by id (pt_assert_has, pt_assert_exact). */
struct expect {
	const char	*test;
	int		 outcome;
	const char	*msg;		/* a substring of the message or NULL */
};

/* Two parses of the same text agree in every field. */
void	 pt_same(const struct flaky_results *, const struct flaky_results *,
	    const char *what);
/* Parse tests/fixtures/REL whole, then 1 and 7 bytes at a time: all the
 * same. */
void	 pt_fixture(const char *rel, const char *rundir,
	    struct flaky_results *);
/* Parse a string whole and a byte at a time: the same. */
void	 pt_text(const char *, struct flaky_results *);
/* Exactly these results, in this order, with outcome, duration and
 * message. */
void	 pt_check(const struct flaky_results *, const struct want *, size_t);
/* How many results have this outcome. */
size_t	 pt_count(const struct flaky_results *, int outcome);
/* The first result of this id, or NULL. */
const struct flaky_result *pt_find(const struct flaky_results *,
	    const char *test);
/* pt_find without trailing blanks in id: the TAP parser drops them from
 * a description ("ok 55 - prefix "), other parsers keep them (a name
 * pattern must match the name). */
const struct flaky_result *pt_find_trimmed(const struct flaky_results *,
	    const char *id);
/* Each expected test is there with its outcome and message. */
void	 pt_assert_has(const struct flaky_results *, const struct expect *,
	    size_t);
/* Exactly these tests, in this order, without durations. */
void	 pt_assert_exact(const struct flaky_results *, const struct expect *,
	    size_t);

/* Run the suite name, whose tests add() adds, each with a timeout of
 * 60 s; the exit status. */
int	 pt_run(const char *name, void (*add)(TCase *));

#endif
