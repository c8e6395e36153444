/* diagnose, finding a test by a full id or a unique part of one, and the
 * edit distance behind the nearest names. */
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
	Suite	*s = suite_create("diagnose_find");
	TCase	*tc = tcase_create("diagnose_find");

	tcase_set_timeout(tc, 60);
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
