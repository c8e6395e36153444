"""Issue 18: analyze --shuffle and --stress end to end, with the real
flakyctl and pytest (pytest-random-order from Debian).

Nothing here depends on timing: the order-dependent pair fails exactly
when one test ran before the other, a seed replays an order exactly, and
the stress tests assert what was recorded and how the rates are split, not
what stress did to a test's timing (bench/stress.sh measures that)."""
import json
import os
import sqlite3
import subprocess

import pytest

from conftest import PYTEST, PYTHON, run

VICTIM = "test_prices.py::test_total"


def seeds(db, first=0):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT id, seed FROM runs WHERE id > ? ORDER BY id",
                       (first,)).fetchall()
    con.close()
    return rows


def outcome_by_run(db, test):
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT r.run_id, r.outcome FROM results r JOIN tests t "
        "ON t.id = r.test_id WHERE t.name = ? ORDER BY r.run_id",
        (test,)).fetchall()
    con.close()
    return dict(rows)


def victim(doc):
    return next(t for t in doc["tests"] if t["test"] == VICTIM)


def analyze(args, cwd, db, check=0):
    p = run(["--db", db, "analyze", "--format", "json", "--target", "prices"]
            + args + ["--", PYTEST], cwd=cwd,
            check=check)
    return json.loads(p.stdout) if check in (0, 1) else p


def test_shuffle_finds_the_pair_and_a_seed_replays_it(demo, tmp_path):
    d = demo("demo-order")
    db = str(tmp_path / "flaky.db")
    # in file order the victim runs first: never fails
    calm = analyze(["--runs", "3"], d, db)
    assert victim(calm)["failures"] == 0
    assert all(s is None for _, s in seeds(db))
    last_calm = seeds(db)[-1][0]

    # shuffled, it fails when test_set_currency ran first: about half of
    # 30 orders (none or all of them: 2^-30 each)
    doc = analyze(["--shuffle", "--runs", "30"], d, db)
    v = victim(doc)
    assert 0 < v["failures"] < 30, v
    shuffled = seeds(db, last_calm)
    assert len(shuffled) == 30
    assert all(s is not None and s.isdigit() for _, s in shuffled)
    assert len({s for _, s in shuffled}) == 30   # a fresh seed each run
    # recorded apart from calm runs: the report's rates say "shuffled"
    con = sqlite3.connect(db)
    assert [p for p, in con.execute("SELECT perturbation FROM runs WHERE "
            "id > ? ORDER BY id", (last_calm,))] == ["shuffle"] * 30
    con.close()
    assert victim(doc)["by_perturbation"][-1]["perturbation"] == "shuffle"
    out = outcome_by_run(db, VICTIM)
    failing = [s for i, s in shuffled if out[i] == 1]
    passing = [s for i, s in shuffled if out[i] == 0]
    assert failing and passing

    # each recorded seed replays its order: the failure again, or the pass
    last = seeds(db)[-1][0]
    again = analyze(["--seed", failing[0], "--runs", "2"], d, db)
    assert victim(again)["failures"] == 2, again
    assert {s for _, s in seeds(db, last)} == {failing[0]}
    assert victim(analyze(["--seed", passing[0], "--runs", "2"], d,
                          db))["failures"] == 0

    # show names the seed of each failing run with a command that replays
    # it, and that command fails again
    p = run(["--db", db, "show", VICTIM], check=0)
    lines = [l.strip() for l in p.stdout.splitlines()
             if l.strip().startswith("same order:")]
    assert lines, p.stdout
    cmd = next(l for l in lines if f"--random-order-seed={failing[0]}" in l)
    r = subprocess.run(["/bin/sh", "-c", cmd[len("same order:"):]],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "test_total FAILED" in r.stdout, r.stdout
    js = json.loads(run(["--db", db, "--format", "json", "show", VICTIM],
                        check=0).stdout)
    assert failing[0] in {f["seed"] for f in js["failures_log"]}


@pytest.mark.parametrize("cmd", [
    [PYTHON, "-m", "unittest"],
    ["/bin/sh", "-c", "true"],
])
def test_shuffle_refused_where_the_runner_cannot(demo, tmp_path, cmd):
    d = demo("demo-order")
    db = str(tmp_path / "flaky.db")
    p = run(["--db", db, "analyze", "--shuffle", "--runs", "2", "--"] + cmd,
            cwd=d, check=2)
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and "cannot shuffle" in err[0], p.stderr
    assert not os.path.exists(db) or seeds(db) == []


@pytest.mark.parametrize("bad", ["gpu", "cpu:0", "cpu:65", "cpu:x", "", "io:"])
def test_stress_bad_values(tmp_path, bad):
    db = str(tmp_path / "flaky.db")
    p = run(["--db", db, "analyze", "--stress", bad, "--", "true"], check=2)
    assert "--stress: expected" in p.stderr, p.stderr
    assert not os.path.exists(db)
    p = run(["--db", db, "analyze", "--seed", "x", "--", "true"], check=2)
    assert "--seed: expected a number" in p.stderr, p.stderr


SUITE = '''
import os

def threads_of_parent():
    with open(f"/proc/{os.getppid()}/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])

def test_ok():
    pass

def test_bad():
    assert False, "always"

def test_stress_sensitive():
    # fails exactly when flakyctl runs stress threads beside it (4 or
    # more threads): a stand-in, without timing, for a test that stress
    # breaks
    assert threads_of_parent() < 4, "starved"
'''


def test_stress_records_and_splits_rates(tmp_path):
    d = tmp_path / "suite"
    d.mkdir()
    (d / "test_s.py").write_text(SUITE)
    db = str(tmp_path / "flaky.db")

    def go(*args):
        run(["--db", db, "analyze", "--target", "s"] + list(args) +
            ["--", PYTEST], cwd=str(d))

    go("--runs", "8")
    go("--runs", "8", "--stress", "cpu:4")
    go("--runs", "2", "--stress", "io:1")
    con = sqlite3.connect(db)
    got = [r[0] for r in con.execute(
        "SELECT perturbation FROM runs ORDER BY id")]
    con.close()
    assert got == [None] * 8 + ["cpu:4"] * 8 + ["io:1"] * 2

    doc = json.loads(run(["--db", db, "--format", "json", "report"],
                         check=0).stdout)
    t = {x["test"]: x for x in doc["tests"]}
    split = lambda name: [(p["perturbation"], p["runs"], p["failures"])
                          for p in t[name]["by_perturbation"]]
    assert split("test_s.py::test_bad") == [(None, 8, 8), ("cpu:4", 8, 8),
                                            ("io:1", 2, 2)]
    assert split("test_s.py::test_ok") == [(None, 8, 0), ("cpu:4", 8, 0),
                                           ("io:1", 2, 0)]
    sens = "test_s.py::test_stress_sensitive"
    # io:1 is one thread: not enough to trip it
    assert split(sens) == [(None, 8, 0), ("cpu:4", 8, 8), ("io:1", 2, 0)]
    # failing under stress only is evidence for RACE, in report, show and
    # triage
    assert t[sens]["signature"] == "RACE", t[sens]
    table = run(["--db", db, "report"], check=0).stdout
    assert ("0% calm (0/8), 100% under cpu:4 (8/8), 0% under io:1 (0/2)"
            in table), table
    js = json.loads(run(["--db", db, "--format", "json", "show", sens],
                        check=0).stdout)
    assert js["signature"] == "RACE"
    assert js["stress"]["perturbation"] == "cpu:4" and js["stress"]["race"]
    assert [p["runs"] for p in js["by_perturbation"]] == [8, 8, 2]
    tri = run(["--db", db, "triage", "--since", "all"], check=0).stdout
    assert "stress:      0% calm (0/8), 100% under cpu:4 (8/8)" in tri, tri
    assert "under cpu:4 stress, 0 of 8 calm" in tri, tri
    # a test that always fails is not stress-sensitive
    js = json.loads(run(["--db", db, "--format", "json", "show",
                         "test_s.py::test_bad"], check=0).stdout)
    assert js["stress"] is None and js["signature"] != "RACE"
