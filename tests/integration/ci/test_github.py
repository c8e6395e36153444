"""--format github: workflow commands that GitHub parses, escaped as it
documents (actions/toolkit core/src/command.ts), at the test's file and
line, and a Markdown step summary appended to $GITHUB_STEP_SUMMARY."""
import os
import re

from conftest import ODD, ctl

COMMAND = re.compile(r"^::(error|warning|notice)( [^:]*)?::(.*)$")


def unescape(s):
    for a, b in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","),
                 ("%25", "%")):
        s = s.replace(a, b)
    return s


def parse(out):
    """[(level, {property: value}, message)] of the workflow commands, and
    the other lines."""
    cmds, other = [], []
    for line in out.splitlines():
        m = COMMAND.match(line)
        if m is None:
            other.append(line)
            continue
        props = {}
        for kv in (m.group(2) or "").strip().split(","):
            if kv:
                k, v = kv.split("=", 1)
                # an unescaped , or : would have split or ended it
                assert ":" not in v and "\n" not in v, line
                props[k] = unescape(v)
        data = m.group(3)
        assert "\n" not in data and "\r" not in data
        # every % in the data starts an escape
        assert re.fullmatch(r"([^%]|%25|%0A|%0D)*", data), data
        cmds.append((m.group(1), props, unescape(data)))
    return cmds, other


def by_test(cmds):
    return {msg.split(": ", 1)[0]: (level, props, msg)
            for level, props, msg in cmds}


def test_report_annotations(evidence):
    d, db = evidence
    env = dict(os.environ)
    env.pop("GITHUB_STEP_SUMMARY", None)
    p = ctl(["--db", db, "--format", "github", "report"], cwd=d, env=env)
    cmds, other = parse(p.stdout)
    t = by_test(cmds)
    assert set(t) == {"test_shop.py::test_payment_retry",
                      "test_shop.py::test_cache_expiry",
                      "test_shop.py::test_legacy_api", ODD}
    level, props, msg = t["test_shop.py::test_payment_retry"]
    assert level == "error"
    assert props == {"file": "test_shop.py", "line": "4",
                     "title": "Flaky test (critical)"}
    assert msg.startswith("test_shop.py::test_payment_retry: 3 of 10 runs "
                          "failed (30.0%, 95% interval 11%-60%)")
    # the first line of the message, with its % , and :
    assert msg.endswith("(target shop)\n" + (
        "AssertionError: gateway said 502, retry 3: 50% of 2")), msg
    level, props, msg = t["test_shop.py::test_cache_expiry"]
    assert (level, props["line"], props["title"]) == (
        "warning", "8", "Flaky test (warning)")
    level, props, _ = t["test_shop.py::test_legacy_api"]
    assert (level, props["line"]) == ("error", "12")
    assert props["title"] == "Broken test (fails every run)"
    # a file with , and : in its name: escaped in the property
    level, props, _ = t[ODD]
    assert props["file"] == "odd,dir/test_a:b.py" and props["line"] == "4"
    assert "file=odd%2Cdir/test_a%3Ab.py,line=4," in p.stdout
    # issue 28: the skipped test is said apart, not counted as stable
    assert other == ["flaky: 10 runs, 2 critical, 1 warning, 1 broken, "
                     "0 noise, 1 stable, 1 skipped"], other


def test_no_file_where_unknown(evidence, tmp_path):
    """From a directory without the test files: the file from the id,
    no line."""
    d, db = evidence
    p = ctl(["--db", db, "--format", "github", "report"], cwd=tmp_path)
    cmds, _ = parse(p.stdout)
    _, props, _ = by_test(cmds)["test_shop.py::test_payment_retry"]
    assert props == {"file": "test_shop.py", "title": "Flaky test (critical)"}


def test_step_summary(evidence, tmp_path):
    d, db = evidence
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    env = dict(os.environ, GITHUB_STEP_SUMMARY=str(summary))
    ctl(["--db", db, "--format", "github", "report"], cwd=d, env=env)
    md = summary.read_text()
    assert md.startswith("earlier step\n### flaky: 10 runs, "), md
    assert "| tier | test | target | failed | |\n|---|---|---|---|---|\n" in md
    assert ("| critical | test_shop.py::test_payment_retry | shop | 3 of 10 "
            "runs failed (30.0%, 95% interval 11%-60%) |  |") in md
    assert "| broken | test_shop.py::test_legacy_api | shop |" in md
    # a | or < in an id would break the table or open a tag
    assert "test_names[x&y\\<z>\"q%]" in md
    assert md.endswith("4 tests above noise, 0 noise (under 5%), 1 "
                       "stable, 1 skipped in every run.\n\n")


def test_gate(evidence, tmp_path):
    d, db = evidence
    summary = tmp_path / "summary.md"
    env = dict(os.environ, GITHUB_STEP_SUMMARY=str(summary))
    p = ctl(["--db", db, "--format", "github", "gate", "--max-critical", "0",
             "--max-broken", "1"], check=1, cwd=d, env=env)
    cmds, other = parse(p.stdout)
    assert other == []
    assert cmds[0][0] == "error" and cmds[0][1] == {
        "title": "flaky gate: critical"}
    assert cmds[0][2].startswith("gate: 2 critical tests, at most 0 "
                                 "allowed: ")
    files = sorted(c[1].get("file") for c in cmds[1:])
    assert files == ["odd,dir/test_a:b.py", "test_shop.py"]
    md = summary.read_text()
    assert md.startswith("### flaky gate: failed\n\n- gate: 2 critical "
                         "tests, at most 0 allowed: "), md
    p = ctl(["--db", db, "--format", "github", "gate", "--max-critical",
             "2", "--max-broken", "1"], cwd=d, env=env)
    assert p.stdout == "gate: ok (6 tests in the window)\n"
    assert "### flaky gate: passed\n\n| tier |" in summary.read_text()


def test_format_refused_where_absent(evidence):
    _, db = evidence
    p = ctl(["--db", db, "--format", "github", "trend", "x"], check=2)
    assert "--format github is not available here" in p.stderr
    p = ctl(["--db", db, "--format", "junit", "gate", "--max-critical", "0"],
            check=2)
    assert "--format junit is not available here" in p.stderr
    p = ctl(["--db", db, "--format", "gitlab", "report"], check=2)
    assert "github or junit" in p.stderr


def test_analyze(tmp_path):
    """analyze --format github on a suite of its own: the broken test at
    its definition, the summary appended."""
    (tmp_path / "test_two.py").write_text(
        "def test_ok():\n    pass\n\n\ndef test_bad():\n"
        "    assert 1 == 2, 'one: is, not % two'\n")
    summary = tmp_path / "summary.md"
    env = dict(os.environ, GITHUB_STEP_SUMMARY=str(summary))
    env.pop("PYTEST_ADDOPTS", None)
    p = ctl(["--db", str(tmp_path / "a.db"), "--format", "github", "analyze",
             "--runs", "2", "--target", "two", "--", "/usr/bin/python3", "-m",
             "pytest", "-p", "no:cacheprovider", "-p", "no:random_order"],
            cwd=tmp_path, env=env)
    cmds, other = parse(p.stdout)
    assert len(cmds) == 1, p.stdout
    level, props, msg = cmds[0]
    assert (level, props) == ("error", {
        "file": "test_two.py", "line": "5",
        "title": "Broken test (fails every run)"})
    assert msg.startswith("test_two.py::test_bad: 2 of 2 runs failed")
    assert "one: is, not % two" in msg
    assert other == ["flaky: 2 runs, 0 critical, 0 warning, 1 broken, "
                     "0 noise, 1 stable"]
    assert summary.read_text().startswith("### flaky: 2 runs of `")
