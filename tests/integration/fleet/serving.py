"""flakyctl serve and flakyd's http: on a database of the fleet's server,
for the fleet tests: started on port 0 (the URL from the line each
prints), requests that return errors as replies, and polling with a
deadline."""
import os
import re
import select
import signal
import subprocess
import time
import urllib.error
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..",
                                    ".."))
FLAKYCTL = os.environ.get("FLAKYCTL", os.path.join(ROOT, "build", "cli",
                                                   "flakyctl"))
FLAKYD = os.environ.get("FLAKYD", os.path.join(ROOT, "build", "daemon",
                                               "flakyd"))


def get(url, timeout=15):
    """(status, body as text) of a GET; an error status is a reply too."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


def wait_for(what, fn, timeout=60.0, step=0.05):
    """Poll fn until it returns something true; that value."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(step)
    raise AssertionError("timed out after %.0fs waiting for %s (last: %r)"
                         % (timeout, what, last))


def wait_status(url, status, timeout=60.0):
    """Poll url until it answers status; (status, body)."""
    return wait_for("%s to answer %d" % (url, status),
                    lambda: (lambda r: r if r[0] == status else None)(
                        get(url)), timeout)


class Serve:
    """flakyctl --db DB serve on port 0; stderr into a file the test
    reads (what the program logs)."""

    def __init__(self, db, tmp, env=None, args=()):
        self.errpath = os.path.join(str(tmp), "serve.err")
        self.err = open(self.errpath, "w")
        self.proc = subprocess.Popen(
            [FLAKYCTL, "--db", db, "serve", "--listen", "127.0.0.1:0"] +
            list(args), stdout=subprocess.PIPE, stderr=self.err,
            env=dict(env or os.environ, NO_COLOR="1"))
        self.banner = self._line()
        assert self.banner.startswith("serving "), self.banner
        # "serving DB at URL" and, with --uploads, "(uploads at ...)"
        self.url = re.search(r" at (https?://\S+)", self.banner).group(
            1).rstrip("/")

    def _line(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        buf = b""
        while not buf.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                raise AssertionError("no banner from serve: %r %s" %
                                     (buf, self.logtext()))
            r, _, _ = select.select([self.proc.stdout], [], [], left)
            if r:
                c = os.read(self.proc.stdout.fileno(), 1)
                if c:
                    buf += c
        return buf.decode()

    def logtext(self):
        with open(self.errpath) as f:
            return f.read()

    def stop(self):
        """SIGTERM; its exit status (0: clean, no leak under ASan)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.err.close()
        return rc


class HttpDaemon:
    """flakyd whose http: shows database (a postgresql:// URI); its log in
    a file, its URL from the line it logs."""

    def __init__(self, tmp, database):
        tmp = str(tmp)
        self.logpath = os.path.join(tmp, "flakyd.log")
        self.config = os.path.join(tmp, "flaky.yaml")
        with open(self.config, "w") as f:
            f.write("database: %s/local.db\nsocket: %s/d.sock\n"
                    "timezone: UTC\nhttp:\n  listen: 127.0.0.1:0\n"
                    "  database: \"%s\"\n" % (tmp, tmp, database))
        self.log = open(self.logpath, "w")
        env = dict(os.environ, TMPDIR=tmp)
        for k in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "JOURNAL_STREAM"):
            env.pop(k, None)
        self.proc = subprocess.Popen(
            [FLAKYD, "--config", self.config, "--foreground"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)

        def url():
            assert self.proc.poll() is None, self.logtext()
            for line in self.logtext().splitlines():
                if "http: dashboard at " in line:
                    return line.split("http: dashboard at ")[1].split()[
                        0].rstrip("/")
            return None
        self.url = wait_for("flakyd's dashboard", url, 30)

    def logtext(self):
        with open(self.logpath) as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            rc = self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.log.close()
        return rc
