"""Issue 28, item 4: a test with no counted run is not stable. Two targets
on examples/demo-pytest: "shop" run with -v (complete runs; test_refunds
is skipped in every one), "quiet" run with -q only (pytest names only the
failing tests, so every run is incomplete and no test has a counted run).
report, show, ticket, triage, JSON and the dashboard must say "skipped"
or "no evidence", never "stable", and no 1970-01-01 window; triage must
say the window's runs were all incomplete instead of "no unstable
test"."""
import json
import os
import re
import select
import shutil
import signal
import sqlite3
import subprocess
import time
import urllib.request

import pytest

from conftest import FLAKYCTL, ROOT, run

DEMO = os.path.join(ROOT, "examples", "demo-pytest")
SKIPPED = "test_shop.py::test_refunds"
QUIET_TEST = "test_shop.py::test_legacy_api"  # -q names failing tests only
RUNS = 3
PYTEST = ["/usr/bin/pytest", "-p", "no:cacheprovider", "-p",
          "no:random_order"]
PLACEHOLDERS = ("what your signature describes",
                "the fix your team wrote down")


class Shop:
    def __init__(self, base):
        self.path = str(base / "shop")
        shutil.copytree(DEMO, self.path, ignore=shutil.ignore_patterns(
            "__pycache__", ".pytest_cache"))
        self.db = str(base / "flaky.db")
        run(["--db", self.db, "analyze", "--runs", str(RUNS), "--target",
             "shop", "--"] + PYTEST + ["-v"], cwd=self.path, check=0)
        # PYTEST_ADDOPTS emptied inside: flakyctl's -v cannot reach it
        run(["--db", self.db, "analyze", "--runs", str(RUNS), "--target",
             "quiet", "--", "sh", "-c", "PYTEST_ADDOPTS= exec " +
             " ".join(PYTEST) + " -q"], cwd=self.path, check=None)

    def ctl(self, *args, check=0):
        return run(["--db", self.db] + list(args), cwd=self.path,
                   check=check)

    def json(self, *args):
        return json.loads(self.ctl("--format", "json", *args).stdout)

    def test_id(self, target, name):
        con = sqlite3.connect(self.db)
        row = con.execute("SELECT t.id FROM tests t JOIN targets g ON "
                          "g.id = t.target_id WHERE g.name = ? AND "
                          "t.name = ?", (target, name)).fetchone()
        con.close()
        return row[0]


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    return Shop(tmp_path_factory.mktemp("noevidence"))


def test_quiet_runs_are_incomplete(shop):
    """The premise: every run of quiet is stored incomplete."""
    con = sqlite3.connect(shop.db)
    rows = con.execute("SELECT count(*), count(ru.incomplete) FROM runs ru "
                       "JOIN targets g ON g.id = ru.target_id WHERE "
                       "g.name = 'quiet'").fetchone()
    con.close()
    assert rows == (RUNS, RUNS)


def test_report_skipped_not_stable(shop):
    rep = shop.json("report", "--target", "shop")
    tiers = {t["test"]: t["tier"] for t in rep["tests"]}
    assert tiers[SKIPPED] == "skipped", tiers
    stable = sum(1 for t in tiers.values() if t == "stable")
    out = shop.ctl("report", "--target", "shop").stdout
    # the counts line: the skipped test apart, not among the stable
    assert "stable    %d test%s\n" % (stable, "" if stable == 1 else "s") \
        in out, out
    assert "skipped   1 test in every run: no evidence either way" in out
    assert SKIPPED not in out
    csv = shop.ctl("--format", "csv", "report", "--target", "shop").stdout
    line = next(l for l in csv.splitlines() if "test_refunds" in l)
    assert line.startswith("skipped,shop,"), line


def test_show_and_ticket_skipped(shop):
    out = shop.ctl("show", "test_refunds").stdout
    assert "skipped: no counted run in this window: all 3 of its " \
        "results were skips" in out, out
    assert "stable" not in out and "0 runs" not in out
    d = shop.json("show", "test_refunds")
    assert (d["runs"], d["skips"], d["tier"], d["verdict"]) == \
        (0, RUNS, "skipped", "skipped"), d
    assert "skip mark" in d["cause"] and "skip is still meant" in d["patch"]
    t = shop.json("ticket", "test_refunds")
    assert t["title"] == "test_refunds: skipped (shop), no counted run"
    body = t["body"]
    assert "**Verdict:** skipped" in body
    assert "**Evidence:** no counted run in the window: all 3 of its " \
        "results were skips" in body, body
    assert "1970" not in body and "0 of 0 runs" not in body
    for p in PLACEHOLDERS:
        assert p not in body and p not in json.dumps(t["diagnosis"])


def test_show_and_ticket_no_evidence(shop):
    out = shop.ctl("show", "--target", "quiet", "legacy_api").stdout
    assert "no evidence: no counted run in this window: all 3 runs of " \
        "its target in the window were incomplete" in out, out
    # and why, from the newest incomplete run
    assert "pytest printed only failing tests" in out, out
    d = shop.json("show", "--target", "quiet", "legacy_api")
    assert (d["runs"], d["skips"], d["tier"], d["verdict"]) == \
        (0, 0, "no evidence", "no evidence"), d
    md = shop.ctl("ticket", "--target", "quiet", "legacy_api").stdout
    assert md.startswith("## test_legacy_api: no evidence (quiet), no "
                         "counted run\n"), md
    assert "**Verdict:** no evidence" in md
    assert "1970" not in md and "stable" not in md
    for p in PLACEHOLDERS:
        assert p not in md
    assert "make its target's runs complete" in md


def test_never_failed_ticket_has_no_placeholder(shop):
    """Issue 28, item 6: a never-failed test's ticket says so, not the
    placeholder of a user signature."""
    md = shop.ctl("ticket", "--target", "shop", "test_cart_total").stdout
    assert "**Verdict:** stable" in md
    for p in PLACEHOLDERS:
        assert p not in md, md
    assert "- cause: nothing to explain: it did not fail" in md


def test_triage_all_incomplete(shop):
    out = shop.ctl("triage", "--target", "quiet").stdout
    assert "no unstable test" not in out
    assert out.startswith("no test can be called unstable or stable: all "
                          "3 runs in this window were incomplete"), out
    assert "target quiet: all its runs in this window were incomplete" in out
    j = shop.json("triage", "--target", "quiet")
    assert j["tests"] == [] and j["runs"] == {"total": RUNS,
                                              "incomplete": RUNS}
    assert [a["target"] for a in j["all_incomplete"]] == ["quiet"]
    assert "pytest printed only failing tests" in j["all_incomplete"][0][
        "why"]
    # over every target: the unstable tests of shop, then quiet named
    out = shop.ctl("triage").stdout
    assert "test_legacy_api" in out
    assert "target quiet: all its runs in this window were incomplete" in out
    assert [a["target"] for a in shop.json("triage")["all_incomplete"]] == [
        "quiet"]


def read_line(proc, timeout=15.0):
    """The first line a process prints, or fail after timeout."""
    deadline = time.monotonic() + timeout
    buf = b""
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        assert left > 0 and proc.poll() is None, buf
        r, _, _ = select.select([proc.stdout], [], [], left)
        if r:
            buf += os.read(proc.stdout.fileno(), 1)
    return buf.decode()


def get(url):
    with urllib.request.urlopen(url, timeout=15) as r:
        return r.status, r.read().decode()


def test_dashboard(shop):
    """The tests page, the test page and /api/v1 say the same."""
    proc = subprocess.Popen([FLAKYCTL, "--db", shop.db, "serve", "--listen",
                             "127.0.0.1:0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        url = read_line(proc).split()[-1].rstrip("/")
        _, body = get(url + "/api/v1/tests?target=shop")
        tiers = {t["test"]: t["tier"] for t in json.loads(body)["tests"]}
        assert tiers[SKIPPED] == "skipped"
        _, body = get(url + "/api/v1/tests?tier=skipped")
        assert [t["test"] for t in json.loads(body)["tests"]] == [SKIPPED]
        status, body = get(url + "/tests?tier=skipped")
        assert status == 200 and 'data-tier="skipped"' in body
        quiet = shop.test_id("quiet", QUIET_TEST)
        _, body = get(url + "/api/v1/test/%d" % quiet)
        d = json.loads(body)
        assert (d["tier"], d["verdict"]) == ("no evidence", "no evidence")
        _, page = get(url + "/test/%d" % quiet)
        # the tier's fact (issue 32's page: a badge in its own field)
        assert re.search(r'id="tier">[^\n]*no evidence</', page), page
        assert "1970" not in page
        _, page = get(url + "/test/%d" % shop.test_id("shop", SKIPPED))
        assert re.search(r'id="tier">[^\n]*skipped</', page), page
        assert "1970" not in page
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
