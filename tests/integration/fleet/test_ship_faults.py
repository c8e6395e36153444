"""Shipping through the server's faults, on the session's cluster, which
the tests stop and restart: stopped mid-batch (pg_ctl stop -m
immediate), restarted under a connected box, and a password refused.
Nothing is lost and nothing is stored twice; no secret reaches the log."""
import os

import pytest

from shipd import ShipDaemon, assert_exactly_once, make_db, server_runs

RIGHT = "right-Pass-7319"
WRONG = "wrong-Pass-4471"


@pytest.fixture(scope="module")
def pg2(pg):
    """The session's cluster (one initdb less), with a role boxer that
    logs in with a password (scram); everyone else keeps trust. Tests
    that stop it start it again before they end."""
    hba = os.path.join(pg.data, "pg_hba.conf")
    with open(hba) as f:
        rules = f.read()
    with open(hba, "w") as f:
        f.write("local all boxer scram-sha-256\n" + rules)
    pg.psql("CREATE ROLE boxer LOGIN SUPERUSER PASSWORD '%s'" % RIGHT)
    pg.pg_ctl("reload")
    return pg


@pytest.fixture
def shipd(tmp_path):
    d = ShipDaemon(tmp_path)
    yield d
    d.cleanup()


def fresh_db(pg2, name):
    pg2.createdb(name)
    return name


def test_stopped_mid_batch(pg2, shipd):
    db = fresh_db(pg2, "midbatch")
    shipd.configure(pg2.uri(db))
    make_db(shipd.db, 3000, 20)
    shipd.start()
    try:
        shipd.wait_fleet("a first batch on the server",
                         lambda f: f["shipped"] > 0)
        pg2.pg_ctl("stop", "-m", "immediate", "-w")
        f = shipd.wait_fleet("the server seen gone",
                             lambda f: f["state"] == "down")
        assert f["backlog"] > 0
    finally:
        pg2.pg_ctl("start", "-w", "-t", "60", "-l", pg2.log)
    shipd.wait_fleet("everything shipped after the outage",
                     lambda f: f["backlog"] == 0 and f["state"] == "up",
                     timeout=120)
    assert_exactly_once(pg2, db, "box-a", shipd)
    assert shipd.logtext().count("retrying with backoff") >= 1


def test_server_restart(pg2, shipd):
    db = fresh_db(pg2, "restart")
    shipd.configure(pg2.uri(db))
    shipd.start()
    shipd.ctl("run", "demo", check=0)
    shipd.wait_fleet("one run shipped", lambda f: f["shipped"] == 1)
    pg2.pg_ctl("restart", "-m", "fast", "-w", "-t", "60", "-l", pg2.log)
    shipd.ctl("run", "--runs", "2", "demo", check=0)
    shipd.wait_fleet("the runs after the restart shipped",
                     lambda f: f["shipped"] == 3 and f["backlog"] == 0,
                     timeout=60)
    assert_exactly_once(pg2, db, "box-a", shipd)


def test_wrong_password(pg2, shipd, tmp_path, monkeypatch):
    db = fresh_db(pg2, "auth")
    passfile = tmp_path / "pgpass"
    passfile.write_text("*:*:*:boxer:%s\n" % WRONG)
    os.chmod(passfile, 0o600)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    url = "postgresql:///%s?host=%s&user=boxer" % (db, pg2.sockdir)
    shipd.configure(url)
    shipd.start()
    shipd.ctl("run", "demo", check=0)
    f = shipd.wait_fleet("refused, the run waiting",
                         lambda f: f["state"] == "refused" and
                         f["backlog"] == 1)
    assert "password authentication failed" in f["error"]
    assert "PGPASSFILE" in f["error"]
    log = shipd.logtext()
    assert "password authentication failed" in log
    assert log.count("retrying with backoff") == 1
    # The right one: the next attempt reads the file again.
    passfile.write_text("*:*:*:boxer:%s\n" % RIGHT)
    shipd.wait_fleet("shipped with the right password",
                     lambda f: f["shipped"] == 1, timeout=60)
    assert server_runs(pg2, db, "box-a") == [(1, 2)]
    st = shipd.ctl("status", check=0).stdout
    for text in (shipd.logtext(), st, str(shipd.status())):
        assert WRONG not in text and RIGHT not in text
