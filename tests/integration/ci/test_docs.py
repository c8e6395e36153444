"""docs/ci.md's examples without a server work: every flakyctl line of
its GitHub Actions and GitLab CI jobs that keep the database in a cache,
run in order as the jobs run them, on a JUnit file
like the test step writes, twice (two CI runs: test_retry fails in the
first only, so the second gate finds it critical)."""
import datetime
import os
import re
import subprocess

from conftest import FLAKYCTL, ROOT

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0"
 tests="2" time="0.1" timestamp="%s">
<testcase classname="tests.test_shop" name="test_ok" time="0.01"/>
<testcase classname="tests.test_shop" name="test_retry" time="0.02">%s
</testcase>
</testsuite></testsuites>
"""
FAILURE = """<failure message="assert 502 == 200">tests/test_shop.py:4:
AssertionError</failure>"""


def flakyctl_lines(block):
    """The flakyctl commands of a YAML block, in order."""
    out = []
    for line in block.splitlines():
        m = re.match(r"\s*(?:- |run: )?(flakyctl .*)$", line)
        if m:
            out.append(m.group(1))
    return out


def blocks():
    """The YAML of the jobs that keep the database in a cache (the
    server's recipes are contrib/ci's, run by tests/integration/
    ci_command/test_recipes.py)."""
    text = open(os.path.join(ROOT, "docs", "ci.md")).read()
    text = text[text.index("## Without a server"):]
    return re.findall(r"```yaml\n(.*?)```", text, re.S)


def test_every_example_runs(tmp_path):
    found = [flakyctl_lines(b) for b in blocks()]
    assert len(found) == 2 and all(len(f) >= 3 for f in found), found
    bindir = tmp_path / "bin"
    bindir.mkdir()
    os.symlink(FLAKYCTL, bindir / "flakyctl")
    for i, lines in enumerate(found):
        work = tmp_path / ("job%d" % i)
        work.mkdir()
        env = dict(os.environ, PATH="%s:%s" % (bindir, os.environ["PATH"]),
                   GITHUB_SHA="abc123", CI_COMMIT_SHA="abc123",
                   GITHUB_STEP_SUMMARY=str(work / "summary.md"))
        for run in range(2):
            # an hour ago, whenever the test runs: inside every window
            at = datetime.datetime.now(datetime.timezone.utc) - \
                datetime.timedelta(hours=1, seconds=run)
            (work / "junit.xml").write_text(JUNIT % (
                at.strftime("%Y-%m-%dT%H:%M:%S+00:00"), FAILURE if run == 0
                else ""))
            for cmd in lines:
                p = subprocess.run(["sh", "-c", cmd], cwd=work, env=env,
                                   capture_output=True, text=True,
                                   timeout=60)
                # a gate may find something (1); nothing may be an error
                assert p.returncode in (0, 1), (cmd, p.stdout, p.stderr)
                if " gate " in cmd and run == 1:
                    assert p.returncode == 1 and "1 critical test" in \
                        p.stdout, (cmd, p.stdout)
                elif " gate " in cmd:
                    assert p.returncode == 0, (cmd, p.stdout)
        assert (work / "flaky-junit.xml").stat().st_size > 0
    assert "### flaky gate: failed" in (tmp_path / "job0" /
                                        "summary.md").read_text()
