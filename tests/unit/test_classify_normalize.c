/* classify, the normalizer and signatures diagnosis rests on: real
 * tracebacks (pytest, unittest, Jest, go test fixtures) and hostile
 * messages, fingerprints that group one failure, user signatures before
 * the built-ins. */
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
static Suite *
suite(void)
{
	Suite	*s = suite_create("classify_normalize");
	TCase	*tc = tcase_create("classify_normalize");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, normalize_fixtures);
	tcase_add_test(tc, normalize_exact);
	tcase_add_test(tc, fingerprint_groups);
	tcase_add_test(tc, normalize_hostile);
	tcase_add_test(tc, user_signatures);
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
