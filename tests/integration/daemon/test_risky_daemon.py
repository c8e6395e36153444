"""risky: true for a target: every other trigger runs only the tests with
static scan findings (docs/flaky.yaml.5), selected through pytest and
stored with runs.selected; the others run the whole suite."""
import os
import shutil

from conftest import query, wait_for

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "..",
                        "examples")
RISKY = ["geometry/test_shapes.py::TestCircle::test_area",
         "geometry/test_shapes.py::TestSquare::test_diagonal",
         "test_numbers.py::test_float_sum"]


def done(daemon, n):
    return query(daemon.db, "SELECT count(*) FROM runs WHERE status IN "
                 "('done', 'error')") == [(n,)]


def test_risky_every_other_trigger(daemon):
    shutil.copytree(os.path.join(EXAMPLES, "risky"),
                    os.path.join(daemon.dir, "risky"),
                    ignore=shutil.ignore_patterns("__pycache__", ".state"))
    daemon.write_config("targets:\n  - name: risky\n    command: "
                        "[/usr/bin/pytest, -p, no:cacheprovider, -p, "
                        "no:random_order]\n"
                        "    dir: risky\n    risky: true\n")
    daemon.start()
    for n in (1, 2, 3):
        daemon.ctl("run", "risky", check=0)
        wait_for("run %d to be stored" % n, lambda: done(daemon, n),
                 timeout=120)
    assert query(daemon.db, "SELECT selected, tests, status FROM runs "
                 "ORDER BY id") == [(None, 30, "done"), (3, 3, "done"),
                                    (None, 30, "done")]
    assert [n for (n,) in query(
        daemon.db, "SELECT t.name FROM results r JOIN tests t ON "
        "t.id = r.test_id WHERE r.run_id = 2 ORDER BY t.name")] == RISKY
    assert "target risky: risky: only the 3 tests with scan findings " \
        "run" in daemon.logtext()
    assert daemon.stop() == 0
