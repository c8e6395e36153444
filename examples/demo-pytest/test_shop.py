"""A demo suite whose tests fail with known probabilities.

The rates are the truth the integration tests check flaky's counts
against: test_payment_retry fails 30% of the time, test_cache_expiry 10%,
test_legacy_api always, the rest never. Randomness comes from the OS, so
every run is independent (the tests assert with bounds whose false-alarm
rate is negligible).
"""
import os
import random
import time

import pytest

rng = random.SystemRandom()


def flip(p):
    return rng.random() < p


def test_payment_retry():
    time.sleep(0.02)
    assert not flip(0.30), "payment gateway answered 502 after 3 retries"


def test_cache_expiry():
    assert not flip(0.10), "cache entry expired too early: ttl=%d" % rng.randint(1, 99)


def test_legacy_api():
    assert {"v": 1} == {"v": 2}


def test_cart_total():
    assert sum([1, 2, 3]) == 6


def test_checkout_flow():
    assert "paid".upper() == "PAID"


@pytest.mark.parametrize("name", ["plain", "with space", "ünïcødé", "br[ack]ets", 'q"uote'])
def test_names(name):
    assert name


@pytest.mark.skip(reason="not implemented")
def test_refunds():
    pass


class TestInventory:
    def test_reserve(self):
        assert True

    def test_release(self):
        assert not flip(0.50), "released twice"
