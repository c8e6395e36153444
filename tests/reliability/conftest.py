"""The reliability suite (issue 14): hostile and oversized inputs, stuck
peers and kill -9, each against the real flakyd and flakyctl under a hard
memory limit (prlimit --as) and a time bound. Every wait polls with a
deadline; every process started is killed in teardown."""
import json
import os
import signal
import socket
import sqlite3
import subprocess
import time

import pytest

FLAKYD = os.environ.get("FLAKYD", "flakyd")
FLAKYCTL = os.environ.get("FLAKYCTL", "flakyctl")
PYTHON = "/usr/bin/python3"
PYTEST = "/usr/bin/pytest"
PRLIMIT = "/usr/bin/prlimit"
MiB = 1024 * 1024


def _sanitized(path):
    """Is the program built with AddressSanitizer? Its shadow memory takes
    terabytes of address space, so no --as limit can apply to it."""
    import shutil
    p = shutil.which(path) or path
    try:
        with open(p, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False


# Under ASan (meson test --setup=asan) the inputs are still refused or
# survived within their time bounds, but the memory bound is the normal
# build's to prove: there is no address-space limit here.
SANITIZED = _sanitized(FLAKYD) or _sanitized(FLAKYCTL)


def as_limit(mem):
    """The argv prefix that limits a program to mem bytes of address
    space ([] under ASan)."""
    return [] if SANITIZED else [PRLIMIT, "--as=%d" % mem, "--"]


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


def limited(argv, mem, timeout, **kw):
    """argv under a hard address-space limit of mem bytes, killed after
    timeout seconds: (CompletedProcess, seconds taken). A limit passed
    shows as a failed allocation, a time passed as TimeoutExpired."""
    t0 = time.monotonic()
    p = subprocess.run(as_limit(mem) + list(argv),
                       capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, NO_COLOR="1"), **kw)
    return p, time.monotonic() - t0


def query(db, sql, args=()):
    """Rows from the database, read-only; [] when there is none."""
    if not os.path.exists(db):
        return []
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=5)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def db_digest(db):
    """What a write would change: the files of the database and their
    sizes and modification times (None when there is no database)."""
    out = {}
    for suffix in ("", "-wal", "-shm", ".lock"):
        try:
            st = os.stat(db + suffix)
        except FileNotFoundError:
            continue
        out[suffix] = (st.st_size, st.st_mtime_ns)
    return out or None


class Daemon:
    """The real flakyd on a private directory, under a memory limit."""

    def __init__(self, tmp, mem=512 * MiB):
        self.dir = str(tmp)
        self.config = os.path.join(self.dir, "flaky.yaml")
        self.db = os.path.join(self.dir, "flaky.db")
        self.sock = os.path.join(self.dir, "flakyd.sock")
        self.logpath = os.path.join(self.dir, "flakyd.log")
        self.mem = mem
        self.proc = None

    def write_config(self, body, jobs=2, grace="1s"):
        with open(self.config, "w") as f:
            f.write("database: %s\nsocket: %s\njobs: %d\nkill_grace: %s\n"
                    "timezone: UTC\n%s" % (self.db, self.sock, jobs, grace,
                                          body))

    def write(self, name, text, mode=0o644):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def start(self, env=None, wait=True):
        e = dict(os.environ)
        for k in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "JOURNAL_STREAM"):
            e.pop(k, None)
        e["TMPDIR"] = os.path.join(self.dir, "tmp")
        os.makedirs(e["TMPDIR"], exist_ok=True)
        e.update(env or {})
        self.log = open(self.logpath, "a")
        self.proc = subprocess.Popen(
            as_limit(self.mem) + [FLAKYD, "--config",
             self.config, "--foreground"], stdout=self.log,
            stderr=subprocess.STDOUT, env=e)
        if wait:
            self.wait_ready()
        return self.proc

    def ask(self, line, timeout=10):
        """One raw request over the socket: the parsed reply."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect(self.sock)
            s.sendall(line if isinstance(line, bytes) else
                      line.encode() + b"\n")
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
        finally:
            s.close()
        return json.loads(buf)

    def wait_ready(self, timeout=15):
        def ready():
            if self.proc.poll() is not None:
                raise AssertionError("flakyd exited with %s:\n%s" %
                                     (self.proc.returncode, self.logtext()))
            try:
                return self.ask("status", timeout=2)["ok"]
            except (OSError, ValueError):
                return False
        wait_for("flakyd to answer on its socket", ready, timeout)

    def ctl(self, *args, timeout=60, check=None):
        p = subprocess.run([FLAKYCTL, "--config", self.config] + list(args),
                           capture_output=True, text=True, timeout=timeout,
                           cwd=self.dir, env=dict(os.environ, NO_COLOR="1"))
        if check is not None:
            assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
        return p

    def logtext(self):
        try:
            with open(self.logpath) as f:
                return f.read()
        except OSError:
            return ""

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def kill(self):
        if self.alive():
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def daemon(tmp_path):
    d = Daemon(tmp_path)
    yield d
    d.kill()
