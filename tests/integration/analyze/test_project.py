"""One project, one target; the runner the project itself uses (issue 28,
items 2, 3 and 5). The default target is named after the project and its
runner, whichever form ran it (`analyze DIR`, `-- npx jest`, `-- npm
test`); a Python project that declares no runner gets the one that counts
more of its tests (load_tests adds doctests that pytest never runs); a Perl
distribution runs under prove -lrv, and plain `prove -l t` gets its -v."""
import os
import re
import shutil
import sqlite3

from conftest import PYTEST, ROOT, run

PROJECTS = os.path.join(ROOT, "tests", "fixtures", "projects")


def targets(db):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT name FROM targets ORDER BY name").fetchall()
    tests = con.execute("SELECT count(*) FROM tests").fetchone()[0]
    con.close()
    return [r[0] for r in rows], tests


def analyze(db, cwd, args, env=None):
    return run(["--db", db, "analyze", "--runs", "1"] + args, cwd=cwd,
               env=env, check=0)


def project(tmp_path, name):
    dst = tmp_path / name
    shutil.copytree(os.path.join(PROJECTS, name), dst)
    return str(dst)


def test_jest_every_form_one_target(demo, tmp_path):
    d = demo("demo-jest")
    db = str(tmp_path / "f.db")
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    analyze(db, tmp_path, [d], env=env)
    analyze(db, d, ["--", os.path.join(d, "node_modules", ".bin", "jest")],
            env=env)
    analyze(db, d, ["--", "npx", "jest"], env=env)
    # npm test runs `jest --verbose`: the runner is the project's
    analyze(db, os.path.join(d, "__tests__"), ["--", "npm", "test"],
            env=env)
    names, tests = targets(db)
    assert names == ["demo-jest-jest"]
    assert tests == 8


def test_python_every_form_one_target(demo, tmp_path):
    d = demo("demo-pytest")
    db = str(tmp_path / "f.db")
    env = {"PYTEST_ADDOPTS": "-p no:randomly"}
    analyze(db, tmp_path, [d], env=env)
    analyze(db, d, ["--", PYTEST], env=env)
    analyze(db, d, ["--", "sh", "-c", PYTEST + " -v"], env=env)
    names, tests = targets(db)
    assert names == ["demo-pytest-pytest"]
    assert tests == 13


def test_doctests_counted_not_lost(tmp_path):
    """No runner declared: unittest finds 6 tests, pytest collects 3 (it
    ignores load_tests); the run stores all 6, as unittest counts them."""
    d = project(tmp_path, "doctests")
    db = str(tmp_path / "f.db")
    p = analyze(db, tmp_path, [d])
    assert ("running `python3 -m unittest discover -v -s tests -t .` in %s "
            "(unittest: found tests/test_calc.py; unittest finds 6 tests, "
            "pytest collects 3 (no runner declared))" % d) in p.stderr
    assert targets(db) == (["doctests-unittest"], 6)
    assert "stable    6 tests" in p.stdout
    # what the project declares wins, and the reason says where
    with open(os.path.join(d, "tox.ini"), "w") as f:
        f.write("[testenv]\ndeps = pytest\ncommands = pytest {posargs}\n")
    p = analyze(db, tmp_path, [d])
    assert "(pytest: found tox.ini; tox.ini runs pytest)" in p.stderr
    assert "stable    3 tests" in p.stdout


def test_prove_plain_and_directory(tmp_path):
    """prove -l t gets -v; directory mode finds t/*.t; both give the five
    test points prove itself counts (Files=2, Tests=5), under one target."""
    d = project(tmp_path, "prove")
    db = str(tmp_path / "f.db")
    p = analyze(db, d, ["--", "prove", "-l", "t"])
    assert "added -v (without it prove names no test" in p.stderr
    assert "stable    5 tests" in p.stdout
    p = analyze(db, tmp_path, [d])
    assert ("running `prove -lrv t` in %s (prove: found Makefile.PL and "
            "t/*.t)" % d) in p.stderr
    assert "stable    5 tests" in p.stdout
    names, tests = targets(db)
    assert names == ["prove-prove"] and tests == 5
    con = sqlite3.connect(db)
    ids = sorted(n for (n,) in con.execute("SELECT name FROM tests"))
    con.close()
    assert ids == ["t/add.t > adds a negative", "t/add.t > adds one and one",
                   "t/mul.t > by zero", "t/mul.t > fails on demand",
                   "t/mul.t > multiplies"]
    out = re.search(r"Files=(\d+), Tests=(\d+)",
                    os.popen("cd %s && prove -l t 2>&1" % d).read())
    assert out.groups() == ("2", "5")
