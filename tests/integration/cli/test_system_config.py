"""flakyctl and the system's config, /etc/flaky/flaky.yaml (the installed
flakyd's, naming its database; here a decoy that FLAKYCTL_SYSTEM_CONFIG
names). A command that writes evidence never takes that database unless
it is given (--config, $FLAKY_CONFIG): ad-hoc runs stay out of the
schedule's evidence. A command that only reads takes it, unless the
directory has its own flaky.db (docs/cli.md; issue 28, item 21)."""
import hashlib
import json
import os
import subprocess

import pytest

from conftest import FLAKYCTL

TAP = ["--", "/bin/sh", "-c", "echo 'ok 1 - a'; echo 1..1"]
TAP_FAIL = ["--", "/bin/sh", "-c", "echo 'not ok 1 - a'; echo 1..1"]
JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="t" tests="1"><testcase classname="t" name="a" time="0.01"/>
</testsuite>
"""


def ctl(args, cwd, system=None, **env):
    """flakyctl with the decoy as the system's config (when given)."""
    e = dict(os.environ, NO_COLOR="1", **env)
    if system is not None:
        e["FLAKYCTL_SYSTEM_CONFIG"] = str(system)
    return subprocess.run([FLAKYCTL] + args, cwd=cwd, env=e, timeout=60,
                          capture_output=True, text=True)


def runs(db):
    """The number of runs in db, read with --db."""
    p = ctl(["--db", str(db), "--format", "json", "report", "--since", "all"],
            cwd="/")
    assert p.returncode == 0, p
    return json.loads(p.stdout)["runs"]["total"]


def digest(db):
    """The database's bytes and its WAL's: changed by any write."""
    h = hashlib.sha256(db.read_bytes())
    wal = db.parent / (db.name + "-wal")
    if wal.exists():
        h.update(wal.read_bytes())
    return h.hexdigest()


@pytest.fixture
def system(tmp_path):
    """(config, database, work dir): the decoy system config names a
    database where test a of target sys passed once, failed once and is
    quarantined; work is a directory with a JUnit file."""
    etc = tmp_path / "etc"
    etc.mkdir()
    db = etc / "system.db"
    cfg = etc / "flaky.yaml"
    cfg.write_text("database: %s\n" % db)
    for tap in (TAP, TAP_FAIL):
        p = ctl(["--db", str(db), "analyze", "--runs", "1", "--target",
                 "sys"] + tap, cwd=tmp_path)
        assert p.returncode == 0, p
    p = ctl(["--db", str(db), "quarantine", "add", "a", "--reason", "r",
             "--target", "sys"], cwd=tmp_path)
    assert p.returncode == 0, p
    work = tmp_path / "work"
    work.mkdir()
    (work / "r.xml").write_text(JUNIT)
    return cfg, db, work


def test_tests_never_read_the_machines():
    """tests/conftest.py points every suite away from /etc/flaky."""
    path = os.environ["FLAKYCTL_SYSTEM_CONFIG"]
    assert not os.path.exists(path)
    assert not path.startswith("/etc/")


def test_the_default_is_etc_flaky():
    """The variable is the tests' alone: the built default stays."""
    build = os.path.dirname(os.path.dirname(FLAKYCTL))
    with open(os.path.join(build, "buildconf.h")) as f:
        assert '#define FLAKY_DEFAULT_CONFIG "/etc/flaky/flaky.yaml"' in \
            f.read()
    p = ctl(["report", "--help"], cwd="/")
    assert "/etc/flaky/flaky.yaml" in p.stdout


# Every command that writes evidence, and what shows it took ./flaky.db
# (None: it stored there): each must leave the system's database alone
# (where a (sys) is quarantined, has failed once), naming neither it nor
# its config.
UNKNOWN = "unknown target 'sys' (the database has no targets)"
WRITERS = [
    (["analyze", "--runs", "1"] + TAP, None),
    (["ci", "--target", "sys"] + TAP, None),
    (["ingest", "--target", "sys", "r.xml"], None),
    (["scan", "--store", "--target", "sys", "."], None),
    (["prune", "--older-than", "1d"], None),
    (["quarantine", "add", "a", "--reason", "r", "--target", "sys"], UNKNOWN),
    (["quarantine", "remove", "a", "--target", "sys"], UNKNOWN),
    (["confirm", "a", "--target", "sys", "--max-runs", "1"], UNKNOWN),
    (["polluter", "a", "--target", "sys"], UNKNOWN),
    (["verify", "a", "--target", "sys"] + TAP,
     "no test named 'a' in target sys"),
    (["bisect", "a", "--good", "HEAD", "--bad", "HEAD", "--target", "sys"],
     "expected a target of the config, or a command after --"),
]


@pytest.mark.parametrize("args,said", WRITERS,
                         ids=[" ".join(w[0][:2]) for w in WRITERS])
def test_writers_leave_the_system_database(system, args, said):
    cfg, db, work = system
    before = digest(db)
    p = ctl(args, cwd=work, system=cfg)
    assert str(cfg.parent) not in p.stdout + p.stderr, p
    assert digest(db) == before
    if said is None:
        assert p.returncode == 0, p
        assert (work / "flaky.db").exists()
    else:
        assert p.returncode == 2 and said in p.stderr, p


def test_writers_take_it_when_given(system):
    cfg, db, work = system
    assert ctl(["--config", str(cfg), "analyze", "--runs", "1"] + TAP,
               cwd=work, system=cfg).returncode == 0
    assert ctl(["analyze", "--runs", "1"] + TAP, cwd=work, system=cfg,
               FLAKY_CONFIG=str(cfg)).returncode == 0
    assert runs(db) == 4
    assert not (work / "flaky.db").exists()


def test_readers_take_it(system):
    cfg, db, work = system
    p = ctl(["--format", "json", "report", "--since", "all"], cwd=work,
            system=cfg)
    assert p.returncode == 0, p
    assert json.loads(p.stdout)["runs"]["total"] == 2
    p = ctl(["quarantine", "list"], cwd=work, system=cfg)
    assert p.returncode == 0 and "a" in p.stdout.split(), p
    # none: ./flaky.db, which does not exist
    p = ctl(["report"], cwd=work, system="")
    assert p.returncode == 2 and "flaky.db: no such database" in p.stderr


def test_a_local_database_comes_first(system):
    """analyze then report in a project: the report of those runs."""
    cfg, db, work = system
    assert ctl(["analyze", "--runs", "3"] + TAP, cwd=work,
               system=cfg).returncode == 0
    p = ctl(["--format", "json", "report", "--since", "all"], cwd=work,
            system=cfg)
    assert p.returncode == 0, p
    assert json.loads(p.stdout)["runs"]["total"] == 3
    assert runs(db) == 2
