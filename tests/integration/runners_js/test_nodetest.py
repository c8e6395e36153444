"""node:test (Node 20, examples/demo-nodetest) under flakyctl: plain `node
--test` prints TAP into a pipe (the TAP parser reads it, with the ids the
spec reporter gives), --test-reporter=spec (the nodetest parser),
directory mode from the test script, the runs of only the open tests of
--until-settled and a ticket's reproduce command selecting their test by
name; --shuffle refused (Node 20 has no random order)."""
import re

from conftest import FAILS, analyze, by_test, ctl, sh, ticket, until_settled

PAY = "cart > checkout > retries the payment"


def test_nodetest_spec(demo, tmp_path):
    d, e = demo("demo-nodetest", None)
    db = str(tmp_path / "f.db")
    doc, err = until_settled(db, ["--", "node", "--test",
                                  "--test-reporter=spec"], d, e, PAY)
    assert "added" not in err, err
    assert doc["target"] == "demo-nodetest-nodetest"
    assert doc["runs"]["done"] == 12 and doc["runs"]["incomplete"] == 0
    t = by_test(doc)
    # node's 7 tests; its 3 suites are no tests
    assert len(t) == 7, sorted(t)
    assert (t[PAY]["runs"], t[PAY]["failures"]) == (12, FAILS[12])
    assert t["cart > checkout > talks to the legacy API"]["tier"] == "broken"
    assert t["cart > refunds"]["skips"] >= 10
    assert t["top level"]["tier"] == "stable"
    assert t["cart > adds items"]["median_ms_pass"] >= 15

    # a failure named its file: the reproduce command runs that file
    title, cmd = ticket(db, PAY, "demo-nodetest-nodetest")
    assert title.startswith("## %s: " % PAY), title
    assert cmd.endswith("node --test-name-pattern='^retries the payment$' "
                        "--test test/cart.test.js"), cmd
    # node's options go before its files
    out = sh(cmd.replace(" node ", " node --test-reporter=spec "), e)
    ran = re.findall(r"^\s*[✔✖] (.*) \([\d.]+ms\)$", out, re.M)
    assert ran[0] == "retries the payment", out
    assert set(ran[1:]) <= {"checkout", "cart"}, out


def test_nodetest_tap_and_directory(demo, tmp_path):
    d, e = demo("demo-nodetest", None)
    db = str(tmp_path / "f.db")
    doc, err = analyze(db, [d], str(tmp_path), e, runs=2)
    assert ("running `node --test` in %s (nodetest: package.json's test "
            "script runs node --test)" % d) in err, err
    # TAP's ids are the spec reporter's
    assert sorted(by_test(doc)) == sorted([
        "cart > adds items", PAY, "cart > checkout > talks to the legacy API",
        "cart > refunds", "search > finds a word",
        "search > matches (a+b) * c literally", "top level"])
    p = ctl(["--db", db, "analyze", "--runs", "1", "--shuffle", d],
            cwd=str(tmp_path), env=e, check=2)
    assert "--shuffle: nodetest cannot shuffle" in p.stderr, p.stderr
