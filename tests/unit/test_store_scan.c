/* store_scan (lib/store/scan.c): a scan's findings stored per target (a new
 * scan replaces the last, skipped files are heard of), read back as risks
 * keyed by pytest and unittest ids, found by test id; a target's directory
 * and its fallback. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/store.h"
#include "util/util.h"
#include "test_helper.h"

static char	 dir[64];
static char	 path[128];
static struct flaky_store *st;
static char	 err[512];

/* Two findings in tests (one seeded), one in a helper (no test id). */
static const char test_a[] =
    "import random\n"
    "import pytest\n"
    "\n"
    "class TestA:\n"
    "    def test_close(self):\n"
    "        random.seed(1)\n"
    "        assert x < 0.5\n"
    "\n"
    "def test_loose():\n"
    "    assert y == pytest.approx(1, rel=1e-3)\n"
    "\n"
    "def helper():\n"
    "    assert z > 1\n";

static void
write_file(const char *rel, const char *text)
{
	char	 p[256];
	FILE	*f;

	snprintf(p, sizeof p, "%s/%s", dir, rel);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
}

static void
setup(void)
{
	char	 p[128];

	tu_tmpdir(dir, sizeof dir, "stscan");
	snprintf(p, sizeof p, "%s/tests", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	write_file("tests/test_a.py", test_a);
	write_file("tests/bad.py", "def (:\n");
	write_file("tests/notes.txt", "assert x < 1\n");
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
target(const char *name, const char *d)
{
	int64_t	 id;

	ck_assert_msg(flaky_store_target(st, name, "pytest", d, &id, err,
	    sizeof err) == 0, "%s", err);
	return id;
}

/* The skipped paths, each "BASENAME: reason" on a line. */
static void
skipped(void *arg, const char *p, const char *reason)
{
	const char *base = strrchr(p, '/');

	flaky_buf_printf(arg, "%s: %s\n", base ? base + 1 : p, reason);
}

/* Scan paths below dir (relative to it) for a target. */
static void
scan(int64_t tid, const char *d, const char *const *rel, size_t n,
    struct flaky_scan_summary *sum, struct flaky_buf *skips)
{
	char	*paths[4];

	ck_assert_uint_le(n, 4);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_ne(asprintf(&paths[i], "%s/%s", dir, rel[i]), -1);
	ck_assert_msg(flaky_store_scan(st, tid, d, paths, n, skips ? skipped :
	    NULL, skips, sum, err, sizeof err) == 0, "%s", err);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
}

/* The risks of a target (NULL: all) as text, one per line. */
static char *
risks_text(const char *tg, size_t *ret_n)
{
	struct flaky_risk *v;
	struct flaky_buf b;
	size_t		 n;

	ck_assert_msg(flaky_store_risks(st, tg, &v, &n, err, sizeof err) == 0,
	    "%s", err);
	flaky_buf_init(&b);
	for (size_t i = 0; i < n; i++)
		flaky_buf_printf(&b, "%s|%s|%s|%d|%s|%s|%d\n", v[i].target,
		    v[i].key, v[i].path, v[i].line, v[i].category,
		    v[i].tolerance ? v[i].tolerance : "NULL", v[i].seeded);
	flaky_risks_free(v, n);
	if (ret_n != NULL)
		*ret_n = n;
	return flaky_buf_steal(&b);
}

/* Findings in tests, stored relative to the target's directory, with
 * their categories, tolerances and seeding; files that are no Python and
 * paths that are not there are skipped with a reason. */
START_TEST(scan_and_read)
{
	static const char *const rel[] = { "tests", "missing.py" };
	struct flaky_scan_summary sum;
	struct flaky_buf skips;
	char		*got;
	size_t		 n;
	int64_t		 tid = target("t", dir);

	flaky_buf_init(&skips);
	scan(tid, dir, rel, 2, &sum, &skips);
	/* test_a.py and bad.py (notes.txt is no Python file) */
	ck_assert_uint_eq(sum.files, 2);
	ck_assert_uint_eq(sum.skipped, 2);
	ck_assert_uint_eq(sum.findings, 3);
	ck_assert_uint_eq(sum.unseeded, 2);
	ck_assert_msg(strncmp(flaky_buf_cstr(&skips), "bad.py: ", 8) == 0 &&
	    strstr(flaky_buf_cstr(&skips), "\nmissing.py: ") != NULL, "%s",
	    flaky_buf_cstr(&skips));
	flaky_buf_free(&skips);
	got = risks_text(NULL, &n);
	ck_assert_uint_eq(n, 4);
	/* sorted by (target, key): '.' sorts before '/', 'T' before 't' */
	ck_assert_str_eq(got,
	    "t|tests.test_a.TestA.test_close|tests/test_a.py|7|comparison|"
	    "NULL|1\n"
	    "t|tests.test_a.test_loose|tests/test_a.py|10|approx|rel=1e-3|0\n"
	    "t|tests/test_a.py::TestA::test_close|tests/test_a.py|7|"
	    "comparison|NULL|1\n"
	    "t|tests/test_a.py::test_loose|tests/test_a.py|10|approx|"
	    "rel=1e-3|0\n");
	free(got);
	got = risks_text("other", &n);
	ck_assert_uint_eq(n, 0);
	free(got);
}
END_TEST

/* A new scan of a target replaces its findings, and leaves other targets'
 * alone; a target without a directory keeps the paths as given. */
START_TEST(rescan_replaces)
{
	static const char *const rel[] = { "tests/test_a.py" };
	struct flaky_scan_summary sum;
	char		*got, want[256];
	size_t		 n;
	int64_t		 t = target("t", dir), u = target("u", NULL);

	scan(t, dir, rel, 1, &sum, NULL);
	scan(t, dir, rel, 1, &sum, NULL);
	ck_assert_uint_eq(sum.files, 1);
	ck_assert_uint_eq(sum.findings, 3);
	scan(u, NULL, rel, 1, &sum, NULL);
	free(risks_text("t", &n));
	ck_assert_uint_eq(n, 4);
	got = risks_text("u", &n);
	ck_assert_uint_eq(n, 4);
	snprintf(want, sizeof want, "\nu|%s/tests/test_a.py::TestA::"
	    "test_close|%s/tests/test_a.py|7|", dir, dir);
	ck_assert_msg(strstr(got, want) != NULL, "%s", got);
	free(got);
	/* nothing to scan: no findings left for t, u's stay */
	scan(t, dir, rel, 0, &sum, NULL);
	ck_assert_uint_eq(sum.findings, 0);
	free(risks_text("t", &n));
	ck_assert_uint_eq(n, 0);
	free(risks_text(NULL, &n));
	ck_assert_uint_eq(n, 4);
}
END_TEST

/* A test id finds its findings, with pytest's parameters cut off; an
 * unknown id, another target or a prefix of an id finds none. */
START_TEST(risks_find)
{
	static const char *const rel[] = { "tests" };
	struct flaky_scan_summary sum;
	struct flaky_risk *v;
	size_t		 n, first;

	scan(target("t", dir), dir, rel, 1, &sum, NULL);
	ck_assert_int_eq(flaky_store_risks(st, NULL, &v, &n, err, sizeof err),
	    0);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(flaky_risks_find(v, n, "t",
	    "tests/test_a.py::test_loose", &first), 1);
	ck_assert_str_eq(v[first].key, "tests/test_a.py::test_loose");
	ck_assert_uint_eq(flaky_risks_find(v, n, "t",
	    "tests/test_a.py::test_loose[1-2]", &first), 1);
	ck_assert_str_eq(v[first].key, "tests/test_a.py::test_loose");
	ck_assert_uint_eq(flaky_risks_find(v, n, "t",
	    "tests.test_a.TestA.test_close", &first), 1);
	ck_assert_int_eq(v[first].line, 7);
	ck_assert_uint_eq(flaky_risks_find(v, n, "t",
	    "tests/test_a.py::test_lo", &first), 0);
	ck_assert_uint_eq(flaky_risks_find(v, n, "t",
	    "tests/test_a.py::helper", &first), 0);
	ck_assert_uint_eq(flaky_risks_find(v, n, "u",
	    "tests/test_a.py::test_loose", &first), 0);
	flaky_risks_free(v, n);
}
END_TEST

/* A target's directory: the stored one, else the fallback, saved. */
START_TEST(target_dir)
{
	char	*d;
	int64_t	 t = target("t", "/src/t"), u = target("u", NULL);

	ck_assert_int_eq(flaky_store_target_dir(st, t, "/else", &d, err,
	    sizeof err), 0);
	ck_assert_str_eq(d, "/src/t");
	free(d);
	ck_assert_int_eq(flaky_store_target_dir(st, u, "/first", &d, err,
	    sizeof err), 0);
	ck_assert_str_eq(d, "/first");
	free(d);
	ck_assert_int_eq(flaky_store_target_dir(st, u, "/second", &d, err,
	    sizeof err), 0);
	ck_assert_str_eq(d, "/first");
	free(d);
	/* no such target: an error, nothing returned */
	ck_assert_int_lt(flaky_store_target_dir(st, u + 100, "/x", &d, err,
	    sizeof err), 0);
	ck_assert_ptr_null(d);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("store_scan");
	TCase	*tc = tcase_create("store_scan");
	SRunner	*sr;
	int	 failed;

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, scan_and_read);
	tcase_add_test(tc, rescan_replaces);
	tcase_add_test(tc, risks_find);
	tcase_add_test(tc, target_dir);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
