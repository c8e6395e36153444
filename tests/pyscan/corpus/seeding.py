import random
import unittest

import numpy as np
import pytest
import torch


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def loose():
    return np.random.default_rng()


@pytest.fixture
def wrapped(rng):
    return rng


@pytest.fixture
def cycle_a(cycle_b):
    return cycle_b


@pytest.fixture
def cycle_b(cycle_a):
    return cycle_a


def test_self():
    np.random.seed(1)
    assert np.random.rand() < 1


def test_fixture(rng):
    assert rng.random() < 1


def test_fixture_chain(wrapped):
    np.testing.assert_allclose(wrapped.random(), 0.5, atol=0.5)


def test_loose(loose):
    assert loose.random() < 1


def test_cycle(cycle_a):
    assert cycle_a < 1


def test_kwarg():
    m = dict(random_state=42)
    assert m["random_state"] > 0


def test_kwarg_none():
    m = dict(random_state=None)
    assert m is not None


def test_kwarg_bool():
    m = dict(random_state=True)
    assert m


def test_torch():
    torch.manual_seed(0)
    torch.testing.assert_close(torch.rand(1), torch.rand(1))


def test_helper_seeds():
    def helper():
        random.seed(3)
    helper()
    assert random.random() < 1


class TestCls(unittest.TestCase):
    def setUp(self):
        random.seed(3)

    def test_m(self):
        self.assertLess(random.random(), 1)

    class TestNestedInSeededClass:
        def test_inner(self):
            assert random.random() < 1


class TestAuto:
    @pytest.fixture(autouse=True)
    def _seed(self):
        np.random.seed(0)

    def test_n(self):
        assert np.random.rand() < 1


class TestClassBody:
    rs = np.random.RandomState(7)

    def test_p(self):
        assert self.rs.rand() < 1


class TestNone:
    def test_o(self):
        assert np.random.rand() < 1

    def test_rs_none(self):
        rs = np.random.RandomState(None)
        assert rs.rand() < 1
