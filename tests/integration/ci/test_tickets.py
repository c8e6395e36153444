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
