"""A throwaway PostgreSQL cluster for the tests: initdb and pg_ctl of
Debian's postgresql-15 under a temporary directory, listening on a Unix
socket only, removed afterwards.

initdb refuses to run as root, and CI runs the tests as root: then the
cluster belongs to nobody (runuser), its directory chowned to it. The
superuser is "flaky", with trust on the socket; nothing listens on TCP.

    with Cluster() as pg:
        pg.createdb("x")
        pg.psql("SELECT 1", db="x")
        pg.uri("x")    # postgresql:///x?host=/tmp/flakypg.abc&user=flaky

PG_BIN overrides where initdb, pg_ctl and psql are looked for."""
import os
import shutil
import subprocess
import tempfile

PG_BIN = os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin")
SUPERUSER = "flaky"


def _as_owner():
    """The prefix that runs a server program as the cluster's owner: as
    ourselves unless we are root, which initdb and postgres refuse."""
    if os.geteuid() != 0:
        return []
    return ["runuser", "-u", "nobody", "--"]


class Cluster:
    """One cluster: start() makes and starts it, stop() removes it."""

    def __init__(self, pg_bin=PG_BIN, settings=None):
        self.pg_bin = pg_bin
        self.settings = dict(settings or {})
        self.dir = None
        self.sockdir = None
        self.data = None
        self.log = None

    def _bin(self, name):
        return os.path.join(self.pg_bin, name)

    def _owned(self, path):
        if os.geteuid() == 0:
            shutil.chown(path, "nobody", "nogroup")

    def start(self):
        """initdb, then pg_ctl start -w (it polls the socket with a
        deadline): a few seconds at most. Nothing is left on failure."""
        # Short: a socket path must fit in 107 bytes.
        self.dir = tempfile.mkdtemp(prefix="flakypg.", dir="/tmp")
        try:
            self._make()
            self.pg_ctl("start", "-w", "-t", "60", "-l", self.log)
            self.createdb("flaky")
        except BaseException:
            self.stop()
            raise
        return self

    def _make(self):
        os.chmod(self.dir, 0o755)
        self._owned(self.dir)
        self.sockdir = self.dir
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "log")
        subprocess.run(_as_owner() + [
            self._bin("initdb"), "-D", self.data, "-U", SUPERUSER,
            "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync",
            "--no-instructions"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        opts = {"listen_addresses": "''",
                "unix_socket_directories": "'%s'" % self.sockdir,
                "fsync": "off", "synchronous_commit": "off",
                "full_page_writes": "off", "max_connections": "60",
                "shared_buffers": "128MB"}
        opts.update(self.settings)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            for k, v in opts.items():
                f.write("%s = %s\n" % (k, v))

    def pg_ctl(self, *args):
        """pg_ctl on this cluster (start, stop, restart) as its owner."""
        subprocess.run(_as_owner() + [self._bin("pg_ctl"), "-D", self.data]
                       + list(args), check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)

    def stop(self):
        """Stop at once and remove every file: nothing is kept."""
        if self.data and os.path.exists(os.path.join(self.data,
                                                     "postmaster.pid")):
            try:
                self.pg_ctl("stop", "-m", "immediate", "-w", "-t", "60")
            except subprocess.CalledProcessError:
                pass
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def uri(self, db="flaky", user=SUPERUSER):
        """The libpq URI of a database: socket directory as host."""
        return "postgresql:///%s?host=%s&user=%s" % (db, self.sockdir, user)

    def psql(self, sql, db="flaky", user=SUPERUSER, check=True, args=()):
        """Run SQL through psql (unaligned, tuples only, stop on the first
        error); returns the CompletedProcess, stdout as text."""
        return subprocess.run(
            ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
             "-d", self.uri(db, user)] + list(args),
            input=sql, text=True, capture_output=True, check=check)

    def query(self, sql, db="flaky"):
        """Rows of a query as lists of strings ('|' separated by psql)."""
        out = self.psql(sql, db=db).stdout
        return [line.split("|") for line in out.splitlines() if line]

    def createdb(self, name):
        """A new empty database owned by the superuser."""
        self.psql('CREATE DATABASE "%s"' % name, db="postgres")
        return self.uri(name)
