"""Set-up for the hung runs' integration tests (issue 33): the real
flakyctl on copies of examples/hangs, each suite run three times with a
time limit so that its third run hangs and its stacks are taken."""
import os
import shutil
import sqlite3
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FLAKYCTL = os.environ.get("FLAKYCTL", os.path.join(ROOT, "build", "cli", "flakyctl"))
EXAMPLES = os.path.join(ROOT, "examples")
JEST = os.path.join(EXAMPLES, "demo-jest", "node_modules", ".bin", "jest")
PATH = "/usr/bin:/bin:" + os.environ.get("PATH", "")


def env(extra=None):
    e = dict(os.environ)
    for k in ("FLAKY_DB", "FLAKY_CONFIG", "PYTEST_ADDOPTS", "PYTHONPATH",
              "NODE_OPTIONS", "HANG_STATE"):
        e.pop(k, None)
    e["NO_COLOR"] = "1"
    e["PATH"] = PATH
    if extra:
        e.update(extra)
    return e


def ctl(args, cwd=None, timeout=300, extra=None):
    """flakyctl with args (and extra environment); the CompletedProcess."""
    return subprocess.run([FLAKYCTL] + args, cwd=cwd, env=env(extra),
                          capture_output=True, text=True, timeout=timeout)


def need(*tools):
    for t in tools:
        if shutil.which(t, path=PATH) is None and not os.path.exists(t):
            pytest.skip("%s is not installed (scripts/deps.sh installs it)" % t)


def cmake_build(src):
    """Build a CMake demo in src/build; that directory."""
    need("cmake", "ctest")
    b = os.path.join(src, "build")
    for args in (["cmake", "-S", src, "-B", b], ["cmake", "--build", b]):
        subprocess.run(args, check=True, capture_output=True, env=env(),
                       timeout=300)
    return b


@pytest.fixture
def demo(tmp_path):
    """A copy of examples/hangs/NAME whose run counter starts at 0."""
    def copy(name):
        dst = tmp_path / name
        shutil.copytree(os.path.join(EXAMPLES, "hangs", name), dst,
                        ignore=shutil.ignore_patterns("build", ".hang-count"))
        return str(dst)
    return copy


def query(db, sql, *args):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def live_under(path):
    """The processes whose working directory or command line is under
    path: what a run left running."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cwd = os.readlink("/proc/%s/cwd" % pid)
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cwd.startswith(path) or path in cmd:
            found.append((pid, cwd, cmd))
    return found
