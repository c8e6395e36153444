"""Tests that always pass: most of a real suite."""
import pytest


@pytest.mark.parametrize("n", range(8))
def test_square(n):
    assert n * n == n ** 2
