/* parse: JUnit XML files, from the real runners' reporters
 * (tests/fixtures/capture-js.sh), and hostile or broken ones. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parse/parse.h"
#include "parse_test.h"
#include "test_helper.h"
#include "util/util.h"

START_TEST(junit_pytest)
{
	static const struct want w[] = {
		{ "tests/test_calc.py::test_plain", FLAKY_PASS, 0, NULL },
		{ "tests/test_calc.py::test_fails", FLAKY_FAIL, 0,
		    "AssertionError: assert {'retries': 2} == {'retries': 1}" },
		{ "tests/test_calc.py::test_param[1]", FLAKY_FAIL, 0,
		    "tests/test_calc.py:15: AssertionError" },
		{ "tests/test_calc.py::test_param[a b]", FLAKY_PASS, 0, NULL },
		{ "tests/test_calc.py::test_param[x[y]]", FLAKY_PASS, 0, NULL },
		{ "tests/test_calc.py::TestGroup::test_inside", FLAKY_PASS, 0,
		    NULL },
		{ "tests/test_calc.py::TestGroup::test_skipped", FLAKY_SKIP, 0,
		    NULL },
		{ "tests/test_calc.py::TestGroup::test_xfail", FLAKY_XFAIL, 0,
		    "known bug" },
		{ "tests/test_calc.py::TestGroup::TestNested::test_deep",
		    FLAKY_PASS, 0, NULL },
		{ "tests/test_calc.py::test_error", FLAKY_ERROR, 0,
		    "RuntimeError: fixture exploded" },
		{ "tests/sub/test_mod.py::test_sub_ok", FLAKY_PASS, 0, NULL },
	};
	struct flaky_results	 r;
	char			 err[512] = "";

	ck_assert_int_eq(flaky_parse_junit(FIXTURES "/junit/pytest.xml", &r,
	    err, sizeof err), 0);
	ck_assert_str_eq(r.runner, "pytest");
	pt_check(&r, w, FLAKY_ARRAY_SIZE(w));
	ck_assert_int_eq(r.summary_total, 11);
	/* Entities in attributes and text are decoded. */
	ck_assert_ptr_nonnull(strstr(r.v[1].message,
	    ">       assert {\"retries\": 2}"));
	flaky_results_free(&r);

	/* xunit1 names the file: the same node ids. */
	ck_assert_int_eq(flaky_parse_junit(FIXTURES "/junit/pytest-xunit1.xml",
	    &r, err, sizeof err), 0);
	ck_assert_int_eq(r.n, FLAKY_ARRAY_SIZE(w));
	for (size_t i = 0; i < r.n; i++) {
		ck_assert_str_eq(r.v[i].test, w[i].test);
		ck_assert_int_eq(r.v[i].outcome, w[i].outcome);
	}
	flaky_results_free(&r);
}
END_TEST

START_TEST(junit_jest_surefire)
{
	static const struct want sure[] = {
		{ "com.example.PaymentTest.retriesOnce", FLAKY_FAIL, 412000,
		    "failed, then passed on retry: expected:<1> but was:<2>" },
		{ "com.example.PaymentTest.alwaysBroken", FLAKY_FAIL, 101000,
		    "Connection refused" },
		{ "com.example.PaymentTest.plain", FLAKY_PASS, 2000, NULL },
		{ "com.example.PaymentTest.ignored", FLAKY_SKIP, 0, NULL },
	};
	struct flaky_results	 r;
	char			 err[512] = "";

	ck_assert_int_eq(flaky_parse_junit(FIXTURES "/junit/surefire-flaky.xml",
	    &r, err, sizeof err), 0);
	ck_assert_str_eq(r.runner, "junit");
	pt_check(&r, sure, FLAKY_ARRAY_SIZE(sure));
	ck_assert_int_eq(r.summary_total, 4);
	flaky_results_free(&r);

	/* jest-junit 16 with its default templates: classname == name, so
	 * the id is the name. It writes the todo test as a testcase but
	 * leaves it out of tests="12". */
	ck_assert_int_eq(flaky_parse_junit(FIXTURES "/junit/jest-junit.xml",
	    &r, err, sizeof err), 0);
	ck_assert_int_eq(r.n, 13);
	ck_assert_int_eq(r.summary_total, 12);
	ck_assert_str_eq(r.v[0].test, "payments retries once");
	ck_assert_int_eq(r.v[0].outcome, FLAKY_FAIL);
	ck_assert_int_eq(r.v[0].duration_us, 4000);
	ck_assert_ptr_nonnull(strstr(r.v[0].message, "deep equality"));
	ck_assert_str_eq(r.v[2].test, "same title");
	ck_assert_str_eq(r.v[3].test, "same title #2");
	ck_assert_int_eq(r.v[3].outcome, FLAKY_FAIL);
	ck_assert_str_eq(r.v[10].test, "math skipped one");
	ck_assert_int_eq(r.v[10].outcome, FLAKY_SKIP);
	ck_assert_int_eq(pt_count(&r, FLAKY_FAIL), 3);
	flaky_results_free(&r);
}
END_TEST

/* Hostile and broken files: an error naming FILE:LINE:COL, no results. */
START_TEST(junit_refused)
{
	static const struct {
		const char	*file;
		const char	*where;
		const char	*what;
	} bad[] = {
		{ "billion-laughs.xml", ":3:16: ", "entity" },
		{ "external-entity.xml", ":3:", "entity" },
		{ "param-entity.xml", ":3:", "entity" },
		{ "truncated.xml", ":15:", "expected well-formed XML" },
		{ "not-junit.xml", ":2:1: ", "<testsuite" },
		{ "deep.xml", ":1:", "at most 64 nested elements (the depth "
		    "limit)" },
	};
	struct flaky_results	 r;
	char			 path[1024], err[512];
	int			 fd;

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(bad); i++) {
		snprintf(path, sizeof path, "%s/junit/%s", FIXTURES,
		    bad[i].file);
		err[0] = '\0';
		ck_assert_int_eq(flaky_parse_junit(path, &r, err, sizeof err),
		    -EINVAL);
		ck_assert_int_eq(r.n, 0);
		ck_assert_ptr_null(r.v);
		ck_assert_msg(strncmp(err, path, strlen(path)) == 0 &&
		    strstr(err, bad[i].where) == err + strlen(path) &&
		    strstr(err, bad[i].what) != NULL, "%s: %s", bad[i].file,
		    err);
	}
	/* An external DTD is never fetched: the document parses offline. */
	ck_assert_int_eq(flaky_parse_junit(FIXTURES "/junit/external-dtd.xml",
	    &r, err, sizeof err), 0);
	ck_assert_int_eq(r.n, 1);
	ck_assert_str_eq(r.v[0].test, "a.b");
	flaky_results_free(&r);
	/* Missing file, and a buffer with garbage. */
	ck_assert_int_eq(flaky_parse_junit(FIXTURES "/junit/none.xml", &r, err,
	    sizeof err), -ENOENT);
	ck_assert_int_eq(flaky_parse_junit_buffer("junk", "\x01\xff<<", 4, &r,
	    err, sizeof err), -EINVAL);
	ck_assert_int_eq(strncmp(err, "junk:1:", 7), 0);
	ck_assert_int_eq(r.n, 0);

	/* Gigantic: refused before reading (a sparse file, 257 MiB). */
	ck_assert_int_eq(flaky_parse_junit_buffer("big", "", (size_t)257 << 20,
	    &r, err, sizeof err), -EFBIG);
	snprintf(path, sizeof path, "/tmp/flaky-junit-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)257 << 20), 0);
	close(fd);
	ck_assert_int_eq(flaky_parse_junit(path, &r, err, sizeof err), -EFBIG);
	ck_assert_ptr_nonnull(strstr(err, "256 MiB"));
	ck_assert_int_eq(r.n, 0);
	unlink(path);
}
END_TEST

/* The cap on the address space of a child that reads hostile JUnit; not
 * set under AddressSanitizer or valgrind, which size it themselves. */
#define JUNIT_AS_LIMIT	(256UL * 1024 * 1024)
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN	1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN	0
#endif

/* Parse path (or buf when not NULL) in a child under RLIMIT_AS: it exits
 * 0 when refused with want, 2 otherwise. Returns the CPU seconds it took
 * (0 under valgrind): the work, which a loaded machine does not change. */
static double
junit_refused_in_child(const char *path, const char *buf, size_t len,
    const char *want)
{
	struct rusage	 ru;
	pid_t		 pid;
	int		 status;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit	 rl = { JUNIT_AS_LIMIT, JUNIT_AS_LIMIT };
		struct flaky_results r;
		char		 err[512] = "";
		int		 e;

		if (!UNDER_ASAN && getenv("FLAKY_VALGRIND") == NULL &&
		    setrlimit(RLIMIT_AS, &rl) < 0)
			_exit(4);
		e = path != NULL ?
		    flaky_parse_junit(path, &r, err, sizeof err) :
		    flaky_parse_junit_buffer("mem.xml", buf, len, &r, err,
		    sizeof err);
		if (e != -EINVAL || r.n != 0 || strcmp(err, want) != 0) {
			fprintf(stderr, "%d: got  %s\nwant %s\n", e, err, want);
			_exit(2);
		}
		_exit(0);
	}
	ck_assert_int_eq(wait4(pid, &status, 0, &ru), pid);
	ck_assert_msg(WIFEXITED(status), "the parse died (signal %d)",
	    WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	/* Under valgrind time means nothing: only the refusal counts. */
	if (getenv("FLAKY_VALGRIND") != NULL)
		return 0.0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* One huge attribute, comment or nesting: refused early, in little
 * memory, whether read from a file or a buffer. */
START_TEST(junit_limits)
{
	static const char head[] = "<testsuite>\n  <testcase name=\"";
	static const char markup[] = "mem.xml:2:3: expected tags, comments "
	    "and processing instructions of at most 1048576 bytes (the markup "
	    "size limit), got more";
	char	 path[64], want[256], *buf;
	size_t	 n = 2u << 20;
	int	 fd;

	/* 2 MiB of attribute value in memory. */
	buf = malloc(n);
	ck_assert_ptr_nonnull(buf);
	memcpy(buf, head, sizeof head - 1);
	memset(buf + sizeof head - 1, 'x', n - (sizeof head - 1));
	junit_refused_in_child(NULL, buf, n, markup);

	/* 200 MiB of it in a file: expat never holds more than the bound. */
	snprintf(path, sizeof path, "/tmp/flaky-junit-XXXXXX");
	ck_assert_int_ge(fd = mkstemp(path), 0);
	ck_assert_int_eq(write(fd, head, sizeof head - 1),
	    (ssize_t)sizeof head - 1);
	memset(buf, 'x', n);
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(write(fd, buf, n), (ssize_t)n);
	close(fd);
	snprintf(want, sizeof want, "%s%s", path, markup + 7);
	ck_assert_msg(junit_refused_in_child(path, NULL, 0, want) < 2.0,
	    "slow refusal");
	unlink(path);

	/* A comment that never ends. */
	memcpy(buf, "<testsuite><!--", 15);
	junit_refused_in_child(NULL, buf, n, "mem.xml:1:12: expected tags, "
	    "comments and processing instructions of at most 1048576 bytes "
	    "(the markup size limit), got more");

	/* 100,000 nested elements: the 65th is refused. */
	memcpy(buf, "<testsuite>", 11);
	for (size_t i = 0; i < 100000; i++)
		memcpy(buf + 11 + 3 * i, "<a>", 3);
	ck_assert_msg(junit_refused_in_child(NULL, buf, 11 + 300000,
	    "mem.xml:1:201: expected at most 64 nested elements (the depth "
	    "limit), got more") < 2.0, "slow refusal");
	free(buf);
}
END_TEST

static void
add_tests(TCase *tc)
{
	tcase_add_test(tc, junit_pytest);
	tcase_add_test(tc, junit_jest_surefire);
	tcase_add_test(tc, junit_refused);
	tcase_add_test(tc, junit_limits);
}

int
main(void)
{
	return pt_run("parse_junit", add_tests);
}
