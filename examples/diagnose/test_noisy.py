"""UNKNOWN: a noisy approximate assertion (unseeded randomness in real
life; here the run number seeds it, so it is reproducible)."""
import random


def test_sampled_mean(run_number):
    rng = random.Random(run_number * 7919)
    assert rng.random() > 0.1, "sample fell below the tolerance"
