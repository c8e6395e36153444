"""One grammar for every command: the same forms of TEST, --since all, an
unknown --target and a missing --config as errors (exit 2), a file that
is no flaky database named as such."""
import json
import os
import subprocess

import pytest

from conftest import FLAKYCTL

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="pytest" tests="3">
<testcase classname="tests.test_x" name="test_alpha" time="0.01"/>
<testcase classname="tests.test_x" name="test_beta" time="0.01">
<failure message="boom">AssertionError: boom</failure></testcase>
<testcase classname="tests.test_x" name="test_beta_two" time="0.01"/>
</testsuite></testsuites>
"""
ALPHA = "tests/test_x.py::test_alpha"


def run(args, cwd=None):
    """flakyctl without the caller's FLAKY_* variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKY_")}
    env["NO_COLOR"] = "1"
    return subprocess.run([FLAKYCTL] + args, capture_output=True, text=True,
                          timeout=60, cwd=cwd, env=env)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """Two targets with the same three tests: shop-a's run in January
    (outside every default window), shop-b's now."""
    d = tmp_path_factory.mktemp("grammar")
    xml = d / "r.xml"
    xml.write_text(JUNIT)
    path = str(d / "g.db")
    for args in (["--target", "shop-a", "--at", "2026-01-05"],
                 ["--target", "shop-b"]):
        p = run(["--db", path, "ingest"] + args + [str(xml)])
        assert p.returncode == 0, p
    return path


# each command that takes a TEST, with what it needs besides
TEST_COMMANDS = [
    ["show"], ["triage"], ["ticket"], ["trend"],
    ["quarantine", "add", "--reason", "r"],
]


def since(cmd):
    """--since all, for the commands with a window of days."""
    return [] if cmd[0] in ("trend", "quarantine") else ["--since", "all"]


@pytest.mark.parametrize("cmd", TEST_COMMANDS, ids=lambda c: c[0])
def test_a_part_that_names_several_tests_lists_them(cmd, db):
    p = run(["--db", db] + cmd + ["beta", "--target", "shop-b"] + since(cmd))
    assert p.returncode == 2, p
    lines = p.stderr.splitlines()
    assert lines[0] == "flakyctl %s: 'beta' matches 2 tests; give " \
        "more of the id:" % cmd[0], lines
    assert sorted(lines[1:]) == [
        "  tests/test_x.py::test_beta  (shop-b)",
        "  tests/test_x.py::test_beta_two  (shop-b)"]


@pytest.mark.parametrize("cmd", TEST_COMMANDS + [["confirm"]],
                         ids=lambda c: c[0])
def test_a_whole_id_in_two_targets_asks_for_the_target(cmd, db):
    p = run(["--db", db] + cmd + [ALPHA] + since(cmd))
    assert p.returncode == 2, p
    lines = p.stderr.splitlines()
    assert "matches 2 tests; give more of the id or --target" in lines[0]
    assert sorted(lines[1:]) == ["  %s  (shop-a)" % ALPHA,
                                 "  %s  (shop-b)" % ALPHA]


@pytest.mark.parametrize("cmd", [c for c in TEST_COMMANDS
                                 if c[0] != "quarantine"],
                         ids=lambda c: c[0])
@pytest.mark.parametrize("test", [ALPHA, "alpha", "test_x.py::test_al"])
def test_every_form_finds_the_test(cmd, test, db):
    # whole id, a part, the end of it: the same test for every command
    p = run(["--db", db, "--format", "json"] + cmd +
            [test, "--target", "shop-b"] + since(cmd))
    assert p.returncode == 0, p
    assert ALPHA in p.stdout


def test_quarantine_takes_a_part_and_removes_without_target(db, tmp_path):
    p = run(["--db", db, "quarantine", "add", "alpha", "--target", "shop-a",
             "--reason", "RACE"])
    assert p.returncode == 0, p
    assert p.stdout == "%s (shop-a) quarantined\n" % ALPHA
    # two targets have the test, one has it in quarantine: no --target
    p = run(["--db", db, "quarantine", "remove", "alpha"])
    assert p.returncode == 0, p
    assert p.stdout == "%s (shop-a) released\n" % ALPHA
    p = run(["--db", db, "quarantine", "remove", "alpha"])
    assert p.returncode == 2
    assert p.stderr == "flakyctl quarantine: 'alpha' is not in quarantine\n"
    # in quarantine in both: then --target decides
    for t in ("shop-a", "shop-b"):
        assert run(["--db", db, "quarantine", "add", ALPHA, "-T", t,
                    "-r", "x"]).returncode == 0
    p = run(["--db", db, "quarantine", "remove", "alpha"])
    assert p.returncode == 2 and "matches 2 quarantined tests" in p.stderr
    for t in ("shop-a", "shop-b"):
        p = run(["--db", db, "quarantine", "remove", "alpha", "-T", t])
        assert p.returncode == 0, p


def runs_total(db, args):
    p = run(["--db", db, "--format", "json"] + args)
    assert p.returncode == 0, p
    return json.loads(p.stdout)["runs"]["total"]


def test_since_all_everywhere(db):
    # January's run is outside the default windows and inside "all"
    assert runs_total(db, ["report"]) == 1
    assert runs_total(db, ["report", "--since", "all"]) == 2
    p = run(["--db", db, "metrics", "--since", "all"])
    assert p.returncode == 0, p
    window = [line for line in p.stdout.splitlines()
              if line.startswith("flaky_window_seconds ")][0]
    assert int(window.split()[1]) > 300 * 86400  # since January 5
    p = run(["--db", db, "gate", "--since", "all", "--max-broken", "5"])
    assert p.returncode == 0 and "(6 tests in the window)" in p.stdout, p
    for cmd in (["triage"], ["show", "alpha", "-T", "shop-a"],
                ["ticket", "beta_two", "-T", "shop-a"]):
        p = run(["--db", db] + cmd + ["--since", "all"])
        assert p.returncode == 0, p


UNKNOWN_TARGET = [
    ["report"], ["gate", "--max-critical", "0"], ["metrics"], ["triage"],
    ["show", "alpha"], ["ticket", "alpha"], ["trend", "alpha"],
    ["confirm"], ["confirm", "alpha"],
    ["quarantine", "add", "alpha", "-r", "x"], ["quarantine", "remove", "x"],
    ["quarantine", "export", "--format", "plain"],
]


@pytest.mark.parametrize("cmd", UNKNOWN_TARGET, ids=" ".join)
def test_unknown_target_is_an_error(cmd, db):
    before = os.path.getsize(db)
    p = run(["--db", db] + cmd + ["--target", "nosuch"])
    assert p.returncode == 2, p
    assert p.stdout == ""
    assert p.stderr == "flakyctl %s: unknown target 'nosuch' (the " \
        "database has shop-a, shop-b)\n" % cmd[0]
    p = run(["--db", db] + cmd + ["--target", "shop-c"])
    assert p.returncode == 2
    assert p.stderr == "flakyctl %s: unknown target 'shop-c'; did you " \
        "mean 'shop-a'?\n" % cmd[0]
    assert os.path.getsize(db) == before


def commands():
    p = run(["help"])
    return [line.split()[0] for line in
            p.stdout.split("commands:\n")[1].split("\n\n")[0].splitlines()]


@pytest.mark.parametrize("cmd", [c for c in commands() if c != "help"])
@pytest.mark.parametrize("where", ["before", "after"])
def test_missing_config_is_an_error(cmd, where, tmp_path):
    nope = str(tmp_path / "nope.yaml")
    opt = ["--config", nope]
    args = opt + [cmd] if where == "before" else [cmd] + opt
    if cmd in ("quarantine", "token"):
        args.insert(args.index(cmd) + 1, "list")
    p = run(args, cwd=tmp_path)
    assert p.returncode == 2, p
    assert p.stderr.splitlines()[0] == \
        "flakyctl: --config %s: No such file or directory" % nope
    assert os.listdir(tmp_path) == []   # no flaky.db made


def test_flaky_config_variable_is_checked_where_used(tmp_path):
    env = dict(os.environ, FLAKY_CONFIG=str(tmp_path / "nope.yaml"))
    env.pop("FLAKY_DB", None)
    p = subprocess.run([FLAKYCTL, "stats"], capture_output=True, text=True,
                       env=env, cwd=tmp_path, timeout=60)
    assert p.returncode == 2
    assert p.stderr == "flakyctl: $FLAKY_CONFIG %s: No such file or " \
        "directory\n" % (tmp_path / "nope.yaml")


NOT_A_DB = [["report"], ["stats"], ["triage"], ["show", "x"], ["ticket", "x"],
            ["trend", "x"], ["gate", "--max-critical", "0"], ["metrics"],
            ["quarantine", "list"], ["prune", "--older-than", "1d"],
            ["ingest", "--target", "t"], ["confirm"],
            ["analyze", "--runs", "1", "--", "/bin/true"]]


@pytest.mark.parametrize("cmd", NOT_A_DB, ids=" ".join)
def test_not_a_flaky_database(cmd, tmp_path):
    html = tmp_path / "report.html"
    html.write_text("<!doctype html><title>flaky</title>\n" * 40)
    before = html.read_bytes()
    if cmd[0] == "ingest":
        (tmp_path / "r.xml").write_text(JUNIT)
        cmd = cmd + ["r.xml"]
    p = run(["--db", "report.html"] + cmd, cwd=tmp_path)
    assert p.returncode == 2, p
    lines = p.stderr.splitlines()
    assert [x for x in lines if "report.html" in x] == [lines[-1]], lines
    assert lines[-1].endswith(" report.html: not a flaky database"), lines
    assert "sqlite" not in p.stderr.lower()
    assert html.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) in (["report.html"],
                                            ["r.xml", "report.html"])


def test_another_programs_sqlite_database(tmp_path):
    import sqlite3
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE notes (body TEXT)")
    con.execute("INSERT INTO notes VALUES ('keep me')")
    con.commit()
    con.close()
    for cmd in (["report"], ["analyze", "--runs", "1", "--", "/bin/true"]):
        p = run(["--db", str(path)] + cmd, cwd=tmp_path)
        assert p.returncode == 2, p
        assert p.stderr.splitlines()[-1].endswith(
            "other.db: not a flaky database (an SQLite database of another "
            "program)")
    con = sqlite3.connect(path)
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_schema")]
    assert names == ["notes"]


@pytest.mark.parametrize("cmd", ["gate", "metrics"])
def test_short_window_default_says_why(cmd):
    text = run([cmd, "--help"]).stdout
    joined = " ".join(text.split())
    assert "(default 7d, not report's 30d:" in joined


def test_singular_and_plural(db, tmp_path):
    # one failure in one run, not "1 failures in 1 runs"
    p = run(["--db", db, "show", "test_beta", "-T", "shop-b"])
    assert p.returncode == 0, p
    assert "\n1 failure in 1 run (100.0%" in p.stdout, p.stdout
    one = tmp_path / "one.xml"
    one.write_text('<testsuite name="s" tests="1"><testcase classname="m" '
                   'name="test_one" time="0.1"/></testsuite>\n')
    p = run(["--db", str(tmp_path / "one.db"), "ingest", "--target", "one",
             str(one)])
    assert p.returncode == 0, p
    assert p.stdout.rstrip().endswith(", 1 test"), p.stdout
    p = run(["--db", str(tmp_path / "one.db"), "gate", "--max-broken", "0"])
    assert p.stdout == "gate: ok (1 test in the window)\n", p
