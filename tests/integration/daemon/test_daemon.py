"""flakyd end to end: the real daemon, its socket, its database."""
import json
import os
import re
import signal
import sqlite3
import subprocess
import time

from conftest import (FLAKYD, PYTHON, UNITTEST_OK, pids_with, query,
                      unittest_target, wait_for)


def test_scheduled_runs_land(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write_config("targets:\n" + unittest_target("ok", "every 1s"))
    daemon.start()
    rows = wait_for("3 finished scheduled runs", lambda: (
        lambda r: r if len(r) >= 3 else None)(
        daemon.runs("r.status = 'done'")))
    for _id, name, status, trigger, tests, failures, _err in rows:
        assert (name, status, trigger, tests, failures) == \
            ("ok", "done", "schedule", 2, 0)
    # The per-test results are there too, two per run.
    n = query(daemon.db, "SELECT count(*) FROM results WHERE run_id = ?",
              (rows[0][0],))[0][0]
    assert n == 2
    assert daemon.stop() == 0
    assert re.search(r"target ok run 1/1: done, 2 tests, 0 failures, "
                     r"\d+\.\d\ds", daemon.logtext())
    # Nothing is left "running" after a clean stop.
    assert daemon.runs("r.status = 'running'") == []


def test_status_and_run_over_the_socket(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write_config("targets:\n" + unittest_target("manual", None) +
                        unittest_target("yearly", "@yearly"))
    daemon.start()
    st = daemon.status()
    assert st["ok"] is True and st["jobs"] == 2
    names = [t["name"] for t in st["targets"]]
    assert names == ["manual", "yearly"]
    assert st["targets"][0]["next_fire"] is None
    assert st["targets"][1]["next_fire"].endswith("-01-01T00:00:00+00:00")
    assert st["targets"][0]["last"] is None

    # flakyctl run: three runs of a manual-only target.
    p = daemon.ctl("run", "manual", "--runs", "3", check=0)
    assert "manual: 3 runs" in p.stdout
    rows = wait_for("3 manual runs", lambda: (lambda r: r if len(r) == 3
                    else None)(daemon.runs("r.status = 'done'")))
    assert {(r[1], r[3], r[4]) for r in rows} == {("manual", "manual", 2)}

    # status shows the last run, as table and as JSON.
    def last_done():
        t = daemon.status()["targets"][0]
        return t["last"] and t["state"] == "idle" and t
    t = wait_for("status to show the last run", last_done)
    assert t["last"]["status"] == "done" and t["last"]["tests"] == 2
    # Each run had its own TMPDIR (some made ahead for the runs that
    # followed); with the trigger over, none is left.
    tmp = os.path.join(daemon.dir, "tmp")
    wait_for("the run directories to go", lambda: not os.listdir(tmp))
    p = daemon.ctl("status", check=0)
    assert re.search(r"^manual\s+manual\s+-\s+idle\s+\S+ \S+\s+done\s+2\s+0$",
                     p.stdout, re.M), p.stdout
    p = daemon.ctl("status", "--format", "json", check=0)
    assert '"name":"yearly"' in p.stdout

    # Errors: an unknown target, a bad count, an unknown request, a long
    # line; the daemon answers each and goes on.
    p = daemon.ctl("run", "nosuch", check=2)
    assert "no target named 'nosuch'" in p.stderr
    assert daemon.ask("run manual 0")["ok"] is False
    assert "unknown request" in daemon.ask("frobnicate")["error"]
    assert "too long" in daemon.ask("status " + "x" * 5000)["error"]
    assert daemon.status()["ok"] is True

    # flakyctl finds the socket through the config's socket: only.
    p = subprocess.run([daemon_ctl_path(), "--config", daemon.config,
                        "status", "--format", "json"], capture_output=True,
                       text=True, env=dict(os.environ, FLAKY_SOCKET=""))
    assert p.returncode == 0, p.stderr
    assert daemon.stop() == 0
    # ... and says so clearly once the daemon is gone.
    p = daemon.ctl("status", check=2)
    assert "flakyd is not running? no socket at %s" % daemon.sock in p.stderr


def daemon_ctl_path():
    from conftest import FLAKYCTL
    return FLAKYCTL


SLOW = """import time, unittest
class T(unittest.TestCase):
    def test_slow(self):
        time.sleep(2)
"""


def test_sighup_good_and_bad_file(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write("test_slow.py", SLOW)
    good = "targets:\n" + unittest_target("a", "every 1s") + \
        unittest_target("slow", None, "test_slow")
    daemon.write_config(good)
    daemon.start()
    # A slow run in flight while we reload: it must not be disturbed.
    daemon.ctl("run", "slow", check=0)
    wait_for("the slow run to start",
             lambda: daemon.runs("t.name = 'slow' AND r.status = 'running'"))

    # A bad file: logged, the old schedule keeps running.
    with open(daemon.config, "a") as f:
        f.write("  - name: broken\n    command: [x]\n    schedule: \"61 * * * *\"\n")
    daemon.signal(signal.SIGHUP)
    wait_for("the reload failure in the log",
             lambda: "reload failed, the old schedule keeps running" in
             daemon.logtext())
    assert re.search(r"flaky\.yaml:\d+:\d+: ", daemon.logtext())
    p = daemon.ctl("reload", check=2)
    assert re.search(r"flaky\.yaml:\d+:\d+: ", p.stderr), p.stderr
    assert [t["name"] for t in daemon.status()["targets"]] == ["a", "slow"]
    n = len(daemon.runs("t.name = 'a'"))
    wait_for("target a to keep running",
             lambda: len(daemon.runs("t.name = 'a' AND r.status = 'done'"))
             > n)

    # A good file: a removed, b added; the slow run is not disturbed.
    daemon.write_config("targets:\n" + unittest_target("b", "every 1s") +
                        unittest_target("slow", None, "test_slow"))
    daemon.signal(signal.SIGHUP)
    wait_for("the new schedule",
             lambda: [t["name"] for t in daemon.status()["targets"]] ==
             ["b", "slow"])
    wait_for("a run of the new target b",
             lambda: daemon.runs("t.name = 'b' AND r.status = 'done'"))
    slow = wait_for("the slow run to end",
                    lambda: daemon.runs("t.name = 'slow' AND "
                                        "r.status != 'running'"))
    assert slow[0][2] == "done" and slow[0][4] == 1
    # The removed target keeps its history; no new runs after a while.
    a_runs = len(daemon.runs("t.name = 'a'"))
    assert a_runs > 0
    m = len(daemon.runs("t.name = 'b'"))
    wait_for("two more runs of b",
             lambda: len(daemon.runs("t.name = 'b'")) >= m + 2)
    assert len(daemon.runs("t.name = 'a'")) == a_runs
    assert daemon.stop() == 0


HUNG = """import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
# A grandchild that keeps our stdout open and ignores SIGTERM too.
subprocess.Popen([sys.executable, "-c", "import signal, time; "
                  "signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                  "time.sleep(1000)", "%s-grandchild"])
print("started", flush=True)
while True:
    time.sleep(1)
"""


def test_sigterm_ends_a_hung_child_within_grace(daemon):
    marker = "flakyhung%d" % os.getpid()
    daemon.markers.append(marker)
    daemon.write("hung.py", HUNG % marker)
    daemon.write_config(
        "targets:\n  - name: hung\n    command: [%s, hung.py, %s]\n"
        "    timeout: 10m\n" % (PYTHON, marker), grace="1s")
    daemon.start()
    daemon.ctl("run", "hung", check=0)
    wait_for("the hung run and its grandchild", lambda: len(pids_with(marker))
             >= 2)
    t0 = time.monotonic()
    daemon.signal(signal.SIGTERM)
    rc = daemon.wait_exit(1 + 2 + 1)
    took = time.monotonic() - t0
    assert rc == 0
    assert took < 1 + 2, took
    assert pids_with(marker) == []
    rows = daemon.runs()
    assert [(r[1], r[2]) for r in rows] == [("hung", "interrupted")]
    assert not os.path.exists(daemon.sock)


ESCAPE = """import subprocess, sys, time
# A grandchild leaving the run's process group: only the subreaper sees it.
p = subprocess.Popen(["setsid", sys.executable, "-c", "import time; "
                      "time.sleep(1000)", "%s-escaped"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
# Out of the group before this run ends (its own session), or the group
# kill at the reap may end it first.
deadline = time.monotonic() + 10
while time.monotonic() < deadline:
    with open("/proc/%%d/stat" %% p.pid) as f:
        if f.read().rsplit(")", 1)[1].split()[3] == str(p.pid):
            break
    time.sleep(0.001)
print("ok")
"""


def test_setsid_escapee_is_ended_when_no_run_is_in_flight(daemon):
    marker = "flakyescape%d" % os.getpid()
    daemon.markers.append(marker)
    daemon.write("escape.py", ESCAPE % marker)
    daemon.write_config("targets:\n  - name: escape\n    command: [%s, "
                        "escape.py]\n" % PYTHON)
    daemon.start()
    daemon.ctl("run", "escape", check=0)
    wait_for("the run to finish", lambda: daemon.runs("r.status = 'done'"))
    wait_for("the escaped grandchild to be ended",
             lambda: pids_with(marker) == [], timeout=10)
    assert "killing stray process" in daemon.logtext()
    assert daemon.stop() == 0


def test_missing_command_is_an_error_run_each_time(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write_config("targets:\n  - name: missing\n    command: "
                        "[no-such-command-flaky]\n    schedule: \"every 1s\"\n"
                        + unittest_target("ok", "every 1s"))
    daemon.start()
    rows = wait_for("3 error runs", lambda: (lambda r: r if len(r) >= 3
                    else None)(daemon.runs("t.name = 'missing'")))
    for r in rows:
        assert r[2] == "error"
        assert "no-such-command-flaky: command not found" in r[6]
    wait_for("the good target to run too",
             lambda: daemon.runs("t.name = 'ok' AND r.status = 'done'"))
    assert daemon.proc.poll() is None
    assert daemon.stop() == 0


def test_second_daemon_on_the_same_database_refuses(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write_config("targets:\n" + unittest_target("ok", None))
    daemon.start()
    other = daemon.write_config("targets:\n" + unittest_target("ok", None),
                                name="other.yaml")
    # The same database, another socket.
    with open(other) as f:
        text = f.read().replace(daemon.sock, daemon.sock + "2")
    with open(other, "w") as f:
        f.write(text)
    p = subprocess.run([FLAKYD, "--config", other, "--foreground"],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 2
    assert "another flakyd pid %d already uses this database" % \
        daemon.proc.pid in p.stderr, p.stderr
    assert daemon.status()["ok"] is True
    assert daemon.stop() == 0


def test_check_config(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    cfg = daemon.write_config("targets:\n" +
                              unittest_target("daily", "30 4 * * *") +
                              unittest_target("manual", None))
    p = subprocess.run([FLAKYD, "--config", cfg, "--check-config"],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 0, p.stderr
    assert re.search(r"^daily\t\d{4}-\d\d-\d\dT04:30:00\+00:00\t30 4 \* \* \*$",
                     p.stdout, re.M), p.stdout
    assert re.search(r"^manual\tmanual only$", p.stdout, re.M)
    cfg = daemon.write_config("targets:\n  - name: bad\n    command: [%s]\n"
                              "    schedule: \"* 25 * * *\"\n" % PYTHON)
    p = subprocess.run([FLAKYD, "--config", cfg, "--check-config"],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 1
    lines = p.stderr.strip().split("\n")
    assert len(lines) == 1 and re.match(r".*flaky\.yaml:\d+:\d+: ", lines[0])


def test_overlap_skip_and_queue(daemon):
    daemon.write("test_slow.py", SLOW)
    daemon.write_config("targets:\n" +
                        unittest_target("skip", "every 1s", "test_slow") +
                        unittest_target("queue", "every 1s", "test_slow",
                                        "    overlap: queue\n"))
    daemon.start()
    wait_for("skipped triggers of both",
             lambda: len(daemon.runs("r.status = 'skipped' AND "
                                     "t.name = 'skip'")) >= 2 and
             daemon.runs("r.status = 'skipped' AND t.name = 'queue'"),
             timeout=20)
    # queue: the trigger after a running one waits and then runs, so
    # runs follow each other without a gap of a whole interval.
    wait_for("two queued runs done",
             lambda: len(daemon.runs("t.name = 'queue' AND "
                                     "r.status = 'done'")) >= 2, timeout=20)
    st = {t["name"]: t for t in daemon.status()["targets"]}
    assert st["skip"]["queued"] is False
    assert daemon.stop() == 0


def test_catch_up_after_downtime(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write_config("targets:\n" + unittest_target("daily", "0 3 * * *")
                        + unittest_target("nocatch", "0 3 * * *",
                                          extra="    catch_up: false\n"))
    daemon.start()
    assert daemon.stop() == 0
    # As if the last trigger was two days ago.
    con = sqlite3.connect(daemon.db)
    con.execute("UPDATE targets SET last_fire_ms = ?",
                (int(time.time() * 1000) - 2 * 86400 * 1000,))
    con.commit()
    con.close()
    daemon.start()
    rows = wait_for("the catch-up run",
                    lambda: daemon.runs("r.status = 'done'"))
    assert [(r[1], r[3]) for r in rows] == [("daily", "catch-up")]
    assert daemon.stop() == 0
    assert len(daemon.runs()) == 1
    # It ran once: the next start does not catch up again.
    daemon.start()
    assert daemon.stop() == 0
    assert len(daemon.runs()) == 1


def test_database_busy_keeps_the_run_for_a_retry(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write_config("targets:\n" + unittest_target("ok", None))
    daemon.start()
    # Hold the write lock longer than the busy timeout while a run ends.
    con = sqlite3.connect(daemon.db, timeout=10, isolation_level=None)
    con.execute("BEGIN IMMEDIATE")
    try:
        daemon.ctl("run", "ok", check=0)
        # Another writer's lock is said only once it lasted 10 s.
        wait_for("the failed write in the log",
                 lambda: "for a retry" in daemon.logtext() and
                 daemon.status()["unstored"] == 1, timeout=30)
    finally:
        con.execute("ROLLBACK")
        con.close()
    rows = wait_for("the run stored on retry",
                    lambda: daemon.runs("r.status = 'done'"), timeout=20)
    assert rows[0][4] == 2
    assert "takes writes again" in daemon.logtext()
    assert daemon.stop() == 0


def test_kill9_during_runs_twenty_times(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write("test_slow.py", SLOW.replace("sleep(2)", "sleep(0.3)"))
    daemon.write_config("targets:\n" + unittest_target("ok", "every 1s") +
                        unittest_target("slow", "every 1s", "test_slow"))
    finished = {}
    for i in range(20):
        daemon.start()
        # Kill while a run is in flight, after at least one more ended.
        before = len(finished)

        def state():
            rows = daemon.runs("r.status != 'running'")
            running = daemon.runs("r.status = 'running'")
            return (len(rows) > before and running) and rows
        try:
            rows = wait_for("a finished run and one in flight", state,
                            timeout=20, step=0.02)
        except AssertionError as e:
            # Seen once in CI under ASan, not since in 12 loops: what the
            # daemon and the database said, for the next time.
            raise AssertionError("%s (iteration %d; runs: %s; log: %s)" % (
                e, i, daemon.runs("1")[-6:], daemon.logtext()[-3000:]))
        daemon.kill()
        for r in rows:
            finished[r[0]] = r[2]
    # Restart once more: stale rows become interrupted.
    daemon.start()
    assert daemon.stop() == 0
    con = sqlite3.connect(daemon.db)
    assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    stored = dict(con.execute("SELECT id, status FROM runs").fetchall())
    con.close()
    for rid, status in finished.items():
        assert stored.get(rid) == status, (rid, status, stored.get(rid))
    assert "running" not in stored.values()
    assert list(stored.values()).count("interrupted") >= 20
    assert "marked interrupted" in daemon.logtext()


def test_sd_notify_ready_reload_stop_and_watchdog(daemon, tmp_path):
    import socket as so
    path = str(tmp_path / "notify.sock")
    ns = so.socket(so.AF_UNIX, so.SOCK_DGRAM)
    ns.bind(path)
    ns.settimeout(10)
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write_config("targets:\n" + unittest_target("ok", None))
    env = dict(os.environ, NOTIFY_SOCKET=path, WATCHDOG_USEC="200000")
    log = open(daemon.logpath, "a")
    daemon.proc = subprocess.Popen([FLAKYD, "--config", daemon.config],
                                   stdout=log, stderr=subprocess.STDOUT,
                                   env=env)
    msgs = []

    def got(prefix):
        def f():
            try:
                msgs.append(ns.recv(4096).decode())
            except OSError:
                pass
            return any(m.startswith(prefix) for m in msgs)
        return f
    try:
        wait_for("READY=1", got("READY=1"))
        # Under systemd it does not fork: the pid we started answers.
        assert daemon.status()["pid"] == daemon.proc.pid
        msgs.clear()
        wait_for("two watchdog pings",
                 lambda: got("WATCHDOG=1")() and
                 sum(m == "WATCHDOG=1" for m in msgs) >= 2)
        msgs.clear()
        daemon.signal(signal.SIGHUP)
        wait_for("RELOADING=1", got("RELOADING=1"))
        assert "MONOTONIC_USEC=" in [m for m in msgs
                                     if m.startswith("RELOADING=1")][0]
        wait_for("READY=1 after the reload", got("READY=1"))
        daemon.signal(signal.SIGTERM)
        wait_for("STOPPING=1", got("STOPPING=1"))
        assert daemon.wait_exit(10) == 0
    finally:
        ns.close()


FLOOD = "cat /dev/zero"


def test_endless_output_keeps_memory_bounded(daemon):
    daemon.write_config("targets:\n  - name: flood\n    command: \"%s\"\n"
                        "    timeout: 2s\n" % FLOOD, grace="1s")
    daemon.start()
    daemon.ctl("run", "flood", check=0)
    rows = wait_for("the flood to time out",
                    lambda: daemon.runs("r.status != 'running'"))
    assert rows[0][2] == "timeout"
    produced, dropped, kept = query(
        daemon.db, "SELECT output_bytes, output_dropped, o.size FROM runs r "
        "JOIN outputs o ON o.id = r.stdout_id")[0]
    assert produced > 100 * 1024 * 1024 and dropped > 0
    assert kept <= 1024 * 1024 + 100
    with open("/proc/%d/status" % daemon.proc.pid) as f:
        hwm = int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))
    assert hwm < 64 * 1024, hwm     # kB
    assert daemon.stop() == 0


def test_peer_credentials_are_checked(daemon):
    import shutil
    import tempfile
    # A directory everybody may enter (the test's own is private).
    sockdir = tempfile.mkdtemp(prefix="flakyd-peer-")
    os.chmod(sockdir, 0o755)
    daemon.sock = os.path.join(sockdir, "flakyd.sock")
    try:
        _peer_check(daemon)
    finally:
        daemon.stop()
        shutil.rmtree(sockdir, ignore_errors=True)


def _peer_check(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write_config("targets:\n" + unittest_target("ok", None))
    daemon.start()
    assert oct(os.stat(daemon.sock).st_mode & 0o777) == "0o660"
    if os.geteuid() != 0:
        return
    # Open the file to everybody: the SO_PEERCRED check still refuses a
    # user who is neither root, the daemon's user nor in its group.
    os.chmod(daemon.sock, 0o666)
    code = ("import socket, os\n"
            "os.setgid(65534); os.setuid(65534)\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            "s.connect(%r)\n"
            "s.sendall(b'status\\n')\n"
            "print(repr(s.recv(100)))\n" % daemon.sock)
    p = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True,
                       timeout=10)
    assert p.stdout.strip() in ("b''", ""), (p.stdout, p.stderr)
    wait_for("the refusal in the log",
             lambda: "control: refused a connection from uid 65534" in
             daemon.logtext())
    assert daemon.status()["ok"] is True
    assert daemon.stop() == 0


def test_revision_per_trigger(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    repo = os.path.join(daemon.dir, "repo")
    os.mkdir(repo)
    with open(os.path.join(repo, "test_ok.py"), "w") as f:
        f.write(UNITTEST_OK)
    git = ["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "x"], check=True)
    head = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    daemon.write_config(
        "targets:\n" +
        unittest_target("cmd", None, extra="    revision: \"echo rev-$((40 + 2))\"\n") +
        unittest_target("git", None, extra="    dir: repo\n"))
    daemon.start()
    daemon.ctl("run", "cmd", "--runs", "2", check=0)
    daemon.ctl("run", "git", check=0)
    rows = wait_for("three runs", lambda: (lambda r: r if len(r) == 3 else
                    None)(query(daemon.db, "SELECT t.name, r.revision FROM "
                                "runs r JOIN targets t ON t.id = r.target_id "
                                "WHERE r.status = 'done' ORDER BY r.id")))
    assert sorted(rows) == [("cmd", "rev-42"), ("cmd", "rev-42"),
                            ("git", head)]
    assert daemon.stop() == 0


APPROX = """import unittest
class Model(unittest.TestCase):
    def test_close(self):
        self.assertAlmostEqual(1.0, 1.1, places=3)
    def test_fine(self):
        self.assertTrue(True)
"""


def test_signatures_scan_and_retention(daemon):
    """The config's signatures classify the daemon's runs, scan: true stores
    the target's approximate assertions, and retention: prunes raw results
    older than the limit while the rollups stay."""
    daemon.write("test_model.py", APPROX)
    daemon.write("old.txt", "test_fine (test_model.Model.test_fine) ... ok\n"
                 "\n----------------------------------------------------------"
                 "------------\nRan 1 test in 0.001s\n\nOK\n")
    # An old run ingested into the same target, 400 days back.
    p = subprocess.run([daemon_ctl_path(), "--db", daemon.db, "ingest",
                        "--target", "model", "--at", "2025-01-01T00:00:00Z",
                        os.path.join(daemon.dir, "old.txt")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert query(daemon.db, "SELECT count(*) FROM results")[0][0] == 1
    daemon.write_config("retention: 180d\n"
                        "signatures:\n  - name: APPROX\n"
                        "    patterns: ['within [0-9]+ places']\n"
                        "targets:\n" + unittest_target(
                            "model", None, module="test_model",
                            extra="    scan: true\n"))
    daemon.start()
    daemon.ctl("run", "model", check=0)
    wait_for("the run", lambda: daemon.runs("r.status = 'done' AND "
                                            "r.trigger = 'manual'"))
    sig = query(daemon.db, "SELECT signature FROM test_results "
                "WHERE outcome = 'fail'")
    assert sig == [("APPROX",)], sig
    risks = query(daemon.db, "SELECT test, category, seeded FROM static_risks")
    assert risks == [("test_model.Model.test_close", "unittest", 0)], risks
    # The old run's results are gone, its day in the rollups stays.
    old = query(daemon.db, "SELECT count(*) FROM results r JOIN runs u "
                "ON u.id = r.run_id WHERE u.started_ms < 1735776000000")
    assert old == [(0,)]
    assert query(daemon.db, "SELECT sum(runs) FROM rollups WHERE day = 20089") == [(1,)]
    assert daemon.stop() == 0


ORDER = """import os
import unittest
STATE = {}
COUNT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "count")


class T(unittest.TestCase):
    def test_a_setup(self):
        # Leaves state behind in every other suite run: deterministic.
        n = int(open(COUNT).read()) if os.path.exists(COUNT) else 0
        with open(COUNT, "w") as f:
            f.write(str(n + 1))
        if n % 2 == 0:
            STATE["user"] = "stale"

    def test_b_fresh(self):
        self.assertNotIn("user", STATE)
"""


def test_confirm_true_reruns_unsettled_tests_alone(daemon):
    """confirm: true: after a trigger's runs flakyd reruns the unsettled
    tests alone through isolate:, stores them as trigger 'confirm', and
    stops when they settle or the budget ends. test_b_fresh fails in every
    other suite run (after test_a_setup's leftover) and never alone, so the
    runs alone make it ORDER_DEPENDENT; the stable test is not rerun."""
    daemon.write("test_order.py", ORDER)
    victim = "test_order.T.test_b_fresh"
    daemon.write_config(
        "targets:\n" + unittest_target(
            "order", None, module="test_order",
            extra="    isolate: \"%s -m unittest -v {test}\"\n"
                  "    confirm: true\n    confirm_budget: 600s\n" % PYTHON))
    daemon.start()
    daemon.ctl("run", "order", "--runs", "10", check=0)
    end = wait_for("confirming to end", lambda: re.search(
        r"target order: (confirmed|confirm budget spent)(?:, | after )"
        r"(\d+) runs alone", daemon.logtext()), timeout=660)
    # The log says so when the last run alone ends; it is stored a moment
    # later, with the pipeline's next write (seen: 11 of 12 in the
    # database right after the line).
    wait_for("the runs alone stored", lambda: query(
        daemon.db, "SELECT count(*) FROM runs WHERE trigger = 'confirm' "
        "AND status != 'running'") == [(int(end.group(2)),)])
    # The budget is far beyond 12 runs alone: spent, it would end them
    # early on a loaded machine (11 runs seen with 120 s), not the rule.
    assert "confirm budget spent" not in daemon.logtext(), daemon.logtext()
    suite = query(daemon.db, "SELECT count(*), sum(failures) FROM runs "
                  "WHERE trigger = 'manual' AND status = 'done'")
    assert suite == [(10, 5)], suite
    alone = query(daemon.db, "SELECT r.status, count(*), sum(x.outcome = "
                  "'pass'), group_concat(DISTINCT x.test) FROM runs r JOIN "
                  "test_results x ON x.run_id = r.id WHERE r.trigger = "
                  "'confirm' GROUP BY r.status")
    assert len(alone) == 1, alone
    status, n, passed, tests = alone[0]
    assert status == "done" and tests == victim and passed == n, alone
    # Passes alone every time: settled as soon as chance is under 1%,
    # C(10,5)/C(10+n,5) < 0.01 first at n = 12 runs alone.
    assert n == 12, alone
    assert "target order: confirmed, 12 runs alone" in daemon.logtext()
    p = daemon.ctl("--format", "json", "show", victim, check=0)
    d = json.loads(p.stdout)
    assert d["alone"]["passes_alone"] is True, d["alone"]
    assert d["signature"] == "ORDER_DEPENDENT", d["signature"]
    st = json.loads(daemon.ctl("--format", "json", "status", check=0).stdout)
    (t,) = [t for t in st["targets"] if t["name"] == "order"]
    assert t["state"] == "idle", t
    # Runs alone are kind alone: not the target's last run, not in the
    # suite's rate or run count, their verdict beside it.
    assert query(daemon.db, "SELECT kind, count(*) FROM runs GROUP BY "
                 "kind ORDER BY kind") == [("alone", 12), ("suite", 10)]
    (last,) = query(daemon.db, "SELECT max(id) FROM runs WHERE trigger = "
                    "'manual'")[0]
    assert t["last"]["run_id"] == last, t
    rep = json.loads(daemon.ctl("--format", "json", "report", check=0).stdout)
    assert rep["runs"]["total"] == 10, rep["runs"]
    assert rep["runs"]["by_kind"]["alone"] == 12, rep["runs"]
    (b,) = [x for x in rep["tests"] if x["test"] == victim]
    assert (b["runs"], b["failures"]) == (10, 5), b
    assert b["alone"] == {"runs": 12, "failures": 0}, b
    assert daemon.stop() == 0
