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
    # issue 28: the first parameter, a percent-encoded key
    ("  url: postgresql:///x?password=hunter2\n",
     ":5:8: fleet: url: expected a URI without a password"),
    ("  url: postgresql:///x?host=/tmp&pass%77ord=hunter2\n",
     ":5:8: fleet: url: expected a URI without a password"),
    # issue 28: URIs libpq cannot use, refused here, not retried for ever
    ("  url: postgresql://db:54x2/x\n",
     ":5:8: fleet: url: invalid port"),
    ("  url: postgresql://db/x?sslmode=verify-fulll\n",
     ":5:8: fleet: url: invalid sslmode"),
    ("  url: postgresql://db/x?bogus=1\n",
     ":5:8: fleet: url: invalid URI query parameter: \"bogus\""),
    ("  url: postgresql://[::1/x\n",
     ":5:8: fleet: url: end of string reached when looking for matching"),
    ("  url: postgresql://db/x?application_name=hun%zzter2\n",
     ":5:8: fleet: url: invalid percent-encoded token: \"...\""),
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
    assert "hunter2" not in p.stderr and "hun%zz" not in p.stderr


def reproduce(ctl_args, test):
    """The Reproduce section of flakyctl ticket TEST."""
    p = subprocess.run([FLAKYCTL] + ctl_args + ["ticket", test],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    text = p.stdout.split("### Reproduce", 1)[1]
    return text.split("###", 1)[0].strip()


def test_target_command_and_dir_ship(pg, pgdb, shipd):
    """A target's command and directory go with its runs (issue 28): the
    server's ticket reproduces the test as the box's does, in its
    directory; a change of either reaches the server with the next run,
    and a run of the target unchanged writes nothing."""
    db = dbname(pgdb)
    shipd.configure(pgdb)
    shipd.start()
    shipd.ctl("run", "--runs", "2", "demo", check=0)
    shipd.wait_fleet("2 runs shipped", lambda f: f["shipped"] == 2 and
                     f["backlog"] == 0)
    assert pg.query("SELECT command, dir FROM targets WHERE name = 'demo'",
                    db=db) == [["/usr/bin/python3 -m unittest -v t.py",
                                shipd.dir]]
    local = reproduce(["--db", shipd.db], "t.T.test_two")
    assert "cd %s && " % shipd.dir in local, local
    assert reproduce(["--db", pgdb], "t.T.test_two") == local
    # Unchanged: the row is not written again (its xmin stays).
    xmin = pg.query("SELECT xmin FROM targets WHERE name = 'demo'", db=db)
    shipd.ctl("run", "demo", check=0)
    shipd.wait_fleet("3 shipped", lambda f: f["shipped"] == 3)
    assert pg.query("SELECT xmin FROM targets WHERE name = 'demo'",
                    db=db) == xmin
    # Moved to another directory, run another way: after a reload and
    # one run, the server has the new command and directory.
    sub = os.path.join(shipd.dir, "moved")
    os.makedirs(sub)
    with open(os.path.join(shipd.dir, "t.py")) as f:
        src = f.read()
    with open(os.path.join(sub, "t.py"), "w") as f:
        f.write(src)
    shipd.write_config(
        "fleet:\n  url: %s\n  box: box-a\ntargets:\n  - name: demo\n"
        "    command: /usr/bin/python3 -m unittest t.py\n    dir: %s\n"
        % (pgdb, sub), jobs=1)
    shipd.ctl("reload", check=0)
    shipd.ctl("run", "demo", check=0)
    shipd.wait_fleet("4 shipped", lambda f: f["shipped"] == 4 and
                     f["backlog"] == 0)
    assert pg.query("SELECT command, dir FROM targets WHERE name = 'demo'",
                    db=db) == [["/usr/bin/python3 -m unittest t.py", sub]]
    local = reproduce(["--db", shipd.db], "t.T.test_two")
    assert "cd %s && " % sub in local, local
    assert reproduce(["--db", pgdb], "t.T.test_two") == local


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


FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")


def attempts_local(daemon):
    """The local attempts as the server names them: (local run id,
    position, attempt, outcome, message)."""
    return sorted(tuple("" if c is None else str(c) for c in r)
                  for r in query(daemon.db, "SELECT run_id, position, "
                                 "attempt, outcome, message FROM attempts"))


def attempts_server(pg, db, box):
    return sorted(tuple(r) for r in pg.query(
        "SELECT r.local_id, a.position, a.attempt, a.outcome, "
        "coalesce(a.message, '') FROM attempts a JOIN runs r ON r.id = "
        "a.run_id WHERE r.box = '%s'" % box, db=db))


def test_attempts_ship_with_their_runs(pg, pgdb, shipd, tmp_path):
    """A rerun's earlier attempts (Surefire's flakyFailure and
    rerunFailure, as ingest stores them) arrive with their runs; a batch
    sent again after a restart adds none."""
    db = dbname(pgdb)
    shipd.configure(pgdb)
    src = open(os.path.join(FIXTURES, "junit", "surefire-flaky.xml")).read()
    for i in range(3):
        # Three files (ingest skips one it has seen), among runs without.
        xml = tmp_path / ("surefire-%d.xml" % i)
        xml.write_text(src.replace('time="1.234"', 'time="1.%d"' % i))
        subprocess.run([FLAKYCTL, "--db", shipd.db, "ingest", "--target",
                        "java", str(xml)], check=True, capture_output=True)
        if i == 0:
            make_db(shipd.db, 5, 3)
    local = attempts_local(shipd)
    assert len(local) >= 6 and len({r[0] for r in local}) == 3, local
    shipd.start()
    n = len(shipd.finished())
    shipd.wait_fleet("all shipped", lambda f: f["backlog"] == 0 and
                     f["shipped"] == n)
    assert_exactly_once(pg, db, "box-a", shipd)
    assert attempts_server(pg, db, "box-a") == local
    # What a crash between the server's commit and the local mark leaves:
    # every run queued again, shipped again after a restart.
    shipd.stop()
    con = sqlite3.connect(shipd.db)
    con.execute("INSERT INTO ship_queue (run_id) SELECT id FROM runs")
    con.commit()
    con.close()
    shipd.start()
    shipd.wait_fleet("all shipped again", lambda f: f["backlog"] == 0 and
                     f["shipped"] == 2 * n)
    assert attempts_server(pg, db, "box-a") == local
    assert pg.query("SELECT count(*) FROM attempts", db=db) == \
        [[str(len(local))]]
    # A run on the server without its attempts (shipped by a flakyd from
    # before attempts shipped) gets them when its box queues it again.
    pg.psql("DELETE FROM attempts", db=db)
    con = sqlite3.connect(shipd.db)
    con.execute("INSERT INTO ship_queue (run_id) SELECT DISTINCT run_id "
                "FROM attempts")
    con.commit()
    con.close()
    shipd.wait_fleet("queued again, shipped", lambda f: f["backlog"] == 0
                     and f["shipped"] == 2 * n + 3)
    assert attempts_server(pg, db, "box-a") == local
    assert_exactly_once(pg, db, "box-a", shipd)


def put_polluter(daemon, victim, made_ms, members):
    """A polluter as flakyctl polluter stores it: for the test named
    victim, narrowed from the newest local run."""
    con = sqlite3.connect(daemon.db)
    con.execute(
        "INSERT INTO polluters (test_id, from_run_id, candidates, members, "
        "reruns, minimal, command, made_ms) SELECT t.id, (SELECT max(id) "
        "FROM runs), 20, ?, 7, 1, 'pytest ' || t.name, ? FROM tests t "
        "WHERE t.name = ? ON CONFLICT (test_id) DO UPDATE SET "
        "members = excluded.members, made_ms = excluded.made_ms",
        (members, made_ms, victim))
    con.commit()
    con.close()


def polluters_server(pg, db):
    """(victim's name, box and local id of the run narrowed, members
    with ; for each newline, made_ms) of the server's polluters."""
    return [tuple(r) for r in pg.query(
        "SELECT t.name, coalesce(r.box, '-'), coalesce(r.local_id::text, "
        "'-'), replace(p.members, chr(10), ';'), p.made_ms FROM polluters p JOIN tests t ON "
        "t.id = p.test_id LEFT JOIN runs r ON r.id = p.from_run_id "
        "ORDER BY t.name", db=db)]


def test_polluters_ship_newest_wins(pg, pgdb, shipd):
    """A polluter found on the box arrives under the server's test and run
    ids with the next batch of runs; found again, it replaces the older
    finding; an older finding (sent again, or another box's stale one)
    replaces nothing."""
    db = dbname(pgdb)
    shipd.configure(pgdb)
    make_db(shipd.db, 3, 5)
    # The server numbers tests differently from the box: a test id
    # copied instead of mapped would name another test. (Any flakyctl
    # command creates the schema.)
    subprocess.run([FLAKYCTL, "--db", pgdb, "stats"], check=True,
                   capture_output=True)
    pg.psql("INSERT INTO targets (name, created_ms) VALUES ('other', 0); "
            "INSERT INTO tests (target_id, name) SELECT id, 'x' || g FROM "
            "targets, generate_series(1, 7) g", db=db)
    victim = "pkg/test_mod.py::test_0003"
    put_polluter(shipd, victim, 1000, "pkg/test_mod.py::test_0001\n")
    lid = str(max(shipd.finished()))
    shipd.start()
    n = len(shipd.finished())
    shipd.wait_fleet("all shipped", lambda f: f["backlog"] == 0 and
                     f["shipped"] == n)
    assert polluters_server(pg, db) == [
        (victim, "box-a", lid, "pkg/test_mod.py::test_0001;", "1000")]
    assert query(shipd.db, "SELECT count(*) FROM ship_polluters") == [(0,)]

    def ship_with_a_run(k):
        """Polluters go with a batch of runs: one more run, shipped."""
        shipd.ctl("run", "demo", check=0)
        shipd.wait_fleet("run shipped", lambda f: f["backlog"] == 0 and
                         f["shipped"] == n + k)

    # Found again, later: replaces.
    put_polluter(shipd, victim, 2000, "pkg/test_mod.py::test_0002\n")
    ship_with_a_run(1)
    assert polluters_server(pg, db)[0][3:] == (
        "pkg/test_mod.py::test_0002;", "2000")
    # Another box found it later still; this box's older finding, made
    # again, changes nothing there.
    pg.psql("UPDATE polluters SET made_ms = 5000, members = 'other'",
            db=db)
    put_polluter(shipd, victim, 3000, "pkg/test_mod.py::test_0000\n")
    ship_with_a_run(2)
    assert polluters_server(pg, db)[0][3:] == ("other", "5000")
    assert pg.query("SELECT count(*) FROM polluters", db=db) == [["1"]]


def fill_varied(path, first, n, t0):
    """n more runs into the local database at path, local ids from first:
    every outcome, durations missing and past the last histogram bucket,
    failures with and without a signature and message, runs alone and
    incomplete (the rates leave them out, the budget does not), over three
    UTC days. Deterministic."""
    con = sqlite3.connect(path)
    tid = con.execute("SELECT id FROM targets WHERE name = 'gen'").fetchone()[0]
    tests = [r[0] for r in con.execute(
        "SELECT id FROM tests WHERE target_id = ? ORDER BY id", (tid,))]
    for fp, text in ((111, "AssertionError: <N> != <N>"),
                     (-222, "TimeoutError: after <N>s")):
        con.execute("INSERT OR IGNORE INTO messages (fingerprint, "
                    "normalized) VALUES (?, ?)", (fp, text))
    msgs = [r[0] for r in con.execute(
        "SELECT id FROM messages WHERE fingerprint IN (111, -222) "
        "ORDER BY fingerprint")]
    for k in range(first, first + n):
        kind = "alone" if k % 5 == 3 else "suite"
        started = t0 + (k % 3) * 86400000 + k * 1000
        con.execute(
            "INSERT INTO runs (id, target_id, status, trigger, started_ms, "
            "ended_ms, duration_us, user_us, sys_us, exit_code, tests, "
            "failures, kind, incomplete) VALUES (?, ?, 'done', 'schedule', "
            "?, ?, ?, ?, ?, 1, ?, 0, ?, ?)",
            (k, tid, started, started + 5, 5000 + k, 300 + k,
             None if k % 4 == 0 else 20 + k, len(tests), kind,
             "crashed" if k % 7 == 2 else None))
        rows = []
        for p, test in enumerate(tests):
            o = (k * 3 + p * 5) % 6
            dur = None if (k + p) % 9 == 0 else \
                (10 ** 13 if (k + p) % 13 == 0 else 500 + 997 * p * k)
            failed = o in (1, 2)
            # 'UNKNOWN' and none are one signature on the server, and
            # not the empty one
            sig = ("RACE", "TIMING", None, "", "UNKNOWN")[(k + p) % 5] \
                if failed else None
            mid = msgs[(k + p) % 2] if failed and p % 4 else None
            rows.append((k, p, test, o, dur, sig,
                         "boom" if failed else None, mid))
        con.executemany("INSERT INTO results (run_id, position, test_id, "
                        "outcome, duration_us, signature, message, "
                        "message_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    con.commit()
    con.close()


ROLLUP_TABLES = (
    "SELECT r.day, t.name, r.runs, r.failures, r.skips, r.pass_us, "
    "r.fail_us, (SELECT string_agg(i || ':' || r.pass_hist[i], ',' ORDER "
    "BY i) FROM generate_subscripts(r.pass_hist, 1) i WHERE "
    "r.pass_hist[i] IS NOT NULL), (SELECT string_agg(i || ':' || "
    "r.fail_hist[i], ',' ORDER BY i) FROM generate_subscripts(r.fail_hist, "
    "1) i WHERE r.fail_hist[i] IS NOT NULL) FROM rollups r JOIN tests t "
    "ON t.id = r.test_id ORDER BY 1, 2",
    "SELECT b.day, t.name, b.box, b.runs, b.failures FROM box_rollups b "
    "JOIN tests t ON t.id = b.test_id ORDER BY 1, 2, 3",
    "SELECT b.day, t.name, b.runs, b.wall_us, b.cpu_us FROM budget b "
    "JOIN tests t ON t.id = b.test_id ORDER BY 1, 2",
    "SELECT f.day, t.name, f.counted, coalesce(m.normalized, '-'), "
    "f.signature, f.failures, r.local_id FROM failure_rollups f JOIN tests "
    "t ON t.id = f.test_id LEFT JOIN messages m ON m.id = f.message_id "
    "JOIN runs r ON r.id = f.last_run_id ORDER BY 1, 2, 3, 4, 5")


def test_shipped_sums_are_the_triggers(pg, pgdb, shipd):
    """The rollups a box sums for its batches (lib/fleet/ship_rollup.c)
    are those the server's trigger makes of the same results: rollups
    with their histograms, box_rollups, budget and failure_rollups, over
    two batches that add to the same days and tests."""
    db = dbname(pgdb)
    shipd.configure(pgdb)
    make_db(shipd.db, 0, 12)
    t0 = 1_700_000_000_000
    fill_varied(shipd.db, 1000, 40, t0)
    shipd.start()
    shipd.wait_fleet("first batch", lambda f: f["backlog"] == 0 and
                     f["shipped"] == 41)
    fill_varied(shipd.db, 1040, 25, t0)   # queued by the schema's trigger
    shipd.wait_fleet("second batch", lambda f: f["backlog"] == 0 and
                     f["shipped"] == 66)
    assert_exactly_once(pg, db, "box-a", shipd)
    shipped = [pg.query(q, db=db) for q in ROLLUP_TABLES]
    assert all(shipped), "a rollup table is empty: %s" % [
        len(t) for t in shipped]
    assert any(r[2] == "0" for r in shipped[3]), "no failure of a run " \
        "the rates leave out"
    assert any(("," + (r[7] or "") + "," + (r[8] or "")).find(",128:") >= 0
               for r in shipped[0]), "no duration in the last bucket"
    # The same results inserted again, with the trigger summing them.
    pg.psql("BEGIN; CREATE TEMP TABLE keep AS SELECT * FROM results; "
            "TRUNCATE rollups, box_rollups, budget, failure_rollups; "
            "DELETE FROM results; INSERT INTO results SELECT * FROM keep; "
            "COMMIT", db=db)
    for q, got in zip(ROLLUP_TABLES, shipped):
        assert got == pg.query(q, db=db), q
