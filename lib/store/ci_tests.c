/* The tests a target's branch knows (issue 30, flakyctl ci --new-tests):
 * every test reported by its newest runs on that branch, so that a test
 * none of them reported is new. Runs with no branch recorded (flakyd's,
 * analyze's, ingest's without CI variables) count as the branch's: they
 * run the code a checkout holds, which is the default branch's where a
 * team runs flaky beside CI. */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "util/util.h"

/* Names in byte order, for bsearch. */
static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
flaky_store_branch_tests(struct flaky_store *s, const char *target,
    const char *branch, int max_runs, struct flaky_branch_tests *out,
    char *err, size_t errlen)
{
	struct sql_stmt	*runs = NULL, *tests = NULL;
	size_t		 cap = 0;
	int		 r = 0, rc, oom = 0;

	memset(out, 0, sizeof *out);
	/* newest first through runs_by_target; each run's results are one
	 * range of the results table (its key starts with the run) */
	if ((r = store_prepare(s, "SELECT ru.id FROM runs ru JOIN targets tg "
	    "ON tg.id = ru.target_id LEFT JOIN run_ci c ON c.run_id = ru.id "
	    "WHERE tg.name = ?1 AND ru.tests > 0 AND (c.branch IS NULL OR "
	    "c.branch = ?2) ORDER BY ru.started_ms DESC, ru.id DESC LIMIT ?3",
	    &runs, err, errlen)) < 0)
		return r;
	if ((r = store_prepare(s, "SELECT t.name FROM results r JOIN tests t "
	    "ON t.id = r.test_id WHERE r.run_id = ?1", &tests, err,
	    errlen)) < 0)
		goto out;
	sql_bind_text(runs, 1, target, -1, SQL_STATIC);
	sql_bind_text(runs, 2, branch, -1, SQL_STATIC);
	sql_bind_int64(runs, 3, max_runs);
	while ((rc = sql_step(runs)) == SQL_ROW && !oom) {
		out->runs++;
		sql_reset(tests);
		sql_bind_int64(tests, 1, sql_column_int64(runs, 0));
		while ((rc = sql_step(tests)) == SQL_ROW) {
			if (flaky_array_grow(&out->names, &cap, out->n,
			    sizeof *out->names) < 0) {
				oom = 1;
				break;
			}
			if ((out->names[out->n] = store_col_dup(tests, 0,
			    &oom)) == NULL || oom)
				break;
			out->n++;
		}
		if (!oom && rc != SQL_DONE) {
			r = store_sql_error(s, err, errlen, "reading a run's "
			    "tests");
			goto out;
		}
	}
	if (oom) {
		r = flaky_error(err, errlen, ENOMEM, "out of memory");
		goto out;
	}
	if (rc != SQL_DONE) {
		r = store_sql_error(s, err, errlen, "reading the branch's "
		    "runs");
		goto out;
	}
	/* each name once */
	if (out->n > 1)
		qsort(out->names, out->n, sizeof *out->names, name_cmp);
	{
		size_t	 k = 0;

		for (size_t i = 0; i < out->n; i++) {
			if (k > 0 && strcmp(out->names[k - 1],
			    out->names[i]) == 0) {
				free(out->names[i]);
				continue;
			}
			out->names[k++] = out->names[i];
		}
		out->n = k;
	}
out:
	sql_finalize(runs);
	sql_finalize(tests);
	if (r < 0)
		flaky_branch_tests_free(out);
	return r;
}

int
flaky_branch_tests_has(const struct flaky_branch_tests *b, const char *name)
{
	return b->n > 0 && bsearch(&name, b->names, b->n, sizeof *b->names,
	    name_cmp) != NULL;
}

void
flaky_branch_tests_free(struct flaky_branch_tests *b)
{
	if (b == NULL)
		return;
	for (size_t i = 0; i < b->n; i++)
		free(b->names[i]);
	free(b->names);
	memset(b, 0, sizeof *b);
}
