"""Shared set-up for the JavaScript runners' integration tests: the real
flakyctl on copies of flaky's demos (examples/demo-vitest, -playwright,
-mocha, -nodetest), run by the real runners that scripts/deps.sh installs.

Each demo's flaky test fails on a fixed pattern of its executions
(FLAKY_DEMO_SEED=25: the 1st, 4th and 7th fail), counted in the test's own
FLAKY_DEMO_STATE, so N runs fail a known number of times whatever their
order (--jobs): the counts below are exact."""
import json
import os
import re
import shutil
import sqlite3
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FLAKYCTL = os.path.abspath(os.environ.get(
    "FLAKYCTL", os.path.join(ROOT, "build", "cli", "flakyctl")))
EXAMPLES = os.path.join(ROOT, "examples")
# executions 1..n of the flaky test: how many fail (seed 25)
FAILS = {1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 2, 7: 3, 8: 3, 10: 3, 12: 3}


def env(state):
    e = dict(os.environ)
    for k in ("FLAKY_DB", "FLAKY_CONFIG", "CI", "PYTEST_ADDOPTS"):
        e.pop(k, None)
    e["NO_COLOR"] = "1"
    e["FLAKY_DEMO_SEED"] = "25"
    e["FLAKY_DEMO_STATE"] = state
    e["XDG_CACHE_HOME"] = os.path.join(state, "xdg")
    return e


@pytest.fixture
def demo(tmp_path):
    """A copy of demo NAME (its node_modules linked, never copied) and
    the environment its runs see; skipped when deps.sh has not installed
    its runner."""
    def copy(name, needs):
        src = os.path.join(EXAMPLES, name)
        if needs and not os.path.exists(os.path.join(src, "node_modules",
                                                     ".bin", needs)):
            pytest.fail("examples/%s/node_modules is missing: run "
                        "scripts/deps.sh (npm ci there)" % name)
        dst = tmp_path / name
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns(
            "node_modules", ".state", "test-results"))
        if needs:
            os.symlink(os.path.join(src, "node_modules"), dst / "node_modules")
        return str(dst), env(str(tmp_path / "state"))
    return copy


def ctl(args, cwd=None, env=None, check=0, timeout=600):
    p = subprocess.run([FLAKYCTL] + args, cwd=cwd, env=env, text=True,
                       capture_output=True, timeout=timeout)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


def analyze(db, args, cwd, e, runs, jobs=2, check=0):
    """flakyctl analyze --format json: the report, and stderr. runs None:
    --until-settled in args decides."""
    n = ["--runs", str(runs)] if runs else []
    p = ctl(["--db", db, "analyze", "--jobs", str(jobs), "--format",
             "json"] + n + args, cwd=cwd, env=e, check=check)
    return json.loads(p.stdout), p.stderr


def by_test(doc):
    return {t["test"]: t for t in doc["tests"]}


def selected_runs(db):
    """The tests each run of only some tests ran (skipped ones left out:
    a runner's filter reports the others as skipped): [[test]]."""
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT r.id, t.name FROM runs r "
        "JOIN results res ON res.run_id = r.id "
        "JOIN tests t ON t.id = res.test_id "
        "WHERE r.selected IS NOT NULL AND res.outcome != 3 "
        "ORDER BY r.id, res.position").fetchall()
    con.close()
    runs = {}
    for run, name in rows:
        runs.setdefault(run, []).append(name)
    return [runs[k] for k in sorted(runs)]


def until_settled(db, args, cwd, e, flaky, runs=12):
    """analyze --until-settled to runs: after its 10 whole runs only the
    flaky test is open, and the runs of only it run it alone. The report
    of the runs."""
    doc, err = analyze(db, ["--until-settled", "--max-runs", str(runs)] +
                       args, cwd, e, runs=None)
    picked = selected_runs(db)
    assert picked, err
    for ran in picked:
        assert ran == [flaky], picked
    return doc, err


def run_seed(db):
    """The first run's seed and perturbation."""
    con = sqlite3.connect(db)
    row = con.execute("SELECT seed, perturbation FROM runs ORDER BY id "
                      "LIMIT 1").fetchone()
    con.close()
    return row


def ticket(db, test, target):
    """The ticket's title and its reproduce command."""
    md = ctl(["--db", db, "ticket", test, "--target", target]).stdout
    m = re.search(r"### Reproduce\n\n```sh\n(.*?)\n```", md, re.S)
    assert m, md
    return md.splitlines()[0], m.group(1)


def sh(cmd, e, timeout=300):
    p = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True,
                       timeout=timeout, env=e)
    return p.stdout + p.stderr
