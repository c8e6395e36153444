"""Execution counters for the demo: each test that needs one counts its
own executions in a file under $FLAKY_DEMO_STATE (default: .state beside
this file), so a flaky test fails on a known pattern of them whatever
else runs: deterministic, yet a real pass/fail sequence."""
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
