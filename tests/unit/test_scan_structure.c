/* scan, the statement structure (structure.c): the enclosing classes,
 * function and test of each finding. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "scan_test.h"
#include "util/util.h"

START_TEST(scopes)
{
	/* Classes outermost first, the innermost def also across a class,
	 * the test is the nearest def named test*; decorators, defaults and
	 * bases belong to the outer scope. */
	ck_rows("@mark(np.testing.assert_allclose(1, 1))\n"
	    "def test_outer(a=assert_allclose(1, 1)):\n"
	    "    class Local(Base):\n"
	    "        def helper(self):\n"
	    "            assert x < 1\n"
	    "    def inner():\n"
	    "        assert x < 2\n"
	    "class A:\n"
	    "    class B:\n"
	    "        async def test_b(self):\n"
	    "            assert x < 3\n"
	    "        x = assert_allclose(1, 1)\n"
	    "    def test_c(self): assert x > 4\n"
	    "assert x < 5\n",
	    "1 numpy - - -\n"
	    "2 numpy - - -\n"
	    "5 comparison Local helper test_outer\n"
	    "7 comparison - inner test_outer\n"
	    "11 comparison A.B test_b test_b\n"
	    "12 numpy A.B - -\n"
	    "13 comparison A test_c test_c\n"
	    "14 comparison - - -\n");
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("scan_structure");
	TCase	*tc = tcase_create("scan_structure");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, scopes);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
