"""The run lifecycle as analyze and confirm use it: another writer's lock is
waited out, nothing of a run outlives analyze, and the write lock is not
held while runs run."""
import os
import sqlite3
import subprocess
import threading
import time

from conftest import PYTHON, run

SUITE = """import os, time, unittest
class T(unittest.TestCase):
    def test_a(self):
        time.sleep(float(os.environ.get("NAP", "0")))
    def test_b(self):
        pass
"""


def write_suite(tmp_path):
    (tmp_path / "test_s.py").write_text(SUITE)


def test_another_writers_lock_is_waited_out(tmp_path):
    """A writer holds the lock for 3 s, longer than a write's busy wait:
    analyze says nothing of it, exits 0 and stores every run once."""
    write_suite(tmp_path)
    db = str(tmp_path / "f.db")
    # makes the database; no runner output, so exit 2
    run(["--db", db, "analyze", "--runs", "1", "--target", "first", "--",
         "true"], cwd=str(tmp_path), check=2)
    con = sqlite3.connect(db, isolation_level=None, timeout=10,
                          check_same_thread=False)
    con.execute("BEGIN IMMEDIATE")
    release = threading.Timer(3.0, lambda: con.execute("ROLLBACK"))
    release.start()
    try:
        t0 = time.monotonic()
        p = run(["--db", db, "analyze", "--runs", "6", "--jobs", "2",
                 "--target", "s", "--",
                 PYTHON, "-m", "unittest", "-v", "test_s"],
                cwd=str(tmp_path), check=0)
        assert time.monotonic() - t0 >= 2.5
    finally:
        release.join()
        con.close()
    assert "locked" not in p.stderr, p.stderr
    con = sqlite3.connect(db)
    rows = con.execute("SELECT r.status, r.kind, r.tests FROM runs r JOIN "
                       "targets t ON t.id = r.target_id WHERE t.name = 's'"
                       ).fetchall()
    con.close()
    assert rows == [("done", "suite", 2)] * 6, rows


def test_the_write_lock_is_free_while_runs_run(tmp_path):
    """While a 2-second run runs, another process can write at once."""
    write_suite(tmp_path)
    db = str(tmp_path / "f.db")
    p = subprocess.Popen([os.environ.get("FLAKYCTL"), "--db", db, "analyze",
                          "--runs", "2", "--", PYTHON, "-m", "unittest", "-v",
                          "test_s"], cwd=str(tmp_path),
                         env=dict(os.environ, NAP="2"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                con = sqlite3.connect(db, isolation_level=None, timeout=0.2)
                if con.execute("SELECT count(*) FROM runs WHERE status = "
                               "'running'").fetchone()[0] > 0:
                    break
                con.close()
            except sqlite3.OperationalError:
                pass
            assert time.monotonic() < deadline, "no run started"
            time.sleep(0.05)
        # A run is in flight: the lock is free for another writer.
        t0 = time.monotonic()
        con.execute("BEGIN IMMEDIATE")
        con.execute("ROLLBACK")
        con.close()
        assert time.monotonic() - t0 < 0.2
    finally:
        out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err


def test_escapees_do_not_outlive_analyze(tmp_path):
    """A test that leaves a setsid process behind: analyze ends it before it
    exits, and says so."""
    marker = "flaky-escapee-%d" % os.getpid()
    (tmp_path / "test_e.py").write_text(
        "import subprocess, unittest\n"
        "class T(unittest.TestCase):\n"
        "    def test_leak(self):\n"
        "        subprocess.Popen(['setsid', 'sh', '-c', "
        "'exec -a %s sleep 300'], start_new_session=True)\n" % marker)
    db = str(tmp_path / "f.db")
    try:
        p = run(["--db", db, "analyze", "--runs", "2", "--", PYTHON, "-m",
                 "unittest", "-v", "test_e"], cwd=str(tmp_path), check=0)
        left = subprocess.run(["pgrep", "-f", marker], capture_output=True,
                              text=True).stdout.split()
        assert left == [], (left, p.stderr)
    finally:
        subprocess.run(["pkill", "-9", "-f", marker])


def test_junit_results_leave_no_warning(tmp_path):
    """pytest -q with --junitxml: the file holds every test, so the run is
    complete and no 'no test result was found' is recorded."""
    write_suite(tmp_path)
    db = str(tmp_path / "f.db")
    # PYTEST_ADDOPTS cleared inside: stdout is pytest -q's, which names
    # no passing test (the runner is recognized, its results are not).
    run(["--db", db, "analyze", "--runs", "2", "--junit", "out.xml", "--",
         "sh", "-c", "PYTEST_ADDOPTS= /usr/bin/pytest -q -o "
         "cache_dir=.cache --junitxml=out.xml test_s.py"],
        cwd=str(tmp_path), check=0)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT tests, error, incomplete FROM runs").fetchall()
    con.close()
    assert rows == [(2, None, None)] * 2, rows


def test_runner_version_for_every_runner(demo, tmp_path):
    """Runners that print no version get the one their installation tells:
    unittest the interpreter's, Jest its package.json's; pytest its own."""
    db = str(tmp_path / "v.db")
    write_suite(tmp_path)
    run(["--db", db, "analyze", "--runs", "1", "--target", "u", "--",
         PYTHON, "-m", "unittest", "test_s"], cwd=str(tmp_path), check=0)
    run(["--db", db, "analyze", "--runs", "1", "--target", "p", "--",
         "/usr/bin/pytest", "test_s.py"], cwd=str(tmp_path), check=0)
    jest = demo("demo-jest")
    run(["--db", db, "analyze", "--runs", "1", "--target", "j", "--",
         "node_modules/.bin/jest"], cwd=jest)
    con = sqlite3.connect(db)
    got = dict((t, (r, v)) for t, r, v in con.execute(
        "SELECT t.name, r.runner, r.runner_version FROM runs r JOIN "
        "targets t ON t.id = r.target_id"))
    con.close()
    major = "Python %d.%d" % os.sys.version_info[:2]
    assert got["u"] == ("unittest", major), got
    assert got["p"][0] == "pytest" and got["p"][1].startswith("7."), got
    with open(os.path.join(jest, "node_modules", "jest", "package.json")) as f:
        want = "jest " + __import__("json").load(f)["version"]
    assert got["j"] == ("jest", want), got
