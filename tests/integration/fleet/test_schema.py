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


DAY = 86400000


def load_small(pg, db, now_ms):
    """Two tests, three runs a day for 20 days before now_ms, one failure
    a day for b; a run alone and an incomplete one that count in no rate.
    Results arrive by COPY, as the shipper sends them."""
    pg.psql("SELECT flaky_make_partitions(%d, %d)" % (now_ms - 21 * DAY,
                                                      now_ms), db=db)
    pg.psql("""
        INSERT INTO targets (id, name, created_ms) VALUES (1, 't', 0);
        INSERT INTO tests (id, target_id, name) VALUES (1, 1, 'a'),
            (2, 1, 'b');
        INSERT INTO runs (id, box, local_id, target_id, status, started_ms,
                          kind, incomplete)
        SELECT i, 'box-a', i, 1, 'done', %d - (i / 3 + 1) * %d + i,
               CASE WHEN i = 3 THEN 'alone' ELSE 'suite' END,
               CASE WHEN i = 4 THEN 'killed' END
        FROM generate_series(0, 59) i;""" % (now_ms, DAY), db=db)
    rows = []
    for run in range(60):
        started = now_ms - (run // 3 + 1) * DAY + run
        rows.append("%d\t%d\t%d\t1\t0\t\\N\t0" % (started, run, 1000 * run))
        fail = run % 3 == 0
        rows.append("%d\t%d\t2500\t2\t1\t\\N\t%d" % (started, run,
                                                      1 if fail else 0))
    pg.psql("\\copy results (started_ms, run_id, duration_us, test_id, "
            "position, message_id, outcome) FROM STDIN\n" +
            "\n".join(rows) + "\n\\.\n", db=db)


def test_rollups_follow_copy(pg, migrated):
    db = dbname(migrated)
    now = 1795000000000
    load_small(pg, db, now)
    # Runs 3 (alone) and 4 (incomplete) are in no rollup: 58 runs each.
    assert pg.query("SELECT test_id, sum(runs), sum(failures), "
                    "sum(pass_us) FROM rollups GROUP BY 1 ORDER BY 1",
                    db=db) == [["1", "58", "0",
                                str(1000 * (sum(range(60)) - 3 - 4))],
                               ["2", "58", "19", str(2500 * 39)]]
    assert pg.query("SELECT test, runs, failures, tier FROM flaky_tests",
                    db=db) == [["b", "58", "19", "critical"]]
    # Histograms: b's 2.5 ms passes are in bucket 1 + floor(4 log2 2.5)
    # = 6, element 7.
    assert pg.query("SELECT sum(pass_hist[7]) FROM rollups WHERE "
                    "test_id = 2", db=db) == [["39"]]
    assert pg.query("SELECT runs_alone, failures_alone FROM alone_stats "
                    "WHERE test = 'b'", db=db) == [["1", "1"]]
    # The failures per message and signature: the run alone's apart,
    # none with a message or signature (0 and UNKNOWN); the budget counts
    # every failed run, the run alone's too.
    assert pg.query("SELECT counted, message_id, signature, sum(failures), "
                    "max(last_run_id) FROM failure_rollups WHERE "
                    "test_id = 2 GROUP BY 1, 2, 3 ORDER BY 1", db=db) == \
        [["0", "0", "UNKNOWN", "1", "3"], ["1", "0", "UNKNOWN", "19", "57"]]
    assert pg.query("SELECT sum(runs) FROM budget", db=db) == [["20"]]


def test_partitions_ahead_and_retention(pg, migrated):
    db = dbname(migrated)
    # The migration made the weeks around now, and a writer can add more.
    ahead = pg.query("SELECT count(*) FROM pg_inherits WHERE inhparent = "
                     "'results'::regclass", db=db)[0][0]
    assert int(ahead) >= 5
    now = 1795000000000
    load_small(pg, db, now)
    before = pg.query("SELECT count(*) FROM results", db=db)
    assert before == [["120"]]
    rollups = pg.query("SELECT * FROM rollups ORDER BY 1, 2", db=db)
    budget = pg.query("SELECT * FROM budget ORDER BY 1, 2", db=db)
    assert sum(int(r[2]) for r in budget) == 20
    horizon = now - 10 * DAY
    dropped = int(pg.query("SELECT flaky_drop_partitions(%d)" % horizon,
                           db=db)[0][0])
    assert dropped >= 1
    left = pg.query("SELECT min(started_ms), count(*) FROM results", db=db)
    assert int(left[0][0]) >= horizon - 7 * DAY
    assert int(left[0][1]) < 120
    # Rollups and budget stay (every run's failures went to budget as
    # they arrived), so daily_budget counts every failed run still.
    assert pg.query("SELECT * FROM rollups ORDER BY 1, 2", db=db) == rollups
    assert pg.query("SELECT * FROM budget ORDER BY 1, 2", db=db) == budget
    assert pg.query("SELECT sum(failed_runs) FROM daily_budget",
                    db=db) == [["20"]]
    meta = pg.query("SELECT value FROM store_meta WHERE key = "
                    "'pruned_before_ms'", db=db)
    assert int(meta[0][0]) <= horizon
    # A partition that holds anything newer than the horizon stays.
    assert int(pg.query("SELECT flaky_drop_partitions(%d)" % horizon,
                        db=db)[0][0]) == 0


def test_missing_partition_is_an_error(pg, migrated):
    """No default partition: a writer that forgot flaky_make_partitions
    gets an error, not rows in a catch-all that later blocks a new
    partition."""
    p = pg.psql("INSERT INTO results (started_ms, run_id, test_id, "
                "position, outcome) VALUES (0, 1, 1, 0, 0)",
                db=dbname(migrated), check=False)
    assert p.returncode != 0
    assert "no partition of relation \"results\" found" in p.stderr


def plan(pg, db, sql, settings=""):
    return "\n".join(r[0] for r in pg.query(settings + "EXPLAIN (COSTS OFF) "
                                             + sql, db=db))


def test_windowed_plans(pg, migrated):
    """A window over the results reads only its weeks; a run's results
    are found through the BRIN index on run_id; a window of the rollups is
    a range of their key."""
    db = dbname(migrated)
    now = 1795000000000
    load_small(pg, db, now)
    pg.psql("ANALYZE", db=db)
    p = plan(pg, db, "SELECT count(*) FROM results WHERE started_ms >= %d"
             % (now - 3 * DAY))
    weeks = pg.query("SELECT count(*) FROM pg_inherits WHERE inhparent = "
                     "'results'::regclass", db=db)[0][0]
    scanned = p.count("on results_")
    assert 1 <= scanned < int(weeks), p
    p = plan(pg, db, "SELECT * FROM results WHERE run_id = 7",
             "SET enable_seqscan = off; ")
    assert "Bitmap Index Scan on results_" in p and "_run_id_idx" in p, p
    today = now // DAY
    p = plan(pg, db, "SELECT sum(runs) FROM rollups WHERE day >= %d"
             % (today - 1), "SET enable_seqscan = off; ")
    assert "rollups_pkey" in p, p


def test_make_partitions_once(pg, migrated):
    """A week is made once, however often writers ask for it, and then
    takes the rows of its week with the checks of results."""
    db = dbname(migrated)
    q = "SELECT flaky_make_partitions(0, %d)" % (DAY - 1)
    assert pg.query(q, db=db) == [["1"]]
    assert pg.query(q, db=db) == [["0"]]
    pg.psql("INSERT INTO results (started_ms, run_id, test_id, position, "
            "outcome) VALUES (0, 1, 1, 0, 0)", db=db)
    assert pg.query("SELECT tableoid::regclass FROM results",
                    db=db) == [["results_19700101"]]
    bad = pg.psql("INSERT INTO results (started_ms, run_id, test_id, "
                  "position, outcome) VALUES (1, 1, 1, 1, 9)", db=db,
                  check=False)
    assert "results_outcome_check" in bad.stderr
