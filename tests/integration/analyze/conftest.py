"""Shared set-up for the analyze integration tests: the real flakyctl on
copies of the demo suites, each test in its own temporary directory."""
import json
import math
import os
import shutil
import sqlite3
import subprocess
import zlib

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FLAKYCTL = os.environ.get("FLAKYCTL", os.path.join(ROOT, "build", "cli", "flakyctl"))
EXAMPLES = os.path.join(ROOT, "examples")
PYTEST = "/usr/bin/pytest"
PYTHON = "/usr/bin/python3"


def sqlar_uncompress(data, size):
    """SQLite's sqlar_uncompress, built into the sqlite3 shell and
    registered by flakyctl, but not in Python's sqlite3: the view run_output
    needs it (docs/schema.md)."""
    if data is None or size is None or size <= 0 or size == len(data):
        return data
    return zlib.decompress(data)


def connect(db):
    """A connection on which the view run_output reads."""
    con = sqlite3.connect(db)
    con.create_function("sqlar_uncompress", 2, sqlar_uncompress,
                        deterministic=True)
    return con


def wilson(k, n, z=1.959963984540054):
    """The Wilson score interval, written out independently of lib/stats.c."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    lo, hi = mid - half, mid + half
    if k == 0:
        lo = 0.0
    if k == n:
        hi = 1.0
    return max(lo, 0.0), min(hi, 1.0)


def run(args, cwd=None, env=None, timeout=300, check=None):
    """Run flakyctl; returns the CompletedProcess."""
    e = dict(os.environ)
    e.pop("FLAKY_DB", None)
    e.pop("FLAKY_CONFIG", None)
    e["NO_COLOR"] = "1"
    if env:
        e.update(env)
    p = subprocess.run([FLAKYCTL] + args, cwd=cwd, env=e, capture_output=True,
                       text=True, timeout=timeout)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


def analyze_json(args, cwd, db):
    p = run(["--db", db, "analyze", "--format", "json"] + args, cwd=cwd, check=0)
    return json.loads(p.stdout)


@pytest.fixture
def demo(tmp_path):
    """Copy a demo suite into tmp_path and return its directory."""
    def copy(name):
        dst = tmp_path / name
        src = os.path.join(EXAMPLES, name)
        if name == "demo-jest":
            if not os.path.isdir(os.path.join(src, "node_modules", "jest")):
                pytest.fail("examples/demo-jest/node_modules is missing: "
                            "run `npm ci` in examples/demo-jest (.ci/run does)")
            shutil.copytree(src, dst, symlinks=True,
                            ignore=shutil.ignore_patterns("node_modules"))
            os.symlink(os.path.join(src, "node_modules"), dst / "node_modules")
        else:
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns(
                "__pycache__", ".pytest_cache"))
        return str(dst)
    return copy
