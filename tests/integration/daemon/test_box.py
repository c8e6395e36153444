"""Issue 15: the box flakyd records with every run (box: of its YAML,
$FLAKY_BOX before it), and a bad name refused with where it came from."""
import os
import subprocess

from conftest import FLAKYD, UNITTEST_OK, query, unittest_target, wait_for


def test_runs_record_the_box_of_the_yaml(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write_config("box: build-07\ntargets:\n" +
                        unittest_target("manual", None))
    daemon.start()
    daemon.ctl("run", "manual", "--runs", "2", check=0)
    rows = wait_for("2 runs", lambda: (lambda r: r if len(r) == 2 else None)(
        query(daemon.db, "SELECT box FROM runs WHERE status = 'done'")))
    assert rows == [("build-07",), ("build-07",)]


def test_a_bad_box_is_refused(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    cfg = daemon.write_config("box: 'build 07'\ntargets:\n" +
                              unittest_target("manual", None))
    p = subprocess.run([FLAKYD, "--config", cfg, "--check-config"],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 1
    lines = p.stderr.strip().split("\n")
    assert len(lines) == 1, p.stderr
    assert lines[0].endswith("flaky.yaml:6:6: box: box name \"build \": ' ' "
                             "at byte 6: expected letters, digits, '.', '-' "
                             "or '_'"), p.stderr
    cfg = daemon.write_config("targets:\n" + unittest_target("manual", None))
    env = dict(os.environ, FLAKY_BOX="a/b")
    for k in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "JOURNAL_STREAM"):
        env.pop(k, None)
    p = subprocess.run([FLAKYD, "--config", cfg, "--foreground"], env=env,
                       capture_output=True, text=True, timeout=30)
    assert p.returncode != 0
    assert "$FLAKY_BOX: box name \"a/\": '/' at byte 2" in p.stderr, p.stderr
    # nothing was started: no run in the database
    assert not os.path.exists(daemon.db) or query(
        daemon.db, "SELECT count(*) FROM runs") == [(0,)]
