"""A client whose reply never comes on every third run (runs 3, 6, 9...,
counted in $HANG_STATE, default .hang-count): wait_for_reply blocks in
sock.recv() with no timeout, and only the test's time limit ends it."""
import os
import socket
import unittest


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


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.client, self.server = socket.socketpair()

    def tearDown(self):
        self.client.close()
        self.server.close()

    def test_1_ping(self):
        self.server.sendall(b"ping")
        self.assertEqual(self.client.recv(64), b"ping")

    def test_2_reply(self):
        if not HANGS:
            self.server.sendall(b"pong")
        self.assertEqual(wait_for_reply(self.client), b"pong")

    def test_3_after(self):
        self.assertEqual("pong".upper(), "PONG")


if __name__ == "__main__":
    unittest.main()
