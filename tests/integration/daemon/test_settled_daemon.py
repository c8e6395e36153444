"""until_settled: true for a target: a trigger's runs stop once every
failing test's tier is settled (docs/statistics.md), not at runs:."""
from conftest import query, unittest_target, wait_for

BROKEN = """import unittest


class T(unittest.TestCase):
    def test_ok(self):
        pass

    def test_broken(self):
        self.fail("always")
"""


def test_until_settled_stops_trigger_early(daemon):
    # test_broken settles (above 20%) after 3 runs; no trigger stops before
    # 10 (FLAKY_SETTLE_MIN_RUNS), so 10 of at most runs: 50
    daemon.write("test_broken.py", BROKEN)
    daemon.write_config("targets:\n" + unittest_target(
        "settles", None, module="test_broken",
        extra="    until_settled: true\n    runs: 50\n"))
    daemon.start()
    daemon.ctl("run", "settles", check=0)
    wait_for("the trigger to settle", lambda: "target settles: settled after "
             "10 of at most 50 runs" in daemon.logtext(), timeout=120)
    wait_for("the runs to be stored", lambda: query(
        daemon.db, "SELECT count(*) FROM runs WHERE status = 'done'") ==
        [(10,)], timeout=60)
    wait_for("the target to be idle", lambda: [
        x for x in daemon.status()["targets"]
        if x["name"] == "settles"][0]["state"] == "idle", timeout=30)
    assert query(daemon.db, "SELECT count(*) FROM runs") == [(10,)]
    assert daemon.stop() == 0
