"""The seed hook's measurements (python/flaky_seed): the margin of each
kind of approximate assertion it knows, per test and call site, under
pytest and unittest, a failing one included (its outcome unchanged)."""
import os
import subprocess

import pytest

from conftest import ROOT, clean_env

HOOK = os.path.join(ROOT, "python")
SUITE = '''import math
import unittest

import numpy as np
import pytest
from numpy.testing import assert_allclose


def test_allclose():
    assert_allclose(1.02, 1.0, rtol=0.05)


def test_approx():
    assert 1.1 == pytest.approx(1.0, rel=0.2)


def test_gt():
    x = 0.95
    assert x > 0.9


def test_isclose():
    assert math.isclose(1.0, 1.001, rel_tol=0.01)


def test_np_isclose():
    assert np.isclose(2.0, 2.01, rtol=0.01, atol=0)


def test_fails():
    assert_allclose(1.1, 1.0, rtol=0.05)


class T(unittest.TestCase):
    def test_almost(self):
        self.assertAlmostEqual(1.0, 1.004, places=2)

    def test_less(self):
        self.assertLess(0.3, 0.5)
'''
# test -> (line, kind, quantity, bound, assertion)
WANT = {
    "test_allclose": (10, "tol", 0.4, 1.0, "assert_allclose"),
    "test_approx": (14, "tol", 0.5, 1.0, "approx"),
    "test_gt": (19, "gt", 0.95, 0.9, "compare"),
    "test_isclose": (23, "tol", 0.001 / 0.01001, 1.0, "isclose"),
    "test_np_isclose": (27, "tol", 0.01 / 0.0201, 1.0, "isclose"),
    "test_fails": (31, "tol", 2.0, 1.0, "assert_allclose"),
    "test_almost": (36, "tol", 0.8, 1.0, "assertAlmostEqual"),
    "test_less": (39, "lt", 0.3, 0.5, "assertLess"),
}


def measure(tmp_path, argv):
    (tmp_path / "test_m.py").write_text(SUITE)
    out = tmp_path / "h.tsv"
    env = clean_env()
    env.update(FLAKY_SEED="3", PYTHONHASHSEED="3", PYTHONPATH=HOOK,
               FLAKY_HEADROOM=str(out), PYTHONDONTWRITEBYTECODE="1")
    if argv[0].endswith("pytest"):
        env["PYTEST_PLUGINS"] = "flaky_seed.pytest_plugin"
    p = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    rows = {}
    for line in out.read_text().splitlines():
        f = line.split("\t")
        rows[f[0].replace("::", ".").split(".")[-1]] = f
    return p, rows


@pytest.mark.parametrize("runner", ["pytest", "unittest"])
def test_margins(tmp_path, runner):
    argv = (["/usr/bin/pytest", "-q", "-o", "cache_dir=" +
             str(tmp_path / "c")] if runner == "pytest" else
            ["/usr/bin/python3", "-m", "unittest", "-v", "test_m"])
    p, rows = measure(tmp_path, argv)
    # the failing assertion still fails (pytest), the others pass
    if runner == "pytest":
        assert "1 failed, 7 passed" in p.stdout, p.stdout + p.stderr
        want = WANT
    else:
        # unittest runs the TestCase's tests only, both passing
        assert "Ran 2 tests" in p.stderr and "\nOK" in p.stderr, p.stderr
        want = {k: v for k, v in WANT.items() if k in ("test_almost",
                                                        "test_less")}
    for name, (line, kind, quantity, bound, assertion) in want.items():
        f = rows[name]
        assert f[1].endswith("test_m.py") and int(f[2]) == line, f
        assert f[3] == kind and f[10] == assertion, f
        assert float(f[4]) == pytest.approx(quantity, rel=1e-9), f
        assert float(f[5]) == bound, f
