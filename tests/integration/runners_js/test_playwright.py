"""Playwright Test (1.65.2, examples/demo-playwright) on Debian's chromium
(/usr/bin/chromium through launchOptions.executablePath; no browser
download) against the demo's server (webServer on a free port): the plain
command completed with --reporter=list, its retries recorded as attempts,
directory mode, --shuffle through Playwright's own seed, and a ticket's
reproduce command selecting exactly its test (FILE:LINE, --project,
--grep)."""
import os
import re
import sqlite3

import pytest

from conftest import FAILS, analyze, by_test, sh, ticket

SEP = " \u203a "
PAY = SEP.join(["tests/shop.spec.js:13", "[chromium]", "shop",
                "retries the payment"])
LEGACY = SEP.join(["tests/shop.spec.js:20", "[chromium]", "shop",
                   "talks to the legacy API"])


@pytest.fixture(autouse=True)
def chromium():
    if not os.access("/usr/bin/chromium", os.X_OK):
        pytest.fail("/usr/bin/chromium is missing: scripts/deps.sh installs "
                    "Debian's chromium")


def test_playwright(demo, tmp_path):
    d, e = demo("demo-playwright", "playwright")
    db = str(tmp_path / "f.db")
    # Playwright's own retries; one worker each, two runs at once: two
    # chromiums, not four, on a shared two-CPU machine
    doc, err = analyze(db, ["--", "npx", "playwright", "test",
                            "--retries=1", "--workers=1"], d, e, runs=3)
    assert "added --reporter=list (Playwright's dot, line and html " \
        "reporters name only failing tests)" in err, err
    assert doc["target"] == "demo-playwright-playwright"
    assert doc["runs"]["done"] == 3 and doc["runs"]["incomplete"] == 0
    t = by_test(doc)
    assert len(t) == 6, sorted(t)
    # 3 runs: the first attempts are executions 1, 3, 4 or 1, 2, 4 ...:
    # whichever, 2 of the 3 runs failed first (the retry of execution 1
    # is execution 2 or 3, which pass), and the rate is the first
    # attempts'
    assert t[PAY]["runs"] == 3 and t[PAY]["failures"] in (1, 2)
    assert t[LEGACY]["tier"] == "broken"
    assert "Received: 410" in t[LEGACY]["top_message"]
    # every retry is recorded: the legacy test's two attempts per run
    con = sqlite3.connect(db)
    att = con.execute("SELECT count(*), sum(a.outcome = 0) FROM attempts a "
                      "JOIN results r ON r.run_id = a.run_id AND "
                      "r.position = a.position JOIN tests t ON "
                      "t.id = r.test_id WHERE t.name = ?", (LEGACY,)
                      ).fetchone()
    con.close()
    assert att == (6, 0), att

    title, cmd = ticket(db, "retries the payment",
                        "demo-playwright-playwright")
    assert title.startswith("## shop" + SEP + "retries the payment: "), title
    assert cmd.endswith("npx playwright test tests/shop.spec.js:13 "
                        "--project=chromium --grep='(?:^| )shop retries the "
                        "payment(?: @|$)'"), cmd
    out = sh(cmd + " --reporter=list", e)
    ran = re.findall(r"^  [✓✘-] +\d+ (.*?)(?: \(\d.*\))?$", out, re.M)
    assert ran and all("retries the payment" in r for r in ran), out
    assert re.search(r"^Running 1 test using 1 worker", out, re.M), out


def test_playwright_directory_and_shuffle(demo, tmp_path):
    d, e = demo("demo-playwright", "playwright")
    db = str(tmp_path / "f.db")
    doc, err = analyze(db, ["--shuffle", d], str(tmp_path), e, runs=1,
                       jobs=1)
    assert ("running `node_modules/.bin/playwright test --reporter=list` "
            "in %s (playwright: package.json's test script runs playwright "
            "test" % d) in err, err
    assert len(doc["tests"]) == 6
    con = sqlite3.connect(db)
    seed, pert = con.execute("SELECT seed, perturbation FROM runs").fetchone()
    con.close()
    assert re.fullmatch(r"\d+", seed) and pert == "shuffle", seed
