"""Runs die with their supervisor: after kill -9 of flakyd its guard
(daemon/guard.c) kills every run's process group, the restarted flakyd
marks the run interrupted, and the guard itself holds nothing of flakyd's
and outlives only flakyd."""
import os
import re
import signal
import time

from conftest import PYTHON, UNITTEST_OK, unittest_target, wait_for

# A run's tree, all in the run's process group: two sleeps in the
# background of the shell, a Python process with a child of its own. The
# file names the group once every process of it started.
TREE = """#!/bin/sh
sleep 1000 &
sleep 1000 &
exec %s -c '
import os, subprocess, sys, time
subprocess.Popen(["sleep", "1000"])
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%%d\\n" %% os.getpgid(0))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(1000)
' "$1"
"""


def live_in_group(pgid):
    """Pids of the live (not zombie) processes of process group pgid."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(name))
    return found


def read_pgid(path):
    try:
        with open(path) as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def guard_pid(daemon):
    """The guard's pid, from its line in flakyd's log (-v)."""
    m = re.search(r"guard (\d+): ends the runs of flakyd %d" %
                  daemon.proc.pid, daemon.logtext())
    return int(m.group(1)) if m else None


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_kill9_takes_the_runs_process_groups_along(daemon):
    pgid_file = os.path.join(daemon.dir, "tree.pgid")
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write("tree.sh", TREE % PYTHON)
    daemon.write_config("targets:\n" + unittest_target("ok", None) +
                        "  - name: tree\n    command: [/bin/sh, tree.sh, "
                        "%s]\n    timeout: 10m\n" % pgid_file)
    daemon.start()
    pgid = None
    try:
        daemon.ctl("run", "ok", check=0)
        done = wait_for("the first run stored",
                        lambda: daemon.runs("r.status = 'done'"))
        daemon.ctl("run", "tree", check=0)
        pgid = wait_for("the tree's group", lambda: read_pgid(pgid_file))
        # sh, two sleeps, python (the shell exec'd it) and its sleep
        wait_for("the whole tree", lambda: len(live_in_group(pgid)) >= 4)
        assert daemon.runs("r.status = 'running'")

        t0 = time.monotonic()
        daemon.kill()
        wait_for("every process of the run's group gone",
                 lambda: live_in_group(pgid) == [], timeout=5, step=0.01)
        took = time.monotonic() - t0
        print("kill -9 to the run's group gone: %.3fs" % took)
        # Its log line comes after the kill.
        wait_for("the guard's account", lambda: "guard: flakyd is gone; "
                 "killed 1 run left running" in daemon.logtext(), timeout=5)

        # Restarted on the same database: the run is interrupted, the one
        # before it as it was, and nothing of the old runs is back.
        daemon.start()
        rows = daemon.runs()
        assert [(r[0], r[1], r[2]) for r in rows] == [
            (done[0][0], "ok", "done"), (rows[1][0], "tree", "interrupted")]
        assert "marked interrupted" in daemon.logtext()
        assert live_in_group(pgid) == []
        assert daemon.stop() == 0
    finally:
        if pgid is not None and live_in_group(pgid):
            os.killpg(pgid, signal.SIGKILL)


def test_guard_holds_nothing_and_leaves_with_flakyd(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write_config("targets:\n" + unittest_target("ok", None))
    daemon.start(extra=("-v",))
    pid = wait_for("the guard's log line", lambda: guard_pid(daemon))
    assert alive(pid)
    # Not our child: the strays sweep (every child of flakyd once no run
    # is in flight) never takes it.
    with open("/proc/%d/stat" % pid) as f:
        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
    assert ppid != daemon.proc.pid
    # Neither the database, its lock nor the socket: only /dev/null, the
    # log and its pipe.
    fds = {}
    for fd in os.listdir("/proc/%d/fd" % pid):
        fds[int(fd)] = os.readlink("/proc/%d/fd/%s" % (pid, fd))
    assert fds[0] == fds[1] == "/dev/null", fds
    assert fds[2] == daemon.logpath, fds
    others = [v for k, v in fds.items() if k > 2]
    assert len(others) == 1 and others[0].startswith("pipe:"), fds
    # The stop signals are not for it; a run and the sweep after it
    # leave it be.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        os.kill(pid, sig)
    daemon.ctl("run", "ok", check=0)
    wait_for("the run stored", lambda: daemon.runs("r.status = 'done'"))
    assert alive(pid)
    # A clean stop: nothing registered, the guard just leaves.
    assert daemon.stop() == 0
    wait_for("the guard to exit", lambda: not alive(pid), timeout=5)
    assert "flakyd is gone" not in daemon.logtext()
