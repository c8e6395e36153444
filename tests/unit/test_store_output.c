/* store_output: kept output round-trips (empty, small, incompressible,
 * large, binary with NUL bytes), identical output is stored once, redaction
 * comes before storing, migration 0006 moves old output, prune drops what
 * no run names, and the view run_output reads in Debian's sqlite3 shell
 * with no extension (case "shell": exit 77 when there is no sqlite3). */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/store_int.h"
#include "util/util.h"
#include "test_db.h"
#include "test_helper.h"

#define SQLITE3_SHELL	"/usr/bin/sqlite3"
/* 2026-11-01T12:00:00Z */
#define T0	1793534400000LL

extern const char *const flaky_schema_migrations[];

static char	 dir[64];
static char	 path[128];

static void
setup(void)
{
	tu_tmpdir(dir, sizeof dir, "output");
	snprintf(path, sizeof path, "%s/flaky.db", dir);
}

static void
teardown(void)
{
	tu_rmdir(dir);
}

/* A second connection, as ad-hoc SQL in flakyctl sees the database. */
static sqlite3 *
raw_open(void)
{
	sqlite3	*db;

	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE,
	    NULL), SQLITE_OK);
	ck_assert_int_eq(store_output_register(db), SQLITE_OK);
	return db;
}

static struct flaky_store *
open_store(void)
{
	struct flaky_store *s;
	char		 err[512];

	ck_assert_msg(flaky_store_open(path, 0, &s, err, sizeof err) == 0,
	    "%s", err);
	return s;
}

/* Store a finished run with this output (NULL: none kept); its id. */
static int64_t
store_output(struct flaky_store *s, int64_t started, const char *out,
    size_t out_len, const char *err_text)
{
	struct flaky_run_record rec = { 0 };
	char		 err[512];
	int64_t		 tid;

	ck_assert_msg(flaky_store_target(s, "t", "pytest -v", "/src", &tid,
	    err, sizeof err) == 0, "%s", err);
	rec.target_id = tid;
	rec.trigger = "analyze";
	rec.started_ms = started;
	rec.ended_ms = started + 10;
	rec.loadavg = -1;
	rec.status = FLAKY_RUN_DONE;
	rec.out = out;
	rec.out_len = out_len;
	rec.err = err_text;
	rec.err_len = err_text ? strlen(err_text) : 0;
	ck_assert_msg(flaky_store_run_finish(s, &rec, NULL, err, sizeof err) ==
	    0, "%s", err);
	return rec.id;
}

/* A run's stdout as stored, read back through sqlar_uncompress. */
static void
check_stdout(sqlite3 *db, int64_t run, const void *want, size_t len)
{
	sqlite3_stmt	*st;

	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT sqlar_uncompress("
	    "o.data, o.size), o.size, length(o.data) FROM runs r JOIN outputs "
	    "o ON o.id = r.stdout_id WHERE r.id = ?", -1, &st, NULL),
	    SQLITE_OK);
	sqlite3_bind_int64(st, 1, run);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_type(st, 0), SQLITE_BLOB);
	ck_assert_int_eq(sqlite3_column_bytes(st, 0), (int)len);
	ck_assert_int_eq(sqlite3_column_int64(st, 1), (int64_t)len);
	ck_assert(len == 0 || memcmp(sqlite3_column_blob(st, 0), want,
	    len) == 0);
	sqlite3_finalize(st);
}

/* Stored size of a run's stdout: length(data). */
static int64_t
stored_bytes(sqlite3 *db, int64_t run)
{
	char	 sql[128];

	snprintf(sql, sizeof sql, "SELECT length(o.data) FROM runs r JOIN "
	    "outputs o ON o.id = r.stdout_id WHERE r.id = %lld",
	    (long long)run);
	return tu_q1(db, sql);
}

/* Text much like a verbose runner's: compresses well. */
static char *
runner_text(size_t lines, size_t *ret_len)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	for (size_t i = 0; i < lines; i++)
		flaky_buf_printf(&b, "tests/test_mod%02zu.py::test_case_%zu "
		    "PASSED%*s[%3zu%%]\n", i % 40, i, 20, "",
		    i * 100 / lines);
	ck_assert(!b.oom);
	*ret_len = b.len;
	return flaky_buf_steal(&b);
}

/* Bytes that deflate cannot shrink (xorshift, fixed seed), no NUL. */
static void
noise(unsigned char *p, size_t n)
{
	uint64_t x = 88172645463325252ULL;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)(x % 255 + 1);
	}
}

START_TEST(roundtrip)
{
	struct flaky_store *s = open_store();
	static const char small[] = "collected 4 items\n";
	static const char bin[] = "a\0b\0\0\x01\xff\n\0end";
	unsigned char	 rnd[4096];
	char		*big;
	size_t		 blen;
	sqlite3		*db;
	int64_t		 r_empty, r_small, r_rnd, r_big, r_bin, r_none;

	noise(rnd, sizeof rnd);
	big = runner_text(20000, &blen);
	ck_assert_uint_gt(blen, 1000000);
	r_empty = store_output(s, T0, "", 0, NULL);
	r_small = store_output(s, T0 + 1, small, sizeof small - 1, NULL);
	r_rnd = store_output(s, T0 + 2, (const char *)rnd, sizeof rnd, NULL);
	r_big = store_output(s, T0 + 3, big, blen, NULL);
	r_bin = store_output(s, T0 + 4, bin, sizeof bin - 1, NULL);
	r_none = store_output(s, T0 + 5, NULL, 0, NULL);
	flaky_store_close(s);

	db = raw_open();
	check_stdout(db, r_empty, "", 0);
	check_stdout(db, r_small, small, sizeof small - 1);
	check_stdout(db, r_rnd, rnd, sizeof rnd);
	check_stdout(db, r_big, big, blen);
	check_stdout(db, r_bin, bin, sizeof bin - 1);
	/* raw where deflate does not help, as sqlar: length(data) = size */
	ck_assert_int_eq(stored_bytes(db, r_empty), 0);
	ck_assert_int_eq(stored_bytes(db, r_small), sizeof small - 1);
	ck_assert_int_eq(stored_bytes(db, r_rnd), sizeof rnd);
	/* a verbose runner's output shrinks at least tenfold */
	ck_assert_int_lt(stored_bytes(db, r_big), (int64_t)blen / 10);
	/* none kept stays NULL, apart from empty */
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM run_output WHERE "
	    "stdout IS NULL"), 1);
	ck_assert_int_eq(tu_q1(db, "SELECT run_id FROM run_output WHERE "
	    "stdout IS NULL"), r_none);
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM run_output WHERE "
	    "stdout = ''"), 1);
	/* the view gives text */
	ck_assert_int_eq(tu_q1(db, "SELECT typeof(stdout) = 'text' FROM "
	    "run_output WHERE run_id = 4"), 1);
	sqlite3_close(db);
	free(big);
}
END_TEST

START_TEST(stored_once)
{
	struct flaky_store *s = open_store();
	char		*big;
	size_t		 blen;
	sqlite3		*db;
	int64_t		 a, b, c;

	big = runner_text(3000, &blen);
	a = store_output(s, T0, big, blen, "");
	b = store_output(s, T0 + 1, big, blen, "");
	/* one byte more is another output */
	big[blen - 1] = '!';
	c = store_output(s, T0 + 2, big, blen, "warning\n");
	flaky_store_close(s);

	db = raw_open();
	/* big, big!, "" and "warning\n" */
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM outputs"), 4);
	ck_assert_int_eq(tu_q1(db, "SELECT count(DISTINCT stdout_id) FROM runs"),
	    2);
	ck_assert_int_eq(tu_q1(db, "SELECT count(DISTINCT stderr_id) FROM runs"),
	    2);
	check_stdout(db, c, big, blen);
	big[blen - 1] = '\n';
	check_stdout(db, a, big, blen);
	check_stdout(db, b, big, blen);
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM run_output r1 JOIN "
	    "run_output r2 ON r1.stdout = r2.stdout WHERE r1.run_id = 1 AND "
	    "r2.run_id = 2"), 1);
	sqlite3_close(db);
	free(big);
}
END_TEST

/* A hash shared by two contents: the second is stored apart, hash NULL. */
START_TEST(collision)
{
	struct flaky_store *s = open_store();
	sqlite3		*db;
	int64_t		 a, b;

	a = store_output(s, T0, "first\n", 6, NULL);
	db = raw_open();
	/* make "second\n"'s hash point at the row of "first\n" */
	ck_assert_int_eq(sqlite3_exec(db, "UPDATE outputs SET hash = "
	    "flaky_output_hash(CAST('second' || char(10) AS BLOB))", NULL,
	    NULL, NULL), SQLITE_OK);
	b = store_output(s, T0 + 1, "second\n", 7, NULL);
	flaky_store_close(s);
	check_stdout(db, a, "first\n", 6);
	check_stdout(db, b, "second\n", 7);
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM outputs WHERE hash IS "
	    "NULL"), 1);
	sqlite3_close(db);
}
END_TEST

START_TEST(redacted_first)
{
	struct flaky_store *s = open_store();
	struct flaky_buf b;
	sqlite3		*db;
	sqlite3_stmt	*st;
	const char	*t;
	char		*big, err[256];
	size_t		 blen;

	ck_assert_int_eq(flaky_store_add_redaction(s, "internal-[0-9]+", err,
	    sizeof err), 0);
	big = runner_text(5000, &blen);
	flaky_buf_init(&b);
	flaky_buf_add(&b, big, blen / 2);
	flaky_buf_adds(&b, "connecting with password=hunter2 to internal-42\n");
	flaky_buf_add(&b, big + blen / 2, blen - blen / 2);
	store_output(s, T0, flaky_buf_cstr(&b), b.len,
	    "Authorization: Bearer abc.def\n");
	flaky_store_close(s);

	db = raw_open();
	/* compressed, and what was compressed was redacted */
	ck_assert_int_eq(tu_q1(db, "SELECT length(o.data) * 10 < o.size FROM "
	    "runs r JOIN outputs o ON o.id = r.stdout_id"), 1);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT stdout, stderr FROM "
	    "run_output", -1, &st, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	t = (const char *)sqlite3_column_text(st, 0);
	ck_assert_ptr_null(strstr(t, "hunter2"));
	ck_assert_ptr_null(strstr(t, "internal-42"));
	ck_assert_ptr_nonnull(strstr(t, "password=[REDACTED] to [REDACTED]\n"));
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 1),
	    "Authorization: Bearer [REDACTED]\n");
	sqlite3_finalize(st);
	sqlite3_close(db);
	flaky_buf_free(&b);
	free(big);
}
END_TEST

/* A database of schema version 5, output in runs.stdout and runs.stderr,
 * is brought forward: the text moves to outputs, once per content. */
START_TEST(migrate_0006)
{
	struct flaky_store *s;
	sqlite3		*db;
	sqlite3_stmt	*st;
	char		*big;
	size_t		 blen;

	big = runner_text(2000, &blen);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	for (int i = 0; i < 5; i++)
		ck_assert_msg(sqlite3_exec(db, flaky_schema_migrations[i],
		    NULL, NULL, NULL) == SQLITE_OK, "%d: %s", i,
		    sqlite3_errmsg(db));
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA user_version = 5; "
	    "INSERT INTO targets (name, created_ms) VALUES ('t', 1)", NULL,
	    NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "INSERT INTO runs (target_id, "
	    "status, started_ms, stdout, stderr) VALUES (1, 'done', 1, ?, ?)",
	    -1, &st, NULL), SQLITE_OK);
	for (int i = 0; i < 3; i++) {
		sqlite3_reset(st);
		/* as store.c bound them: blobs; run 3 has none */
		if (i < 2) {
			sqlite3_bind_blob(st, 1, big, (int)blen, SQLITE_STATIC);
			sqlite3_bind_blob(st, 2, i ? "w\n" : "", i ? 2 : 0,
			    SQLITE_STATIC);
		} else
			sqlite3_clear_bindings(st);
		ck_assert_int_eq(sqlite3_step(st), SQLITE_DONE);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);

	s = open_store();
	flaky_store_close(s);
	db = raw_open();
	ck_assert_int_eq(tu_q1(db, "PRAGMA user_version"),
	    flaky_store_schema_version());
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM pragma_table_info('runs') "
	    "WHERE name IN ('stdout', 'stderr')"), 0);
	/* big once, "" and "w\n" */
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM outputs"), 3);
	ck_assert_int_lt(tu_q1(db, "SELECT max(length(data)) FROM outputs"),
	    (int64_t)blen / 10);
	check_stdout(db, 1, big, blen);
	check_stdout(db, 2, big, blen);
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM run_output WHERE "
	    "run_id = 3 AND stdout IS NULL AND stderr IS NULL"), 1);
	ck_assert_int_eq(tu_q1(db, "SELECT stderr = '' FROM run_output WHERE "
	    "run_id = 1"), 1);
	ck_assert_int_eq(tu_q1(db, "SELECT stderr = 'w' || char(10) FROM "
	    "run_output WHERE run_id = 2"), 1);
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM pragma_integrity_check "
	    "WHERE integrity_check = 'ok'"), 1);
	sqlite3_close(db);
	free(big);
}
END_TEST

/* prune drops the output of pruned runs unless a kept run names it. */
START_TEST(prune)
{
	struct flaky_store *s = open_store();
	struct flaky_prune_stats ps;
	sqlite3		*db;
	char		 err[512];

	store_output(s, T0, "old only\n", 9, "shared\n");
	store_output(s, T0 + 86400000LL, "new\n", 4, "shared\n");
	ck_assert_msg(flaky_store_prune(s, T0 + 1000, &ps, err, sizeof err) ==
	    0, "%s", err);
	ck_assert_int_eq(ps.runs, 1);
	flaky_store_close(s);
	db = raw_open();
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM outputs"), 2);
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM run_output WHERE "
	    "run_id = 1 AND stdout IS NULL AND stderr IS NULL"), 1);
	ck_assert_int_eq(tu_q1(db, "SELECT count(*) FROM run_output WHERE "
	    "run_id = 2 AND stdout = 'new' || char(10) AND "
	    "stderr = 'shared' || char(10)"), 1);
	sqlite3_close(db);
}
END_TEST

/* The view in Debian's own sqlite3 shell: its built-in sqlar_uncompress
 * reads what we compressed, with no extension loaded. */
START_TEST(shell_view)
{
	struct flaky_store *s = open_store();
	struct flaky_buf got;
	char		*big, cmd[512], buf[65536];
	size_t		 blen, n;
	sqlite3		*db;
	FILE		*p;

	big = runner_text(4000, &blen);
	store_output(s, T0, big, blen, "on stderr\n");
	flaky_store_close(s);
	db = raw_open();
	ck_assert_int_lt(stored_bytes(db, 1), (int64_t)blen / 10);
	sqlite3_close(db);

	snprintf(cmd, sizeof cmd, "%s -readonly '%s' \"SELECT stdout FROM "
	    "run_output WHERE run_id = 1; SELECT stderr FROM run_output\"",
	    SQLITE3_SHELL, path);
	ck_assert_ptr_nonnull(p = popen(cmd, "r"));
	flaky_buf_init(&got);
	while ((n = fread(buf, 1, sizeof buf, p)) > 0)
		flaky_buf_add(&got, buf, n);
	ck_assert_int_eq(pclose(p), 0);
	/* the shell ends each value with a newline of its own */
	ck_assert_uint_eq(got.len, blen + 1 + strlen("on stderr\n") + 1);
	ck_assert(memcmp(got.data, big, blen) == 0);
	ck_assert(memcmp(got.data + blen, "\non stderr\n\n", 12) == 0);
	flaky_buf_free(&got);
	free(big);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("store_output");
	TCase	*tc = tcase_create("output");
	TCase	*sh = tcase_create("shell");
	const char *only = getenv("CK_RUN_CASE");
	SRunner	*sr;
	int	 failed;

	/* meson runs case "shell" apart: skipped, not passed, without it */
	if (only != NULL && strcmp(only, "shell") == 0 &&
	    access(SQLITE3_SHELL, X_OK) != 0) {
		fprintf(stderr, "%s: not installed; skipped\n", SQLITE3_SHELL);
		return 77;
	}
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, roundtrip);
	tcase_add_test(tc, stored_once);
	tcase_add_test(tc, collision);
	tcase_add_test(tc, redacted_first);
	tcase_add_test(tc, migrate_0006);
	tcase_add_test(tc, prune);
	suite_add_tcase(s, tc);
	tcase_set_timeout(sh, 60);
	tcase_add_checked_fixture(sh, setup, teardown);
	tcase_add_test(sh, shell_view);
	suite_add_tcase(s, sh);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
