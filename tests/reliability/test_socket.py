"""Idle and malformed clients of the control socket against the real
flakyd (issue 14): every request gets an answer, and idle connections do
not keep `flakyctl status` out."""
import json
import socket
import subprocess
import time

import pytest

from conftest import FLAKYCTL

IDLE = 64		# twice flakyd's connection bound on main (32)
ANSWER_SECONDS = 2	# flakyctl status among idle clients (the goal)
REPLY_SECONDS = 10	# any reply: only a missing one takes this long


def raw(d, data, timeout=REPLY_SECONDS):
    """data on a new connection: the reply lines that came back within
    timeout (fewer than asked when flakyd said nothing)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    buf = b""
    try:
        s.connect(d.sock)
        s.sendall(data)
        deadline = time.monotonic() + timeout
        while buf.count(b"\n") < data.count(b"\n"):
            s.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    except socket.timeout:
        pass
    finally:
        s.close()
    return [json.loads(x) for x in buf.splitlines()]


def connect(path, patience=0.5):
    """A connection, or None when the listen backlog stays full for
    `patience` seconds (flakyd stopped accepting)."""
    deadline = time.monotonic() + patience
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(path)
            return s
        except BlockingIOError:
            s.close()
            if time.monotonic() > deadline:
                return None
            time.sleep(0.01)


def hold(d, n, first=b""):
    """Up to n connections that send nothing (the first sends `first`),
    until flakyd stops taking them: a refused connect holds nothing."""
    held = []
    for _ in range(n):
        s = connect(d.sock)
        if s is None:
            break
        if not held and first:
            s.sendall(first)
        held.append(s)
    return held


@pytest.fixture
def idle_daemon(daemon):
    daemon.write_config("targets:\n  - name: a\n    command: [/bin/true]\n"
                        "    schedule: \"@yearly\"\n")
    daemon.start()
    return daemon


@pytest.mark.parametrize("data", [b"{\"cmd\":\n", b"{garbage\n",
                                  b"\xff\xfe\x80\n", b"[]\n",
                                  b"status\x00xyz\n", b"run\n",
                                  b"run a -1\n"],
                         ids=["json-cut", "json-garbage", "not-utf8",
                              "json-array", "status-nul-tail", "run-bare",
                              "run-negative"])
def test_malformed_request_answered(idle_daemon, data):
    (reply,) = raw(idle_daemon, data)
    assert "ok" in reply
    # and the daemon goes on
    assert idle_daemon.ask("status")["ok"] is True


@pytest.mark.parametrize("data", [b"\n", b"\x00\n", b"   \n"],
                         ids=["empty", "nul", "blank"])
def test_empty_request_answered(idle_daemon, data):
    replies = raw(idle_daemon, data, 5)
    assert len(replies) == 1 and replies[0]["ok"] is False, replies


def test_pipelined_requests_each_answered(idle_daemon):
    replies = raw(idle_daemon, b"status\n{x\nstatus\n")
    assert [r["ok"] for r in replies] == [True, False, True]


def test_status_with_many_idle_clients(idle_daemon):
    """IDLE connections that never send a byte, and one that sent half a
    line: flakyctl status still answers within 2 s."""
    d = idle_daemon
    held = hold(d, IDLE, b"sta")
    try:
        assert len(held) > 32
        t0 = time.monotonic()
        p = subprocess.run([FLAKYCTL, "--config", d.config, "--format",
                            "json", "status"], capture_output=True,
                           text=True, timeout=ANSWER_SECONDS)
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["ok"] is True
        assert time.monotonic() - t0 < ANSWER_SECONDS
    finally:
        for s in held:
            s.close()


def test_answers_again_once_idle_clients_leave(idle_daemon):
    """Whatever the bound, closing the idle connections gives the socket
    back at once."""
    d = idle_daemon
    held = hold(d, IDLE)
    assert len(held) > 32
    for s in held:
        s.close()
    p = d.ctl("--format", "json", "status", timeout=10, check=0)
    assert json.loads(p.stdout)["ok"] is True
    assert d.alive()
