"""Set-up for the seed sweep tests (issue 34): the real flakyctl sweeping
a copy of examples/ml over seeds 1-RUNS with --risky, once a session."""
import json
import os
import shutil
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FLAKYCTL = os.environ.get("FLAKYCTL", os.path.join(ROOT, "build", "cli", "flakyctl"))
EXAMPLE = os.path.join(ROOT, "examples", "ml")
RUNS = 20


def clean_env():
    """The caller's environment without flaky's or the hook's variables."""
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("FLAKY_", "PYTEST_")) or k in ("PYTHONPATH",
                                                       "PYTHONHASHSEED"):
            env.pop(k)
    env["NO_COLOR"] = "1"
    return env


def run(args, cwd=None, check=None, timeout=300, env=None):
    """Run flakyctl without the caller's database or config."""
    p = subprocess.run([FLAKYCTL] + args, cwd=cwd, env=env or clean_env(),
                       capture_output=True, text=True, timeout=timeout)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


class Sweep:
    """examples/ml swept once: the database and the copy it ran in."""

    def __init__(self, path, db, analyze):
        self.path = path
        self.db = db
        self.analyze = analyze

    def ctl(self, *args, check=0):
        return run(["--db", self.db] + list(args), cwd=self.path, check=check)

    def json(self, *args):
        return json.loads(self.ctl("--format", "json", *args).stdout)

    def tests(self, cmd="report"):
        """The tests of report (or triage) JSON by name, without the file."""
        return {t["test"].split("::")[-1]: t
                for t in self.json(cmd)["tests"]}


@pytest.fixture(scope="session")
def sweep(tmp_path_factory):
    base = tmp_path_factory.mktemp("seeds")
    path = str(base / "ml")
    shutil.copytree(EXAMPLE, path, ignore=shutil.ignore_patterns(
        "__pycache__", ".pytest_cache", ".state"))
    db = str(base / "flaky.db")
    p = run(["--db", db, "analyze", "--runs", str(RUNS), "--jobs", "2",
             "--perturb", "seed", "--seed", "1-%d" % RUNS, "--risky",
             "--target", "ml", "."], cwd=path, timeout=600)
    assert p.returncode in (0, 1), (p.returncode, p.stdout, p.stderr)
    return Sweep(path, db, p)
