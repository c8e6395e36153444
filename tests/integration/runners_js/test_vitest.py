"""Vitest (3.2.7, examples/demo-vitest) under flakyctl: the plain command
completed, every test's outcome and duration, directory mode, --shuffle
through Vitest's own seed, and the runs of only the open tests of
--until-settled and a ticket's reproduce command, each selecting exactly
its test."""
import re

from conftest import (FAILS, analyze, by_test, run_seed, sh, ticket,
                      until_settled)

C = "test/cart.test.js > cart > "
PAY = C + "checkout > retries the payment"
LEGACY = C + "checkout > talks to the legacy API"


def test_vitest(demo, tmp_path):
    d, e = demo("demo-vitest", "vitest")
    db = str(tmp_path / "f.db")
    doc, err = until_settled(db, ["--", "npx", "vitest"], d, e, PAY)
    assert "added --reporter=verbose (without it Vitest names only the " \
        "tests of failing files)" in err, err
    assert doc["target"] == "demo-vitest-vitest"
    assert doc["runs"]["done"] == 12 and doc["runs"]["incomplete"] == 0
    t = by_test(doc)
    assert len(t) == 7, sorted(t)
    # 12 executions of the flaky test, 3 of them failing
    assert (t[PAY]["runs"], t[PAY]["failures"]) == (12, FAILS[12])
    assert t[LEGACY]["tier"] == "broken"
    assert "to deeply equal" in t[LEGACY]["top_message"]
    assert t[C + "refunds"]["skips"] >= 10
    assert t[C + "adds items"]["tier"] == "stable"
    assert t[C + "adds items"]["median_ms_pass"] >= 20
    assert t["test/search.test.js > search > matches (a+b) * c literally"][
        "tier"] == "stable"

    # the ticket's command runs that test alone
    title, cmd = ticket(db, "retries the payment", "demo-vitest-vitest")
    assert title.startswith("## cart > checkout > retries the payment: "), \
        title
    assert cmd.endswith("npx vitest run test/cart.test.js -t '^cart checkout "
                        "retries the payment$'"), cmd
    out = sh(cmd, e)
    m = re.search(r"^\s+Tests\s+(.*) \((\d+)\)$", out, re.M)
    assert m, out
    counts = {w: int(n) for n, w in re.findall(r"(\d+) (\w+)", m.group(1))}
    assert counts.get("passed", 0) + counts.get("failed", 0) == 1, out



def test_vitest_directory_and_shuffle(demo, tmp_path):
    d, e = demo("demo-vitest", "vitest")
    db = str(tmp_path / "f.db")
    doc, err = analyze(db, ["--shuffle", d], str(tmp_path), e, runs=1,
                       jobs=1)
    assert ("running `node_modules/.bin/vitest run --reporter=verbose` in "
            "%s (vitest: package.json's test script runs vitest; added "
            "--reporter=verbose" % d) in err, err
    assert doc["runs"]["done"] == 1 and len(doc["tests"]) == 7
    seed, perturbation = run_seed(db)
    assert re.fullmatch(r"\d+", seed) and perturbation == "shuffle", seed
