/* store_open (lib/store/open.c): opening a database: a new one made aside
 * from the linked image (the same as the migrations build), migrating an
 * older one, and the refusals (a newer schema, a corrupt file, places and
 * files this user may not write). Checked through a second SQLite
 * connection. */
#include "buildconf.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/store.h"
#include "test_db.h"
#include "test_helper.h"
#include "test_store_fixture.h"

START_TEST(open_new)
{
	struct flaky_store *s = open_store();
	sqlite3		*db = raw_open();

	/* v1 and whatever later migrations this binary carries */
	ck_assert_int_ge(flaky_store_schema_version(), 1);
	ck_assert_int_eq(tu_q1(db, "PRAGMA user_version"),
	    flaky_store_schema_version());
	tu_rows_eq(db, "PRAGMA journal_mode", "wal\n");
	tu_rows_eq(db, "PRAGMA foreign_keys", "0\n");	/* per connection */
	tu_rows_eq(db, "SELECT name FROM sqlite_schema WHERE type = 'table' "
	    "AND name IN ('messages', 'outcomes', 'results', 'rollups', "
	    "'runs', 'targets', 'tests') ORDER BY name",
	    "messages\noutcomes\nresults\nrollups\nruns\ntargets\ntests\n");
	tu_rows_eq(db, "SELECT name FROM sqlite_schema WHERE type = 'view' "
	    "AND name IN ('daily_trend', 'failure_messages', 'flaky_tests', "
	    "'run_list', 'test_results', 'test_stats') ORDER BY name",
	    "daily_trend\nfailure_messages\nflaky_tests\n"
	    "run_list\ntest_results\ntest_stats\n");
	ck_assert_str_eq(flaky_store_path(s), path);
	sqlite3_close(db);
	flaky_store_close(s);
	/* opening again migrates nothing and keeps the data */
	s = open_store();
	ck_assert_int_eq(target(s, "t"), 1);
	flaky_store_close(s);
	s = open_store();
	ck_assert_int_eq(target(s, "t"), 1);
	flaky_store_close(s);
	flaky_store_close(NULL);
}
END_TEST

/* A new database appears whole under its name, made aside and renamed:
 * nothing else is left in the directory but its -wal and -shm files (kept
 * for readers: read_after_writer), its mode is SQLite's own less the umask
 * and theirs the same, and it checks out. An empty file that is there
 * already (touch) is made into a database in place. */
START_TEST(new_file)
{
	struct flaky_store *s;
	struct dirent	*e;
	struct stat	 st;
	sqlite3		*db;
	mode_t		 old;
	DIR		*d;
	int		 fd;

	old = umask(027);
	s = open_store();
	umask(old);
	flaky_store_close(s);
	ck_assert_ptr_nonnull(d = opendir(dir));
	while ((e = readdir(d)) != NULL) {
		char	 p[384];

		if (e->d_name[0] == '.')
			continue;
		ck_assert_msg(strcmp(e->d_name, "flaky.db") == 0 ||
		    strcmp(e->d_name, "flaky.db-wal") == 0 ||
		    strcmp(e->d_name, "flaky.db-shm") == 0, "left: %s",
		    e->d_name);
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		ck_assert_int_eq(stat(p, &st), 0);
		ck_assert_msg((st.st_mode & 07777) == 0640, "%s: %o",
		    e->d_name, st.st_mode & 07777);
	}
	closedir(d);
	db = raw_open();
	tu_rows_eq(db, "PRAGMA integrity_check", "ok\n");
	tu_rows_eq(db, "PRAGMA journal_mode", "wal\n");
	ck_assert_int_eq(tu_q1(db, "PRAGMA user_version"),
	    flaky_store_schema_version());
	sqlite3_close(db);

	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_ge(fd = open(path, O_CREAT | O_WRONLY, 0600), 0);
	close(fd);
	s = open_store();
	ck_assert_int_eq(target(s, "t"), 1);
	flaky_store_close(s);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
}
END_TEST

/* A new database is written from the image linked in, made at build time
 * by flaky_store_build; the one built by the migrations now is the same:
 * the same schema in the same pages, version, page size and WAL mode. */
START_TEST(image_is_built_schema)
{
	static const char *const q[] = {
		"SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema "
		"ORDER BY type, name",
		"PRAGMA user_version", "PRAGMA page_size", "PRAGMA page_count",
		"PRAGMA freelist_count", "PRAGMA journal_mode",
		"PRAGMA integrity_check",
	};
	struct flaky_store *s;
	sqlite3		*a, *b;
	char		 built[160], err[512], *ra, *rb;

	ck_assert_int_eq(flaky_store_image_linked(), 1);
	snprintf(built, sizeof built, "%s/built.db", dir);
	ck_assert_msg(flaky_store_build(built, err, sizeof err) == 0, "%s",
	    err);
	s = open_store();
	flaky_store_close(s);
	ck_assert_int_eq(sqlite3_open_v2(built, &a, SQLITE_OPEN_READONLY,
	    NULL), SQLITE_OK);
	b = raw_open();
	for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
		ra = tu_rows(a, q[i]);
		rb = tu_rows(b, q[i]);
		ck_assert_msg(strcmp(ra, rb) == 0, "%s:\nbuilt:\n%s\nimage:\n%s",
		    q[i], ra, rb);
		free(ra);
		free(rb);
	}
	tu_rows_eq(b, "PRAGMA integrity_check", "ok\n");
	sqlite3_close(a);
	sqlite3_close(b);
}
END_TEST

extern const char *const flaky_schema_migrations[];

/* Does sql's plan build a temporary b-tree (OpenEphemeral)? */
static int
plan_has_ephemeral(sqlite3 *db, const char *sql)
{
	sqlite3_stmt	*st;
	char		 q[1024];
	int		 found = 0;

	snprintf(q, sizeof q, "EXPLAIN %s", sql);
	ck_assert_msg(sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK,
	    "%s: %s", q, sqlite3_errmsg(db));
	while (sqlite3_step(st) == SQLITE_ROW)
		if (strcmp((const char *)sqlite3_column_text(st, 1),
		    "OpenEphemeral") == 0)
			found = 1;
	sqlite3_finalize(st);
	return found;
}

/* Version 4 rewrites the IN-list constraints of a version 3 database in
 * place: the same values pass and fail, and storing a run no longer builds
 * a temporary b-tree. */
START_TEST(migrate_checks)
{
	static const char *const ins = "INSERT INTO runs (target_id, status, "
	    "started_ms) VALUES (1, 'done', 1)";
	static const char *const scan = "INSERT INTO scan_findings (target_id, "
	    "scanned_ms, path, line, category, seeded) VALUES (1, 1, 'a.py', "
	    "1, 'numpy', 0)";
	static const char *const good[] = { "running", "done", "timeout",
	    "error", "interrupted", "skipped" };
	struct flaky_store *s;
	sqlite3		*db;
	char		 sql[256];
	int64_t		 cookie;

	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(sqlite3_exec(db, flaky_schema_migrations[i],
		    NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA user_version = 3", NULL, NULL,
	    NULL), SQLITE_OK);
	ck_assert(plan_has_ephemeral(db, ins));
	ck_assert(plan_has_ephemeral(db, scan));
	cookie = tu_q1(db, "PRAGMA schema_version");
	sqlite3_close(db);

	s = open_store();
	ck_assert_int_eq(target(s, "t"), 1);
	flaky_store_close(s);
	db = raw_open();
	ck_assert_int_eq(tu_q1(db, "PRAGMA user_version"),
	    flaky_store_schema_version());
	ck_assert_int_gt(tu_q1(db, "PRAGMA schema_version"), cookie);
	tu_rows_eq(db, "PRAGMA integrity_check", "ok\n");
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM sqlite_schema WHERE sql "
	    "LIKE '%status IN%' OR sql LIKE '%category IN%'"), 0);
	ck_assert(!plan_has_ephemeral(db, ins));
	ck_assert(!plan_has_ephemeral(db, scan));
	ck_assert(!plan_has_ephemeral(db, "UPDATE runs SET status = 'done' "
	    "WHERE id = 1"));
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		snprintf(sql, sizeof sql, "INSERT INTO runs (target_id, status, "
		    "started_ms) VALUES (1, '%s', 1)", good[i]);
		ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL),
		    SQLITE_OK);
	}
	ck_assert_int_eq(sqlite3_exec(db, "INSERT INTO runs (target_id, status, "
	    "started_ms) VALUES (1, 'Done', 1)", NULL, NULL, NULL),
	    SQLITE_CONSTRAINT);
	ck_assert_int_eq(sqlite3_exec(db, scan, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "INSERT INTO scan_findings "
	    "(target_id, scanned_ms, path, line, category, seeded) VALUES (1, "
	    "1, 'a.py', 1, 'pandas', 0)", NULL, NULL, NULL), SQLITE_CONSTRAINT);
	sqlite3_close(db);
}
END_TEST

START_TEST(newer_schema)
{
	struct flaky_store *s = NULL;
	sqlite3		*db;
	char		 err[512], want[512];

	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA user_version = 99", NULL,
	    NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	ck_assert_int_eq(flaky_store_open(path, 0, &s, err, sizeof err),
	    -EPROTO);
	snprintf(want, sizeof want, "%s: schema version 99 is newer than "
	    "this program understands (%d); upgrade flaky", path,
	    flaky_store_schema_version());
	ck_assert_str_eq(err, want);
	ck_assert_ptr_null(s);
	db = raw_open();
	ck_assert_int_eq(tu_q1(db, "PRAGMA user_version"), 99);
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM sqlite_schema"), 0);
	sqlite3_close(db);
}
END_TEST

/* Read a whole file. */
static char *
slurp(const char *p, size_t *len)
{
	FILE	*f = fopen(p, "rb");
	char	*b;
	long	 n;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	ck_assert_ptr_nonnull(b = malloc((size_t)n + 1));
	ck_assert_int_eq(fread(b, 1, (size_t)n, f), n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

START_TEST(corrupt)
{
	struct flaky_store *s = NULL;
	unsigned char	 junk[16384];
	uint64_t	 x = 88172645463325252ULL;
	char		 err[512], *before, *after, side[160];
	size_t		 n1, n2;
	FILE		*f;

	for (size_t i = 0; i < sizeof junk; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		junk[i] = (unsigned char)x;
	}
	ck_assert_ptr_nonnull(f = fopen(path, "wb"));
	ck_assert_int_eq(fwrite(junk, 1, sizeof junk, f), sizeof junk);
	fclose(f);
	before = slurp(path, &n1);
	ck_assert_int_lt(flaky_store_open(path, 0, &s, err, sizeof err), 0);
	ck_assert_ptr_null(s);
	snprintf(side, sizeof side, "%s: not a flaky database", path);
	ck_assert_str_eq(err, side);
	after = slurp(path, &n2);
	ck_assert_uint_eq(n1, n2);
	ck_assert(memcmp(before, after, n1) == 0);
	snprintf(side, sizeof side, "%s-wal", path);
	ck_assert_int_eq(access(side, F_OK), -1);
	/* read-only opening says the same */
	ck_assert_int_lt(flaky_store_open(path, FLAKY_STORE_READONLY, &s, err,
	    sizeof err), 0);
	snprintf(side, sizeof side, "%s: not a flaky database", path);
	ck_assert_str_eq(err, side);
	free(before);
	free(after);
}
END_TEST

/* Another program's SQLite database (tables, no schema version of ours)
 * is refused by name, read-only or not, and nothing is added to it; an
 * empty one is ours to fill. */
START_TEST(foreign)
{
	struct flaky_store *s = NULL;
	sqlite3		*db;
	char		 err[512], want[256];

	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "CREATE TABLE notes (body TEXT); "
	    "INSERT INTO notes VALUES ('keep')", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	snprintf(want, sizeof want, "%s: not a flaky database (an SQLite "
	    "database of another program)", path);
	ck_assert_int_eq(flaky_store_open(path, 0, &s, err, sizeof err),
	    -EINVAL);
	ck_assert_ptr_null(s);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(flaky_store_open(path, FLAKY_STORE_READONLY, &s, err,
	    sizeof err), -EINVAL);
	ck_assert_str_eq(err, want);
	db = raw_open();
	tu_rows_eq(db, "SELECT name FROM sqlite_schema", "notes\n");
	ck_assert_int_eq(tu_q1(db, "PRAGMA user_version"), 0);
	ck_assert_int_eq(sqlite3_exec(db, "DROP TABLE notes", NULL, NULL,
	    NULL), SQLITE_OK);
	sqlite3_close(db);
	s = open_store();
	ck_assert_int_eq(target(s, "t"), 1);
	flaky_store_close(s);
}
END_TEST

/* Open path as an unprivileged user (root writes anywhere) in a child;
 * the error message comes back through a pipe. */
static int
open_as_nobody(const char *p, int flags, char *err, size_t errlen)
{
	int	 fds[2], status;
	pid_t	 pid;
	ssize_t	 n;

	ck_assert_int_eq(pipe(fds), 0);
	if ((pid = fork()) == 0) {
		struct flaky_store *s;
		char	 e[512] = "";
		int	 r;

		close(fds[0]);
		if (geteuid() == 0 && (setgid(65534) == -1 ||
		    setuid(65534) == -1))
			_exit(99);
		r = flaky_store_open(p, flags, &s, e, sizeof e);
		if (r == 0)
			flaky_store_close(s);
		if (write(fds[1], e, strlen(e) + 1) < 0)
			_exit(98);
		_exit(r == 0 ? 0 : -r);
	}
	close(fds[1]);
	n = read(fds[0], err, errlen - 1);
	err[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	return -WEXITSTATUS(status);
}

START_TEST(read_only)
{
	char		 ro[160], p[200], err[512];
	struct flaky_store *s;
	sqlite3		*db;

	/* a directory nobody may write to */
	snprintf(ro, sizeof ro, "%s/ro", dir);
	ck_assert_int_eq(mkdir(ro, 0555), 0);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	snprintf(p, sizeof p, "%s/new.db", ro);
	ck_assert_int_eq(open_as_nobody(p, 0, err, sizeof err), -EACCES);
	ck_assert_msg(strncmp(err, p, strlen(p)) == 0, "%s", err);
	ck_assert_int_eq(access(p, F_OK), -1);
	/* a database file nobody may write */
	s = open_store();
	flaky_store_close(s);
	ck_assert_int_eq(chmod(path, 0444), 0);
	ck_assert_int_eq(chmod(dir, 0555), 0);
	ck_assert_int_lt(open_as_nobody(path, 0, err, sizeof err), 0);
	ck_assert_msg(strncmp(err, path, strlen(path)) == 0 &&
	    strstr(err, "read-only") != NULL, "%s", err);
	ck_assert_int_eq(chmod(dir, 0700), 0);
	db = raw_open();
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM runs"), 0);
	sqlite3_close(db);
}
END_TEST

/* While another connection has the database open (flakyd running: the
 * -wal and -shm files exist), SQLite opens it read-only for a user who may
 * not write it, without a word; "PRAGMA journal_mode = WAL" is then a
 * no-op. flaky_store_open checks sqlite3_db_readonly when
 * FLAKY_STORE_READONLY was not asked for and refuses, naming the path,
 * rather than failing at the first write. */
START_TEST(read_only_while_open)
{
	struct flaky_store *s = open_store();
	char		 err[512];
	int		 r;

	/* no write for anyone: also when not root, in the package's build */
	ck_assert_int_eq(chmod(path, 0444), 0);
	ck_assert_int_eq(chmod(dir, 0555), 0);
	r = open_as_nobody(path, 0, err, sizeof err);
	ck_assert_int_eq(chmod(dir, 0700), 0);
	flaky_store_close(s);
	ck_assert_int_lt(r, 0);
	ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "%s", err);
}
END_TEST

/* A reader who may read the database but not write its directory (a
 * member of flakyd's group: /var/lib/flaky is 0750) reads it after the
 * last writer closed (flakyd stopped, as during every upgrade): SQLite
 * reads a WAL database only with its -wal and -shm files, which such a
 * reader cannot make, so the writers leave them (emptied) behind. */
START_TEST(read_after_writer)
{
	struct flaky_store *s = open_store();
	char		 side[160], err[512];
	struct stat	 st;

	ck_assert_int_eq(target(s, "t"), 1);
	flaky_store_close(s);
	ck_assert_int_eq(chmod(path, 0444), 0);
	ck_assert_int_eq(chmod(dir, 0555), 0);
	ck_assert_msg(open_as_nobody(path, FLAKY_STORE_READONLY, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_int_eq(chmod(dir, 0700), 0);
	snprintf(side, sizeof side, "%s-wal", path);
	ck_assert_int_eq(stat(side, &st), 0);
	ck_assert_int_eq(st.st_size, 0);	/* checkpointed into the file */
	snprintf(side, sizeof side, "%s-shm", path);
	ck_assert_int_eq(access(side, F_OK), 0);
	/* without them (an older flaky's writer): says what to do */
	ck_assert_int_eq(unlink(side), 0);
	snprintf(side, sizeof side, "%s-wal", path);
	ck_assert_int_eq(unlink(side), 0);
	ck_assert_int_eq(chmod(dir, 0555), 0);
	ck_assert_int_eq(open_as_nobody(path, FLAKY_STORE_READONLY, err,
	    sizeof err), -EACCES);
	ck_assert_int_eq(chmod(dir, 0700), 0);
	ck_assert_msg(strncmp(err, path, strlen(path)) == 0 && strstr(err,
	    "-wal and -shm files are missing") != NULL, "%s", err);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("store_open");
	TCase	*tc = tcase_create("store_open");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, open_new);
	tcase_add_test(tc, new_file);
	tcase_add_test(tc, image_is_built_schema);
	tcase_add_test(tc, newer_schema);
	tcase_add_test(tc, migrate_checks);
	tcase_add_test(tc, corrupt);
	tcase_add_test(tc, foreign);
	tcase_add_test(tc, read_only);
	tcase_add_test(tc, read_only_while_open);
	tcase_add_test(tc, read_after_writer);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
