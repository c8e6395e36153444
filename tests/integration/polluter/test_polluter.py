"""The smallest polluter end to end (issue 19): examples/polluter has two
suites of 40 tests whose run number is the random-order seed, so which
runs fail is fixed. single/: test_default_locale fails when
test_override_locale ran before it. pair/: test_render_default fails only
when test_set_locale and test_write_export both ran before it. analyze
stores shuffled runs, flakyctl polluter narrows the tests before the
victim in the failing run with the most of them, and the stored set and
its reproduce command show in triage and ticket; the command fails when
run, the victim alone passes."""
import json
import os
import shutil
import sqlite3
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FLAKYCTL = os.environ.get("FLAKYCTL", os.path.join(ROOT, "build", "cli", "flakyctl"))
EXAMPLE = os.path.join(ROOT, "examples", "polluter")
SINGLE = ("single", "test_report.py::test_default_locale",
          ["test_config.py::test_override_locale"], 30)
PAIR = ("pair", "test_render.py::test_render_default",
        ["test_export.py::test_write_export",
         "test_settings.py::test_set_locale"], 60)


def env():
    e = {k: v for k, v in os.environ.items()
         if k not in ("FLAKY_DB", "FLAKY_CONFIG")}
    # the reruns run python3 -m pytest: Debian's, with pytest-random-order
    e["PATH"] = "/usr/bin:" + e.get("PATH", "")
    e["NO_COLOR"] = "1"
    return e


def ctl(path, db, *args, check=0):
    p = subprocess.run([FLAKYCTL, "--db", db] + list(args), cwd=path,
                       env=env(), capture_output=True, text=True,
                       timeout=600)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


class Suite:
    def __init__(self, base, spec):
        self.name, self.victim, self.members, runs = spec
        self.path = os.path.join(base, self.name)
        self.db = os.path.join(base, self.name + ".db")
        ctl(self.path, self.db, "analyze", "--runs", str(runs), "--jobs",
            "2", "--target", self.name, "--revision", "r1", "--", "../run.sh")

    def widest_failing_run(self):
        """The failing run with the most tests before the victim."""
        con = sqlite3.connect(self.db)
        row = con.execute(
            "SELECT r.run_id, r.position FROM results r JOIN tests t "
            "ON t.id = r.test_id WHERE t.name = ? AND r.outcome = 1 "
            "ORDER BY r.position DESC, r.run_id LIMIT 1",
            (self.victim,)).fetchone()
        con.close()
        return row


@pytest.fixture(scope="module")
def suites(tmp_path_factory):
    base = tmp_path_factory.mktemp("polluter")
    shutil.copytree(EXAMPLE, str(base), dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(
                        ".run-counter", ".run-lock", "__pycache__",
                        ".pytest_cache"))
    return {s[0]: Suite(str(base), s) for s in (SINGLE, PAIR)}


@pytest.mark.parametrize("name", ["single", "pair"])
def test_smallest_polluter(suites, name):
    s = suites[name]
    report = json.loads(ctl(s.path, s.db, "report", "--format",
                            "json").stdout)
    victim = [t for t in report["tests"] if t["test"] == s.victim][0]
    assert victim["signature"] == "ORDER_DEPENDENT", victim
    run_id, before = s.widest_failing_run()
    assert before >= 30, before     # ddmin has many tests to narrow
    # issue 28: before flakyctl polluter, the stored orders only suspect
    # one test (in pair/, one that does not make the victim fail alone)
    tri = ctl(s.path, s.db, "triage", s.victim).stdout
    assert "the polluter is" not in tri, tri
    assert ("suspected polluter %s (from the stored run orders, not "
            "confirmed): confirm with `flakyctl polluter %s`"
            % (victim["polluter"], s.victim)) in tri, tri
    d = json.loads(ctl(s.path, s.db, "triage", "--format", "json",
                       s.victim).stdout)["tests"][0]
    assert d["polluter"] == victim["polluter"] and d["polluters"] is None
    out = json.loads(ctl(s.path, s.db, "polluter", "--run", str(run_id),
                         "--format", "json", s.victim).stdout)
    assert out["polluters"] == s.members, out
    assert out["candidates"] == before
    assert out["minimal"] is True
    assert 1 < out["reruns"] <= 100, out
    # the command fails, and fails the victim; the victim alone passes
    p = subprocess.run(out["command"], shell=True, cwd=s.path, env=env(),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "FAILED " + s.victim in p.stdout, p.stdout
    alone = subprocess.run(["/usr/bin/python3", "-m", "pytest", "-p",
                            "no:random_order", "-v", s.victim], cwd=s.path,
                           env=env(), capture_output=True, text=True,
                           timeout=120)
    assert alone.returncode == 0, alone.stdout
    # leaving out any one member makes it pass: the set is the smallest
    for m in s.members:
        rest = [x for x in s.members if x != m]
        p = subprocess.run(["/usr/bin/python3", "-m", "pytest", "-p",
                            "no:random_order", "-v"] + rest + [s.victim],
                           cwd=s.path, env=env(), capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, (m, p.stdout)
    # stored: triage and ticket show it with the command
    tri = ctl(s.path, s.db, "triage", s.victim).stdout
    assert "  polluters:   " + ", ".join(s.members) + " (smallest set" in tri
    assert "  reproduce:   cd " in tri and out["command"] in tri
    # the patch names the confirmed set, not the suspect; so does the JSON
    assert "suspected polluter" not in tri, tri
    assert "; the polluter%s %s%s (confirmed by flakyctl polluter)" % (
        " is" if len(s.members) == 1 else "s are",
        " and ".join(s.members), ", together" if len(s.members) > 1
        else "") in tri, tri
    for cmd in ("triage", "show"):
        j = json.loads(ctl(s.path, s.db, cmd, "--format", "json",
                           s.victim).stdout)
        d = j["tests"][0] if cmd == "triage" else j
        assert d["polluters"] == s.members, d
        assert d["polluters_minimal"] is True
        assert d["polluter"] == victim["polluter"]   # kept: the suspect
    ticket = ctl(s.path, s.db, "ticket", s.victim).stdout
    assert "### Smallest polluter" in ticket
    assert "### Suspected polluter" not in ticket
    for m in s.members:
        assert "- " + m + "\n" in ticket
    assert out["command"] + "\n```" in ticket


def test_budget(suites):
    """A budget too small for ddmin leaves a failing set that holds both
    members, said not to be the smallest."""
    s = suites["pair"]
    run_id, _ = s.widest_failing_run()
    out = json.loads(ctl(s.path, s.db, "polluter", "--run", str(run_id),
                         "--max-reruns", "6", "--format", "json",
                         s.victim).stdout)
    assert out["reruns"] == 6 and out["minimal"] is False, out
    assert set(s.members) <= set(out["polluters"]), out
    assert len(out["polluters"]) < out["candidates"]


def test_nothing_to_narrow(suites):
    """A test that never failed, a run where the victim passed, bad
    options: a one-line error each, and nothing stored is lost."""
    s = suites["single"]
    stored = sqlite3.connect(s.db).execute(
        "SELECT * FROM polluters ORDER BY test_id").fetchall()
    p = ctl(s.path, s.db, "polluter", "test_fill_alpha.py::test_alpha_03",
            check=1)
    assert "no stored failing run" in p.stderr
    con = sqlite3.connect(s.db)
    passing = con.execute(
        "SELECT r.run_id FROM results r JOIN tests t ON t.id = r.test_id "
        "WHERE t.name = ? AND r.outcome = 0 LIMIT 1", (s.victim,)).fetchone()
    con.close()
    p = ctl(s.path, s.db, "polluter", "--run", str(passing[0]), s.victim,
            check=1)
    assert "did not fail in run" in p.stderr
    p = ctl(s.path, s.db, "polluter", "--max-reruns", "0", s.victim,
            check=2)
    assert "--max-reruns: expected a number from 1 to 1000" in p.stderr
    p = ctl(s.path, s.db, "polluter", check=2)
    assert "expected one test" in p.stderr
    # what was stored before is still there, unchanged
    assert sqlite3.connect(s.db).execute(
        "SELECT * FROM polluters ORDER BY test_id").fetchall() == stored
