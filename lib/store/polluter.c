/* The smallest polluter of a test, as flakyctl polluter found it: one row
 * per victim in polluters (schema/0007), read by triage and ticket. */
#include "buildconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

int
flaky_store_polluter_put(struct flaky_store *s,
    const struct flaky_polluter_row *p, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r;

	if ((r = store_prepare(s, "INSERT INTO polluters (test_id, "
	    "from_run_id, candidates, members, reruns, minimal, command, "
	    "made_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
	    "ON CONFLICT (test_id) DO UPDATE SET from_run_id = ?2, "
	    "candidates = ?3, members = ?4, reruns = ?5, minimal = ?6, "
	    "command = ?7, made_ms = ?8", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, p->test_id);
	sql_bind_int64(st, 2, p->from_run_id);
	sql_bind_int64(st, 3, p->candidates);
	sql_bind_text(st, 4, p->members, -1, SQL_STATIC);
	sql_bind_int64(st, 5, p->reruns);
	sql_bind_int(st, 6, p->minimal != 0);
	sql_bind_text(st, 7, p->command, -1, SQL_STATIC);
	sql_bind_int64(st, 8, p->made_ms);
	if (sql_step(st) != SQL_DONE)
		r = store_sql_error(s, err, errlen, "storing the polluter");
	sql_finalize(st);
	return r;
}

/* A column's text copied (NULL stays NULL); -ENOMEM. */
static int
polluter_text(struct sql_stmt *st, int col, char **ret)
{
	const unsigned char *t = sql_column_text(st, col);

	*ret = NULL;
	if (t != NULL && (*ret = strdup((const char *)t)) == NULL)
		return -ENOMEM;
	return 0;
}

int
flaky_store_polluter_get(struct flaky_store *s, int64_t test_id,
    struct flaky_polluter_row *p, char *err, size_t errlen)
{
	struct sql_stmt	*st;
	int		 r, rc;

	memset(p, 0, sizeof *p);
	if ((r = store_prepare(s, "SELECT from_run_id, candidates, members, "
	    "reruns, minimal, command, made_ms FROM polluters WHERE "
	    "test_id = ?1", &st, err, errlen)) < 0)
		return r;
	sql_bind_int64(st, 1, test_id);
	if ((rc = sql_step(st)) == SQL_ROW) {
		p->test_id = test_id;
		p->from_run_id = sql_column_int64(st, 0);
		p->candidates = sql_column_int64(st, 1);
		p->reruns = sql_column_int64(st, 3);
		p->minimal = sql_column_int(st, 4);
		p->made_ms = sql_column_int64(st, 6);
		if (polluter_text(st, 2, &p->members) < 0 ||
		    polluter_text(st, 5, &p->command) < 0) {
			flaky_polluter_row_clear(p);
			r = flaky_error(err, errlen, ENOMEM, "out of memory");
		} else
			r = 1;
	} else if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen, "reading the polluter");
	sql_finalize(st);
	return r;
}

void
flaky_polluter_row_clear(struct flaky_polluter_row *p)
{
	if (p == NULL)
		return;
	free(p->members);
	free(p->command);
	memset(p, 0, sizeof *p);
}
