/* Reading a database back in the store's unit tests. */
#ifndef FLAKY_TEST_DB_H
#define FLAKY_TEST_DB_H

#include <stdint.h>

#include <sqlite3.h>

/* Every row of sql: columns joined by '|' (NULL as "NULL"), rows ended
 * by '\n'; the caller frees. */
char	*tu_rows(sqlite3 *, const char *sql);
/* Fails the test unless tu_rows(sql) is want. */
void	 tu_rows_eq(sqlite3 *, const char *sql, const char *want);
/* The first column of the first row, as an integer. */
int64_t	 tu_q1(sqlite3 *, const char *sql);
/* A new database at path of the schema before the first migration whose
 * text holds marker (built by the migrations before it), open; *from is
 * that version, for PRAGMA user_version once the test's rows are in. */
sqlite3	*tu_db_before(const char *path, const char *marker, int *from);

#endif
