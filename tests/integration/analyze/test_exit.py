"""analyze's exit codes: 2 with the first runs' errors when no run gave a
test result, 130 after ^C with what finished stored."""
import os
import signal
import sqlite3
import subprocess
import time

from conftest import FLAKYCTL, PYTEST, PYTHON, run

SLOW = "import time\n\ndef test_slow():\n    time.sleep(0.5)\n"


def test_every_run_timed_out_exits_2_with_the_reason(tmp_path):
    db = str(tmp_path / "t.db")
    p = run(["--db", db, "analyze", "--runs", "2", "--timeout", "1s",
             "--grace", "1s", "--", "/bin/sh", "-c", "sleep 30"],
            cwd=tmp_path, check=2)
    lines = p.stderr.splitlines()
    i = lines.index("flakyctl: no run produced test results; the first runs:")
    why = lines[i + 1:i + 3]
    assert len(why) == 2, lines
    for n, line in enumerate(why, 1):
        assert line.startswith("  run %d: timeout, killed by signal " % n)
        assert "killed at its time limit" in line
    assert "sqlite3" not in p.stderr and "runs.error" not in p.stderr
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM runs WHERE status = 'timeout'"
                       ).fetchone() == (2,)


def test_no_runner_output_exits_2_naming_the_exit_code(tmp_path):
    p = run(["--db", str(tmp_path / "n.db"), "analyze", "--runs", "1", "--",
             "/bin/sh", "-c", "echo hello; exit 3"], cwd=tmp_path, check=2)
    assert "flakyctl: no run produced test results; the first run:\n" \
        "  run 1: done, exit code 3: no known test runner output" in p.stderr
    # singular: one run
    assert "1 runs" not in p.stderr


def test_pytest_stopped_before_any_test_says_why(tmp_path):
    """A conftest that cannot be imported, a path not found and a usage
    error: pytest exits 4 having run nothing. Each run says pytest's own
    reason, not "no known test runner output"."""
    broken, plain = tmp_path / "broken", tmp_path / "plain"
    broken.mkdir()
    plain.mkdir()
    (broken / "conftest.py").write_text("import no_such_module_flaky_it\n")
    (broken / "test_ok.py").write_text("def test_ok():\n    pass\n")
    cases = [
        (broken, [], "pytest: could not import conftest '%s': "
         "ModuleNotFoundError: No module named 'no_such_module_flaky_it'"
         % (broken / "conftest.py")),
        (plain, ["missing_dir"],
         "pytest: stopped: file or directory not found: missing_dir"),
        (plain, ["--no-such-flag"],
         "pytest: stopped: unrecognized arguments: --no-such-flag"),
    ]
    for cwd, extra, why in cases:
        p = run(["--db", str(tmp_path / "s.db"), "analyze", "--runs", "1",
                 "--", PYTEST, "-o", "cache_dir=" + str(tmp_path / "c")]
                + extra, cwd=cwd, check=2)
        assert "  run 1: done, exit code 4: %s\n" % why in p.stderr, \
            p.stderr


def test_runs_with_results_still_exit_0(tmp_path):
    (tmp_path / "test_ok.py").write_text("def test_ok():\n    pass\n")
    p = run(["--db", str(tmp_path / "o.db"), "analyze", "--runs", "2", "--",
             PYTHON, "-m", "pytest", "-q", "test_ok.py"], cwd=tmp_path,
            check=0)
    assert "no run produced" not in p.stderr


def count(db, sql):
    """One number from the database, or None while it is not there yet."""
    try:
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=5)
        try:
            return con.execute(sql).fetchone()[0]
        finally:
            con.close()
    except sqlite3.OperationalError:
        return None


def test_sigint_exits_130_with_the_finished_runs_stored(tmp_path):
    (tmp_path / "test_slow.py").write_text(SLOW)
    db = str(tmp_path / "s.db")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKY_")}
    env["NO_COLOR"] = "1"
    proc = subprocess.Popen(
        [FLAKYCTL, "--db", db, "analyze", "--runs", "200", "--", PYTHON,
         "-m", "pytest", "-q", "test_slow.py"], cwd=tmp_path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # wait until a run has ended and is committed, then ^C
        deadline = time.monotonic() + 120
        while (count(db, "SELECT count(*) FROM runs WHERE status = 'done'")
               or 0) < 1:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no run stored in 120 s"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (out, err)
    assert "Interrupt: stopping" in err
    done = count(db, "SELECT count(*) FROM runs WHERE status = 'done'")
    stopped = count(db, "SELECT count(*) FROM runs WHERE status = "
                    "'interrupted'")
    total = count(db, "SELECT count(*) FROM runs")
    assert done >= 1 and stopped <= 1 and total == done + stopped, \
        (done, stopped, total)
    # every finished run has its result, and the report was printed
    assert count(db, "SELECT count(*) FROM results JOIN runs r ON r.id = "
                 "run_id WHERE r.status = 'done'") == done
    assert "test_slow" in out or "stable" in out


FLIP = ("import os\n\ndef test_flip():\n"
        "    n = int(open('n').read()) if os.path.exists('n') else 0\n"
        "    open('n', 'w').write(str(n + 1))\n"
        "    assert n % 2 == 0\n")
# alone: the first run at once, every later one after a long sleep (so
# that ^C finds it in flight)
ALONE = ("#!/bin/sh\nk=$(cat k 2>/dev/null || echo 0)\necho $((k + 1)) > k\n"
         "[ \"$k\" -ge 1 ] && sleep 120\n"
         "exec /usr/bin/pytest -p no:random_order -v \"$@\"\n")


def test_confirm_sigint_exits_130_with_the_finished_runs_stored(tmp_path):
    (tmp_path / "test_flip.py").write_text(FLIP)
    (tmp_path / "alone.sh").write_text(ALONE)
    (tmp_path / "alone.sh").chmod(0o755)
    (tmp_path / "flaky.yaml").write_text(
        "targets:\n  - name: flip\n"
        "    command: /usr/bin/pytest -p no:random_order -v test_flip.py\n"
        "    schedule: every 1h\n    isolate: ./alone.sh {test}\n")
    db = str(tmp_path / "c.db")
    run(["--db", db, "analyze", "--runs", "4", "--target", "flip", "--",
         "/usr/bin/pytest", "-p", "no:random_order", "-v", "test_flip.py"],
        cwd=tmp_path, check=0)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKY_")}
    proc = subprocess.Popen(
        [FLAKYCTL, "--db", db, "--config", str(tmp_path / "flaky.yaml"),
         "confirm", "--budget", "10m"], cwd=tmp_path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    alone = "SELECT count(*) FROM runs WHERE kind = 'alone' AND status = "
    try:
        deadline = time.monotonic() + 120
        while (count(db, alone + "'done'") or 0) < 1:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no run alone in 120 s"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (out, err)
    assert count(db, alone + "'done'") == 1
    assert count(db, alone + "'interrupted'") == 1
    assert "test_flip" in out
