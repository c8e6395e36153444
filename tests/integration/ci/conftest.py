"""Shared set-up for the CI output tests: the real flakyctl on evidence
ingested from generated pytest -v outputs, each run's outcomes fixed, so
that every tier and count below is exact."""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FLAKYCTL = os.path.abspath(os.environ.get(
    "FLAKYCTL", os.path.join(ROOT, "build", "cli", "flakyctl")))
EXAMPLES = os.path.join(ROOT, "examples")
RUNS = 10

# test id -> the runs (0..9) in which it fails; None: skipped every run.
ODD = 'odd,dir/test_a:b.py::test_names[x&y<z>"q%]'
PLAN = {
    "test_shop.py::test_payment_retry": {0, 3, 6},      # 30%: critical
    "test_shop.py::test_cache_expiry": {5},             # 10%: warning
    "test_shop.py::test_legacy_api": set(range(RUNS)),  # broken
    "test_shop.py::test_cart_total": set(),             # stable
    "test_shop.py::test_refunds": None,                 # skipped
    ODD: {1, 2, 4},                                     # 30%: critical
}
MESSAGE = "AssertionError: gateway said 502, retry 3: 50% of 2"

# The test files as the checkout holds them, for the lines of the tests.
SHOP = """import pytest


def test_payment_retry():
    assert False


def test_cache_expiry():
    assert False


def test_legacy_api():
    assert False
"""
ODD_FILE = "\n\n\ndef test_names(name):\n    assert name\n"


def output_of_run(r):
    """Run r as pytest -v prints it."""
    lines = ["=" * 29 + " test session starts " + "=" * 30,
             "platform linux -- Python 3.11.2, pytest-7.2.1, pluggy-1.0.0",
             "cachedir: /tmp/run-%d" % r,
             "collecting ... collected %d items" % len(PLAN), ""]
    failed = passed = skipped = 0
    for test, fails in PLAN.items():
        if fails is None:
            lines.append("%s SKIPPED (not yet)  [ 50%%]" % test)
            skipped += 1
        elif r in fails:
            lines.append("%s FAILED  [ 50%%]" % test)
            failed += 1
        else:
            lines.append("%s PASSED  [ 50%%]" % test)
            passed += 1
    lines.append("=" * 20 + " short test summary info " + "=" * 20)
    for test, fails in PLAN.items():
        if fails is not None and r in fails:
            lines.append("FAILED %s - %s" % (test, MESSAGE))
    lines.append("==== %d failed, %d passed, %d skipped in 0.10s ====" %
                 (failed, passed, skipped))
    return "\n".join(lines) + "\n"


def ctl(args, check=0, cwd=None, env=None, timeout=120):
    """flakyctl with args; its exit code must be check."""
    p = subprocess.run([FLAKYCTL] + args, capture_output=True, text=True,
                       cwd=cwd, env=env, timeout=timeout)
    if check is not None:
        assert p.returncode == check, (args, p.returncode, p.stdout, p.stderr)
    return p


@pytest.fixture(scope="session")
def evidence(tmp_path_factory):
    """A checkout (cwd for flakyctl) with the test files, and a database
    with RUNS ingested runs of target shop."""
    d = tmp_path_factory.mktemp("ci")
    (d / "test_shop.py").write_text(SHOP)
    (d / "odd,dir").mkdir()
    (d / "odd,dir" / "test_a:b.py").write_text(ODD_FILE)
    files = []
    for r in range(RUNS):
        f = d / ("run%d.txt" % r)
        f.write_text(output_of_run(r))
        files.append(str(f))
    db = str(d / "flaky.db")
    ctl(["--db", db, "ingest", "--target", "shop"] + files)
    return d, db


def have(prog):
    return shutil.which(prog) is not None
