"""Shared set-up for the tests of what a person sees: the real flakyctl
and flakyd under a pseudo-terminal of a known size, or through a pipe."""
import datetime
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import time
import unicodedata

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FLAKYCTL = os.environ.get("FLAKYCTL", os.path.join(ROOT, "build", "cli", "flakyctl"))
FLAKYD = os.environ.get("FLAKYD", os.path.join(ROOT, "build", "daemon", "flakyd"))

ESC = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# The ids of the demo history: a long pytest parameter list, CJK (two
# columns a character), an emoji, Jest's › separators.
PY_TESTS = [
    ("tests.test_checkout", "test_pays_with_card[visa-3ds-eu-west-1-with-"
     "a-long-parameter-list-retry]", 3),
    ("tests.test_i18n", "test_支払い_タイムアウト[東京-大阪-名古屋-札幌]", 4),
    ("tests.test_emoji", "test_rocket[🚀-launch-sequence-with-countdown]", 5),
    ("tests.test_api", "test_retry", 7),
    ("tests.test_ok", "test_fine", 0),
]
JS_TESTS = [
    ("Checkout › talks to slow API when the network is slow and the "
     "cache is cold", 2),
    ("Cart › adds an item", 10),
]
PY_IDS = ["tests/test_checkout.py::" + PY_TESTS[0][1],
          "tests/test_i18n.py::" + PY_TESTS[1][1],
          "tests/test_emoji.py::" + PY_TESTS[2][1]]
LONG_IDS = PY_IDS + [JS_TESTS[0][0]]


def dwidth(s):
    """Display columns, as glibc's wcwidth counts them."""
    w = 0
    for ch in s:
        if unicodedata.combining(ch):
            continue
        w += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return w


def env_for(extra=None):
    e = dict(os.environ)
    for k in ("FLAKY_DB", "FLAKY_CONFIG", "NO_COLOR", "COLUMNS",
              "JOURNAL_STREAM", "NOTIFY_SOCKET"):
        e.pop(k, None)
    e["LANG"] = e["LC_ALL"] = "C.UTF-8"
    e["TERM"] = "xterm"
    if extra:
        e.update(extra)
    return e


def run(args, check=None, env=None, **kw):
    """flakyctl through pipes."""
    p = subprocess.run([FLAKYCTL] + args, env=env_for(env),
                       capture_output=True, text=True, timeout=120, **kw)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


LIVE = []


@pytest.fixture(autouse=True)
def end_live():
    """Whatever a failed test left running on a terminal is killed."""
    yield
    while LIVE:
        p = LIVE.pop()
        if p.poll() is None:
            # SIGTERM first: analyze and confirm end their runs' groups
            p.terminate()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


class Pty:
    """A program on a pseudo-terminal of cols x rows; read() collects what
    it writes (with \\r\\n made \\n) until a condition or its end."""

    def __init__(self, argv, cols=80, rows=50, env=None, cwd=None):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ,
                    struct.pack("HHHH", rows, cols, 0, 0))
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave,
                                     stderr=slave, env=env_for(env), cwd=cwd,
                                     start_new_session=True)
        LIVE.append(self.proc)
        os.close(slave)
        self.raw = b""

    @property
    def text(self):
        return self.raw.decode("utf-8", "replace").replace("\r\n", "\n")

    def read(self, until=None, timeout=60):
        """Read until until(text) is true or the program closed the
        terminal; fail at the deadline."""
        deadline = time.monotonic() + timeout
        while until is None or not until(self.text):
            left = deadline - time.monotonic()
            assert left > 0, "timed out; so far:\n" + self.text
            r, _, _ = select.select([self.master], [], [], left)
            if not r:
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:         # EIO: the other side is closed
                chunk = b""
            if not chunk:
                if until is not None:
                    raise AssertionError("ended before the condition:\n" +
                                         self.text)
                break
            self.raw += chunk
        return self.text

    def finish(self, timeout=120):
        self.read(timeout=timeout)
        rc = self.proc.wait(timeout=timeout)
        os.close(self.master)
        return rc


def ctl_pty(args, **kw):
    p = Pty([FLAKYCTL] + args, **kw)
    rc = p.finish()
    return rc, p.text


def junit(suite, cases, at):
    body = "".join('<testcase classname="%s" name="%s" time="%s">%s'
                   '</testcase>' % c for c in cases)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>'
            '<testsuite name="%s" tests="%d" timestamp="%s">%s</testsuite>'
            '</testsuites>\n' % (suite, len(cases),
                                 at.strftime("%Y-%m-%dT%H:%M:%S"), body))


def ingest(db, target, path, at):
    run(["--db", db, "ingest", "--target", target, "--at",
         at.strftime("%Y-%m-%dT%H:%M:%SZ"), path], check=0)


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory):
    """Ten days of four CI runs of a pytest target and a Jest target, in
    the last ten days: tests failing every 2nd to 10th run."""
    d = tmp_path_factory.mktemp("face")
    db = str(d / "f.db")
    today = datetime.datetime.now(datetime.timezone.utc).replace(
        hour=0, minute=0, second=0, microsecond=0)
    py_msg = ("AssertionError: 支払い failed after 3 retries, expected 200 "
              "got 503 from the payment gateway in eu-west-1")
    for day in range(10):
        for r in range(4):
            n = day * 4 + r
            at = today - datetime.timedelta(days=9 - day, hours=-1 - r)
            cases = [(cls, name, "0.5", '<failure message="%s">t</failure>'
                      % py_msg if every and n % every == 0 else "")
                     for cls, name, every in PY_TESTS]
            f = d / ("py-%d.xml" % n)
            f.write_text(junit("pytest", cases, at))
            ingest(db, "shop-pytest", str(f), at)
            cases = [(name, name, "1.2", '<failure message="thrown: '
                      'Exceeded timeout of 5000 ms">t</failure>'
                      if n % every == 0 else "")
                     for name, every in JS_TESTS]
            f = d / ("js-%d.xml" % n)
            f.write_text(junit("jest tests", cases, at))
            ingest(db, "shop-jest", str(f), at)
    return db
