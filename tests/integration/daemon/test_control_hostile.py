"""The control socket against clients that misbehave: every line gets an
answer, and idle, slow or numerous connections of one user keep nobody
out (docs/daemon.md, "Control protocol")."""
import json
import os
import select
import shutil
import socket
import subprocess
import tempfile
import time

from conftest import FLAKYCTL, PYTHON, UNITTEST_OK, unittest_target, wait_for

IDLE_SEC = 5            # CONTROL_IDLE_SEC, daemon/control.c
PER_UID = 4             # CONTROL_MAX_PER_UID
MAX_CLIENTS = 32        # CONTROL_MAX_CLIENTS


def clients(daemon):
    """Connections the daemon holds: its sockets but the listening one."""
    fds = "/proc/%d/fd" % daemon.proc.pid
    n = 0
    for f in os.listdir(fds):
        try:
            n += os.readlink(os.path.join(fds, f)).startswith("socket:")
        except OSError:
            pass
    return n - 1


def connect(path):
    """Connect, waiting while the backlog is full (a blocking connect
    waits for room; with a timeout set it would say EAGAIN at once)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(10)
    return s


def read_line(s):
    """One reply line, parsed; None at EOF before a whole line."""
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            return None
        buf += chunk
    assert buf.count(b"\n") == 1, buf
    return json.loads(buf)


def at_eof(s):
    """The daemon closed the connection: reads give EOF (or a reset)."""
    try:
        return s.recv(65536) == b""
    except ConnectionResetError:
        return True


def start(daemon):
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write_config("targets:\n" + unittest_target("ok", None))
    daemon.start()


def test_every_line_gets_an_answer(daemon):
    start(daemon)
    s = connect(daemon.sock)
    try:
        # On one connection, one answer per line, in order, and the
        # connection goes on after each error.
        cases = [(b"\n", "empty request"),
                 (b" \t\r\n", "empty request"),
                 (b"\0\n", "NUL byte"),
                 (b"\0status\n", "NUL byte"),
                 (b"status\0\n", "NUL byte"),
                 (b'{"request": "status"}\n', "unknown request"),
                 (b"{\"unterminated\n", "unknown request"),
                 (b"\xff\xfe\n", "unknown request"),
                 (b"run\n", "usage: run TARGET [RUNS]")]
        for line, want in cases:
            s.sendall(line)
            r = read_line(s)
            assert r is not None and r["ok"] is False, (line, r)
            assert want in r["error"], (line, r)
        s.sendall(b"status\n")
        assert read_line(s)["ok"] is True
        # A line over the bound: an answer, then the connection closes.
        s.sendall(b"status " + b"x" * 5000 + b"\n")
        r = read_line(s)
        assert r == {"ok": False, "error": "request line too long"}, r
        assert at_eof(s)
    finally:
        s.close()
    # The same without a newline: the bound is on what is buffered.
    s = connect(daemon.sock)
    try:
        s.sendall(b"y" * 5000)
        r = read_line(s)
        assert r == {"ok": False, "error": "request line too long"}, r
        assert at_eof(s)
    finally:
        s.close()
    assert daemon.status()["ok"] is True
    assert daemon.stop() == 0


def test_idle_connections_of_one_user_keep_nobody_out(daemon):
    start(daemon)
    socks = []
    try:
        for _ in range(40):
            socks.append(connect(daemon.sock))
        # The daemon keeps at most PER_UID of them, replacing the idle
        # ones as newer ones come.
        wait_for("the daemon to keep at most %d" % PER_UID,
                 lambda: clients(daemon) <= PER_UID)
        # flakyctl, of the same user, is answered at once.
        t0 = time.monotonic()
        p = subprocess.Popen([FLAKYCTL, "--config", daemon.config,
                              "status", "--format", "json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        try:
            wait_for("flakyctl status to answer", lambda:
                     p.poll() is not None, timeout=2.0, step=0.01)
        finally:
            if p.poll() is None:
                p.kill()
            out, err = p.communicate()
        assert p.returncode == 0, err
        assert json.loads(out)["ok"] is True
        assert time.monotonic() - t0 < 2.0
        # The idle ones are closed by the idle timeout (or were replaced
        # earlier), each told why in a last line.
        wait_for("the idle connections to be closed",
                 lambda: clients(daemon) == 0, timeout=IDLE_SEC + 10)
        why = set()
        for s in socks:
            r = read_line(s)
            assert r is not None and r["ok"] is False, r
            why.add(r["error"])
            assert at_eof(s)
        assert why == {"no request in time; closing",
                       "idle connection closed to make room for a newer "
                       "one of the same user"}, why
    finally:
        for s in socks:
            s.close()
    assert daemon.status()["ok"] is True
    assert daemon.stop() == 0


def test_a_slow_request_is_cut_at_the_idle_timeout(daemon):
    """Bytes that never make a line do not keep a connection open."""
    start(daemon)
    s = connect(daemon.sock)
    s.setblocking(False)
    t0 = time.monotonic()
    got = b""
    try:
        deadline = t0 + IDLE_SEC + 10
        while time.monotonic() < deadline:
            try:
                s.send(b"s")
            except (BrokenPipeError, ConnectionResetError):
                break
            # A byte each half second, until the daemon hangs up.
            r, _, _ = select.select([s], [], [], 0.5)
            if r:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        else:
            raise AssertionError("a dribbling client was not cut")
    finally:
        s.close()
    took = time.monotonic() - t0
    assert IDLE_SEC - 1 < took < IDLE_SEC + 10, took
    assert json.loads(got) == {"ok": False,
                               "error": "no request in time; closing"}
    assert daemon.stop() == 0


# One process per user, holding its connections idle until told to go.
HOLDER = """import os, socket, sys
os.setgid(0); os.setuid(int(sys.argv[2]))
socks = []
for _ in range(int(sys.argv[3])):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect(sys.argv[1])
    except BlockingIOError:
        pass
    socks.append(s)
print(len(socks), flush=True)
sys.stdin.read()
"""


def test_connections_are_bounded(daemon):
    """Moved here from test_daemon.py: the bound on all connections holds
    (now reached by several users, each within its own bound), and a
    client that waits in the backlog is served once the idle ones are
    closed."""
    if os.geteuid() != 0:
        return
    # A directory the other users may enter (the test's own is private).
    sockdir = tempfile.mkdtemp(prefix="flakyd-bound-")
    os.chmod(sockdir, 0o755)
    daemon.sock = os.path.join(sockdir, "flakyd.sock")
    holders = []
    try:
        start(daemon)
        # The socket's group is root's: the users below are members.
        assert os.stat(daemon.sock).st_gid == 0
        users = MAX_CLIENTS // PER_UID + 1
        for i in range(users):
            h = subprocess.Popen([PYTHON, "-c", HOLDER, daemon.sock,
                                  str(61000 + i), str(PER_UID)],
                                 stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
            holders.append(h)
            assert h.stdout.readline().strip() == str(PER_UID)
        wait_for("the daemon to accept up to its bound",
                 lambda: clients(daemon) >= MAX_CLIENTS)
        assert clients(daemon) == MAX_CLIENTS
        # A client that waits is served once the idle ones are closed.
        t0 = time.monotonic()
        p = subprocess.run([FLAKYCTL, "--config", daemon.config, "status",
                            "--format", "json"], capture_output=True,
                           text=True, timeout=IDLE_SEC + 20)
        assert p.returncode == 0, p.stderr
        assert '"ok":true' in p.stdout
        assert time.monotonic() - t0 < IDLE_SEC + 10
        wait_for("the connections to be closed",
                 lambda: clients(daemon) == 0, timeout=IDLE_SEC + 10)
    finally:
        for h in holders:
            h.stdin.close()
            h.wait(10)
        daemon.stop()
        shutil.rmtree(sockdir, ignore_errors=True)
    assert daemon.proc.returncode == 0


def test_a_slow_reader_is_not_cut_while_its_reply_is_written(daemon):
    """The idle timeout is for clients that send nothing; a client still
    reading a long reply (a status of thousands of targets, more than the
    socket buffers hold) gets all of it however long it takes."""
    daemon.write("test_ok.py", UNITTEST_OK)
    daemon.write_config("targets:\n" + "".join(
        unittest_target("target-%04d-%s" % (i, "x" * 40), None)
        for i in range(3000)))
    daemon.start()
    slow = connect(daemon.sock)
    idle = connect(daemon.sock)
    try:
        slow.sendall(b"status\n")
        # Not reading: the reply waits in the daemon. The idle connection,
        # as old, is closed by the idle timeout meanwhile ...
        idle.settimeout(IDLE_SEC + 10)
        assert json.loads(idle.recv(65536))["error"] == \
            "no request in time; closing"
        assert at_eof(idle)
        # ... the slow one still has its whole reply coming.
        r = read_line(slow)
        assert r["ok"] is True and len(r["targets"]) == 3000
    finally:
        slow.close()
        idle.close()
    assert daemon.stop() == 0
