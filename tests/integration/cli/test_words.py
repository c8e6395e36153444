"""Issue 28: a count printed for people agrees with its noun ("13 tests,
1 failures" was): one ingested run of one failing test, then the commands
that print counts of it."""
import re

import pytest

from conftest import run

JUNIT = """<?xml version="1.0"?>
<testsuite name="s" tests="1" failures="1">
<testcase classname="m" name="test_one" time="0.5"><failure message="boom">
AssertionError: boom</failure></testcase>
</testsuite>
"""


@pytest.fixture(scope="module")
def one_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("words")
    (d / "r.xml").write_text(JUNIT)
    db = str(d / "flaky.db")
    p = run(["--db", db, "ingest", "--target", "t", "--box", "b1",
             str(d / "r.xml")])
    assert p.returncode == 0, p.stderr
    return db


# "1 runs", "1 tests", "1 failures", "1 passes", "1 results", ...: a one
# before a plural noun (not "1 of 3 runs", where the noun is the 3's).
ONE_PLURAL = re.compile(r"(?<![\d.])(?<!of )1 (runs|tests|failures|results|"
                        r"passes|targets|messages|days|reruns|revisions|"
                        r"boxes|times)\b")


@pytest.mark.parametrize("args", [
    ["stats"], ["report"], ["triage"], ["show", "test_one"],
    ["ticket", "test_one"], ["alerts", "--since", "all"],
])
def test_one_is_singular(one_run, args):
    p = run(["--db", one_run] + args)
    assert p.returncode in (0, 1), p.stderr
    out = p.stdout + p.stderr
    assert not ONE_PLURAL.search(out), (args, ONE_PLURAL.search(out), out)


def test_words_of_one(one_run):
    out = run(["--db", one_run, "stats"]).stdout
    assert "1 target, 1 test, 1 run, 1 result, 1 message" in out, out
    out = run(["--db", one_run, "triage"]).stdout
    assert "1/1 run (100.0%)" in out, out
    out = run(["--db", one_run, "ticket", "test_one"]).stdout
    assert "**Failure rate:** 1 of 1 run (" in out, out
