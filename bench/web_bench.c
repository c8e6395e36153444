/* web_bench: the server time of the dashboard's tests page for 10,000
 * tests (issue 17: under 200 ms), against the baseline of the same
 * window's reads that flakyctl report makes (test stats and history), in
 * the same run, as CPU time (medians of 7); and the overview and /api/v1/tests beside them.
 *
 *	web_bench [--db PATH] [--regenerate]
 *	web_bench --db postgresql://...	(wall-clock: the server's work;
 *	    bench/pg_report.sh with KEEP=1 leaves 27,000,000 results in one)
 *
 * The store is generated once through the store's own writes (60 runs of
 * 10,000 tests over 30 days, 3% of the tests flaky) and cached outside
 * the source tree: $WEB_BENCH_DB, else /tmp/flaky-web-bench.db. */
#include "buildconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "classify/classify.h"
#include "parse/parse.h"
#include "store/store.h"
#include "util/util.h"
#include "web/web.h"

#define NTESTS		10000
#define NRUNS		60		/* two a day */
#define END_MS		1793491200000LL	/* 2026-11-01T00:00:00Z */
#define REPEAT		7

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: reproducible. */
static double
unit(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0;
}

/* On a PostgreSQL server (--db postgresql://) the work is the server's:
 * wall-clock time then, for the baseline and the pages alike. */
static int wall;

/* CPU time of this process: the machine is shared, and the server time
 * of a page is what it costs, not how long it waited for a core. */
static double
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(wall ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
fail(const char *what, const char *err)
{
	fprintf(stderr, "web_bench: %s: %s\n", what, err);
	exit(1);
}

/* Failure probability of test i: 1% at 30%, 2% at 8%, the rest never. */
static double
fail_p(int i)
{
	return i % 100 == 7 ? 0.30 : i % 50 == 3 ? 0.08 : 0.0;
}

/* One run of every test, as the store writes a finished run. */
static void
one_run(struct flaky_store *s, int64_t tid, int k)
{
	struct flaky_run_record rec;
	struct flaky_results r;
	char	 name[64], err[512];

	memset(&rec, 0, sizeof rec);
	memset(&r, 0, sizeof r);
	r.summary_total = -1;
	r.cap = NTESTS;
	if ((r.v = calloc(NTESTS, sizeof *r.v)) == NULL)
		fail("calloc", "out of memory");
	for (int i = 0; i < NTESTS; i++) {
		struct flaky_result *x = &r.v[r.n++];

		snprintf(name, sizeof name, "tests/test_mod%03d.py::test_case_%05d",
		    i / 100, i);
		x->test = strdup(name);
		x->position = (unsigned)i;
		x->duration_us = 1000 + i % 7000;
		x->outcome = unit() < fail_p(i) ? FLAKY_FAIL : FLAKY_PASS;
		if (x->outcome == FLAKY_FAIL)
			x->message = strdup("AssertionError: expected 200, got "
			    "503 <html>");
	}
	if (flaky_classify_results(NULL, &r, NULL) < 0)
		fail("classify", "out of memory");
	rec.target_id = tid;
	rec.trigger = "schedule";
	rec.started_ms = END_MS - (int64_t)(NRUNS - k) * FLAKY_DAY_MS / 2;
	rec.ended_ms = rec.started_ms + 60000;
	rec.duration_us = 60000000;
	rec.status = FLAKY_RUN_DONE;
	rec.exit_code = 1;
	rec.loadavg = -1;
	rec.out = "collected 10000 items\n";
	rec.out_len = strlen(rec.out);
	if (flaky_store_run_finish(s, &rec, &r, err, sizeof err) < 0)
		fail("storing a run", err);
	flaky_results_free(&r);
}

static void
generate(const char *path)
{
	struct flaky_store *s;
	int64_t	 tid;
	char	 err[512];

	unlink(path);
	if (flaky_store_open(path, FLAKY_STORE_BULK, &s, err, sizeof err) < 0)
		fail(path, err);
	if (flaky_store_target(s, "bench", "pytest", "/src", &tid, err,
	    sizeof err) < 0)
		fail("target", err);
	for (int k = 0; k < NRUNS; k++)
		one_run(s, tid, k);
	flaky_store_close(s);
}

/* The median of REPEAT timings of GET path, in ms; *bytes of the reply. */
static double
time_page(struct flaky_store *s, const struct flaky_web_opts *o,
    const char *path, size_t *bytes)
{
	double	 t[REPEAT], x;

	for (int i = 0; i < REPEAT; i++) {
		struct flaky_web_reply r;
		double	 t0 = now_ms();

		flaky_web_reply_init(&r);
		if (flaky_web_handle(s, o, path, NULL, &r) < 0 ||
		    r.status != 200)
			fail(path, r.body.data ? r.body.data : "error");
		t[i] = now_ms() - t0;
		*bytes = r.body.len;
		flaky_web_reply_free(&r);
	}
	for (int i = 1; i < REPEAT; i++)
		for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
			x = t[j];
			t[j] = t[j - 1];
			t[j - 1] = x;
		}
	return t[REPEAT / 2];
}

/* The baseline: the window's reads of report (stats and history). */
static double
time_reads(struct flaky_store *s)
{
	double	 best = 1e9;	/* the fastest of REPEAT */
	char	 err[512];

	for (int i = 0; i < REPEAT; i++) {
		struct flaky_test_row *rows;
		struct flaky_history h;
		struct flaky_query q;
		size_t	 n;
		double	 t0 = now_ms(), t;

		memset(&q, 0, sizeof q);
		q.until_ms = END_MS;
		q.since_ms = END_MS - 30 * FLAKY_DAY_MS;
		if (flaky_store_test_stats(s, &q, &rows, &n, err,
		    sizeof err) < 0 || flaky_store_history(s, &q, &h, err,
		    sizeof err) < 0)
			fail("reads", err);
		t = now_ms() - t0;
		best = t < best ? t : best;
		flaky_test_rows_free(rows, n);
		flaky_history_free(&h);
	}
	return best;
}

int
main(int argc, char **argv)
{
	struct flaky_web_opts o = { END_MS - 1, NULL, 0 };
	struct flaky_store *s;
	const char *path = getenv("WEB_BENCH_DB");
	size_t	 bytes;
	double	 base, t;
	char	 err[512];
	int	 regen = 0;

	if (path == NULL)
		path = "/tmp/flaky-web-bench.db";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
			path = argv[++i];
		else if (strcmp(argv[i], "--regenerate") == 0)
			regen = 1;
		else
			fail("usage", "web_bench [--db PATH|postgresql://...] "
			    "[--regenerate]");
	}
	wall = strncmp(path, "postgresql://", 13) == 0 ||
	    strncmp(path, "postgres://", 11) == 0;
	if (wall)
		printf("%s: wall-clock times (the server does the work)\n",
		    "PostgreSQL");
	if (!wall && (regen || access(path, R_OK) != 0)) {
		t = now_ms();
		generate(path);
		printf("generated %s: %d tests, %d runs in %.1f s\n", path,
		    NTESTS, NRUNS, (now_ms() - t) / 1e3);
	}
	if (flaky_store_open(path, FLAKY_STORE_READONLY, &s, err,
	    sizeof err) < 0)
		fail(path, err);
	base = time_reads(s);
	printf("%-22s %8.1f ms  (baseline: report's reads)\n", "stats+history",
	    base);
	t = time_page(s, &o, "/tests", &bytes);
	printf("%-22s %8.1f ms  %5.2fx baseline  %zu bytes\n", "/tests", t,
	    t / base, bytes);
	t = time_page(s, &o, "/", &bytes);
	printf("%-22s %8.1f ms  %5.2fx baseline  %zu bytes\n", "/", t,
	    t / base, bytes);
	t = time_page(s, &o, "/api/v1/tests", &bytes);
	printf("%-22s %8.1f ms  %5.2fx baseline  %zu bytes\n",
	    "/api/v1/tests", t, t / base, bytes);
	flaky_store_close(s);
	return 0;
}
