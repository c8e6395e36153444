"""Copy a flaky SQLite database into a migrated PostgreSQL one, table by
table through psql's COPY, ids kept; the rollups and the budget of the
stored results are not copied but made by the server's trigger from the
results, so that comparing the two checks the trigger too. A stand-in
for the shipper in the tests."""
import sqlite3
import zlib

# Tables in the order their references need; the columns both have.
TABLES = ["targets", "tests", "messages", "outputs", "runs", "budget",
          "results", "attempts", "quarantine", "store_meta", "scan_findings",
          "polluters"]


def _text(v):
    """A value in COPY's text format."""
    if v is None:
        return "\\N"
    if isinstance(v, bytes):
        return "\\\\x" + v.hex()
    s = str(v)
    return (s.replace("\\", "\\\\").replace("\t", "\\t")
            .replace("\n", "\\n").replace("\r", "\\r"))


def _columns(con, table):
    return [r[1] for r in con.execute("PRAGMA table_info(%s)" % table)]


def _rows(con, table, cols):
    """The rows to copy, adapted: runs get their box and local id, results
    their run's start, outputs their content itself (PostgreSQL keeps it
    raw and compresses it on its own)."""
    if table == "runs":
        # runs.box (NULL: stored before boxes were recorded) on SQLite,
        # never NULL on the server
        sel = ["coalesce(box, 'box-a')" if c == "box" else c for c in cols]
        if "box" not in cols:
            cols, sel = cols + ["box"], sel + ["'box-a'"]
        cols, sel = cols + ["local_id"], sel + ["id"]
        sql = "SELECT %s FROM runs" % ", ".join(sel)
    elif table == "budget":
        # only the share of runs pruned (their results gone): the trigger
        # adds the results' share as they arrive
        sql = ("SELECT b.day, b.test_id, b.runs - coalesce(x.runs, 0), "
               "b.wall_us - coalesce(x.wall, 0), "
               "b.cpu_us - coalesce(x.cpu, 0) FROM budget b LEFT JOIN "
               "(SELECT r.started_ms / 86400000 AS day, res.test_id, "
               "count(*) AS runs, sum(coalesce(r.duration_us, 0)) AS wall, "
               "sum(coalesce(r.user_us, 0) + coalesce(r.sys_us, 0)) AS cpu "
               "FROM results res JOIN runs r ON r.id = res.run_id "
               "WHERE res.outcome IN (1, 2) GROUP BY 1, 2) x "
               "ON x.day = b.day AND x.test_id = b.test_id "
               "WHERE b.runs > coalesce(x.runs, 0)")
        cols = ["day", "test_id", "runs", "wall_us", "cpu_us"]
    elif table == "results":
        cols = ["started_ms"] + cols
        sql = ("SELECT r.started_ms, res.* FROM results res "
               "JOIN runs r ON r.id = res.run_id")
    else:
        sql = "SELECT * FROM %s" % table
    rows = con.execute(sql).fetchall()
    if table == "outputs":
        i, j = cols.index("data"), cols.index("size")
        rows = [tuple(zlib.decompress(v) if k == i and len(v) != r[j]
                      else v for k, v in enumerate(r)) for r in rows]
    return cols, rows


def copy(sqlite_path, pg, db):
    """Copy every table of TABLES; partitions are made for the results'
    time range first, as every writer does."""
    con = sqlite3.connect(sqlite_path)
    lo, hi = con.execute("SELECT min(started_ms), max(started_ms) "
                         "FROM runs").fetchone()
    script = ["SELECT flaky_make_partitions(%d, %d);" % (lo, hi)]
    for table in TABLES:
        cols, rows = _rows(con, table, _columns(con, table))
        if not rows:
            continue
        script.append("\\copy %s (%s) FROM STDIN" % (table, ", ".join(cols)))
        script.extend("\t".join(_text(v) for v in r) for r in rows)
        script.append("\\.")
    con.close()
    pg.psql("\n".join(script) + "\n", db=db)


def hist(blob):
    """A SQLite histogram blob as {bucket: count}: (bucket byte, count
    LEB128 varint) pairs (lib/store/hist.c)."""
    out, i = {}, 0
    while blob and i < len(blob):
        b, v, shift = blob[i], 0, 0
        i += 1
        while True:
            v |= (blob[i] & 0x7F) << shift
            shift += 7
            i += 1
            if not blob[i - 1] & 0x80:
                break
        out[b] = v
    return out
