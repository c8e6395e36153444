"""cargo test, GoogleTest (ctest and the binary), RSpec and PHPUnit under
flakyctl, with the real runners on the seeded demos (examples/demo-*):
directory mode finds each runner, completion makes a plain command print
every test, each demo's flaky test fails on the first of two runs and
passes on the second (its counter file), the broken one fails both, a
ticket's reproduce command and init's isolate: template run just their
test, and --until-settled reruns only the open tests through the
runner's own selection."""
import os
import re
import subprocess

from conftest import PATH, ctl, env, need, outcomes

PASS, FAIL, SKIP = 0, 1, 3


def analyze(db, args, cwd=None, extra=None):
    p = ctl(["--db", db, "analyze"] + args, cwd=cwd, extra=extra)
    assert p.returncode in (0, 1), (p.returncode, p.stdout, p.stderr)
    return p


def reproduce(db, test, target, cwd):
    """Run the ticket's reproduce command; its output."""
    md = ctl(["--db", db, "ticket", test, "--target", target]).stdout
    m = re.search(r"### Reproduce\n\n```sh\n(.*?)\n```", md, re.S)
    assert m, md
    cmd = m.group(1)
    p = subprocess.run(["sh", "-c", cmd], cwd=cwd, env=env(),
                       capture_output=True, text=True, timeout=300)
    return cmd, p.stdout + p.stderr


def test_cargo(demo, tmp_path):
    need("cargo")
    d = demo("demo-cargo")
    db = str(tmp_path / "f.db")
    p = analyze(db, ["--runs", "2", d], cwd=str(tmp_path))
    assert ("running `cargo test --no-fail-fast` in %s (cargo: found "
            "Cargo.toml)" % d) in p.stderr
    got, runs, targets = outcomes(db)
    assert targets == ["demo-cargo-cargo"]
    assert runs == [("cargo", None)] * 2
    assert got["cart::tests::retries_payment"] == [FAIL, PASS]
    assert got["cart::tests::talks_to_legacy_api"] == [FAIL, FAIL]
    assert got["cart::tests::adds_items"] == [PASS, PASS]
    assert got["cart::tests::refunds"] == [SKIP, SKIP]
    assert got["words::finds_a_word"] == [PASS, PASS]
    assert got["src/lib.rs - cart::total (line 28)"] == [PASS, PASS]
    assert len(got) == 8
    # plain: completed, same target (run 3 fails the flaky test)
    p = analyze(db, ["--runs", "1", "--", "cargo", "test"], cwd=d)
    assert "added --no-fail-fast (without it cargo stops" in p.stderr
    got, runs, targets = outcomes(db)
    assert targets == ["demo-cargo-cargo"] and runs[2] == ("cargo", None)
    assert got["cart::tests::retries_payment"] == [FAIL, PASS, FAIL]
    # run 4: just that test, which passes
    cmd, out = reproduce(db, "cart::tests::retries_payment",
                         "demo-cargo-cargo", d)
    assert cmd.endswith("cargo test -- --exact cart::tests::retries_payment")
    assert "test cart::tests::retries_payment ... ok" in out, out
    assert len(re.findall(r"^test .* \.\.\. ", out, re.M)) == 1, out
    # flakyctl init's isolate: (confirm's one test alone)
    out = isolate(d, tmp_path, "words::finds_a_word")
    assert "test words::finds_a_word ... ok" in out, out
    assert len(re.findall(r"^test .* \.\.\. ", out, re.M)) == 1, out


def build_gtest(d):
    subprocess.run(["cmake", "-S", d, "-B", os.path.join(d, "build")],
                   check=True, capture_output=True, env=env(), timeout=300)
    subprocess.run(["cmake", "--build", os.path.join(d, "build")],
                   check=True, capture_output=True, env=env(), timeout=600)


def test_gtest(demo, tmp_path):
    need("cmake", "ctest", "g++")
    d = demo("demo-gtest")
    build_gtest(d)
    db = str(tmp_path / "f.db")
    p = analyze(db, ["--runs", "2", d], cwd=str(tmp_path))
    assert "running `ctest --test-dir build --output-on-failure` in" in p.stderr
    got, runs, targets = outcomes(db)
    assert targets == ["demo-gtest-gtest"]
    assert runs == [("gtest", None)] * 2
    # ctest's names (gtest_discover_tests)
    assert got["Cart.RetriesPayment"] == [FAIL, PASS]
    assert got["Cart.TalksToLegacyApi"] == [FAIL, FAIL]
    assert got["Cart.Refunds"] == [SKIP, SKIP]
    assert got["Amounts.StartAtZero<int>"] == [PASS, PASS]
    # run 3: just that test, which fails
    cmd, out = reproduce(db, "Cart.RetriesPayment", "demo-gtest-gtest", d)
    assert "-R '^Cart\\.RetriesPayment$'" in cmd, cmd
    assert "0% tests passed, 1 tests failed out of 1" in out, out
    assert "payment gateway timed out (run 3)" in out, out
    out = isolate(d, tmp_path, "Amounts.StartAtZero<int>")
    assert "100% tests passed, 0 tests failed out of 1" in out, out

    # The binary itself, shuffled with a seed: GoogleTest's own ids.
    b = os.path.join(d, "build")
    db2 = str(tmp_path / "g.db")
    p = analyze(db2, ["--runs", "1", "--shuffle", "--target", "bin", "--",
                      "./shop_test", "--gtest_color=no"], cwd=b)
    got, runs, _ = outcomes(db2)
    assert runs == [("gtest", None)]
    assert got["Small/Prices.ArePositive/1"] == [PASS]
    assert got["Amounts/1.StartAtZero"] == [PASS]
    assert got["Cart.RetriesPayment"] == [PASS]    # run 4 of the counter
    cmd, out = reproduce(db2, "Cart.TalksToLegacyApi", "bin", b)
    assert cmd.endswith("./shop_test --gtest_filter=Cart.TalksToLegacyApi")
    assert "[==========] 1 test from 1 test suite ran." in out, out

    # --until-settled: after 10 runs, ctest -R reruns the open test only
    os.unlink(os.path.join(b, ".demo-runs"))
    db3 = str(tmp_path / "s.db")
    p = analyze(db3, ["--until-settled", "--max-runs", "12", d],
                cwd=str(tmp_path))
    assert "12 runs, 2 of only some tests" in p.stdout, p.stdout
    assert selected(db3) == [(11, "Cart.RetriesPayment", FAIL),
                             (12, "Cart.RetriesPayment", PASS)]


def test_rspec(demo, tmp_path):
    need("rspec")
    d = demo("demo-rspec")
    db = str(tmp_path / "f.db")
    p = analyze(db, ["--runs", "2", d], cwd=str(tmp_path))
    assert ("running `rspec --format documentation` in %s (rspec: found "
            ".rspec)" % d) in p.stderr
    got, runs, targets = outcomes(db)
    assert targets == ["demo-rspec-rspec"]
    assert runs == [("rspec", None)] * 2
    assert got["Cart checkout retries the payment"] == [FAIL, PASS]
    assert got["Cart checkout talks to the legacy API"] == [FAIL, FAIL]
    assert got["Cart checkout refunds"] == [SKIP, SKIP]
    assert got["search finds a word"] == [PASS, PASS]
    assert len(got) == 9
    p = analyze(db, ["--runs", "1", "--shuffle", "--", "rspec"], cwd=d)
    assert "added --format documentation" in p.stderr
    con_runs = outcomes(db)[1]
    assert con_runs[2] == ("rspec", None)
    cmd, out = reproduce(db, "Cart checkout talks to the legacy API",
                         "demo-rspec-rspec", d)
    assert "-e 'Cart checkout talks to the legacy API'" in cmd, cmd
    assert "1 example, 1 failure" in out, out


def test_phpunit(demo, tmp_path):
    need("phpunit")
    d = demo("demo-phpunit")
    db = str(tmp_path / "f.db")
    p = analyze(db, ["--runs", "2", d], cwd=str(tmp_path))
    assert ("running `phpunit --debug -v` in %s (phpunit: found "
            "phpunit.xml)" % d) in p.stderr
    got, runs, targets = outcomes(db)
    assert targets == ["demo-phpunit-phpunit"]
    assert runs == [("phpunit", None)] * 2
    c = "Demo\\Tests\\CartTest::"
    assert got[c + "testRetriesPayment"] == [FAIL, PASS]
    assert got[c + "testTalksToLegacyApi"] == [FAIL, FAIL]
    assert got[c + "testRefunds"] == [SKIP, SKIP]
    assert got[c + 'testCounts with data set "one item"'] == [PASS, PASS]
    assert got[c + "testPrices with data set #1"] == [PASS, PASS]
    assert len(got) == 9
    p = analyze(db, ["--runs", "1", "--", "phpunit", "--testdox"], cwd=d)
    assert "added --debug -v" in p.stderr
    assert outcomes(db)[1][2] == ("phpunit", None)
    cmd, out = reproduce(db, c + 'testCounts with data set "one item"',
                         "demo-phpunit-phpunit", d)
    assert "--filter '/^Demo" in cmd, cmd
    assert "OK (1 test, 1 assertion)" in out, out


def isolate(d, tmp_path, test_id):
    """flakyctl init's isolate: template for directory d, run as confirm
    runs it ({test} outside quotes is "$FLAKY_TEST"); its output."""
    import yaml
    out = str(tmp_path / (os.path.basename(d) + ".yaml"))
    p = ctl(["init", "--force", "--output", out, d])
    assert p.returncode == 0, p.stderr
    t = yaml.safe_load(open(out))["targets"][0]
    cmd = t["isolate"].replace("{test}", '"$FLAKY_TEST"')
    p = subprocess.run(["/bin/sh", "-c", cmd], cwd=t["dir"],
                       env=env({"FLAKY_TEST": test_id}),
                       capture_output=True, text=True, timeout=300)
    return p.stdout + p.stderr


def test_init_isolate(demo, tmp_path):
    """confirm's one test alone, per runner, from flakyctl init: an id
    with blanks, quotes and regular expression characters stays one."""
    need("rspec", "phpunit")
    out = isolate(demo("demo-rspec"), tmp_path, "Cart counts 1 item")
    assert "1 example, 0 failures" in out, out
    php = demo("demo-phpunit")
    out = isolate(php, tmp_path,
                  'Demo\\Tests\\CartTest::testCounts with data set '
                  '"one item"')
    assert "OK (1 test, 1 assertion)" in out, out
    out = isolate(php, tmp_path,
                  "Demo\\Tests\\CartTest::testPrices with data set #1")
    assert "OK (1 test, 1 assertion)" in out, out


def selected(db):
    """(run, test, outcome) of the runs of only some tests."""
    import sqlite3
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT r.id, t.name, x.outcome FROM runs r JOIN results x ON "
        "x.run_id = r.id JOIN tests t ON t.id = x.test_id WHERE "
        "r.selected = 1 AND r.incomplete IS NULL ORDER BY r.id").fetchall()
    con.close()
    return rows


def test_until_settled_selects(demo, tmp_path):
    """After its first 10 runs, analyze --until-settled reruns only the
    tests still open, through the runner's own selection (rspec -e,
    phpunit --filter): one result per run, the flaky test's."""
    need("rspec", "phpunit")
    for name, test in (("demo-rspec", "Cart checkout retries the payment"),
                       ("demo-phpunit",
                        "Demo\\Tests\\CartTest::testRetriesPayment")):
        d = demo(name)
        db = str(tmp_path / (name + ".db"))
        p = analyze(db, ["--until-settled", "--max-runs", "12", d],
                    cwd=str(tmp_path))
        assert "12 runs, 2 of only some tests" in p.stdout, p.stdout
        # runs 11 and 12 of the counter: fail, then pass
        assert selected(db) == [(11, test, FAIL), (12, test, PASS)]
