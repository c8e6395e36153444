/* parse: the runner is recognized wherever its output starts, with bounded
 * memory: real captures (tests/fixtures) behind 10,000 lines of other
 * output, and a 200 MB flood before a TAP stream. */
#include "buildconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "parse/parse.h"
#include "util/util.h"
#include "test_helper.h"

/*
 * CPU seconds the 200 MB flood may take: a parser that went back over
 * what it held would take hours. ASan and UBSan at -O0 take several times
 * the optimized build's CPU, and more beside other work (10.6 s was seen
 * under a load of 9 on two CPUs): they check memory, the optimized build
 * keeps the tight bound.
 */
#if defined(__SANITIZE_ADDRESS__)
#define FLOOD_CPU_SECS	30.0
#else
#define FLOOD_CPU_SECS	10.0
#endif

/* Two parses agree in every field a run stores. */
static void
assert_same(const struct flaky_results *a, const struct flaky_results *b,
    const char *what)
{
	ck_assert_msg(a->n == b->n, "%s: %zu != %zu results", what, a->n, b->n);
	ck_assert_str_eq(a->runner, b->runner);
	ck_assert_msg(tu_str_eq(a->version, b->version), "%s: version", what);
	ck_assert_msg(tu_str_eq(a->seed, b->seed), "%s: seed", what);
	ck_assert_msg(tu_str_eq(a->incomplete, b->incomplete), "%s: incomplete",
	    what);
	ck_assert_int_eq(a->summary_total, b->summary_total);
	for (size_t i = 0; i < a->n; i++) {
		ck_assert_str_eq(a->v[i].test, b->v[i].test);
		ck_assert_int_eq(a->v[i].outcome, b->v[i].outcome);
		ck_assert_int_eq(a->v[i].duration_us, b->v[i].duration_us);
		ck_assert_uint_eq(a->v[i].position, b->v[i].position);
		ck_assert_msg(tu_str_eq(a->v[i].message, b->v[i].message),
		    "%s: message of %s", what, a->v[i].test);
	}
}

/*
 * 10,000 lines such as a build or a setup script prints before the tests:
 * compiler lines, progress, a log, blank lines. Some look like no runner,
 * a few look a little like one (a 70-character rule as unittest prints, a
 * "1..3" range), never two in one window.
 */
static void
preamble(struct flaky_buf *b, size_t lines)
{
	for (size_t i = 0; i < lines; i++) {
		switch (i % 7) {
		case 0:
			flaky_buf_printf(b, "cc -O2 -c src/file%zu.c -o "
			    "build/file%zu.o\n", i, i);
			break;
		case 1:
			flaky_buf_printf(b, "[%5zu/10000] Building C object "
			    "src/lib%zu.a\n", i, i % 13);
			break;
		case 2:
			flaky_buf_printf(b, "2026-12-01T14:%02zu:%02zu INFO "
			    "worker %zu: fetched 3 items\n", i % 60, i % 59, i);
			break;
		case 3:
			flaky_buf_adds(b, "\n");
			break;
		case 4:
			if (i % 2000 == 4) {
				/* unittest's rule, alone in its window */
				for (int k = 0; k < 70; k++)
					flaky_buf_addc(b, '=');
				flaky_buf_addc(b, '\n');
			} else if (i % 2000 == 1004)
				flaky_buf_adds(b, "1..3\n");
			else
				flaky_buf_printf(b, "  copying file %zu of "
				    "10000 (%zu%%)\n", i, i / 100);
			break;
		default:
			flaky_buf_printf(b, "make[2]: Entering directory "
			    "'/src/module%zu'\n", i);
		}
	}
	ck_assert(!b->oom);
}

/* The fixture parses the same behind the preamble as alone, fed whole and
 * in odd chunks; and it parses to something (a test that compared two
 * empty results would pass on a parser that recognizes nothing). */
static void
check_behind_preamble(const char *rel, const char *runner, size_t min_tests)
{
	struct flaky_results	 alone, behind;
	struct flaky_buf	 b;
	size_t			 len;
	char			*s = tu_slurp(rel, &len);
	static const size_t	 chunks[] = { 1 << 20, 4093 };

	tu_parse_chunked(s, len, len ? len : 1, "/work/x", &alone);
	ck_assert_str_eq(alone.runner, runner);
	ck_assert_uint_ge(alone.n, min_tests);
	flaky_buf_init(&b);
	preamble(&b, 10000);
	flaky_buf_add(&b, s, len);
	ck_assert(!b.oom);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(chunks); i++) {
		tu_parse_chunked(b.data, b.len, chunks[i], "/work/x", &behind);
		assert_same(&alone, &behind, rel);
		flaky_results_free(&behind);
	}
	flaky_results_free(&alone);
	flaky_buf_free(&b);
	free(s);
}

START_TEST(preamble_each_runner)
{
	check_behind_preamble("pytest/v.txt", "pytest", 30);
	check_behind_preamble("pytest/q.txt", "pytest", 9);
	check_behind_preamble("unittest/v.txt", "unittest", 16);
	check_behind_preamble("unittest/quiet.txt", "unittest", 8);
	check_behind_preamble("jest/verbose-multi.txt", "jest", 13);
	check_behind_preamble("gotest/verbose.txt", "gotest", 8);
	check_behind_preamble("tap/node.txt", "tap", 6);
	check_behind_preamble("tap/prove3.txt", "tap", 11);
	check_behind_preamble("tap/perl.txt", "tap", 9);
	check_behind_preamble("cargo/strsim-merged.txt", "cargo", 107);
	check_behind_preamble("gtest/demo.txt", "gtest", 9);
	check_behind_preamble("gtest/demo-ctest-V.txt", "gtest", 9);
	check_behind_preamble("rspec/demo-doc-rand.txt", "rspec", 9);
	check_behind_preamble("rspec/tty-color-doc-defined.txt", "rspec", 60);
	check_behind_preamble("phpunit/demo-testdox-debug.txt", "phpunit", 9);
	check_behind_preamble("vitest/demo-verbose.txt", "vitest", 7);
	check_behind_preamble("playwright/demo-list.txt", "playwright", 6);
	check_behind_preamble("mocha/demo-spec.txt", "mocha", 7);
	check_behind_preamble("nodetest/demo-spec.txt", "nodetest", 7);
}
END_TEST

/* Two stray lines that look like unittest's make a tentative choice; the
 * first certain pytest line takes the run over, header and all. */
START_TEST(tentative_taken_over)
{
	struct flaky_results	 alone, behind;
	struct flaky_buf	 b;
	size_t			 len;
	char			*s = tu_slurp("pytest/v.txt", &len);

	tu_parse_chunked(s, len, len, NULL, &alone);
	flaky_buf_init(&b);
	for (int n = 0; n < 2; n++) {
		for (int k = 0; k < 70; k++)
			flaky_buf_addc(&b, '=');
		flaky_buf_adds(&b, "\nsetup: done\n");
	}
	preamble(&b, 600);
	flaky_buf_add(&b, s, len);
	tu_parse_chunked(b.data, b.len, 999, NULL, &behind);
	ck_assert_str_eq(behind.runner, "pytest");
	ck_assert_str_eq(behind.version, "7.2.1");
	assert_same(&alone, &behind, "tentative");
	flaky_results_free(&alone);
	flaky_results_free(&behind);
	flaky_buf_free(&b);
	free(s);
}
END_TEST

/* The largest resident size so far, in KiB. */
static long
maxrss_kib(void)
{
	struct rusage	 ru;

	ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_maxrss;
}

/* 200 MB of lines no runner prints, then a TAP stream under prove (its
 * file header and plan come before the first point): the stream's tests,
 * named after the file, in bounded memory and time. */
START_TEST(flood_then_tap)
{
	static const char tap[] = "t/flood.t .. \n1..3\nok 1 - first\n"
	    "not ok 2 - second\n  ---\n  message: 'it broke'\n  ...\n"
	    "ok 3 - third # SKIP later\n";
	struct flaky_parser	*p;
	struct flaky_results	 r;
	struct flaky_buf	 junk;
	struct timespec		 t0, t1;
	long			 rss0;
	double			 secs;
	size_t			 fed = 0, i = 0;
	/* valgrind runs this some 50 times slower: a tenth of the flood
	 * still passes the window 80 times over, and time is not checked. */
	int			 slow = getenv("FLAKY_VALGRIND") != NULL;
	size_t			 flood = slow ? 20u * 1000 * 1000 :
				    200u * 1000 * 1000;

	flaky_buf_init(&junk);
	/* One MiB of varied lines, one of them longer than a line may be. */
	while (junk.len < (1 << 20)) {
		if (i == 5000) {
			for (size_t k = 0; k < FLAKY_LINE_MAX + 100; k++)
				flaky_buf_addc(&junk, 'x');
			flaky_buf_addc(&junk, '\n');
		}
		flaky_buf_printf(&junk, "flood %zu: the quick brown fox jumps "
		    "over the lazy dog\n", i++);
	}
	ck_assert(!junk.oom);
	rss0 = maxrss_kib();
	/* CPU time: the parser's work, whatever else the machine does. */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	ck_assert_int_eq(flaky_parser_new(&p, NULL), 0);
	while (fed < flood) {
		ck_assert_int_eq(flaky_parser_feed(p, junk.data, junk.len), 0);
		fed += junk.len;
	}
	ck_assert_int_eq(flaky_parser_feed(p, tap, sizeof tap - 1), 0);
	ck_assert_int_eq(flaky_parser_finish(p, &r), 0);
	flaky_parser_free(p);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_str_eq(r.runner, "tap");
	ck_assert_uint_eq(r.n, 3);
	ck_assert_str_eq(r.v[0].test, "t/flood.t > first");
	ck_assert_int_eq(r.v[1].outcome, FLAKY_FAIL);
	ck_assert_str_eq(r.v[1].message, "it broke");
	ck_assert_int_eq(r.v[2].outcome, FLAKY_SKIP);
	ck_assert_int_eq(r.summary_total, 3);
	ck_assert_ptr_null(r.incomplete);
	/* The window is 256 KiB; a parser that held the flood would have
	 * grown by 200 MB. */
	ck_assert_msg(maxrss_kib() - rss0 < 16 * 1024, "grew %ld KiB",
	    maxrss_kib() - rss0);
	ck_assert_msg(slow || secs < FLOOD_CPU_SECS, "%.1f s for %zu bytes",
	    secs, fed);
	flaky_results_free(&r);
	flaky_buf_free(&junk);
}
END_TEST

/* A numbered TAP point decides at once, even alone: no "TAP version",
 * no header, 600 lines after anything else. */
START_TEST(tap_point_decides)
{
	struct flaky_results	 r;
	struct flaky_buf	 b;

	flaky_buf_init(&b);
	preamble(&b, 600);
	flaky_buf_adds(&b, "ok 1 - alone\n");
	tu_parse_chunked(b.data, b.len, 1, NULL, &r);
	ck_assert_str_eq(r.runner, "tap");
	ck_assert_uint_eq(r.n, 1);
	ck_assert_str_eq(r.v[0].test, "alone");
	flaky_results_free(&r);
	/* go's package line is not a TAP point. */
	tu_parse_chunked("ok  \texample.com/x\t0.01s\n", 26, 26, NULL, &r);
	ck_assert_str_eq(r.runner, "gotest");
	flaky_results_free(&r);
	flaky_buf_free(&b);
}
END_TEST

static Suite *
parse_detect_suite(void)
{
	Suite	*s = suite_create("parse_detect");
	TCase	*tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, preamble_each_runner);
	tcase_add_test(tc, tentative_taken_over);
	tcase_add_test(tc, flood_then_tap);
	tcase_add_test(tc, tap_point_decides);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(parse_detect_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
