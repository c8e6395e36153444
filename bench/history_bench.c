/* history_bench: report and trend over 90 days of 10,000 tests run 30
 * times a day (27,000,000 results), from the rollups, side by side with
 * the same figures computed by plain SQL over the raw results; database
 * bytes per stored result; the cost of the budget trigger on inserts.
 *
 *	history_bench [--db PATH] [--flakyctl PATH] [--regenerate]
 *
 * The database is generated once, straight into SQLite (the store's schema
 * and rollup format, no parsing), and cached outside the source tree:
 * $HISTORY_BENCH_DB, else ~/.cache/flaky/history-bench.db. */
#include "buildconf.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "parse/parse.h"
#include "store/store.h"
#include "util/util.h"

#define NTESTS		10000
#define NDAYS		90
#define RUNS_PER_DAY	30
#define END_DAY		20758		/* 2026-11-01: until, exclusive */
#define UNTIL		"2026-11-01"
#define CHUNK		50		/* divides NTESTS */
#define REPEAT		5

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: fast, reproducible. */
static uint64_t
rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static double
now_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
die(sqlite3 *db, const char *what)
{
	fprintf(stderr, "history_bench: %s: %s\n", what,
	    db ? sqlite3_errmsg(db) : strerror(errno));
	exit(1);
}

static void
exec(sqlite3 *db, const char *sql)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		die(db, sql);
}

/* The failure probability of test i on day index d (0..NDAYS-1): most
 * tests never fail; 2% are flaky at 5-40%; 2% turn flaky (20%) on day 60;
 * 1% recover on day 45. */
static double
fail_p(int i, int d)
{
	if (i % 50 == 0)
		return 0.05 * (1 + (i / 50) % 8);
	if (i % 50 == 25)
		return d >= 60 ? 0.20 : 0;
	if (i % 100 == 13)
		return d < 45 ? 0.30 : 0;
	return 0;
}

/* A histogram blob in the store's canonical form: (bucket, varint). */
static size_t
hist_blob(const uint32_t *c, unsigned char *out)
{
	size_t	 n = 0;

	for (int b = 0; b < FLAKY_HIST_BUCKETS; b++) {
		uint64_t v = c[b];

		if (v == 0)
			continue;
		out[n++] = (unsigned char)b;
		while (v >= 0x80) {
			out[n++] = (unsigned char)(v | 0x80);
			v >>= 7;
		}
		out[n++] = (unsigned char)v;
	}
	return n;
}

struct acc {
	uint32_t	 runs, failures, skips;
	int64_t		 pass_us, fail_us;
	uint32_t	 ph[FLAKY_HIST_BUCKETS], fh[FLAKY_HIST_BUCKETS];
};

static void
generate(const char *final)
{
	char		 path[4200];
	struct flaky_store *store;
	struct acc	*acc;
	sqlite3		*db;
	sqlite3_stmt	*run, *res, *roll;
	struct flaky_buf sql;
	unsigned char	 blob[FLAKY_HIST_BUCKETS * 11];
	char		 err[512], name[96];
	int64_t		 run_id = 0;
	double		 t0 = now_s();

	/* Built aside and renamed at the end: an interrupted run leaves no
	 * half database to be taken for a cached one. */
	snprintf(path, sizeof path, "%s.partial", final);
	unlink(path);
	if (flaky_store_open(path, FLAKY_STORE_BULK, &store, err,
	    sizeof err) < 0) {
		fprintf(stderr, "history_bench: %s\n", err);
		exit(1);
	}
	/* The store made the schema; the rows go in through a plain
	 * connection, as a user's bulk load would. */
	flaky_store_close(store);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK)
		die(db, "open");
	exec(db, "PRAGMA synchronous = OFF");
	exec(db, "BEGIN");
	exec(db, "INSERT INTO targets (id, name, created_ms) "
	    "VALUES (1, 'bench', 0)");
	exec(db, "INSERT INTO messages (id, fingerprint, normalized) VALUES "
	    "(1, 1, 'AssertionError: assert <N> == <N>'), "
	    "(2, 2, 'TimeoutError: timed out after <N>s')");
	if (sqlite3_prepare_v2(db, "INSERT INTO tests (id, target_id, name) "
	    "VALUES (?, 1, ?)", -1, &run, NULL) != SQLITE_OK)
		die(db, "prepare");
	for (int i = 0; i < NTESTS; i++) {
		snprintf(name, sizeof name, "tests/test_mod%03d.py::"
		    "test_case_%05d", i / 100, i);
		sqlite3_bind_int(run, 1, i + 1);
		sqlite3_bind_text(run, 2, name, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(run) != SQLITE_DONE)
			die(db, "tests");
		sqlite3_reset(run);
	}
	sqlite3_finalize(run);
	exec(db, "COMMIT");

	flaky_buf_init(&sql);
	flaky_buf_adds(&sql, "INSERT INTO results (run_id, position, test_id, "
	    "outcome, duration_us, message_id, message) VALUES ");
	for (int i = 0; i < CHUNK; i++)
		flaky_buf_adds(&sql, i ? ",(?1,?,?,?,?,?,?)" :
		    "(?1,?,?,?,?,?,?)");
	if (sqlite3_prepare_v2(db, flaky_buf_cstr(&sql), -1, &res, NULL) !=
	    SQLITE_OK)
		die(db, "prepare results");
	flaky_buf_free(&sql);
	if (sqlite3_prepare_v2(db, "INSERT INTO runs (id, target_id, status, "
	    "trigger, started_ms, ended_ms, duration_us, exit_code, revision, "
	    "runner, tests, failures, user_us, sys_us) VALUES (?1, 1, 'done', "
	    "'schedule', ?2, ?2 + 600000, 600000000, ?3, 'abc123', 'pytest', "
	    "10000, ?4, 450000000, 30000000)", -1, &run, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO rollups (test_id, day, runs, "
	    "failures, skips, pass_us, fail_us, pass_hist, fail_hist) VALUES "
	    "(?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &roll, NULL) != SQLITE_OK)
		die(db, "prepare");
	if ((acc = calloc(NTESTS, sizeof *acc)) == NULL)
		die(NULL, "calloc");
	for (int d = 0; d < NDAYS; d++) {
		int64_t	 day = END_DAY - NDAYS + d;

		exec(db, "BEGIN");
		memset(acc, 0, NTESTS * sizeof *acc);
		for (int r = 0; r < RUNS_PER_DAY; r++) {
			unsigned char	 out[NTESTS];
			int		 failed = 0;

			for (int i = 0; i < NTESTS; i++) {
				double	 p = fail_p(i, d);

				out[i] = i % 97 == 0 ? FLAKY_SKIP : p > 0 &&
				    (double)(rnd() >> 11) / 9007199254740992.0
				    < p ? FLAKY_FAIL : FLAKY_PASS;
				failed += out[i] == FLAKY_FAIL;
			}
			/* The run row first: the budget trigger reads it. */
			sqlite3_bind_int64(run, 1, ++run_id);
			sqlite3_bind_int64(run, 2, day * FLAKY_DAY_MS +
			    (int64_t)r * 2880000);
			sqlite3_bind_int(run, 3, failed > 0);
			sqlite3_bind_int(run, 4, failed);
			if (sqlite3_step(run) != SQLITE_DONE)
				die(db, "runs");
			sqlite3_reset(run);
			for (int i = 0; i < NTESTS; i += CHUNK) {
				int	 n = NTESTS - i < CHUNK ? NTESTS - i :
				    CHUNK;

				sqlite3_bind_int64(res, 1, run_id);
				for (int k = 0; k < n; k++) {
					int	 t = i + k, c = 2 + k * 6;
					int64_t	 us = 1000 + (int64_t)(rnd() %
					    50000) + (t % 10) * 20000;
					struct acc *a = &acc[t];

					sqlite3_bind_int(res, c, t);
					sqlite3_bind_int(res, c + 1, t + 1);
					sqlite3_bind_int(res, c + 2, out[t]);
					if (out[t] == FLAKY_SKIP) {
						sqlite3_bind_null(res, c + 3);
						a->skips++;
					} else
						sqlite3_bind_int64(res, c + 3,
						    us);
					if (out[t] == FLAKY_FAIL) {
						sqlite3_bind_int(res, c + 4,
						    1 + t % 2);
						sqlite3_bind_text(res, c + 5,
						    "AssertionError: assert 3 "
						    "== 4", -1, SQLITE_STATIC);
						a->runs++;
						a->failures++;
						a->fail_us += us;
						a->fh[flaky_hist_bucket(us)]++;
					} else {
						sqlite3_bind_null(res, c + 4);
						sqlite3_bind_null(res, c + 5);
					}
					if (out[t] == FLAKY_PASS) {
						a->runs++;
						a->pass_us += us;
						a->ph[flaky_hist_bucket(us)]++;
					}
				}
				if (n < CHUNK) {
					/* The tail: one row at a time. */
					die(NULL, "NTESTS must be a multiple "
					    "of CHUNK");
				}
				if (sqlite3_step(res) != SQLITE_DONE)
					die(db, "results");
				sqlite3_reset(res);
			}
		}
		for (int i = 0; i < NTESTS; i++) {
			struct acc *a = &acc[i];
			size_t	 n;

			sqlite3_bind_int(roll, 1, i + 1);
			sqlite3_bind_int64(roll, 2, day);
			sqlite3_bind_int(roll, 3, (int)a->runs);
			sqlite3_bind_int(roll, 4, (int)a->failures);
			sqlite3_bind_int(roll, 5, (int)a->skips);
			sqlite3_bind_int64(roll, 6, a->pass_us);
			sqlite3_bind_int64(roll, 7, a->fail_us);
			if ((n = hist_blob(a->ph, blob)) > 0)
				sqlite3_bind_blob(roll, 8, blob, (int)n,
				    SQLITE_TRANSIENT);
			else
				sqlite3_bind_null(roll, 8);
			if ((n = hist_blob(a->fh, blob)) > 0)
				sqlite3_bind_blob(roll, 9, blob, (int)n,
				    SQLITE_TRANSIENT);
			else
				sqlite3_bind_null(roll, 9);
			if (sqlite3_step(roll) != SQLITE_DONE)
				die(db, "rollups");
			sqlite3_reset(roll);
		}
		exec(db, "COMMIT");
		fprintf(stderr, "\rgenerating: day %d/%d, %.0f s", d + 1,
		    NDAYS, now_s() - t0);
	}
	fprintf(stderr, "\n");
	free(acc);
	sqlite3_finalize(res);
	sqlite3_finalize(run);
	sqlite3_finalize(roll);
	exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
	sqlite3_close(db);
	if (rename(path, final) == -1)
		die(NULL, "rename");
}

static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of REPEAT timings of a shell command, in seconds. */
static double
time_cmd(const char *cmd)
{
	double	 t[REPEAT];

	for (int i = 0; i < REPEAT; i++) {
		double	 t0 = now_s();

		if (system(cmd) != 0) {
			fprintf(stderr, "history_bench: failed: %s\n", cmd);
			exit(1);
		}
		t[i] = now_s() - t0;
	}
	qsort(t, REPEAT, sizeof *t, cmp_double);
	return t[REPEAT / 2];
}

/* One timing of a shell command, in seconds. */
static double
time_once(const char *cmd)
{
	double	 t0 = now_s();

	if (system(cmd) != 0) {
		fprintf(stderr, "history_bench: failed: %s\n", cmd);
		exit(1);
	}
	return now_s() - t0;
}

/* Rows of a query, and how long it took (once: the baselines are slow). */
static double
time_sql(sqlite3 *db, const char *sql, int64_t a, int64_t b, int64_t c,
    long *rows)
{
	sqlite3_stmt	*st;
	double		 t0 = now_s();

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		die(db, sql);
	sqlite3_bind_int64(st, 1, a);
	sqlite3_bind_int64(st, 2, b);
	if (sqlite3_bind_parameter_count(st) >= 3)
		sqlite3_bind_int64(st, 3, c);
	*rows = 0;
	while (sqlite3_step(st) == SQLITE_ROW)
		(*rows)++;
	sqlite3_finalize(st);
	return now_s() - t0;
}

/* The library calls of `report --since 30d` (what the command does
 * before printing), median of REPEAT. */
static double part_stats[REPEAT], part_hist[REPEAT];

static double
time_report_lib(struct flaky_store *s, size_t *ntests, int64_t *nunstable)
{
	double	 t[REPEAT];
	char	 err[512];

	for (int i = 0; i < REPEAT; i++) {
		struct flaky_test_row *rows = NULL;
		struct flaky_history h;
		struct flaky_run_counts rc;
		struct flaky_query q = { 0 };
		size_t	 n = 0;
		double	 t0 = now_s();

		q.until_ms = END_DAY * FLAKY_DAY_MS;
		q.since_ms = q.until_ms - 30 * FLAKY_DAY_MS;
		double	 t1, t2;

		if (flaky_store_run_counts(s, &q, &rc, err, sizeof err) < 0)
			die(NULL, err);
		t1 = now_s();
		if (flaky_store_test_stats(s, &q, &rows, &n, err,
		    sizeof err) < 0)
			die(NULL, err);
		t2 = now_s();
		if (flaky_store_history(s, &q, &h, err, sizeof err) < 0)
			die(NULL, err);
		t[i] = now_s() - t0;
		part_stats[i] = t2 - t1;
		part_hist[i] = now_s() - t2;
		*ntests = n;
		*nunstable = 0;
		for (size_t k = 0; k < n; k++)
			*nunstable += rows[k].failures > 0;
		flaky_history_free(&h);
		flaky_test_rows_free(rows, n);
	}
	qsort(t, REPEAT, sizeof *t, cmp_double);
	qsort(part_stats, REPEAT, sizeof *t, cmp_double);
	qsort(part_hist, REPEAT, sizeof *t, cmp_double);
	return t[REPEAT / 2];
}

static double
time_trend_lib(struct flaky_store *s, const char *test)
{
	uint32_t runs[56], fails[56];
	double	 t[REPEAT];
	char	 err[512];
	int64_t	 id;

	for (int i = 0; i < REPEAT; i++) {
		double	 t0 = now_s();

		if (flaky_store_find_test(s, NULL, test, &id, err,
		    sizeof err) < 0 || flaky_store_test_days(s, id,
		    END_DAY - 56, 56, runs, fails, err, sizeof err) < 0) {
			fprintf(stderr, "history_bench: %s\n", err);
			exit(1);
		}
		t[i] = now_s() - t0;
	}
	qsort(t, REPEAT, sizeof *t, cmp_double);
	return t[REPEAT / 2];
}

/* Microseconds per stored run of 1,000 tests, one in every `every`
 * results failed, with or without the budget trigger: the best of 200
 * runs timed in batches of 20 (the fsync-free BULK mode, so the figure is
 * CPU, not the disk). */
static double
run_cost(int with, int every)
{
	struct flaky_store *s;
	struct flaky_results res;
	char	 path[] = "/tmp/history_bench_XXXXXX", err[512];
	char	 dbp[64], aux[80];
	int	 fd = mkstemp(path);
	double	 best = 1e30;

	if (fd == -1)
		die(NULL, "mkstemp");
	close(fd);
	unlink(path);
	snprintf(dbp, sizeof dbp, "%s.db", path);
	if (flaky_store_open(dbp, FLAKY_STORE_BULK, &s, err, sizeof err) < 0)
		die(NULL, err);
	/* The insert trigger that kept the budget before it was read from
	 * the failures: the figure that made us drop it. */
	if (with) {
		sqlite3	*db;

		if (sqlite3_open(dbp, &db) != SQLITE_OK)
			die(db, "open");
		exec(db, "CREATE TRIGGER budget_on_failure AFTER "
		    "INSERT ON results WHEN new.outcome IN (1, 2) BEGIN "
		    "INSERT INTO budget (day, test_id, runs, wall_us, cpu_us) "
		    "SELECT r.started_ms / 86400000, new.test_id, 1, "
		    "coalesce(r.duration_us, 0), coalesce(r.user_us, 0) + "
		    "coalesce(r.sys_us, 0) FROM runs r WHERE r.id = new.run_id "
		    "ON CONFLICT (day, test_id) DO UPDATE SET runs = runs + 1, "
		    "wall_us = wall_us + excluded.wall_us, cpu_us = cpu_us + "
		    "excluded.cpu_us; END");
		sqlite3_close(db);
	}
	flaky_results_init(&res);
	if ((res.v = calloc(1000, sizeof *res.v)) == NULL)
		die(NULL, "calloc");
	res.n = res.cap = 1000;
	for (int i = 0; i < 1000; i++) {
		char	 nm[64];

		snprintf(nm, sizeof nm, "tests/test_x.py::test_%04d", i);
		res.v[i].test = strdup(nm);
		res.v[i].position = (unsigned)i;
		res.v[i].duration_us = 1000 + i;
	}
	for (int r = 0; r < 200; r++) {
		struct flaky_run_record rec = { 0 };
		int64_t	 tid;
		double	 t0 = now_s();

		for (int i = 0; i < 1000; i++)
			res.v[i].outcome = (i + r) % every == 0 ?
			    FLAKY_FAIL : FLAKY_PASS;
		if (flaky_store_target(s, "t", NULL, NULL, &tid, err,
		    sizeof err) < 0)
			die(NULL, err);
		rec.target_id = tid;
		rec.status = FLAKY_RUN_DONE;
		rec.started_ms = (END_DAY - 1) * FLAKY_DAY_MS + r;
		rec.duration_us = 1000000;
		rec.loadavg = -1;
		if (flaky_store_run_finish(s, &rec, &res, err, sizeof err) < 0)
			die(NULL, err);
		if (r >= 20 && now_s() - t0 < best)
			best = now_s() - t0;
	}
	for (int i = 0; i < 1000; i++)
		free(res.v[i].test);
	free(res.v);
	flaky_store_close(s);
	unlink(dbp);
	snprintf(aux, sizeof aux, "%s-wal", dbp);
	unlink(aux);
	snprintf(aux, sizeof aux, "%s-shm", dbp);
	unlink(aux);
	return best * 1e6;
}

/* The cost of the budget trigger on inserts: with and without it, taking
 * turns so both see the same machine. */
static void
trigger_cost(void)
{
	static const int every[] = { 20, 200 };

	for (size_t e = 0; e < FLAKY_ARRAY_SIZE(every); e++) {
		double	 with = 1e30, without = 1e30, t;

		for (int round = 0; round < 3; round++) {
			if ((t = run_cost(1, every[e])) < with)
				with = t;
			if ((t = run_cost(0, every[e])) < without)
				without = t;
		}
		printf("budget trigger     (dropped) %.0f us per 1,000-test run with "
		    "%d failed results, %.0f us without it (%+.1f%%, %.1f us "
		    "per failed result)\n", with, 1000 / every[e], without,
		    100 * (with - without) / without,
		    (with - without) / (1000.0 / every[e]));
	}
}

int
main(int argc, char **argv)
{
	struct flaky_store *s;
	struct stat	 sb;
	const char	*flakyctl = NULL, *home = getenv("HOME");
	char		 path[4096], cmd[8192], err[512];
	int		 regen = 0;
	double		 t_rep, t_rep_bin = NAN, t_rep_sql, t_rep_json = NAN, t_tr, t_tr_bin = NAN,
			 t_tr_sql;
	int64_t		 unstable, results, pages, psize, free_pages;
	size_t		 ntests;
	long		 rows;
	sqlite3		*db;
	const char	*test = "tests/test_mod000.py::test_case_00050";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("HISTORY_BENCH_DB") != NULL)
		snprintf(path, sizeof path, "%s", getenv("HISTORY_BENCH_DB"));
	else {
		snprintf(path, sizeof path, "%s/.cache/flaky", home ? home :
		    "/tmp");
		mkdir(path, 0755);
		snprintf(path, sizeof path, "%s/.cache/flaky/"
		    "history-bench.db", home ? home : "/tmp");
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
			snprintf(path, sizeof path, "%s", argv[++i]);
		else if (strcmp(argv[i], "--flakyctl") == 0 && i + 1 < argc)
			flakyctl = argv[++i];
		else if (strcmp(argv[i], "--regenerate") == 0)
			regen = 1;
		else {
			fprintf(stderr, "usage: history_bench [--db PATH] "
			    "[--flakyctl PATH] [--regenerate]\n");
			return 2;
		}
	}
	if (regen || stat(path, &sb) == -1)
		generate(path);
	if (flaky_store_open(path, FLAKY_STORE_READONLY, &s, err,
	    sizeof err) < 0) {
		fprintf(stderr, "history_bench: %s\n", err);
		return 1;
	}
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		die(db, "open");
	time_sql(db, "SELECT count(*) FROM rollups", 0, 0, 0, &rows);
	printf("database           %s\n", path);
	{
		sqlite3_stmt	*st;

		sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM results), "
		    "(SELECT page_count FROM pragma_page_count), "
		    "(SELECT page_size FROM pragma_page_size), "
		    "(SELECT freelist_count FROM pragma_freelist_count)", -1,
		    &st, NULL);
		sqlite3_step(st);
		results = sqlite3_column_int64(st, 0);
		pages = sqlite3_column_int64(st, 1);
		psize = sqlite3_column_int64(st, 2);
		free_pages = sqlite3_column_int64(st, 3);
		sqlite3_finalize(st);
	}
	printf("results            %lld (%d tests x %d runs a day x %d days)\n",
	    (long long)results, NTESTS, RUNS_PER_DAY, NDAYS);
	printf("size               %.1f MiB: %.1f bytes per stored result "
	    "(everything: results, rollups, budget, runs, indexes; no raw "
	    "output stored)\n", (double)(pages - free_pages) * psize /
	    1048576.0, (double)(pages - free_pages) * psize / (double)results);
	{
		sqlite3_stmt	*st;

		/* dbstat is there when SQLite was built with it. */
		if (sqlite3_prepare_v2(db, "SELECT name, sum(pgsize) FROM dbstat "
		    "GROUP BY name ORDER BY 2 DESC LIMIT 6", -1, &st, NULL) ==
		    SQLITE_OK) {
			while (sqlite3_step(st) == SQLITE_ROW)
				printf("  %-16s %.1f MiB (%.2f B/result)\n",
				    sqlite3_column_text(st, 0),
				    sqlite3_column_double(st, 1) / 1048576.0,
				    sqlite3_column_double(st, 1) /
				    (double)results);
			sqlite3_finalize(st);
		}
	}

	t_rep = time_report_lib(s, &ntests, &unstable);
	if (flakyctl != NULL) {
		/* CSV: the report without the signature column (whose
		 * analysis reads raw results: timed apart below). */
		snprintf(cmd, sizeof cmd, "%s --db %s report --since 30d "
		    "--until %s --format csv > /dev/null", flakyctl, path,
		    UNTIL);
		t_rep_bin = time_cmd(cmd);
		snprintf(cmd, sizeof cmd, "%s --db %s report --since 30d "
		    "--until %s --format json > /dev/null", flakyctl, path,
		    UNTIL);
		t_rep_json = time_once(cmd);
	}
	/* The same per-test counts straight from the raw results. */
	t_rep_sql = time_sql(db, "SELECT r.test_id, count(*), "
	    "sum(r.outcome IN (1, 2)) FROM runs u JOIN results r ON "
	    "r.run_id = u.id WHERE u.started_ms >= ?1 AND u.started_ms < ?2 "
	    "AND r.outcome NOT IN (3, 4) GROUP BY r.test_id",
	    (END_DAY - 30) * FLAKY_DAY_MS, END_DAY * FLAKY_DAY_MS, 0, &rows);
	printf("\nreport --since 30d (%zu tests, %lld with failures)\n",
	    ntests, (long long)unstable);
	printf("  rollups, library   %8.1f ms (run counts, per-test stats "
	    "with medians, history: trend, change point, budget)\n",
	    t_rep * 1e3);
	printf("    of which         %8.1f ms flaky_store_test_stats "
	    "(counts, medians, messages), %.1f ms flaky_store_history "
	    "(daily series of both windows, trends, change points, budget)\n",
	    part_stats[REPEAT / 2] * 1e3, part_hist[REPEAT / 2] * 1e3);
	if (flakyctl != NULL) {
		printf("  flakyctl report    %8.1f ms (the whole command, "
		    "--format csv to /dev/null)\n", t_rep_bin * 1e3);
		printf("  flakyctl report    %8.1f ms (--format json, with the "
		    "signature/polluter analysis of each test over raw "
		    "results)\n", t_rep_json * 1e3);
	}
	printf("  plain SQL, raw     %8.1f ms (counts only, %ld rows)\n",
	    t_rep_sql * 1e3, rows);

	t_tr = time_trend_lib(s, test);
	if (flakyctl != NULL) {
		snprintf(cmd, sizeof cmd, "%s --db %s trend %s --weeks 8 "
		    "--until %s > /dev/null", flakyctl, path, test, UNTIL);
		t_tr_bin = time_cmd(cmd);
	}
	t_tr_sql = time_sql(db, "SELECT (u.started_ms / 86400000 - ?1) / 7, "
	    "count(*), sum(r.outcome IN (1, 2)) FROM runs u JOIN results r ON "
	    "r.run_id = u.id WHERE u.started_ms >= ?1 * 86400000 AND "
	    "u.started_ms < ?2 * 86400000 AND r.test_id = ?3 AND r.outcome "
	    "NOT IN (3, 4) GROUP BY 1", END_DAY - 56, END_DAY, 51, &rows);
	printf("\ntrend TEST --weeks 8\n");
	printf("  rollups, library   %8.2f ms\n", t_tr * 1e3);
	if (flakyctl != NULL)
		printf("  flakyctl trend     %8.1f ms (the whole command)\n",
		    t_tr_bin * 1e3);
	printf("  plain SQL, raw     %8.1f ms (%ld weeks)\n\n",
	    t_tr_sql * 1e3, rows);
	sqlite3_close(db);
	flaky_store_close(s);
	trigger_cost();
	return 0;
}
