"""The fleet tests: flakyctl and flakyd against a real PostgreSQL server,
a throwaway cluster started once per session (pgcluster.py)."""
import itertools
import os
import subprocess

import pytest

from pgcluster import Cluster

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FLAKYCTL = os.environ.get("FLAKYCTL", os.path.join(ROOT, "build", "cli", "flakyctl"))
FLAKYD = os.environ.get("FLAKYD", os.path.join(ROOT, "build", "daemon", "flakyd"))
PGTOOL = os.environ.get("PGTOOL", os.path.join(ROOT, "build", "tests",
                                               "integration", "pgtool"))
PG_SCHEMA = os.path.join(ROOT, "schema", "pg")


def pg_schema_count():
    """The PostgreSQL schema version of this tree: its number of files."""
    return len([f for f in os.listdir(PG_SCHEMA)
                if f[:4].isdigit() and f.endswith(".sql")])


def pgtool(*args, env=None):
    """Run tests/integration/fleet/pgtool.c; the CompletedProcess."""
    return subprocess.run([PGTOOL] + list(args), capture_output=True,
                          text=True, timeout=60, env=env)

_names = itertools.count()


@pytest.fixture(scope="session")
def pg():
    """The session's cluster: .uri(db), .sockdir, .psql(sql, db=...),
    .query(sql, db=...), .createdb(name). Removed at the end."""
    cluster = Cluster()
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pgdb(pg):
    """A fresh empty database of the session's cluster, for one test: its
    URI (pg.query(sql, db=name) reads it; the name is the URI's path)."""
    name = "t%d" % next(_names)
    return pg.createdb(name)


@pytest.fixture
def migrated(pg, pgdb):
    """A fresh database with the PostgreSQL schema: its URI."""
    p = pgtool("migrate", pgdb)
    assert p.returncode == 0, p.stderr
    return pgdb
