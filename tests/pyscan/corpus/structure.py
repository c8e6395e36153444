import math
import unittest
import numpy as np
import numpy.testing as npt
import torch
import pytest
from torch.testing import assert_close


@pytest.mark.parametrize("x", [np.testing.assert_allclose(1, 1)])
def test_decorated(x):
    assert x >= 0


@pytest.fixture
def seeded_rng():
    return np.random.default_rng(42)


class TestOuter(unittest.TestCase):
    tol = npt.assert_allclose(1, 1)

    def setUp(self):
        np.random.seed(0)

    def test_a(self):
        self.assertAlmostEqual(1.0, 1.0, places=3)
        self.assertGreater(2, 1); self.assertLess(1, 2)

    class Inner:
        def helper(self):
            assert_close(1, 1)

            def deeper():
                torch.testing.assert_close(1, 1)
            return deeper

        async def test_async(self):
            await self.x.assertLessEqual(1, 2)
            async with a as b:
                assert b <= 3
            async for i in range(3):
                assert i < 3

    def test_lambda(self):
        f = lambda a, b: math.isclose(a, b)
        assert all(map(lambda v: v < 1, [0]))
        assert (lambda: 1)() == 1, lambda: 2 > 1


def test_outer():
    def helper():
        class Local:
            def method(self):
                npt.assert_array_almost_equal(1, 1, decimal=5)
        return Local
    if True: assert 1 < 2
    for i in range(2): assert_allclose(i, i)
    while False: pass
    with pytest.raises(ValueError): npt.assert_allclose(1, 2)
    try: assert torch.allclose(1, 1)
    except Exception: pass
    else: assert math.isclose(1, 1, rel_tol=1e-9)
    finally: pass
    return helper


def test_one_liner(): assert 1 > 0; np.testing.assert_allclose(1, 1)
class TestOneLine: x = npt.assert_allclose(1, 1)


def not_a_test():
    assert 1 < 2
    assert 1 == 2, "no ordering here: x < y is in the message"
    assert 1 == 1 < 2
    assert (1 <
            2)
    assert [x for x in range(3) if x > 1]
    assert {k: v for k, v in {}.items() if v >= 1} == {}
    assert a >> 2 and b << 3
    assert a -1 and c is not None


def test_chains():
    (np.testing
     .assert_allclose)(1, 1)
    (
        np).testing.assert_allclose(1, 1)
    np.testing.assert_allclose \
        (1, 1)
    x[0].assert_almost_equal(1)
    f()(1).assert_approx_equal(1)
    get()["k"].assert_array_max_ulp(1)
    torch.cuda.assert_allclose(1)
    torch.testing.assert_allclose(1, 1)
    (torch).testing.assert_close(1, 1)
    torchx.testing.assert_close(1, 1)
    assert_allclose.__call__(1)
    assertLess(1, 2)
    self.assertNotAlmostEquals(1, 2)
    self.assertAlmostEquals(1, 1, delta=0.1)
    assert not np.allclose(1, 2)
    assert x == pytest.approx(1, rel=1e-6, abs=1e-12)
    approx(1)
    assert_array_almost_equal_nulp(1, 1)
    (lambda: npt.assert_allclose(1, 1))()
    print(np.isclose(1, 1))
    assert [np.isclose(1, 1)], np.isclose(1, 2)


match = 1
case = 2
match(x)


def test_match(v):
    match v:
        case 1: assert v < 2
        case [a, b] if a > b:
            npt.assert_allclose(a, b)
        case _:
            pass
