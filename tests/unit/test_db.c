/* Reading a database back in the store's unit tests (test_db.h). */
#include "buildconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "test_db.h"
#include "util/util.h"

/* internals (lib/store/store_int.h) */
extern const char *const flaky_schema_migrations[];
extern int store_hist_register(sqlite3 *);
extern int store_output_register(sqlite3 *);

sqlite3 *
tu_db_before(const char *path, const char *marker, int *from)
{
	sqlite3	*db;
	int	 v = 0;

	while (v < flaky_store_schema_version() &&
	    strstr(flaky_schema_migrations[v], marker) == NULL)
		v++;
	ck_assert_msg(v < flaky_store_schema_version(), "no migration holds "
	    "\"%s\"", marker);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(store_hist_register(db), SQLITE_OK);
	ck_assert_int_eq(store_output_register(db), SQLITE_OK);
	for (int i = 0; i < v; i++)
		ck_assert_msg(sqlite3_exec(db, flaky_schema_migrations[i], NULL,
		    NULL, NULL) == SQLITE_OK, "migration %d: %s", i + 1,
		    sqlite3_errmsg(db));
	*from = v;
	return db;
}

char *
tu_rows(sqlite3 *db, const char *sql)
{
	sqlite3_stmt	*st;
	struct flaky_buf b;
	int		 rc;

	flaky_buf_init(&b);
	ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK,
	    "%s: %s", sql, sqlite3_errmsg(db));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const unsigned char *t = sqlite3_column_text(st, i);

			if (i > 0)
				flaky_buf_addc(&b, '|');
			flaky_buf_adds(&b, t ? (const char *)t : "NULL");
		}
		flaky_buf_addc(&b, '\n');
	}
	ck_assert_msg(rc == SQLITE_DONE, "%s: %s", sql, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	flaky_buf_cstr(&b);
	return flaky_buf_steal(&b);
}

void
tu_rows_eq(sqlite3 *db, const char *sql, const char *want)
{
	char	*s = tu_rows(db, sql);

	ck_assert_msg(strcmp(s, want) == 0, "%s:\n%s\nexpected:\n%s", sql, s,
	    want);
	free(s);
}

int64_t
tu_q1(sqlite3 *db, const char *sql)
{
	sqlite3_stmt	*st;
	int64_t		 v;

	ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK,
	    "%s: %s", sql, sqlite3_errmsg(db));
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}
