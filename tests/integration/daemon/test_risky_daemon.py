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


def test_until_settled_reruns_open_tests(daemon):
    """until_settled: true: after the first 10 whole runs, a trigger's runs
    rerun only the tests still open (test_half, the last to settle, at 22
    runs), selected through pytest."""
    shutil.copytree(os.path.join(EXAMPLES, "demo-settled"),
                    os.path.join(daemon.dir, "settled"),
                    ignore=shutil.ignore_patterns("__pycache__", ".state"))
    daemon.write_config("targets:\n  - name: settles\n    command: "
                        "[/usr/bin/pytest, -p, no:cacheprovider, -p, "
                        "no:random_order, test_settled.py]\n"
                        "    dir: settled\n    until_settled: true\n"
                        "    runs: 40\n")
    daemon.start()
    daemon.ctl("run", "settles", check=0)
    wait_for("the trigger to settle", lambda: "target settles: settled "
             "after 22 of at most 40 runs" in daemon.logtext(), timeout=240)
    wait_for("the runs to be stored", lambda: done(daemon, 22), timeout=60)
    runs = query(daemon.db, "SELECT selected, tests FROM runs ORDER BY id")
    assert runs[:10] == [(None, 4)] * 10
    assert all(s is not None and s == t for s, t in runs[10:]), runs
    assert query(daemon.db, "SELECT DISTINCT t.name FROM results r JOIN "
                 "tests t ON t.id = r.test_id JOIN runs ru ON ru.id = "
                 "r.run_id WHERE ru.id = (SELECT max(id) FROM runs)") == \
        [("test_settled.py::test_half",)]
    assert daemon.stop() == 0
