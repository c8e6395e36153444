"""Runs of only some tests (issue 18): after its first whole runs
analyze --until-settled reruns only the tests still open, --risky only the
tests with static scan findings; each through the runner's own selection,
stored with runs.selected (docs/schema.md), counted for the tests they ran
only."""
import json

from conftest import PYTEST, connect, run

SETTLED = [PYTEST, "-p", "no:cacheprovider", "-p", "no:random_order",
           "test_settled.py", "sub/test_ids.py"]


def env(tmp_path, name):
    """Where the demos count their executions: a fresh place starts over."""
    return {"FLAKY_DEMO_STATE": str(tmp_path / name)}


def tiers(report):
    return {t["test"]: t["tier"] for t in report["tests"]}


def subset_runs(db):
    """(id, selected, tests, summary_total, ids) of each run of only some
    tests, oldest first."""
    with connect(db) as con:
        runs = con.execute("SELECT id, selected, tests, summary_total "
                           "FROM runs WHERE selected IS NOT NULL "
                           "ORDER BY id").fetchall()
        return [r + (sorted(n for (n,) in con.execute(
            "SELECT t.name FROM results r JOIN tests t ON t.id = r.test_id "
            "WHERE r.run_id = ?", (r[0],))),) for r in runs]


def test_until_settled_reruns_open_tests(demo, tmp_path):
    d = demo("demo-settled")
    db = str(tmp_path / "f.db")
    p = run(["--db", db, "--format", "json", "analyze", "--until-settled",
             "--"] + SETTLED, cwd=d, env=env(tmp_path, "a"), check=0)
    r = json.loads(p.stdout)
    assert r["until_settled"]["stopped"] == "settled"
    with connect(db) as con:
        whole = con.execute("SELECT count(*), min(tests), max(tests) FROM "
                            "runs WHERE selected IS NULL").fetchone()
    # the first 10 runs are whole: 8 tests each, as pytest counts them
    assert whole == (10, 8, 8)
    sub = subset_runs(db)
    assert len(sub) == r["runs"]["total"] - 10 and len(sub) > 0
    assert r["until_settled"]["selected_runs"] == len(sub)
    for run_id, selected, tests, total, ids in sub:
        # pytest ran exactly the tests selected, and said so itself
        assert selected == tests == total == len(ids), (run_id, ids)
    # the first rerun: the tests failing and not settled after 10 runs
    # (test_always, failing all 10, is settled as broken)
    assert sub[0][4] == [
        "sub/test_ids.py::TestKlass::test_method",
        "sub/test_ids.py::test_param[a-b]",
        "test_settled.py::test_half",
        "test_settled.py::test_three_in_five"]
    assert all(set(x[4]) <= set(sub[0][4]) for x in sub)
    # a test's rate counts the runs where it ran
    t = {x["test"]: x for x in r["tests"]}
    assert (t["test_settled.py::test_half"]["failures"],
            t["test_settled.py::test_half"]["runs"]) == (11, 22)
    assert t["test_settled.py::test_steady"]["runs"] == 10
    # the tiers a fixed number of whole runs gives
    fixed = run(["--db", str(tmp_path / "g.db"), "--format", "json",
                 "analyze", "--runs", "10", "--jobs", "2", "--"] + SETTLED,
                cwd=d, env=env(tmp_path, "b"), check=0)
    assert tiers(r) == tiers(json.loads(fixed.stdout))


def test_risky_reruns_only_findings(demo, tmp_path):
    d = demo("risky")
    db = str(tmp_path / "f.db")
    p = run(["--db", db, "--format", "json", "analyze", "--risky",
             "--runs", "6", d], env=env(tmp_path, "r"), check=0)
    r = json.loads(p.stdout)
    risky = ["geometry/test_shapes.py::TestCircle::test_area",
             "geometry/test_shapes.py::TestSquare::test_diagonal",
             "test_numbers.py::test_float_sum"]
    sub = subset_runs(db)
    assert len(sub) == 6
    assert all(x[1:4] == (3, 3, 3) and x[4] == risky for x in sub), sub
    with connect(db) as con:
        assert con.execute("SELECT count(*) FROM runs WHERE selected IS "
                           "NULL").fetchone()[0] == 0
    t = {x["test"]: x for x in r["tests"]}
    assert sorted(t) == risky
    # fails on its 3rd and 6th executions: found, critical
    area = t[risky[0]]
    assert (area["failures"], area["runs"], area["tier"]) == (2, 6,
                                                             "critical")
    assert [k["line"] for k in area["static_risks"]] == [15]
    assert t[risky[2]]["tier"] == "stable"
    assert t[risky[2]]["static_risks"][0]["category"] == "approx"
    assert "3 tests with approximate assertions" in p.stderr


def test_risky_until_settled(demo, tmp_path):
    """--risky with --until-settled: the 3 risky tests in the first runs,
    then only the one still open."""
    d = demo("risky")
    db = str(tmp_path / "f.db")
    p = run(["--db", db, "--format", "json", "analyze", "--risky",
             "--until-settled", "--max-runs", "11", d],
            env=env(tmp_path, "r"), check=0)
    s = json.loads(p.stdout)["until_settled"]
    assert (s["stopped"], s["runs"]) == ("max-runs", 11)
    sub = subset_runs(db)
    assert [x[1] for x in sub] == [3] * 10 + [1]
    assert sub[-1][4] == ["geometry/test_shapes.py::TestCircle::test_area"]


def test_cannot_select_runs_whole(tmp_path):
    """A command whose runner cannot select (a shell script printing TAP,
    one test failing every other run: open past the first 10 runs) is
    told, and reruns the whole suite."""
    db = str(tmp_path / "f.db")
    script = ('n=$(($(cat count 2>/dev/null || echo 0) + 1)); echo $n >count; '
              'echo 1..2; echo ok 1 - steady; '
              'if [ $((n % 2)) = 0 ]; then echo not ok 2 - half; '
              'else echo ok 2 - half; fi')
    p = run(["--db", db, "analyze", "--until-settled", "--max-runs", "12",
             "--", "sh", "-c", script], cwd=str(tmp_path))
    assert "sh: reruns the whole suite: the command's runner (not " \
        "recognized) cannot be told which tests to run" in p.stderr
    with connect(db) as con:
        assert con.execute("SELECT count(*), count(selected), min(tests) "
                           "FROM runs").fetchone() == (12, 0, 2)


def test_risky_refuses_other_runners(demo, tmp_path):
    p = run(["--db", str(tmp_path / "f.db"), "analyze", "--risky", "--",
             "sh", "-c", "true"], cwd=str(tmp_path), check=2)
    assert "--risky: sh (not recognized) is not a Python runner" in p.stderr
