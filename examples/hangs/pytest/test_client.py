"""A client whose reply never comes on every third run (runs 3, 6, 9...,
counted in $HANG_STATE, default .hang-count): wait_for_reply blocks in
sock.recv() with no timeout, and only the test's time limit ends it."""
import os
import socket

import pytest


def run_number():
    """This run's number, counted in the state file."""
    path = os.environ.get("HANG_STATE", ".hang-count")
    try:
        with open(path) as f:
            n = int(f.read() or 0) + 1
    except FileNotFoundError:
        n = 1
    with open(path, "w") as f:
        f.write(str(n))
    return n


HANGS = run_number() % 3 == 0


def wait_for_reply(sock):
    return sock.recv(64)


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    yield a, b
    a.close()
    b.close()


def test_ping(pair):
    a, b = pair
    b.sendall(b"ping")
    assert a.recv(64) == b"ping"


def test_reply(pair):
    client, server = pair
    if not HANGS:
        server.sendall(b"pong")
    assert wait_for_reply(client) == b"pong"


def test_after():
    assert "pong".upper() == "PONG"
