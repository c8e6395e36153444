"""kill -9 of flakyd while it ships, 20 times: afterwards every finished
local run is on the server exactly once, with all its results. The kills
are placed by what the server shows (pg_stat_activity), not by the clock:
in a batch's COPYs, in its INSERTs, just after a batch committed
(before the box took it off its queue, or just after), and while the
box connects."""
import subprocess

from shipd import ShipDaemon, assert_exactly_once, dbname, make_db, \
    wait_for

KILLS = 20


class Watcher:
    """One psql kept open, so that the box's phases (a few tens of ms
    each) can be watched without starting a process per look."""

    def __init__(self, pg, db):
        self.db = db
        self.p = subprocess.Popen(
            ["psql", "-X", "-q", "-A", "-t", "-d", pg.uri("postgres")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, sql):
        self.p.stdin.write(sql + ";\n\\echo --end--\n")
        self.p.stdin.flush()
        out = []
        for line in self.p.stdout:
            if line.strip() == "--end--":
                return out
            out.append(line.rstrip("\n"))
        raise AssertionError("psql ended")

    def shipper_query(self):
        """The last statement of the box's connection while it is inside
        a batch's transaction ('' outside one): a COPY while it streams or
        reads its SQLite between COPYs, an INSERT while the server moves
        the rows."""
        rows = self.ask("SELECT query FROM pg_stat_activity WHERE datname "
                        "= '%s' AND application_name = 'flaky' AND "
                        "xact_start IS NOT NULL" % self.db)
        return rows[0] if rows else ""

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def server_count(pg, db):
    """Runs on the server; 0 before the box made the schema."""
    if pg.query("SELECT to_regclass('runs') IS NULL", db=db)[0][0] == "t":
        return 0
    return int(pg.query("SELECT count(*) FROM runs", db=db)[0][0])


def test_kill_9_while_shipping(pg, pgdb, tmp_path):
    db = dbname(pgdb)
    d = ShipDaemon(tmp_path)
    try:
        d.configure(pgdb)
        # 15 batches of 1,000 runs. Before the last kill, the 5 kills
        # after a commit let at least 5 commit, and a kill placed at an
        # INSERT may land just after its commit: at most 5 more, and
        # rarely one more than waited for, on a loaded machine. So work
        # is always left for the last start.
        make_db(d.db, 15000, 20)
        w = Watcher(pg, db)
        placed = {"copy": 0, "insert": 0, "committed": 0, "connecting": 0}
        for i in range(KILLS):
            before = server_count(pg, db)
            d.start()
            how = ("copy", "insert", "committed", "connecting")[i % 4]
            if how == "copy":
                wait_for("a COPY", lambda: w.shipper_query()
                         .startswith("COPY"), timeout=30, step=0.002)
            elif how == "insert":
                wait_for("an INSERT", lambda: "INSERT" in
                         w.shipper_query(), timeout=30, step=0.002)
            elif how == "committed":
                wait_for("a batch committed", lambda: server_count(pg, db)
                         > before, timeout=30, step=0.01)
            placed[how] += 1
            d.kill()
        w.close()
        assert placed == {"copy": 5, "insert": 5, "committed": 5,
                          "connecting": 5}
        assert server_count(pg, db) < 15000, "shipped before the last kill"
        d.start()
        d.wait_fleet("the backlog shipped", lambda f: f["backlog"] == 0 and
                     f["state"] == "up", timeout=120)
        assert_exactly_once(pg, db, "box-a", d)
    finally:
        d.cleanup()
