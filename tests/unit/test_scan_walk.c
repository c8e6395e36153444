/* scan, the files a scan covers (walk.c) and scanning them (scan.c):
 * regular files, directories, symlinks, FIFOs, errors. */
#include "buildconf.h"

#include <sys/stat.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scan/scan.h"
#include "scan_test.h"
#include "util/util.h"

START_TEST(files_and_walk)
{
	char	 dir[] = "/tmp/test_pyscan.XXXXXX", path[256], err[256];
	char	**paths = NULL;
	size_t	  npaths = 0;
	struct flaky_scan_result *r;
	static const char *const files[] = { "b.py", "a.py", "sub/c.py",
	    "sub/d.txt", "A.py" };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/sub", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	/* An empty directory, alone and inside the tree (UBSan once saw
	 * qsort called with NULL for it). */
	ck_assert_int_eq(flaky_pyscan_paths(path, &paths, &npaths, NULL, NULL,
	    err, sizeof err), 0);
	ck_assert_uint_eq(npaths, 0);
	flaky_pyscan_paths_free(paths, npaths);
	paths = NULL;
	snprintf(path, sizeof path, "%s/empty", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(files); i++) {
		FILE	*f;

		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		ck_assert_ptr_nonnull(f = fopen(path, "w"));
		fputs("def test_x():\n    assert x < 1\n", f);
		fclose(f);
	}
	ck_assert_int_eq(flaky_pyscan_paths(dir, &paths, &npaths, NULL, NULL,
	    err, sizeof err), 0);
	ck_assert_uint_eq(npaths, 4);
	snprintf(path, sizeof path, "%s/A.py", dir);
	ck_assert_str_eq(paths[0], path);
	snprintf(path, sizeof path, "%s/a.py", dir);
	ck_assert_str_eq(paths[1], path);
	snprintf(path, sizeof path, "%s/sub/c.py", dir);
	ck_assert_str_eq(paths[3], path);

	ck_assert_int_eq(flaky_pyscan_file(paths[3], &r, err, sizeof err), 0);
	ck_assert_uint_eq(r->nfindings, 1);
	ck_assert_int_eq(r->findings[0].line, 2);
	flaky_scan_result_free(r);
	flaky_pyscan_paths_free(paths, npaths);

	snprintf(path, sizeof path, "%s/missing.py", dir);
	ck_assert_int_eq(flaky_pyscan_file(path, &r, err, sizeof err),
	    -ENOENT);
	ck_assert_ptr_null(r);
	ck_assert_ptr_nonnull(strstr(err, "missing.py"));
	paths = NULL;
	npaths = 0;
	ck_assert_int_eq(flaky_pyscan_paths(path, &paths, &npaths, NULL, NULL,
	    err, sizeof err), -ENOENT);
	/* A FIFO is refused at once, not waited on. */
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(flaky_pyscan_file(path, &r, err, sizeof err),
	    -EINVAL);
	ck_assert_str_eq(strstr(err, "missing.py"), "missing.py: expected a "
	    "regular file");
	unlink(path);

	for (size_t i = 0; i < FLAKY_ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof path, "%s/sub", dir);
	rmdir(path);
	snprintf(path, sizeof path, "%s/empty", dir);
	rmdir(path);
	ck_assert_int_eq(rmdir(dir), 0);
	flaky_scan_result_free(NULL);
	flaky_pyscan_paths_free(NULL, 0);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("scan_walk");
	TCase	*tc = tcase_create("scan_walk");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, files_and_walk);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
