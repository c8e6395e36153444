"""The PostgreSQL schema through lib/fleet: migrated once, concurrently,
refused when newer or not flaky's; credentials only from libpq's own
files, never shown."""
import os
import subprocess

import pytest

from conftest import PGTOOL, pg_schema_count, pgtool


def dbname(uri):
    return uri.split("///", 1)[1].split("?", 1)[0]


def test_migrate_fresh_and_again(pg, pgdb):
    p = pgtool("migrate", pgdb)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "schema version %d" % pg_schema_count()
    db = dbname(pgdb)
    rows = pg.query("SELECT version, name FROM schema_version "
                    "ORDER BY version", db=db)
    assert [int(r[0]) for r in rows] == list(range(1, pg_schema_count() + 1))
    assert rows[0][1] == "0001-initial.sql"
    # Again: nothing to do, nothing applied twice.
    p = pgtool("migrate", pgdb)
    assert p.returncode == 0, p.stderr
    assert pg.query("SELECT count(*) FROM schema_version", db=db) == \
        [[str(pg_schema_count())]]


def test_same_tables_as_sqlite(pg, migrated):
    """Every table of the SQLite schema core is there, with its columns."""
    cols = pg.query("SELECT table_name, column_name FROM "
                    "information_schema.columns WHERE table_schema = "
                    "'public'", db=dbname(migrated))
    have = {(t, c) for t, c in cols}
    for t, c in [("runs", "box"), ("runs", "local_id"), ("runs", "kind"),
                 ("runs", "perturbation"), ("runs", "stdout_id"),
                 ("results", "started_ms"), ("results", "outcome"),
                 ("tests", "name"), ("targets", "name")]:
        assert (t, c) in have


def test_concurrent_migrations(pg, pgdb):
    """Boxes starting at once: one migrates, the others wait for it."""
    procs = [subprocess.Popen([PGTOOL, "migrate", pgdb],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    assert pg.query("SELECT count(*) FROM schema_version",
                    db=dbname(pgdb)) == [[str(pg_schema_count())]]


def test_newer_schema_refused(pg, migrated):
    db = dbname(migrated)
    newer = pg_schema_count() + 1
    pg.psql("INSERT INTO schema_version (version, name) "
            "VALUES (%d, '9999-future.sql')" % newer, db=db)
    p = pgtool("migrate", migrated)
    assert p.returncode == 2
    assert ("schema version %d is newer than this program understands (%d)"
            % (newer, pg_schema_count())) in p.stderr
    assert "upgrade flaky" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_not_a_flaky_database(pg, pgdb):
    pg.psql("CREATE TABLE runs (x int)", db=dbname(pgdb))
    p = pgtool("migrate", pgdb)
    assert p.returncode == 2
    assert "not a flaky database" in p.stderr


def test_server_down(tmp_path):
    uri = "postgresql:///flaky?host=%s&user=flaky" % tmp_path
    p = pgtool("migrate", uri)
    assert p.returncode == 2
    assert "cannot connect to " + uri in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_password_in_uri_refused(pg):
    uri = "postgresql://flaky:s3cret@/flaky?host=%s" % pg.sockdir
    p = pgtool("migrate", uri)
    assert p.returncode == 2
    assert "carries a password" in p.stderr and ".pgpass" in p.stderr
    assert "s3cret" not in p.stderr


@pytest.fixture
def pw_role(pg):
    """A role that must give a password (scram) on the socket: a pg_hba
    line for it alone, before the trust line, so other tests are not
    touched."""
    pg.psql("CREATE ROLE pwuser LOGIN PASSWORD 'right-one'")
    pg.psql("CREATE DATABASE pwdb OWNER pwuser", db="postgres")
    hba = os.path.join(pg.data, "pg_hba.conf")
    with open(hba) as f:
        old = f.read()
    with open(hba, "w") as f:
        f.write("local all pwuser scram-sha-256\n" + old)
    pg.psql("SELECT pg_reload_conf()")
    yield "pwuser"
    with open(hba, "w") as f:
        f.write(old)
    pg.psql("SELECT pg_reload_conf()")


def test_password_file(pg, pw_role, tmp_path):
    """The password comes from PGPASSFILE; a wrong one is named as such,
    with where to put the right one, and never shown."""
    uri = "postgresql:///pwdb?host=%s&user=%s" % (pg.sockdir, pw_role)
    pgpass = tmp_path / "pgpass"
    env = dict(os.environ, PGPASSFILE=str(pgpass))
    env.pop("PGPASSWORD", None)
    pgpass.write_text("*:*:*:%s:wrong-one\n" % pw_role)
    pgpass.chmod(0o600)
    p = pgtool("migrate", uri, env=env)
    assert p.returncode == 2
    assert "password authentication failed" in p.stderr
    assert ".pgpass" in p.stderr and "wrong-one" not in p.stderr
    # No password at all: the same hint.
    pgpass.write_text("")
    p = pgtool("migrate", uri, env=env)
    assert p.returncode == 2 and ".pgpass" in p.stderr
    pgpass.write_text("*:*:*:%s:right-one\n" % pw_role)
    p = pgtool("migrate", uri, env=env)
    assert p.returncode == 0, p.stderr
