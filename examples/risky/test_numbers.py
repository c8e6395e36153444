"""Ten tests of arithmetic; one compares floats approximately (a finding
of flakyctl scan) and is stable."""
import math

import pytest


def test_add():
    assert 2 + 2 == 4


def test_mul():
    assert 6 * 7 == 42


def test_div():
    assert 7 // 2 == 3


def test_mod():
    assert 7 % 3 == 1


def test_pow():
    assert 2 ** 10 == 1024


def test_abs():
    assert abs(-5) == 5


def test_round():
    assert round(2.5) == 2


def test_gcd():
    assert math.gcd(12, 18) == 6


def test_sum():
    assert sum(range(5)) == 10


def test_float_sum():
    """Risky: an approximate assertion, and stable."""
    assert sum([0.1] * 10) == pytest.approx(1.0)
