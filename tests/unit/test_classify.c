/* classify: normalization of real failure messages (captured fixtures),
 * fingerprints, the built-in signatures and the run-level rules. */
#include "buildconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify/classify.h"
#include "parse/parse.h"
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

static int64_t
fp_of(const char *msg)
{
	struct flaky_buf b;
	int64_t	 fp;

	flaky_buf_init(&b);
	ck_assert_int_eq(flaky_normalize(msg, msg ? strlen(msg) : 0, &b), 0);
	fp = flaky_fingerprint(flaky_buf_cstr(&b), b.len);
	flaky_buf_free(&b);
	return fp;
}

static const struct flaky_result *
find(const struct flaky_results *r, const char *test)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].test, test) == 0)
			return &r->v[i];
	return NULL;
}

/* Two captures of the same suite (different runs, different flags): every
 * failure present in both has the same fingerprint; different failures in
 * one run have different ones. */
static void
same_failures(const char *a, const char *b, size_t want_common,
    const char *const *skip)
{
	struct flaky_results ra, rb;
	size_t		 common = 0, failed = 0;

	parse_fixture(a, &ra);
	parse_fixture(b, &rb);
	for (size_t i = 0; i < ra.n; i++) {
		const struct flaky_result *x = &ra.v[i], *y;
		int	 skipped = 0;

		if (!FLAKY_FAILED(x->outcome))
			continue;
		failed++;
		for (size_t j = i + 1; j < ra.n; j++)
			if (FLAKY_FAILED(ra.v[j].outcome) && x->message &&
			    ra.v[j].message && strcmp(x->message,
			    ra.v[j].message) != 0)
				ck_assert_msg(fp_of(x->message) !=
				    fp_of(ra.v[j].message),
				    "%s: %s and %s share a fingerprint", a,
				    x->test, ra.v[j].test);
		for (size_t k = 0; skip && skip[k]; k++)
			if (strcmp(skip[k], x->test) == 0)
				skipped = 1;
		if (skipped || (y = find(&rb, x->test)) == NULL ||
		    !FLAKY_FAILED(y->outcome))
			continue;
		common++;
		ck_assert_msg(fp_of(x->message) == fp_of(y->message),
		    "%s: fingerprints differ between %s and %s", x->test, a, b);
	}
	ck_assert_msg(common == want_common, "%s/%s: %zu in common", a, b,
	    common);
	ck_assert_uint_gt(failed, 0);
	flaky_results_free(&ra);
	flaky_results_free(&rb);
}

START_TEST(fixtures_pytest)
{
	/* -v prints a fuller diff than -rA: a different message, on purpose */
	static const char *const skip[] = {
		"src/test_demo.py::TestThing::test_method_fail", NULL
	};

	same_failures("pytest/v.txt", "pytest/rA.txt", 8, skip);
}
END_TEST

START_TEST(fixtures_unittest)
{
	same_failures("unittest/v.txt", "unittest/quiet.txt", 7, NULL);
}
END_TEST

START_TEST(fixtures_jest)
{
	same_failures("jest/default-multi.txt", "jest/verbose-multi.txt", 2,
	    NULL);
}
END_TEST

START_TEST(fixtures_go)
{
	same_failures("gotest/verbose.txt", "gotest/plain.txt", 4, NULL);
}
END_TEST

START_TEST(normalize_varying)
{
	static const struct { const char *a, *b, *norm; } v[] = {
		{ "<Conn object at 0x7f3a2b1c9d00> to 127.0.0.1:54321",
		  "<Conn object at 0x55d0e1f2a3b0> to 10.0.0.7:40001",
		  "<Conn object at 0x?> to N" },
		{ "/tmp/pytest-of-root/pytest-12/test_x0/data.txt: missing",
		  "/tmp/pytest-of-ci/pytest-3/test_x1/data.txt: missing",
		  "<tmp>: missing" },
		{ "request 3f2a9c1e-4b5d-4e6f-8a9b-0c1d2e3f4a5b failed",
		  "request 00000000-aaaa-bbbb-cccc-ffffffffffff failed",
		  "request <uuid> failed" },
		{ "at 2026-11-30T02:06:03.123Z took 1.234s",
		  "at 2027-01-01T23:59:59.999Z took 12.5s",
		  "at NTNZ took Ns" },
		{ "[2026-11-30 02:06:03,123] slow: 250ms",
		  "[2026-12-01 14:00:00,001] slow: 3ms",
		  "[N N,N] slow: Nms" },
		{ "listen on localhost:8080\n\n   failed",
		  "listen on localhost:39999 failed",
		  "listen on localhost:N failed" },
	};
	struct flaky_buf a, b;

	flaky_buf_init(&a);
	flaky_buf_init(&b);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(v); i++) {
		flaky_buf_reset(&a);
		flaky_buf_reset(&b);
		ck_assert_int_eq(flaky_normalize(v[i].a, strlen(v[i].a), &a),
		    0);
		ck_assert_int_eq(flaky_normalize(v[i].b, strlen(v[i].b), &b),
		    0);
		ck_assert_str_eq(flaky_buf_cstr(&a), v[i].norm);
		ck_assert_str_eq(flaky_buf_cstr(&b), v[i].norm);
		ck_assert(fp_of(v[i].a) == fp_of(v[i].b));
	}
	/* what does not vary stays apart */
	ck_assert(fp_of("ValueError: bad value 42") !=
	    fp_of("KeyError: bad value 42"));
	ck_assert(fp_of("expected 'fe80' got 'ab12'") !=
	    fp_of("expected 'fe81' got 'ab12'"));
	ck_assert(fp_of("") != 0);
	flaky_buf_free(&a);
	flaky_buf_free(&b);
}
END_TEST

/* Is s[0, n) valid UTF-8? */
static int
valid_utf8(const unsigned char *s, size_t n)
{
	size_t	 i = 0;

	while (i < n) {
		size_t	 k;

		if (s[i] < 0x80)
			k = 1;
		else if (s[i] >= 0xc2 && s[i] <= 0xdf)
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
		i += k;
	}
	return 1;
}

START_TEST(normalize_bounds)
{
	static const char *const fills[] = { "a", "x", "9", "0x1 ", "é",
	    "\xff\xfe", "\xe2\x82", "/tmp/a", "日本" };
	size_t		 n = 10 * 1024 * 1024;
	char		*big = malloc(n);
	struct flaky_buf b;

	ck_assert_ptr_nonnull(big);
	flaky_buf_init(&b);
	for (size_t f = 0; f < FLAKY_ARRAY_SIZE(fills); f++) {
		size_t	 fl = strlen(fills[f]);

		for (size_t i = 0; i < n; i++)
			big[i] = fills[f][i % fl];
		flaky_buf_reset(&b);
		ck_assert_int_eq(flaky_normalize(big, n, &b), 0);
		ck_assert_msg(b.len <= FLAKY_NORMALIZED_MAX,
		    "fill '%s': %zu bytes", fills[f], b.len);
		ck_assert_msg(valid_utf8((unsigned char *)flaky_buf_cstr(&b),
		    b.len), "fill '%s': invalid UTF-8 out", fills[f]);
		ck_assert_int_eq(flaky_classify_message(big, n),
		    FLAKY_SIG_UNKNOWN);
	}
	/* NUL bytes and invalid UTF-8 in the middle of a message */
	{
		static const char m[] = "bad \0byte \xff\xc3( here\0\0 end";

		flaky_buf_reset(&b);
		ck_assert_int_eq(flaky_normalize(m, sizeof m - 1, &b), 0);
		ck_assert_uint_eq(strlen(flaky_buf_cstr(&b)), b.len);
		ck_assert_str_eq(flaky_buf_cstr(&b),
		    "bad byte ??" "( here end");
	}
	/* a pattern past the examined bound is not seen */
	memset(big, 'x', n);
	memcpy(big + n - 20, "database is locked", 18);
	ck_assert_int_eq(flaky_classify_message(big, n), FLAKY_SIG_UNKNOWN);
	memcpy(big + 100, "database is locked", 18);
	ck_assert_int_eq(flaky_classify_message(big, n), FLAKY_SIG_INFRA);
	flaky_buf_free(&b);
	free(big);
}
END_TEST

START_TEST(signatures)
{
	static const struct { const char *msg; int sig; } v[] = {
		{ "Failed: Timeout >1.0s", FLAKY_SIG_TIMEOUT },
		{ "thrown: \"Exceeded timeout of 5000 ms for a test.\"",
		  FLAKY_SIG_TIMEOUT },
		{ "panic: test timed out after 2s", FLAKY_SIG_TIMEOUT },
		{ "Error: connect ECONNREFUSED 127.0.0.1:5432",
		  FLAKY_SIG_INFRA },
		{ "ConnectionRefusedError: [Errno 111] Connection refused",
		  FLAKY_SIG_INFRA },
		{ "sqlite3.OperationalError: database is locked",
		  FLAKY_SIG_INFRA },
		{ "AssertionError: None is not None", FLAKY_SIG_RACE },
		{ "UnboundLocalError: cannot access local variable 'x'",
		  FLAKY_SIG_RACE },
		{ "TypeError: Cannot read properties of undefined (reading "
		  "'id')", FLAKY_SIG_RACE },
		{ "AssertionError: assert 1 == 2", FLAKY_SIG_UNKNOWN },
		{ "expect(received).toBe(expected)", FLAKY_SIG_UNKNOWN },
		{ "", FLAKY_SIG_UNKNOWN },
	};

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(v); i++)
		ck_assert_msg(flaky_classify_message(v[i].msg,
		    strlen(v[i].msg)) == v[i].sig, "%s: %s", v[i].msg,
		    flaky_signature_name(flaky_classify_message(v[i].msg,
		    strlen(v[i].msg))));
	ck_assert_int_eq(flaky_classify_message(NULL, 0), FLAKY_SIG_UNKNOWN);
	ck_assert_str_eq(flaky_signature_name(FLAKY_SIG_ORDER_DEPENDENT),
	    "ORDER_DEPENDENT");
	ck_assert_int_eq(flaky_signature_from_name("race"), FLAKY_SIG_RACE);
	ck_assert_int_lt(flaky_signature_from_name("NONE"), 0);
}
END_TEST

/* A results set of n tests, the ones in fail[] failed with msg. */
static void
make_results(struct flaky_results *r, size_t n, const char *fail,
    const char *msg)
{
	char	 name[32];

	flaky_results_init(r);
	r->v = calloc(n, sizeof *r->v);
	ck_assert_ptr_nonnull(r->v);
	r->n = r->cap = n;
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof name, "t%zu", i);
		r->v[i].test = strdup(name);
		r->v[i].position = (unsigned)i;
		r->v[i].duration_us = -1;
		r->v[i].outcome = fail[i] == 'F' ? FLAKY_FAIL :
		    fail[i] == 'E' ? FLAKY_ERROR : fail[i] == 'S' ?
		    FLAKY_SKIP : FLAKY_PASS;
		if (FLAKY_FAILED(r->v[i].outcome))
			r->v[i].message = strdup(msg);
	}
}

START_TEST(run_rules)
{
	struct flaky_results r;
	struct flaky_run_evidence ev = { 0 };
	int	 sigs[10];

	/* 5 of 9 failing (more than half, at least 5): all INFRA */
	make_results(&r, 9, "FFEFF.S..", "assert 1 == 2");
	ck_assert_int_eq(flaky_classify_run(NULL, &r, &ev, sigs), 0);
	for (int i = 0; i < 9; i++)
		ck_assert_int_eq(sigs[i], FLAKY_SIG_NONE + (i < 5 ?
		    FLAKY_SIG_INFRA : 0));
	flaky_results_free(&r);

	/* 5 of 10: not more than half; messages decide */
	make_results(&r, 10, "FFFFF.....", "assert 1 == 2");
	flaky_classify_run(NULL, &r, &ev, sigs);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(sigs[i], i < 5 ? FLAKY_SIG_UNKNOWN :
		    FLAKY_SIG_NONE);
	flaky_results_free(&r);

	/* 4 of 4: fewer than 5 */
	make_results(&r, 4, "FFFF", "None is not None");
	flaky_classify_run(NULL, &r, &ev, sigs);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(sigs[i], FLAKY_SIG_RACE);
	flaky_results_free(&r);

	/* killed at the limit: the last failing test was running */
	ev.timed_out = 1;
	make_results(&r, 6, ".F.F..", "assert 1 == 2");
	flaky_classify_run(NULL, &r, &ev, sigs);
	ck_assert_int_eq(sigs[0], FLAKY_SIG_NONE);
	ck_assert_int_eq(sigs[1], FLAKY_SIG_UNKNOWN);
	ck_assert_int_eq(sigs[3], FLAKY_SIG_TIMEOUT);
	ck_assert_int_eq(sigs[5], FLAKY_SIG_NONE);
	flaky_results_free(&r);
	/* ... and without a failure nothing is marked */
	make_results(&r, 3, "...", "");
	flaky_classify_run(NULL, &r, &ev, sigs);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(sigs[i], FLAKY_SIG_NONE);
	flaky_results_free(&r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("classify");
	TCase	*tc = tcase_create("classify");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fixtures_pytest);
	tcase_add_test(tc, fixtures_unittest);
	tcase_add_test(tc, fixtures_jest);
	tcase_add_test(tc, fixtures_go);
	tcase_add_test(tc, normalize_varying);
	tcase_add_test(tc, normalize_bounds);
	tcase_add_test(tc, signatures);
	tcase_add_test(tc, run_rules);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
