"""Uploads on a fleet's PostgreSQL server (docs/api.md, "Uploads"): the
same rows as into a file, from `flakyctl upload --server postgresql://`
and from `flakyctl serve --uploads` serving the server's database, once
per upload, and a test that failed and passed on one revision a flip."""
import json
import os
import subprocess

from conftest import FLAKYCTL
from serving import Serve

JUNIT = """<?xml version="1.0"?>
<testsuite name="shop" tests="2">
  <testcase classname="shop" name="test_add" time="0.01"/>
  <testcase classname="shop" name="test_pay" time="0.02">%s</testcase>
</testsuite>
"""


def ctl(*args, env=None, check=0):
    e = dict(os.environ, NO_COLOR="1")
    for k in [k for k in e if k.startswith(("GITHUB_", "CI_", "GITLAB_"))]:
        del e[k]
    e.pop("FLAKY_TOKEN", None)
    e.update(env or {})
    p = subprocess.run([FLAKYCTL] + list(args), capture_output=True,
                       text=True, timeout=120, env=e)
    assert check is None or p.returncode == check, (args, p.stdout,
                                                     p.stderr)
    return p


def junit(tmp_path, name, fail):
    f = tmp_path / name
    f.write_text(JUNIT % ('<failure message="boom">x</failure>' if fail
                          else ""))
    return str(f)


def test_direct_and_served_uploads_on_postgresql(pg, migrated, tmp_path):
    failing = junit(tmp_path, "a.xml", True)
    passing = junit(tmp_path, "b.xml", False)
    job = ["--target", "web", "--revision", "abc123", "--job", "unit",
           "--format", "json"]
    a = json.loads(ctl("upload", "--server", migrated, *job, "--attempt",
                       "1", failing).stdout)
    again = json.loads(ctl("upload", "--server", migrated, *job,
                           "--attempt", "1", failing).stdout)
    assert a["stored"] is True and again["stored"] is False
    assert again["runs"] == a["runs"]
    # the job's next attempt passes, through a server of the same database
    tok = ctl("--db", migrated, "token", "create", "--scope", "upload",
              "--name", "ci").stdout.strip().splitlines()[-1]
    srv = Serve(migrated, tmp_path, args=["--uploads"])
    try:
        b = json.loads(ctl("upload", "--server", srv.url, *job,
                           "--attempt", "2", passing,
                           env={"FLAKY_TOKEN": tok}).stdout)
    finally:
        assert srv.stop() == 0, srv.logtext()
    assert b["stored"] is True and b["runs"] != a["runs"]
    db = migrated.split("///")[1].split("?")[0]
    assert pg.query("SELECT job, attempt, upload_id IS NOT NULL FROM "
                    "run_ci ORDER BY run_id", db=db) == \
        [["unit", "1", "t"], ["unit", "2", "t"]]
    assert pg.query("SELECT count(*) FROM uploads WHERE stored_ms IS NOT "
                    "NULL", db=db) == [["2"]]
    # failed in attempt 1, passed in attempt 2, one revision: a flip
    assert pg.query("SELECT test, revision, fails, passes, failed_job, "
                    "passed_attempt FROM flips", db=db) == \
        [["shop.test_pay", "abc123", "1", "1", "unit", "2"]]
