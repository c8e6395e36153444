/* scan, the seeding signal (seed.c): a test seeds itself, through its
 * fixtures, setup hooks, class bodies, autouse fixtures or the module. */
#include "buildconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"
#include "scan_test.h"
#include "util/util.h"

START_TEST(seeding)
{
	struct flaky_scan_result *r = scan(
	    "@pytest.fixture\n"
	    "def rng():\n"
	    "    return np.random.default_rng(0)\n"
	    "@pytest.fixture\n"
	    "def loose():\n"
	    "    return np.random.default_rng()\n"
	    "@pytest.fixture\n"
	    "def wrapped(rng):\n"
	    "    return rng\n"
	    "def test_self():\n"
	    "    np.random.seed(1)\n"
	    "    assert x < 1\n"
	    "def test_fixture(rng):\n"
	    "    assert x < 1\n"
	    "def test_fixture_chain(wrapped):\n"
	    "    pass\n"
	    "def test_loose(loose):\n"
	    "    assert x < 1\n"
	    "def test_kwarg():\n"
	    "    m = Model(random_state=42)\n"
	    "def test_kwarg_none():\n"
	    "    m = Model(random_state=None)\n"
	    "def test_torch():\n"
	    "    torch.manual_seed(0)\n"
	    "def test_tf():\n"
	    "    tf.random.set_seed(0)\n"
	    "def test_rs():\n"
	    "    r = RandomState(None)\n"
	    "class TestCls(unittest.TestCase):\n"
	    "    def setUp(self):\n"
	    "        random.seed(3)\n"
	    "    def test_m(self):\n"
	    "        self.assertLess(a, b)\n"
	    "class TestAuto:\n"
	    "    @pytest.fixture(autouse=True)\n"
	    "    def _seed(self):\n"
	    "        np.random.seed(0)\n"
	    "    def test_n(self):\n"
	    "        pass\n"
	    "class TestNone:\n"
	    "    def test_o(self):\n"
	    "        pass\n");

	ck_assert_int_eq(r->module_seeded, 0);
	ck_assert_uint_eq(r->ntests, 12);
	ck_assert_int_eq(seeded(r, "test_self"), 1);
	ck_assert_int_eq(seeded(r, "test_fixture"), 1);
	ck_assert_int_eq(seeded(r, "test_fixture_chain"), 1);
	ck_assert_int_eq(seeded(r, "test_loose"), 0);
	ck_assert_int_eq(seeded(r, "test_kwarg"), 1);
	ck_assert_int_eq(seeded(r, "test_kwarg_none"), 0);
	ck_assert_int_eq(seeded(r, "test_torch"), 1);
	ck_assert_int_eq(seeded(r, "test_tf"), 1);
	ck_assert_int_eq(seeded(r, "test_rs"), 0);
	ck_assert_int_eq(seeded(r, "test_m"), 1);
	ck_assert_int_eq(seeded(r, "test_n"), 1);
	ck_assert_int_eq(seeded(r, "test_o"), 0);
	/* Findings carry their test's flag. */
	ck_assert_int_eq(r->findings[0].line, 12);
	ck_assert_int_eq(r->findings[0].seeded, 1);
	ck_assert_int_eq(r->findings[2].line, 18);
	ck_assert_int_eq(r->findings[2].seeded, 0);
	ck_assert_int_eq(r->tests[r->findings[2].test_index].nfindings, 1);
	flaky_scan_result_free(r);

	/* Module-level code seeds every test in the file. */
	r = scan("import numpy as np\nnp.random.seed(0)\n"
	    "def test_a():\n    assert x < 1\n");
	ck_assert_int_eq(r->module_seeded, 1);
	ck_assert_int_eq(seeded(r, "test_a"), 1);
	ck_assert_int_eq(r->findings[0].seeded, 1);
	flaky_scan_result_free(r);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("scan_seed");
	TCase	*tc = tcase_create("scan_seed");
	SRunner	*sr;
	int	 failed;

	tcase_add_test(tc, seeding);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
