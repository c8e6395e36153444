"""Issue 18: a target's perturb: cycle in flakyd. Its runs take the
cycle's steps in turn, over the runs of a trigger and on across triggers;
each records its perturbation (and a shuffled one its seed), and report,
show and triage give the rates calm, under stress and shuffled apart.

Nothing here depends on timing: one test fails exactly when flakyd runs
stress threads beside it, another exactly when its order was shuffled
(stand-ins for a race and an order dependence; bench/stress.sh and
tests/integration/analyze/test_perturb.py measure the real ones)."""
import json
import subprocess

from conftest import FLAKYD, PYTHON, query, wait_for

SUITE = '''
import os

def threads_of_parent():
    with open(f"/proc/{os.getppid()}/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])

def test_ok():
    pass

def test_starved():
    # flakyd has 2 or 3 threads, 4 more with stress:cpu:4 beside a run
    assert threads_of_parent() < 5, "starved"

def test_in_order():
    # fails exactly when flakyd shuffled the run (pytest-random-order)
    assert "random-order-seed" not in os.environ.get("PYTEST_ADDOPTS", "")
'''

CYCLE = [None, "cpu:4", "shuffle"]


def target(runs, extra=""):
    return ("targets:\n  - name: p\n"
            "    command: [%s, -m, pytest]\n"
            "    schedule: \"every 1s\"\n    runs: %d\n"
            "    perturb: [calm, stress:cpu:4, shuffle]\n%s"
            % (PYTHON, runs, extra))


def suite_runs(db):
    """(perturbation, seed, status) of the suite runs, in start order."""
    return query(db, "SELECT perturbation, seed, status FROM runs "
                 "WHERE kind = 'suite' AND status != 'skipped' ORDER BY id")


def test_cycle_recorded_and_report_separates(daemon):
    daemon.write("test_p.py", SUITE)
    # runs: 2 against a cycle of 3: the cycle goes on across triggers
    # (calm, cpu:4 | shuffle, calm | cpu:4 ...)
    daemon.write_config(target(2))
    daemon.start()
    wait_for("4 finished runs", lambda: len(daemon.runs(
        "r.status = 'done'")) >= 4, timeout=120)
    assert daemon.stop() == 0
    got = suite_runs(daemon.db)
    assert len(got) >= 4, got
    assert [p for p, _, _ in got] == [CYCLE[i % 3] for i in
                                      range(len(got))], got
    done = [(p, s) for p, s, st in got if st == "done"]
    shuffled = [s for p, s in done if p == "shuffle"]
    assert shuffled and all(s.isdigit() for s in shuffled), got
    log = daemon.logtext()
    assert "run 1/2: done, 3 tests, 1 failure, " in log, log
    assert ", shuffle seed %s" % shuffled[0] in log, log

    # the rates apart: calm, under stress, shuffled
    n = {p: sum(1 for q, _ in done if q == p) for p in set(CYCLE)}
    doc = json.loads(daemon.ctl("--format", "json", "report",
                                "--since", "all").stdout)
    t = {x["test"]: x for x in doc["tests"]}
    split = lambda name: [(p["perturbation"], p["runs"], p["failures"])
                          for p in t[name]["by_perturbation"]]
    starved, order = "test_p.py::test_starved", "test_p.py::test_in_order"
    assert split(starved) == [(None, n[None], 0), ("cpu:4", n["cpu:4"],
                              n["cpu:4"]), ("shuffle", n["shuffle"], 0)]
    assert split(order) == [(None, n[None], 0), ("cpu:4", n["cpu:4"], 0),
                            ("shuffle", n["shuffle"], n["shuffle"])]
    # failing under stress is evidence for RACE; failing shuffled is not
    assert t[starved]["signature"] == "RACE" or n["cpu:4"] < 3, t[starved]
    assert t[order]["signature"] != "RACE", t[order]
    table = daemon.ctl("report", "--since", "all").stdout
    assert ("0%% calm (0/%d), 100%% under cpu:4 (%d/%d), 0%% shuffled "
            "(0/%d)" % (n[None], n["cpu:4"], n["cpu:4"], n["shuffle"])
            in table), table
    tri = daemon.ctl("triage", "--since", "all").stdout
    assert "100%% shuffled (%d/%d)" % (n["shuffle"], n["shuffle"]) in tri
    # show offers each failing shuffled run's order again
    js = json.loads(daemon.ctl("--format", "json", "show", order).stdout)
    assert set(shuffled) <= {f["seed"] for f in js["failures_log"]}, js


def test_shuffle_refused_where_the_runner_cannot(daemon):
    """unittest cannot shuffle: the file is refused at the shuffle's place,
    by --check-config and at start, and nothing runs."""
    daemon.write("test_ok.py", "import unittest\n")
    cfg = daemon.write_config(
        "targets:\n  - name: u\n    command: [%s, -m, unittest]\n"
        "    schedule: \"every 1s\"\n    perturb: [calm, shuffle]\n"
        % PYTHON)
    want = "%s:10:21: perturb: shuffle: unittest cannot shuffle" % cfg
    r = subprocess.run([FLAKYD, "--config", cfg, "--check-config"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and r.stderr.startswith(want), r.stderr
    daemon.start(wait=False)
    assert daemon.wait_exit(15) != 0
    assert want in daemon.logtext(), daemon.logtext()
    assert daemon.runs() == []


SEEDED = '''
import os
import random

import pytest


def test_seeded():
    # the hook seeded random with the run's seed before the test (calm
    # runs have no seed)
    draw = random.random()
    random.seed(int(os.environ.get("FLAKY_SEED", "-1")))
    assert draw == random.random() or "FLAKY_SEED" not in os.environ


def test_close():
    assert random.random() == pytest.approx(0.5, abs=0.6)
'''


def test_seed_steps_recorded_with_headroom(daemon):
    """Issue 34: perturb: [calm, seed]: every other run is a seed sweep's,
    with its own seed recorded, the hook seeding its tests and the margin
    of its approximate assertion stored; the calm runs have none."""
    daemon.write("test_s.py", SEEDED)
    daemon.write_config(
        "targets:\n  - name: s\n    command: [%s, -m, pytest, -v]\n"
        "    schedule: \"every 1s\"\n    runs: 4\n"
        "    perturb: [calm, seed]\n" % PYTHON)
    daemon.start()
    wait_for("4 finished runs", lambda: len(daemon.runs(
        "r.status = 'done'")) >= 4, timeout=120)
    assert daemon.stop() == 0
    got = suite_runs(daemon.db)
    assert [p for p, _, _ in got[:4]] == [None, "seed", None, "seed"], got
    seeds = [s for p, s, st in got if p == "seed" and st == "done"]
    assert seeds and all(s.isdigit() for s in seeds), got
    doc = json.loads(daemon.ctl("--format", "json", "report", "--since",
                                "all").stdout)
    t = {x["test"]: x for x in doc["tests"]}
    assert t["test_s.py::test_seeded"]["failures"] == 0, t
    h = t["test_s.py::test_close"]["headroom"]
    assert len(h) == 1 and h[0]["runs"] == len(seeds), h
    assert h[0]["file"] == "test_s.py" and h[0]["line"] == 17, h


def test_seed_refused_where_the_runner_is_not_python(daemon):
    """perturb: seed on a runner the hook cannot seed: the file is refused
    at the seed's place, and nothing runs."""
    cfg = daemon.write_config(
        "targets:\n  - name: g\n    command: [go, test, ./...]\n"
        "    schedule: \"every 1s\"\n    perturb: [calm, seed]\n")
    r = subprocess.run([FLAKYD, "--config", cfg, "--check-config"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith("%s:10:21: perturb: seed: go is not a "
                               "Python runner" % cfg), r.stderr
