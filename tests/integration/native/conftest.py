"""Set-up for the native runners' integration tests: the real flakyctl on
copies of examples/demo-{cargo,gtest,rspec,phpunit}, each run by its real
runner from Debian's packages (scripts/deps.sh)."""
import os
import shutil
import sqlite3
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FLAKYCTL = os.environ.get("FLAKYCTL", os.path.join(ROOT, "build", "cli", "flakyctl"))
EXAMPLES = os.path.join(ROOT, "examples")
# Debian's toolchains first: a rustup cargo in ~/.cargo/bin is not CI's
PATH = "/usr/bin:/bin:" + os.environ.get("PATH", "")


def env(extra=None):
    e = dict(os.environ)
    for k in ("FLAKY_DB", "FLAKY_CONFIG", "PYTEST_ADDOPTS", "GTEST_SHUFFLE",
              "GTEST_RANDOM_SEED", "RUST_BACKTRACE", "SPEC_OPTS"):
        e.pop(k, None)
    e["NO_COLOR"] = "1"
    e["PATH"] = PATH
    if extra:
        e.update(extra)
    return e


def ctl(args, cwd=None, extra=None, timeout=600):
    """flakyctl with args; the CompletedProcess."""
    return subprocess.run([FLAKYCTL] + args, cwd=cwd, env=env(extra),
                          capture_output=True, text=True, timeout=timeout)


def need(*tools):
    for t in tools:
        if shutil.which(t, path=PATH) is None:
            pytest.skip("%s is not installed (scripts/deps.sh installs it)" % t)


@pytest.fixture
def demo(tmp_path):
    """A copy of examples/NAME whose run counter starts at 0."""
    def copy(name):
        dst = tmp_path / name
        shutil.copytree(os.path.join(EXAMPLES, name), dst,
                        ignore=shutil.ignore_patterns(
                            "target", "build", ".demo-runs",
                            ".phpunit.result.cache"))
        return str(dst)
    return copy


def outcomes(db):
    """{test: [outcome of each run, in run order]} and the runs' rows."""
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT t.name, r.outcome FROM results r JOIN tests t ON "
        "t.id = r.test_id ORDER BY r.run_id, r.position").fetchall()
    runs = con.execute("SELECT runner, incomplete FROM runs ORDER BY id"
                       ).fetchall()
    targets = [n for (n,) in con.execute("SELECT name FROM targets")]
    con.close()
    got = {}
    for name, o in rows:
        got.setdefault(name, []).append(o)
    return got, runs, targets
