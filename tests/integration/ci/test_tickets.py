"""Tickets and exports per runner: the reproduce command of a ticket runs
just its test when run (pytest, unittest, Jest and go on the demo suites
and fixtures), and quarantine export refuses ids of another runner."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import EXAMPLES, ROOT, ctl

JEST = os.path.join(EXAMPLES, "demo-jest")
PAYMENT = "__tests__/cart.test.js › cart › checkout › retries the payment"
GO_SUITE = os.path.join(ROOT, "tests", "fixtures", "gotest", "suite")


def env():
    e = dict(os.environ)
    e.pop("PYTEST_ADDOPTS", None)
    return e


@pytest.fixture(scope="module")
def demos(tmp_path_factory):
    """One run of each demo suite: the tests are what a ticket needs."""
    db = str(tmp_path_factory.mktemp("demos") / "flaky.db")
    ctl(["--db", db, "analyze", "--runs", "1", "--target", "py",
         os.path.join(EXAMPLES, "demo-pytest")], check=None, env=env())
    ctl(["--db", db, "analyze", "--runs", "1", "--target", "ut", "--",
         "/usr/bin/python3", "-m", "unittest"], check=None,
        cwd=os.path.join(EXAMPLES, "demo-unittest"))
    if os.path.exists(os.path.join(JEST, "node_modules", ".bin", "jest")):
        ctl(["--db", db, "analyze", "--runs", "1", "--target", "js", JEST],
            check=None, timeout=300)
    if shutil.which("go"):
        ctl(["--db", db, "analyze", "--runs", "1", "--target", "go", "--",
             "go", "test", "./..."], check=None, cwd=GO_SUITE, timeout=300)
    return db


def ticket(db, test, target):
    """The ticket's title and its reproduce command."""
    md = ctl(["--db", db, "ticket", test, "--target", target]).stdout
    title = md.splitlines()[0]
    m = re.search(r"### Reproduce\n\n```sh\n(.*?)\n```", md, re.S)
    assert m, md
    return title, m.group(1)


def run(cmd, timeout=300):
    p = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True,
                       timeout=timeout, env=env())
    return p.stdout + p.stderr


def test_pytest(demos):
    title, cmd = ticket(demos, "test_payment_retry", "py")
    assert title.startswith("## test_payment_retry: "), title
    assert cmd.endswith(" && pytest 'test_shop.py::test_payment_retry'"), cmd
    out = run(cmd)
    assert re.search(r"^collected 1 item$|collected 1 item\b", out, re.M), out
    assert re.search(r"=+ 1 (passed|failed) in ", out), out
    # a parameter with non-ASCII characters, as pytest escapes it
    _, cmd = ticket(demos, "test_names[\\xfc", "py")
    assert re.search(r"=+ 1 passed in ", run(cmd)), cmd


def test_unittest(demos):
    title, cmd = ticket(demos, "test_sync", "ut")
    assert title.startswith("## InventoryTest.test_sync: "), title
    assert cmd.endswith("/usr/bin/python3 -m unittest "
                        "'test_inventory.InventoryTest.test_sync'"), cmd
    assert "\nRan 1 test in " in run(cmd)


def test_jest(demos):
    if not os.path.exists(os.path.join(JEST, "node_modules", ".bin", "jest")):
        pytest.skip("examples/demo-jest has no node_modules (scripts/deps.sh)")
    title, cmd = ticket(demos, "retries the payment", "js")
    assert title.startswith("## cart › checkout › retries the payment: "), \
        title
    assert cmd.endswith("node_modules/.bin/jest __tests__/cart.test.js -t "
                        "'^cart checkout retries the payment$'"), cmd
    out = run(cmd)
    m = re.search(r"^Tests:\s+(.*) total$", out, re.M)
    assert m, out
    counts = {w: int(n) for n, w in re.findall(r"(\d+) (\w+)", m.group(1))}
    assert counts.get("passed", 0) + counts.get("failed", 0) == 1, out


def test_go(demos):
    if not shutil.which("go"):
        pytest.skip("no go")
    title, cmd = ticket(demos, "TestTable/one", "go")
    assert title.startswith("## TestTable/one: broken, "), title
    assert cmd.endswith("go test -count=1 -run '^TestTable$/^one$' ./calc")
    ran = re.findall(r"^\s*=== RUN\s+(\S+)", run(cmd + " -v"), re.M)
    assert ran == ["TestTable", "TestTable/one"], ran


def test_no_empty_sections(demos):
    """unittest prints no durations: no timing table of 0 | ? | ?."""
    md = ctl(["--db", demos, "ticket", "test_reindex", "--target",
              "ut"]).stdout
    assert "### Timing" not in md and "| ? |" not in md, md
    assert "### Failure modes (1)" in md


def test_quarantine_export_per_runner(demos, tmp_path):
    db = str(tmp_path / "q.db")
    shutil.copy(demos, db)
    ctl(["--db", db, "quarantine", "add", "test_shop.py::test_payment_retry",
         "--reason", "r"])
    if os.path.exists(os.path.join(JEST, "node_modules", ".bin", "jest")):
        ctl(["--db", db, "quarantine", "add", PAYMENT, "--reason", "r"])
    p = ctl(["--db", db, "quarantine", "export", "--format", "jest"],
            check=2)
    assert p.stdout == ""
    assert p.stderr == (
        "flakyctl quarantine: export --format jest: expected jest tests, "
        "but 'test_shop.py::test_payment_retry' (target py) is pytest's; "
        "give --target NAME of a jest target\n"), p.stderr
    p = ctl(["--db", db, "quarantine", "export", "--format", "go"], check=2)
    assert "'test_shop.py::test_payment_retry' (target py)" in p.stderr
    p = ctl(["--db", db, "quarantine", "export", "--format", "pytest",
             "--target", "py"])
    assert p.stdout == "--deselect 'test_shop.py::test_payment_retry'\n"
    out = run("cd %s && pytest %s" % (os.path.join(EXAMPLES, "demo-pytest"),
                                      p.stdout.strip()))
    assert "1 deselected" in out, out
    if not os.path.exists(os.path.join(JEST, "node_modules", ".bin", "jest")):
        return
    p = ctl(["--db", db, "quarantine", "export", "--format", "jest",
             "--target", "js"])
    assert p.stdout == ("--testNamePattern='^(?!(?:cart checkout retries "
                        "the payment)$)'\n")
    out = run("cd %s && node_modules/.bin/jest --verbose %s "
              "__tests__/cart.test.js" % (JEST, p.stdout.strip()))
    assert re.search(r"○ skipped retries the payment", out), out
    assert re.search(r"✓ adds items", out), out


PROJECTS = os.path.join(ROOT, "tests", "fixtures", "projects")


def failing_run(tmp_path, name, env_var, args):
    """A copy of a fixture project, and a database with one run of it in
    which the test env_var breaks fails."""
    d = str(tmp_path / name)
    shutil.copytree(os.path.join(PROJECTS, name), d)
    db = str(tmp_path / "t.db")
    e = env()
    e[env_var] = "1"
    ctl(["--db", db, "analyze", "--runs", "1", "--target", name] + args,
        check=None, cwd=d, env=e)
    return d, db


def test_doctest(tmp_path):
    """A doctest that load_tests added: `python3 -m unittest ID` cannot run
    it (TypeError); the reproduce command runs it alone."""
    d, db = failing_run(tmp_path, "doctests", "CALC_BROKEN",
                        ["--", "/usr/bin/python3", "-m", "unittest",
                         "discover", "-s", "tests", "-t", "."])
    title, cmd = ticket(db, "calc.checked", "doctests")
    assert title.startswith("## calc.checked: broken, "), title
    assert "--flaky-ids 'calc.checked'" in cmd, cmd
    out = run("export CALC_BROKEN=1; " + cmd)
    assert "\nRan 1 test in " in out and "FAILED (failures=1)" in out, out
    out = run(cmd)
    assert "\nRan 1 test in " in out and "\nOK" in out, out
    # a test method keeps the plain form
    _, cmd = ticket(db, "test_add", "doctests")
    assert cmd.endswith("-m unittest 'tests.test_calc.CalcTest.test_add'"), cmd


def test_doctest_file_and_failed_import(tmp_path):
    """A doctest file (DocFileSuite) is its id(), bad_txt, and a module
    that fails to import is unittest's _FailedTest: neither can be named
    to `python3 -m unittest`; the reproduce command runs each alone."""
    d = str(tmp_path / "docfiles")
    shutil.copytree(os.path.join(PROJECTS, "docfiles"), d)
    with open(os.path.join(d, "test_gone.py"), "w") as f:
        f.write("import no_such_module_flaky_gone\n")
    db = str(tmp_path / "t.db")
    ctl(["--db", db, "analyze", "--runs", "1", "--target", "docfiles", "--",
         "/usr/bin/python3", "-m", "unittest", "discover", "-s", "."],
        check=None, cwd=d)
    title, cmd = ticket(db, "bad_txt", "docfiles")
    assert title.startswith("## bad_txt: broken, "), title
    assert "--flaky-ids 'bad_txt'" in cmd, cmd
    out = run(cmd)
    assert "\nRan 1 test in " in out and "FAILED (failures=1)" in out, out
    assert "Doctest: bad.txt ... FAIL" in out, out
    gone = "unittest.loader._FailedTest.test_gone"
    title, cmd = ticket(db, gone, "docfiles")
    assert "--flaky-ids '%s'" % gone in cmd, cmd
    out = run(cmd)
    assert "\nRan 1 test in " in out and "FAILED (errors=1)" in out, out
    assert "No module named 'no_such_module_flaky_gone'" in out, out


def test_prove(tmp_path):
    """prove runs files: the reproduce command runs the test's file with
    the command's options, and says that the file's other tests run too."""
    d, db = failing_run(tmp_path, "prove", "FLAKY_PROVE_FAIL",
                        ["--", "prove", "-l", "t"])
    title, cmd = ticket(db, "t/mul.t > fails on demand", "prove")
    assert title.startswith("## t/mul.t > fails on demand: broken"), title
    first, note = cmd.split("\n")
    assert first == "cd %s && prove -v -l t/mul.t" % d, cmd
    assert note == "# prove runs files: the other tests of t/mul.t run too"
    out = run("export FLAKY_PROVE_FAIL=1; " + cmd)
    assert "Files=1, Tests=3" in out and "Failed 1/3" in out, out


def test_jest_same_name(tmp_path):
    """A second test of one title (" #2"): Jest selects by name, so the
    reproduce command runs both, and says so."""
    if not os.path.exists(os.path.join(JEST, "node_modules", ".bin", "jest")):
        pytest.skip("examples/demo-jest has no node_modules (scripts/deps.sh)")
    d = tmp_path / "dup"
    shutil.copytree(os.path.join(ROOT, "tests", "fixtures", "jest", "suite",
                                 "small"), d / "small")
    (d / "package.json").write_text('{"devDependencies": {"jest": "29.7.0"}}')
    os.symlink(os.path.join(JEST, "node_modules"), d / "node_modules")
    db = str(tmp_path / "t.db")
    ctl(["--db", db, "analyze", "--runs", "1", "--target", "dup",
         "--no-runner-cache", str(d)], check=None, timeout=300)
    _, cmd = ticket(db, "small/tests/fail.test.js › same title #2", "dup")
    assert cmd.endswith("\n# Jest selects tests by name: this also runs the "
                        "other test of this name in the file (flaky numbers "
                        "them in run order; this is #2)"), cmd
    out = run(cmd)
    # both ran; the file's other tests were skipped by the name pattern
    assert re.search(r"^Tests:\s+1 failed, \d+ skipped, 1 passed, \d+ total$",
                     out, re.M), out


def test_ingested_has_no_command(tmp_path):
    """Results ingested from JUnit XML come with no command: the ticket
    says so as a shell comment (it showed a bare "(the command)")."""
    db = str(tmp_path / "i.db")
    xml = tmp_path / "r.xml"
    xml.write_text('<testsuite name="s" tests="1"><testcase classname="s" '
                   'name="b"><failure message="x">y</failure></testcase>'
                   '</testsuite>')
    ctl(["--db", db, "ingest", "--target", "up", str(xml)])
    _, cmd = ticket(db, "s.b", "up")
    assert cmd.startswith("# no command is known: these results were "
                          "ingested or uploaded"), cmd
    assert run(cmd) == ""
