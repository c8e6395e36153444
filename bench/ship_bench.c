/*
 * ship_bench: boxes shipping their runs into one PostgreSQL server at once
 * (issue 15, docs/performance.md), against COPY of the same rows from a
 * CSV file into the same table, measured in the same run.
 *
 *	ship_bench URI DIR [BOXES [RUNS [TESTS]]]
 *
 * Makes BOXES (8) local SQLite stores of RUNS (200) runs of TESTS (1000)
 * results each in DIR (the same suite on every box, 2% failures), and
 * the CSV of all those results in the server's results columns. Then, on
 * the server of URI (bench/ship_bench.sh makes a throwaway one):
 *   1. baseline: COPY results FROM the CSV, one stream; timed; emptied;
 *   2. the boxes: one thread each, its own SQLite and libpq connections,
 *      shipping its whole queue in batches as flakyd does (the same
 *      library calls: flaky_store_ship_read into flaky_fleet_ship_*);
 *   3. the baseline again, and the better of the two counts.
 * Prints results/s of both and their ratio; exits 1 when the boxes reach
 * less than half the baseline or less than 200,000 results/s in all.
 */
#include "buildconf.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "fleet/fleet.h"
#include "store/store.h"
#include "util/util.h"

#define BATCH_RUNS	1000
#define BATCH_RESULTS	50000

struct box {
	int		 index;
	char		 path[4096];
	const char	*uri;
	int		 runs, tests;
	int64_t		 first_ms;
	FILE		*csv;		/* the generator writes its rows */
	pthread_mutex_t	*csv_mu;
	size_t		 shipped;	/* results */
	int		 failed;
	char		 err[1024];
};

static double
now_s(void)
{
	return (double)flaky_mono_us() / 1e6;
}

/* Seconds of CPU the whole machine has been busy (/proc/stat: user, nice,
 * system, irq, softirq; not idle, I/O wait or a VM's steal), *steal the
 * steal: a phase's CPU per result moves less with the machine's load than
 * its wall clock. */
static double
cpu_s(double *steal)
{
	unsigned long long v[8] = { 0 };
	FILE	*fp = fopen("/proc/stat", "r");
	double	 hz = (double)sysconf(_SC_CLK_TCK);

	if (fp == NULL || fscanf(fp, "cpu %llu %llu %llu %llu %llu %llu %llu "
	    "%llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
	    &v[7]) != 8) {
		if (fp != NULL)
			fclose(fp);
		*steal = 0;
		return 0;
	}
	fclose(fp);
	*steal = (double)v[7] / hz;
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / hz;
}

/* One run's results: every test, 2% of them failed. */
static void
make_results(struct flaky_results *res, struct flaky_result *v, int tests,
    int run, int box, char (*names)[64])
{
	memset(res, 0, sizeof *res);
	strcpy(res->runner, "pytest");
	for (int i = 0; i < tests; i++) {
		int	 fail = (i * 7 + run * 13 + box) % 50 == 0;

		v[i].test = names[i];
		v[i].position = (unsigned)i;
		v[i].outcome = fail ? FLAKY_FAIL : FLAKY_PASS;
		v[i].duration_us = 1000 + (i * 37 + run) % 50000;
		v[i].message = fail ? "AssertionError: assert 3 == 4" : NULL;
		v[i].signature = fail ? "UNKNOWN" : NULL;
	}
	res->v = v;
	res->n = (size_t)tests;
	res->summary_total = tests;
}

/* The CSV rows of one run, in the server's results columns; run ids and
 * test ids as the server would give them (made up, unique). */
static void
csv_rows(struct box *b, const struct flaky_results *res, int64_t run_id,
    int64_t started_ms)
{
	pthread_mutex_lock(b->csv_mu);
	for (size_t i = 0; i < res->n; i++) {
		const struct flaky_result *r = &res->v[i];

		fprintf(b->csv, "%" PRId64 ",%" PRId64 ",%" PRId64 ",%zu,%u,,"
		    "%d,%s,%s\n", started_ms, run_id, r->duration_us, i + 1,
		    r->position, r->outcome, r->signature ? r->signature : "",
		    r->message ? r->message : "");
	}
	pthread_mutex_unlock(b->csv_mu);
}

/* A box's local store, filled (a thread per box). */
static void *
generate(void *arg)
{
	struct box	*b = arg;
	struct flaky_store *s = NULL;
	struct flaky_results res;
	struct flaky_result *v;
	struct flaky_run_record rec;
	char		(*names)[64];
	int64_t		 target;

	v = calloc((size_t)b->tests, sizeof *v);
	names = calloc((size_t)b->tests, sizeof *names);
	if (v == NULL || names == NULL)
		exit(2);
	for (int i = 0; i < b->tests; i++)
		snprintf(names[i], sizeof names[i], "tests/test_mod%02d.py::"
		    "test_case_%04d", i / 50, i);
	remove(b->path);
	if (flaky_store_open(b->path, FLAKY_STORE_BULK, &s, b->err,
	    sizeof b->err) < 0 || flaky_store_target(s, "bench-suite",
	    "pytest -v", "/src", &target, b->err, sizeof b->err) < 0)
		goto fail;
	for (int run = 0; run < b->runs; run++) {
		make_results(&res, v, b->tests, run, b->index, names);
		memset(&rec, 0, sizeof rec);
		rec.target_id = target;
		rec.status = FLAKY_RUN_DONE;
		rec.trigger = "schedule";
		rec.started_ms = b->first_ms + run * 60000;
		rec.ended_ms = rec.started_ms + 30000;
		rec.duration_us = 30000000;
		rec.revision = "3f2a9c1d0b7e4f5a6c8d9e0f1a2b3c4d5e6f7a8b";
		if ((run % 20 == 0 && flaky_store_begin(s, b->err,
		    sizeof b->err) < 0) ||
		    flaky_store_run_finish(s, &rec, &res, b->err,
		    sizeof b->err) < 0 ||
		    ((run % 20 == 19 || run == b->runs - 1) &&
		    flaky_store_commit(s, b->err, sizeof b->err) < 0))
			goto fail;
		csv_rows(b, &res, 1000000000LL * (b->index + 1) + rec.id,
		    rec.started_ms);
	}
	flaky_store_close(s);
	free(v);
	free(names);
	return NULL;
fail:
	b->failed = 1;
	flaky_store_close(s);
	free(v);
	free(names);
	return NULL;
}

/* A box ships its whole queue, batch after batch, as flakyd's shipper. */
static void *
ship(void *arg)
{
	struct box	*b = arg;
	struct flaky_store *s = NULL;
	struct flaky_fleet *f = NULL;
	struct flaky_fleet_ship *sh;
	struct flaky_ship_sink k = { flaky_fleet_ship_run,
	    flaky_fleet_ship_result, flaky_fleet_ship_test,
	    flaky_fleet_ship_attempt, flaky_fleet_ship_polluter, NULL };
	struct flaky_ship_batch batch;
	char		 box[16], claim[32];
	long long	 fresh;

	snprintf(box, sizeof box, "box-%d", b->index);
	snprintf(claim, sizeof claim, "bench/%d", b->index);
	if (flaky_store_open(b->path, 0, &s, b->err, sizeof b->err) < 0 ||
	    flaky_fleet_connect(b->uri, &f, b->err, sizeof b->err) < 0 ||
	    flaky_fleet_claim(f, box, claim, b->err, sizeof b->err) < 0)
		goto fail;
	for (;;) {
		if (flaky_fleet_ship_begin(f, box, &sh, b->err,
		    sizeof b->err) < 0)
			goto fail;
		k.arg = sh;
		if (flaky_store_ship_read(s, BATCH_RUNS, BATCH_RESULTS, &k,
		    &batch, b->err, sizeof b->err) < 0 ||
		    flaky_fleet_ship_commit(sh, &fresh, b->err,
		    sizeof b->err) < 0) {
			flaky_fleet_ship_abort(sh);
			goto fail;
		}
		flaky_fleet_ship_abort(sh);
		if (batch.runs == 0)
			break;
		if (flaky_store_ship_done(s, &batch, b->err,
		    sizeof b->err) < 0)
			goto fail;
		b->shipped += batch.results;
	}
	flaky_fleet_close(f);
	flaky_store_close(s);
	return NULL;
fail:
	b->failed = 1;
	flaky_fleet_close(f);
	flaky_store_close(s);
	return NULL;
}

/* Run sql on the server or die. */
static void
exec_or_die(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);

	if (PQresultStatus(r) != PGRES_COMMAND_OK &&
	    PQresultStatus(r) != PGRES_TUPLES_OK) {
		fprintf(stderr, "ship_bench: %s: %s", sql,
		    PQresultErrorMessage(r));
		exit(2);
	}
	PQclear(r);
}

/* The baseline: COPY results FROM the CSV file, one stream; seconds,
 * *cpu the machine's CPU seconds meanwhile. */
static double
baseline(PGconn *c, const char *csv, double *cpu)
{
	static char	 buf[1 << 20];
	PGresult	*r;
	FILE		*fp;
	size_t		 n;
	double		 t0, steal;

	exec_or_die(c, "TRUNCATE results");
	exec_or_die(c, "CHECKPOINT");
	if ((fp = fopen(csv, "r")) == NULL) {
		perror(csv);
		exit(2);
	}
	t0 = now_s();
	*cpu = cpu_s(&steal);
	r = PQexec(c, "COPY results (started_ms, run_id, duration_us, "
	    "test_id, position, message_id, outcome, signature, message) "
	    "FROM STDIN (FORMAT csv)");
	if (PQresultStatus(r) != PGRES_COPY_IN) {
		fprintf(stderr, "ship_bench: %s", PQresultErrorMessage(r));
		exit(2);
	}
	PQclear(r);
	while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
		if (PQputCopyData(c, buf, (int)n) != 1)
			exit(2);
	if (PQputCopyEnd(c, NULL) != 1)
		exit(2);
	while ((r = PQgetResult(c)) != NULL) {
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			fprintf(stderr, "ship_bench: baseline: %s",
			    PQresultErrorMessage(r));
			exit(2);
		}
		PQclear(r);
	}
	t0 = now_s() - t0;
	*cpu = cpu_s(&steal) - *cpu;
	fclose(fp);
	exec_or_die(c, "TRUNCATE results");
	return t0;
}

int
main(int argc, char **argv)
{
	pthread_mutex_t	 mu = PTHREAD_MUTEX_INITIALIZER;
	struct flaky_fleet *f;
	struct box	*boxes;
	pthread_t	*th;
	char		 err[1024], csv[4096];
	int		 nbox = 8, runs = 200, tests = 1000;
	double		 t, b1, b2, ship_s, base_s, c1, c2, cs, st, st0;
	size_t		 total = 0;
	FILE		*fp;

	if (argc < 3 || argc > 6) {
		fprintf(stderr, "usage: ship_bench URI DIR [BOXES [RUNS "
		    "[TESTS]]]\n");
		return 2;
	}
	if (argc > 3)
		nbox = atoi(argv[3]);
	if (argc > 4)
		runs = atoi(argv[4]);
	if (argc > 5)
		tests = atoi(argv[5]);
	if (nbox < 1 || runs < 1 || tests < 1)
		return 2;
	boxes = calloc((size_t)nbox, sizeof *boxes);
	th = calloc((size_t)nbox, sizeof *th);
	snprintf(csv, sizeof csv, "%s/results.csv", argv[2]);
	if (boxes == NULL || th == NULL || (fp = fopen(csv, "w")) == NULL)
		return 2;
	t = now_s();
	for (int i = 0; i < nbox; i++) {
		struct box *b = &boxes[i];

		b->index = i;
		snprintf(b->path, sizeof b->path, "%s/box%d.db", argv[2], i);
		b->uri = argv[1];
		b->runs = runs;
		b->tests = tests;
		b->first_ms = flaky_now_ms() - (int64_t)runs * 60000;
		b->csv = fp;
		b->csv_mu = &mu;
		pthread_create(&th[i], NULL, generate, b);
	}
	for (int i = 0; i < nbox; i++) {
		pthread_join(th[i], NULL);
		if (boxes[i].failed) {
			fprintf(stderr, "ship_bench: %s\n", boxes[i].err);
			return 2;
		}
	}
	fclose(fp);
	printf("made %d boxes x %d runs x %d results in %.1f s\n", nbox, runs,
	    tests, now_s() - t);

	if (flaky_fleet_connect(argv[1], &f, err, sizeof err) < 0 ||
	    flaky_fleet_migrate(f, NULL, err, sizeof err) < 0) {
		fprintf(stderr, "ship_bench: %s\n", err);
		return 2;
	}
	b1 = baseline((PGconn *)flaky_fleet_pq(f), csv, &c1);

	t = now_s();
	cs = cpu_s(&st0);
	for (int i = 0; i < nbox; i++)
		pthread_create(&th[i], NULL, ship, &boxes[i]);
	for (int i = 0; i < nbox; i++) {
		pthread_join(th[i], NULL);
		if (boxes[i].failed) {
			fprintf(stderr, "ship_bench: box %d: %s\n", i,
			    boxes[i].err);
			return 2;
		}
		total += boxes[i].shipped;
	}
	ship_s = now_s() - t;
	cs = cpu_s(&st) - cs;
	st -= st0;
	if (total != (size_t)nbox * (size_t)runs * (size_t)tests) {
		fprintf(stderr, "ship_bench: %zu results shipped, expected "
		    "%zu\n", total, (size_t)nbox * runs * tests);
		return 2;
	}
	b2 = baseline((PGconn *)flaky_fleet_pq(f), csv, &c2);
	base_s = b1 < b2 ? b1 : b2;
	flaky_fleet_close(f);

	printf("baseline  COPY results FROM csv, 1 stream: %zu results in "
	    "%.2f s (best of %.2f, %.2f): %.0f results/s\n", total, base_s,
	    b1, b2, total / base_s);
	printf("shipping  %d boxes at once, batches of %d runs: %zu results "
	    "in %.2f s: %.0f results/s\n", nbox, BATCH_RUNS, total, ship_s,
	    total / ship_s);
	printf("cpu       us per result: baseline %.2f (best of %.2f, %.2f), "
	    "shipping %.2f (%.1f s of the VM's steal while shipping)\n",
	    (c1 < c2 ? c1 : c2) * 1e6 / total, c1 * 1e6 / total,
	    c2 * 1e6 / total, cs * 1e6 / total, st);
	printf("ratio     %.2f of the baseline (goal >= 0.5; >= 200000 "
	    "results/s)\n", base_s / ship_s);
	return base_s / ship_s >= 0.5 && total / ship_s >= 200000 ? 0 : 1;
}
