"""Ad-hoc SQL on both backends: every example of docs/schema.md runs as
written on SQLite (a database made by flakyctl analyze of
examples/demo-pytest) and on PostgreSQL (the same evidence copied over by
sqlite2pg.py, rollups made by the server's trigger), and gives the same
rows."""
import os
import shutil
import sqlite3
import subprocess
import zlib

import pytest

import sqlite2pg
from conftest import FLAKYCTL, ROOT, pgtool

PYTEST = "/usr/bin/pytest"
DOC = os.path.join(ROOT, "docs", "schema.md")

# Where the backends differ by design, the columns compared differently.
# outputs: SQLite keeps data deflated, PostgreSQL the content itself (the
# server compresses it below SQL), so length(data) differs.
DIFFERENT = {"sum(length(data)) AS stored_bytes": "stored_bytes"}


def sqlar_uncompress(data, size):
    if data is None or size is None or size <= 0 or size == len(data):
        return data
    return zlib.decompress(data)


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    """A SQLite database of 6 runs of demo-pytest (two jobs) and a
    shuffled run under CPU stress, as in the analyze suite, and three
    JUnit files ingested (runs of another kind, on another day, with
    durations for the histograms)."""
    d = tmp_path_factory.mktemp("demo")
    src = os.path.join(ROOT, "examples", "demo-pytest")
    work = d / "demo-pytest"
    shutil.copytree(src, work)
    db = str(d / "flaky.db")
    for args in (["--runs", "6", "--jobs", "2"],
                 ["--runs", "1", "--shuffle", "--stress", "cpu:1"]):
        p = subprocess.run([FLAKYCTL, "--db", db, "analyze"] + args +
                           ["--", PYTEST, "-v"], cwd=work,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode in (0, 1), p.stderr
    junit = os.path.join(ROOT, "tests", "fixtures", "junit")
    p = subprocess.run([FLAKYCTL, "--db", db, "ingest", "--target", "ci"] +
                       [os.path.join(junit, f) for f in
                        ("pytest.xml", "jest-junit.xml", "pytest-xunit1.xml")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return db


@pytest.fixture(scope="module")
def both(pg, demo_db):
    """(sqlite connection, PostgreSQL database name) with the same
    evidence."""
    name = "docs"
    uri = pg.createdb(name)
    p = pgtool("migrate", uri)
    assert p.returncode == 0, p.stderr
    sqlite2pg.copy(demo_db, pg, name)
    con = sqlite3.connect(demo_db)
    con.create_function("sqlar_uncompress", 2, sqlar_uncompress,
                        deterministic=True)
    yield con, name
    con.close()


def norm(v):
    """A value as both backends can agree on: numbers rounded (SQLite
    gives floats where PostgreSQL gives numeric), bytes as hex."""
    if v is None:
        return None
    if isinstance(v, bytes):
        return v.hex()
    try:
        return round(float(v), 6)
    except ValueError:
        return v


def pg_rows(pg, db, sql):
    """Rows through psql: unit and record separators, NULL as a marker."""
    p = pg.psql(sql, db=db, args=["-F", "\x1f", "-R", "\x1e", "-P",
                                  "null=\x01"])
    out = p.stdout[:-1] if p.stdout.endswith("\n") else p.stdout
    if not out:
        return []
    return [[None if f == "\x01" else f for f in rec.split("\x1f")]
            for rec in out.split("\x1e")]


def columns(con, sql):
    return [d[0] for d in con.execute(sql).description]


def rows_of(rows, skip):
    return sorted((tuple(norm(v) for i, v in enumerate(r) if i not in skip)
                   for r in rows), key=lambda t: tuple(
                       (x is None, str(x)) for x in t))


def doc_blocks():
    doc = open(DOC, encoding="utf-8").read()
    return [b.split("```", 1)[0] for b in doc.split("```sql")[1:]]


def test_every_example_same_rows(pg, both):
    con, db = both
    blocks = doc_blocks()
    assert len(blocks) >= 12
    nonempty = 0
    for sql in blocks:
        lite = con.execute(sql).fetchall()
        skip = set()
        for snippet, col in DIFFERENT.items():
            if snippet in sql:
                skip.add(columns(con, sql).index(col))
        ours = pg_rows(pg, db, sql)
        assert rows_of(ours, skip) == rows_of(lite, skip), sql
        nonempty += bool(lite)
    # Only the two examples that need a failure of one 30% test may be
    # empty (0.7^7 = 8%), and they are then empty on both.
    assert nonempty >= len(blocks) - 2


def test_box_rollups_made_by_the_trigger(pg, both):
    """The server's trigger made the same box_rollups as the SQLite store
    wrote run by run, and a test's boxes of a day add up to its rollups
    row, row for row."""
    con, db = both
    q = "SELECT day, test_id, box, runs, failures FROM box_rollups"
    lite = sorted(tuple(r) for r in con.execute(q))
    assert lite, "no box_rollups on SQLite"
    ours = sorted(tuple(int(x) if x.lstrip("-").isdigit() else x
                        for x in r) for r in pg_rows(pg, db, q))
    assert ours == lite
    add = ("SELECT count(*) FROM (SELECT day, test_id, sum(runs) AS r, "
           "sum(failures) AS f FROM box_rollups GROUP BY day, test_id) b "
           "FULL JOIN rollups ru USING (day, test_id) "
           "WHERE b.r IS DISTINCT FROM ru.runs "
           "OR b.f IS DISTINCT FROM ru.failures")
    assert con.execute(add.replace("IS DISTINCT FROM", "IS NOT"))\
        .fetchone()[0] == 0
    assert pg_rows(pg, db, add) == [["0"]]


def test_budget_made_by_the_trigger(pg, both):
    """The server's trigger added every copied run's failures to the
    budget, runs alone and incomplete ones too, as the SQLite store did
    run by run: the budget read before 0015-budget15.sql from the failed
    results and their runs."""
    con, db = both
    q = "SELECT day, test_id, runs, wall_us, cpu_us FROM budget"
    lite = sorted(tuple(r) for r in con.execute(q))
    assert lite, "no budget on SQLite"
    ours = sorted(tuple(int(x) for x in r) for r in pg_rows(pg, db, q))
    assert ours == lite
    of_results = ("SELECT r.started_ms / 86400000, res.test_id, count(*), "
                  "sum(coalesce(r.duration_us, 0)), "
                  "sum(coalesce(r.user_us, 0) + coalesce(r.sys_us, 0)) "
                  "FROM results res JOIN runs r ON r.id = res.run_id "
                  "WHERE res.outcome IN (1, 2) GROUP BY 1, 2")
    assert sorted(tuple(int(x) for x in r)
                  for r in pg_rows(pg, db, of_results)) == lite
    kinds = con.execute("SELECT count(DISTINCT r.kind) FROM runs r "
                        "JOIN results res ON res.run_id = r.id "
                        "WHERE res.outcome IN (1, 2)").fetchone()[0]
    assert kinds >= 2, "the evidence has failures of one kind of run only"


def test_failure_rollups_made_by_the_trigger(pg, both):
    """The server's trigger grouped the copied failures per day, test,
    message and signature as the SQLite store did run by run, the runs
    that rates count apart (counted)."""
    con, db = both
    q = ("SELECT day, test_id, counted, message_id, signature, failures, "
         "last_run_id FROM failure_rollups")
    lite = sorted(tuple(r) for r in con.execute(q))
    assert lite, "no failure_rollups on SQLite"
    ours = sorted(tuple(int(x) if x.lstrip("-").isdigit() else x
                        for x in r) for r in pg_rows(pg, db, q))
    assert ours == lite
    assert len({r[3] for r in lite}) >= 2, "failures of one message only"


def test_rollups_made_by_the_trigger(pg, both):
    """The server's trigger made from the copied results the rollups that
    the SQLite store wrote run by run: counts, sums and histograms."""
    con, db = both
    lite = {}
    for r in con.execute("SELECT day, test_id, runs, failures, skips, "
                         "pass_us, fail_us, pass_hist, fail_hist "
                         "FROM rollups"):
        lite[(r[0], r[1])] = list(r[2:7]) + [sqlite2pg.hist(r[7]),
                                             sqlite2pg.hist(r[8])]
    ours = {}
    for r in pg_rows(pg, db, "SELECT day, test_id, runs, failures, skips, "
                     "pass_us, fail_us, (SELECT json_object_agg(i - 1, "
                     "pass_hist[i]) FROM generate_subscripts(pass_hist, 1) "
                     "i WHERE pass_hist[i] IS NOT NULL), (SELECT "
                     "json_object_agg(i - 1, fail_hist[i]) FROM "
                     "generate_subscripts(fail_hist, 1) i WHERE "
                     "fail_hist[i] IS NOT NULL) FROM rollups"):
        def h(j):
            import json
            return {int(k): v for k, v in json.loads(j).items()} if j else {}
        ours[(int(r[0]), int(r[1]))] = [int(x) for x in r[2:7]] + [
            h(r[7]), h(r[8])]
    assert ours == lite
    assert sum(bool(v[5]) for v in lite.values()) >= 10


def test_fleet_checks_run(pg, both):
    """The checks of docs/fleet.md run on the server and answer."""
    _, db = both
    doc = open(os.path.join(ROOT, "docs", "fleet.md"),
               encoding="utf-8").read()
    blocks = [b.split("```", 1)[0] for b in doc.split("```sql")[1:]]
    assert len(blocks) >= 5
    for sql in blocks:
        rows = pg_rows(pg, db, sql)
        assert rows, sql
        if "from_rollups" in sql:
            assert rows[0][1] == rows[0][2] and int(rows[0][1]) > 0, rows


def test_same_names_as_sqlite(pg, both):
    """Every table and view of the SQLite schema is on PostgreSQL with
    every column, in the same order (PostgreSQL may add its own after
    them: runs.box, a view's box), so ad-hoc SQL written for one runs on
    the other. The box's outbox (ship_queue, ship_state) is its own."""
    con, db = both
    names = [r[0] for r in con.execute(
        "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') "
        "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'ship_%'")]
    assert len(names) >= 20
    ours = {}
    for table, col in pg_rows(pg, db, "SELECT table_name, column_name "
                              "FROM information_schema.columns WHERE "
                              "table_schema = 'public' ORDER BY "
                              "table_name, ordinal_position"):
        ours.setdefault(table, []).append(col)
    for name in names:
        cols = [r[1] for r in con.execute("PRAGMA table_info(%s)" % name)]
        assert name in ours, name
        if con.execute("SELECT type FROM sqlite_schema WHERE name = ?",
                       (name,)).fetchone()[0] == "view":
            assert ours[name][:len(cols)] == cols, name
        else:
            assert set(cols) <= set(ours[name]), (name, set(cols) -
                                                  set(ours[name]))
