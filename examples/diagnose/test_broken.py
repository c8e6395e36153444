"""Broken, not flaky: fails in every run."""


def test_discount_total():
    assert round(100 * 0.9, 2) == 91.0, "discount applied twice"
