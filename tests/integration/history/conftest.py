"""Shared set-up for the history integration tests: the real flakyctl on a
generated history of JUnit files, each test in its own temporary directory."""
import datetime
import json
import os
import sqlite3
import subprocess
import zlib

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FLAKYCTL = os.environ.get("FLAKYCTL", os.path.join(ROOT, "build", "cli", "flakyctl"))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")

# The generated history: 60 days of 10 CI runs each, five tests of 1 s.
FIRST_DAY = datetime.date(2026, 9, 2)
DAYS = 60
RUNS_PER_DAY = 10
TEST_SECONDS = 1.0
UNTIL = "2026-11-01"            # the day after the last day
TURNS_FLAKY = datetime.date(2026, 10, 15)
RECOVERS = datetime.date(2026, 9, 25)
GETS_WORSE = datetime.date(2026, 10, 2)
TESTS = ["t.stable", "t.turns_flaky", "t.recovers", "t.always_flaky",
         "t.gets_worse"]


def sqlar_uncompress(data, size):
    """SQLite's sqlar_uncompress, built into the sqlite3 shell and
    registered by flakyctl, but not in Python's sqlite3: the view run_output
    needs it (docs/schema.md)."""
    if data is None or size is None or size <= 0 or size == len(data):
        return data
    return zlib.decompress(data)


def connect(db):
    """A connection on which the view run_output reads."""
    con = sqlite3.connect(db)
    con.create_function("sqlar_uncompress", 2, sqlar_uncompress,
                        deterministic=True)
    return con


def fails(test, day, r):
    """Whether run r (0..9) of day fails test: deterministic patterns with
    known rates, so every count below is exact."""
    i = (day - FIRST_DAY).days
    if test == "t.turns_flaky":
        return day >= TURNS_FLAKY and r < 3            # 0%, then 30%
    if test == "t.recovers":
        return day < RECOVERS and r < 3                # 30%, then 0%
    if test == "t.always_flaky":
        return r == (i % 5) or r == (i % 5) + 5        # 20% every day
    if test == "t.gets_worse":
        if day < GETS_WORSE:
            return r == 0 and i % 2 == 0               # 5%
        return r < 4                                   # 40%
    return False


def junit(day, r):
    """One CI run as Surefire-style JUnit XML with a suite timestamp."""
    ts = "%sT%02d:00:00" % (day.isoformat(), 8 + r)
    cases = []
    for t in TESTS:
        cls, name = t.split(".")
        body = ""
        if fails(t, day, r):
            body = '<failure message="%s failed on %s">trace</failure>' % (
                name, day.isoformat())
        cases.append('<testcase classname="%s" name="%s" time="%.1f">%s'
                     '</testcase>' % (cls, name, TEST_SECONDS, body))
    return ('<?xml version="1.0"?>\n<testsuite name="ci" tests="%d" '
            'timestamp="%s">\n%s\n</testsuite>\n' % (len(TESTS), ts,
                                                       "\n".join(cases)))


def run(args, check=None, env=None, timeout=300):
    """Run flakyctl; returns the CompletedProcess."""
    e = dict(os.environ)
    e.pop("FLAKY_DB", None)
    e.pop("FLAKY_CONFIG", None)
    e["NO_COLOR"] = "1"
    if env:
        e.update(env)
    p = subprocess.run([FLAKYCTL] + args, env=e, capture_output=True,
                       text=True, timeout=timeout)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


def report_json(db, *extra):
    p = run(["--db", db, "report", "--format", "json", "--until", UNTIL]
            + list(extra), check=0)
    doc = json.loads(p.stdout)
    return doc, {t["test"]: t for t in doc["tests"]}


@pytest.fixture(scope="session")
def history_files(tmp_path_factory):
    """The 600 JUnit files of the generated history."""
    d = tmp_path_factory.mktemp("junit")
    files = []
    for i in range(DAYS):
        day = FIRST_DAY + datetime.timedelta(days=i)
        for r in range(RUNS_PER_DAY):
            f = d / ("%s-%d.xml" % (day.isoformat(), r))
            f.write_text(junit(day, r))
            files.append(str(f))
    return files


@pytest.fixture
def history_db(tmp_path, history_files):
    """A database holding the whole generated history."""
    db = str(tmp_path / "h.db")
    run(["--db", db, "ingest", "--target", "ci"] + history_files, check=0)
    return db
