"""What flakyctl ci prints for a CI system, on the pytest shop with seed 4
(the flaky test fails, then passes on retry 1; the broken one fails 4 of
4; the quarantined one fails; the new one fails its 4th run): GitHub's
workflow commands at each test's file and line and the step summary; the
JUnit report (GitLab's test report, Jenkins) checked against a schema of
JUnit with Surefire's rerun elements (junit.xsd, xmllint) and read back
by flakyctl ingest with every attempt; and the JSON."""
import json
import os
import sqlite3
import subprocess

import pytest

from conftest import HERE, ctl

SEED = 4


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The shop, and its trial run with each format: (shop, outputs)."""
    import ci_trials
    from conftest import FLAKYCTL
    tmp = tmp_path_factory.mktemp("outputs")
    s = ci_trials.Shop("pytest", FLAKYCTL, str(tmp))
    out = {}
    for fmt in ("github", "junit", "json"):
        summary = tmp / ("summary-%s.md" % fmt)
        db = str(tmp / ("%s.db" % fmt))
        subprocess.run(["cp", s.seed_db, db], check=True)
        p = s.ctl(["--db", db, "--format", fmt, "ci", "--target", s.target,
                   "--branch", "feature", "--new-tests", "10"] +
                  ["--budget", "5m", "--"] +
                  s.spec["full"], "out-" + fmt, SEED,
                  extra_env={"GITHUB_STEP_SUMMARY": str(summary)})
        out[fmt] = (p, summary.read_text() if summary.exists() else None,
                    db)
    return s, out


def line_of(path, needle):
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if needle in line:
                return n
    raise AssertionError(needle)


def test_github_annotations(runs):
    s, out = runs
    p, summary, _ = out["github"]
    assert p.returncode == 1, p
    shop_py = os.path.join(s.dir, "test_shop.py")
    cmds = [ln for ln in p.stdout.splitlines() if ln.startswith("::")]
    flaky = ("::warning file=test_shop.py,line=%d,title=Flaky test (passed "
             "on a retry)::test_shop.py::test_payment_retry: failed, then "
             "passed on retry 1 of 3 (known: " %
             line_of(shop_py, "def test_payment_retry"))
    assert any(c.startswith(flaky) for c in cmds), cmds
    # % is escaped as GitHub's toolkit does; the message's first line
    # follows after %0A
    broken = [c for c in cmds if "test_legacy_api" in c][0]
    assert broken.startswith(
        "::error file=test_shop.py,line=%d,title=Broken test (failed every "
        "attempt)::test_shop.py::test_legacy_api: failed 4 of 4 (known: "
        "100%%25 of " % line_of(shop_py, "def test_legacy_api")), broken
    assert "%0AAssertionError: assert {'v': 1} == {'v': 2}" in broken
    assert any(c.startswith("::notice file=test_shop.py,") and
               "title=Quarantined test (not counted)::" in c and
               "(https://tracker.example/41)" in c for c in cmds), cmds
    assert any(c.startswith("::error file=test_coupons.py,line=4,title=New "
                            "test failed before it merged::test_coupons.py"
                            "::test_coupon_stacking: new test failed 1 of 4 "
                            "runs: flaky before it merged") for c in cmds)
    assert len(cmds) == 4, cmds
    # the plain lines follow, for the log
    assert "flaky ci: exit 1: 1 broken, 1 new failed, 1 flaky, 1 " \
        "quarantined, 4 passed" in p.stdout, p.stdout
    # the step summary: a heading, a row per test
    assert summary.startswith("### flaky ci: failed (exit 1)\n"), summary
    assert ("| flaky | `test_shop.py::test_payment_retry` | 2 | failed, "
            "then passed on retry 1 of 3") in summary, summary
    assert "| broken | `test_shop.py::test_legacy_api` | 4 |" in summary
    assert "| new failed | `test_coupons.py::test_coupon_stacking` | 4 |" \
        in summary


def test_junit_schema_and_ingest(runs, tmp_path):
    s, out = runs
    p, _, _ = out["junit"]
    assert p.returncode == 1, p
    report = tmp_path / "report.xml"
    report.write_text(p.stdout)
    # the words go to stderr beside the report
    assert "broken: test_shop.py::test_legacy_api" in p.stderr
    x = subprocess.run(["xmllint", "--noout", "--schema",
                        os.path.join(HERE, "junit.xsd"), str(report)],
                       capture_output=True, text=True)
    assert x.returncode == 0, x.stderr
    assert '<testsuite name="shop-pytest" tests="8" failures="2" ' \
        'errors="0" skipped="1"' in p.stdout
    # read back: each retried test's attempts are kept
    db = str(tmp_path / "re.db")
    ctl(["--db", db, "ingest", "--target", "re", str(report)])
    con = sqlite3.connect(db)
    got = dict(con.execute(
        "SELECT t.name, group_concat(a.outcome, '') FROM attempts a JOIN "
        "results r ON r.run_id = a.run_id AND r.position = a.position JOIN "
        "tests t ON t.id = r.test_id GROUP BY t.name ORDER BY t.name, "
        "a.attempt").fetchall())
    outcomes = dict(con.execute(
        "SELECT t.name, r.outcome FROM results r JOIN tests t ON t.id = "
        "r.test_id").fetchall())
    con.close()
    # flakyFailure then a pass; a failure and three rerunFailures
    assert got == {"shop-pytest.test_shop.py::test_payment_retry": "10",
                   "shop-pytest.test_shop.py::test_legacy_api": "1111"}, got
    assert outcomes["shop-pytest.test_shop.py::test_inventory_sync"] == 3
    assert outcomes["shop-pytest.test_coupons.py::test_coupon_stacking"] == 1
    assert outcomes["shop-pytest.test_shop.py::test_cart_total"] == 0


def test_json(runs):
    _, out = runs
    p, _, db = out["json"]
    j = json.loads(p.stdout)
    assert j["exit"] == 1 and j["target"] == "shop-pytest"
    assert j["branch"] == "feature" and j["new_tests"] == 10
    tests = {t["test"]: t for t in j["tests"]}
    t = tests["test_shop.py::test_payment_retry"]
    assert (t["verdict"], t["attempts"], t["passed_on_retry"],
            t["fails_step"]) == ("flaky", 2, 1, False)
    assert t["known"]["runs"] >= 2 and t["known"]["failures"] >= 1
    assert tests["test_shop.py::test_inventory_sync"]["known"][
        "ticket"] == "https://tracker.example/41"
    # every run is in the database with its branch
    con = sqlite3.connect(db)
    stored = [r[0] for r in con.execute(
        "SELECT run_id FROM ci_runs WHERE branch = 'feature' ORDER BY 1")]
    con.close()
    assert stored == j["runs"] and len(stored) == 1 + j["rounds"], (stored,
                                                                     j)
    assert 0 < j["cost_ratio"] and j["first_run_s"] > 0
