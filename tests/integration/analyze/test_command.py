"""What flakyctl runs (lib/command.c): plain commands are completed so that
they give the same per-test evidence as their verbose forms, and a directory
is enough to find the runner (docs/runners.md, "What flakyctl adds to your
command" and "Directory mode").

The demo suites' outcomes are random, but which tests run, and in which
order, is not: those are what is compared here."""
import os
import re
import shutil
import sqlite3

import pytest

from conftest import PYTEST, PYTHON, run

RUNS = 3


def per_run(db):
    """Each run's tests in their run order, and the runs' statuses."""
    con = sqlite3.connect(db)
    runs = {}
    for run_id, name in con.execute(
            "SELECT r.run_id, t.name FROM results r JOIN tests t ON t.id = r.test_id "
            "ORDER BY r.run_id, r.position"):
        runs.setdefault(run_id, []).append(name)
    statuses = [s for (s,) in con.execute("SELECT status FROM runs")]
    target = con.execute("SELECT name, command, dir FROM targets").fetchall()
    con.close()
    return list(runs.values()), statuses, target


def analyze(tmp_path, cwd, args, runs=RUNS, env=None, name="x"):
    """flakyctl analyze into a fresh database; (per-run tests, stderr,
    target row)."""
    db = str(tmp_path / (name + ".db"))
    p = run(["--db", db, "analyze", "--runs", str(runs), "--format", "json"] + args,
            cwd=cwd, env=env, check=0)
    lists, statuses, target = per_run(db)
    assert statuses == ["done"] * runs, (statuses, p.stderr)
    assert len(lists) == runs, p.stderr
    return lists, p.stderr, target


def same_runs(lists, want, ordered=True):
    """Every run named exactly the tests of the verbose form."""
    for names in lists:
        if ordered:
            assert names == want
        else:
            assert sorted(names) == sorted(want)


def test_pytest_plain_forms_are_complete(demo, tmp_path):
    d = demo("demo-pytest")
    nr = ["-p", "no:randomly"]
    verbose, err, _ = analyze(tmp_path, d, ["--", PYTEST, "-v"] + nr, name="v")
    assert "added" not in err
    want = verbose[0]
    assert len(want) == 13 and "test_shop.py::test_refunds" in want
    same_runs(verbose, want)

    plain, err, target = analyze(tmp_path, d, ["--", PYTEST] + nr, name="plain")
    assert "flakyctl: added PYTEST_ADDOPTS=-v" in err
    same_runs(plain, want)
    # the stored command is the one that ran, ready to paste
    assert target[0][1] == "PYTEST_ADDOPTS=-v /usr/bin/pytest -p no:randomly"

    quiet, err, _ = analyze(tmp_path, d, ["--", PYTEST, "-q"] + nr, name="q")
    assert "PYTEST_ADDOPTS=-v -v" in err
    same_runs(quiet, want)

    # as the YAML runs a string command; the user's PYTEST_ADDOPTS is kept
    shutil.rmtree(os.path.join(d, ".pytest_cache"))
    shell, err, _ = analyze(tmp_path, d, ["--", "/bin/sh", "-c", PYTEST + " -p no:randomly"],
                            env={"PYTEST_ADDOPTS": "-p no:cacheprovider"}, name="sh")
    assert "flakyctl: added -v to PYTEST_ADDOPTS" in err
    same_runs(shell, want)
    assert not os.path.exists(os.path.join(d, ".pytest_cache"))

    # python -m pytest
    mod, _, _ = analyze(tmp_path, d, ["--", PYTHON, "-m", "pytest"] + nr, name="m")
    same_runs(mod, want)


def test_unittest_plain_form_is_complete(demo, tmp_path):
    d = demo("demo-unittest")
    verbose, err, _ = analyze(tmp_path, d, ["--", PYTHON, "-m", "unittest", "-v"], name="v")
    assert "added" not in err
    want = verbose[0]
    assert len(want) == 5 and "test_inventory.InventoryTest.test_warehouse" in want
    same_runs(verbose, want)
    plain, err, _ = analyze(tmp_path, d, ["--", PYTHON, "-m", "unittest"], name="plain")
    assert "flakyctl: added -v" in err
    same_runs(plain, want)
    disc, _, target = analyze(tmp_path, d, ["--", PYTHON, "-m", "unittest", "discover"],
                              name="d")
    same_runs(disc, want)
    assert target[0][1] == PYTHON + " -m unittest discover -v"


def jest_bin(d):
    return os.path.join(d, "node_modules", ".bin", "jest")


def test_jest_plain_form_is_complete(demo, tmp_path):
    d = demo("demo-jest")
    cache = tmp_path / "xdg"
    env = {"XDG_CACHE_HOME": str(cache)}
    # the files run in parallel workers: compare the tests, not their order
    verbose, err, _ = analyze(tmp_path, d, ["--no-runner-cache", "--", jest_bin(d), "--verbose"],
                              runs=2, env=env, name="v")
    assert "added" not in err
    want = verbose[0]
    # "same name twice" twice, and the skipped "refunds"
    assert len(want) == 8 and len(set(want)) == 8, want
    same_runs(verbose, want, ordered=False)
    assert not cache.exists()       # --no-runner-cache: Jest's own place

    plain, err, target = analyze(tmp_path, d, ["--", jest_bin(d)], runs=2, env=env,
                                 name="plain")
    assert "flakyctl: added --verbose" in err
    assert "--cacheDirectory=%s/flaky/jest" % cache in err
    same_runs(plain, want, ordered=False)
    # the transform cache outlived the runs' private TMPDIRs
    assert any(n.startswith("jest-transform-cache")
               for n in os.listdir(cache / "flaky" / "jest")), os.listdir(cache / "flaky" / "jest")
    assert "--verbose --cacheDirectory=" in target[0][1]


def python3_only(tmp_path):
    """A PATH with python3 but no pytest."""
    b = tmp_path / "bin"
    b.mkdir()
    os.symlink(PYTHON, b / "python3")
    return {"PATH": str(b)}


def test_directory_mode_pytest(demo, tmp_path):
    d = demo("demo-pytest")
    # options after the path, too
    lists, err, target = analyze(tmp_path, tmp_path, [d, "--jobs", "2"],
                                 env={"PYTEST_ADDOPTS": "-p no:randomly"})
    # no runner declared: both counted, pytest's plain functions win
    # (unittest finds none, or 1 failed import where python3 has no pytest)
    assert re.search(r"flakyctl: running `pytest -v` in %s \(pytest: found test_shop.py; "
                     r"pytest collects 13 tests, unittest finds [01] \(no runner declared\)\)"
                     % re.escape(d), err), err
    assert target == [("demo-pytest-pytest", "pytest -v", d)]
    assert len(lists[0]) == 13
    same_runs(lists, lists[0])

    # a configured root above the directory: run from the root, the
    # directory as the test path
    os.mkdir(os.path.join(d, "tests"))
    shutil.move(os.path.join(d, "test_shop.py"), os.path.join(d, "tests"))
    with open(os.path.join(d, "pytest.ini"), "w") as f:
        f.write("[pytest]\naddopts = -p no:randomly\n")
    lists, err, target = analyze(tmp_path, os.path.join(d, "tests"), ["--runs", "2", "."],
                                 runs=2, name="sub")
    assert "running `pytest -v tests` in %s (pytest: found pytest.ini)" % d in err
    assert target[0][:2] == ("demo-pytest-pytest", "pytest -v tests")
    assert lists[0][0] == "tests/test_shop.py::test_payment_retry"
    assert len(lists[0]) == 13


def test_directory_mode_unittest(demo, tmp_path):
    d = demo("demo-unittest")
    verbose, _, _ = analyze(tmp_path, d, ["--", PYTHON, "-m", "unittest", "-v"], runs=1,
                            name="v")
    lists, err, target = analyze(tmp_path, tmp_path, ["--runs", "2", d], runs=2,
                                 env=python3_only(tmp_path))
    assert ("running `python3 -m unittest discover -v` in %s (unittest: found "
            "test_inventory.py, pytest is not installed)" % d) in err
    assert target[0][0] == "demo-unittest-unittest"
    same_runs(lists, verbose[0])
    # with pytest installed, pytest runs the same suite
    lists, err, _ = analyze(tmp_path, tmp_path, ["--runs", "1", d], runs=1, name="py",
                            env={"PYTEST_ADDOPTS": "-p no:randomly"})
    assert ("(pytest: found test_inventory.py; pytest collects 5 tests, unittest finds 5 "
            "(no runner declared))") in err
    assert len(lists[0]) == 5


def test_directory_mode_jest(demo, tmp_path):
    d = demo("demo-jest")
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    verbose, _, _ = analyze(tmp_path, d, ["--", jest_bin(d), "--verbose"], runs=1, env=env,
                            name="v")
    lists, err, target = analyze(tmp_path, tmp_path, [d, "--runs", "2"], runs=2, env=env)
    assert ("running `node_modules/.bin/jest --verbose --cacheDirectory=%s/xdg/flaky/jest` "
            "in %s (jest: package.json lists jest in devDependencies" % (tmp_path, d)) in err
    assert target[0][0] == "demo-jest-jest"
    same_runs(lists, verbose[0], ordered=False)
    # a subdirectory is the test path, from the root
    lists, err, _ = analyze(tmp_path, d, ["__tests__", "--runs", "1"], runs=1, env=env,
                            name="sub")
    # Jest matches the pattern against absolute paths: the directory's
    assert not any(c in d for c in "\\^$.|?*+()[]{}"), d
    assert "running `node_modules/.bin/jest --verbose %s/__tests__/ " % d in err
    same_runs(lists, verbose[0], ordered=False)


def test_directory_mode_jest_not_installed(tmp_path):
    d = tmp_path / "web"
    d.mkdir()
    (d / "package.json").write_text('{"devDependencies": {"jest": "29.7.0"}}\n')
    db = tmp_path / "j.db"
    p = run(["--db", str(db), "analyze", str(d)], cwd=tmp_path)
    assert p.returncode == 2
    assert "jest is not installed" in p.stderr and "npm ci" in p.stderr
    assert not db.exists()


def test_directory_without_runner(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    (d / "README").write_text("nothing to run\n")
    db = tmp_path / "n.db"
    p = run(["--db", str(db), "analyze", "--runs", "3", str(d)], cwd=tmp_path)
    assert p.returncode == 2
    assert "no test runner recognized" in p.stderr
    for looked in ("pytest.ini", "pyproject.toml", "package.json", "go.mod",
                   "test_*.py"):
        assert looked in p.stderr, looked
    assert not db.exists()
    # a directory then a command is ambiguous
    p = run(["--db", str(db), "analyze", str(d), "pytest"], cwd=tmp_path)
    assert p.returncode == 2 and "after the directory" in p.stderr


GO_TEST = """package calc

import "testing"

func TestAdd(t *testing.T) {
	if 1+1 != 2 {
		t.Fatal("add")
	}
}

func TestSub(t *testing.T) {
	t.Run("small", func(t *testing.T) {})
	t.Run("large", func(t *testing.T) {})
}
"""


@pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")
def test_go_plain_form_and_directory_mode(tmp_path):
    d = tmp_path / "calc"
    (d / "sub").mkdir(parents=True)
    (d / "go.mod").write_text("module example.com/calc\n\ngo 1.19\n")
    (d / "sub" / "calc_test.go").write_text(GO_TEST)
    env = {"GOFLAGS": "-mod=mod", "GOCACHE": str(tmp_path / "gocache"),
           "GOPATH": str(tmp_path / "gopath"), "GOPROXY": "off"}
    want = sorted(["example.com/calc/sub/TestAdd", "example.com/calc/sub/TestSub",
                   "example.com/calc/sub/TestSub/small", "example.com/calc/sub/TestSub/large"])
    # plain: without -count=1 the second run would be "(cached)", without
    # -v no passing test would be named
    plain, err, target = analyze(tmp_path, str(d), ["--", "go", "test", "./..."], runs=2,
                                 env=env, name="plain")
    assert "flakyctl: added -count=1 -v" in err
    assert target[0][1] == "go test -count=1 -v ./..."
    same_runs(plain, want, ordered=False)
    # directory mode from below the module's root
    lists, err, target = analyze(tmp_path, tmp_path, [str(d / "sub"), "--runs", "2"], runs=2,
                                 env=env)
    assert "running `go test -v -count=1 ./sub/...` in %s (go: found go.mod)" % d in err
    assert target[0][0] == "calc-go"
    same_runs(lists, want, ordered=False)
