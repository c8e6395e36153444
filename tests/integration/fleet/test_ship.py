"""flakyd ships finished runs to the fleet's server (docs/fleet.md): what
arrives, status and metrics, and the faults that must not lose or double
anything: a server that is not there, a reshipped batch, a newer schema,
a box name taken, a password where it does not belong."""
import os
import sqlite3
import subprocess
import zlib

import pytest

from shipd import (ShipDaemon, assert_exactly_once, dbname, make_db,
                   server_runs, query)

FLAKYCTL = os.environ.get("FLAKYCTL", "flakyctl")
FLAKYD = os.environ.get("FLAKYD", "flakyd")


@pytest.fixture
def shipd(tmp_path):
    d = ShipDaemon(tmp_path)
    yield d
    d.cleanup()


def test_runs_results_and_outputs_arrive(pg, pgdb, shipd):
    db = dbname(pgdb)
    shipd.configure(pgdb)
    shipd.start()
    shipd.ctl("run", "--runs", "3", "demo", check=0)
    shipd.wait_fleet("3 runs shipped", lambda f: f["shipped"] == 3 and
                     f["backlog"] == 0)
    f = shipd.fleet()
    assert f["state"] == "up" and f["box"] == "box-a" and f["error"] is None
    assert_exactly_once(pg, db, "box-a", shipd)
    rows = pg.query("SELECT t.name, x.outcome, x.signature IS NOT NULL, "
                    "m.normalized IS NOT NULL FROM results x JOIN tests t "
                    "ON t.id = x.test_id LEFT JOIN messages m ON m.id = "
                    "x.message_id ORDER BY x.run_id, x.position", db=db)
    assert rows == [["t.T.test_one", "0", "f", "f"],
                    ["t.T.test_two", "1", "t", "t"]] * 3
    # The output as kept, the same bytes as the local database has.
    local = [(zlib.decompress(d) if len(d) != n else d).hex().upper()
             for d, n in query(shipd.db, "SELECT o.data, o.size FROM runs r "
                               "JOIN outputs o ON o.id = r.stderr_id "
                               "ORDER BY r.id")]
    remote = pg.query("SELECT upper(encode(o.data, 'hex')) FROM runs r "
                      "JOIN outputs o ON o.id = r.stderr_id ORDER BY "
                      "r.local_id", db=db)
    assert len(local) == 3 and local == [r[0] for r in remote]
    assert "flakyd: fleet: shipping to postgresql:///%s" % db in \
        shipd.logtext()


def test_down_at_start_then_up_and_backlog_shown(pg, tmp_path, shipd):
    """A server that is not there yet: runs accumulate, status and metrics
    show them, one line in the log however many attempts; once it is
    there everything goes over."""
    sock = tmp_path / "nopg"
    sock.mkdir()
    url = "postgresql:///flaky?host=%s&user=flaky" % sock
    shipd.configure(url)
    shipd.start()
    shipd.ctl("run", "--runs", "2", "demo", check=0)
    f = shipd.wait_fleet("two runs waiting, two failed attempts",
                         lambda f: f["backlog"] == 2 and f["attempts"] >= 2,
                         timeout=30)
    assert f["state"] == "down" and f["oldest_ms"] > 0
    assert "cannot connect" in f["error"]
    assert shipd.logtext().count("retrying with backoff") == 1
    out = shipd.ctl("status", check=0).stdout
    assert "fleet: box box-a to %s: down" % url in out
    assert "2 finished runs waiting" in out
    m = shipd.ctl("--db", shipd.db, "metrics", check=0).stdout
    assert "flaky_fleet_backlog_runs 2\n" in m
    assert "flaky_fleet_backlog_oldest_seconds " in m
    # The server comes: a database under that socket directory.
    os.symlink(os.path.join(pg.sockdir, ".s.PGSQL.5432"),
               str(sock / ".s.PGSQL.5432"))
    shipd.wait_fleet("the backlog shipped", lambda f: f["backlog"] == 0 and
                     f["shipped"] == 2, timeout=90)
    assert_exactly_once(pg, "flaky", "box-a", shipd)
    assert "shipping to" in shipd.logtext()


def test_reshipped_batch_inserts_nothing_twice(pg, pgdb, shipd):
    """What a crash between the server's commit and the local mark
    leaves: the same runs queued again. They go again, and the server
    keeps one of each."""
    db = dbname(pgdb)
    shipd.configure(pgdb)
    make_db(shipd.db, 50, 20)
    shipd.start()
    shipd.wait_fleet("all shipped", lambda f: f["backlog"] == 0 and
                     f["shipped"] == 51)
    shipd.stop()
    con = sqlite3.connect(shipd.db)
    con.execute("INSERT INTO ship_queue (run_id) SELECT id FROM runs")
    con.commit()
    con.close()
    shipd.start()
    shipd.wait_fleet("all shipped again", lambda f: f["backlog"] == 0 and
                     f["shipped"] == 102)
    assert_exactly_once(pg, db, "box-a", shipd)
    assert len(server_runs(pg, db, "box-a")) == 51


def test_newer_schema_is_refused(pg, pgdb, shipd):
    db = dbname(pgdb)
    shipd.configure(pgdb)
    shipd.start()
    shipd.wait_fleet("connected", lambda f: f["state"] == "up")
    shipd.stop()
    pg.psql("INSERT INTO schema_version (version, name) VALUES "
            "(999, '0999-future.sql')", db=db)
    shipd.start()
    shipd.ctl("run", "demo", check=0)
    f = shipd.wait_fleet("refused, one run waiting",
                         lambda f: f["state"] == "refused" and
                         f["backlog"] == 1)
    assert "schema version 999 is newer" in f["error"]
    assert "schema version 999 is newer" in shipd.logtext()
    assert len(shipd.finished()) == 1
    assert server_runs(pg, db, "box-a") == []


def test_two_boxes_with_one_name(pg, pgdb, tmp_path):
    first = ShipDaemon(tmp_path / "a")
    second = ShipDaemon(tmp_path / "b")
    os.makedirs(first.dir)
    os.makedirs(second.dir)
    try:
        first.configure(pgdb, box="shared")
        first.start()
        first.wait_fleet("first connected", lambda f: f["state"] == "up")
        second.configure(pgdb, box="shared")
        second.start()
        second.ctl("run", "demo", check=0)
        f = second.wait_fleet("second refused", lambda f:
                              f["state"] == "refused" and f["backlog"] == 1)
        assert "box shared is claimed by another box" in f["error"]
        assert "box shared is claimed by another box" in second.logtext()
        first.ctl("run", "demo", check=0)
        first.wait_fleet("first shipped", lambda f: f["shipped"] == 1)
        assert len(server_runs(pg, dbname(pgdb), "shared")) == 1
    finally:
        first.cleanup()
        second.cleanup()


@pytest.mark.parametrize("fleet,expect", [
    ("  url: postgresql:///x\n  box: 'no spaces'\n",
     ":6:8: fleet: box: expected 1 to 64 letters, digits, '.', '_' or '-', "
     "got \"no spaces\""),
    ("  url: postgresql:///x\n  box: %s\n" % ("b" * 65),
     ":6:8: fleet: box: expected 1 to 64"),
    ("  url: postgresql://u:hunter2@db/x\n",
     ":5:8: fleet: url: expected a URI without a password"),
    ("  url: postgresql:///x?host=/tmp&password=hunter2\n",
     ":5:8: fleet: url: expected a URI without a password"),
    ("  url: mysql://db/x\n",
     ":5:8: fleet: url: expected a PostgreSQL URI"),
    ("  box: a\n", ":5:3: fleet: expected a url: key"),
])
def test_bad_fleet_config(tmp_path, fleet, expect):
    cfg = tmp_path / "flaky.yaml"
    cfg.write_text("database: %s/f.db\nsocket: %s/s\n# fleet\nfleet:\n%s"
                   % (tmp_path, tmp_path, fleet))
    p = subprocess.run([FLAKYD, "--config", str(cfg), "--check-config"],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert "%s%s" % (cfg, expect) in p.stderr, p.stderr
    assert "hunter2" not in p.stderr
    p = subprocess.run([FLAKYD, "--config", str(cfg), "--foreground"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and expect in p.stderr
    assert "hunter2" not in p.stderr


def test_fleet_box_is_the_box_of_the_runs(tmp_path):
    """One box per flakyd: fleet: box: other than the top-level box: is
    refused, as the runs would record one name and the server another."""
    cfg = tmp_path / "flaky.yaml"
    cfg.write_text("database: %s/f.db\nsocket: %s/s\nbox: box-b\nfleet:\n"
                   "  url: postgresql:///x\n  box: box-a\n"
                   % (tmp_path, tmp_path))
    p = subprocess.run([FLAKYD, "--config", str(cfg), "--check-config"],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert "%s:6:8: fleet: box: expected the box of box: (box-b) or none, " \
        "got \"box-a\"" % cfg in p.stderr, p.stderr
    cfg.write_text("database: %s/f.db\nsocket: %s/s\nbox: box-a\nfleet:\n"
                   "  url: postgresql:///x\n  box: box-a\n"
                   % (tmp_path, tmp_path))
    p = subprocess.run([FLAKYD, "--config", str(cfg), "--check-config"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
