/* The store suites' fixture (test_store_fixture.h): a database in a new
 * directory per test, a second connection to read it back, targets and
 * runs stored through the store. */
#include "buildconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "classify/classify.h"
#include "parse/parse.h"
#include "store/store_int.h"
#include "test_helper.h"
#include "test_store_fixture.h"

char		 dir[64];
char		 path[128];

void
setup(void)
{
	tu_tmpdir(dir, sizeof dir, "store");
	snprintf(path, sizeof path, "%s/flaky.db", dir);
}

void
teardown(void)
{
	tu_rmdir(dir);
}

sqlite3 *
raw_open(void)
{
	sqlite3	*db;

	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE,
	    NULL), SQLITE_OK);
	/* as flakyctl's connections and the sqlite3 shell: run_output reads */
	ck_assert_int_eq(store_output_register(db), SQLITE_OK);
	return db;
}

void
add(struct flaky_results *r, const char *test, int outcome, int64_t us,
    const char *msg)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 8;
		ck_assert_ptr_nonnull(r->v = realloc(r->v,
		    r->cap * sizeof *r->v));
	}
	memset(&r->v[r->n], 0, sizeof r->v[r->n]);
	r->v[r->n].test = test ? strdup(test) : NULL;
	r->v[r->n].outcome = outcome;
	r->v[r->n].duration_us = us;
	r->v[r->n].message = msg ? strdup(msg) : NULL;
	r->v[r->n].position = (unsigned)r->n;
	r->n++;
}

struct flaky_store *
open_store(void)
{
	struct flaky_store *s;
	char		 err[512];

	ck_assert_msg(flaky_store_open(path, 0, &s, err, sizeof err) == 0,
	    "%s", err);
	return s;
}

int64_t
target(struct flaky_store *s, const char *name)
{
	int64_t	 id;
	char	 err[512];

	ck_assert_msg(flaky_store_target(s, name, "pytest -v", "/src", &id,
	    err, sizeof err) == 0, "%s", err);
	return id;
}

/* Store one finished run of results; returns its id. */
int64_t
store_run(struct flaky_store *s, int64_t tid, int64_t started,
    const struct flaky_results *res)
{
	struct flaky_run_record rec = { 0 };
	char	 err[512];

	rec.target_id = tid;
	rec.trigger = "analyze";
	rec.started_ms = started;
	rec.loadavg = -1;
	ck_assert_msg(flaky_store_run_start(s, &rec, err, sizeof err) == 0,
	    "%s", err);
	ck_assert_int_gt(rec.id, 0);
	rec.status = FLAKY_RUN_DONE;
	rec.ended_ms = started + 1500;
	rec.duration_us = 1500000;
	rec.exit_code = 1;
	rec.in_flight = 1;
	rec.out = "collected 4 items\n";
	rec.out_len = strlen(rec.out);
	/* the caller classifies, the store writes what it is given */
	ck_assert_int_eq(flaky_classify_results(NULL, (struct flaky_results *)res, NULL), 0);
	ck_assert_msg(flaky_store_run_finish(s, &rec, res, err, sizeof err) ==
	    0, "%s", err);
	return rec.id;
}
