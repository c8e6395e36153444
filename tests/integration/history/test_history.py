"""flakyctl ingest, report over windows, trend, quarantine, gate, prune,
stats, metrics and the HTML report, against a generated 60-day history
whose every count is known (see conftest.py)."""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile

import pytest

from conftest import (FIXTURES, UNTIL, connect, report_json, run)

JUNIT = os.path.join(FIXTURES, "junit")


def count(db, sql):
    with sqlite3.connect(db) as c:
        return c.execute(sql).fetchone()[0]


# --- report over windows: change point, trend, budget -------------------

def test_change_point_trend_budget(history_db):
    doc, t = report_json(history_db, "--since", "30d")
    assert doc["first_day"] == "2026-10-02" and doc["days"] == 30
    assert doc["runs"]["total"] == 300
    f = t["t.turns_flaky"]
    assert (f["runs"], f["failures"]) == (300, 51)
    assert f["trend"] == "new"
    assert f["since"] == "2026-10-15"
    assert f["previous"] == {"runs": 300, "failures": 0}
    # 51 failed runs of 5 tests of 1 s each.
    assert f["budget_s"] == pytest.approx(255.0)
    assert f["budget_runs"] == 51
    r = t["t.recovers"]
    assert (r["runs"], r["failures"]) == (300, 0)
    assert r["previous"] == {"runs": 300, "failures": 69}
    assert r["trend"] == "better" and r["since"] is None
    assert r["budget_s"] == 0
    w = t["t.gets_worse"]
    assert (w["failures"], w["previous"]["failures"]) == (120, 15)
    assert w["trend"] == "worse" and w["since"] == "2026-10-02"
    assert w["budget_s"] == pytest.approx(600.0)
    a = t["t.always_flaky"]
    assert (a["failures"], a["previous"]["failures"]) == (60, 60)
    assert a["trend"] == "same" and a["since"] is None
    s = t["t.stable"]
    assert s["trend"] == "same" and s["since"] is None and s["budget_s"] == 0
    # The sparkline: one mark per day, turns_flaky rises on day 14.
    assert len(f["sparkline"]) == 30
    assert set(f["sparkline"][:13]) == {"_"}
    assert "_" not in f["sparkline"][13:]


def test_windows_by_date(history_db):
    # --since a date; the window before is the same length.
    _, t = report_json(history_db, "--since", "2026-10-17")
    f = t["t.turns_flaky"]
    assert (f["runs"], f["failures"]) == (150, 45)
    assert f["previous"] == {"runs": 150, "failures": 6}
    assert f["trend"] == "worse"
    # A 60-day window sees the whole change of gets_worse and turns_flaky.
    _, t = report_json(history_db, "--since", "60d")
    assert t["t.turns_flaky"]["since"] == "2026-10-15"
    assert t["t.gets_worse"]["since"] == "2026-10-02"
    assert t["t.recovers"]["since"] is None


def test_sort_budget_and_trend(history_db):
    p = run(["--db", history_db, "report", "--since", "30d", "--until", UNTIL,
             "--sort", "budget", "--format", "csv"], check=0)
    rows = [l.split(",") for l in p.stdout.splitlines()]
    head = rows[0]
    assert head[-3:] == ["trend", "since", "budget_s"]
    tests = [r[2] for r in rows[1:]]
    assert tests[:3] == ["t.gets_worse", "t.always_flaky", "t.turns_flaky"]
    p = run(["--db", history_db, "report", "--since", "30d", "--until", UNTIL,
             "--sort", "trend", "--format", "json"], check=0)
    order = [(x["test"], x["trend"]) for x in json.loads(p.stdout)["tests"]]
    assert order[0] == ("t.turns_flaky", "new")
    assert order[1] == ("t.gets_worse", "worse")
    assert order[-1] == ("t.recovers", "better")
    p = run(["--db", history_db, "report", "--sort", "speed"], check=2)
    assert "'speed'" in p.stderr


def test_table_sparkline_ascii_off_terminal(history_db):
    p = run(["--db", history_db, "report", "--since", "30d", "--until",
             UNTIL], check=0)
    lines = p.stdout.splitlines()
    i = [i for i, l in enumerate(lines) if "t.turns_flaky" in l][0]
    # the row, then the sparkline, change point and budget under it
    assert re.search(r"^WARNING +t\.turns_flaky +17\.0% +51/300 +13-22% "
                     r"+UNKNOWN +new$", lines[i]), lines[i]
    line = lines[i + 1]
    assert "new since 2026-10-15" in line
    assert "budget 4 min" in line
    assert re.search(r"_{13}[.\-~=+*#]{17}", line), line
    assert all(ord(ch) < 128 for ch in p.stdout)


def test_unicode_sparkline_on_terminal(history_db):
    # script(1) gives flakyctl a terminal.
    if shutil.which("script") is None:
        pytest.skip("script(1) not installed")
    from conftest import FLAKYCTL
    cmd = "%s --db %s report --since 30d --until %s" % (FLAKYCTL, history_db,
                                                          UNTIL)
    p = subprocess.run(["script", "-qec", cmd, "/dev/null"],
                       capture_output=True, timeout=60,
                       env=dict(os.environ, NO_COLOR="1", TERM="xterm"))
    out = p.stdout.decode("utf-8", "replace")
    assert "\u2581" in out and re.search("[\u2582-\u2588]", out), out


def test_empty_window(history_db):
    p = run(["--db", history_db, "report", "--since", "2020-01-01",
             "--until", "2020-02-01"], check=0)
    assert "0 runs" in p.stdout
    assert "no test results in this window" in p.stdout
    doc, _ = report_json(history_db, "--since", "2020-01-01")
    p = run(["--db", history_db, "report", "--format", "json", "--since",
             "2020-01-01", "--until", "2020-02-01"], check=0)
    assert json.loads(p.stdout)["tests"] == []


def test_bad_times(history_db):
    for args, value in ((["report", "--since", "yesterday"], "yesterday"),
                        (["report", "--until", "2026-13-01"], "2026-13-01"),
                        (["gate", "--since", "7x", "--max-critical", "0"],
                         "7x"),
                        (["trend", "t.stable", "--weeks", "0"], "0"),
                        (["prune", "--older-than", "soon"], "soon"),
                        (["ingest", "--target", "ci", "--at", "noon",
                          "x.xml"], "noon")):
        p = run(["--db", history_db] + args, check=2)
        assert "'%s'" % value in p.stderr, p.stderr


# --- trend ---------------------------------------------------------------

def test_trend_weeks(history_db):
    p = run(["--db", history_db, "--format", "json", "trend", "t.turns_flaky",
             "--weeks", "4", "--until", UNTIL], check=0)
    doc = json.loads(p.stdout)
    weeks = doc["weeks"]
    assert [w["start"] for w in weeks] == ["2026-10-04", "2026-10-11",
                                           "2026-10-18", "2026-10-25"]
    assert [w["runs"] for w in weeks] == [70, 70, 70, 70]
    # Oct 15-17 in the second week: 3 days of 3 failures.
    assert [w["failures"] for w in weeks] == [0, 9, 21, 21]
    assert weeks[2]["fail_rate"] == pytest.approx(0.3)
    assert weeks[2]["ci_low"] < 0.3 < weeks[2]["ci_high"]
    assert len(doc["sparkline"]) == 4
    p = run(["--db", history_db, "trend", "t.turns_flaky", "--until", UNTIL],
            check=0)
    assert "2026-10-25" in p.stdout and "30.0%" in p.stdout
    p = run(["--db", history_db, "trend", "t.nope"], check=2)
    assert "no test matches 't.nope'" in p.stderr


# --- ingest --------------------------------------------------------------

def test_ingest_idempotent(history_db, history_files):
    before = report_json(history_db, "--since", "60d")[1]
    p = run(["--db", history_db, "ingest", "--target", "ci"]
            + history_files[:50], check=0)
    assert p.stdout.count("already ingested") == 50
    assert count(history_db, "SELECT count(*) FROM runs") == 600
    after = report_json(history_db, "--since", "60d")[1]
    for name in before:
        assert before[name]["runs"] == after[name]["runs"]
        assert before[name]["failures"] == after[name]["failures"]
        assert before[name]["budget_s"] == after[name]["budget_s"]
    # The same bytes twice on one command line: one run.
    db = os.path.join(os.path.dirname(history_db), "twice.db")
    p = run(["--db", db, "ingest", "--target", "ci", history_files[0],
             history_files[0]], check=0)
    assert count(db, "SELECT count(*) FROM runs") == 1


def test_ingest_attempts_surefire(tmp_path):
    db = str(tmp_path / "a.db")
    p = run(["--db", db, "ingest", "--target", "java", "--at",
             "2026-11-20T10:00:00Z", "--revision", "abc123",
             os.path.join(JUNIT, "surefire-flaky.xml")], check=0)
    assert "4 tests, 4 retry attempts" in p.stdout
    with sqlite3.connect(db) as c:
        rows = c.execute(
            "SELECT t.name, a.attempt, o.name FROM attempts a "
            "JOIN results r ON r.run_id = a.run_id AND r.position = a.position "
            "JOIN tests t ON t.id = r.test_id "
            "JOIN outcomes o ON o.code = a.outcome "
            "ORDER BY t.name, a.attempt").fetchall()
        run_row = c.execute("SELECT revision, started_ms, trigger FROM runs"
                            ).fetchone()
        outcomes = dict(c.execute(
            "SELECT t.name, r.outcome FROM results r JOIN tests t ON "
            "t.id = r.test_id").fetchall())
    assert rows == [
        ("com.example.PaymentTest.alwaysBroken", 0, "fail"),
        ("com.example.PaymentTest.alwaysBroken", 1, "fail"),
        ("com.example.PaymentTest.retriesOnce", 0, "fail"),
        ("com.example.PaymentTest.retriesOnce", 1, "pass"),
    ]
    assert run_row == ("abc123", 1795168800000, "ingest")
    # The first attempt is the run's outcome: a pass on retry is evidence.
    assert outcomes["com.example.PaymentTest.retriesOnce"] == 1
    doc, t = report_json(db, "--since", "30d", "--until", "2026-11-25")
    assert "passed on retry" in t["com.example.PaymentTest.retriesOnce"][
        "top_message"]


def test_ingest_timestamp_default(tmp_path, history_files):
    db = str(tmp_path / "ts.db")
    run(["--db", db, "ingest", "--target", "ci", history_files[13]], check=0)
    with sqlite3.connect(db) as c:
        (ms,) = c.execute("SELECT started_ms FROM runs").fetchone()
    # 2026-09-03 run 3: 11:00 UTC.
    assert ms == 1788433200000


def test_ingest_raw_output(tmp_path):
    db = str(tmp_path / "raw.db")
    p = run(["--db", db, "ingest", "--target", "py",
             os.path.join(FIXTURES, "pytest", "plain.txt")], check=0)
    assert "run 1 at" in p.stdout and "9 tests" in p.stdout
    with connect(db) as c:
        runner, out = c.execute("SELECT runner, stdout FROM runs "
                                "JOIN run_output ON run_id = id").fetchone()
    assert runner == "pytest"
    assert "test session starts" in out


@pytest.mark.parametrize("name,words", [
    ("billion-laughs.xml", "entity"),
    ("external-entity.xml", "entity"),
    ("param-entity.xml", ""),
    ("truncated.xml", ""),
    ("deep.xml", "nested"),
    ("not-junit.xml", "testsuite"),
])
def test_ingest_refuses_bad_xml(tmp_path, history_files, name, words):
    db = str(tmp_path / "bad.db")
    # A good file first: nothing at all is stored.
    p = run(["--db", db, "ingest", "--target", "ci", history_files[0],
             os.path.join(JUNIT, name)], check=2, timeout=60)
    assert "refused, nothing stored" in p.stderr and name in p.stderr
    assert words in p.stderr
    assert not os.path.exists(db) or count(db, "SELECT count(*) FROM runs") == 0


def test_ingest_external_dtd_never_fetched(tmp_path):
    """A DOCTYPE naming an external DTD is parsed without loading it."""
    import socket
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(0.5)
    port = srv.getsockname()[1]
    x = tmp_path / "dtd.xml"
    x.write_text('<?xml version="1.0"?>\n<!DOCTYPE testsuites SYSTEM '
                 '"http://127.0.0.1:%d/evil.dtd">\n<testsuites><testsuite '
                 'name="x"><testcase classname="a" name="b"/></testsuite>'
                 '</testsuites>\n' % port)
    db = str(tmp_path / "d.db")
    run(["--db", db, "ingest", "--target", "ci", str(x)], check=0)
    with pytest.raises(socket.timeout):
        srv.accept()
    srv.close()
    assert count(db, "SELECT count(*) FROM results") == 1


def test_ingest_refuses_gigantic_and_unknown(tmp_path):
    big = tmp_path / "big.xml"
    with open(big, "wb") as f:
        f.write(b"<testsuite>")
        f.truncate(257 * 1024 * 1024)       # sparse: no real disk use
    db = str(tmp_path / "g.db")
    p = run(["--db", db, "ingest", "--target", "ci", str(big)], check=2)
    assert "256 MiB" in p.stderr
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\nworld\n")
    p = run(["--db", db, "ingest", "--target", "ci", str(junk)], check=2)
    assert "no test results recognized" in p.stderr
    p = run(["--db", db, "ingest", "x.xml"], check=2)
    assert "--target" in p.stderr


# --- quarantine ----------------------------------------------------------

def test_quarantine(history_db):
    run(["--db", history_db, "quarantine", "add", "t.turns_flaky", "--reason",
         "timing, see ticket", "--ticket", "https://bugs/1"], check=0)
    run(["--db", history_db, "quarantine", "add", "t.recovers", "--reason",
         "was flaky"], check=0)
    p = run(["--db", history_db, "--format", "json", "quarantine", "list",
             "--release-after", "300"], check=0)
    q = {x["test"]: x for x in json.loads(p.stdout)}
    # recovers: 7 passes after its last failure on 2026-09-24, then 37 days.
    assert q["t.recovers"]["passes_in_a_row"] == 377
    assert q["t.recovers"]["ready_to_release"] is True
    assert q["t.turns_flaky"]["passes_in_a_row"] == 7
    assert q["t.turns_flaky"]["ready_to_release"] is False
    assert q["t.turns_flaky"]["ticket"] == "https://bugs/1"
    p = run(["--db", history_db, "quarantine", "list"], check=0)
    assert "READY    t.recovers" in p.stdout
    p = run(["--db", history_db, "quarantine", "export", "--format", "pytest"],
            check=0)
    assert p.stdout == "--deselect 't.recovers'\n--deselect 't.turns_flaky'\n"
    p = run(["--db", history_db, "quarantine", "export", "--format", "plain"],
            check=0)
    assert p.stdout == "t.recovers\nt.turns_flaky\n"
    p = run(["--db", history_db, "quarantine", "export", "--format", "jest"],
            check=0)
    assert p.stdout == ("--testNamePattern='^(?!(?:t\\.recovers|"
                        "t\\.turns_flaky)$)'\n")
    # Still measured, shown as quarantined.
    _, t = report_json(history_db, "--since", "30d")
    assert t["t.turns_flaky"]["quarantined"] is True
    assert t["t.turns_flaky"]["failures"] == 51
    p = run(["--db", history_db, "report", "--since", "30d", "--until", UNTIL],
            check=0)
    assert "[quarantined]" in p.stdout
    run(["--db", history_db, "quarantine", "remove", "t.recovers"], check=0)
    p = run(["--db", history_db, "quarantine", "remove", "t.recovers"],
            check=2)
    assert "not in quarantine" in p.stderr
    p = run(["--db", history_db, "quarantine", "export", "--format", "xml"],
            check=2)
    p = run(["--db", history_db, "quarantine", "add", "t.stable"], check=2)
    assert "--reason" in p.stderr


# --- gate ----------------------------------------------------------------

def test_gate(history_db):
    base = ["--db", history_db, "gate", "--since", "30d", "--until", UNTIL]
    p = run(base + ["--max-critical", "0", "--max-new-flaky", "0"], check=1)
    assert p.stdout.splitlines() == [
        "gate: 1 critical test, at most 0 allowed: t.gets_worse",
        "gate: 1 new flaky test, at most 0 allowed: t.turns_flaky",
    ]
    p = run(base + ["--max-critical", "1", "--max-new-flaky", "1"], check=0)
    assert p.stdout.startswith("gate: ok")
    p = run(base + ["--max-worse", "0"], check=1)
    assert "t.gets_worse" in p.stdout
    # A week with nothing new: only the critical one.
    p = run(["--db", history_db, "gate", "--since", "7d", "--until", UNTIL,
             "--max-new-flaky", "0"], check=0)
    # Quarantined tests do not count against the gate.
    run(["--db", history_db, "quarantine", "add", "t.gets_worse", "--reason",
         "r"], check=0)
    run(base + ["--max-critical", "0"], check=0)
    run(base, check=2)
    p = run(base + ["--max-critical", "-1"], check=2)
    assert "'-1'" in p.stderr


# --- retention -----------------------------------------------------------

def test_prune_keeps_trends(history_db):
    before, tb = report_json(history_db, "--since", "30d")
    assert before["messages_available"] is True
    assert tb["t.turns_flaky"]["top_message"] is not None
    run(["--db", history_db, "quarantine", "add", "t.recovers", "--reason",
         "r"], check=0)
    p = run(["--db", history_db, "prune", "--older-than", "1d"], check=0)
    assert "raw data of 600 runs, 3000 results" in p.stdout
    assert count(history_db, "SELECT count(*) FROM results") == 0
    assert count(history_db, "SELECT count(*) FROM rollups") == 300
    after, ta = report_json(history_db, "--since", "30d")
    assert after["messages_available"] is False
    assert after["pruned_before"] is not None
    for name, b in tb.items():
        a = ta[name]
        for k in ("runs", "failures", "trend", "since", "budget_s",
                  "sparkline", "previous", "median_ms_pass"):
            assert a[k] == b[k], (name, k)
    assert ta["t.turns_flaky"]["top_message"] is None
    p = run(["--db", history_db, "report", "--since", "30d", "--until", UNTIL],
            check=0)
    assert "messages unavailable before" in p.stdout
    # Without raw results the pass streak counts whole days after the
    # last failing day (a lower bound).
    p = run(["--db", history_db, "--format", "json", "quarantine", "list"],
            check=0)
    assert json.loads(p.stdout)[0]["passes_in_a_row"] == 370
    # A second prune has nothing left to do.
    p = run(["--db", history_db, "prune", "--older-than", "1d"], check=0)
    assert "raw data of 0 runs" in p.stdout


def test_stats(history_db):
    p = run(["--db", history_db, "--format", "json", "stats"], check=0)
    s = json.loads(p.stdout)
    assert s["rows"]["runs"] == 600 and s["rows"]["results"] == 3000
    assert s["rows"]["tests"] == 5 and s["rows"]["rollups"] == 300
    assert s["first_day"] == "2026-09-02" and s["last_day"] == "2026-10-31"
    assert s["first_run"] == "2026-09-02T08:00:00Z"
    assert s["pruned_before"] is None
    assert s["file_bytes"] > 0
    p = run(["--db", history_db, "stats"], check=0)
    assert "2026-09-02 to 2026-10-31" in p.stdout


def test_metrics(history_db):
    p = run(["--db", history_db, "metrics", "--since", "400d"], check=0)
    lines = p.stdout.splitlines()
    sample = re.compile(r'^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? '
                        r'[0-9.e+-]+$')
    seen = []
    for l in lines:
        if l.startswith("#"):
            assert re.match(r"^# (HELP|TYPE) flaky_[a-z_]+ ", l), l
            continue
        assert sample.match(l), l
        name = l.split("{")[0].split(" ")[0]
        # Each family's samples together.
        assert not seen or seen[-1] == name or name not in seen, name
        seen.append(name)
    text = "\n".join(lines)
    assert 'flaky_target_runs{target="ci"} 600' in text
    assert 'flaky_test_failures{target="ci",test="t.turns_flaky"} 51' in text
    assert 'flaky_test_budget_seconds{target="ci",test="t.turns_flaky"} 255' \
        in text
    assert 't.stable' not in text


# --- pictures ------------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"
CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run"]


def test_html_report(history_db, tmp_path):
    """report --html writes the dashboard's pages into one file: the
    overview, the tests table and a page per unstable test, linked by
    anchors; charts with legends and a date axis; whole ids; nothing from
    the network."""
    html = tmp_path / "report.html"
    run(["--db", history_db, "report", "--since", "30d", "--until", UNTIL,
         "--html", str(html)], check=0)
    text = html.read_text()
    assert "http://" not in text and "https://" not in text
    assert text.count("<!DOCTYPE html>") == 1
    assert '<section id="overview">' in text
    assert '<section id="tests-page">' in text
    # One page per test that failed in the window, linked from the table.
    pages = re.findall(r'<section id="test-(\d+)">', text)
    assert len(pages) == 3, pages
    for p in pages:
        assert 'href="#test-%s"' % p in text
    assert text.count('id="rate-chart"') == 3
    assert "95% interval (Wilson)" in text and "tier-chart" in text
    # A date axis with whole dates, the last one among them.
    dates = re.findall(r'<span class="date[^"]*"[^>]*>([0-9-]+)</span>',
                       text)
    assert dates and all(len(d) == 10 for d in dates), dates
    for name in ("t.turns_flaky", "t.gets_worse", "t.always_flaky"):
        # whole, with a place to wrap after the dot (<wbr>)
        assert ">%s</a>" % name.replace(".", ".<wbr>") in text
    if not os.path.exists(CHROMIUM):
        pytest.skip("chromium not installed (apt-get install chromium)")
    profile = tempfile.mkdtemp()
    try:
        dom = subprocess.run([CHROMIUM] + CHROME_FLAGS +
                             ["--user-data-dir=" + profile, "--dump-dom",
                              "file://" + str(html)],
                             capture_output=True, text=True, timeout=120)
        assert dom.returncode == 0, dom.stderr[-2000:]
        out = dom.stdout
        assert out.count('id="rate-chart"') == 3
        # each chart's line (class rl since issue 32's style sheet)
        assert out.count('class="rl"') >= 3
        for w in (1400, 400):
            shot = str(tmp_path / ("r%d.png" % w))
            s = subprocess.run([CHROMIUM] + CHROME_FLAGS +
                               ["--user-data-dir=" + profile,
                                "--window-size=%d,1000" % w,
                                "--screenshot=" + shot,
                                "file://" + str(html)],
                               capture_output=True, text=True, timeout=120)
            assert s.returncode == 0, s.stderr[-2000:]
            with open(shot, "rb") as f:
                png = f.read()
            assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10000
    finally:
        shutil.rmtree(profile, ignore_errors=True)
