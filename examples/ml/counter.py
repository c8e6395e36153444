"""A counter of a test's executions in a file under $FLAKY_DEMO_STATE
(default .state beside this file): what no seed controls, as a cache, a
clock or a shared service would, yet deterministic for the tests."""
import fcntl
import os

STATE = os.environ.get("FLAKY_DEMO_STATE",
                       os.path.join(os.path.dirname(__file__), ".state"))


def execution(name):
    """This test's execution number, 1 for its first."""
    os.makedirs(STATE, exist_ok=True)
    with open(os.path.join(STATE, name), "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        n = len(f.read()) + 1
        f.write(".")
        return n
