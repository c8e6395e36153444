"""Diagnosis end to end: examples/diagnose has one test per cause (a sleep
under pytest-timeout, a closed port, a thread race, an order-dependent
pair under pytest-random-order, a test that needs another to run first,
a race seen only in the timing, an always-failing test, a noisy
assertion). The run number n is the random-order seed and decides the
failures, so the counts below are exact, not probabilities:
  test_fetch_report fails when n % 3 == 1 (17 of 1..50; a run stalled
  for 0.19 s by a loaded machine would add one, still a timeout),
  test_talks_to_service when n % 4 == 2 (13), test_worker_result at least
  when n % 3 == 0 (16; a loaded machine can add more, still a race),
  test_sampled_mean when Random(n * 7919).random() <= 0.1 (6),
  test_fresh_cache when test_warm_cache ran before it (seeded order),
  test_login_user when test_create_user did not run before it (25 of
  1..50: seeds 1-5, 9, 10, 12-14, 16-18, 20, 21, 23, 26, 27, 30, 33, 35,
  42, 47, 48, 50), test_batch_complete when n % 3 == 2 (17; it fails at
  once, 0.00 or 0.01 s as pytest prints it, and passes in 60-70 ms)."""
import json
import os
import random
import re
import sqlite3

from conftest import RUNS, run, copy_example

TIMEOUT = "test_timeout.py::test_fetch_report"
INFRA = "test_infra.py::test_talks_to_service"
RACE = "test_race.py::test_worker_result"
VICTIM = "test_order.py::test_fresh_cache"
POLLUTER = "test_order.py::test_warm_cache"
BROKEN = "test_broken.py::test_discount_total"
NOISY = "test_noisy.py::test_sampled_mean"
NEEDY = "test_setup.py::test_login_user"
SETUP = "test_setup.py::test_create_user"
TIMING = "test_batch.py::test_batch_complete"


def noisy_failures():
    return sum(1 for n in range(1, RUNS + 1)
               if not random.Random(n * 7919).random() > 0.1)


def by_test(report):
    return {t["test"]: t for t in report["tests"]}


def test_report_signatures(demo):
    tests = by_test(demo.json("report"))
    assert tests[TIMEOUT]["signature"] == "TIMEOUT"
    assert tests[TIMEOUT]["failures"] >= 17
    assert tests[TIMEOUT]["signatures"] == {"TIMEOUT": tests[TIMEOUT]["failures"]}
    assert tests[INFRA]["signature"] == "INFRA"
    assert tests[INFRA]["failures"] == 13
    assert tests[RACE]["signature"] == "RACE"
    assert tests[RACE]["failures"] >= 16
    assert tests[VICTIM]["signature"] == "ORDER_DEPENDENT"
    assert tests[VICTIM]["polluter"] == POLLUTER
    assert tests[NOISY]["signature"] == "UNKNOWN"
    assert tests[NOISY]["failures"] == noisy_failures()
    # the other way round: fails unless the set-up test ran first
    assert tests[NEEDY]["signature"] == "ORDER_DEPENDENT"
    assert tests[NEEDY]["depends_on"] == SETUP
    assert tests[NEEDY]["polluter"] is None
    assert tests[NEEDY]["failures"] == 25
    assert tests[VICTIM]["depends_on"] is None
    # no pattern in the messages, but the outcome goes with the duration
    assert tests[TIMING]["signature"] == "RACE"
    assert tests[TIMING]["signatures"] == {"UNKNOWN": 17}
    rt = tests[TIMING]["race_timing"]
    assert (rt["failures"], rt["passes"]) == (17, 33), rt
    assert rt["p"] < 1e-3
    assert rt["median_ms_fail"] <= 20 and rt["median_ms_pass"] >= 50
    # broken, not flaky
    assert tests[BROKEN]["tier"] == "broken"
    assert tests[BROKEN]["failures"] == RUNS
    # no false polluter, no signature on a test that never failed
    for name, t in tests.items():
        if name != VICTIM:
            assert t["polluter"] is None, (name, t)
        if name != NEEDY:
            assert t["depends_on"] is None, (name, t)
        if name != TIMING:
            assert t["race_timing"] is None, (name, t)
        if t["failures"] == 0:
            assert t["signature"] is None and t["signatures"] == {}
    assert sum(1 for t in tests.values() if t["failures"] > 0) == 8


def test_table_has_signature_column(demo):
    out = demo.ctl("report").stdout
    line = next(l for l in out.splitlines() if TIMEOUT in l)
    assert line.startswith("CRITICAL") and " TIMEOUT " in line, out
    lines = out.splitlines()
    i = next(i for i, l in enumerate(lines) if VICTIM in l)
    assert "ORDER_DEPENDENT" in lines[i], out
    # under the row: its details, its message, then the order line
    assert "fails after %s ran before it" % POLLUTER in lines[i + 3], out
    i = next(i for i, l in enumerate(lines) if NEEDY in l)
    assert "ORDER_DEPENDENT" in lines[i], out
    assert "fails unless %s ran first" % SETUP in lines[i + 3], out
    line = next(l for l in lines if TIMING in l)
    assert " RACE " in line, out


def test_order_evidence(demo):
    d = demo.json("show", "fresh_cache", "--since", "all")
    assert d["test"] == VICTIM
    assert d["polluter"] == POLLUTER
    o = d["order"]
    assert o["fails_without"] == 0
    assert o["fails_with"] == o["runs_with"] == d["failures"]
    assert o["runs_with"] + o["runs_without"] == RUNS
    assert 0 < d["failures"] < RUNS
    assert o["candidates"] == 19 and o["kind"] == "polluter"
    assert d["depends_on"] is None
    assert "where %s ran before it" % POLLUTER in d["evidence"]
    # each failure names its seed; the polluter ran before it there
    assert len(d["failures_log"]) == d["failures"]
    for f in d["failures_log"]:
        assert f["seed"] == str(f["run"]) or f["seed"].isdigit()


def test_triage(demo):
    t = {x["test"]: x for x in demo.json("triage", "--since", "all")["tests"]}
    assert set(t) == {TIMEOUT, INFRA, RACE, VICTIM, BROKEN, NOISY, NEEDY,
                      TIMING}
    assert t[BROKEN]["verdict"] == "broken"
    assert "not flaky" in demo.ctl("triage", "discount").stdout
    for name in (TIMEOUT, INFRA, RACE, VICTIM, NOISY, NEEDY, TIMING):
        assert t[name]["verdict"] == "flaky", name
    # RACE from timing for one test only: not the broken one (no passes),
    # not the noisy one (its durations do not differ), not the timeout
    # (near its limit)
    for name in t:
        assert (t[name]["race_timing"] is None) == (name != TIMING), name
    assert t[BROKEN]["signature"] == "UNKNOWN"
    assert t[BROKEN]["timing"]["p_mann_whitney"] is None
    assert t[NOISY]["signature"] == "UNKNOWN"
    assert t[NOISY]["timing"]["varies"] is False
    assert t[TIMEOUT]["signature"] == "TIMEOUT"
    assert t[TIMEOUT]["timing"]["varies"] is False
    assert t[VICTIM]["cause"] == "a test leaks state into another"
    assert t[INFRA]["patch"] == "mock the external service in this test"
    assert t[TIMEOUT]["cause"] == "too little wall-clock allowance, slow I/O"
    # pytest-timeout's own dump is the stacks (issue 33): a sleep past
    # the limit is the clock's, not a wait that needs a timeout
    h = t[TIMEOUT]["hangs"]
    assert h["timeouts"] == t[TIMEOUT]["failures"]
    assert [p["function"] for p in h["places"]] == ["test_fetch_report"]
    assert "time.sleep" in h["places"][0]["code"]
    assert h["patch"].startswith("the test sleeps in `test_fetch_report` "
                                 "(test_timeout.py:"), h["patch"]
    assert t[INFRA]["hangs"] is None
    # a pytest-timeout of 0.2 s: failures cluster at the limit
    assert t[TIMEOUT]["timing"]["near_limit"] is True
    assert t[TIMEOUT]["timing"]["median_ms_fail"] >= 190
    assert t[INFRA]["timing"]["near_limit"] is False
    assert t[TIMEOUT]["revision_summary"].startswith(
        "%d/50 at r1" % t[TIMEOUT]["failures"])
    out = demo.ctl("triage", "--since", "all").stdout
    # issue 28: the stored orders only suspect a polluter; nothing is
    # confirmed until flakyctl polluter has rerun the tests before it
    assert ("first patch: reset state at test start, not end; name the "
            "polluter; suspected polluter %s (from the stored run orders, "
            "not confirmed): confirm with `flakyctl polluter %s`"
            % (POLLUTER, VICTIM)) in out, out
    assert "the polluter is" not in out
    assert t[VICTIM]["polluter"] == POLLUTER
    assert t[VICTIM]["polluters"] is None
    assert t[VICTIM]["polluters_minimal"] is None
    assert "suspected polluter %s" % POLLUTER in t[VICTIM]["patch"]


def test_depends_on(demo):
    """test_login_user needs test_create_user to have run: named as the
    set-up test, with the counts the seeds give."""
    d = demo.json("show", "login_user", "--since", "all")
    assert d["test"] == NEEDY and d["signature"] == "ORDER_DEPENDENT"
    assert d["depends_on"] == SETUP and d["polluter"] is None
    o = d["order"]
    assert o["kind"] == "depends_on" and o["candidates"] == 19
    assert (o["fails_with"], o["runs_with"]) == (0, 25)
    assert (o["fails_without"], o["runs_without"]) == (25, 25)
    evidence = ("fails in 25 of 25 runs where %s did not run before it, "
                "0 of 25 where it did" % SETUP)
    assert d["evidence"] == evidence
    assert d["cause"] == "the test relies on state another test creates"
    assert d["patch"] == ("make the test create its own state (a fixture) "
                          "instead of relying on %s running first" % SETUP)
    out = demo.ctl("triage", "login_user", "--since", "all").stdout
    assert out.startswith("ORDER_DEPENDENT " + NEEDY), out
    assert "  evidence:    " + evidence in out
    assert "  first patch: make the test create its own state (a fixture) " \
        "instead of relying on %s running first" % SETUP in out
    out = demo.ctl("triage", "--since", "all").stdout
    assert "instead of relying on %s running first" % SETUP in out
    assert "order: " + evidence in demo.ctl("show", "login_user",
                                            "--since", "all").stdout
    md = demo.ctl("ticket", "login_user", "--since", "all").stdout
    assert md.startswith("## test_login_user: ORDER_DEPENDENT flake (demo), "
                         "25/50 runs"), md
    assert "### Relies on a set-up test\n\n`%s`: this test failed in 25 " \
        "of 25 runs where it did not run before" % SETUP in md
    assert "### Suspected polluter" not in md


def test_race_from_timing(demo):
    """test_batch_complete's message matches no pattern, but it fails at
    once and passes in about 60 ms: RACE, with the stored per-result
    signatures left UNKNOWN."""
    d = demo.json("show", "batch_complete", "--since", "all")
    assert d["signature"] == "RACE" and d["signatures"] == {"UNKNOWN": 17}
    assert {f["signature"] for f in d["failures_log"]} == {"UNKNOWN"}
    assert {m["signature"] for m in d["modes"]} == {"UNKNOWN"}
    assert d["polluter"] is None and d["depends_on"] is None
    t = d["timing"]
    assert (t["failures"], t["passes"]) == (17, 33)
    assert t["varies"] is True and t["near_limit"] is False
    assert t["p_mann_whitney"] < 1e-3
    assert t["median_ms_fail"] <= 20 and t["median_ms_pass"] >= 50
    rt = d["race_timing"]
    assert rt["p"] == t["p_mann_whitney"]
    assert rt["median_ms_pass"] == t["median_ms_pass"]
    assert re.fullmatch(r"outcome varies with timing: fails in a median of "
                        r"\d+ ms, passes in a median of \d+ ms, "
                        r"Mann-Whitney p=\d(\.\d)?e-\d\d \(17 failures, "
                        r"33 passes\)", d["evidence"]), d["evidence"]
    assert d["cause"] == "shared mutable state between threads or async tasks"
    out = demo.ctl("triage", "batch_complete", "--since", "all").stdout
    assert out.startswith("RACE            " + TIMING), out
    assert "  evidence:    outcome varies with timing: " in out
    text = demo.ctl("show", "batch_complete", "--since", "all").stdout
    assert "signature RACE" in text and "race: outcome varies" in text
    md = demo.ctl("ticket", "batch_complete", "--since", "all").stdout
    assert md.startswith("## test_batch_complete: RACE flake (demo), "
                         "17/50 runs")
    assert "### Timing points at a race" in md


def test_show_evidence_log(demo):
    d = demo.json("show", TIMEOUT, "--since", "all")
    log = d["failures_log"]
    assert len(log) == d["failures"] >= 17
    # every run whose number (= seed) is 1 mod 3 failed
    assert {int(f["seed"]) for f in log} >= {n for n in range(1, RUNS + 1)
                                             if n % 3 == 1}
    for f in log:
        assert f["revision"] == "r1"
        assert f["signature"] == "TIMEOUT"
        assert f["exit_code"] == 1
        assert "Timeout" in f["message"]
        assert re.fullmatch(r"[0-9a-f]{16}", f["fingerprint"])
        assert f["position"] >= 0 and f["run_duration_ms"] > 0
    assert len({f["fingerprint"] for f in log}) == 1
    assert len(d["modes"]) == 1 and d["modes"][0]["count"] == len(log)
    text = demo.ctl("show", "fetch_report", "--since", "all").stdout
    assert text.startswith(TIMEOUT + "  (target demo)")
    assert "%d failures in 50 runs" % len(log) in text


def test_ticket(demo):
    md = demo.ctl("ticket", "fetch_report", "--since", "all").stdout
    assert re.match(r"## test_fetch_report: TIMEOUT flake \(demo\), "
                    r"1[78]/50 runs, median duration \d+ ms\n", md), md
    assert "95% interval" in md and "### Failure modes (1)" in md
    assert "Failed: Timeout >0.2s" in md
    assert "### Reproduce" in md and "./run.sh" in md
    md = demo.ctl("ticket", "fresh_cache", "--since", "all").stdout
    assert md.startswith("## test_fresh_cache: ORDER_DEPENDENT flake (demo)")
    assert "### Suspected polluter\n\n`%s`" % POLLUTER in md
    assert ("Suspected from the stored run orders, not confirmed" in md and
            "`flakyctl polluter %s` reruns" % VICTIM in md), md
    j = demo.json("ticket", "discount_total", "--since", "all")
    assert j["title"].startswith("test_discount_total: broken, UNKNOWN "
                                 "failure (demo), 50/50 runs")
    assert j["diagnosis"]["verdict"] == "broken"
    assert "rerunning will not help" in j["body"]


def test_unknown_and_ambiguous_names(demo):
    p = demo.ctl("show", "fetch_reprt", check=2)
    assert "no test matches 'fetch_reprt'" in p.stderr
    assert p.stderr.splitlines()[1].strip().startswith(TIMEOUT), p.stderr
    p = demo.ctl("ticket", "cache", check=2)
    assert "'cache' matches 4 tests" in p.stderr
    for name in (VICTIM, POLLUTER):
        assert name in p.stderr
    p = demo.ctl("show", "x", "--target", "nosuch", check=2)
    assert "unknown target 'nosuch'" in p.stderr


def test_revisions_and_user_signatures(tmp_path):
    """A flaky test at r1 fixed at r2: the fix stands on its own evidence;
    a user signature from the config wins over the built-in one."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_flip.py").write_text(
        "import os\n"
        "def test_flip():\n"
        "    n = int(open('n').read()) if os.path.exists('n') else 0\n"
        "    open('n', 'w').write(str(n + 1))\n"
        "    assert n % 2 == 0, 'upstream said: quota exceeded'\n")
    (tmp_path / "flaky.yaml").write_text(
        "signatures:\n"
        "  - name: QUOTA\n"
        "    patterns: ['quota exceeded$']\n")
    db = str(tmp_path / "flaky.db")
    cmd = ["--", "/usr/bin/pytest", "-p", "no:cacheprovider",
           "-p", "no:random_order", "-v", "test_flip.py"]
    run(["--db", db, "--config", str(tmp_path / "flaky.yaml"), "analyze",
         "--runs", "6", "--target", "flip", "--revision", "r1"] + cmd,
        cwd=str(suite), check=0)
    (suite / "test_flip.py").write_text("def test_flip():\n    pass\n")
    run(["--db", db, "analyze", "--runs", "20", "--jobs", "4",
         "--target", "flip", "--revision", "r2"] + cmd, cwd=str(suite), check=0)
    d = json.loads(run(["--db", db, "--format", "json", "show", "flip"],
                       check=0).stdout)
    assert d["signature"] == "QUOTA" and d["signatures"] == {"QUOTA": 3}
    revs = d["revisions"]
    assert [(r["revision"], r["runs"], r["failures"], r["state"])
            for r in revs] == [("r1", 6, 3, "flaky"), ("r2", 20, 0, "stable")]
    assert revs[1]["transition"] == "fixed"
    assert d["verdict"] == "fixed"
    # 0 of 20: the Wilson upper bound z^2 / (n + z^2) = 16%
    assert d["revision_summary"] == "0/20 at r2, at most 16% at 95%, fixed since r1"
    # issue 28, item 16: the transition in the state's cell, no column
    # that is empty in most tickets
    md = run(["--db", db, "ticket", "flip"], check=0).stdout
    assert ("| revision | runs | failures | 95% interval | state |\n"
            "|---|---:|---:|---|---|\n"
            "| `r1` | 6 | 3 | 19%-81% | flaky |\n"
            "| `r2` | 20 | 0 | 0%-16% | stable (fixed) |\n") in md, md


def test_bad_signature_regex(tmp_path):
    cfg = tmp_path / "flaky.yaml"
    cfg.write_text("signatures:\n  - name: BAD\n    patterns:\n      - 'a(b'\n")
    p = run(["--db", str(tmp_path / "x.db"), "--config", str(cfg), "analyze",
             "--", "/bin/true"], check=2)
    assert "%s:4:" % cfg in p.stderr and "a(b" in p.stderr


def test_confirm_alone(demo, tmp_path):
    """flakyctl confirm reruns through examples/diagnose/flaky.yaml's
    isolate: (alone.sh takes the next run number, as run.sh does): the
    order-dependent test passes alone until chance is under 1%; the
    timeout fails alone too (every third run number)."""
    db = str(tmp_path / "copy.db")
    src = sqlite3.connect(demo.db)
    dst = sqlite3.connect(db)
    src.backup(dst)
    src.close()
    dst.close()
    cfg = os.path.join(demo.path, "flaky.yaml")
    p = run(["--db", db, "--config", cfg, "--format", "json", "confirm",
             "fresh_cache", "--max-runs", "20"], cwd=demo.path, check=0)
    (t,) = json.loads(p.stdout)["tests"]
    assert t["test"] == VICTIM
    assert t["passes_alone"] is True and t["alone_failures"] == 0
    assert t["signature"] == "ORDER_DEPENDENT"
    assert t["suite_runs"] == RUNS and 0 < t["runs_now"] < 20
    assert t["conclusion"] == "passes alone, fails in the suite: ORDER_DEPENDENT"
    p = run(["--db", db, "--config", cfg, "--format", "json", "confirm",
             "fetch_report", "--max-runs", "20"], cwd=demo.path, check=0)
    (t,) = json.loads(p.stdout)["tests"]
    assert t["alone_failures"] >= 1 and t["passes_alone"] is False
    assert t["conclusion"] == "fails alone too: not order dependent"
    # The mirror: test_login_user fails alone every time (test_create_user
    # did not run first) and passed in 25 of the 50 suite runs. Settled
    # once all passes falling into the suite's runs is under 1% by chance:
    # C(50,25)/C(50+n,25) < 0.01 first at n = 8 runs alone.
    p = run(["--db", db, "--config", cfg, "--format", "json", "confirm",
             "login_user", "--max-runs", "20"], cwd=demo.path, check=0)
    (t,) = json.loads(p.stdout)["tests"]
    assert t["test"] == NEEDY
    assert t["fails_alone"] is True and t["passes_alone"] is False
    assert (t["runs_now"], t["alone_failures"]) == (8, 8), t
    assert (t["suite_runs"], t["suite_failures"]) == (RUNS, 25), t
    assert t["signature"] == "ORDER_DEPENDENT"
    assert t["conclusion"] == ("fails alone, passes in the suite: relies on "
                               "a test that runs before it, ORDER_DEPENDENT")
    d = json.loads(run(["--db", db, "--format", "json", "show", NEEDY],
                       check=0).stdout)
    assert d["alone"]["fails_alone"] is True and d["alone"]["runs"] == 8
    d = json.loads(run(["--db", db, "--format", "json", "show", VICTIM],
                       check=0).stdout)
    # the runs alone count at the suite's revision (not a new, unknown one)
    assert d["alone"]["runs"] > 0 and d["alone"]["passes_alone"] is True
    assert [(r["revision"], r["runs"]) for r in d["revisions"]] == \
        [("r1", RUNS + d["alone"]["runs"])]
    assert d["verdict"] == "flaky"
    # no isolate: template, no confirm
    p = run(["--db", db, "confirm", "fresh_cache"], cwd=demo.path, check=2)
    assert "no isolate: template" in p.stderr
