"""Tests whose failure rates are known exactly, for analyze --until-settled
(docs/statistics.md). Each test counts its own executions in a file under
$FLAKY_DEMO_STATE (default: .state beside this file) and fails on a fixed
pattern of them, so after n executions its failures are a known function
of n whatever else runs: deterministic, yet a real pass/fail sequence."""
import fcntl
import os

STATE = os.environ.get("FLAKY_DEMO_STATE",
                       os.path.join(os.path.dirname(__file__), ".state"))


def execution(name):
    """This test's execution number, 1 for its first, under a lock so that
    runs at once (--jobs) never share a number."""
    os.makedirs(STATE, exist_ok=True)
    with open(os.path.join(STATE, name), "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        n = len(f.read()) + 1
        f.write(".")
        return n


def test_steady():
    """Never fails: stable, and it does not hold the runs up."""
    assert execution("steady") > 0


def test_half():
    """Fails on its even executions: 50%, critical (settles at 22 runs)."""
    n = execution("half")
    assert n % 2 == 1, f"execution {n}: even"


def test_three_in_five():
    """Fails on executions 1, 2 and 3 of every 5: 60%, critical."""
    n = execution("three_in_five")
    assert n % 5 not in (1, 2, 3), f"execution {n}"


def test_always():
    """Fails every time: broken."""
    n = execution("always")
    assert n < 0, f"execution {n}"
