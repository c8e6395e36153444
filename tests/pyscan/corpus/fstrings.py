import numpy as np
import pytest


def test_fstrings():
    x = 3
    w = 10
    msg = f"{x:>{w}} {x!r} {x=} {{literal assert_allclose(x)}}"
    assert f"{x > 2}" == "True"
    assert f"{np.isclose(x, 3)}"
    y = f"""multi
line {np.testing.assert_allclose(x,
    3)} and {x < 4}
"""
    z = F'{f"{np.testing.assert_allclose(1, 1)}"}'
    assert f'{x:>5}' != ""
    r = rf"\d{x}" fr'{x}\n' Rf"{x}"
    assert pytest.approx(1) == 1, f"{x < 2}"
    s = f"{'a' if x <= 2 else 'b'}" f'{x!s:>{w}}' f"{x != 2}"
    n = f"\N{BULLET} {x}"
    t = f"{x}".join(["a"]).split().assert_allclose(5)
    return msg, y, z, r, s, n, t


class TestF:
    def test_nested_f(self):
        self.assertLess(f"{1}", f"{'{'}")
        assert f"{ {'a': 1}['a'] }" < "2"
