"""flakyd shipping to the fleet's server, for the test_ship*.py tests: the
daemon harness of tests/integration/daemon (loaded from there, not
copied), a local database filled fast, and the check that every finished
local run is on the server exactly once."""
import importlib.util
import os
import sqlite3
import subprocess

_spec = importlib.util.spec_from_file_location(
    "daemon_harness", os.path.join(os.path.dirname(__file__), "..", "daemon",
                                   "conftest.py"))
_harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_harness)

Daemon = _harness.Daemon
wait_for = _harness.wait_for
query = _harness.query
UNITTEST_FAIL = """import unittest
class T(unittest.TestCase):
    def test_one(self):
        self.assertTrue(True)
    def test_two(self):
        self.assertEqual(2, 3)
"""
JUNIT = ('<testsuite name="s" tests="2"><testcase classname="a" name="t1" '
         'time="0.1"/><testcase classname="a" name="t2" time="0.2">'
         '<failure message="boom">x</failure></testcase></testsuite>\n')


def dbname(uri):
    """The database of a postgresql:///NAME?... URI."""
    return uri.split("///", 1)[1].split("?", 1)[0]


class ShipDaemon(Daemon):
    """A flakyd with fleet: in its config and a target that fails one of
    its two tests."""

    def configure(self, url, box="box-a", extra=""):
        self.write("t.py", UNITTEST_FAIL)
        fleet = "fleet:\n  url: %s\n" % url
        if box is not None:
            fleet += "  box: %s\n" % box
        return self.write_config(
            fleet + extra + "targets:\n  - name: demo\n"
            "    command: /usr/bin/python3 -m unittest -v t.py\n"
            "    dir: %s\n" % self.dir, jobs=1)

    def fleet(self):
        """status's fleet object."""
        return self.status()["fleet"]

    def wait_fleet(self, what, cond, timeout=30):
        """Poll status until cond(fleet) holds; that fleet object."""
        def check():
            f = self.fleet()
            return f if cond(f) else None
        return wait_for(what, check, timeout)

    def finished(self):
        """Local finished run ids."""
        return [r[0] for r in query(self.db, "SELECT id FROM runs WHERE "
                                    "status != 'running' ORDER BY id")]

    def local_results(self):
        return dict(query(self.db, "SELECT run_id, count(*) FROM results "
                          "GROUP BY run_id"))


def make_db(path, runs, results, start_ms=None):
    """A local database of runs finished runs of results results each,
    made in a second or two: flakyctl ingest creates it and its target,
    the rest is written straight in (the queue's triggers see it)."""
    d = os.path.dirname(path)
    xml = os.path.join(d, "seed.xml")
    with open(xml, "w") as f:
        f.write(JUNIT)
    subprocess.run([_harness.FLAKYCTL, "--db", path, "ingest", "--target",
                    "gen", xml], check=True, capture_output=True)
    con = sqlite3.connect(path)
    con.execute("PRAGMA synchronous=OFF")
    tid = con.execute("SELECT id FROM targets WHERE name = 'gen'").fetchone()[0]
    t0 = con.execute("SELECT started_ms FROM runs").fetchone()[0] \
        if start_ms is None else start_ms
    tests = []
    for i in range(results):
        con.execute("INSERT OR IGNORE INTO tests (target_id, name) VALUES "
                    "(?, ?)", (tid, "pkg/test_mod.py::test_%04d" % i))
    tests = [r[0] for r in con.execute(
        "SELECT id FROM tests WHERE target_id = ? AND name LIKE "
        "'pkg/%' ORDER BY name", (tid,))]
    for n in range(runs):
        started = t0 - (runs - n) * 1000
        cur = con.execute(
            "INSERT INTO runs (target_id, status, trigger, started_ms, "
            "ended_ms, duration_us, exit_code, tests, failures, kind) "
            "VALUES (?, 'done', 'schedule', ?, ?, 1000, 0, ?, ?, 'suite')",
            (tid, started, started + 1, results, 1 if results else 0))
        rid = cur.lastrowid
        con.executemany(
            "INSERT INTO results (run_id, position, test_id, outcome, "
            "duration_us, signature, message) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(rid, p, tests[p], 1 if p == n % max(results, 1) else 0,
              100 + p, "RACE" if p == n % max(results, 1) else None,
              "AssertionError" if p == n % max(results, 1) else None)
             for p in range(results)])
    con.commit()
    con.close()


def server_runs(pg, db, box):
    """(local_id, results on the server) of a box's runs, by local id."""
    return [(int(a), int(b)) for a, b in pg.query(
        "SELECT r.local_id, count(x.run_id) FROM runs r LEFT JOIN results x "
        "ON x.run_id = r.id WHERE r.box = '%s' GROUP BY r.id, r.local_id "
        "ORDER BY r.local_id, r.id" % box, db=db)]


def assert_exactly_once(pg, db, box, daemon):
    """Every finished local run on the server once, with all its results,
    and nothing else of the box."""
    local = daemon.finished()
    res = daemon.local_results()
    got = server_runs(pg, db, box)
    ids = [a for a, _ in got]
    assert len(ids) == len(set(ids)), "a run stored twice: %s" % [
        i for i in set(ids) if ids.count(i) > 1][:10]
    assert ids == local, "server %d runs, local %d finished" % (
        len(ids), len(local))
    for lid, n in got:
        assert n == res.get(lid, 0), "run %d: %d results on the server, " \
            "%d local" % (lid, n, res.get(lid, 0))
