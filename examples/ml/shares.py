"""The exact share of seeds each test of test_models.py fails for, from
the distributions of models.py (a seeded generator's draws taken as
uniform and independent, which the 10,000-seed brute force of
brute.py checks): /usr/bin/python3 shares.py."""
from fractions import Fraction
from math import comb, erfc, sqrt


def binomial_at_most(k, n, p):
    return float(sum(comb(n, i) * p ** i * (1 - p) ** (n - i)
                     for i in range(k + 1)))


def shares():
    each = erfc(3.9 / sqrt(2))
    return {
        "test_mean_estimate": erfc(1.6 / sqrt(2)),
        "test_accuracy": binomial_at_most(180, 200, Fraction(95, 100)),
        "test_class_means": 1 - (1 - each) ** 5,
        "test_mean_ample": erfc(10 / sqrt(2)),
        "test_accuracy_ample": binomial_at_most(100, 200,
                                                Fraction(95, 100)),
        "test_approx_ample": erfc(0.2 / (0.0906547 / sqrt(50)) / sqrt(2)),
        "test_seeded_fit": 0.0,
    }


if __name__ == "__main__":
    for name, p in shares().items():
        print("%-22s %.6g%s" % (name, p, "  (1 in %.0f)" % (1 / p)
                                if p > 0 else ""))
