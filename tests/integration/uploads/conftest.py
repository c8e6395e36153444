"""Uploads (docs/api.md, "Uploads") against the real flakyd with TLS: a
certificate made by the openssl command for 127.0.0.1, tokens made with
flakyctl token, CI jobs played by flakyctl upload with the variables
GitHub Actions and GitLab CI set. Everything listens on port 0, is polled
with a deadline and stopped in teardown."""
import json
import os
import signal
import sqlite3
import subprocess
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
FLAKYCTL = os.environ.get("FLAKYCTL", "flakyctl")
FLAKYD = os.environ.get("FLAKYD", "flakyd")

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="shop" tests="%d" failures="%d">
%s</testsuite>
"""


def junit(path, cases):
    """A JUnit file of (name, failed) cases."""
    body = "".join(
        '  <testcase classname="shop" name="%s" time="0.01">%s</testcase>\n'
        % (n, '<failure message="boom">assert 1 == 2</failure>' if f
           else "") for n, f in cases)
    path.write_text(JUNIT % (len(cases), sum(f for _, f in cases), body))
    return str(path)


def ctl(*args, check=0, env=None, timeout=120):
    e = dict(os.environ, NO_COLOR="1")
    for k in list(e):
        # a CI's variables of the machine running the tests stay out
        if k.startswith(("GITHUB_", "CI_", "GITLAB_", "BUILDKITE",
                         "CIRCLE", "JENKINS_")) or k in ("CI", "FLAKY_TOKEN"):
            del e[k]
    e.update(env or {})
    p = subprocess.run([FLAKYCTL] + list(args), capture_output=True,
                       text=True, timeout=timeout, env=e)
    if check is not None:
        assert p.returncode == check, (args, p.returncode, p.stdout,
                                       p.stderr)
    return p


def rows(db, sql, *args):
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=30)
    try:
        return c.execute(sql, args).fetchall()
    finally:
        c.close()


@pytest.fixture(scope="session")
def cert(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 and localhost."""
    d = tmp_path_factory.mktemp("tls")
    key, crt = d / "key.pem", d / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
         "-keyout", str(key), "-out", str(crt), "-days", "2", "-subj",
         "/CN=localhost", "-addext",
         "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60)
    return str(crt), str(key)


class Flakyd:
    """flakyd with http: on port 0, uploads on, TLS with cert; its URL
    from the line it logs."""

    def __init__(self, tmp, db, cert, extra="", targets=""):
        self.tmp = tmp
        self.db = db
        self.log = tmp / "flakyd.log"
        self.config = tmp / "flaky.yaml"
        self.write_config(cert, extra, targets)
        with open(self.log, "w") as f:
            self.proc = subprocess.Popen(
                [FLAKYD, "--config", str(self.config), "--foreground", "-v"],
                stdout=f, stderr=subprocess.STDOUT,
                env=dict(os.environ, TMPDIR=str(tmp)))
        self.url = self.wait_log("http: dashboard at ").split()[0].rstrip(";/")

    def write_config(self, cert, extra="", targets=""):
        tls = ("  tls_cert: %s\n  tls_key: %s\n" % cert) if cert else ""
        self.config.write_text(
            "database: %s\nsocket: %s\ntimezone: UTC\nhttp:\n"
            "  listen: 127.0.0.1:0\n  uploads: true\n%s%s%s" % (
                self.db, self.tmp / "d.sock", tls, extra, targets))

    def wait_log(self, what, timeout=20, after=0):
        """The rest of the first line after offset after that holds
        what."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.log.read_text()[after:]
            for line in text.splitlines():
                if what in line:
                    return line.split(what, 1)[1]
            assert self.proc.poll() is None, text
            assert time.monotonic() < deadline, (what, text)
            time.sleep(0.05)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise


@pytest.fixture
def server(tmp_path, cert):
    """A function that starts flakyd on a new database with tokens of
    each scope made first; all stopped at the end."""
    started = []

    def start(extra="", targets="", tls=True):
        db = str(tmp_path / "flaky.db")
        toks = {}
        for scope in ("upload", "read", "write"):
            p = ctl("--db", db, "token", "create", "--scope", scope,
                    "--name", "ci-" + scope)
            toks[scope] = p.stdout.strip().splitlines()[-1]
        d = Flakyd(tmp_path, db, cert if tls else None, extra, targets)
        d.tokens = toks
        d.cert = cert[0]
        started.append(d)
        return d
    yield start
    for d in started:
        rc = d.stop()
        assert rc == 0, (rc, d.log.read_text())


def upload(d, *args, env=None, check=0, token="upload"):
    """flakyctl upload to d with the token of that scope."""
    e = {"FLAKY_TOKEN": d.tokens[token]} if token else {}
    e.update(env or {})
    return ctl("upload", "--server", d.url, "--ca-file", d.cert,
               "--format", "json", *args, env=e, check=check)


def answer(p):
    return json.loads(p.stdout)
