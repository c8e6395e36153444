"""flakyd takes a hung run's stacks before its target's timeout kills it
(issue 33), unless the target says stacks: false (docs/flaky.yaml.5)."""
from conftest import query, unittest_target, wait_for

HANGS = """import threading
import unittest


def wait_forever():
    threading.Event().wait()


class T(unittest.TestCase):
    def test_a_passes(self):
        self.assertTrue(True)

    def test_hang(self):
        wait_forever()
"""


def test_stacks_per_target(daemon):
    daemon.write("test_hang.py", HANGS)
    daemon.write_config(
        "targets:\n" +
        unittest_target("with", None, "test_hang",
                        "    dir: %s\n    timeout: 2s\n" % daemon.dir) +
        unittest_target("without", None, "test_hang",
                        "    dir: %s\n    timeout: 2s\n    stacks: false\n"
                        % daemon.dir))
    daemon.start()
    for name in ("with", "without"):
        daemon.ctl("run", name, check=0)
    wait_for("both runs to time out", lambda: query(
        daemon.db, "SELECT count(*) FROM runs WHERE status = 'timeout'")
        == [(2,)], timeout=60)
    rows = query(daemon.db, "SELECT target, test, kind, func, file FROM "
                 "hangs ORDER BY run_id")
    assert rows == [("with", "test_hang.T.test_hang", "blocked",
                     "wait_forever", "test_hang.py")], rows
    assert query(daemon.db, "SELECT t.name, d.runtime, d.tool, d.size > 0 "
                 "FROM stack_dumps d JOIN runs r ON r.id = d.run_id JOIN "
                 "targets t ON t.id = r.target_id") == [
        ("with", "python", "faulthandler", 1)]
    assert daemon.stop() == 0
