"""Runs written straight to the server (--db postgresql://) keep their
output as the content itself, as docs/fleet.md says the server holds it,
so that the run page and /api/v1/run/ID read it; a server holding
outputs an older flaky's direct writes deflated has them made whole by
migration 10, whose CHECK then keeps every writer to it (issue 28, item
8)."""
import json
import subprocess
import zlib

from serving import FLAKYCTL, Serve, get

SUITE = """import unittest
class T(unittest.TestCase):
    def test_loud(self):
        print("the same line, over and over, deflates well " * 40)
    def test_fails(self):
        self.assertEqual(2, 3)
"""


def analyze(db, proj, runs=2):
    p = subprocess.run([FLAKYCTL, "--db", db, "analyze", "--runs", str(runs),
                        "--target", "proj", "--", "/usr/bin/python3", "-m",
                        "unittest", "-v", "t.py"], cwd=str(proj),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 1), p.stderr


def dbname(uri):
    return uri.split("///", 1)[1].split("?", 1)[0]


def outputs(pg, db):
    """(id, size, the bytes stored) of every output with content."""
    return [(int(i), int(n), bytes.fromhex(h)) for i, n, h in pg.query(
        "SELECT id, size, encode(data, 'hex') FROM outputs WHERE size > 0 "
        "ORDER BY id", db=db)]


def first_run(pg, db):
    return int(pg.query("SELECT min(id) FROM runs", db=db)[0][0])


def check_pages(pgdb, run, tmp_path):
    """The run page and the API's run read the kept output."""
    s = Serve(pgdb, tmp_path)
    try:
        st, body = get("%s/run/%d" % (s.url, run))
        assert st == 200, body
        assert "deflates well" in body
        st, body = get("%s/api/v1/run/%d" % (s.url, run))
        assert st == 200, body
        assert "deflates well" in json.dumps(json.loads(body))
    finally:
        assert s.stop() == 0, s.logtext()


def test_direct_writes_keep_output_whole(pg, pgdb, tmp_path):
    db = dbname(pgdb)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "t.py").write_text(SUITE)
    analyze(pgdb, proj)
    outs = outputs(pg, db)
    assert outs and max(n for _, n, _ in outs) > 1000, outs
    for i, n, data in outs:
        assert len(data) == n, "output %d stored deflated" % i
    assert any(b"deflates well" in d for _, _, d in outs)
    check_pages(pgdb, first_run(pg, db), tmp_path)


def test_deflated_outputs_made_whole_by_migration(pg, pgdb, tmp_path):
    """What flaky before schema/pg/0010 left on a server: the outputs of
    direct writes deflated. The next flaky to connect inflates them."""
    db = dbname(pgdb)
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "t.py").write_text(SUITE)
    analyze(pgdb, proj)
    whole = outputs(pg, db)
    # Back to schema 9, with the outputs as the old writer left them.
    pg.psql("ALTER TABLE outputs DROP CONSTRAINT outputs_raw; "
            "DELETE FROM schema_version WHERE version >= 10", db=db)
    for i, n, data in whole:
        z = zlib.compress(data)
        assert len(z) < n
        pg.psql("UPDATE outputs SET data = decode('%s', 'hex') WHERE id = "
                "%d" % (z.hex(), i), db=db)
    assert all(len(d) < n for _, n, d in outputs(pg, db))
    p = subprocess.run([FLAKYCTL, "--db", pgdb, "stats"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert pg.query("SELECT name FROM schema_version WHERE version = 10",
                    db=db) == [["0010-outputs28.sql"]]
    assert outputs(pg, db) == whole
    check_pages(pgdb, first_run(pg, db), tmp_path)
    # From now on no writer may store it otherwise.
    r = pg.psql("INSERT INTO outputs (hash, size, data) VALUES (1, 100, "
                "'\\x789c')", db=db, check=False)
    assert r.returncode != 0 and "outputs_raw" in r.stderr
