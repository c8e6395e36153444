"""The 'models' of the demo: each draws from NumPy's global generator, as
much research code does, so a test's outcome is a function of the seed
flaky's hook gives it. Each quantity has a distribution known exactly
(shares.py computes the share of seeds each test fails for); the brute
force of brute.py calls these functions directly, seed by seed."""
import numpy as np

TARGETS = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
# Each class mean averages 50 draws with sd 0.0906547 of its target: the
# tolerance rtol=0.05 is then 3.9 standard errors of every mean.
SPREAD = 0.05 * np.sqrt(50) / 3.9


def sample_mean(n=100):
    """The mean of n standard normal draws: N(0, 1/n)."""
    return float(np.random.standard_normal(n).mean())


def accuracy(n=200, p=0.95):
    """A classifier right with probability p on each of n samples:
    Binomial(n, p) / n."""
    return float((np.random.random(n) < p).sum()) / n


def class_means(per_class=50):
    """Each class's mean of per_class draws around its target."""
    noise = np.random.standard_normal((len(TARGETS), per_class))
    draws = TARGETS[:, None] * (1 + SPREAD * noise)
    return draws.mean(axis=1)


def seeded_fit():
    """A fit that seeds itself: the same result whatever the seed."""
    rng = np.random.default_rng(2024)
    return float(rng.normal(3.0, 0.5, 1000).mean())
