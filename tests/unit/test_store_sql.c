/* The store's SQL on PostgreSQL (lib/store/sql_pg.c): what the
 * translation of SQLite's dialect makes of the phrases the store uses,
 * and what it leaves alone (strings, names, other words). */
#include "buildconf.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql.h"

static void
tr_eq(const char *in, const char *want)
{
	char	*got = sql_pg_translate(in);

	ck_assert_ptr_nonnull(got);
	ck_assert_msg(strcmp(got, want) == 0, "%s\n -> %s\n want %s", in, got,
	    want);
	free(got);
}

START_TEST(parameters)
{
	/* numbered as written; bare ones count on from the highest */
	tr_eq("SELECT ?1, ?2, ?1", "SELECT $1, $2, $1");
	tr_eq("VALUES (?, ?, ?)", "VALUES ($1, $2, $3)");
	tr_eq("SELECT ?3, ?", "SELECT $3, $4");
	tr_eq("WHERE id = ?12", "WHERE id = $12");
	/* not in strings or quoted names */
	tr_eq("SELECT '?1', \"a?\" FROM t WHERE x = ?1",
	    "SELECT '?1', \"a?\" FROM t WHERE x = $1");
	tr_eq("SELECT 'it''s ?', ?", "SELECT 'it''s ?', $1");
}
END_TEST

START_TEST(phrases)
{
	tr_eq("BEGIN IMMEDIATE", "BEGIN");
	tr_eq("PRAGMA foreign_keys = ON", "");
	tr_eq("  pragma user_version", "");
	tr_eq("SELECT CAST(x AS REAL), CAST(y AS INTEGER) FROM t",
	    "SELECT CAST(x AS double precision), CAST(y AS bigint) FROM t");
	tr_eq("SELECT * FROM t LIMIT -1", "SELECT * FROM t LIMIT ALL");
	tr_eq("FROM results r INDEXED BY results_failed WHERE r.x = 1",
	    "FROM results r  WHERE r.x = 1");
	tr_eq("FROM results r CROSS JOIN runs ru NOT INDEXED ON ru.id = 1",
	    "FROM results r JOIN runs ru  ON ru.id = 1");
	tr_eq("DELETE FROM temp.ingest_seen", "DELETE FROM pg_temp.ingest_seen");
	tr_eq("SELECT value FROM json_each(?7)",
	    "SELECT value FROM flaky_json_each($7)");
	/* words that only start like a phrase stay */
	tr_eq("SELECT pragmatic, real_us, integer_x FROM t",
	    "SELECT pragmatic, real_us, integer_x FROM t");
	tr_eq("SELECT mytemp.x FROM mytemp", "SELECT mytemp.x FROM mytemp");
	tr_eq("SELECT 'CROSS JOIN' AS s", "SELECT 'CROSS JOIN' AS s");
}
END_TEST

START_TEST(insert_or_ignore)
{
	tr_eq("INSERT OR IGNORE INTO a (k) VALUES (?1)",
	    "INSERT INTO a (k) VALUES ($1) ON CONFLICT DO NOTHING");
	tr_eq("INSERT OR IGNORE INTO a (k) VALUES (?1) RETURNING id;",
	    "INSERT INTO a (k) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id");
	tr_eq("INSERT INTO a (k) VALUES (1);  ", "INSERT INTO a (k) VALUES (1)");
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("store_sql");
	TCase	*tc = tcase_create("store_sql");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, parameters);
	tcase_add_test(tc, phrases);
	tcase_add_test(tc, insert_or_ignore);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
