"""Every printed form of a connection string leaves its credentials out
(docs/fleet.md: the userinfo is never shown), and a server that says no
is answered with what to check (issue 28, items 12 and 16).

Item 12: a percent-encoded password key is refused without being
printed; a libpq key=value string is never printed back; a failed page
does not show the server's address to an HTTP client; stats and the
serve banner show no user@. Item 16: a wrong database or user name is
named as such, not as a password problem."""
import json
import os
import subprocess

import pytest

from serving import FLAKYCTL, FLAKYD, Serve, get

SECRET = "s3cret-Pw-8841"


def ctl(*args, env=None, cwd=None):
    return subprocess.run([FLAKYCTL] + list(args), capture_output=True,
                          text=True, timeout=60, cwd=cwd,
                          env=dict(env or os.environ, NO_COLOR="1"))


def dbname(uri):
    return uri.split("///", 1)[1].split("?", 1)[0]


def test_percent_encoded_password_key_refused_unprinted(pg, pgdb):
    """libpq decodes pass%77ord to password: refused, and the URI shown
    without it."""
    for key in ("pass%77ord", "%70assword", "password"):
        uri = "%s&%s=%s" % (pgdb, key, SECRET)
        p = ctl("--db", uri, "report")
        assert p.returncode == 2
        assert "carries a password" in p.stderr, p.stderr
        assert SECRET not in p.stderr + p.stdout
        assert "%" not in p.stderr
        assert dbname(pgdb) in p.stderr     # the rest is shown


@pytest.mark.parametrize("how", ["--db", "FLAKY_DB", "database:"])
def test_key_value_string_never_printed(pg, tmp_path, how):
    """host=... password=... is no file name: refused, not repeated, and
    no file is made under that name."""
    conninfo = "host=%s dbname=flaky user=flaky password=%s" % (
        pg.sockdir, SECRET)
    env = dict(os.environ)
    args = []
    if how == "--db":
        args = ["--db", conninfo]
    elif how == "FLAKY_DB":
        env["FLAKY_DB"] = conninfo
    else:
        conf = tmp_path / "flaky.yaml"
        conf.write_text("database: \"%s\"\n" % conninfo)
        args = ["--config", str(conf)]
    for cmd in (["report"], ["stats"], ["serve", "--listen",
                                         "127.0.0.1:0"]):
        p = ctl(*(args + cmd), env=env, cwd=str(tmp_path))
        assert p.returncode == 2, (cmd, p.stdout, p.stderr)
        assert SECRET not in p.stderr + p.stdout, p.stderr
        assert "key=value" in p.stderr, p.stderr
    assert os.listdir(str(tmp_path)) in ([], ["flaky.yaml"])


def test_failed_page_does_not_show_the_server(pg, pgdb, tmp_path):
    """A page that fails answers 500 with what failed, not with where the
    database is."""
    uri = "postgresql://flaky@/%s?host=%s" % (dbname(pgdb), pg.sockdir)
    xml = tmp_path / "r.xml"
    xml.write_text('<testsuite name="s" tests="1"><testcase classname="a" '
                   'name="t1" time="0.1"/></testsuite>\n')
    assert ctl("--db", uri, "ingest", "--target", "t", str(xml)) \
        .returncode == 0
    pg.psql("DROP VIEW run_output", db=dbname(pgdb))
    s = Serve(uri, tmp_path)
    try:
        for path in ("/run/1", "/api/v1/run/1"):
            st, body = get(s.url + path)
            assert st == 500, body
            assert "run_output" in body, body
            for leak in (pg.sockdir, "postgres", dbname(pgdb), "flaky@"):
                assert leak not in body, (leak, body)
    finally:
        assert s.stop() == 0, s.logtext()


def test_stats_and_banner_show_no_userinfo(pg, pgdb, tmp_path):
    uri = "postgresql://flaky@/%s?host=%s" % (dbname(pgdb), pg.sockdir)
    s = Serve(uri, tmp_path)
    assert s.stop() == 0, s.logtext()
    assert s.banner.startswith("serving postgresql:///%s?host=%s at " %
                               (dbname(pgdb), pg.sockdir)), s.banner
    p = ctl("--db", uri, "stats")
    assert p.returncode == 0, p.stderr
    assert "flaky@" not in p.stdout
    assert "database   postgresql:///%s?host=%s (schema" % (
        dbname(pgdb), pg.sockdir) in p.stdout, p.stdout
    p = ctl("--db", uri, "stats", "--format", "json")
    assert json.loads(p.stdout)["path"] == "postgresql:///%s?host=%s" % (
        dbname(pgdb), pg.sockdir)


def test_flakyd_check_config_refuses_a_server_as_database(tmp_path):
    """flakyd refuses database: postgresql://... at start; --check-config
    says so too, where it is (issue 28, item 11)."""
    conf = tmp_path / "flaky.yaml"
    conf.write_text("socket: %s/s\n# the server\ndatabase: "
                    "\"postgresql:///x?host=/nonexistent\"\n" % tmp_path)
    p = subprocess.run([FLAKYD, "--config", str(conf), "--check-config"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1, p.stdout
    assert "%s:3:11: database: expected a local SQLite file" % conf in \
        p.stderr, p.stderr
    assert "fleet:" in p.stderr
    # flakyctl reads the same file's database: as the server
    p = ctl("--config", str(conf), "report")
    assert "local SQLite" not in p.stderr and "cannot connect" in p.stderr


@pytest.fixture(scope="module")
def hinted(pg):
    """A role that logs in with a password (scram) on the socket, owning
    database hinted; a pg_hba line for it alone."""
    pg.psql("CREATE ROLE hinted LOGIN PASSWORD 'right-Pw-1'")
    pg.psql("CREATE DATABASE hinted OWNER hinted", db="postgres")
    hba = os.path.join(pg.data, "pg_hba.conf")
    with open(hba) as f:
        old = f.read()
    with open(hba, "w") as f:
        f.write("local all hinted scram-sha-256\n" + old)
    pg.psql("SELECT pg_reload_conf()")
    yield "hinted"
    with open(hba, "w") as f:
        f.write(old)
    pg.psql("SELECT pg_reload_conf()")


def test_wrong_names_hinted_as_such(pg, hinted, tmp_path):
    """The password file a fleet admin writes names the host, port,
    database and user: a typo in the URI's database or user finds no line
    of it, and that is what is said; a database or user that does not
    exist is named; only a wrong password is a password problem."""
    pgpass = tmp_path / "pgpass"
    pgpass.write_text("*:*:hinted:hinted:right-Pw-1\n")
    pgpass.chmod(0o600)
    env = dict(os.environ, PGPASSFILE=str(pgpass))
    env.pop("PGPASSWORD", None)

    def connect(db, user):
        p = ctl("--db", "postgresql:///%s?host=%s&user=%s" % (
            db, pg.sockdir, user), "stats", env=env)
        assert "right-Pw-1" not in p.stderr
        return p

    assert connect("hinted", "hinted").returncode == 0
    # A typo in the database: the file has no line for it.
    p = connect("hintd", "hinted")
    assert p.returncode == 2
    assert "no line of %s" % pgpass in p.stderr, p.stderr
    assert ":hintd:hinted" in p.stderr and "check the database and user " \
        "names" in p.stderr
    assert "give the password" not in p.stderr
    # Under trust (the superuser): the server names what is missing.
    p = connect("nosuchdb", "flaky")
    assert p.returncode == 2
    assert "check the database name" in p.stderr, p.stderr
    assert "password" not in p.stderr and ".pgpass" not in p.stderr
    p = connect("hinted", "nosuchuser")
    assert p.returncode == 2
    assert "check the user name" in p.stderr, p.stderr
    assert "password" not in p.stderr
    # A wrong password: PostgreSQL does not tell it from a wrong user.
    pgpass.write_text("*:*:hinted:hinted:wrong-Pw-2\n")
    p = connect("hinted", "hinted")
    assert p.returncode == 2
    assert "password authentication failed" in p.stderr
    assert "or the user name hinted is wrong" in p.stderr, p.stderr
    assert "wrong-Pw-2" not in p.stderr
    # A file libpq ignores for its mode.
    pgpass.write_text("*:*:hinted:hinted:right-Pw-1\n")
    pgpass.chmod(0o644)
    p = connect("hinted", "hinted")
    assert p.returncode == 2
    assert "is ignored: its mode must be 0600" in p.stderr, p.stderr


def test_flakyd_key_value_db_never_printed(tmp_path):
    """flakyd --db host=... password=...: refused before anything is made
    under that name (its lock file), and not printed."""
    conf = tmp_path / "flaky.yaml"
    conf.write_text("socket: %s/s\n" % tmp_path)
    p = subprocess.run([FLAKYD, "--config", str(conf), "--foreground",
                        "--db", "host=/nonexistent dbname=x password=%s" %
                        SECRET], capture_output=True, text=True,
                       timeout=30, cwd=str(tmp_path))
    assert p.returncode == 2
    assert "key=value" in p.stderr and SECRET not in p.stderr, p.stderr
    assert sorted(os.listdir(str(tmp_path))) == ["flaky.yaml"]
