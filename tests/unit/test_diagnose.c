/* diagnose: the normalizer on real tracebacks (pytest, unittest, Jest, go
 * test fixtures) and hostile messages, user signatures before the
 * built-ins, order dependence both ways (a polluter, a set-up test) on
 * synthetic runs (in memory and stored), revisions and transitions,
 * timing and RACE from it (Mann-Whitney), finding a test by name. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classify/classify.h"
#include "diagnose/diagnose.h"
#include "parse/parse.h"
#include "store/store.h"
#include "util/util.h"

/* Parse a captured fixture into r. */
static void
parse_fixture(const char *name, struct flaky_results *r)
{
	char	 path[1024];
	FILE	*f;
	char	*buf;
	long	 n;

	snprintf(path, sizeof path, "%s/%s", FIXTURES, name);
	ck_assert_msg((f = fopen(path, "rb")) != NULL, "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	ck_assert_ptr_nonnull(buf = malloc((size_t)n + 1));
	ck_assert_int_eq(fread(buf, 1, (size_t)n, f), n);
	fclose(f);
	flaky_results_init(r);
	ck_assert_int_eq(flaky_parse_buffer(buf, (size_t)n, NULL, r), 0);
	free(buf);
}

static const struct flaky_result *
find(const struct flaky_results *r, const char *test)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].test, test) == 0)
			return &r->v[i];
	return NULL;
}

/* 1 when s[0..n) is valid UTF-8 (no overlongs, surrogates, > U+10FFFF). */
static int
valid_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; ) {
		size_t	 k;

		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if (s[i] >= 0xc2 && s[i] <= 0xdf)
			k = 2;
		else if (s[i] >= 0xe0 && s[i] <= 0xef)
			k = 3;
		else if (s[i] >= 0xf0 && s[i] <= 0xf4)
			k = 4;
		else
			return 0;
		if (i + k > n)
			return 0;
		for (size_t j = 1; j < k; j++)
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
		if ((s[i] == 0xe0 && s[i + 1] < 0xa0) ||
		    (s[i] == 0xed && s[i + 1] > 0x9f) ||
		    (s[i] == 0xf0 && s[i + 1] < 0x90) ||
		    (s[i] == 0xf4 && s[i + 1] > 0x8f))
			return 0;
		i += k;
	}
	return 1;
}

static char *
norm(const char *msg, size_t len)
{
	struct flaky_buf b;

	flaky_buf_init(&b);
	ck_assert_int_eq(flaky_normalize(msg, len, &b), 0);
	return flaky_buf_steal(&b);
}

static int
sig_of(const struct flaky_results *r, const char *test)
{
	const struct flaky_result *x = find(r, test);

	ck_assert_msg(x != NULL, "no test %s", test);
	ck_assert_ptr_nonnull(x->message);
	return flaky_classify_message(x->message, strlen(x->message));
}

/* Every failure of a real capture normalizes to text without digits or
 * addresses, within the bound, valid UTF-8, the same text twice. */
static void
check_fixture(const char *name, size_t min_failures)
{
	struct flaky_results r;
	size_t	 failures = 0;

	parse_fixture(name, &r);
	for (size_t i = 0; i < r.n; i++) {
		const char *m = r.v[i].message;
		char	*a, *b;

		if (!FLAKY_FAILED(r.v[i].outcome) || m == NULL || *m == '\0')
			continue;
		failures++;
		a = norm(m, strlen(m));
		b = norm(m, strlen(m));
		ck_assert_str_eq(a, b);
		ck_assert_uint_le(strlen(a), FLAKY_NORMALIZED_MAX);
		ck_assert_msg(strpbrk(a, "0123456789") == NULL ||
		    strstr(a, "0x?") != NULL, "%s: %s: digits left in '%s'",
		    name, r.v[i].test, a);
		ck_assert(valid_utf8((const unsigned char *)a, strlen(a)));
		ck_assert_msg(strstr(a, "/tmp/") == NULL, "%s", a);
		free(a);
		free(b);
	}
	ck_assert_msg(failures >= min_failures, "%s: %zu failures", name,
	    failures);
	flaky_results_free(&r);
}

START_TEST(normalize_fixtures)
{
	check_fixture("pytest/v.txt", 8);
	check_fixture("pytest/random_order.txt", 5);
	check_fixture("unittest/v.txt", 5);
	check_fixture("jest/verbose-multi.txt", 3);
	check_fixture("gotest/verbose.txt", 3);
	check_fixture("gotest/timeout.txt", 1);
}
END_TEST

/* What the normalizer keeps and drops on a real traceback, exactly. */
START_TEST(normalize_exact)
{
	struct flaky_results r;
	const struct flaky_result *x;
	char	*a;

	parse_fixture("pytest/v.txt", &r);
	x = find(&r, "src/test_demo.py::test_raises");
	ck_assert_ptr_nonnull(x);
	a = norm(x->message, strlen(x->message));
	ck_assert_str_eq(a,
	    "ValueError: bad value N src/test_demo.py:N: ValueError");
	free(a);
	ck_assert_int_eq(sig_of(&r, "src/test_demo.py::test_timeout"),
	    FLAKY_SIG_TIMEOUT);
	ck_assert_int_eq(sig_of(&r, "src/test_demo.py::test_raises"),
	    FLAKY_SIG_UNKNOWN);
	flaky_results_free(&r);

	parse_fixture("gotest/timeout.txt", &r);
	x = find(&r, "example.com/flakyfix/crash/TestHang");
	ck_assert_ptr_nonnull(x);
	a = norm(x->message, strlen(x->message));
	ck_assert_str_eq(a, "panic: test timed out after Ns");
	free(a);
	ck_assert_int_eq(sig_of(&r, "example.com/flakyfix/crash/TestHang"),
	    FLAKY_SIG_TIMEOUT);
	flaky_results_free(&r);

	parse_fixture("gotest/verbose.txt", &r);
	ck_assert_int_eq(sig_of(&r, "example.com/flakyfix/calc/TestParallelB"),
	    FLAKY_SIG_INFRA);
	flaky_results_free(&r);

	parse_fixture("jest/verbose-multi.txt", &r);
	ck_assert_int_eq(sig_of(&r,
	    "small/tests/fail.test.js \xe2\x80\xba payments \xe2\x80\xba "
	    "nested \xe2\x80\xba throws"), FLAKY_SIG_INFRA);
	flaky_results_free(&r);
}
END_TEST

/* The same failure with different addresses, ids, paths, times and ports
 * has one fingerprint; a different failure another. */
START_TEST(fingerprint_groups)
{
	const char *m1 = "Traceback (most recent call last):\n"
	    "  File \"/tmp/pytest-of-ci/pytest-12/test_a0/t.py\", line 12\n"
	    "ConnectionRefusedError: [Errno 111] <socket at 0x7f3a2b9c> "
	    "127.0.0.1:43127 after 1.52s id=3f2b8a1c-1d2e-4f50-9a6b-"
	    "0c1d2e3f4a5b at 2026-11-30T02:01:07";
	const char *m2 = "Traceback (most recent call last):\n"
	    "  File \"/tmp/pytest-of-ci/pytest-13/test_a1/t.py\", line 12\n"
	    "ConnectionRefusedError: [Errno 111] <socket at 0x55aa01ff> "
	    "127.0.0.1:38001 after 0.98s id=aa2b8a1c-1d2e-4f50-9a6b-"
	    "0c1d2e3f4a5c at 2026-12-01T13:59:59";
	const char *m3 = "AssertionError: assert 1 == 2";
	char	*a = norm(m1, strlen(m1)), *b = norm(m2, strlen(m2));
	char	*c = norm(m3, strlen(m3));

	ck_assert_str_eq(a, b);
	ck_assert_int_eq(flaky_fingerprint(a, strlen(a)),
	    flaky_fingerprint(b, strlen(b)));
	ck_assert_int_ne(flaky_fingerprint(a, strlen(a)),
	    flaky_fingerprint(c, strlen(c)));
	ck_assert_ptr_nonnull(strstr(a, "<tmp>"));
	ck_assert_ptr_nonnull(strstr(a, "<uuid>"));
	ck_assert_ptr_nonnull(strstr(a, "0x?"));
	free(a);
	free(b);
	free(c);
}
END_TEST

/* 10 MB of hostile bytes (NULs, invalid UTF-8, truncated sequences, long
 * words): bounded, valid output; classification does not crash and the
 * user patterns see past a NUL. */
START_TEST(normalize_hostile)
{
	size_t	 n = 10 * 1024 * 1024;
	unsigned char *m = malloc(n);
	struct flaky_classifier *c;
	uint64_t x = 88172645463325252ULL;
	char	 err[256];
	char	*a;
	int	 code;

	ck_assert_ptr_nonnull(m);
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		m[i] = (unsigned char)x;
	}
	a = norm((const char *)m, n);
	ck_assert_uint_le(strlen(a), FLAKY_NORMALIZED_MAX);
	ck_assert_uint_gt(strlen(a), 100);
	ck_assert(valid_utf8((const unsigned char *)a, strlen(a)));
	free(a);
	/* one long word of letters, then a split 3-byte character */
	memset(m, 'x', n);
	m[n - 2] = 0xe2;
	m[n - 1] = 0x80;
	a = norm((const char *)m, n);
	ck_assert_uint_eq(strlen(a), FLAKY_NORMALIZED_MAX);
	free(a);
	memcpy(m + 1000, "\xe2\x82", 2);	/* cut inside the bound */
	a = norm((const char *)m + 999, 3);
	ck_assert_str_eq(a, "x??");
	free(a);
	/* all NULs: nothing */
	memset(m, 0, n);
	a = norm((const char *)m, n);
	ck_assert_str_eq(a, "");
	free(a);
	ck_assert_int_eq(flaky_classify_message((const char *)m, n),
	    FLAKY_SIG_UNKNOWN);
	/* a user pattern after a NUL, inside the looked-at prefix */
	memcpy(m + 100, "deadlock detected", 17);
	ck_assert_int_eq(flaky_classifier_new(&c), 0);
	code = flaky_classifier_add(c, "DB_DEADLOCK", "deadlock detected$",
	    err, sizeof err);
	ck_assert_int_gt(code, FLAKY_SIG_MAX);
	/* "$" does not match before the NULs: the built-in "deadlock" */
	ck_assert_int_eq(flaky_classifier_classify(c, (const char *)m, n),
	    FLAKY_SIG_RACE);
	memset(m + 117, '\n', 1);
	ck_assert_int_eq(flaky_classifier_classify(c, (const char *)m, n),
	    code);
	flaky_classifier_free(c);
	free(m);
}
END_TEST

/* User signatures win over the built-ins; a built-in name maps to its
 * code; names come back while the classifier is the default. */
START_TEST(user_signatures)
{
	struct flaky_classifier *c;
	struct flaky_results r;
	char	 err[256];
	const char *msg = "psycopg2.errors: deadlock detected";
	int	 db, to, sigs[3];

	ck_assert_int_eq(flaky_classify_message(msg, strlen(msg)),
	    FLAKY_SIG_RACE);
	ck_assert_int_eq(flaky_classifier_new(&c), 0);
	db = flaky_classifier_add(c, "DB_DEADLOCK", "deadlock detected",
	    err, sizeof err);
	ck_assert_int_eq(db, FLAKY_SIG_MAX + 1);
	ck_assert_int_eq(flaky_classifier_add(c, "DB_DEADLOCK",
	    "^ERROR: could not serialize", err, sizeof err), db);
	to = flaky_classifier_add(c, "TIMEOUT", "took longer than [0-9]+ s",
	    err, sizeof err);
	ck_assert_int_eq(to, FLAKY_SIG_TIMEOUT);
	ck_assert_int_eq(flaky_classifier_add(c, "BAD", "a(b", err,
	    sizeof err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "a(b"));
	ck_assert_int_eq(flaky_classifier_add(c, "no spaces", "x", err,
	    sizeof err), -EINVAL);
	ck_assert_int_eq(flaky_classifier_classify(c, msg, strlen(msg)), db);
	ck_assert_int_eq(flaky_classifier_classify(c,
	    "x\nERROR: could not serialize access", 35), db);
	ck_assert_int_eq(flaky_classifier_classify(c, "it took longer "
	    "than 30 s", 24), FLAKY_SIG_TIMEOUT);
	ck_assert_int_eq(flaky_classifier_classify(c, "ECONNRESET", 10),
	    FLAKY_SIG_INFRA);
	/* the earlier pattern in the table wins wherever it stands: the
	 * socket's ETIMEDOUT is the network's, not a test timeout */
	ck_assert_int_eq(flaky_classify_message("Timeout: read ETIMEDOUT",
	    23), FLAKY_SIG_INFRA);
	ck_assert_int_eq(flaky_classify_message("Timeout", 7),
	    FLAKY_SIG_TIMEOUT);
	ck_assert_int_eq(flaky_classify_message("Timeou", 6),
	    FLAKY_SIG_UNKNOWN);
	ck_assert_int_eq(flaky_classify_message("x\0None is not None", 18),
	    FLAKY_SIG_RACE);
	ck_assert_str_eq(flaky_classifier_name(c, db), "DB_DEADLOCK");
	ck_assert_str_eq(flaky_classifier_name(c, 99), "UNKNOWN");

	/* the lifecycle's path: the classifier handed in, no global */
	memset(&r, 0, sizeof r);
	r.n = 3;
	ck_assert_ptr_nonnull(r.v = calloc(3, sizeof *r.v));
	r.v[0].outcome = FLAKY_FAIL;
	r.v[0].message = (char *)msg;
	r.v[1].outcome = FLAKY_PASS;
	r.v[2].outcome = FLAKY_FAIL;
	r.v[2].message = (char *)"assert 1 == 2";
	ck_assert_int_eq(flaky_classify_run(NULL, &r, NULL, sigs), 0);
	ck_assert_int_eq(sigs[0], FLAKY_SIG_RACE);
	ck_assert_int_eq(flaky_classify_run(c, &r, NULL, sigs), 0);
	ck_assert_int_eq(sigs[0], db);
	ck_assert_int_eq(sigs[1], FLAKY_SIG_NONE);
	ck_assert_int_eq(sigs[2], FLAKY_SIG_UNKNOWN);
	/* written into the results as names, user ones included */
	ck_assert_int_eq(flaky_classify_results(c, &r, NULL), 0);
	ck_assert_str_eq(r.v[0].signature, "DB_DEADLOCK");
	ck_assert_ptr_null(r.v[1].signature);
	ck_assert_str_eq(r.v[2].signature, "UNKNOWN");
	ck_assert_int_eq(flaky_classify_results(NULL, &r, NULL), 0);
	ck_assert_str_eq(r.v[0].signature, "RACE");
	for (int i = 0; i < 3; i++)
		free(r.v[i].signature);
	flaky_classifier_free(c);
	/* a user code has no name without its classifier */
	ck_assert_str_eq(flaky_signature_name(db), "UNKNOWN");
	free(r.v);
}
END_TEST

/* Deterministic shuffles: xorshift. */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A run of tests 1..n in a shuffled order: test 2 fails when test 7 ran
 * before it; test 3 fails unless test 8 ran before it (it needs 8's
 * set-up); test 4 fails every third run whatever the order; test 5 fails
 * always. */
static void
synthetic_run(uint64_t *seed, int run, int64_t *ids, int *out, size_t n)
{
	size_t	 pos7 = 0, pos2 = 0, pos8 = 0, pos3 = 0;

	for (size_t i = 0; i < n; i++)
		ids[i] = (int64_t)i + 1;
	for (size_t i = n - 1; i > 0; i--) {
		size_t	 j = rnd(seed) % (i + 1);
		int64_t	 t = ids[i];

		ids[i] = ids[j];
		ids[j] = t;
	}
	for (size_t i = 0; i < n; i++) {
		if (ids[i] == 7)
			pos7 = i;
		if (ids[i] == 2)
			pos2 = i;
		if (ids[i] == 8)
			pos8 = i;
		if (ids[i] == 3)
			pos3 = i;
	}
	for (size_t i = 0; i < n; i++) {
		out[i] = FLAKY_PASS;
		if (ids[i] == 2 && pos7 < pos2)
			out[i] = FLAKY_FAIL;
		if (ids[i] == 3 && pos8 > pos3)
			out[i] = FLAKY_FAIL;
		if (ids[i] == 4 && run % 3 == 0)
			out[i] = FLAKY_FAIL;
		if (ids[i] == 5)
			out[i] = FLAKY_ERROR;
	}
}

START_TEST(order_memory)
{
	struct flaky_order_acc *a;
	struct flaky_order_evidence e;
	struct flaky_run_order o;
	int64_t	 victims[] = { 2, 4, 5, 9, 3 }, ids[12];
	int	 out[12];
	uint64_t seed = 12345;
	int64_t	 k7 = 0, n7 = 0, k8 = 0;

	ck_assert_int_eq(flaky_order_new(victims, 5, &a), 0);
	for (int run = 0; run < 40; run++) {
		synthetic_run(&seed, run, ids, out, 12);
		o.run_id = run + 1;
		o.n = 12;
		o.test_ids = ids;
		o.outcomes = out;
		for (size_t i = 0; i < 12; i++) {
			if (ids[i] == 2) {
				n7 += 1;
				k7 += out[i] == FLAKY_FAIL;
			}
			if (ids[i] == 3)
				k8 += out[i] == FLAKY_FAIL;
		}
		ck_assert_int_eq(flaky_order_add_run(a, &o), 0);
	}
	ck_assert_int_eq(n7, 40);
	/* the shuffles of seed 12345 (xorshift), fixed from here on */
	ck_assert_int_eq(k7, 18);
	ck_assert_int_eq(k8, 18);
	ck_assert_int_eq(flaky_order_result(a, 0, &e), 1);
	ck_assert_int_eq(e.polluter_id, 7);
	ck_assert_int_eq(e.provider_id, 0);
	ck_assert_int_eq(e.k_before, 18);
	ck_assert_int_eq(e.n_before, 18);
	ck_assert_int_eq(e.k_without, 0);
	ck_assert_int_eq(e.n_without, 22);
	ck_assert_uint_eq(e.candidates, 11);
	/* 18 of 18 with it before: 1 / C(40, 18) */
	ck_assert_double_eq_tol(e.p, 1.0 / 113380261800.0, 1e-22);
	ck_assert_double_lt(e.p * 2 * 11, FLAKY_ORDER_ALPHA);
	/* the other way round: 3 fails in the 18 runs where 8 did not run
	 * before it, none of the 22 where it did */
	ck_assert_int_eq(flaky_order_result(a, 4, &e), 1);
	ck_assert_int_eq(e.provider_id, 8);
	ck_assert_int_eq(e.polluter_id, 0);
	ck_assert_int_eq(e.k_without, 18);
	ck_assert_int_eq(e.n_without, 18);
	ck_assert_int_eq(e.k_before, 0);
	ck_assert_int_eq(e.n_before, 22);
	ck_assert_uint_eq(e.candidates, 11);
	ck_assert_double_eq_tol(e.p, 1.0 / 113380261800.0, 1e-22);
	/* failing on a schedule, always, never: nothing named either way */
	ck_assert_int_eq(flaky_order_result(a, 1, &e), 0);
	ck_assert_int_eq(e.polluter_id, 0);
	ck_assert_int_eq(e.provider_id, 0);
	ck_assert_uint_eq(e.candidates, 11);
	ck_assert_double_gt(e.p * 2 * 11, FLAKY_ORDER_ALPHA);
	ck_assert_int_eq(flaky_order_result(a, 2, &e), 0);
	ck_assert_int_eq(e.provider_id, 0);
	ck_assert_int_eq(flaky_order_result(a, 3, &e), 0);
	ck_assert_int_eq(e.provider_id, 0);
	ck_assert_int_eq(flaky_order_result(a, 5, &e), 0);
	flaky_order_free(a);
	flaky_order_free(NULL);
}
END_TEST

/* Two tests, 1 before 2 in the first `before` runs and after it in the
 * rest, where 2 fails: both directions count in the Bonferroni. */
static struct flaky_order_acc *
two_tests(int runs, int before)
{
	struct flaky_order_acc *a;
	struct flaky_run_order o;
	int64_t	 victim = 2, ids[2];
	int	 out[2];

	ck_assert_int_eq(flaky_order_new(&victim, 1, &a), 0);
	o.n = 2;
	o.test_ids = ids;
	o.outcomes = out;
	for (int run = 0; run < runs; run++) {
		int	 first = run < before;

		o.run_id = run + 1;
		ids[0] = first ? 1 : 2;
		ids[1] = first ? 2 : 1;
		out[0] = out[1] = FLAKY_PASS;
		if (!first)
			out[0] = FLAKY_FAIL;	/* 2 ran without 1 before */
		ck_assert_int_eq(flaky_order_add_run(a, &o), 0);
	}
	return a;
}

START_TEST(order_both_ways)
{
	struct flaky_order_acc *a;
	struct flaky_order_evidence e;

	/* 6 of 6 without 1 before, 0 of 11 with: p = 1 / C(17, 6) =
	 * 8.1e-5, under 1e-4 alone but not twice (both directions) */
	a = two_tests(17, 11);
	ck_assert_int_eq(flaky_order_result(a, 0, &e), 0);
	ck_assert_int_eq(e.provider_id, 0);
	ck_assert_uint_eq(e.candidates, 1);
	ck_assert_double_eq_tol(e.p, 1.0 / 12376.0, 1e-15);
	ck_assert_int_eq(e.k_without, 6);
	ck_assert_int_eq(e.n_without, 6);
	ck_assert_int_eq(e.k_before, 0);
	ck_assert_int_eq(e.n_before, 11);
	flaky_order_free(a);
	/* 6 of 6 against 0 of 13: 1 / C(19, 6) = 3.7e-5, twice 7.4e-5 */
	a = two_tests(19, 13);
	ck_assert_int_eq(flaky_order_result(a, 0, &e), 1);
	ck_assert_int_eq(e.provider_id, 1);
	ck_assert_int_eq(e.polluter_id, 0);
	ck_assert_double_eq_tol(e.p, 1.0 / 27132.0, 1e-15);
	flaky_order_free(a);
	/* 2 failures only, however clean: under FLAKY_ORDER_MIN_FAILS */
	a = two_tests(30, 28);
	ck_assert_int_eq(flaky_order_result(a, 0, &e), 0);
	ck_assert_int_eq(e.provider_id, 0);
	ck_assert_double_eq(e.p, 1.0);
	flaky_order_free(a);
}
END_TEST

/* n rows, the first `fails` failed with a signature, durations by the
 * callers' rule. */
static struct flaky_result_row *
timed_rows(int n, int fails, const char *sig, int64_t (*dur)(int, int))
{
	struct flaky_result_row *v = calloc((size_t)n, sizeof *v);

	ck_assert_ptr_nonnull(v);
	for (int i = 0; i < n; i++) {
		v[i].run_id = i + 1;
		v[i].started_ms = 1000 + i;
		v[i].outcome = i < fails ? FLAKY_FAIL : FLAKY_PASS;
		v[i].duration_us = dur(i, i < fails);
		v[i].signature = i < fails ? strdup(sig) : NULL;
		v[i].fingerprint = i < fails ? 7 : 0;
		snprintf(v[i].trigger, sizeof v[i].trigger, "analyze");
	}
	return v;
}

/* Failures at once (2 ms and up), passes after ~100 ms. */
static int64_t
dur_apart(int i, int failed)
{
	return failed ? 2000 + i * 100 : 100000 + i * 1000;
}

/* Failures cluster at 5 s (a limit), passes at 0.3 s. */
static int64_t
dur_limit(int i, int failed)
{
	return failed ? 5000000 + i * 1000 : 300000 + i;
}

/* Failures and passes interleaved. */
static int64_t
dur_mixed(int i, int failed)
{
	return failed ? 1000 + i * 2000 : 2000 + (i - 8) * 1000;
}

/* Diagnose rows and free them; d is left for the caller's asserts. */
static void
diagnose(struct flaky_diagnosis *d, struct flaky_result_row *v, int n)
{
	memset(d, 0, sizeof *d);
	ck_assert_int_eq(flaky_diagnose_rows(d, v, (size_t)n), 0);
	flaky_result_rows_free(v, (size_t)n);
}

/* Free what flaky_diagnose_rows put in a diagnosis on the stack. */
static void
undiagnose(struct flaky_diagnosis *d)
{
	struct flaky_diagnosis *p = calloc(1, sizeof *p);

	*p = *d;
	flaky_diagnosis_free(p);
}

START_TEST(race_from_timing)
{
	struct flaky_diagnosis d;

	/* 6 fast failures against 14 slow passes: U = 0, p = 6.2e-4 */
	diagnose(&d, timed_rows(20, 6, "UNKNOWN", dur_apart), 20);
	ck_assert_double_eq_tol(d.timing.mw_p, 0.000619654567738768, 1e-15);
	ck_assert(d.timing.varies);
	ck_assert(d.race_timing);
	ck_assert_str_eq(d.signature, "RACE");
	/* what was stored stays */
	ck_assert_str_eq(d.sigs[0].name, "UNKNOWN");
	ck_assert_int_eq(d.sigs[0].count, 6);
	ck_assert_str_eq(d.modes[0].signature, "UNKNOWN");
	undiagnose(&d);
	/* a message that said TIMEOUT keeps saying it */
	diagnose(&d, timed_rows(20, 6, "TIMEOUT", dur_apart), 20);
	ck_assert(d.timing.varies);
	ck_assert(!d.race_timing);
	ck_assert_str_eq(d.signature, "TIMEOUT");
	undiagnose(&d);
	/* 5 against 5, apart: p = 0.012, no decision */
	diagnose(&d, timed_rows(10, 5, "UNKNOWN", dur_apart), 10);
	ck_assert_double_eq_tol(d.timing.mw_p, 0.012185780355344813, 1e-12);
	ck_assert(!d.timing.varies);
	ck_assert_str_eq(d.signature, "UNKNOWN");
	undiagnose(&d);
	/* 4 failures: too few for any p */
	diagnose(&d, timed_rows(40, 4, "UNKNOWN", dur_apart), 40);
	ck_assert(isnan(d.timing.mw_p));
	ck_assert(!d.timing.varies);
	ck_assert_str_eq(d.signature, "UNKNOWN");
	undiagnose(&d);
	/* failures at one long time: near a limit, a timeout and not a race,
	 * however clear the difference */
	diagnose(&d, timed_rows(30, 10, "UNKNOWN", dur_limit), 30);
	ck_assert(d.timing.near_limit);
	ck_assert_double_lt(d.timing.mw_p, 1e-4);
	ck_assert(!d.timing.varies);
	ck_assert_str_eq(d.signature, "UNKNOWN");
	undiagnose(&d);
	/* durations that do not go with the outcome: p = 0.4999 */
	diagnose(&d, timed_rows(24, 8, "UNKNOWN", dur_mixed), 24);
	ck_assert_double_eq_tol(d.timing.mw_p, 0.4999063666797635, 1e-12);
	ck_assert(!d.timing.varies);
	ck_assert_str_eq(d.signature, "UNKNOWN");
	undiagnose(&d);
	/* failing every time (broken): no passes to compare */
	diagnose(&d, timed_rows(20, 20, "UNKNOWN", dur_apart), 20);
	ck_assert(isnan(d.timing.mw_p));
	ck_assert_str_eq(d.signature, "UNKNOWN");
	undiagnose(&d);
}
END_TEST

static struct flaky_store *
open_store(char *dir, size_t len)
{
	struct flaky_store *s;
	char	 path[1100], err[512];

	snprintf(dir, len, "/tmp/flaky-diag-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/flaky.db", dir);
	ck_assert_msg(flaky_store_open(path, 0, &s, err, sizeof err) == 0,
	    "%s", err);
	return s;
}

static void
close_store(struct flaky_store *s, const char *dir)
{
	char	 path[1100];

	flaky_store_close(s);
	snprintf(path, sizeof path, "%s/flaky.db", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/flaky.db-wal", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/flaky.db-shm", dir);
	unlink(path);
	rmdir(dir);
}

static void
store_one(struct flaky_store *s, int64_t tid, int64_t started,
    const char *rev, const struct flaky_results *res)
{
	struct flaky_run_record rec = { 0 };
	char	 err[512];

	rec.target_id = tid;
	rec.trigger = "analyze";
	rec.started_ms = started;
	rec.loadavg = -1;
	rec.revision = rev;
	rec.status = FLAKY_RUN_DONE;
	rec.ended_ms = started + 1000;
	rec.duration_us = 1000000;
	rec.exit_code = 1;
	ck_assert_msg(flaky_store_run_finish(s, &rec, res, err, sizeof err) ==
	    0, "%s", err);
}

static const char *const names[] = {
	NULL, "t.py::test_a", "t.py::test_victim", "t.py::test_c",
	"t.py::test_sched", "t.py::test_broken", "t.py::test_f",
	"t.py::test_polluter", "t.py::test_h", "t.py::test_i",
	"t.py::test_j", "t.py::test_k", "t.py::test_l",
};

/* Synthetic runs stored for real, then diagnosed from the database. */
START_TEST(order_stored)
{
	struct flaky_store *s;
	struct flaky_results res;
	struct flaky_diagnosis *d = NULL;
	struct flaky_test_sig *sigs = NULL;
	struct flaky_test_ref *refs = NULL;
	struct flaky_query q = { INT64_MIN, INT64_MAX, NULL, 0, 0 };
	const struct flaky_test_sig *ts;
	char	 dir[64], err[512], msg[64];
	int64_t	 tid, ids[12], victim = 0, broken = 0, needy, sched;
	int	 out[12];
	uint64_t seed = 999;
	size_t	 nsigs = 0, nrefs = 0, m[5], nm;

	s = open_store(dir, sizeof dir);
	ck_assert_int_eq(flaky_store_target(s, "demo", "pytest -p random_order",
	    "/src", &tid, err, sizeof err), 0);
	for (int run = 0; run < 40; run++) {
		synthetic_run(&seed, run, ids, out, 12);
		flaky_results_init(&res);
		snprintf(res.runner, sizeof res.runner, "pytest");
		snprintf(msg, sizeof msg, "%d", 1000 + run);
		res.seed = strdup(msg);
		res.n = res.cap = 12;
		ck_assert_ptr_nonnull(res.v = calloc(12, sizeof *res.v));
		for (size_t i = 0; i < 12; i++) {
			res.v[i].test = strdup(names[ids[i]]);
			res.v[i].outcome = out[i];
			res.v[i].position = (unsigned)i;
			res.v[i].duration_us = FLAKY_FAILED(out[i]) ? 2000 :
			    100000;
			if (FLAKY_FAILED(out[i])) {
				snprintf(msg, sizeof msg, "assert %d == 0",
				    run);
				res.v[i].message = strdup(msg);
			}
		}
		store_one(s, tid, 1700000000000LL + run * 60000LL, "abc123",
		    &res);
		flaky_results_free(&res);
	}
	ck_assert_int_eq(flaky_store_tests(s, NULL, &refs, &nrefs, err,
	    sizeof err), 0);
	ck_assert_uint_eq(nrefs, 12);
	ck_assert_int_eq(flaky_find_test(refs, nrefs, "victim", m, 5, &nm),
	    FLAKY_FIND_ONE);
	victim = refs[m[0]].id;
	ck_assert_int_eq(flaky_find_test(refs, nrefs, "test_broken", m, 5,
	    &nm), FLAKY_FIND_ONE);
	broken = refs[m[0]].id;

	ck_assert_msg(flaky_diagnose_test(s, victim, &q, &d, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_str_eq(d->test, "t.py::test_victim");
	ck_assert_str_eq(d->target, "demo");
	ck_assert_int_eq(d->runs, 40);
	ck_assert_ptr_nonnull(d->polluter);
	ck_assert_str_eq(d->polluter, "t.py::test_polluter");
	ck_assert_str_eq(d->signature, "ORDER_DEPENDENT");
	ck_assert_int_eq(d->order.k_without, 0);
	ck_assert_int_eq(d->order.k_before, d->failures);
	ck_assert_int_eq(d->verdict, FLAKY_VERDICT_FLAKY);
	ck_assert_uint_eq(d->nmodes, 1);	/* "assert N == N" */
	ck_assert_str_eq(d->modes[0].normalized, "assert N == N");
	ck_assert_int_eq(d->modes[0].count, d->failures);
	ck_assert_uint_eq(d->nfailed, (size_t)d->failures);
	ck_assert_str_eq(d->command, "pytest -p random_order");
	ck_assert_ptr_nonnull(d->seed);
	ck_assert(d->timing.early);	/* 2 ms against 100 ms */
	ck_assert_double_eq_tol(d->timing.median_fail, 2.0, 1e-9);
	ck_assert_double_eq_tol(d->timing.median_pass, 100.0, 1e-9);
	flaky_diagnosis_free(d);

	ck_assert_int_eq(flaky_diagnose_test(s, broken, &q, &d, err,
	    sizeof err), 0);
	ck_assert_int_eq(d->verdict, FLAKY_VERDICT_BROKEN);
	ck_assert_ptr_null(d->polluter);
	ck_assert_str_eq(d->signature, "UNKNOWN");
	flaky_diagnosis_free(d);

	/* test_c needs test_h to run first; test_sched fails on a schedule,
	 * at once (2 ms) where passes take 100 ms, with UNKNOWN messages:
	 * RACE from timing */
	ck_assert_int_eq(flaky_find_test(refs, nrefs, "test_c", m, 5, &nm),
	    FLAKY_FIND_ONE);
	needy = refs[m[0]].id;
	ck_assert_int_eq(flaky_find_test(refs, nrefs, "test_sched", m, 5,
	    &nm), FLAKY_FIND_ONE);
	sched = refs[m[0]].id;
	ck_assert_int_eq(flaky_diagnose_test(s, needy, &q, &d, err,
	    sizeof err), 0);
	ck_assert_str_eq(d->signature, "ORDER_DEPENDENT");
	ck_assert_ptr_null(d->polluter);
	ck_assert_str_eq(d->depends_on, "t.py::test_h");
	ck_assert_int_eq(d->order.k_without, d->failures);
	ck_assert_int_eq(d->order.n_without, d->failures);
	ck_assert_int_eq(d->order.k_before, 0);
	ck_assert(!d->race_timing);	/* the order wins over timing */
	flaky_diagnosis_free(d);
	ck_assert_int_eq(flaky_diagnose_test(s, sched, &q, &d, err,
	    sizeof err), 0);
	ck_assert_str_eq(d->signature, "RACE");
	ck_assert(d->race_timing);
	ck_assert_ptr_null(d->polluter);
	ck_assert_ptr_null(d->depends_on);
	ck_assert_int_eq(d->timing.n_fail, 14);	/* runs 0, 3, ..., 39 */
	ck_assert_int_eq(d->timing.n_pass, 26);
	ck_assert_double_eq_tol(d->timing.mw_p, 4.729053956741775e-10,
	    1e-20);
	flaky_diagnosis_free(d);
	{
		int64_t	 want[4], vic[3];

		want[0] = broken;
		want[1] = vic[0] = victim;
		want[2] = vic[1] = sched;
		want[3] = vic[2] = needy;
		ck_assert_int_eq(flaky_test_signatures(s, &q, want, 4, vic, 3,
		    &sigs, &nsigs, err, sizeof err), 0);
	}
	ck_assert_uint_eq(nsigs, 4);	/* victim, sched, broken, test_c */
	ts = flaky_test_sig_find(sigs, nsigs, victim);
	ck_assert_ptr_nonnull(ts);
	ck_assert_str_eq(ts->signature, "ORDER_DEPENDENT");
	ck_assert_str_eq(ts->polluter, "t.py::test_polluter");
	ck_assert_ptr_null(ts->depends_on);
	ck_assert(!ts->race_timing);
	ck_assert_str_eq(ts->sigs[0].name, "UNKNOWN");
	ts = flaky_test_sig_find(sigs, nsigs, needy);
	ck_assert_ptr_nonnull(ts);
	ck_assert_str_eq(ts->signature, "ORDER_DEPENDENT");
	ck_assert_ptr_null(ts->polluter);
	ck_assert_str_eq(ts->depends_on, "t.py::test_h");
	ts = flaky_test_sig_find(sigs, nsigs, sched);
	ck_assert_ptr_nonnull(ts);
	ck_assert_str_eq(ts->signature, "RACE");
	ck_assert(ts->race_timing);
	ck_assert_int_eq(ts->timing.n_fail, 14);
	ck_assert_int_eq(ts->timing.n_pass, 26);
	ck_assert_double_eq_tol(ts->timing.mw_p, 4.729053956741775e-10,
	    1e-20);
	ck_assert_str_eq(ts->sigs[0].name, "UNKNOWN");
	ts = flaky_test_sig_find(sigs, nsigs, broken);
	ck_assert_ptr_nonnull(ts);
	ck_assert_ptr_null(ts->polluter);
	ck_assert_ptr_null(ts->depends_on);
	ck_assert_str_eq(ts->signature, "UNKNOWN");	/* no passes */
	ck_assert(!ts->race_timing);
	ck_assert_int_eq(ts->timing.n_fail, 40);
	ck_assert_int_eq(ts->sigs[0].count, 40);
	flaky_test_sigs_free(sigs, nsigs);
	flaky_test_refs_free(refs, nrefs);
	close_store(s, dir);
}
END_TEST

/* Rows at revisions, oldest first. */
static void
rows_at(struct flaky_result_row *v, size_t *n, const char *rev, int runs,
    int fails, int64_t *t)
{
	for (int i = 0; i < runs; i++) {
		struct flaky_result_row *x = &v[(*n)++];

		memset(x, 0, sizeof *x);
		x->run_id = (int64_t)*n;
		x->started_ms = (*t)++;
		x->revision = rev ? strdup(rev) : NULL;
		x->outcome = i < fails ? FLAKY_FAIL : FLAKY_PASS;
		x->duration_us = i < fails ? 5000000 + i * 1000 : 300000;
		x->signature = i < fails ? strdup("TIMEOUT") : NULL;
		x->fingerprint = i < fails ? 42 : 0;
	}
}

START_TEST(revisions)
{
	struct flaky_result_row *v = calloc(200, sizeof *v);
	struct flaky_diagnosis d;
	size_t	 n = 0;
	int64_t	 t = 1000;

	/* flaky at old1, fixed at abc123: 0/60, at most 6% */
	rows_at(v, &n, "old1", 20, 5, &t);
	rows_at(v, &n, "abc123", 60, 0, &t);
	memset(&d, 0, sizeof d);
	ck_assert_int_eq(flaky_diagnose_rows(&d, v, n), 0);
	ck_assert_uint_eq(d.nrevs, 2);
	ck_assert_str_eq(d.revs[0].revision, "old1");
	ck_assert_int_eq(d.revs[0].state, FLAKY_REV_FLAKY);
	ck_assert_int_eq(d.revs[1].state, FLAKY_REV_STABLE);
	ck_assert_int_eq(d.revs[1].transition, FLAKY_TRANS_FIXED);
	ck_assert_int_eq(d.revs[1].runs, 60);
	ck_assert_int_eq(d.revs[1].failures, 0);
	/* z^2 / (n + z^2) for 0 of 60 */
	ck_assert_double_eq_tol(d.revs[1].ci_high, 3.841458820694124 /
	    (60 + 3.841458820694124), 1e-9);
	ck_assert_int_eq((int)lround(100 * d.revs[1].ci_high), 6);
	ck_assert_int_eq(d.verdict, FLAKY_VERDICT_FIXED);
	ck_assert_int_eq(d.runs, 80);
	ck_assert_int_eq(d.failures, 5);
	ck_assert_str_eq(d.signature, "TIMEOUT");
	/* failures at ~5 s, passes at 0.3 s: near a limit, not early */
	ck_assert(d.timing.near_limit);
	ck_assert(!d.timing.early);
	ck_assert_double_eq_tol(d.timing.median_fail, 5002.0, 1e-9);
	ck_assert_double_eq_tol(d.timing.p90_pass, 300.0, 1e-9);
	ck_assert_str_eq(flaky_transition_name(d.revs[1].transition), "fixed");
	d.test = d.target = NULL;
	{
		struct flaky_diagnosis *p = calloc(1, sizeof *p);

		*p = d;
		flaky_diagnosis_free(p);
	}

	/* stable at r1, broken at r2: regressed, broken; no revision is a
	 * group of its own */
	flaky_result_rows_free(v, n);
	v = calloc(200, sizeof *v);
	n = 0;
	rows_at(v, &n, NULL, 3, 1, &t);
	rows_at(v, &n, "r1", 10, 0, &t);
	rows_at(v, &n, "r2", 4, 4, &t);
	memset(&d, 0, sizeof d);
	ck_assert_int_eq(flaky_diagnose_rows(&d, v, n), 0);
	ck_assert_uint_eq(d.nrevs, 3);
	ck_assert_ptr_null(d.revs[0].revision);
	ck_assert_int_eq(d.revs[1].transition, FLAKY_TRANS_FIXED);
	ck_assert_int_eq(d.revs[2].state, FLAKY_REV_BROKEN);
	ck_assert_int_eq(d.revs[2].transition, FLAKY_TRANS_REGRESSED);
	ck_assert_int_eq(d.verdict, FLAKY_VERDICT_BROKEN);
	{
		struct flaky_diagnosis *p = calloc(1, sizeof *p);

		*p = d;
		flaky_diagnosis_free(p);
	}
	flaky_result_rows_free(v, n);
}
END_TEST

/* Runs alone (flakyctl confirm) that pass while the suite's fail: order
 * dependence confirmed once chance is unlikely (< 1%). */
START_TEST(passes_alone)
{
	struct flaky_result_row *v = calloc(100, sizeof *v);
	struct flaky_diagnosis d;
	size_t	 n = 0;
	int64_t	 t = 1;

	rows_at(v, &n, "r1", 20, 10, &t);
	for (size_t i = 0; i < n; i++)
		snprintf(v[i].trigger, sizeof v[i].trigger, "analyze");
	/* 6 passes alone: C(20,10) / C(26,10) = 0.037, not yet */
	rows_at(v, &n, "r1", 6, 0, &t);
	for (size_t i = 20; i < n; i++) {
		snprintf(v[i].trigger, sizeof v[i].trigger, "confirm");
		v[i].kind = FLAKY_KIND_ALONE;
	}
	memset(&d, 0, sizeof d);
	ck_assert_int_eq(flaky_diagnose_rows(&d, v, n), 0);
	ck_assert_int_eq(d.alone_runs, 6);
	ck_assert_int_eq(d.suite_failures, 10);
	ck_assert_double_eq_tol(d.alone_p, 184756.0 / 5311735.0, 1e-12);
	ck_assert(!d.passes_alone);
	ck_assert_str_eq(d.signature, "TIMEOUT");
	{
		struct flaky_diagnosis *p = calloc(1, sizeof *p);

		*p = d;
		flaky_diagnosis_free(p);
	}
	/* 4 more: C(20,10) / C(30,10) = 0.0061 */
	rows_at(v, &n, "r1", 4, 0, &t);
	for (size_t i = 26; i < n; i++) {
		snprintf(v[i].trigger, sizeof v[i].trigger, "confirm");
		v[i].kind = FLAKY_KIND_ALONE;
	}
	memset(&d, 0, sizeof d);
	ck_assert_int_eq(flaky_diagnose_rows(&d, v, n), 0);
	ck_assert_double_eq_tol(d.alone_p, 184756.0 / 30045015.0, 1e-12);
	ck_assert(d.passes_alone);
	ck_assert_str_eq(d.signature, "ORDER_DEPENDENT");
	{
		struct flaky_diagnosis *p = calloc(1, sizeof *p);

		*p = d;
		flaky_diagnosis_free(p);
	}
	/* one failure alone: not order dependent */
	rows_at(v, &n, "r1", 1, 1, &t);
	snprintf(v[n - 1].trigger, sizeof v[n - 1].trigger, "confirm");
	v[n - 1].kind = FLAKY_KIND_ALONE;
	memset(&d, 0, sizeof d);
	ck_assert_int_eq(flaky_diagnose_rows(&d, v, n), 0);
	ck_assert(!d.passes_alone);
	ck_assert_int_eq(d.alone_failures, 1);
	{
		struct flaky_diagnosis *p = calloc(1, sizeof *p);

		*p = d;
		flaky_diagnosis_free(p);
	}
	flaky_result_rows_free(v, n);
}
END_TEST

START_TEST(find_tests)
{
	struct flaky_test_ref refs[] = {
		{ 1, 1, (char *)"a", (char *)"tests/test_login.py::test_retry" },
		{ 2, 1, (char *)"a", (char *)"tests/test_login.py::test_retry_twice" },
		{ 3, 1, (char *)"a", (char *)"tests/test_cart.py::test_total" },
		{ 4, 2, (char *)"b", (char *)"tests/test_cart.py::test_total" },
	};
	size_t	 m[4], nm;

	ck_assert_int_eq(flaky_find_test(refs, 4, "retry_twice", m, 4, &nm),
	    FLAKY_FIND_ONE);
	ck_assert_uint_eq(m[0], 1);
	/* a part of two, but the whole last part of one */
	ck_assert_int_eq(flaky_find_test(refs, 4, "test_retry", m, 4, &nm),
	    FLAKY_FIND_ONE);
	ck_assert_uint_eq(m[0], 0);
	ck_assert_int_eq(flaky_find_test(refs, 4, "login", m, 4, &nm),
	    FLAKY_FIND_AMBIGUOUS);
	ck_assert_uint_eq(nm, 2);
	/* the same id in two targets */
	ck_assert_int_eq(flaky_find_test(refs, 4,
	    "tests/test_cart.py::test_total", m, 4, &nm), FLAKY_FIND_AMBIGUOUS);
	ck_assert_uint_eq(nm, 2);
	ck_assert_int_eq(flaky_find_test(refs, 4, "test_totl", m, 2, &nm),
	    FLAKY_FIND_NONE);
	ck_assert_uint_eq(nm, 2);
	ck_assert_uint_eq(m[0], 2);
	ck_assert_uint_eq(m[1], 3);
	ck_assert_int_eq(flaky_find_test(refs, 0, "x", m, 2, &nm),
	    FLAKY_FIND_NONE);
	ck_assert_uint_eq(nm, 0);
	ck_assert_uint_eq(flaky_edit_distance("kitten", "sitting"), 3);
	ck_assert_uint_eq(flaky_edit_distance("", "abc"), 3);
}
END_TEST

static Suite *
suite(void)
{
	Suite	*s = suite_create("diagnose");
	TCase	*tc = tcase_create("diagnose");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, normalize_fixtures);
	tcase_add_test(tc, normalize_exact);
	tcase_add_test(tc, fingerprint_groups);
	tcase_add_test(tc, normalize_hostile);
	tcase_add_test(tc, user_signatures);
	tcase_add_test(tc, order_memory);
	tcase_add_test(tc, order_both_ways);
	tcase_add_test(tc, race_from_timing);
	tcase_add_test(tc, order_stored);
	tcase_add_test(tc, revisions);
	tcase_add_test(tc, passes_alone);
	tcase_add_test(tc, find_tests);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
