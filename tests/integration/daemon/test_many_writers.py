"""Many writers, one database: flakyd running four targets every second,
three `flakyctl analyze` loops, an `ingest` loop and a `report` loop on the
same file for FLAKY_WRITERS_SECONDS (20 by default; set it higher for a
soak). Every command exits 0, no "database is locked" reaches anyone, every
finished run is stored exactly once, and the file is sound."""
import os
import sqlite3
import subprocess
import threading
import time

from conftest import FLAKYCTL, PYTHON, VALGRIND, query, unittest_target

SECONDS = float(os.environ.get("FLAKY_WRITERS_SECONDS", "20"))

# Each run appends one token to a file named after its target, as the last
# thing it does: a run that finished wrote exactly one line.
MARKED = """import os, unittest
class T(unittest.TestCase):
    def test_one(self):
        self.assertTrue(True)
    def test_two(self):
        self.assertEqual(2, 2)
    @classmethod
    def tearDownClass(cls):
        with open(os.environ.get("MARK", "marks-none"), "a") as f:
            f.write("%d\\n" % os.getpid())
"""

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="ci" tests="2" failures="{f}">
<testcase classname="ci.T" name="test_a" time="0.01"/>
<testcase classname="ci.T" name="test_b" time="0.02">{fail}</testcase>
<!-- {n} -->
</testsuite>
"""


def lines(path):
    try:
        with open(path) as f:
            return len(f.read().split())
    except OSError:
        return 0


def test_many_writers_one_database(daemon):
    if VALGRIND:
        return  # a minute of four writers under valgrind proves nothing more
    d = daemon
    d.write("test_marked.py", MARKED)
    body = "targets:\n"
    for i in range(4):
        body += unittest_target(
            "d%d" % i, "every 1s", module="test_marked",
            extra="    env:\n      MARK: %s\n" %
            os.path.join(d.dir, "marks-d%d" % i))
    d.write_config(body, jobs=2)
    d.start()

    env = dict(os.environ, NO_COLOR="1")
    env.pop("FLAKY_DB", None)
    env.pop("FLAKY_CONFIG", None)
    failures = []
    counts = {"analyze": 0, "ingest": 0, "report": 0}
    deadline = time.monotonic() + SECONDS

    def cmd(kind, args, extra_env=None):
        e = dict(env)
        if extra_env:
            e.update(extra_env)
        p = subprocess.run([FLAKYCTL, "--db", d.db] + args, cwd=d.dir,
                           env=e, capture_output=True, text=True,
                           timeout=300)
        if p.returncode != 0 or "locked" in p.stderr:
            failures.append((kind, args, p.returncode, p.stderr[-2000:]))
        counts[kind] += 1

    def analyze_loop(k):
        mark = os.path.join(d.dir, "marks-a%d" % k)
        while time.monotonic() < deadline:
            cmd("analyze", ["analyze", "--runs", "4", "--jobs", "2",
                            "--target", "a%d" % k, "--", PYTHON, "-m",
                            "unittest", "-v", "test_marked"],
                {"MARK": mark})

    def ingest_loop():
        n = 0
        while time.monotonic() < deadline:
            n += 1
            path = os.path.join(d.dir, "ci-%d.xml" % n)
            fail = '<failure message="boom">x</failure>' if n % 3 == 0 \
                else ""
            with open(path, "w") as f:
                f.write(JUNIT.format(f=int(bool(fail)), fail=fail, n=n))
            cmd("ingest", ["ingest", "--target", "ci", path])

    def report_loop():
        while time.monotonic() < deadline:
            cmd("report", ["report", "--since", "1d", "--format", "json"])

    threads = [threading.Thread(target=analyze_loop, args=(k,))
               for k in range(3)]
    threads += [threading.Thread(target=ingest_loop),
                threading.Thread(target=report_loop)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert d.stop() == 0
    assert failures == [], failures[:3]
    assert counts["analyze"] >= 3 and counts["ingest"] >= 3 and \
        counts["report"] >= 3, counts
    log = d.logtext()
    assert "locked" not in log and "could not be stored" not in log, log

    con = sqlite3.connect(d.db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert con.execute("PRAGMA foreign_key_check").fetchall() == []
        byname = dict(con.execute(
            "SELECT t.name, count(*) FROM runs r JOIN targets t ON "
            "t.id = r.target_id WHERE r.status = 'done' GROUP BY t.name"))
        running = con.execute("SELECT count(*) FROM runs WHERE status = "
                              "'running'").fetchone()[0]
    finally:
        con.close()
    assert running == 0
    # analyze: every run finished, and each is stored exactly once.
    for k in range(3):
        marks = lines(os.path.join(d.dir, "marks-a%d" % k))
        assert marks >= 4 and byname.get("a%d" % k) == marks, \
            (k, marks, byname)
    # flakyd: a run that finished wrote its mark and has its row; the stop
    # may have interrupted at most one run per slot after its mark.
    for i in range(4):
        marks = lines(os.path.join(d.dir, "marks-d%d" % i))
        done = byname.get("d%d" % i, 0)
        assert marks > 0 and marks - 2 <= done <= marks, (i, marks, done)
    # ingest: each file once.
    assert byname.get("ci") == counts["ingest"], (byname, counts)
    assert query(d.db, "SELECT count(*) FROM runs WHERE trigger = "
                 "'ingest'") == [(counts["ingest"],)]


SLOW = """import time, unittest
class T(unittest.TestCase):
    def test_slow(self):
        time.sleep(3)
"""


def test_flakyd_start_leaves_a_live_analyze_running(daemon):
    """A running row names its owner: flakyd starting on the database marks
    interrupted only rows whose owner is gone, never a live analyze's."""
    d = daemon
    d.write("test_slow.py", SLOW)
    d.write_config("targets:\n" + unittest_target("idle", None))
    env = dict(os.environ, NO_COLOR="1")
    env.pop("FLAKY_DB", None)
    env.pop("FLAKY_CONFIG", None)
    p = subprocess.Popen([FLAKYCTL, "--db", d.db, "analyze", "--runs", "1",
                          "--target", "live", "--", PYTHON, "-m", "unittest",
                          "-v", "test_slow"], cwd=d.dir, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        # The analyze's start row is written within its grouping second.
        deadline = time.monotonic() + 15
        while not query(d.db, "SELECT 1 FROM runs WHERE status = "
                        "'running'"):
            assert time.monotonic() < deadline, "no running row"
            time.sleep(0.05)
        d.start()
        assert query(d.db, "SELECT t.name, r.status FROM runs r JOIN "
                     "targets t ON t.id = r.target_id") == [
            ("live", "running")]
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    assert d.stop() == 0
    assert query(d.db, "SELECT t.name, r.status FROM runs r JOIN targets "
                 "t ON t.id = r.target_id") == [("live", "done")]
    assert "marked interrupted" not in d.logtext()
