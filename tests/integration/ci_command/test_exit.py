"""flakyctl ci's exit: 2 with the reason whenever the evidence is
incomplete (a crash, a collection error, a summary that disagrees, a
retry that ran other tests or missed one, a time limit, a command that
does not run), never 0; 1 for what failed every attempt or was not
retried; the runs stored whatever the exit. A fake pytest (fakepytest)
prints the runs that a real one seldom does."""
import json
import os
import shutil
import sqlite3
import stat

import pytest

from conftest import HERE, clean_env, ctl

OK = "t.py::test_ok"
BAD = "t.py::test_bad"
OTHER = "t.py::test_other"


@pytest.fixture
def fake(tmp_path):
    """A function: run flakyctl ci over a fake pytest whose first run and
    retries print what plan says; (process, its runs as rows)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shutil.copy(os.path.join(HERE, "fakepytest"), bin_dir / "pytest")
    os.chmod(bin_dir / "pytest", stat.S_IRWXU)
    (tmp_path / "t.py").write_text("")

    def run(plan, *args):
        (tmp_path / "plan.json").write_text(json.dumps(plan))
        env = clean_env(tmp_path, FAKE_PLAN=str(tmp_path / "plan.json"),
                        PATH="%s:%s" % (bin_dir, os.environ["PATH"]))
        db = tmp_path / "f.db"
        p = ctl(["--db", str(db), "ci", "--target", "t"] + list(args) +
                ["--", "pytest", "t.py"], check=None, cwd=tmp_path, env=env)
        rows = []
        if db.exists():
            con = sqlite3.connect(db)
            rows = con.execute("SELECT status, selected, tests, failures, "
                               "incomplete FROM runs ORDER BY id").fetchall()
            con.close()
            db.unlink()
        return p, rows
    return run


def first(tests, **kw):
    return dict({"tests": tests}, **kw)


def test_flaky_passes_broken_fails(fake):
    p, rows = fake({"first": first({OK: "PASSED", BAD: "FAILED"}),
                    "retry": first({BAD: "PASSED"})})
    assert p.returncode == 0, p
    assert "flaky: %s: failed, then passed on retry 1 of 3" % BAD in p.stdout
    assert [r[1] for r in rows] == [None, 1]
    p, rows = fake({"first": first({OK: "PASSED", BAD: "FAILED"}),
                    "retry": first({BAD: "FAILED"})})
    assert p.returncode == 1, p
    assert "broken: %s: failed 4 of 4" % BAD in p.stdout
    assert len(rows) == 4


def test_a_crash_is_exit_2(fake):
    p, rows = fake({"first": first({OK: "PASSED", BAD: "FAILED"},
                                   die_after=1)})
    assert p.returncode == 2, p
    assert "killed by signal 11" in p.stdout, p
    assert len(rows) == 1 and rows[0][0] == "done"


def test_a_summary_that_disagrees_is_exit_2(fake):
    # it says one failed and exits 0
    p, _ = fake({"first": first({OK: "PASSED", BAD: "FAILED"}, exit=0)})
    assert p.returncode == 2, p
    assert "exited 0 but reported 1 failing test" in p.stdout
    # its count is not the tests it printed
    p, rows = fake({"first": first({OK: "PASSED", BAD: "FAILED"},
                                   summary={"passed": 5})})
    assert p.returncode == 2, p
    assert "incomplete" in p.stdout and rows[0][4] is not None, (p, rows)
    # it exits 1 with every test passed (a failure outside the tests)
    p, _ = fake({"first": first({OK: "PASSED"}, exit=1)})
    assert p.returncode == 2, p
    assert "exited 1 but reported no failing test" in p.stdout


def test_a_retry_of_other_tests_is_exit_2(fake):
    p, rows = fake({"first": first({OK: "PASSED", BAD: "FAILED"}),
                    "retry": first({BAD: "PASSED", OTHER: "PASSED"})})
    assert p.returncode == 2, p
    assert ("retry round 1: the retry ran '%s', which it was not asked "
            "for" % OTHER) in p.stdout, p
    # the retry is stored all the same: the evidence is kept
    assert len(rows) == 2
    p, _ = fake({"first": first({OK: "PASSED", BAD: "FAILED",
                                 OTHER: "FAILED"}),
                 "retry": first({BAD: "PASSED"})})
    assert p.returncode == 2, p
    assert "did not report '%s'" % OTHER in p.stdout, p


def test_the_budget(fake):
    # the first round starts within the budget and ends; none after it
    p, rows = fake({"first": first({OK: "PASSED", BAD: "FAILED"}),
                    "retry": first({BAD: "FAILED"}, sleep=0.3)},
                   "--budget", "100ms")
    assert p.returncode == 1, p
    assert ("broken: %s: failed 2 of 2" % BAD) in p.stdout, p
    assert "stopped: the budget ran out" in p.stdout, p
    assert len(rows) == 2
    # the default: a quarter of the first run, at least 10 s
    p, _ = fake({"first": first({OK: "PASSED", BAD: "FAILED"}),
                 "retry": first({BAD: "PASSED"})}, "--format", "json")
    assert json.loads(p.stdout)["budget_s"] == 10, p


def test_retries_zero_only_records(fake):
    p, rows = fake({"first": first({OK: "PASSED", BAD: "FAILED"})},
                   "--retries", "0")
    assert p.returncode == 1, p
    assert "failed 1 of 1, not retried: --retries 0 only records" in p.stdout
    assert len(rows) == 1


def test_no_run_no_green(tmp_path):
    env = clean_env(tmp_path)
    p = ctl(["--db", str(tmp_path / "f.db"), "ci", "--", "nosuch-runner-x"],
            check=2, cwd=tmp_path, env=env)
    assert "the command did not run" in p.stdout, p
    # a runner that cannot run only some tests: nothing retried, exit 1
    p = ctl(["--db", str(tmp_path / "f.db"), "ci", "--target", "tap", "--",
             "/bin/sh", "-c", "echo 'ok 1 - a'; echo 'not ok 2 - b'; "
             "echo 1..2; exit 1"], check=1, cwd=tmp_path, env=env)
    assert "not retried: the runner cannot run only the failed tests" in \
        p.stdout, p


def test_time_limit_and_collection_error(tmp_path):
    env = clean_env(tmp_path)
    (tmp_path / "test_slow.py").write_text(
        "import time\n\ndef test_slow():\n    time.sleep(60)\n")
    p = ctl(["--db", str(tmp_path / "f.db"), "ci", "--timeout", "2s",
             "--", "/usr/bin/pytest",
             "test_slow.py"], check=2, cwd=tmp_path, env=env, timeout=60)
    assert "killed at its time limit" in p.stdout, p
    (tmp_path / "test_broken.py").write_text("def test_x(:\n")
    (tmp_path / "test_fine.py").write_text("def test_y():\n    pass\n")
    p = ctl(["--db", str(tmp_path / "f.db"), "ci", "--", "/usr/bin/pytest",
             "test_broken.py", "test_fine.py"],
            check=2, cwd=tmp_path, env=env)
    assert ("a collection error: test_broken.py did not load, its tests "
            "did not run") in p.stdout, p
