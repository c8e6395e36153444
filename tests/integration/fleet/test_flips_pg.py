"""Flips on the fleet's server (issue 29 item 6, issue 32): CI jobs that
upload to the server with --server postgresql://... give the same flips
as on a SQLite file. On the server an upload's results reach the results
table only when the run is complete, after the run's own count of flips
had read none: they were never counted there. A break and its fix stays
no flip on either backend."""
import json
import os
import subprocess

from conftest import FLAKYCTL

REV_FLIP = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
REV_BREAK = "4444444444444444444444444444444444444444"
REV_FIX = "5555555555555555555555555555555555555555"


def junit(path, fail_a, fail_b, n):
    cases = []
    for name, failed in (("test_a", fail_a), ("test_b", fail_b)):
        body = '<failure message="boom">boom</failure>' if failed else ""
        cases.append('<testcase classname="t" name="%s" time="0.%03d">%s'
                     '</testcase>' % (name, n, body))
    path.write_text('<?xml version="1.0"?>\n<testsuite name="t" tests="2" '
                    'failures="%d">%s</testsuite>\n' % (
                        fail_a + fail_b, "".join(cases)))
    return str(path)


def load(db, tmp):
    """test_a fails in unit#1 and passes in unit#2 at one revision;
    test_b fails in every job of a revision and passes at the next."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": str(tmp)}
    plan = [(REV_FLIP, "unit", 1, True, False), (REV_FLIP, "unit", 2,
            False, False), (REV_BREAK, "unit", 1, False, True),
            (REV_BREAK, "lint", 1, False, True), (REV_FIX, "unit", 1,
            False, False)]
    for n, (rev, job, attempt, fa, fb) in enumerate(plan):
        f = junit(tmp / ("%d.xml" % n), fa, fb, n)
        p = subprocess.run([FLAKYCTL, "upload", "--server", db, "--target",
                            "t", "--revision", rev, "--job", job,
                            "--attempt", str(attempt), f],
                           capture_output=True, text=True, env=env,
                           timeout=60)
        assert p.returncode == 0, (p.stdout, p.stderr)


def flips(db, cmd, *args):
    p = subprocess.run([FLAKYCTL, "--db", db, "--format", "json", cmd] +
                       list(args), capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_uploads_flip_on_the_server(migrated, tmp_path):
    (tmp_path / "pg").mkdir()
    (tmp_path / "lite").mkdir()
    load(migrated, tmp_path / "pg")
    lite = str(tmp_path / "lite" / "flaky.db")
    load(lite, tmp_path / "lite")
    for db in (migrated, lite):
        rep = {t["test"]: t["flips"] for t in flips(db, "report")["tests"]}
        assert rep == {"t.test_a": 1, "t.test_b": 0}, (db, rep)
        show = flips(db, "show", "test_a")
        f = show["flip_revisions"][0]
        assert (f["revision"], f["failed_job"], f["failed_attempt"],
                f["passed_job"], f["passed_attempt"]) == (
                    REV_FLIP, "unit", 1, "unit", 2), (db, f)
        assert flips(db, "show", "test_b")["flips"] == 0
