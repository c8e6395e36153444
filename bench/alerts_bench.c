/* The cost of alerts per stored run (docs/alerts.md, docs/performance.md):
 * what flakyd does after each run when notify: is set (the run's tests'
 * window over the target's last W runs, the rule, the cursor, one short
 * transaction), against storing that run (flaky_store_run_finish, one
 * transaction with synchronous=FULL, as flakyd stores), timed in the same
 * run on the same database. A run with events also writes them (one short
 * transaction, as rare as tier changes); the decisions are counted here.
 *
 * alerts_bench [--tests N] [--window W] [--runs R] [--dir DIR]
 *	R runs of N tests (1% of them flaky at 10%, seeded), W runs stored
 *	first; prints the median and p90 of both, and their ratio.
 *
 * Build: meson setup build-bench -Dbuildtype=release && ninja -C build-bench
 * bench/alerts_bench; run: build-bench/bench/alerts_bench
 */
#include "buildconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "store/store.h"
#include "util/util.h"

static uint64_t	 rng = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: the same runs on every machine. */
static double
uniform(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 2685821657736338717ULL) >> 11) /
	    9007199254740992.0;
}

static void
die(const char *what, const char *err)
{
	fprintf(stderr, "alerts_bench: %s: %s\n", what, err);
	exit(1);
}

/* One run of n tests; test i is flaky (10%) when i % 100 == 7. */
static int64_t
store_one(struct flaky_store *s, int64_t tid, int64_t at, int n)
{
	struct flaky_run_record rec = { 0 };
	struct flaky_results r;
	char	 err[512], name[96];

	flaky_results_init(&r);
	if ((r.v = calloc((size_t)n, sizeof *r.v)) == NULL)
		die("calloc", "out of memory");
	r.cap = (size_t)n;
	strcpy(r.runner, "pytest");
	for (int i = 0; i < n; i++) {
		int fail = i % 100 == 7 && uniform() < 0.1;

		snprintf(name, sizeof name, "tests/test_m%d.py::test_%d",
		    i / 50, i);
		r.v[i].test = strdup(name);
		r.v[i].outcome = fail ? FLAKY_FAIL : FLAKY_PASS;
		r.v[i].duration_us = 1000 + i;
		r.v[i].message = fail ? strdup("AssertionError: 1 != 2") : NULL;
		r.v[i].signature = fail ? strdup("UNKNOWN") : NULL;
		r.v[i].position = (unsigned)i;
		r.n++;
	}
	rec.target_id = tid;
	rec.trigger = "schedule";
	rec.status = FLAKY_RUN_DONE;
	rec.started_ms = at;
	rec.ended_ms = at + 1000;
	rec.duration_us = 1000000;
	rec.loadavg = -1;
	if (flaky_store_run_finish(s, &rec, &r, err, sizeof err) < 0)
		die("storing a run", err);
	flaky_results_free(&r);
	return rec.id;
}

/* What flakyd's alerts do after a run without events: reads only (the
 * cursor is written with events), the events counted. */
static int
evaluate(struct flaky_store *s, int64_t tid, int window, int64_t *cursor)
{
	struct flaky_alert_test *v;
	int64_t	 run, ms;
	size_t	 n;
	char	 err[512];
	int	 found, events = 0;

	while ((found = flaky_store_alert_next_run(s, tid, *cursor, &run, &ms,
	    err, sizeof err)) > 0) {
		if (flaky_store_alert_window(s, tid, run, ms, window, &v, &n,
		    err, sizeof err) < 0)
			die("window", err);
		for (size_t i = 0; i < n; i++)
			events += flaky_alert_decide(&v[i],
			    FLAKY_NOTIFY_MIN_RUNS) >= 0;
		flaky_alert_tests_free(v, n);
		*cursor = run;
	}
	if (found < 0)
		die("evaluating", err);
	return events;
}

static int
cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	struct flaky_store *s;
	int64_t		 tid, t0, *st, *ev, cursor;
	int64_t		 at = flaky_now_ms() - 3600 * 1000;
	int		 tests = 1000, window = FLAKY_NOTIFY_WINDOW_DEFAULT;
	int		 runs = 50, events = 0;
	char		 dir[] = "/tmp/alerts-bench-XXXXXX", db[64], err[512];
	const char	*where = NULL;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--tests") == 0)
			tests = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--window") == 0)
			window = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--runs") == 0)
			runs = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--dir") == 0)
			where = argv[i + 1];
	}
	if (tests < 1 || window < 1 || runs < 1)
		die("usage", "[--tests N] [--window W] [--runs R]");
	if (where == NULL && (where = mkdtemp(dir)) == NULL)
		die("mkdtemp", "cannot make a directory");
	snprintf(db, sizeof db, "%s/bench.db", where);
	if (flaky_store_open(db, 0, &s, err, sizeof err) < 0 ||
	    flaky_store_target(s, "bench", "pytest", "/src", &tid, err,
	    sizeof err) < 0)
		die(db, err);
	for (int i = 0; i < window; i++)
		store_one(s, tid, at + i * 1000, tests);
	if (flaky_store_alert_cursor(s, tid, &cursor, err, sizeof err) < 0)
		die("cursor", err);		/* it starts here */
	st = calloc((size_t)runs, sizeof *st);
	ev = calloc((size_t)runs, sizeof *ev);
	for (int i = 0; i < runs; i++) {
		t0 = flaky_mono_us();
		store_one(s, tid, at + (window + i) * 1000, tests);
		st[i] = flaky_mono_us() - t0;
		t0 = flaky_mono_us();
		events += evaluate(s, tid, window, &cursor);
		ev[i] = flaky_mono_us() - t0;
	}
	qsort(st, (size_t)runs, sizeof *st, cmp64);
	qsort(ev, (size_t)runs, sizeof *ev, cmp64);
	printf("%d runs of %d tests, window %d runs, %d events\n", runs, tests,
	    window, events);
	printf("%-32s %10s %10s\n", "", "median ms", "p90 ms");
	printf("%-32s %10.2f %10.2f\n", "store the run (baseline)",
	    st[runs / 2] / 1e3, st[runs * 9 / 10] / 1e3);
	printf("%-32s %10.2f %10.2f\n", "alerts: evaluate the run",
	    ev[runs / 2] / 1e3, ev[runs * 9 / 10] / 1e3);
	printf("ratio (alerts / store), median: %.2f\n",
	    (double)ev[runs / 2] / (double)st[runs / 2]);
	flaky_store_close(s);
	if (where == dir) {
		char	 f[96];

		for (const char *x = ""; x != NULL; x = *x ? NULL : "-wal") {
			snprintf(f, sizeof f, "%s%s", db, x);
			unlink(f);
		}
		snprintf(f, sizeof f, "%s-shm", db);
		unlink(f);
		rmdir(dir);
	}
	free(st);
	free(ev);
	return 0;
}
