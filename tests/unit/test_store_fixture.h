/* The store suites' fixture (test_store_fixture.c). Each function fails
 * the running check test instead of returning an error. */
#ifndef FLAKY_TEST_STORE_FIXTURE_H
#define FLAKY_TEST_STORE_FIXTURE_H

#include <stdint.h>

#include <sqlite3.h>

#include "parse/parse.h"
#include "store/store.h"

/* 2026-11-01T12:00:00Z: day 20758 */
#define T0	1793534400000LL
#define DAY0	20758

/* The test's directory and its database, made by setup. */
extern char	 dir[64];
extern char	 path[128];

/* Check fixtures: a new directory /tmp/flaky-store-XXXXXX, and its
 * removal. */
void	 setup(void);
void	 teardown(void);
/* A second connection to path, with the output functions (run_output). */
sqlite3	*raw_open(void);
/* One more result (test NULL: none) at the next position. */
void	 add(struct flaky_results *, const char *test, int outcome,
	    int64_t us, const char *msg);
struct flaky_store *open_store(void);
/* The id of the target name (pytest -v in /src). */
int64_t	 target(struct flaky_store *, const char *name);
/* Store one finished run of results, classified; returns its id. */
int64_t	 store_run(struct flaky_store *, int64_t tid, int64_t started,
	    const struct flaky_results *);

#endif
