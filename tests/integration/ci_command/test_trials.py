"""A few of bench/ci_trials.py's seeded trials per runner, each verdict
and exit code checked against its prediction from the seed (the 200-trial
figures are in docs/ci.md): broken fails the step, quarantined never
does, the 30% flaky test passes on the retry the seed says, the new 20%
test is caught on the run the seed says; and pytest-rerunfailures on the
same seed retries the same tests to the same verdicts, keeping none of
the failed attempts that flakyctl ci stores."""
import json

import ci_trials
import pytest

# seeds that cover every verdict between them (predict() says so, the
# first test checks it): 15 the flaky test fails every attempt (exit 1
# with the broken test quarantined), 51 it passes on retry 2 and the new
# test fails its first run, 1 the new test passes all ten runs, 38 the
# flaky test passes on retry 3, 582 the new test (a plain 20% test without
# --new-tests) fails every attempt, 4 and 5 retry 1
SEEDS = {"pytest": [15, 51], "unittest": [1, 38, 582], "go": [4],
         "jest": [5]}


def configs(runner):
    """Jest starts slowly: the configuration with every verdict only."""
    return ("new",) if runner == "jest" else ("new", "flaky")


def test_the_seeds_cover_every_verdict():
    """Each verdict the trials below check occurs among their seeds."""
    got = set()
    for runner, seeds in SEEDS.items():
        for s in seeds:
            for config in configs(runner):
                v, _ = ci_trials.predict(s, config)
                got |= {x[0] for x in v.values() if x is not None}
                got |= {"passed" for x in v.values() if x is None}
    assert {"flaky", "broken", "quarantined", "new failed", "new passed",
            "passed"} <= got, got
    exits = {ci_trials.predict(s, "flaky")[1] for v in SEEDS.values()
             for s in v}
    assert exits == {0, 1}, exits


@pytest.mark.parametrize("runner", ["pytest", "unittest", "go", "jest"])
def test_verdicts_as_predicted(shop, runner):
    s = shop(runner)
    for seed in SEEDS[runner]:
        for config in configs(runner):
            want, want_exit = ci_trials.predict(seed, config)
            code, got, out = s.trial(seed, config)
            assert (code, got) == (want_exit, want), (seed, config, out)
            # every attempt is a stored run; the retries ran only tests
            # that were asked for (flakyctl ci refuses others: exit 2)
            assert len(out["runs"]) == 1 + out["rounds"], out
            assert out["incomplete"] is None, out


def test_against_pytest_rerunfailures(shop):
    s = shop("pytest")
    for seed in (15,):
        c = ci_trials.compare_rerunfailures(s, seed)
        assert c["same_retried"] and c["same_verdicts"], c
        assert c["ours_exit"] == c["theirs_exit"] == 1, c
        # theirs: the reruns are gone from its JUnit; ours: every failed
        # attempt is a stored result
        assert c["theirs_failed_attempts_in_junit"] == 0, c
        retried = sum(c["ours_retried"].values())
        assert c["ours_failed_attempts_stored"] >= retried, c


def test_chunks_merged_as_one_call(tmp_path):
    """--merge sums chunks of seeds per runner; the exit codes JSON made
    strings count again, and the bounds are checked from 200 trials."""
    def chunk(seeds, exit1):
        return {"runner": "unittest", "trials": seeds, "mismatches": [],
                "exit": {"new": {"1": exit1, "0": seeds - exit1},
                         "flaky": {"0": seeds}},
                "verdicts": {"new/new": {"new failed": seeds}},
                "first_s": 1.0, "retries_s": 2.0, "whole_s": 4.0,
                "rounds": 3, "wall_s": 5.0}
    paths = []
    for i, (n, e) in enumerate(((150, 150), (50, 49))):
        paths.append(str(tmp_path / ("c%d.json" % i)))
        with open(paths[-1], "w") as f:
            json.dump([chunk(n, e)], f)
    (res,) = ci_trials.merged(paths)
    assert res["trials"] == 200 and res["retries_s"] == 4.0, res
    assert res["exit"]["new"] == {1: 199, 0: 1}, res
    lines, missed = ci_trials.report(res, True)
    assert "exit 1 with the broken test 0.995" in lines[1], lines
    assert "unittest: exit 1 in 0.995 of trials" in missed, missed


def test_a_directory_as_analyze_takes_it(shop):
    """`flakyctl ci DIR`: the runner found in the directory, its command
    completed as analyze's is, to the verdicts the seed predicts."""
    s = shop("pytest")
    seed = 51   # the flaky test passes on retry 2
    want, want_exit = ci_trials.predict(seed, "flaky")
    # the database that knows the quarantine, and the same target
    p = s.ctl(["--db", s.seed_db, "--format", "json", "ci",
               "--target", s.target, "--budget", "10m",
               "--quarantine-file", s.qfile, s.dir], "dir", seed)
    out = json.loads(p.stdout)
    by_id = {t["test"]: t for t in out["tests"]}
    got = {role: None if tid not in by_id else (
        by_id[tid]["verdict"], by_id[tid]["attempts"],
        by_id[tid]["passed_on_retry"])
        for role, tid in s.spec["ids"].items()}
    assert (p.returncode, got) == (want_exit, want), (p.stderr, out)
    assert out["incomplete"] is None and out["passed"] == 4, out
