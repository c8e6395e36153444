/* store_diag (lib/store/diag.c): what diagnosis reads, with exact values:
 * the tests there are, a target's command and directory, one pass over a
 * target's results (only finished, complete runs), the run orders, the
 * durations of some tests, signature counts and whether the order varies. */
#include "buildconf.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/util.h"
#include "test_helper.h"

#define T0	1793534400000LL		/* 2026-11-01T12:00:00Z */
#define HOUR	3600000LL

static char	 dir[64];
static char	 path[128];
static struct flaky_store *st;
static char	 err[512];
static const struct flaky_query all = { INT64_MIN, INT64_MAX, NULL, 0, 0, 0 };

static void
setup(void)
{
	tu_tmpdir(dir, sizeof dir, "stdiag");
	snprintf(path, sizeof path, "%s/flaky.db", dir);
	ck_assert_msg(flaky_store_open(path, 0, &st, err, sizeof err) == 0,
	    "%s", err);
}

static void
teardown(void)
{
	flaky_store_close(st);
	st = NULL;
	tu_rmdir(dir);
}

static int64_t
target(const char *name, const char *command, const char *d)
{
	int64_t	 id;

	ck_assert_msg(flaky_store_target(st, name, command, d, &id, err,
	    sizeof err) == 0, "%s", err);
	return id;
}

/* One result: test, outcome, duration, message and signature (failed). */
static void
add(struct flaky_results *r, const char *test, int outcome, int64_t us,
    const char *msg, const char *sig)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 8;
		ck_assert_ptr_nonnull(r->v = realloc(r->v,
		    r->cap * sizeof *r->v));
	}
	memset(&r->v[r->n], 0, sizeof r->v[r->n]);
	ck_assert_ptr_nonnull(r->v[r->n].test = strdup(test));
	r->v[r->n].outcome = outcome;
	r->v[r->n].duration_us = us;
	r->v[r->n].message = msg ? strdup(msg) : NULL;
	r->v[r->n].signature = sig ? strdup(sig) : NULL;
	r->v[r->n].position = (unsigned)r->n;
	r->n++;
}

/* A run of a target stored whole: status, kind, start, seed, why it is
 * incomplete (NULL: complete), its results; returns its id. */
static int64_t
run(int64_t tid, int status, int kind, int64_t started, const char *seed,
    const char *incomplete, struct flaky_results *res)
{
	struct flaky_run_record rec;

	memset(&rec, 0, sizeof rec);
	rec.target_id = tid;
	rec.status = status;
	rec.kind = kind;
	rec.incomplete = incomplete;
	rec.trigger = kind == FLAKY_KIND_ALONE ? "confirm" : "analyze";
	rec.started_ms = started;
	rec.ended_ms = started + 1000;
	rec.duration_us = 1000000;
	rec.exit_code = 1;
	rec.loadavg = -1;
	rec.revision = "abc123";
	snprintf(res->runner, sizeof res->runner, "pytest");
	free(res->seed);
	res->seed = seed ? strdup(seed) : NULL;
	ck_assert_msg(flaky_store_run_finish(st, &rec, res, err, sizeof err) ==
	    0, "%s", err);
	return rec.id;
}

/* Target "t": runs 1 to 3 done (a, b, c in that order, then reversed),
 * 4 incomplete, 5 a timeout, 6 still running (never finished). Target
 * "u": one run of a test named like one of t's. */
static void
fixture(int64_t *t, int64_t *u)
{
	struct flaky_results r;
	struct flaky_run_record rec;

	*t = target("t", "pytest -v", "/src/t");
	*u = target("u", NULL, NULL);
	for (int i = 0; i < 3; i++) {
		flaky_results_init(&r);
		if (i < 2) {
			add(&r, "a", FLAKY_PASS, 1000 + i, NULL, NULL);
			add(&r, "b", FLAKY_FAIL, 2000 + i, "assert 1 == 2",
			    "VALUE");
			add(&r, "c", FLAKY_SKIP, -1, NULL, NULL);
		} else {
			add(&r, "c", FLAKY_ERROR, 3000, "Connection refused",
			    "INFRA");
			add(&r, "b", FLAKY_FAIL, -1, "assert 1 == 3", NULL);
			add(&r, "a", FLAKY_XPASS, 1500, NULL, NULL);
		}
		run(*t, FLAKY_RUN_DONE, FLAKY_KIND_SUITE, T0 + i * HOUR,
		    i == 2 ? "42" : "7", NULL, &r);
		flaky_results_free(&r);
	}
	flaky_results_init(&r);
	add(&r, "a", FLAKY_FAIL, 9000, "lost", "ASSERT");
	run(*t, FLAKY_RUN_DONE, FLAKY_KIND_SUITE, T0 + 3 * HOUR, "9",
	    "stopped early", &r);
	flaky_results_free(&r);
	flaky_results_init(&r);
	add(&r, "b", FLAKY_FAIL, 4000, "timed out", "TIMEOUT");
	run(*t, FLAKY_RUN_TIMEOUT, FLAKY_KIND_ALONE, T0 + 4 * HOUR, NULL,
	    NULL, &r);
	flaky_results_free(&r);
	memset(&rec, 0, sizeof rec);
	rec.target_id = *t;
	rec.trigger = "analyze";
	rec.started_ms = T0 + 5 * HOUR;
	rec.loadavg = -1;
	ck_assert_msg(flaky_store_run_start(st, &rec, err, sizeof err) == 0,
	    "%s", err);
	ck_assert_int_eq(rec.id, 6);
	flaky_results_init(&r);
	add(&r, "a", FLAKY_PASS, 10, NULL, NULL);
	run(*u, FLAKY_RUN_DONE, FLAKY_KIND_SUITE, T0, NULL, NULL, &r);
	flaky_results_free(&r);
}

static int64_t
test_id(const char *tg, const char *name)
{
	int64_t	 id;

	ck_assert_msg(flaky_store_find_test(st, tg, name, &id, err,
	    sizeof err) == 0, "%s", err);
	return id;
}

/* The tests, by target and name, of all targets or one. */
START_TEST(tests_and_targets)
{
	struct flaky_test_ref *v;
	size_t		 n;
	char		*cmd, *d;
	int64_t		 t, u;

	fixture(&t, &u);
	ck_assert_int_eq(flaky_store_tests(st, NULL, &v, &n, err, sizeof err),
	    0);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(v[0].target, "t");
	ck_assert_str_eq(v[0].name, "a");
	ck_assert_int_eq(v[0].id, test_id("t", "a"));
	ck_assert_int_eq(v[0].target_id, t);
	ck_assert_str_eq(v[1].name, "b");
	ck_assert_str_eq(v[2].name, "c");
	ck_assert_str_eq(v[3].target, "u");
	ck_assert_str_eq(v[3].name, "a");
	ck_assert_int_eq(v[3].target_id, u);
	ck_assert_int_ne(v[3].id, v[0].id);
	flaky_test_refs_free(v, n);
	ck_assert_int_eq(flaky_store_tests(st, "u", &v, &n, err, sizeof err),
	    0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(v[0].id, test_id("u", "a"));
	flaky_test_refs_free(v, n);
	ck_assert_int_eq(flaky_store_tests(st, "none", &v, &n, err,
	    sizeof err), 0);
	ck_assert_uint_eq(n, 0);
	flaky_test_refs_free(v, n);

	ck_assert_int_eq(flaky_store_target_info(st, t, &cmd, &d, err,
	    sizeof err), 0);
	ck_assert_str_eq(cmd, "pytest -v");
	ck_assert_str_eq(d, "/src/t");
	free(cmd);
	free(d);
	ck_assert_int_eq(flaky_store_target_info(st, u, &cmd, &d, err,
	    sizeof err), 0);
	ck_assert_ptr_null(cmd);
	ck_assert_ptr_null(d);
	ck_assert_int_eq(flaky_store_target_info(st, u + 100, &cmd, &d, err,
	    sizeof err), 0);
	ck_assert_ptr_null(cmd);
}
END_TEST

/* Every target's name, sorted and NULL-terminated: what an unknown
 * --target is told against. */
START_TEST(target_names)
{
	char	**v;
	size_t	 n = 99;
	int64_t	 t, u, z;

	ck_assert_int_eq(flaky_store_target_names(st, &v, &n, err, sizeof err),
	    0);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(v[0]);
	flaky_store_names_free(v);
	fixture(&t, &u);
	ck_assert_int_eq(flaky_store_target(st, "a-first", NULL, NULL, &z, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_target_names(st, &v, &n, err, sizeof err),
	    0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(v[0], "a-first");
	ck_assert_str_eq(v[1], "t");
	ck_assert_str_eq(v[2], "u");
	ck_assert_ptr_null(v[3]);
	flaky_store_names_free(v);
	flaky_store_names_free(NULL);
}
END_TEST

/* What scan_target's callback saw, as text. */
static int
scan_cb(const struct flaky_scan_row *x, void *arg)
{
	struct flaky_buf *b = arg;

	flaky_buf_printf(b, "%lld:%lld:%d:%lld", (long long)x->r.run_id,
	    (long long)x->r.position, x->r.outcome,
	    (long long)x->r.duration_us);
	if (x->wanted)
		flaky_buf_printf(b, " %s %s %s %d %d %s %s %s %s %s %s",
		    x->r.status, x->r.trigger,
		    flaky_run_kind_name(x->r.kind), x->r.exit_code,
		    x->r.fingerprint != 0, x->r.revision, x->r.seed ?
		    x->r.seed : "-", x->r.runner, x->r.signature ?
		    x->r.signature : "-", x->r.message ? x->r.message : "-",
		    x->r.normalized ? x->r.normalized : "-");
	else
		ck_assert(x->r.revision == NULL && x->r.message == NULL &&
		    x->r.status[0] == '\0');
	flaky_buf_addc(b, '\n');
	return 0;
}

static int
stop_cb(const struct flaky_scan_row *x, void *arg)
{
	(*(int *)arg)++;
	(void)x;
	return -42;
}

/* Finished, complete runs only (done, timeout), by run and position; the
 * wanted tests' rows carry the run's fields and the message. */
START_TEST(scan_target)
{
	struct flaky_query q = all;
	struct flaky_buf b;
	int64_t		 t, u, want[1];
	int		 calls = 0;

	fixture(&t, &u);
	want[0] = test_id("t", "b");
	flaky_buf_init(&b);
	ck_assert_msg(flaky_store_scan_target(st, t, &q, want, 1, scan_cb, &b,
	    err, sizeof err) == 0, "%s", err);
	ck_assert_str_eq(flaky_buf_cstr(&b),
	    "1:0:0:1000\n"
	    "1:1:1:2000 done analyze suite 1 1 abc123 7 pytest VALUE "
	    "assert 1 == 2 assert N == N\n"
	    "1:2:3:-1\n"
	    "2:0:0:1001\n"
	    "2:1:1:2001 done analyze suite 1 1 abc123 7 pytest VALUE "
	    "assert 1 == 2 assert N == N\n"
	    "2:2:3:-1\n"
	    "3:0:2:3000\n"
	    "3:1:1:-1 done analyze suite 1 1 abc123 42 pytest - "
	    "assert 1 == 3 assert N == N\n"
	    "3:2:5:1500\n"
	    "5:0:1:4000 timeout confirm alone 1 1 abc123 - pytest TIMEOUT "
	    "timed out timed out\n");
	/* a window of run ids and of time; no test wanted (an empty array:
	 * bsearch takes no NULL) */
	flaky_buf_reset(&b);
	q.first_run_id = 2;
	q.last_run_id = 3;
	ck_assert_int_eq(flaky_store_scan_target(st, t, &q, want, 0, scan_cb,
	    &b, err, sizeof err), 0);
	ck_assert_str_eq(flaky_buf_cstr(&b), "2:0:0:1001\n2:1:1:2001\n"
	    "2:2:3:-1\n3:0:2:3000\n3:1:1:-1\n3:2:5:1500\n");
	flaky_buf_reset(&b);
	q = all;
	q.since_ms = T0 + HOUR;
	q.until_ms = T0 + 2 * HOUR;
	ck_assert_int_eq(flaky_store_scan_target(st, t, &q, want, 0, scan_cb,
	    &b, err, sizeof err), 0);
	ck_assert_str_eq(flaky_buf_cstr(&b), "2:0:0:1001\n2:1:1:2001\n"
	    "2:2:3:-1\n");
	flaky_buf_free(&b);
	/* the callback's error stops the pass and is returned */
	ck_assert_int_eq(flaky_store_scan_target(st, t, &all, want, 0,
	    stop_cb, &calls, err, sizeof err), -42);
	ck_assert_int_eq(calls, 1);
}
END_TEST

/* What run_orders' callback saw: "run: test=outcome ..." per run. */
static int
order_cb(const struct flaky_run_order *o, void *arg)
{
	struct flaky_buf *b = arg;

	flaky_buf_printf(b, "%lld:", (long long)o->run_id);
	for (size_t i = 0; i < o->n; i++)
		flaky_buf_printf(b, " %lld=%d", (long long)o->test_ids[i],
		    o->outcomes[i]);
	flaky_buf_addc(b, '\n');
	return 0;
}

static int
order_stop(const struct flaky_run_order *o, void *arg)
{
	(void)o;
	(*(int *)arg)++;
	return -7;
}

/* Each finished, complete run's order, oldest first; max_runs keeps the
 * newest. */
START_TEST(run_orders)
{
	struct flaky_buf b;
	char		 want[256];
	int64_t		 t, u, a, bb, c;
	int		 calls = 0;

	fixture(&t, &u);
	a = test_id("t", "a");
	bb = test_id("t", "b");
	c = test_id("t", "c");
	flaky_buf_init(&b);
	ck_assert_int_eq(flaky_store_run_orders(st, t, &all, 0, order_cb, &b,
	    err, sizeof err), 0);
	snprintf(want, sizeof want, "1: %lld=0 %lld=1 %lld=3\n"
	    "2: %lld=0 %lld=1 %lld=3\n3: %lld=2 %lld=1 %lld=5\n5: %lld=1\n",
	    (long long)a, (long long)bb, (long long)c, (long long)a,
	    (long long)bb, (long long)c, (long long)c, (long long)bb,
	    (long long)a, (long long)bb);
	ck_assert_str_eq(flaky_buf_cstr(&b), want);
	flaky_buf_reset(&b);
	ck_assert_int_eq(flaky_store_run_orders(st, t, &all, 2, order_cb, &b,
	    err, sizeof err), 0);
	snprintf(want, sizeof want, "3: %lld=2 %lld=1 %lld=5\n5: %lld=1\n",
	    (long long)c, (long long)bb, (long long)a, (long long)bb);
	ck_assert_str_eq(flaky_buf_cstr(&b), want);
	flaky_buf_free(&b);
	ck_assert_int_eq(flaky_store_run_orders(st, t, &all, 0, order_stop,
	    &calls, err, sizeof err), -7);
	ck_assert_int_eq(calls, 1);
}
END_TEST

static int
dur_cb(int64_t test, int outcome, int64_t us, void *arg)
{
	flaky_buf_printf(arg, "%lld:%d:%lld\n", (long long)test, outcome,
	    (long long)us);
	return 0;
}

/* Passed and failed results of the wanted tests with a known duration,
 * never skips or unknown durations. */
START_TEST(durations)
{
	struct flaky_buf b;
	char		 want[256];
	int64_t		 t, u, ids[2], a, bb;

	fixture(&t, &u);
	a = test_id("t", "a");
	bb = test_id("t", "b");
	ids[0] = a < bb ? a : bb;
	ids[1] = a < bb ? bb : a;
	flaky_buf_init(&b);
	ck_assert_int_eq(flaky_store_durations(st, t, &all, 0, ids, 2, dur_cb,
	    &b, err, sizeof err), 0);
	snprintf(want, sizeof want, "%lld:0:1000\n%lld:1:2000\n%lld:0:1001\n"
	    "%lld:1:2001\n%lld:5:1500\n%lld:1:4000\n", (long long)a,
	    (long long)bb, (long long)a, (long long)bb, (long long)a,
	    (long long)bb);
	ck_assert_str_eq(flaky_buf_cstr(&b), want);
	/* the newest run only; no wanted tests, no rows */
	flaky_buf_reset(&b);
	ck_assert_int_eq(flaky_store_durations(st, t, &all, 1, ids, 2, dur_cb,
	    &b, err, sizeof err), 0);
	snprintf(want, sizeof want, "%lld:1:4000\n", (long long)bb);
	ck_assert_str_eq(flaky_buf_cstr(&b), want);
	flaky_buf_reset(&b);
	ck_assert_int_eq(flaky_store_durations(st, t, &all, 0, ids, 0, dur_cb,
	    &b, err, sizeof err), 0);
	ck_assert_uint_eq(b.len, 0);
	flaky_buf_free(&b);
}
END_TEST

/* A test's failure signatures, most first, then by name (UNKNOWN for
 * none), in the window; and whether a target's runs ran in more than one
 * order. */
START_TEST(signatures_and_order)
{
	struct flaky_sig_count *v;
	struct flaky_query q = all;
	size_t		 n;
	int64_t		 t, u, bb, ids[2];

	fixture(&t, &u);
	bb = test_id("t", "b");
	ck_assert_int_eq(flaky_store_signature_counts(st, &bb, 1, &all, &v,
	    &n, err, sizeof err), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(v[0].signature, "VALUE");
	ck_assert_int_eq(v[0].count, 2);
	ck_assert_str_eq(v[1].signature, "TIMEOUT");
	ck_assert_int_eq(v[1].count, 1);
	ck_assert_str_eq(v[2].signature, "UNKNOWN");
	ck_assert_int_eq(v[2].count, 1);
	ck_assert_int_eq(v[0].test_id, bb);
	flaky_sig_counts_free(v, n);
	q.since_ms = T0 + 2 * HOUR;
	ck_assert_int_eq(flaky_store_signature_counts(st, &bb, 1, &q, &v,
	    &n, err, sizeof err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[0].signature, "TIMEOUT");
	ck_assert_str_eq(v[1].signature, "UNKNOWN");
	flaky_sig_counts_free(v, n);
	ids[0] = bb;
	ids[1] = test_id("t", "a");
	ck_assert_int_eq(flaky_store_signature_counts(st, &ids[1], 1, &all,
	    &v, &n, err, sizeof err), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0].signature, "ASSERT");
	flaky_sig_counts_free(v, n);
	/* both at once: by test id, each most first */
	ck_assert_int_eq(flaky_store_signature_counts(st, ids, 2, &all, &v,
	    &n, err, sizeof err), 0);
	ck_assert_uint_eq(n, 4);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(v[i].test_id, ids[1] < bb ? (i == 0 ? ids[1] :
		    bb) : (i < 3 ? bb : ids[1]));
	ck_assert_str_eq(v[ids[1] < bb ? 1 : 0].signature, "VALUE");
	flaky_sig_counts_free(v, n);

	/* seeds 7, 7, 42 (and 9): two orders; the first two hours: one */
	ck_assert_int_eq(flaky_store_order_varies(st, t, &all, err,
	    sizeof err), 1);
	q = all;
	q.until_ms = T0 + 2 * HOUR;
	ck_assert_int_eq(flaky_store_order_varies(st, t, &q, err,
	    sizeof err), 0);
	ck_assert_int_eq(flaky_store_order_varies(st, u, &all, err,
	    sizeof err), 0);
}
END_TEST

/* failure_rollups give a whole-day window the signature counts and top
 * messages the failed results give (runs by id read the results): of
 * every run for signatures, of the rates' runs (no run alone, no
 * incomplete one) for the top message, NULL signature as UNKNOWN, the
 * newest message of the kind. */
static char *
sigs_of(const int64_t *ids, size_t nids, const struct flaky_query *q)
{
	struct flaky_sig_count *v;
	struct flaky_buf b;
	size_t		 n;

	ck_assert_int_eq(flaky_store_signature_counts(st, ids, nids, q, &v,
	    &n, err, sizeof err), 0);
	flaky_buf_init(&b);
	for (size_t i = 0; i < n; i++)
		flaky_buf_printf(&b, "%lld %s %lld\n", (long long)v[i].test_id,
		    v[i].signature, (long long)v[i].count);
	flaky_sig_counts_free(v, n);
	return flaky_buf_steal(&b);
}

static char *
tops_of(const struct flaky_query *q)
{
	struct flaky_test_row *v;
	struct flaky_buf b;
	size_t		 n;

	ck_assert_int_eq(flaky_store_test_stats(st, q, &v, &n, err,
	    sizeof err), 0);
	flaky_buf_init(&b);
	for (size_t i = 0; i < n; i++)
		if (v[i].failures > 0)
			flaky_buf_printf(&b, "%lld %s %lld\n",
			    (long long)v[i].test_id, v[i].top_message ?
			    v[i].top_message : "-",
			    (long long)v[i].top_message_count);
	flaky_test_rows_free(v, n);
	return flaky_buf_steal(&b);
}

START_TEST(failure_rollups_as_results)
{
	struct flaky_query q = all, day = all, raw;
	int64_t		 t, u, ids[3];
	char		*a, *b;

	fixture(&t, &u);
	ids[0] = test_id("t", "a");
	ids[1] = test_id("t", "b");
	ids[2] = test_id("t", "c");
	day.since_ms = T0 - T0 % FLAKY_DAY_MS;
	day.until_ms = day.since_ms + FLAKY_DAY_MS;
	for (int w = 0; w < 2; w++) {
		q = w ? day : all;
		raw = q;
		raw.first_run_id = 1;	/* the results */
		a = sigs_of(ids, 3, &q);
		b = sigs_of(ids, 3, &raw);
		ck_assert_str_eq(a, b);
		ck_assert_ptr_nonnull(strstr(a, " TIMEOUT 1\n"));
		ck_assert_ptr_nonnull(strstr(a, " UNKNOWN 1\n"));
		free(a);
		free(b);
		a = tops_of(&q);
		b = tops_of(&raw);
		ck_assert_str_eq(a, b);
		/* b: "assert 1 == N" three times (one kind), the newest
		 * shown; the run alone's "timed out" is not the rates' */
		ck_assert_msg(strstr(a, " assert 1 == 3 3\n") != NULL, "%s", a);
		free(a);
		free(b);
	}
	/* a window not of whole days counts to the millisecond (the
	 * results): from 13:00, b's first VALUE failure is out */
	q = day;
	q.since_ms = T0 + HOUR;
	a = sigs_of(ids, 3, &q);
	ck_assert_msg(strstr(a, " VALUE 1\n") != NULL, "%s", a);
	free(a);
	/* and the day after has none */
	q = day;
	q.since_ms += FLAKY_DAY_MS;
	q.until_ms += FLAKY_DAY_MS;
	a = sigs_of(ids, 3, &q);
	ck_assert_str_eq(a, "");
	free(a);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("store_diag");
	TCase	*tc = tcase_create("store_diag");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, tests_and_targets);
	tcase_add_test(tc, target_names);
	tcase_add_test(tc, scan_target);
	tcase_add_test(tc, run_orders);
	tcase_add_test(tc, durations);
	tcase_add_test(tc, signatures_and_order);
	tcase_add_test(tc, failure_rollups_as_results);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
