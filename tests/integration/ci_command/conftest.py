"""flakyctl ci with the real runners on examples/demo-ci (seeded: every
verdict predicted by bench/ci_trials.py before it runs), a fake pytest for
the evidence that must give exit 2, and a real `flakyctl serve --uploads`
on loopback with an upload token. Servers listen on port 0 and say their
URL; everything is polled with a deadline and stopped in teardown."""
import os
import re
import select
import signal
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
FLAKYCTL = os.path.abspath(os.environ.get(
    "FLAKYCTL", os.path.join(ROOT, "build", "cli", "flakyctl")))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import ci_trials  # noqa: E402  (the trials' predictions and shops)

# what CI systems set that a test must not inherit from the machine
CI_VARS = ("FLAKY_SERVER", "FLAKY_TOKEN", "FLAKY_READ_TOKEN",
           "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITLAB_CI",
           "CI_DEFAULT_BRANCH", "GITHUB_BASE_REF", "JENKINS_URL",
           "BUILDKITE", "CIRCLECI")


def clean_env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if k not in CI_VARS}
    env.update(HOME=str(tmp_path / "home"), NO_COLOR="1",
               PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


def ctl(args, check=0, cwd=None, env=None, timeout=300):
    """flakyctl with args; its exit code must be check (None: any)."""
    p = subprocess.run([FLAKYCTL] + list(args), capture_output=True,
                       text=True, cwd=cwd, env=env, timeout=timeout)
    if check is not None:
        assert p.returncode == check, (args, p.returncode, p.stdout,
                                       p.stderr)
    return p


@pytest.fixture
def shop(tmp_path):
    """A function: the shop of a runner, its database knowing the default
    branch's tests and the quarantine (bench/ci_trials.py's Shop)."""
    def make(runner):
        if runner == "jest" and not os.path.isdir(ci_trials.JEST_MODULES):
            pytest.fail("examples/demo-jest/node_modules is missing: "
                        "run scripts/deps.sh")
        return ci_trials.Shop(runner, FLAKYCTL, str(tmp_path))
    return make


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
            if c:
                buf += c
    return buf.decode()


def token(db, scope):
    """A new token of the database (made before a server starts: a live
    one reads new tokens every few seconds)."""
    p = ctl(["--db", db, "token", "create", "--scope", scope])
    return p.stdout.strip()


class Server:
    """flakyctl serve --uploads on loopback, port 0, over db."""

    def __init__(self, db, *args):
        self.db = db
        self.proc = subprocess.Popen(
            [FLAKYCTL, "--db", db, "serve", "--uploads", "--listen",
             "127.0.0.1:0"] + list(args), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
        line = read_line(self.proc)
        m = re.search(r"(https?://[^ /]+)/", line)
        assert line.startswith("serving ") and m, line
        self.url = m.group(1)

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
def server(tmp_path):
    """A function that starts flakyctl serve --uploads on a database; all
    stopped (cleanly) at the end."""
    started = []

    def start(db=None, *args):
        s = Server(db or str(tmp_path / "server.db"), *args)
        started.append(s)
        return s
    yield start
    for s in started:
        assert s.stop() == 0, s.proc.stderr.read().decode(errors="replace")
