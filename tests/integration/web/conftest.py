"""The dashboard's transport with the real programs: `flakyctl serve` and
flakyd's http: on a demo database (examples/demo-pytest analyzed, plus
ingested runs of tests with hostile ids), and headless Chromium driven by
puppeteer-core (browse.js). Servers listen on port 0 and say their URL;
everything is polled with a deadline and killed in teardown."""
import json
import os
import select
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
FLAKYCTL = os.environ.get("FLAKYCTL", "flakyctl")
FLAKYD = os.environ.get("FLAKYD", "flakyd")
SHOTS = os.environ.get("FLAKY_SHOTS")
HOSTILE = ["<script>alert(1)</script>", "it's \"quoted\" & <b>bold</b>"]

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="hostile" tests="2" failures="%d">
  <testcase classname="evil" name="%s" time="0.01">%s</testcase>
  <testcase classname="evil" name="%s" time="0.0%d"/>
</testsuite>
"""


def xml_escape(s):
    return (s.replace("&", "&amp;").replace("<", "&lt;")
            .replace(">", "&gt;").replace('"', "&quot;"))


def ctl(*args, check=0, timeout=120):
    p = subprocess.run([FLAKYCTL] + list(args), capture_output=True,
                       text=True, timeout=timeout,
                       env=dict(os.environ, NO_COLOR="1"))
    if check is not None:
        assert p.returncode == check, (args, p.returncode, p.stdout,
                                       p.stderr)
    return p


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory):
    """examples/demo-pytest analyzed 6 times, and 4 ingested runs of two
    tests whose ids are HTML and quotes (one fails in 2 of them)."""
    d = tmp_path_factory.mktemp("demo")
    db = str(d / "flaky.db")
    ctl("--db", db, "analyze", "--runs", "6", "--jobs", "2", "--target",
        "demo-pytest", os.path.join(ROOT, "examples", "demo-pytest"),
        check=None, timeout=300)
    for i in range(4):
        fail = i % 2 == 0
        path = d / ("hostile-%d.xml" % i)
        path.write_text(JUNIT % (
            1 if fail else 0, xml_escape(HOSTILE[0]),
            '<failure message="%s">boom</failure>' % xml_escape(HOSTILE[1])
            if fail else "", xml_escape(HOSTILE[1]), i + 1))
        ctl("--db", db, "ingest", "--target", "hostile<i>", "--revision",
            "r1", str(path))
    return db


def read_line(proc, timeout=15.0):
    """The first line a process prints, or fail after timeout."""
    deadline = time.monotonic() + timeout
    buf = b""
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None:
            raise AssertionError("no line from %s within %.0fs: %r" %
                                 (proc.args, timeout, buf))
        r, _, _ = select.select([proc.stdout], [], [], left)
        if r:
            c = os.read(proc.stdout.fileno(), 1)
            if not c:
                continue
            buf += c
    return buf.decode()


class Server:
    """flakyctl serve on port 0; its URL from the line it prints."""

    def __init__(self, db, *args):
        self.proc = subprocess.Popen(
            [FLAKYCTL, "--db", db, "serve", "--listen", "127.0.0.1:0"] +
            list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = read_line(self.proc)
        assert line.startswith("serving "), line
        self.url = line.split()[-1].rstrip("/")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise


@pytest.fixture
def serve(demo_db):
    """A function that starts flakyctl serve; all stopped at the end."""
    started = []

    def start(*args, db=demo_db):
        s = Server(db, *args)
        started.append(s)
        return s
    yield start
    for s in started:
        rc = s.stop()
        # 0: stopped cleanly (under ASan: no leak, no error either)
        assert rc == 0, (rc, s.proc.stderr.read().decode(errors="replace"))


class Flakyd:
    """flakyd with http: on port 0 and the given targets; its URL from the
    line it logs."""

    def __init__(self, tmp, db, targets=""):
        self.log = tmp / "flakyd.log"
        self.config = tmp / "flaky.yaml"
        self.config.write_text(
            "database: %s\nsocket: %s\ntimezone: UTC\nhttp:\n"
            "  listen: 127.0.0.1:0\n%s" % (db, tmp / "d.sock", targets))
        with open(self.log, "w") as f:
            self.proc = subprocess.Popen(
                [FLAKYD, "--config", str(self.config), "--foreground", "-v"],
                stdout=f, stderr=subprocess.STDOUT,
                env=dict(os.environ, TMPDIR=str(tmp)))
        deadline = time.monotonic() + 15
        self.url = None
        while self.url is None:
            text = self.log.read_text()
            assert self.proc.poll() is None, text
            assert time.monotonic() < deadline, text
            for line in text.splitlines():
                if "http: dashboard at " in line:
                    self.url = line.split("http: dashboard at ")[1].split()[
                        0].rstrip("/")
            time.sleep(0.05)

    def stop(self):
        self.proc.terminate()
        rc = self.proc.wait(timeout=20)
        assert rc == 0, self.log.read_text()


@pytest.fixture
def flakyd_http(demo_db, tmp_path):
    """flakyd serving a copy of the demo database, with a target that
    fires every second (so the overview has a schedule and next fire)."""
    db = tmp_path / "flaky.db"
    shutil.copy(demo_db, db)
    d = Flakyd(tmp_path, db, "targets:\n  - name: tick\n"
               "    command: [/bin/true]\n    schedule: every 1s\n")
    yield d
    d.stop()


def get(url, headers=None, method="GET", data=None):
    """(status, headers, body) of one request; errors are replies too."""
    req = urllib.request.Request(url, headers=headers or {}, method=method,
                                 data=data)
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def browse(spec, tmp_path):
    """browse.js on spec: the report of every page at every width."""
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    p = subprocess.run(["node", os.path.join(HERE, "browse.js"), str(path)],
                       capture_output=True, text=True, timeout=180,
                       cwd=HERE)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def shots_dir(tmp_path, name):
    """Screenshots go to the build directory when meson says where."""
    return os.path.join(SHOTS, name) if SHOTS else str(tmp_path / "shots")
