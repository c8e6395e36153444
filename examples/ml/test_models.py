"""A machine-learning style suite for seed sweeps (issue 34, README.md):
approximate assertions that pass for most seeds and fail for a known
share, ones with ample headroom, one that seeds itself, one that fails
for a reason no seed controls, and exact ones the scan does not flag."""
import numpy as np
import pytest
from numpy.testing import assert_allclose

from counter import execution
from models import TARGETS, accuracy, class_means, sample_mean, seeded_fit


# Seed-sensitive: fails for 10.96% of seeds (P(|Z| >= 1.6)).
def test_mean_estimate():
    assert abs(sample_mean()) < 0.16


# Seed-sensitive, rarely: fails for 0.266% of seeds (Binomial(200, 0.95)
# at most 180).
def test_accuracy():
    assert accuracy() > 0.9


# Tolerance headroom: fails for 0.0481% of seeds, 1 in ~2,080 (each of
# the five means beyond 3.9 standard errors).
def test_class_means():
    assert_allclose(class_means(), TARGETS, rtol=0.05)


# Ample headroom: 10 standard errors, and 0.5 against 0.95.
def test_mean_ample():
    assert_allclose(sample_mean(), 0.0, atol=1.0)


def test_accuracy_ample():
    assert accuracy() > 0.5


def test_approx_ample():
    assert class_means()[0] == pytest.approx(1.0, rel=0.2)


# Seeds itself: the same margin in every run, whatever the seed.
def test_seeded_fit():
    assert_allclose(seeded_fit(), 3.0, rtol=0.01)


# Fails every third time it runs, whatever the seed: flaky, but its
# failures do not follow the seed (a replay of a failing seed passes).
def test_warm_cache():
    hit_ratio = 0.4 if execution("warm_cache") % 3 == 0 else 0.9
    assert hit_ratio >= 0.5


# Exact: no approximate assertion, not swept by --risky.
def test_shapes():
    assert class_means().shape == (5,)


def test_labels():
    assert list(np.unique([2, 1, 2])) == [1, 2]
