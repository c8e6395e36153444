"""flakyctl analyze and report end to end: the real flakyctl runs the real
pytest, unittest and Jest on the demo suites in examples/.

The demo tests fail with known probabilities. Our own tests must never be
flaky, so a true rate is only required to lie inside the z = 5.3 interval of
the counts (a false alarm about 1 in 10^7 per check) and "it failed at least
once" is only asserted where the chance of zero failures is below 10^-6.
"""
import glob
import json
import os
import resource
import sqlite3
import subprocess
import time

import pytest

from conftest import (PYTEST, PYTHON, ROOT, analyze_json, connect, run,
                      wilson)

Z_WIDE = 5.3


# a command with runner output (TAP): analyze exits 2 when no run gives
# a test result, so `true` no longer stands for a command that works
TAP_OK = ["--", "/bin/sh", "-c", "echo 1..1; echo ok 1 - t"]


def by_test(doc):
    return {t["test"]: t for t in doc["tests"]}


def check_intervals(doc):
    """Every reported interval is the Wilson interval of its counts."""
    for t in doc["tests"]:
        lo, hi = wilson(t["failures"], t["runs"])
        assert abs(t["ci_low"] - lo) < 1e-6, t
        assert abs(t["ci_high"] - hi) < 1e-6, t
        if t["runs"]:
            assert abs(t["fail_rate"] - t["failures"] / t["runs"]) < 1e-9
        for key in ("target", "test", "runs", "failures", "fail_rate",
                    "ci_low", "ci_high", "tier", "median_ms_pass",
                    "median_ms_fail", "top_message", "runs_needed"):
            assert key in t, key


def consistent(t, p):
    lo, hi = wilson(t["failures"], t["runs"], Z_WIDE)
    assert lo <= p <= hi, f"{t['test']}: true rate {p} outside {lo:.3f}-{hi:.3f} ({t['failures']}/{t['runs']})"


def test_pytest_demo(demo, tmp_path):
    d = demo("demo-pytest")
    db = str(tmp_path / "flaky.db")
    doc = analyze_json(["--runs", "40", "--jobs", "2", "--target", "shop",
                        "--", PYTEST, "-v", "-p", "no:randomly"], d, db)
    assert doc["runs"]["total"] == 40 and doc["runs"]["done"] == 40
    check_intervals(doc)
    t = by_test(doc)
    consistent(t["test_shop.py::test_payment_retry"], 0.30)
    consistent(t["test_shop.py::test_cache_expiry"], 0.10)
    consistent(t["test_shop.py::TestInventory::test_release"], 0.50)
    for flaky in ("test_shop.py::test_payment_retry",
                  "test_shop.py::TestInventory::test_release"):
        assert t[flaky]["tier"] in ("noise", "warning", "critical"), t[flaky]
        assert "AssertionError" in t[flaky]["top_message"]
    broken = t["test_shop.py::test_legacy_api"]
    assert broken["tier"] == "broken" and broken["failures"] == broken["runs"] == 40
    assert broken["runs_needed"] == 0
    for stable in ("test_shop.py::test_cart_total", "test_shop.py::test_checkout_flow",
                   "test_shop.py::TestInventory::test_reserve",
                   "test_shop.py::test_names[with space]",
                   "test_shop.py::test_names[\\xfcn\\xefc\\xf8d\\xe9]",  # as pytest prints it
                   "test_shop.py::test_names[br[ack]ets]",
                   "test_shop.py::test_names[q\"uote]"):
        assert t[stable]["tier"] == "stable" and t[stable]["runs"] == 40, stable
    skipped = t["test_shop.py::test_refunds"]
    assert skipped["runs"] == 0 and skipped["skips"] == 40

    # Everything it saw is in the database.
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM runs WHERE status = 'done'").fetchone()[0] == 40
    assert con.execute("SELECT count(*) FROM results").fetchone()[0] == 40 * 13
    assert con.execute("SELECT count(DISTINCT runner_version) FROM runs").fetchone()[0] == 1
    assert con.execute("SELECT runner FROM runs LIMIT 1").fetchone()[0] == "pytest"
    # Positions are the run order, 0..12 in every run.
    assert con.execute("SELECT count(*) FROM results GROUP BY run_id "
                       "HAVING min(position) != 0 OR max(position) != 12").fetchall() == []
    # --jobs 2: the evidence shows two runs in flight.
    assert con.execute("SELECT max(in_flight) FROM runs").fetchone()[0] == 2
    # One message row per distinct failure text after normalization.
    n = con.execute("SELECT count(*) FROM messages").fetchone()[0]
    assert 3 <= n <= 4, n

    # report reads the same counts from the rollups.
    rep = json.loads(run(["report", "--db", db, "--since", "1d", "--format",
                          "json"], check=0).stdout)
    r = by_test(rep)
    for name, row in t.items():
        assert (r[name]["runs"], r[name]["failures"]) == (row["runs"], row["failures"])
    check_intervals(rep)


def test_unittest_demo(demo, tmp_path):
    d = demo("demo-unittest")
    db = str(tmp_path / "flaky.db")
    doc = analyze_json(["--runs", "40", "--jobs", "2", "--",
                        PYTHON, "-m", "unittest", "-v"], d, db)
    assert doc["target"] == "demo-unittest-unittest"
    check_intervals(doc)
    t = by_test(doc)
    consistent(t["test_inventory.InventoryTest.test_sync"], 0.30)
    assert t["test_inventory.InventoryTest.test_sync"]["tier"] not in ("stable", "broken")
    assert t["test_inventory.InventoryTest.test_reindex"]["tier"] == "broken"
    assert t["test_inventory.InventoryTest.test_count"]["tier"] == "stable"
    assert t["test_inventory.PricingTest.test_discount"]["tier"] == "stable"
    assert t["test_inventory.InventoryTest.test_warehouse"]["skips"] == 40


def test_jest_demo(demo, tmp_path):
    d = demo("demo-jest")
    db = str(tmp_path / "flaky.db")
    doc = analyze_json(["--runs", "8", "--jobs", "2", "--",
                        os.path.join(d, "node_modules", ".bin", "jest"),
                        "--verbose", "--ci"], d, db)
    assert doc["runs"]["done"] == 8
    check_intervals(doc)
    t = by_test(doc)
    sep = " \u203a "
    retry = sep.join(["__tests__/cart.test.js", "cart", "checkout", "retries the payment"])
    legacy = sep.join(["__tests__/cart.test.js", "cart", "checkout", "talks to the legacy API"])
    twice = sep.join(["__tests__/cart.test.js", "cart", "same name twice"])
    consistent(t[retry], 0.30)
    assert t[legacy]["tier"] == "broken" and t[legacy]["runs"] == 8
    # Two tests with the same name stay two tests.
    assert t[twice]["runs"] == 8 and t[twice + " #2"]["runs"] == 8
    assert t[sep.join(["__tests__/search.test.js", "search", "finds a word"])]["tier"] == "stable"
    assert t[sep.join(["__tests__/cart.test.js", "cart", "refunds"])]["skips"] == 8
    # Jest prints durations (of tests that take a few ms): medians are known.
    adds = t[sep.join(["__tests__/cart.test.js", "cart", "adds items"])]
    assert adds["median_ms_pass"] is not None and adds["median_ms_pass"] >= 19


def test_table_output(demo, tmp_path):
    d = demo("demo-unittest")
    db = str(tmp_path / "flaky.db")
    p = run(["analyze", "--runs", "3", "--db", db, "--", PYTHON, "-m", "unittest", "-v"],
            cwd=d, check=0)
    lines = p.stdout.splitlines()
    assert lines[0].startswith("3 runs of /usr/bin/python3 -m unittest -v (target demo-unittest-unittest)")
    assert any(l.startswith("BROKEN    test_inventory.InventoryTest.test_reindex") and "3/3" in l
               for l in lines), p.stdout
    # issue 28: the test skipped in every run is not counted as stable
    # (test_sync fails 30% of runs: in 3 runs it may never fail)
    assert lines[-2] in ("stable    2 tests", "stable    3 tests"), p.stdout
    assert lines[-1] == ("skipped   1 test in every run: no evidence "
                         "either way"), p.stdout
    assert "\033[" not in p.stdout          # no colour off a terminal
    for fmt, first in (("csv", "tier,target,test,"), ("markdown", "| tier | test |")):
        q = run(["report", "--db", db, "--format", fmt], check=0)
        assert q.stdout.startswith(first), q.stdout


def test_fail_on(tmp_path):
    (tmp_path / "test_x.py").write_text("def test_bad():\n    assert False\n"
                                        "def test_good():\n    pass\n")
    db = str(tmp_path / "flaky.db")
    args = ["analyze", "--db", db, "--runs", "2", "--fail-on"]
    cmd = ["--", PYTEST, "-v", "-p", "no:random_order"]
    # broken counts only when listed
    assert run(args + ["critical"] + cmd, cwd=tmp_path).returncode == 0
    assert run(args + ["warning"] + cmd, cwd=tmp_path).returncode == 0
    assert run(args + ["critical,broken"] + cmd, cwd=tmp_path).returncode == 1
    assert run(["report", "--db", db, "--fail-on", "broken"]).returncode == 1
    assert run(["report", "--db", db, "--fail-on", "critical"]).returncode == 0
    p = run(args + ["bogus"] + cmd, cwd=tmp_path)
    assert p.returncode == 2 and "unknown tier 'bogus'" in p.stderr


def test_global_options_anywhere(tmp_path):
    db = str(tmp_path / "g.db")
    assert run(["--db", db, "analyze", "--runs", "1"] + TAP_OK, cwd=tmp_path).returncode == 0
    assert run(["analyze", "--db", db, "--runs", "1"] + TAP_OK, cwd=tmp_path).returncode == 0
    p = run(["report", "--since", "1d", "--db", db, "--format", "json"], check=0)
    assert json.loads(p.stdout)["runs"]["total"] == 2
    # $FLAKY_DB, then ./flaky.db
    assert run(["analyze", "--runs", "1"] + TAP_OK, cwd=tmp_path,
               env={"FLAKY_DB": str(tmp_path / "env.db")}).returncode == 0
    assert (tmp_path / "env.db").exists()
    assert run(["analyze", "--runs", "1"] + TAP_OK, cwd=tmp_path).returncode == 0
    assert (tmp_path / "flaky.db").exists()
    # database: of the config
    cfg = tmp_path / "flaky.yaml"
    cfg.write_text("database: %s  # comment\n" % (tmp_path / "cfg.db"))
    assert run(["--config", str(cfg), "analyze", "--runs", "1"] + TAP_OK,
               cwd=tmp_path).returncode == 0
    assert (tmp_path / "cfg.db").exists()


@pytest.mark.parametrize("args,message", [
    (["--runs", "0", "true"], "--runs: expected a number from 1"),
    (["--runs", "-3", "true"], "--runs: expected a number from 1"),
    (["--runs", "many", "true"], "--runs: expected a number from 1"),
    (["--jobs", "0", "true"], "--jobs: expected a number from 1"),
    (["--timeout", "soon", "true"], "--timeout: expected a duration"),
    (["--bogus", "true"], "unknown option"),
    ([], "no command to run"),
])
def test_usage_errors(tmp_path, args, message):
    db = tmp_path / "u.db"
    p = run(["analyze", "--db", str(db)] + args, cwd=tmp_path)
    assert p.returncode == 2, p
    assert message in p.stderr
    assert "usage: flakyctl analyze" in p.stderr
    assert not db.exists()      # nothing written


def test_report_usage_errors(tmp_path):
    db = str(tmp_path / "r.db")
    run(["analyze", "--db", db, "--runs", "1"] + TAP_OK, cwd=tmp_path, check=0)
    p = run(["report", "--db", db, "--since", "yesterday"])
    assert p.returncode == 2 and "--since: expected a duration" in p.stderr
    p = run(["report", "--db", db, "--until", "2026-02-31"])
    assert p.returncode == 2 and "--until: expected a date" in p.stderr
    p = run(["report", "--db", str(tmp_path / "missing.db")])
    assert p.returncode == 2 and "missing.db: no such database" in p.stderr
    # an empty window is an honest empty report
    p = run(["report", "--db", db, "--since", "2001-01-01", "--until", "2001-01-02"], check=0)
    assert "no test results in this window" in p.stdout


@pytest.mark.parametrize("setup,message", [
    ("missing", "nosuchcommand-xyz: command not found"),
    ("noexec", "not executable"),
    ("dir", "is a directory"),
])
def test_command_errors(tmp_path, setup, message):
    db = str(tmp_path / "e.db")
    if setup == "missing":
        cmd = "nosuchcommand-xyz"
    elif setup == "noexec":
        (tmp_path / "script.sh").write_text("#!/bin/sh\necho hi\n")
        cmd = "./script.sh"
    else:
        # after --: a command, even when it names a directory
        (tmp_path / "adir").mkdir()
        cmd = "./adir"
    p = run(["analyze", "--db", db, "--runs", "5", "--", cmd], cwd=tmp_path)
    assert p.returncode == 2
    assert message in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    con = sqlite3.connect(db)
    rows = con.execute("SELECT status, error FROM runs").fetchall()
    assert len(rows) == 1 and rows[0][0] == "error" and message in rows[0][1]


def test_bad_databases(tmp_path):
    # corrupt: refused, named, untouched
    bad = tmp_path / "corrupt.db"
    data = os.urandom(8192)
    bad.write_bytes(data)
    p = run(["analyze", "--db", str(bad), "--runs", "1", "true"], cwd=tmp_path)
    assert p.returncode == 2 and str(bad) in p.stderr, p.stderr
    assert bad.read_bytes() == data
    # newer schema
    newer = tmp_path / "newer.db"
    con = sqlite3.connect(newer)
    con.execute("PRAGMA user_version = 99")
    con.close()
    before = newer.read_bytes()
    for cmd in (["analyze", "--runs", "1", "true"], ["report"]):
        p = run(["--db", str(newer)] + cmd, cwd=tmp_path)
        assert p.returncode == 2 and "newer" in p.stderr and str(newer) in p.stderr
    assert newer.read_bytes() == before
    # unwritable location
    p = run(["analyze", "--db", "/proc/flaky/x.db", "--runs", "1", "true"], cwd=tmp_path)
    assert p.returncode == 2 and "/proc/flaky/x.db" in p.stderr


def test_timeout_kills_the_group(tmp_path):
    db = str(tmp_path / "t.db")
    script = tmp_path / "hang.sh"
    # A grandchild that ignores SIGTERM too and holds the pipe; its
    # argument is a marker no other process on the machine has.
    marker = "297.%d" % os.getpid()
    script.write_text("#!/bin/sh\ntrap '' TERM\nsleep %s &\necho started\nwait\n" % marker)
    script.chmod(0o755)
    p = run(["analyze", "--db", db, "--runs", "1", "--timeout", "1s", "--grace", "1s",
             "./hang.sh"], cwd=tmp_path, timeout=30,
            check=2)  # every run timed out, none gave a result
    con = sqlite3.connect(db)
    status, dur, sig = con.execute("SELECT status, duration_us, signal FROM runs").fetchone()
    assert status == "timeout"
    assert 1.0e6 <= dur < 6e6, dur
    assert sig == 9          # it ignored SIGTERM
    # SIGKILL is sent before flakyctl exits, but a killed process takes a
    # moment to go: poll with a deadline, never a bare sleep.
    def gone():
        return subprocess.run(["pgrep", "-f", "sleep " + marker],
                              capture_output=True, text=True).stdout.strip() == ""
    deadline = time.monotonic() + 10
    while not gone() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert gone(), "a process of the run survived"


def test_ended_runs_are_written_in_groups(tmp_path):
    """analyze writes ended runs together: by count (64 at a time) and by
    output (16 MiB at a time). Every run is stored once, in the order it
    ended, with its output, whichever limit wrote it."""
    db = str(tmp_path / "g.db")
    script = tmp_path / "t.sh"
    # run N prints its number, then 1 MiB on every fourth run
    script.write_text('#!/bin/sh\nn=$(cat n 2>/dev/null || echo 0)\n'
                      'echo $((n + 1)) > n\necho "run $n"\n'
                      '[ $((n % 4)) -eq 0 ] && head -c 1048000 /dev/zero | '
                      'tr "\\0" x\nexit 0\n')
    script.chmod(0o755)
    p = run(["--db", db, "analyze", "--runs", "150", "--jobs", "1",
             "./t.sh"], cwd=tmp_path, check=2)  # no runner output
    assert "150 runs" in p.stdout
    con = connect(db)
    rows = con.execute("SELECT id, status, output_bytes, stdout FROM runs "
                       "JOIN run_output ON run_id = id ORDER BY id").fetchall()
    assert len(rows) == 150
    for i, (_, status, nbytes, out) in enumerate(rows):
        assert status == "done"
        assert out.startswith("run %d\n" % i)
        assert nbytes == len("run %d\n" % i) + (1048000 if i % 4 == 0 else 0)


def test_waiting_runs_bounded_by_output(tmp_path):
    """Ended runs that wait to be written hold their kept output (512 KiB
    of stdout here each): at most 16 MiB of it waits, not 64 runs' worth.
    Measured in a fresh parent as the peak RSS of 70 such runs above that
    of a `flakyctl report` (the program and its libraries, OpenSSL's among
    them): 19 MiB with the bound, 38 or more without it; under ASan (its
    redzones and quarantine) 26. Without meson's MALLOC_PERTURB_, which
    writes every page malloc hands out and so makes untouched buffers
    resident."""
    db = str(tmp_path / "m.db")
    from conftest import FLAKYCTL
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_PERTURB_"}
    probe = ("import resource, subprocess, sys\n"
             "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")

    def peak(*args):
        p = subprocess.run([PYTHON, "-c", probe, FLAKYCTL, "--db", db]
                           + list(args), cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
        return int(p.stdout.split()[-1])
    base_kb = peak("report")
    peak_kb = peak("analyze", "--runs", "70", "--", "sh", "-c",
                   "head -c 600000 /dev/zero | tr '\\0' x")
    limit = 32 if "ASAN_OPTIONS" in os.environ else 25
    assert peak_kb - base_kb < limit * 1024, \
        f"peak RSS {peak_kb} KiB, {base_kb} KiB before any run"
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*), sum(output_bytes) FROM runs "
                       "WHERE status = 'done'").fetchone() == (70, 70 * 600000)


def test_private_tmpdir(tmp_path):
    db = str(tmp_path / "d.db")
    out = tmp_path / "dirs.txt"
    script = tmp_path / "t.sh"
    # one write per run: concurrent runs append whole lines
    script.write_text('#!/bin/sh\necho "$TMPDIR $(ls -A "$TMPDIR" | wc -l)" >> %s\n'
                      'touch "$TMPDIR/leftover"\n' % out)
    script.chmod(0o755)
    run(["analyze", "--db", db, "--runs", "3", "--jobs", "3", "./t.sh"], cwd=tmp_path,
        check=2)  # no runner output
    lines = out.read_text().split()
    dirs, counts = lines[0::2], lines[1::2]
    assert len(set(dirs)) == 3 and counts == ["0", "0", "0"]
    for d in dirs:
        assert not os.path.exists(d), d      # removed afterwards


def test_gigabyte_of_output_stays_bounded(tmp_path):
    """A test printing 1 GB: the run is recorded, the kept output is
    bounded and so is flakyctl's memory (measured in a fresh parent so
    that earlier tests' children do not count)."""
    db = str(tmp_path / "big.db")
    from conftest import FLAKYCTL
    probe = ("import resource, subprocess, sys\n"
             "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")

    def peak(script, path):
        p = subprocess.run([PYTHON, "-c", probe, FLAKYCTL, "analyze", "--db",
                            path, "--runs", "1", "--", "sh", "-c", script],
                           cwd=tmp_path, capture_output=True, text=True,
                           timeout=300)
        return int(p.stdout.split()[-1])
    # The same command printing one line: what flakyctl takes whatever the
    # output (its libraries, and a sanitizer's own memory in that build).
    base_kb = peak("echo done", str(tmp_path / "small.db"))
    peak_kb = peak("head -c 1073741824 /dev/zero | tr '\\0' 'x'; echo; "
                   "echo done", db)
    assert peak_kb - base_kb < 16 * 1024, \
        f"peak RSS {peak_kb} KiB against {base_kb} KiB for one line"
    con = sqlite3.connect(db)
    status, total, dropped, kept = con.execute(
        "SELECT status, output_bytes, output_dropped, o.size FROM runs r "
        "JOIN outputs o ON o.id = r.stdout_id").fetchone()
    assert status == "done"
    assert total == 1073741824 + 6
    assert dropped == total - 512 * 1024      # 1 MiB per run, half per stream
    assert 512 * 1024 <= kept < 513 * 1024


def test_schema_doc_queries_run(demo, tmp_path):
    """Every SQL example in docs/schema.md runs against a real database and
    returns rows. Some need a failure of test_payment_retry (30%): with 40
    runs none at all happens with chance 0.7^40 = 6e-7 (12 runs left it at
    1.4%, and one CI run met it)."""
    d = demo("demo-pytest")
    db = str(tmp_path / "flaky.db")
    analyze_json(["--runs", "40", "--jobs", "2", "--", PYTEST, "-v"], d, db)
    # shuffled and stressed runs, for the queries of issue 18
    analyze_json(["--runs", "2", "--shuffle", "--stress", "cpu:1", "--",
                  PYTEST, "-v"], d, db)
    doc = open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs",
                            "schema.md"), encoding="utf-8").read()
    blocks = [b.split("```", 1)[0] for b in doc.split("```sql")[1:]]
    assert len(blocks) >= 6
    con = connect(db)
    for sql in blocks:
        rows = con.execute(sql).fetchall()
        assert rows, sql


def test_report_migrates_an_older_database(tmp_path):
    """A new flakyctl reading an older database brings it forward once."""
    db = str(tmp_path / "old.db")
    run(["analyze", "--db", db, "--runs", "1"] + TAP_OK, cwd=tmp_path, check=0)
    con = sqlite3.connect(db)
    # undo 0017's, 0019's and 0020's views of runs, 0006 (output in runs
    # again) and 0003
    con.executescript("DROP VIEW ci_runs; DROP VIEW flips; "
                      "DROP VIEW hangs; DROP VIEW stack_text; "
                      "DROP VIEW headroom_runs; "
                      "DROP VIEW run_output; DROP TABLE outputs; "
                      "ALTER TABLE runs DROP COLUMN stdout_id; "
                      "ALTER TABLE runs DROP COLUMN stderr_id; "
                      "ALTER TABLE runs ADD COLUMN stdout BLOB; "
                      "ALTER TABLE runs ADD COLUMN stderr BLOB; "
                      "UPDATE runs SET stdout = CAST('old output' AS BLOB); "
                      "DROP VIEW static_risks; DROP TABLE scan_findings; "
                      "PRAGMA user_version = 2;")
    con.close()
    p = run(["report", "--db", db, "--format", "json"], check=0)
    assert json.loads(p.stdout)["runs"]["total"] == 1
    con = connect(db)
    newest = len(glob.glob(os.path.join(ROOT, "schema", "[0-9]*.sql")))
    assert con.execute("PRAGMA user_version").fetchone()[0] == newest
    assert con.execute("SELECT count(*) FROM scan_findings").fetchone()[0] == 0
    assert con.execute("SELECT stdout, stderr FROM run_output").fetchall() == [
        ("old output", None)]


def test_redaction_of_stored_output_and_messages(tmp_path):
    """Built-in rules and the config's redact: patterns apply to what
    analyze stores: output and failure messages."""
    (tmp_path / "test_s.py").write_text(
        "def test_leak():\n"
        "    print('connecting with password=hunter2 token: abcdef123')\n"
        "    assert False, 'customer 4711-ACME-SECRET-ID refused'\n")
    cfg = tmp_path / "flaky.yaml"
    cfg.write_text("redact:\n  - '[0-9]{4}-ACME-[A-Z-]+'\n")
    db = str(tmp_path / "r.db")
    run(["analyze", "--config", str(cfg), "--db", db, "--runs", "1", "--",
         PYTEST, "-v", "-rA", "-p", "no:random_order"], cwd=tmp_path, check=0)
    con = connect(db)
    out = con.execute("SELECT stdout FROM run_output").fetchone()[0]
    msg = con.execute("SELECT message FROM results WHERE outcome = 1").fetchone()[0]
    norm = con.execute("SELECT normalized FROM messages").fetchone()[0]
    assert "test_s.py::test_leak" in out
    for text in (out, msg, norm):
        assert "hunter2" not in text and "4711-ACME" not in text, text
    assert "[REDACTED]" in msg and "password=[REDACTED]" in out
