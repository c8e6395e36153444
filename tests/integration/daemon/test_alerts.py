"""Alerts (docs/alerts.md): flakyd tells the receivers of notify: when a
test's tier changes, each event once, in order, whatever the receiver
does meanwhile (slow, down, then up), across a restart, and never over
https to a server whose certificate does not check out.

The demo suite is deterministic: test_flip counts its runs in a file and
fails in runs 6 to 10, so with notify_window: 5 the events are flaky at
run 6 (1 of 5), critical at 7 (2 of 5), broken at 10 (5 of 5) and
recovered at 15 (0 of 5)."""
import base64
import http.server
import json
import os
import signal
import ssl
import subprocess
import threading

import pytest

from conftest import PYTHON, query, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = ["flaky", "critical", "broken", "recovered"]

FLIP = """import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


class T(unittest.TestCase):
    def test_steady(self):
        self.assertTrue(True)

    def test_flip(self):
        path = os.path.join(HERE, "counter")
        n = 1
        if os.path.exists(path):
            with open(path) as f:
                n = int(f.read()) + 1
        with open(path, "w") as f:
            f.write(str(n))
        self.assertFalse(6 <= n <= 10, "run %d fails" % n)
"""

TARGET = """targets:
  - name: flip
    command: [%s, -m, unittest, -v, test_flip]
""" % PYTHON


class Receiver:
    """A webhook in a thread: answers 200 at once (up), or only after the
    client's timeout (slow); stop() closes the port (down)."""

    def __init__(self, port=0, slow=False, tls=None):
        self.posts = []          # answered: (path, headers, event)
        self.slow_seen = 0       # taken while slow, answered too late
        self.slow = slow
        self.release = threading.Event()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(n)
                if outer.slow:
                    outer.slow_seen += 1
                    if outer.release.wait(2.0):
                        return      # stopped: the port closes, no answer
                else:
                    outer.posts.append((self.path, dict(self.headers),
                                        json.loads(body)))
                try:
                    self.send_response(200)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                except OSError:
                    pass

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port),
                                                      Handler)
        self.server.daemon_threads = True
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket,
                                                 server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       daemon=True)
        self.thread.start()

    def events(self, path=None):
        return [e for p, h, e in self.posts if path is None or p == path]

    def stop(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receivers():
    made = []

    def make(*args, **kw):
        r = Receiver(*args, **kw)
        made.append(r)
        return r
    yield make
    for r in made:
        try:
            r.stop()
        except OSError:
            pass


def setup_daemon(daemon, notify, name="flip"):
    daemon.write("test_flip.py", FLIP)
    daemon.write_config("notify_window: 5\nnotify:\n" + notify +
                        TARGET.replace("name: flip", "name: " + name))


def deliveries(daemon, receiver):
    return query(daemon.db, "SELECT a.kind, d.state, d.attempts, "
                 "d.last_error FROM alert_deliveries d JOIN alerts a ON "
                 "a.id = d.alert_id WHERE d.receiver = ? ORDER BY a.id",
                 (receiver,))


def all_delivered(daemon, receiver, n=4):
    rows = deliveries(daemon, receiver)
    return len(rows) == n and all(r[1] == "delivered" for r in rows)


def run_flip(daemon, runs=15, name="flip"):
    daemon.ctl("run", name, "--runs", str(runs), check=0)
    wait_for("%d runs stored" % runs, lambda: len(daemon.runs(
        "r.status = 'done'")) >= runs, 60)


def test_slow_down_then_up_each_event_once_in_order(daemon, receivers):
    slow = receivers(slow=True)
    port = slow.port
    setup_daemon(daemon, """  - name: hook
    url: "http://alice:s3cret@127.0.0.1:%d/hook/PATHSECRET?token=SECRET123"
    timeout: 500ms
    retry: 200ms
    retry_max: 400ms
    link: "https://flaky.example/test/{test_id}"
""" % port)
    daemon.start()
    daemon.ctl("run", "flip", "--runs", "15", check=0)
    # Slow: the receiver takes the event but answers after the timeout.
    wait_for("two attempts at the slow receiver", lambda: slow.slow_seen >= 2)
    slow.stop()

    # Down: the port is closed; the attempts go on, with backoff.
    def attempts():
        return sum(r[2] for r in deliveries(daemon, "hook"))
    before = attempts()
    wait_for("two attempts at the closed port", lambda: attempts() >= before + 2)
    assert all(r[1] == "pending" for r in deliveries(daemon, "hook"))

    # Up: every event arrives, once, in order.
    up = receivers(port=port)
    wait_for("15 runs stored", lambda: len(daemon.runs(
        "r.status = 'done'")) >= 15, 60)
    wait_for("four events delivered", lambda: all_delivered(daemon, "hook"),
             30)
    got = up.events()
    assert [e["event"] for e in got] == EXPECTED, got
    assert len({e["key"] for e in got}) == 4
    first = got[0]
    assert first["test"] == "test_flip.T.test_flip"
    assert first["target"] == "flip"
    assert first["tier"] == "warning"
    assert (first["runs"], first["failures"]) == (5, 1)
    assert first["rate"] == pytest.approx(0.2)
    assert 0 < first["interval"][0] < 0.2 < first["interval"][1] < 1
    assert first["link"] == "https://flaky.example/test/%d" % first["test_id"]
    assert "test_flip.T.test_flip" in first["text"]
    assert [e["tier"] for e in got] == ["warning", "critical", "broken",
                                        "stable"]
    path, headers, _ = up.posts[0]
    assert path == "/hook/PATHSECRET?token=SECRET123"
    assert headers["Authorization"] == "Basic " + base64.b64encode(
        b"alice:s3cret").decode()
    assert headers["Content-Type"] == "application/json"
    # The steady test never changed tier: no event.
    assert all(e["test"] == "test_flip.T.test_flip" for e in got)

    # Failures are logged with the receiver, never its secrets.
    log = daemon.logtext()
    assert "to hook (http://127.0.0.1:%d) failed" % port in log
    assert "timed out" in log
    assert "SECRET" not in log and "s3cret" not in log
    # flakyctl alerts lists them, delivered.
    p = daemon.ctl("alerts", "--format", "json", check=0)
    listed = json.loads(p.stdout)
    assert [a["event"] for a in listed] == EXPECTED
    assert all(a["deliveries"][0]["state"] == "delivered" for a in listed)
    assert all(a["deliveries"][0]["receiver"] == "hook" for a in listed)
    p = daemon.ctl("alerts", check=0)
    assert "delivered  hook" in p.stdout
    assert "critical" in p.stdout


COMMAND = """import json
import os
import sys

out, tries = sys.argv[1], sys.argv[1] + ".tries"
n = 1
if os.path.exists(tries):
    with open(tries) as f:
        n = int(f.read()) + 1
with open(tries, "w") as f:
    f.write(str(n))
event = json.load(sys.stdin)
if n == 1:
    sys.stderr.write("first try refused\\n")
    sys.exit(3)
with open(out, "a") as f:
    f.write(json.dumps(event) + "\\n")
"""


def test_command_receiver_gets_the_event_on_stdin(daemon):
    """A command receiver; the target is named flaky, and the text reads
    well all the same (issue 28: "flaky flaky: ... is flaky")."""
    daemon.write("receive.py", COMMAND)
    out = os.path.join(daemon.dir, "events.jsonl")
    setup_daemon(daemon, """  - command: [%s, %s, %s]
    timeout: 5s
    retry: 100ms
    events: [flaky, broken, recovered]
""" % (PYTHON, os.path.join(daemon.dir, "receive.py"), out), name="flaky")
    daemon.start()
    run_flip(daemon, name="flaky")
    wait_for("three events delivered", lambda: all_delivered(
        daemon, "python3", 3), 30)
    with open(out) as f:
        got = [json.loads(line) for line in f]
    # critical was not asked for; the first try's exit 3 was retried.
    assert [e["event"] for e in got] == ["flaky", "broken", "recovered"]
    assert got[1]["runs"] == got[1]["failures"] == 5
    who = 'flakyd: test_flip.T.test_flip (target "flaky") '
    assert got[0]["text"].startswith(who + "is now flaky: 1 of its last 5 "
                                     "runs failed (20.0%, 95% interval "), got
    assert got[1]["text"] == who + "is broken: it failed all of its last 5 "\
        "runs"
    assert got[2]["text"] == who + "is stable again: no failure in its last "\
        "5 runs"
    assert all("flaky flaky" not in e["text"] for e in got)
    # counts agree with their nouns in the log too ("1 failures" was)
    log = daemon.logtext()
    assert ": done, 2 tests, 1 failure, " in log, log
    assert " 1 failures" not in log
    assert "exit 3: first try refused" in daemon.logtext()


def test_restart_delivers_a_pending_event_once(daemon, receivers):
    closed = receivers()
    port = closed.port
    closed.stop()
    setup_daemon(daemon, """  - name: later
    url: "http://127.0.0.1:%d/"
    timeout: 500ms
    retry: 100ms
    retry_max: 200ms
""" % port)
    daemon.start()
    run_flip(daemon)
    # In order: the oldest is tried again and again, the others wait.
    wait_for("four events, the first tried twice", lambda: len(deliveries(
        daemon, "later")) == 4 and deliveries(daemon, "later")[0][2] >= 2, 30)
    assert daemon.stop() == 0
    assert all(r[1] == "pending" for r in deliveries(daemon, "later"))

    up = receivers(port=port)
    daemon.start()
    wait_for("four events delivered", lambda: all_delivered(daemon, "later"),
             30)
    assert [e["event"] for e in up.events()] == EXPECTED
    # The restart evaluated nothing twice.
    assert query(daemon.db, "SELECT count(*) FROM alerts")[0][0] == 4


def make_certs(tmp):
    """A CA, a server certificate it signed for 127.0.0.1, and one for
    another name."""
    def ossl(*args):
        subprocess.run(["openssl"] + list(args), check=True, cwd=tmp,
                       capture_output=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
    ossl("req", "-x509", *ec, "-nodes", "-days", "2",
         "-subj", "/CN=flaky test CA", "-keyout", "ca.key", "-out", "ca.pem")
    for name, san in (("good", "IP:127.0.0.1"),
                      ("other", "DNS:other.example")):
        ossl("req", *ec, "-nodes", "-subj", "/CN=" + name,
             "-keyout", name + ".key", "-out", name + ".csr")
        with open(os.path.join(tmp, name + ".ext"), "w") as f:
            f.write("subjectAltName=%s\n" % san)
        ossl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey",
             "ca.key", "-CAcreateserial", "-days", "2", "-extfile",
             name + ".ext", "-out", name + ".pem")


def tls_context(tmp, name):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(tmp, name + ".pem"),
                        os.path.join(tmp, name + ".key"))
    return ctx


def test_https_checks_the_certificate_and_the_name(daemon, receivers):
    make_certs(daemon.dir)
    good = receivers(tls=tls_context(daemon.dir, "good"))
    other = receivers(tls=tls_context(daemon.dir, "other"))
    ca = os.path.join(daemon.dir, "ca.pem")
    setup_daemon(daemon, """  - name: system-store
    url: "https://127.0.0.1:%d/system"
    timeout: 2s
    retry: 10s
  - name: own-ca
    url: "https://127.0.0.1:%d/own"
    ca_file: %s
    timeout: 2s
  - name: wrong-name
    url: "https://127.0.0.1:%d/wrong"
    ca_file: %s
    timeout: 2s
    retry: 10s
""" % (good.port, good.port, ca, other.port, ca))
    daemon.start()
    run_flip(daemon)
    wait_for("own-ca delivered", lambda: all_delivered(daemon, "own-ca"), 30)
    assert [e["event"] for e in good.events("/own")] == EXPECTED
    # The self-signed CA is not in the system's store; the other server's
    # certificate is for another name: nothing was posted to either.
    wait_for("both refused", lambda: all(
        r[2] >= 1 for n in ("system-store", "wrong-name")
        for r in deliveries(daemon, n)[:1]) and deliveries(
        daemon, "wrong-name"), 30)
    assert good.events("/system") == [] and other.events() == []
    sys_err = deliveries(daemon, "system-store")[0][3]
    wrong_err = deliveries(daemon, "wrong-name")[0][3]
    assert sys_err.startswith("certificate refused"), sys_err
    assert wrong_err.startswith("certificate refused"), wrong_err
    assert "mismatch" in wrong_err, wrong_err


@pytest.mark.parametrize("notify, expect", [
    ("  - url: ftp://x/\n", "url: expected an http:// or https:// URL"),
    ("  - url: http://a/\n    command: [true]\n",
     "expected a receiver with either url: or command:"),
    ("  - command: \"echo hi\"\n", "command: expected a list"),
    ("  - url: http://a/\n    ca_file: /x\n",
     "ca_file: expected only beside an https:// url:"),
    ("  - url: http://a/x\n  - url: http://a/y\n",
     "duplicate receiver name \"a\""),
    ("  - url: http://a/\n    events: [flaky, late]\n",
     "events: expected flaky, critical, broken, recovered or release"),
    ("  - url: http://a/\n    retry: 1h\n    retry_max: 1m\n",
     "retry_max: expected at least retry:"),
])
def test_bad_notify_is_refused_with_file_and_line(daemon, notify, expect):
    path = daemon.write_config("notify:\n" + notify)
    p = subprocess.run([os.environ.get("FLAKYD", "flakyd"), "--config", path,
                        "--check-config"], capture_output=True, text=True)
    assert p.returncode == 1, p
    line = p.stderr.strip()
    assert "\n" not in line and line.startswith(path + ":"), line
    assert expect in line, line


def test_release_when_a_quarantined_test_passed_enough(daemon, receivers):
    up = receivers()
    setup_daemon(daemon, """  - name: release-only
    url: "http://127.0.0.1:%d/release"
    events: [release]
""" % up.port)
    daemon.start()
    run_flip(daemon, 1)
    daemon.ctl("quarantine", "add", "test_flip.T.test_flip", "--reason",
               "fails in runs 6 to 10", check=0)
    # 5 failures in 22 runs: p = 0.227 asks for 12 passes in a row
    # (flakyctl quarantine list's rule), which runs 11 to 22 are.
    daemon.ctl("run", "flip", "--runs", "24", check=0)
    wait_for("25 runs stored", lambda: len(daemon.runs(
        "r.status = 'done'")) >= 25, 60)
    wait_for("the release delivered", lambda: all_delivered(
        daemon, "release-only", 1), 30)
    (event,) = up.events()
    assert event["event"] == "release"
    assert (event["passes"], event["needed"]) == (12, 12)
    assert "ready to leave quarantine" in event["text"]
    p = daemon.ctl("quarantine", "list", "--format", "json", check=0)
    assert json.loads(p.stdout)[0]["ready_to_release"] is True
    # Told once, though runs 23 to 25 passed too.
    assert query(daemon.db, "SELECT count(*) FROM alerts WHERE kind = "
                 "'release'")[0][0] == 1


def test_reload_with_a_delivery_in_flight_sends_nothing_twice(daemon,
                                                               receivers):
    slow = receivers(slow=True)
    port = slow.port
    setup_daemon(daemon, """  - name: hook
    url: "http://127.0.0.1:%d/"
    timeout: 1s
    retry: 100ms
    retry_max: 200ms
""" % port)
    daemon.start()
    daemon.ctl("run", "flip", "--runs", "15", check=0)
    wait_for("a delivery in flight", lambda: slow.slow_seen >= 1)
    daemon.signal(signal.SIGHUP)
    wait_for("the reload", lambda: "reloaded" in daemon.logtext())
    slow.stop()
    up = receivers(port=port)
    wait_for("15 runs stored", lambda: len(daemon.runs(
        "r.status = 'done'")) >= 15, 60)
    wait_for("four events delivered", lambda: all_delivered(daemon, "hook"),
             30)
    assert [e["event"] for e in up.events()] == EXPECTED
