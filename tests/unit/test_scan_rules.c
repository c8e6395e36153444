/* scan, the finding rules (rules.c): each category, and the tolerance
 * arguments and source line a finding carries. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "scan_test.h"
#include "util/util.h"

START_TEST(rule_comparison)
{
	ck_rows("def test_a():\n"
	    "    assert x < 1\n"
	    "    assert x == 1, 'x < 1 only in the message'\n"
	    "    assert 0 <= x <= 1 and y >= 2\n"
	    "    assert (x\n"
	    "            > 1)\n"
	    "    assert [v for v in x if v > 0]\n"
	    "    assert x >> 1 and x << 1 and x != 2\n"
	    "    assert f'{x > 1}'\n"
	    "    if x: assert x > 0; assert x < 9\n",
	    "2 comparison - test_a test_a\n"
	    "4 comparison - test_a test_a\n"
	    "5 comparison - test_a test_a\n"
	    "7 comparison - test_a test_a\n"
	    "9 comparison - test_a test_a\n"
	    "10 comparison - test_a test_a\n"
	    "10 comparison - test_a test_a\n");
}
END_TEST

START_TEST(rule_unittest)
{
	ck_rows("class T(unittest.TestCase):\n"
	    "    def test_a(self):\n"
	    "        self.assertAlmostEqual(a, b, places=3)\n"
	    "        self.assertGreater(a, b)\n"
	    "        self.assertEqual(a, b)\n"
	    "        assertLess(a, b)\n"
	    "        self.assertNotAlmostEquals(a, b)\n",
	    "3 unittest T test_a test_a\n"
	    "4 unittest T test_a test_a\n"
	    "7 unittest T test_a test_a\n");
}
END_TEST

START_TEST(rule_torch_numpy)
{
	ck_rows("def test_t():\n"
	    "    torch.testing.assert_close(a, b)\n"
	    "    torch.testing.assert_allclose(a, b)\n"
	    "    assert_close(a, b)\n"
	    "    np.testing.assert_allclose(a, b)\n"
	    "    npt.assert_array_less(a, b)\n"
	    "    assert_almost_equal(a, b)\n"
	    "    x.y().assert_array_max_ulp(a)\n"
	    "    np.testing.assert_equal(a, b)\n"
	    "    torchx.assert_close(a, b)\n"
	    "    (np.testing\n"
	    "       .assert_allclose)(a, b)\n"
	    "    np.testing.assert_allclose \\\n"
	    "        (a, b)\n",
	    "2 torch - test_t test_t\n"
	    "3 torch - test_t test_t\n"
	    "4 torch - test_t test_t\n"
	    "5 numpy - test_t test_t\n"
	    "6 numpy - test_t test_t\n"
	    "7 numpy - test_t test_t\n"
	    "8 numpy - test_t test_t\n"
	    "11 numpy - test_t test_t\n"
	    "13 numpy - test_t test_t\n");
}
END_TEST

START_TEST(rule_approx)
{
	ck_rows("def test_p():\n"
	    "    assert x == pytest.approx(1)\n"
	    "    assert np.allclose(a, b), np.isclose(a, b)\n"
	    "    y = math.isclose(a, b)\n"
	    "    assert all(map(lambda v: torch.allclose(v, 1), xs))\n"
	    "    assert np.testing.assert_allclose(a, b) is None\n"
	    "    assert approx(1) == 1 < 2\n",
	    "2 approx - test_p test_p\n"
	    "3 approx - test_p test_p\n"
	    "5 approx - test_p test_p\n"
	    "6 numpy - test_p test_p\n"
	    "7 approx - test_p test_p\n"
	    "7 comparison - test_p test_p\n");
}
END_TEST

START_TEST(tolerance_and_source)
{
	struct flaky_scan_result *r = scan(
	    "def test_a(self):\n"
	    "    np.testing.assert_allclose(a, b, rtol=1e-6,\n"
	    "        atol = 0)\n"
	    "    assert_almost_equal(a, b, 6)\n"
	    "    self.assertAlmostEqual(a, b, 3, 'msg', delta=0.5)\n"
	    "    assert x == pytest.approx(1, 1e-3, abs=1e-9)\n"
	    "    assert x < 1\n");

	ck_assert_uint_eq(r->nfindings, 5);
	ck_assert_str_eq(r->findings[0].tolerance, "rtol=1e-6, atol=0");
	ck_assert_str_eq(r->findings[0].source,
	    "np.testing.assert_allclose(a, b, rtol=1e-6,");
	ck_assert_str_eq(r->findings[1].tolerance, "decimal=6");
	ck_assert_str_eq(r->findings[2].tolerance, "places=3, delta=0.5");
	ck_assert_str_eq(r->findings[3].tolerance, "rel=1e-3, abs=1e-9");
	ck_assert_str_eq(r->findings[4].tolerance, "");
	ck_assert_str_eq(r->findings[4].source, "assert x < 1");
	flaky_scan_result_free(r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("scan_rules");
	TCase	*tc = tcase_create("scan_rules");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, rule_comparison);
	tcase_add_test(tc, rule_unittest);
	tcase_add_test(tc, rule_torch_numpy);
	tcase_add_test(tc, rule_approx);
	tcase_add_test(tc, tolerance_and_source);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
