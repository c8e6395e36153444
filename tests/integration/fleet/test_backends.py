"""Every command on either backend (issue 15, item 2): the same evidence
ingested by flakyctl into a SQLite file and into a PostgreSQL database
(--db postgresql://..., $FLAKY_DB), then the commands that read it run on
both. The JSON of report, trend and triage must be identical; the other
readers must agree too, or differ only where the backends do by design
(stats: sizes)."""
import datetime
import json
import os
import re
import subprocess

import pytest

from conftest import FLAKYCTL, FLAKYD

RUNS = 40
TESTS = ("test_ok", "test_rare", "test_third", "test_boxa", "test_broken",
         "test_skip", "test_slow")


def outcome(test, i):
    """Run i of a test: 'pass', 'fail' or 'skip'; deterministic."""
    box_a = i % 2 == 1
    if test == "test_rare":
        return "fail" if i in (7, 23) else "pass"
    if test == "test_third":
        return "fail" if (i * 7) % 10 < 3 else "pass"
    if test == "test_boxa":
        return "fail" if box_a and i % 4 == 1 else "pass"
    if test == "test_broken":
        return "fail"
    if test == "test_skip":
        return "skip"
    return "pass"


def junit(i, when):
    cases = []
    for k, t in enumerate(TESTS):
        o = outcome(t, i)
        dur = 0.001 * (1 + (i * 13 + k * 7) % 50) + (2.5 if t == "test_slow"
                                                        else 0)
        body = ""
        if o == "fail":
            body = ('<failure message="AssertionError: assert %d == 4">'
                    'E   AssertionError: assert %d == 4\nat line %d'
                    '</failure>' % (i % 3, i % 3, 10 + k))
        elif o == "skip":
            body = '<skipped message="needs a GPU"/>'
        cases.append('<testcase classname="tests.test_mod" name="%s" '
                     'time="%.3f">%s</testcase>' % (t, dur, body))
    fails = sum(outcome(t, i) == "fail" for t in TESTS)
    return ('<?xml version="1.0" encoding="utf-8"?>\n<testsuites>'
            '<testsuite name="pytest" tests="%d" failures="%d" errors="0" '
            'skipped="1" timestamp="%s">%s</testsuite></testsuites>\n' %
            (len(TESTS), fails, when, "".join(cases)))


def ctl(db, *args, check=True, env=None):
    p = subprocess.run([FLAKYCTL, "--db", db] + list(args),
                       capture_output=True, text=True, timeout=120, env=env)
    if check:
        assert p.returncode in (0, 1), (args, p.stderr)
        assert p.stderr == "" or "warning" not in p.stderr, p.stderr
    return p


@pytest.fixture(scope="module")
def stores(pg, tmp_path_factory):
    """(SQLite path, PostgreSQL URI) holding the same evidence: RUNS runs
    of a target on two boxes, an hour apart, ending a day ago."""
    d = tmp_path_factory.mktemp("backends")
    start = (datetime.datetime.now(datetime.timezone.utc).replace(
        minute=0, second=0, microsecond=0) - datetime.timedelta(days=3))
    files = {"box-a": [], "box-b": []}
    for i in range(RUNS):
        when = (start + datetime.timedelta(hours=i - RUNS)).strftime(
            "%Y-%m-%dT%H:%M:%S")
        f = d / ("run%02d.xml" % i)
        f.write_text(junit(i, when))
        files["box-a" if i % 2 else "box-b"].append(str(f))
    lite = str(d / "flaky.db")
    uri = pg.createdb("backends")
    for db in (lite, uri):
        for box, fs in sorted(files.items()):
            p = ctl(db, "ingest", "--target", "ci", "--box", box, *fs)
            assert p.returncode == 0, p.stderr
    return lite, uri


def both(stores, *args):
    """The JSON a command prints on each backend."""
    out = []
    for db in stores:
        p = ctl(db, "--format", "json", *args)
        out.append(json.loads(p.stdout))
    return out


@pytest.mark.parametrize("args", [
    ("report",),
    ("report", "--since", "30d"),
    ("report", "--box", "box-a"),
    ("report", "--box", "box-b"),
    ("report", "--since", "all"),
    ("show", "tests/test_mod.py::test_boxa"),
    ("triage",),
    ("trend", "tests/test_mod.py::test_third"),
    ("trend", "tests/test_mod.py::test_boxa", "--weeks", "4"),
])
def test_json_identical(stores, args):
    lite, pgj = both(stores, *args)
    assert lite == pgj


def test_report_has_the_evidence(stores):
    """Not two empty answers: the report names the unstable tests with
    the rates of the evidence, and the per-box split."""
    lite, _ = both(stores, "report")
    text = json.dumps(lite)
    for t in ("test_rare", "test_third", "test_boxa", "test_broken"):
        assert t in text, t


def test_boxes_on_the_server(stores):
    """Issue 28 on the server: show lists each failed run with its box
    (test_boxa fails on box-a only) and its position from 1, report
    --box counts that box's rerun budget, and an unknown --box is exit 2
    with the boxes there are, as on SQLite."""
    lite, uri = stores
    for db in stores:
        d = json.loads(ctl(db, "--format", "json", "show",
                           "tests/test_mod.py::test_boxa").stdout)
        log = d["failures_log"]
        assert log and {(f["box"], f["position"]) for f in log} == {
            ("box-a", TESTS.index("test_boxa") + 1)}, log
        out = ctl(db, "show", "tests/test_mod.py::test_boxa").stdout
        assert out.count("  box box-a  ") == len(log), out
        budget = {}
        for box in ("box-a", "box-b"):
            rep = json.loads(ctl(db, "--format", "json", "report", "--box",
                                 box).stdout)
            budget[box] = {t["test"].split("::")[1]: t["budget_runs"] for t
                           in rep["tests"]}
        assert budget["box-a"]["test_boxa"] == len(log)
        assert budget["box-b"]["test_boxa"] == 0
        assert budget["box-a"]["test_broken"] == RUNS // 2
        assert budget["box-b"]["test_broken"] == RUNS // 2
        p = ctl(db, "report", "--box", "box-c", check=False)
        assert p.returncode == 2 and p.stdout == "", p
        assert p.stderr == ("flakyctl report: unknown box 'box-c'; did you "
                            "mean 'box-a'?\n"), p.stderr


@pytest.mark.parametrize("args", [
    ("show", "tests/test_mod.py::test_third"),
    ("ticket", "tests/test_mod.py::test_boxa"),
    ("gate", "--since", "30d", "--max-broken", "0"),
    ("quarantine", "list"),
    ("clusters",),
])
def test_readers_agree(stores, args):
    """The other readers print the same text on both backends."""
    outs = []
    for db in stores:
        p = ctl(db, *args)
        outs.append((p.returncode, p.stdout.replace(db, "DB")))
    assert outs[0] == outs[1]


def test_metrics_and_stats(stores):
    lite, uri = stores
    # The fleet backlog is a box's outbox (ingest queues its runs on
    # SQLite); a server has none.
    m = [[l for l in ctl(db, "metrics").stdout.splitlines()
          if "fleet_" not in l] for db in stores]
    assert m[0] == m[1]
    assert any(l.startswith("flaky_test_failure_rate") for l in m[0]), m[0]
    st = [json.loads(ctl(db, "--format", "json", "stats").stdout)
          for db in stores]
    assert st[0]["rows"] == st[1]["rows"]
    assert st[1]["rows"]["runs"] == RUNS
    assert st[1]["schema_version"] > 0 and st[1]["file_bytes"] > 0


def test_html_report(stores, tmp_path):
    pages = []
    for k, db in enumerate(stores):
        out = tmp_path / ("r%d.html" % k)
        ctl(db, "report", "--html", str(out))
        # the script's nonce is drawn afresh for each file (issue 32)
        pages.append(re.sub(r"nonce-[A-Za-z0-9_-]+|nonce=\"[A-Za-z0-9_-]+\"",
                            "nonce", out.read_text()))
    assert pages[0] == pages[1]
    assert pages[0].count("nonce") >= 2
    assert "test_third" in pages[0]


def test_env_and_config(stores, tmp_path):
    """$FLAKY_DB and database: in the YAML take a URI as they take a
    path."""
    _, uri = stores
    env = dict(os.environ, FLAKY_DB=uri)
    p = subprocess.run([FLAKYCTL, "--format", "json", "report"],
                       capture_output=True, text=True, timeout=60, env=env,
                       cwd=tmp_path)
    assert p.returncode in (0, 1), p.stderr
    assert "test_third" in p.stdout
    conf = tmp_path / "flaky.yaml"
    conf.write_text("database: \"%s\"\ntargets: []\n" % uri)
    p = subprocess.run([FLAKYCTL, "--config", str(conf), "--format", "json",
                        "report"], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    assert p.returncode in (0, 1), p.stderr
    assert "test_third" in p.stdout


def test_prune_on_server(pg, tmp_path):
    """prune deletes old raw results on the server too, rollups stay."""
    uri = pg.createdb("prune")
    f = tmp_path / "old.xml"
    f.write_text(junit(7, "2026-01-05T10:00:00"))
    assert ctl(uri, "ingest", "--target", "ci", str(f)).returncode == 0
    n = lambda q: int(pg.query(q, db="prune")[0][0])
    assert n("SELECT count(*) FROM results") == len(TESTS)
    p = ctl(uri, "prune", "--older-than", "30d")
    assert p.returncode == 0, p.stderr
    assert n("SELECT count(*) FROM results") == 0
    assert n("SELECT count(*) FROM rollups") > 0


# A test that fails on every other run, counted in a file: deterministic.
FLIP = ("import os\n"
        "def test_flip():\n"
        "    n = int(open('n').read()) if os.path.exists('n') else 0\n"
        "    open('n', 'w').write(str(n + 1))\n"
        "    assert n % 2 == 0\n"
        "def test_fine():\n"
        "    pass\n")


def test_analyze_and_confirm_write_to_the_server(pg, tmp_path):
    """analyze and confirm store their runs on the server directly; what
    they print is what the server then holds."""
    uri = pg.createdb("analyze")
    (tmp_path / "test_flip.py").write_text(FLIP)
    (tmp_path / "flaky.yaml").write_text(
        "targets:\n  - name: flip\n"
        "    command: /usr/bin/pytest -p no:random_order -v test_flip.py\n"
        "    schedule: every 1h\n"
        "    isolate: /usr/bin/pytest -p no:random_order -v {test}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKY_")}
    p = subprocess.run([FLAKYCTL, "--db", uri, "--format", "json",
                        "analyze", "--runs", "6", "--target", "flip", "--",
                        "/usr/bin/pytest", "-p", "no:random_order", "-v",
                        "test_flip.py"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode in (0, 1), p.stderr
    flip = [t for t in json.loads(p.stdout)["tests"]
            if t["test"] == "test_flip.py::test_flip"][0]
    assert (flip["runs"], flip["failures"]) == (6, 3)
    q = lambda sql: pg.query(sql, db="analyze")[0][0]
    assert q("SELECT count(*) FROM runs WHERE kind = 'suite' AND "
             "status = 'done'") == "6"
    assert q("SELECT count(*) FROM results") == "12"
    assert q("SELECT sum(failures) FROM rollups") == "3"
    p = subprocess.run([FLAKYCTL, "--db", uri, "--config",
                        str(tmp_path / "flaky.yaml"), "confirm",
                        "--max-runs", "4", "--budget", "2m"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode in (0, 1), p.stderr
    alone = int(q("SELECT count(*) FROM runs WHERE kind = 'alone'"))
    assert 1 <= alone <= 4, p.stdout
    # runs alone stay out of the rates, as on SQLite
    assert q("SELECT sum(runs) FROM rollups") == "12"


def test_interrupted_runs_on_a_shared_server(pg, tmp_path):
    """A writer marks the running rows of its own machine's dead
    processes interrupted, as on SQLite, and leaves another machine's
    (another boot id) alone: it cannot see that machine's processes."""
    import signal
    import time
    uri = pg.createdb("orphans")
    (tmp_path / "test_s.py").write_text(
        "import time\ndef test_slow():\n    time.sleep(60)\n")
    proc = subprocess.Popen([FLAKYCTL, "--db", uri, "analyze", "--runs", "1",
                             "--", "/usr/bin/pytest", "-v", "test_s.py"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    q = lambda sql: pg.query(sql, db="orphans")
    try:
        deadline = time.monotonic() + 60
        while (pg.query("SELECT to_regclass('runs') IS NOT NULL",
                        db="orphans")[0][0] != "t" or
               q("SELECT count(*) FROM runs WHERE status = 'running'")[0][0]
               == "0"):
            assert proc.poll() is None
            assert time.monotonic() < deadline, "no running row in 60 s"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    q("INSERT INTO runs (target_id, status, trigger, started_ms, kind, "
      "owner_boot, owner_pid, owner_start, box) SELECT target_id, "
      "'running', 'manual', started_ms, 'suite', 'another-machine', 1, 1, "
      "'box-z' FROM runs LIMIT 1")
    p = ctl(uri, "prune", "--older-than", "999d")
    assert p.returncode == 0, p.stderr
    rows = q("SELECT status, coalesce(box, '') FROM runs ORDER BY id")
    assert rows == [["interrupted", rows[0][1]], ["running", "box-z"]], rows


def test_flakyd_refuses_a_server_as_its_database(tmp_path):
    """flakyd writes a local outbox; a URI as database: is refused at
    start with the way to the server (fleet:), before anything runs."""
    conf = tmp_path / "flaky.yaml"
    conf.write_text("database: \"postgresql:///x?host=/nonexistent\"\n"
                    "socket: %s\ntargets:\n  - name: t\n    command: "
                    "/bin/true\n    schedule: every 1h\n" %
                    (tmp_path / "s.sock"))
    p = subprocess.run([FLAKYD, "--config", str(conf), "--foreground"],
                       capture_output=True, text=True, timeout=30,
                       cwd=tmp_path)
    assert p.returncode != 0
    assert "fleet:" in p.stderr and "local SQLite file" in p.stderr, p.stderr
    assert not list(tmp_path.glob("postgresql*")), "a lock file was made"


def test_dashboard_api_on_both(stores):
    """flakyctl serve reads the server through its worker threads' own
    connections: the API's JSON is the same on both backends."""
    import signal
    import urllib.request
    got = []
    for db in stores:
        proc = subprocess.Popen([FLAKYCTL, "--db", db, "serve", "--listen",
                                 "127.0.0.1:0"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline()
            assert line.startswith("serving "), (line, proc.stderr.read())
            url = line.split()[-1].rstrip("/")
            get = lambda path: json.loads(urllib.request.urlopen(
                url + path, timeout=30).read())
            pages = [get("/api/v1/tests"), get("/api/v1/runs"),
                     get("/api/v1/tests?box=box-a"),
                     get("/api/v1/runs?box=box-b"),
                     get("/api/v1/targets")]
            third = [t["id"] for t in pages[0]["tests"]
                     if t["test"].endswith("::test_third")][0]
            pages.append(get("/api/v1/test/%d" % third))
            # the pages' box forms list the boxes of the window
            for path in ("/", "/tests", "/?box=box-b", "/tests?box=box-a"):
                html = urllib.request.urlopen(url + path, timeout=30).read()
                assert b'<option value="box-a"' in html, (db, path)
                assert b'<option value="box-b"' in html, (db, path)
            got.append(pages)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=15)
    assert got[0] == got[1]
    assert any(t["test"].endswith("test_third") for t in got[0][0]["tests"])
    # the box filter and column (issue 28), on the server as on SQLite
    boxa = {t["test"].split("::")[1]: t for t in got[0][2]["tests"]}
    assert boxa["test_boxa"]["failures"] > 0
    assert boxa["test_boxa"]["runs"] == RUNS // 2
    assert got[0][2]["box"] == "box-a"
    assert got[0][3]["runs"] and {r["box"] for r in got[0][3]["runs"]} == {
        "box-b"}
    assert [t["id"] for t in got[0][4]["targets"]]
