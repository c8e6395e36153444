"""Set-up for the diagnosis integration tests: the real flakyctl on a copy
of examples/diagnose, whose failures have known causes."""
import json
import os
import shutil
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FLAKYCTL = os.environ.get("FLAKYCTL", os.path.join(ROOT, "build", "cli", "flakyctl"))
EXAMPLE = os.path.join(ROOT, "examples", "diagnose")
RUNS = 50


def run(args, cwd=None, check=None, timeout=300):
    """Run flakyctl without the caller's database or config."""
    env = dict(os.environ)
    for k in ("FLAKY_DB", "FLAKY_CONFIG", "DEMO_RUN", "DEMO_STATE"):
        env.pop(k, None)
    env["NO_COLOR"] = "1"
    p = subprocess.run([FLAKYCTL] + args, cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=timeout)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


def copy_example(dst):
    shutil.copytree(EXAMPLE, dst, ignore=shutil.ignore_patterns(
        ".run-counter", "__pycache__", ".pytest_cache"))
    return str(dst)


class Demo:
    """The demo suite analyzed RUNS times; run n uses seed n."""

    def __init__(self, path, db):
        self.path = path
        self.db = db

    def ctl(self, *args, check=0):
        return run(["--db", self.db] + list(args), cwd=self.path, check=check)

    def json(self, *args):
        return json.loads(self.ctl("--format", "json", *args).stdout)


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    base = tmp_path_factory.mktemp("diagnose")
    path = copy_example(base / "suite")
    db = str(base / "flaky.db")
    run(["--db", db, "analyze", "--runs", str(RUNS), "--jobs", "4",
         "--target", "demo", "--revision", "r1", "--format", "json",
         "--", "./run.sh"], cwd=path, check=0, timeout=600)
    return Demo(path, db)
