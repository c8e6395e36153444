"""Flips (issue 29, item 6) in what flakyctl prints: a test that failed
and passed on one revision is named in report (a line under its row, and
listed even at a noise rate), show, triage and their JSON, with the CI
job and attempt of each side, or the run ids of runs without CI metadata.
A test that failed in every job of a revision and passed at the next
revision is a break and its fix: never called a flip."""
import hashlib
import json
import os
import re

import pytest

from conftest import ctl

R1 = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
R2 = "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"
R3 = "v2.0-rc1"
R4 = "4444444444444444444444444444444444444444"
R5 = "5555555555555555555555555555555555555555"
TESTS = ["test_retry", "test_cache", "test_local", "test_break",
         "test_rare"]


def junit(path, fails, n):
    """A JUnit file of the five tests, those in fails failing; n makes
    each file's content its own (runs of the same content, job and
    attempt are stored once, whatever their revision)."""
    cases = []
    for t in TESTS:
        body = ('<failure message="boom">AssertionError: boom</failure>'
                if t in fails else "")
        cases.append('<testcase classname="shop" name="%s" time="0.%04d">'
                     '%s</testcase>' % (t, n, body))
    path.write_text('<?xml version="1.0"?>\n<testsuite name="shop" '
                    'tests="%d" failures="%d">%s</testsuite>\n' %
                    (len(TESTS), len(fails), "".join(cases)))
    return str(path)


@pytest.fixture(scope="module")
def flips_db(tmp_path_factory):
    """Uploads as CI jobs would send them (a job, its attempt), and
    ingests without CI metadata:
      R1: test_retry fails in unit#1, passes in its rerun unit#2;
      R2: test_cache fails in lint#1, passes in unit#1;
      R3: test_local fails in one ingested run and passes in another;
      R4: test_break fails in unit#1 and lint#1 (every job); R5 passes it;
      test_rare flips once at R5 among 40 passing runs (a noise rate)."""
    d = tmp_path_factory.mktemp("flips")
    db = str(d / "flaky.db")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": str(d), "NO_COLOR": "1"}
    n = [0]

    def up(rev, job, attempt, fails):
        n[0] += 1
        f = junit(d / ("u%d.xml" % n[0]), fails, n[0])
        ctl(["upload", "--server", db, "--target", "shop", "--revision",
             rev, "--job", job, "--attempt", str(attempt),
             "--idempotency-key", "k%d" % n[0], f], env=env)

    def ingest(rev, fails):
        n[0] += 1
        f = junit(d / ("i%d.xml" % n[0]), fails, n[0])
        ctl(["--db", db, "ingest", "--target", "shop", "--revision", rev,
             f], env=env)

    up(R1, "unit", 1, {"test_retry"})
    up(R1, "unit", 2, set())
    up(R2, "lint", 1, {"test_cache"})
    up(R2, "unit", 1, set())
    ingest(R3, {"test_local"})
    ingest(R3, set())
    up(R4, "unit", 1, {"test_break"})
    up(R4, "lint", 1, {"test_break"})
    up(R5, "unit", 1, {"test_rare"})
    for i in range(39):
        up(R5, "unit", 2 + i, set())
    return db


def json_of(db, *args):
    return json.loads(ctl(["--db", db, "--format", "json"] +
                          list(args)).stdout)


def test_report_lines(flips_db):
    out = ctl(["--db", flips_db, "report"],
              env={"NO_COLOR": "1", "PATH": os.environ["PATH"]}).stdout
    lines = out.splitlines()
    # the window's whole days: 31, or 30 when it ends at midnight
    assert re.search(r"flipped on 1 revision in 3[01] days: a1b2c3d failed "
                     r"in job unit#1, passed in unit#2", out), out
    assert re.search(r"flipped on 1 revision in 3[01] days: 9f8e7d6 failed "
                     r"in job lint#1, passed in unit#1", out), out
    # no CI metadata: the runs are named by their ids
    local = [x for x in lines if "v2.0-rc1 failed in run" in x]
    assert len(local) == 1 and ", passed in run " in local[0], out
    # a noise rate (1 of 47 runs) is listed for its flip
    assert any(x.startswith("NOISE") and "test_rare" in x for x in lines), out
    assert "5555555 failed in job unit#1, passed in unit#2" in out, out
    # the break (2 of 48 runs, noise) is not listed: it has no flip
    assert "test_break" not in out and "4444444" not in out, out


def test_report_json(flips_db):
    rep = json_of(flips_db, "report")
    flips = {t["test"]: t["flips"] for t in rep["tests"]}
    assert flips == {"shop.test_retry": 1, "shop.test_cache": 1,
                     "shop.test_local": 1, "shop.test_break": 0,
                     "shop.test_rare": 1}, flips


def test_show_and_its_json(flips_db):
    out = ctl(["--db", flips_db, "show", "test_retry"]).stdout
    assert ("flipped on 1 revision in 30 days: a1b2c3d failed in job "
            "unit#1, passed in unit#2") in out, out
    d = json_of(flips_db, "show", "test_retry")
    assert d["flips"] == 1
    f = d["flip_revisions"][0]
    assert (f["revision"], f["fails"], f["passes"]) == (R1, 1, 1)
    assert (f["failed_job"], f["failed_attempt"]) == ("unit", 1)
    assert (f["passed_job"], f["passed_attempt"]) == ("unit", 2)
    assert f["failed_run_id"] < f["passed_run_id"]
    assert d["flip_summary"].startswith("flipped on 1 revision")
    local = json_of(flips_db, "show", "test_local")["flip_revisions"][0]
    assert local["failed_job"] is None and local["failed_attempt"] is None
    out = ctl(["--db", flips_db, "show", "test_local"]).stdout
    assert "v2.0-rc1 failed in run %d, passed in run %d" % (
        local["failed_run_id"], local["passed_run_id"]) in out, out


def test_break_is_no_flip(flips_db):
    out = ctl(["--db", flips_db, "show", "test_break"]).stdout
    assert "flipped" not in out, out
    d = json_of(flips_db, "show", "test_break")
    assert (d["flips"], d["flip_revisions"], d["flip_summary"]) == (
        0, [], None)
    tri = json_of(flips_db, "triage", "test_break")
    assert all(t["flips"] == 0 for t in tri["tests"]), tri


def test_triage(flips_db):
    out = ctl(["--db", flips_db, "triage"]).stdout
    assert ("  flips:       flipped on 1 revision in 30 days: 9f8e7d6 "
            "failed in job lint#1, passed in unit#1") in out, out
    tri = json_of(flips_db, "triage")
    by = {t["test"]: t for t in tri["tests"]}
    assert by["shop.test_cache"]["flips"] == 1
    assert by["shop.test_cache"]["flip_revisions"][0]["revision"] == R2


def REV40(r):
    """The revision r of the forty: a hash, as git names it."""
    return hashlib.sha1(b"rev%d" % r).hexdigest()


@pytest.fixture(scope="module")
def forty_db(tmp_path_factory):
    """The issue's history: 40 revisions, each run by jobs unit and lint
    (and a rerun of a failed job), in which three tests flip and one
    breaks and is fixed:
      test_retry fails in unit#1 at revisions 5, 17 and 33, its rerun
      unit#2 passes; test_cache fails in lint#1 at 9 and 28 while unit#1
      passes; test_local fails in lint#1 at 12, its rerun lint#2 passes;
      test_break fails in every job of revisions 20 to 22 (and in their
      reruns unit#2) and passes from 23 on: a break and its fix."""
    d = tmp_path_factory.mktemp("forty")
    db = str(d / "flaky.db")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": str(d), "NO_COLOR": "1"}
    n = [0]

    def up(rev, job, attempt, fails):
        n[0] += 1
        f = junit(d / ("u%d.xml" % n[0]), fails, n[0])
        ctl(["upload", "--server", db, "--target", "shop", "--revision",
             rev, "--job", job, "--attempt", str(attempt),
             "--idempotency-key", "f%d" % n[0], f], env=env)

    for r in range(40):
        rev = REV40(r)
        unit, lint = set(), set()
        if r in (5, 17, 33):
            unit.add("test_retry")
        if r in (9, 28):
            lint.add("test_cache")
        if r == 12:
            lint.add("test_local")
        if 20 <= r <= 22:
            unit.add("test_break")
            lint.add("test_break")
        up(rev, "unit", 1, unit)
        up(rev, "lint", 1, lint)
        if unit:	# CI reruns a failed job
            up(rev, "unit", 2, {"test_break"} & unit)
        if lint and "test_break" not in lint:
            up(rev, "lint", 2, set())
    return db


def test_forty_revisions(forty_db):
    """The three flipping tests flagged, with their revisions; the break
    and its fix (9 failures on 3 revisions in a row, a warning rate) not."""
    rep = json_of(forty_db, "report")
    flips = {t["test"]: t["flips"] for t in rep["tests"]}
    assert flips.get("shop.test_retry") == 3, flips
    assert flips.get("shop.test_cache") == 2, flips
    assert flips.get("shop.test_local") == 1, flips
    assert flips.get("shop.test_break", 0) == 0, flips
    assert sorted(t for t, f in flips.items() if f > 0) == [
        "shop.test_cache", "shop.test_local", "shop.test_retry"], flips
    out = ctl(["--db", forty_db, "report"],
              env={"NO_COLOR": "1", "PATH": os.environ["PATH"]}).stdout
    flipped = [x.strip() for x in out.splitlines() if "flipped on" in x]
    assert len(flipped) == 3, out
    assert all(REV40(r)[:7] in flipped[0] for r in (5, 17, 33)), out
    # listed for its rate, never for a flip
    assert "shop.test_break" in out, out
    for r in range(20, 24):
        assert REV40(r)[:7] not in out, (r, out)
    d = json_of(forty_db, "show", "test_retry")
    assert sorted(f["revision"] for f in d["flip_revisions"]) == sorted(
        REV40(r) for r in (5, 17, 33)), d["flip_revisions"]
    assert d["flip_summary"].startswith("flipped on 3 revisions"), d
    d = json_of(forty_db, "show", "test_break")
    assert (d["flips"], d["flip_revisions"]) == (0, []), d
    tri = json_of(forty_db, "triage", "test_break")
    assert all(t["flips"] == 0 for t in tri["tests"]), tri
