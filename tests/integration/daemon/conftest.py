"""The real flakyd on a private directory (config, database, socket) per
test: started, waited for by polling its socket with a deadline, and always
killed in teardown."""
import json
import os
import shlex
import signal
import socket
import sqlite3
import subprocess
import time

import pytest

FLAKYD = os.environ.get("FLAKYD", "flakyd")
FLAKYCTL = os.environ.get("FLAKYCTL", "flakyctl")
PYTHON = "/usr/bin/python3"
VALGRIND = os.environ.get("FLAKY_VALGRIND") == "1"
VALGRIND_ARGS = ["valgrind", "--leak-check=full",
                 "--show-leak-kinds=definite,indirect",
                 "--errors-for-leak-kinds=definite,indirect",
                 "--error-exitcode=99", "-q"]


def wait_for(what, cond, timeout=15.0, step=0.05):
    """Poll cond() until it returns something true; fail after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.1fs waiting for %s" %
                                 (timeout, what))
        time.sleep(step)


def query(db, sql, args=()):
    """Rows from the database, read-only, never holding a lock."""
    if not os.path.exists(db):
        return []
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=5)
    try:
        return con.execute(sql, args).fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        con.close()


def pids_with(marker):
    """Processes whose command line holds marker."""
    p = subprocess.run(["pgrep", "-f", marker], capture_output=True,
                       text=True)
    return [int(x) for x in p.stdout.split()]


class Daemon:
    def __init__(self, tmp):
        self.dir = str(tmp)
        self.config = os.path.join(self.dir, "flaky.yaml")
        self.db = os.path.join(self.dir, "flaky.db")
        self.sock = os.path.join(self.dir, "flakyd.sock")
        self.logpath = os.path.join(self.dir, "flakyd.log")
        self.proc = None
        self.markers = []

    def write_config(self, body, jobs=2, grace="1s", name="flaky.yaml"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write("database: %s\nsocket: %s\njobs: %d\nkill_grace: %s\n"
                    "timezone: UTC\n%s" % (self.db, self.sock, jobs, grace,
                                          body))
        return path

    def write(self, name, text):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write(text)

    def start(self, config=None, wait=True, extra=()):
        env = dict(os.environ)
        for k in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "JOURNAL_STREAM"):
            env.pop(k, None)
        # The runs' directories under the test's own: what a kill -9
        # leaves behind goes with it (under systemd, PrivateTmp= does it).
        env["TMPDIR"] = os.path.join(self.dir, "tmp")
        os.makedirs(env["TMPDIR"], exist_ok=True)
        self.log = open(self.logpath, "a")
        self.proc = subprocess.Popen(
            [FLAKYD, "--config", config or self.config, "--foreground"] +
            list(extra), stdout=self.log, stderr=subprocess.STDOUT,
            env=env)
        if wait:
            self.wait_ready()
        return self.proc

    def ask(self, line):
        """One raw request over the socket; the parsed reply."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        try:
            s.connect(self.sock)
            s.sendall(line.encode() + b"\n")
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
        finally:
            s.close()
        return json.loads(buf)

    def status(self):
        return self.ask("status")

    def wait_ready(self, timeout=15):
        def ready():
            if self.proc.poll() is not None:
                raise AssertionError("flakyd exited with %s:\n%s" %
                                     (self.proc.returncode, self.logtext()))
            try:
                return self.status()["ok"]
            except (OSError, ValueError):
                return False
        wait_for("flakyd to answer on its socket", ready, timeout)

    def ctl(self, *args, check=None):
        cmd = [FLAKYCTL, "--config", self.config] + list(args)
        if VALGRIND:
            cmd = VALGRIND_ARGS + cmd
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, NO_COLOR="1"))
        assert p.returncode != 99, "valgrind: %s" % p.stderr
        if check is not None:
            assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
        return p

    def runs(self, where="1", args=()):
        return query(self.db, "SELECT r.id, t.name, r.status, r.trigger, "
                     "r.tests, r.failures, r.error FROM runs r JOIN targets "
                     "t ON t.id = r.target_id WHERE %s ORDER BY r.id" % where,
                     args)

    def logtext(self):
        try:
            with open(self.logpath) as f:
                return f.read()
        except OSError:
            return ""

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait_exit(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError("flakyd did not exit within %.1fs" % timeout)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def cleanup(self):
        self.kill()
        for m in self.markers:
            for pid in pids_with(m):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass


@pytest.fixture
def daemon(tmp_path):
    d = Daemon(tmp_path)
    yield d
    d.cleanup()


UNITTEST_OK = """import unittest
class T(unittest.TestCase):
    def test_one(self):
        self.assertTrue(True)
    def test_two(self):
        self.assertEqual(2, 2)
"""


def unittest_target(name, schedule, module="test_ok", extra=""):
    """A target running a unittest module of the test's directory."""
    s = "  - name: %s\n    command: [%s, -m, unittest, -v, %s]\n" % (
        name, PYTHON, module)
    if schedule is not None:
        s += "    schedule: \"%s\"\n" % schedule
    return s + extra
