"""Mocha (11.7.6, examples/demo-mocha) under flakyctl: the plain command
completed, full titles as ids, directory mode from the test script, the
runs of only the open tests of --until-settled and a ticket's reproduce
command selecting exactly their test with --grep; --shuffle refused (Mocha
has no random order)."""
import re

from conftest import FAILS, analyze, by_test, ctl, sh, ticket, until_settled

PAY = "cart checkout retries the payment"


def test_mocha(demo, tmp_path):
    d, e = demo("demo-mocha", "mocha")
    db = str(tmp_path / "f.db")
    doc, err = until_settled(db, ["--", "npx", "mocha"], d, e, PAY)
    assert "added --reporter=spec" in err, err
    assert doc["target"] == "demo-mocha-mocha"
    assert doc["runs"]["done"] == 12 and doc["runs"]["incomplete"] == 0
    t = by_test(doc)
    assert len(t) == 7, sorted(t)
    assert (t[PAY]["runs"], t[PAY]["failures"]) == (12, FAILS[12])
    legacy = t["cart checkout talks to the legacy API"]
    assert legacy["tier"] == "broken"
    assert "strictly deep-equal" in legacy["top_message"]
    assert t["cart refunds"]["skips"] >= 10
    assert t["top level"]["tier"] == "stable"
    # Mocha prints a duration past half its "slow" (75 ms): adds items
    # waits 45 ms
    assert t["cart adds items"]["median_ms_pass"] >= 40

    title, cmd = ticket(db, PAY, "demo-mocha-mocha")
    assert cmd.endswith("npx mocha --reporter=spec --grep='^cart checkout "
                        "retries the payment$'"), cmd
    out = sh(cmd, e)
    ran = re.findall(r"^\s+(?:✔|\d+\)) (.*)$", out, re.M)
    assert ran == ["retries the payment"], out


def test_mocha_directory_and_shuffle(demo, tmp_path):
    d, e = demo("demo-mocha", "mocha")
    db = str(tmp_path / "f.db")
    doc, err = analyze(db, [d], str(tmp_path), e, runs=1, jobs=1)
    assert ("running `node_modules/.bin/mocha --reporter=spec` in %s "
            "(mocha: package.json's test script runs mocha; added "
            "--reporter=spec" % d) in err, err
    assert len(doc["tests"]) == 7
    p = ctl(["--db", db, "analyze", "--runs", "1", "--shuffle", d],
            cwd=str(tmp_path), env=e, check=2)
    assert "--shuffle: mocha cannot shuffle its tests' order" in p.stderr
