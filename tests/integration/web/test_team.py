"""The dashboard a team keeps open (issue 32), in headless Chromium on
SQLite and on the fleet's server (a throwaway PostgreSQL cluster): every
page at 1400 and 400 pixels (and, on SQLite, at 1400 in the dark scheme
and through axe-core: the renderer is the same on both), axe-core
with no serious or critical violation, no console error, no request
leaving the host, no sideways scroll at 400 px, the trends and a test's
story in the text, a markup id shown as text, the keyboard sorting a
table, and an action taken from the page (the token kept in the tab)
that flakyctl then shows, recorded with the token's name."""
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import FLAKYCTL, ROOT, Server, browse, get, shots_dir
from test_browser import assert_clean
import history

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "fleet"))
from pgcluster import Cluster  # noqa: E402

HOSTILE = "<img src=x onerror=alert(1)>"
DAYS = 45


def make(db, work):
    """The history, the checkout with CODEOWNERS, the marks."""
    history.make(FLAKYCTL, db, work, days=DAYS)
    history.checkout(FLAKYCTL, db, work, ROOT)
    history.marks(FLAKYCTL, db)


@pytest.fixture(scope="module")
def cluster():
    c = Cluster()
    c.start()
    yield c
    c.stop()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def team(request, tmp_path_factory):
    """The team's database on each backend: (db, backend)."""
    work = tmp_path_factory.mktemp("team-" + request.param)
    if request.param == "sqlite":
        db = str(work / "flaky.db")
    else:
        db = request.getfixturevalue("cluster").uri("flaky")
    make(db, work)
    return db, request.param


def ctl(db, *args):
    p = subprocess.run([FLAKYCTL, "--db", db] + list(args),
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, NO_COLOR="1"))
    assert p.returncode == 0, (args, p.stdout, p.stderr)
    return p.stdout


def id_of(url, name):
    """The id of a test by a part of its name (/api/v1/tests?q=)."""
    tests = json.loads(get(url + "/api/v1/tests?q=" + name)[2])["tests"]
    assert tests, name
    return tests[0]["id"]


@pytest.fixture
def served(team):
    db, backend = team
    s = Server(db)
    yield s, db, backend
    assert s.stop() == 0


def known(url, tid, token, timeout=30.0):
    """Wait until the server knows a token made after it started (it reads
    the tokens every few seconds): an action of the wrong type is then 415
    (the token passed), not 401."""
    deadline = time.monotonic() + timeout
    while True:
        status = get(url + "/api/v1/test/%d/owner" % tid, method="POST",
                     data=b"x", headers={"Authorization": "Bearer " + token,
                                         "Content-Type": "text/plain"})[0]
        if status == 415:
            return
        assert status == 401 and time.monotonic() < deadline, status
        time.sleep(0.1)


# The keyboard: the skip link first, with a focus ring; then the rate
# column sorted by its button with Enter.
KEYS_FOCUS = """(() => {
  const a = document.activeElement;
  return {text: a.textContent, outline: getComputedStyle(a).outlineStyle};
})()"""
KEYS_SORT = """(() => {
  const th = [...document.querySelectorAll('#tests th[data-sort]')]
    .find((t) => t.textContent.trim() === 'rate');
  return {sort: th.getAttribute('aria-sort'),
          v: [...document.querySelectorAll('#tests tbody tr')]
            .map((r) => parseFloat(r.cells[th.cellIndex].dataset.v))};
})()"""
FOCUS_RATE = """(() => {
  [...document.querySelectorAll('#tests th[data-sort] button')]
    .find((b) => b.textContent.trim() === 'rate').focus(); return true;
})()"""


def test_every_page(served, tmp_path):
    s, db, backend = served
    url = s.url
    retry = id_of(url, "test_checkout_retry")
    owned = id_of(url, "TestInventory::test_release")
    hostile = id_of(url, "onerror")
    runs = json.loads(get(url + "/api/v1/runs?limit=1")[2])["runs"]
    pages = ["/", "/?days=90", "/?target=shop&branch=main&box=ci-1",
             "/tests", "/tests?state=flaky&q=CHECKOUT",
             "/tests?owner=@acme/shop", "/test/%d" % retry,
             "/test/%d" % owned, "/test/%d" % hostile,
             "/run/%d" % runs[0]["id"]]
    # axe-core and the dark scheme judge the renderer, the same on both
    # backends: on SQLite only, which halves the fleet's part
    heavy = backend == "sqlite"
    report = browse({"base": url, "pages": pages, "axe": heavy, "dark": heavy,
                     "shots": shots_dir(tmp_path, "team-" + backend),
                     "steps": [{"path": "/tests", "width": 1400, "do": [
                         ["press", "Tab"], ["eval", KEYS_FOCUS],
                         ["eval", FOCUS_RATE], ["press", "Enter"],
                         ["eval", KEYS_SORT]]}]}, tmp_path)
    assert_clean(report)
    for r in report:
        where = "%s at %d px (%s)" % (r["path"], r["width"], backend)
        assert r.get("axe", []) == [], (where, r["axe"])
    # every page seen at both widths (and dark on SQLite), axe on each
    assert len(report) == len(pages) * (3 if heavy else 2), len(report)
    assert all(("axe" in r) == heavy for r in report)
    by = {(r["path"], r["width"]): r for r in report}
    over = by[("/", 1400)]["text"]
    for words in ("Tests by tier per day", "introduced and fixed per week",
                  "Time lost to failed runs per day", "Newest flips",
                  "Newest alerts", "failed in job", "breaks and their fixes"):
        assert words in over, words
    # a break and its fix is never a flip
    assert "test_export_csv" not in over.split("Newest flips")[1].split(
        "Newest alerts")[0]
    assert "90" in by[("/?days=90", 1400)]["text"]
    page = by[("/test/%d" % retry, 1400)]["text"]
    for words in ("flipped on", "failed in job", "@acme/payments",
                  "tracker.example/FLAKY-12", "% on main", "% on ci-1",
                  "Durations, passing and failing", "Failure modes",
                  "Reproduce", "Actions", "by root via cli"):
        assert words in page, words
    page = by[("/test/%d" % owned, 1400)]["text"]
    assert "@acme/shop @alice" in page and "CODEOWNERS" in page, page
    assert HOSTILE in by[("/test/%d" % hostile, 400)]["text"]
    shown = by[("/tests?owner=@acme/shop", 1400)]["text"]
    assert "TestInventory::test_release" in shown
    assert "test_checkout_retry" not in shown
    assert "test_checkout_retry" in by[("/tests?state=flaky&q=CHECKOUT",
                                        400)]["text"]
    keys = by[("/tests", 1400)]["steps"]
    assert "Skip" in keys[0]["text"] and keys[0]["outline"] != "none", keys
    assert keys[2]["sort"] == "ascending" and keys[2]["v"] == sorted(
        keys[2]["v"]), keys[2]


def test_action_from_the_page(served, tmp_path):
    """Quarantine from the page with a token of scope write kept in the
    tab; flakyctl quarantine list shows it, actions says who; release
    from the page again."""
    s, db, backend = served
    token = ctl(db, "token", "create", "--scope", "write", "--name",
                "dash-" + backend).strip()
    tid = id_of(s.url, "test_cache_expiry")
    path = "/test/%d" % tid
    known(s.url, tid, token)
    state = ("document.getElementById('quarantine').textContent + ' | ' + "
             "document.getElementById('action-log').textContent")
    quarantine = "form.act[action$='/quarantine']"
    report = browse({"base": s.url, "pages": [path], "steps": [{
        "path": path, "width": 1400, "do": [
            # without a token the page says what is missing
            ["type", quarantine + " input[name=reason]",
             "RACE, seen on the page"],
            ["click", quarantine + " button"],
            ["eval", "document.getElementById('act-status').textContent"],
            ["type", "#token-form input[name=token]", token],
            ["click", "#token-form button[type=submit]"],
            ["eval", "document.getElementById('token-state').textContent"],
            ["clickNav", quarantine + " button"],
            ["eval", state],
            ["eval", "sessionStorage.getItem('flakyToken') !== null"]]}]},
        tmp_path)
    steps = next(r for r in report if r["width"] == 1400)["steps"]
    assert "token of scope write" in steps[0], steps
    assert "kept for this tab" in steps[1], steps
    assert "quarantined since" in steps[2] and "dash-" + backend in steps[2]
    assert steps[3] is True
    # quarantined from the page: the command line sees it
    listed = json.loads(ctl(db, "--format", "json", "quarantine", "list"))
    mine = [q for q in listed if q["test"].endswith("test_cache_expiry")]
    assert mine and mine[0]["reason"] == "RACE, seen on the page", listed
    # released from the page, with the token typed again (a new tab)
    report = browse({"base": s.url, "pages": [path], "steps": [{
        "path": path, "width": 1400, "do": [
            ["type", "#token-form input[name=token]", token],
            ["click", "#token-form button[type=submit]"],
            ["clickNav", "form.act[action$='/release'] button"],
            ["eval", state]]}]}, tmp_path)
    steps = next(r for r in report if r["width"] == 1400)["steps"]
    assert "not quarantined" in steps[0] and "release" in steps[0], steps
    log = json.loads(ctl(db, "--format", "json", "actions", "--limit", "2"))
    assert [(a["action"], a["who"], a["via"]) for a in log] == [
        ("release", "dash-" + backend, "http"),
        ("quarantine", "dash-" + backend, "http")], log
    assert log[1]["value"] == "RACE, seen on the page"
    assert "test_cache_expiry" not in ctl(db, "quarantine", "list")


def test_branch_rates_of_uploads(served):
    """Every uploaded run is counted under its branch, once: the branch
    rates of a test add up to its runs (an upload's CI row is written
    before its results, and its branch rollups waited for them in vain)."""
    s, db, backend = served
    d = json.loads(get(s.url + "/api/v1/test/%d" % id_of(
        s.url, "test_checkout_retry"))[2])
    by = {b["branch"]: b for b in d["branches"]}
    assert set(by) == {"main", "feature/checkout"}, (backend, by)
    assert sum(b["runs"] for b in by.values()) == d["runs"], (backend, d)
    assert sum(b["failures"] for b in by.values()) == d["failures"], d
