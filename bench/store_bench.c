/* Benchmarks of the evidence database (docs/performance.md).
 *
 * store_bench store [--runs N] [--tests N] [--days D] [--repeat R]
 *	[--only import|full|normal] [--keep DIR]
 *	Benchmark (b): N runs of N tests stored as real runs are, one
 *	transaction per run through flaky_store_run_finish (run row, results,
 *	messages, rollups, indexes), with synchronous=FULL (the daemon) and
 *	NORMAL (FLAKY_STORE_BULK), against sqlite3's own .import of the same
 *	rows as CSV into a plain table, timed in the same run. Prints results
 *	per second and database bytes per result (after a checkpoint).
 *
 * store_bench gen DB [--runs N] [--tests N] [--days D] [--end MS]
 *	The database of benchmark (c): N runs of N tests spread evenly over
 *	D days ending now (or at MS, unix milliseconds), written through
 *	the store with FLAKY_STORE_BULK and 100 runs per transaction (the
 *	fast path; the rows are the same).
 *
 * Build: meson setup build-bench -Dbuildtype=release && ninja -C build-bench
 * bench/store_bench; run: build-bench/bench/store_bench store
 */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/store.h"
#include "util/util.h"

extern char **environ;

#define DAY_MS	86400000LL

struct bench {
	int		 runs, tests, days;
	int64_t		 end_ms;		/* gen: the last run before */
	int		 repeat;		/* store: timings of each */
	int		 only;		/* store: 1 import, 2 FULL, 3 NORMAL */
	struct flaky_result *all;	/* store: every run, made first */
	char		**names;	/* per test */
	int64_t		*base_us;	/* a test's typical duration */
	uint64_t	 rng;
	struct flaky_result *v;		/* one run's results, reused */
	char		**msgs;		/* per test: this run's message */
};

/* A failure message of kind k whose numbers vary from run to run (the
 * normalizer folds them into one fingerprint per kind). */
static void
message(char *buf, size_t len, int k, int a, int b, int c, int d)
{
	switch (k) {
	case 0:
		snprintf(buf, len, "AssertionError: assert %d == 42\n  where "
		    "%d = compute_total(%d)", a, a, b);
		break;
	case 1:
		snprintf(buf, len, "TimeoutError: operation timed out after "
		    "%d.%d s waiting for worker %d (pid %d)", a % 10, b % 10,
		    a, d);
		break;
	case 2:
		snprintf(buf, len, "ConnectionRefusedError: [Errno 111] "
		    "Connection refused: 127.0.0.1:%d (attempt %d of 5, "
		    "backoff %d ms)", c, a % 5, b);
		break;
	default:
		snprintf(buf, len, "AssertionError: expected status 200, got "
		    "%d\nassert response.status == 200 (request id %d, retry "
		    "%d)", 500 + a % 4, d, b % 3);
	}
}

/* xorshift64*: the same data on every run of the benchmark. */
static uint64_t
rnd(struct bench *b)
{
	b->rng ^= b->rng >> 12;
	b->rng ^= b->rng << 25;
	b->rng ^= b->rng >> 27;
	return b->rng * 2685821657736338717ULL;
}

/* A number from 0 to n - 1. */
static int
rnd_n(struct bench *b, int n)
{
	return (int)((rnd(b) >> 33) % (uint64_t)n);
}

/* calloc or exit: a benchmark has nothing to recover. */
static void *
xmalloc0(size_t n)
{
	void	*p = calloc(1, n);

	if (p == NULL) {
		perror("calloc");
		exit(2);
	}
	return p;
}

/* Names as pytest prints them: tests/test_mod_NN.py::test_case_NNN[param]. */
static void
bench_init(struct bench *b)
{
	static const char *const params[] = {
		"", "[param0]", "[utf-8-True]", "[case-a-17]", "[ipv6]",
		"[sqlite-3.40]", "", "[empty-string]",
	};

	b->rng = 0x9e3779b97f4a7c15ULL;
	b->names = xmalloc0((size_t)b->tests * sizeof *b->names);
	b->base_us = xmalloc0((size_t)b->tests * sizeof *b->base_us);
	b->msgs = xmalloc0((size_t)b->tests * sizeof *b->msgs);
	b->v = xmalloc0((size_t)b->tests * sizeof *b->v);
	for (int i = 0; i < b->tests; i++) {
		if (asprintf(&b->names[i], "tests/test_mod_%02d.py::"
		    "test_case_%03d%s", i / 20, i, params[i % 8]) == -1)
			exit(2);
		/* 0.2 ms .. ~800 ms, most tests fast */
		b->base_us[i] = 200 + (int64_t)(rnd(b) % 4000) *
		    (rnd_n(b, 10) == 0 ? 200 : 1);
		b->msgs[i] = xmalloc0(256);
	}
}

/* One run's results: ~2% fail with a message, ~1% skipped. */
static size_t
make_run(struct bench *b, int *ret_fail)
{
	int	 fails = 0;

	for (int i = 0; i < b->tests; i++) {
		struct flaky_result *r = &b->v[i];
		int	 x = rnd_n(b, 1000);

		r->test = b->names[i];
		r->position = (unsigned)i;
		r->message = NULL;
		r->duration_us = b->base_us[i] / 2 +
		    (int64_t)(rnd(b) % (uint64_t)(b->base_us[i] + 1));
		if (x < 20) {
			int k = i % 4;

			r->outcome = x < 18 ? FLAKY_FAIL : FLAKY_ERROR;
			message(b->msgs[i], 256, k, rnd_n(b, 100),
			    rnd_n(b, 1000), rnd_n(b, 9000), rnd_n(b, 30000));
			r->message = b->msgs[i];
			fails++;
		} else if (x < 30)
			r->outcome = FLAKY_SKIP;
		else
			r->outcome = FLAKY_PASS;
	}
	*ret_fail = fails;
	return (size_t)b->tests;
}

/* Every run of the benchmark, made before the clock starts. */
static void
make_all(struct bench *b)
{
	int	 fails;

	b->all = xmalloc0((size_t)b->runs * (size_t)b->tests * sizeof *b->all);
	for (int run = 0; run < b->runs; run++) {
		struct flaky_result *v = &b->all[(size_t)run * b->tests];

		make_run(b, &fails);
		memcpy(v, b->v, (size_t)b->tests * sizeof *v);
		for (int i = 0; i < b->tests; i++)
			if (v[i].message != NULL &&
			    (v[i].message = strdup(v[i].message)) == NULL)
				exit(2);
	}
}

/* Store the runs into path with flags, per_tx runs per transaction (1:
 * each its own), and write their rows to csv when it is not NULL. */
static int
store_runs(struct bench *b, const char *path, int flags, int per_tx,
    int64_t first_ms, int64_t step_ms, FILE *csv)
{
	struct flaky_store *s = NULL;
	struct flaky_results res;
	struct flaky_run_record rec;
	int64_t		 target;
	char		 err[1024];
	int		 fails;

	if (flaky_store_open(path, flags, &s, err, sizeof err) < 0 ||
	    flaky_store_target(s, "bench-pytest", "pytest -v tests/", "/src",
	    &target, err, sizeof err) < 0) {
		fprintf(stderr, "store_bench: %s\n", err);
		flaky_store_close(s);
		return -1;
	}
	for (int run = 0; run < b->runs; run++) {
		memset(&res, 0, sizeof res);
		strcpy(res.runner, "pytest");
		if (b->all != NULL) {
			res.n = (size_t)b->tests;
			res.v = &b->all[(size_t)run * b->tests];
			fails = 0;
			for (size_t i = 0; i < res.n; i++)
				fails += FLAKY_FAILED(res.v[i].outcome);
		} else {
			res.n = make_run(b, &fails);
			res.v = b->v;
		}
		res.summary_total = (long)res.n;
		memset(&rec, 0, sizeof rec);
		rec.target_id = target;
		rec.status = FLAKY_RUN_DONE;
		rec.trigger = "schedule";
		rec.started_ms = first_ms + run * step_ms;
		rec.duration_us = 60000000;
		rec.ended_ms = rec.started_ms + 60000;
		rec.exit_code = fails ? 1 : 0;
		rec.revision = "3f2a9c1d0b7e4f5a6c8d9e0f1a2b3c4d5e6f7a8b";
		rec.in_flight = 1;
		rec.loadavg = 0.5;
		rec.out = "===== 980 passed, 20 failed in 60.0s =====\n";
		rec.out_len = strlen(rec.out);
		if (per_tx > 1 && run % per_tx == 0 &&
		    flaky_store_begin(s, err, sizeof err) < 0)
			goto fail;
		if (flaky_store_run_finish(s, &rec, &res, err, sizeof err) < 0)
			goto fail;
		if (per_tx > 1 && (run % per_tx == per_tx - 1 ||
		    run == b->runs - 1) &&
		    flaky_store_commit(s, err, sizeof err) < 0)
			goto fail;
		for (size_t i = 0; csv != NULL && i < res.n; i++) {
			const struct flaky_result *r = &res.v[i];

			fprintf(csv, "%" PRId64 ",%u,%s,%d,%" PRId64 ",",
			    rec.id, r->position, r->test, r->outcome,
			    r->duration_us);
			if (r->message != NULL) {
				fputc('"', csv);
				for (const char *p = r->message; *p; p++) {
					if (*p == '"')
						fputc('"', csv);
					fputc(*p, csv);
				}
				fputc('"', csv);
			}
			fputc('\n', csv);
		}
	}
	/* Closing the last connection checkpoints and removes the WAL. */
	flaky_store_close(s);
	return 0;
fail:
	fprintf(stderr, "store_bench: %s\n", err);
	flaky_store_close(s);
	return -1;
}

/* CPU seconds of this process (user + system) or of its children. */
static double
cpu_s(int who)
{
	struct rusage	 ru;

	getrusage(who, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* The size of a file, 0 when it is missing. */
static off_t
file_size(const char *path)
{
	struct stat	 st;

	return stat(path, &st) == 0 ? st.st_size : 0;
}

/* Remove a database and its -wal and -shm files. */
static void
rm_db(const char *path)
{
	char	 p[4096];

	unlink(path);
	if (snprintf(p, sizeof p, "%s-wal", path) < (int)sizeof p)
		unlink(p);
	if (snprintf(p, sizeof p, "%s-shm", path) < (int)sizeof p)
		unlink(p);
}

/* qsort order of doubles. */
static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median time of a 32 KiB overwrite and fdatasync in dir, in seconds:
 * what one commit of a run costs the disk with synchronous=FULL. */
static double
fsync_floor(const char *dir)
{
	static char	 page[32768];
	double		 t[101];
	char		 path[4096];
	int		 fd;

	if (snprintf(path, sizeof path, "%s/fsync.tmp", dir) >=
	    (int)sizeof path || (fd = open(path, O_RDWR | O_CREAT | O_TRUNC,
	    0600)) == -1)
		return -1;
	memset(page, 'x', sizeof page);
	for (int i = 0; i < 101; i++) {
		int64_t	 t0 = flaky_mono_us();

		if (pwrite(fd, page, sizeof page, 0) != (ssize_t)sizeof page ||
		    fdatasync(fd) == -1) {
			close(fd);
			unlink(path);
			return -1;
		}
		t[i] = (double)(flaky_mono_us() - t0) / 1e6;
	}
	close(fd);
	unlink(path);
	qsort(t, 101, sizeof *t, cmp_double);
	return t[50];
}

/* sqlite3 CLI .import of the CSV into a plain table; wall seconds. */
static double
sqlite_import(const char *db, const char *csv)
{
	char		 script[4200];
	char		*argv[] = { "sqlite3", (char *)db, NULL, NULL };
	posix_spawn_file_actions_t fa;
	int64_t		 t0;
	pid_t		 pid;
	int		 status;
	FILE		*f;
	char		 sql[4096];

	if (snprintf(sql, sizeof sql, "%s.sql", db) >= (int)sizeof sql ||
	    (f = fopen(sql, "w")) == NULL)
		return -1;
	fprintf(f, "PRAGMA journal_mode = WAL;\n"
	    "CREATE TABLE results (run_id INTEGER, position INTEGER, "
	    "test TEXT, outcome INTEGER, duration_us INTEGER, message TEXT);\n"
	    ".mode csv\n.import %s results\n", csv);
	fclose(f);
	if (snprintf(script, sizeof script, ".read %s", sql) >=
	    (int)sizeof script)
		return -1;
	argv[2] = script;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	t0 = flaky_mono_us();
	if (posix_spawnp(&pid, "sqlite3", &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	unlink(sql);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return (double)(flaky_mono_us() - t0) / 1e6;
}

/* The options from argv[i] on; --keep only where keep is given. */
static int
parse_args(struct bench *b, int argc, char **argv, int i, const char **keep)
{
	for (; i < argc; i++) {
		long long v;

		if (i + 1 >= argc)
			goto usage;
		if (strcmp(argv[i], "--only") == 0) {
			i++;
			b->only = strcmp(argv[i], "import") == 0 ? 1 :
			    strcmp(argv[i], "full") == 0 ? 2 :
			    strcmp(argv[i], "normal") == 0 ? 3 : -1;
			if (b->only < 0)
				goto usage;
			continue;
		}
		if (strcmp(argv[i], "--keep") == 0 && keep != NULL) {
			*keep = argv[++i];
			continue;
		}
		if (strcmp(argv[i], "--end") == 0) {
			if (flaky_parse_int(argv[++i], 1, INT64_MAX / 2,
			    &v) < 0)
				goto usage;
			b->end_ms = v;
			continue;
		}
		if (flaky_parse_int(argv[i + 1], 1, 100000000, &v) < 0)
			goto usage;
		if (strcmp(argv[i], "--runs") == 0)
			b->runs = (int)v;
		else if (strcmp(argv[i], "--tests") == 0)
			b->tests = (int)v;
		else if (strcmp(argv[i], "--days") == 0)
			b->days = (int)v;
		else if (strcmp(argv[i], "--repeat") == 0)
			b->repeat = (int)v;
		else
			goto usage;
		i++;
	}
	return 0;
usage:
	fprintf(stderr, "usage: store_bench store [--runs N] [--tests N] "
	    "[--days D] [--repeat R]\n"
	    "                         [--only import|full|normal] [--keep DIR]\n"
	    "       store_bench gen DB [--runs N] [--tests N] [--days D] "
	    "[--end MS]\n");
	return -1;
}

/* Median of n values (sorts them). */
static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Benchmark (b): store, time and print against the CSV import. */
static int
cmd_store(int argc, char **argv)
{
	static const char *const label[3] = {
		"sqlite3 .import CSV, plain table (base)",
		"flaky store, synchronous=FULL (flakyd)",
		"flaky store, synchronous=NORMAL (bulk)",
	};
	struct bench	 b = { .runs = 1000, .tests = 1000, .days = 1,
			    .repeat = 3 };
	const char	*keep = NULL;
	char		 dir[] = "/tmp/flaky-bench-XXXXXX", path[3][4096];
	char		 csv[4096];
	double		 t[3][9], c[3][9], mt[3], mc[3], n, fs, rate;
	off_t		 size[3];
	FILE		*f;
	int64_t		 t0, now = flaky_now_ms(), first, step;

	if (parse_args(&b, argc, argv, 2, &keep) < 0)
		return 2;
	if (b.repeat > 9)
		b.repeat = 9;
	/* The runs end a minute ago and are spread over the days. */
	step = (int64_t)b.days * DAY_MS / b.runs;
	first = now - 60000 - (int64_t)(b.runs - 1) * step;
	if (keep == NULL && mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(path[0], sizeof path[0], "%s/import.db", keep ? keep : dir);
	snprintf(path[1], sizeof path[1], "%s/full.db", keep ? keep : dir);
	snprintf(path[2], sizeof path[2], "%s/normal.db", keep ? keep : dir);
	snprintf(csv, sizeof csv, "%s/results.csv", keep ? keep : dir);
	n = (double)b.runs * b.tests;
	bench_init(&b);
	/* All runs are made before any timing: only storing is timed. */
	make_all(&b);

	/* The CSV: the same rows, written by an untimed pass. */
	if ((f = fopen(csv, "w")) == NULL) {
		perror(csv);
		return 2;
	}
	rm_db(path[0]);
	if (store_runs(&b, path[0], FLAKY_STORE_BULK, 100, first, step, f) < 0)
		return 2;
	fclose(f);

	/* Interleaved, so that a busy moment of the machine hits all. */
	for (int r = 0; r < b.repeat; r++) {
		for (int i = 0; i < 3; i++) {
			if (b.only > 0 && b.only != i + 1) {
				t[i][r] = c[i][r] = 1e-9;
				continue;
			}
			rm_db(path[i]);
			if (i == 0) {
				c[i][r] = cpu_s(RUSAGE_CHILDREN);
				t[i][r] = sqlite_import(path[0], csv);
				c[i][r] = cpu_s(RUSAGE_CHILDREN) - c[i][r];
				if (t[i][r] < 0) {
					fprintf(stderr, "store_bench: sqlite3 "
					    ".import failed\n");
					return 2;
				}
			} else {
				t0 = flaky_mono_us();
				c[i][r] = cpu_s(RUSAGE_SELF);
				if (store_runs(&b, path[i], i == 1 ? 0 :
				    FLAKY_STORE_BULK, 1, first, step,
				    NULL) < 0)
					return 2;
				t[i][r] = (double)(flaky_mono_us() - t0) / 1e6;
				c[i][r] = cpu_s(RUSAGE_SELF) - c[i][r];
			}
			size[i] = file_size(path[i]);
		}
	}
	fs = fsync_floor(keep ? keep : dir);

	printf("benchmark (b): %d runs x %d tests = %.0f results over %d "
	    "day(s), one transaction per run\nmedians of %d interleaved "
	    "repeats\n\n", b.runs, b.tests, n, b.days, b.repeat);
	printf("%-40s %7s %7s %10s %10s %8s %7s\n", "", "wall s", "cpu s",
	    "results/s", "per cpu s", "B/result", "vs CSV");
	for (int i = 0; i < 3; i++) {
		mt[i] = median(t[i], b.repeat);
		mc[i] = median(c[i], b.repeat);
	}
	for (int i = 0; i < 3; i++) {
		if (b.only > 0 && b.only != i + 1)
			continue;
		printf("%-40s %7.2f %7.2f %10.0f %10.0f %8.1f %7.2f\n",
		    label[i], mt[i], mc[i], n / mt[i], n / mc[i],
		    (double)size[i] / n, b.only ? 0.0 : mt[0] / mt[i]);
	}
	printf("\nfsync floor here: a 32 KiB overwrite + fdatasync takes "
	    "%.2f ms (median of 101);\none commit per run of %d tests then "
	    "allows at most %.0f results/s with FULL.\n", fs * 1e3, b.tests,
	    fs > 0 ? b.tests / fs : 0.0);
	printf("results/s: wall time; per cpu s: CPU time (user + system) of "
	    "the process;\nvs CSV: import wall time / this wall time (above "
	    "1: faster than the import).\nB/result: database file size after "
	    "the final checkpoint / results.\n");
	rate = n / mt[1];
	{
		double	 la[3];

		if (getloadavg(la, 3) == 3)
			printf("load average at the end: %.2f %.2f %.2f on %ld "
			    "CPUs\n", la[0], la[1], la[2],
			    sysconf(_SC_NPROCESSORS_ONLN));
	}
	printf("goal >= 300000 results/s with FULL: %s (%.0f)\n", rate >=
	    300000 ? "met" : "NOT met", rate);
	if (keep == NULL) {
		for (int i = 0; i < 3; i++)
			rm_db(path[i]);
		unlink(csv);
		rmdir(dir);
	}
	return rate >= 300000 ? 0 : 1;
}

/* The database of benchmark (c). */
static int
cmd_gen(int argc, char **argv)
{
	struct bench	 b = { .runs = 10000, .tests = 1000, .days = 30 };
	int64_t		 now = flaky_now_ms(), span, t0;

	if (argc < 3 || parse_args(&b, argc, argv, 3, NULL) < 0) {
		fprintf(stderr, "usage: store_bench gen DB [--runs N] "
		    "[--tests N] [--days D]\n");
		return 2;
	}
	rm_db(argv[2]);
	if (b.end_ms > 0)
		now = b.end_ms;
	bench_init(&b);
	span = (int64_t)b.days * DAY_MS;
	t0 = flaky_mono_us();
	/* Runs from 30 days ago to a minute ago. */
	if (store_runs(&b, argv[2], FLAKY_STORE_BULK, 100, now - span + 60000,
	    (span - 120000) / b.runs, NULL) < 0)
		return 2;
	fprintf(stderr, "store_bench: %s: %d runs x %d tests in %.1f s\n",
	    argv[2], b.runs, b.tests, (double)(flaky_mono_us() - t0) / 1e6);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "store") == 0)
		return cmd_store(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "gen") == 0)
		return cmd_gen(argc, argv);
	fprintf(stderr, "usage: store_bench store|gen ...\n");
	return 2;
}
