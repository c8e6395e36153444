#!/bin/sh
# kill -9 flakyd during runs, again and again (issue 14), then check what
# the database holds:
#   - PRAGMA integrity_check is ok and no run is left 'running',
#   - every finished run is there exactly once: each run's pytest writes a
#     token (a test id, test_token[HEX]) to a log outside the database when
#     it starts and when it ends; a token is in at most one run, every
#     'done' run has its token and the log says that run ended,
#   - nothing is lost: every run that started and is not 'done' is counted
#     by a run marked 'interrupted' (or another end state),
#   - processes of a dead daemon's runs: how many were alive at each kill
#     and how long they lingered after it (flakyd's guard ends them);
#     checked with --linger-max SECONDS.
# Several targets run a pytest demo suite every second; each kill comes at
# a random (seeded) moment while a run is in flight; flakyd is restarted
# at once. Prints the figures; with --json FILE also writes them there.
# Exits 1 when a check fails.
#   scripts/killloop.sh [-n KILLS] [-s SEED] [-t TARGETS] [--flakyd PATH]
#                       [--json FILE] [--keep DIR] [--linger-max SECONDS]
set -eu
cd "$(dirname "$0")/.."
exec /usr/bin/python3 - "$@" <<'PY'
import argparse, atexit, json, os, random, shutil, signal, socket, sqlite3
import subprocess, sys, tempfile, time

ap = argparse.ArgumentParser(prog="killloop.sh")
ap.add_argument("-n", "--kills", type=int, default=50)
ap.add_argument("-s", "--seed", type=int, default=1)
ap.add_argument("-t", "--targets", type=int, default=3)
ap.add_argument("--flakyd", default="build/daemon/flakyd")
ap.add_argument("--json")
ap.add_argument("--keep")
ap.add_argument("--linger-max", type=float)
a = ap.parse_args()
rng = random.Random(a.seed)
flakyd = os.path.abspath(a.flakyd)
demo = os.path.abspath("examples/demo-pytest/test_shop.py")
work = a.keep or tempfile.mkdtemp(prefix="flaky-killloop.")
os.makedirs(work, exist_ok=True)
suite = os.path.join(work, "suite")
db = os.path.join(work, "flaky.db")
sock = os.path.join(work, "flakyd.sock")
tokens = os.path.join(work, "tokens.log")
daemon_log = open(os.path.join(work, "flakyd.log"), "a")
os.makedirs(suite, exist_ok=True)
os.makedirs(os.path.join(work, "tmp"), exist_ok=True)
shutil.copy(demo, suite)

# The token: one per pytest session, in the log at its start and its end.
with open(os.path.join(suite, "test_token.py"), "w") as f:
    f.write("""import atexit, os, random, time, uuid
import pytest
TOKEN = uuid.uuid4().hex
def _log(what):
    with open(os.environ["KILLLOOP_LOG"], "a") as f:
        f.write("%s %s %s\\n" % (what, TOKEN, os.environ["KILLLOOP_TARGET"]))
_log("start")
atexit.register(_log, "end")
@pytest.mark.parametrize("tok", [TOKEN], ids=[TOKEN])
def test_token(tok):
    # runs of uneven length, so that kills find them at every stage
    time.sleep(random.random() * 0.8)
""")
with open(os.path.join(work, "flaky.yaml"), "w") as f:
    f.write("database: %s\nsocket: %s\njobs: %d\nkill_grace: 1s\n"
            "timezone: UTC\ntargets:\n" % (db, sock, a.targets))
    for i in range(a.targets):
        f.write("  - name: t%d\n    command: [/usr/bin/pytest, -v, -p, "
                "no:cacheprovider, -p, no:random_order, .]\n    dir: %s\n"
                "    schedule: \"every 1s\"\n    timeout: 60s\n"
                "    env: {KILLLOOP_LOG: %s, KILLLOOP_TARGET: t%d}\n" %
                (i, suite, tokens, i))


def ticks(pid):
    """user + system CPU ticks of pid (0 when it is gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read().rsplit(")", 1)[1].split()
        return int(s[11]) + int(s[12])
    except (OSError, IndexError):
        return 0


def starttime(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError):
        return None


def run_procs():
    """Processes of runs: those whose command line names our suite."""
    out = set()
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if int(p) != os.getpid() and b"/usr/bin/pytest" in cmd:
            try:
                if os.readlink("/proc/%s/cwd" % p) == suite:
                    out.add((int(p), starttime(int(p))))
            except OSError:
                pass
    return out


def answers():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(sock)
        s.sendall(b"status\n")
        return b'"ok":true' in s.recv(65536)
    except OSError:
        return False
    finally:
        s.close()


def start():
    """flakyd started and answering; retried while a dead one's child
    still holds the database lock (flakyd exits 2 then)."""
    global live
    env = dict(os.environ, TMPDIR=os.path.join(work, "tmp"))
    for k in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "JOURNAL_STREAM"):
        env.pop(k, None)
    deadline = time.monotonic() + 30
    tries = 0
    while True:
        tries += 1
        p = subprocess.Popen([flakyd, "--config",
                              os.path.join(work, "flaky.yaml"),
                              "--foreground"], stdout=daemon_log,
                             stderr=subprocess.STDOUT, env=env)
        while p.poll() is None and not answers():
            if time.monotonic() > deadline:
                p.kill()
                sys.exit("killloop: flakyd did not answer in 30 s")
            reap_strays(time.monotonic())
            time.sleep(0.02)
        if p.poll() is None:
            live = p
            return p, tries
        if time.monotonic() > deadline:
            sys.exit("killloop: flakyd exits %d, see %s/flakyd.log" %
                     (p.returncode, work))
        time.sleep(0.1)


live = None		# the daemon of the moment


def bye(sig, frame):
    raise SystemExit("killloop: signal %d" % sig)


def cleanup():
    """Whatever is left of ours: the daemon, its runs, the directory."""
    if live is not None and live.poll() is None:
        live.kill()
        live.wait()
    for pid, _ in run_procs():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)


signal.signal(signal.SIGTERM, bye)
signal.signal(signal.SIGINT, bye)
atexit.register(cleanup)
cpu = 0
strays = {}		# (pid, start) -> time of the kill that orphaned it
lingered = []		# seconds each lived past its daemon's kill
at_kill = []		# run processes alive at each kill
retries = 0
hz = os.sysconf("SC_CLK_TCK")
t_start = time.monotonic()
load = []


def reap_strays(now):
    alive = run_procs()
    for k, t in list(strays.items()):
        if k not in alive:
            lingered.append(now - t)
            del strays[k]


def done():
    """Runs stored 'done' so far (read-only, never holding a lock)."""
    try:
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=1)
        try:
            return con.execute("SELECT count(*) FROM runs WHERE status = "
                               "'done'").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def ours():
    """Processes of the live daemon's runs (not of a dead one's)."""
    return run_procs() - set(strays)


def wait(cond, secs):
    deadline = time.monotonic() + secs
    while not cond() and time.monotonic() < deadline:
        reap_strays(time.monotonic())
        time.sleep(0.02)


for i in range(a.kills):
    p, tries = start()
    retries += tries - 1
    # a run of this daemon finished (up to 20 s), another one in flight
    # (up to 5 s), then a random moment within it
    n = done()
    wait(lambda: done() > n, 20)
    wait(ours, 5)
    end = time.monotonic() + rng.uniform(0, 1.5)
    wait(lambda: time.monotonic() >= end, 2)
    wait(ours, 5)	# the kill finds a run in flight
    c = ticks(p.pid)
    procs = ours()
    p.send_signal(signal.SIGKILL)
    p.wait()
    now = time.monotonic()
    cpu += c
    load.append(os.getloadavg()[0])
    at_kill.append(len(procs))
    for k in procs:
        strays[k] = now
    reap_strays(now)

# A last daemon, run to a clean stop: it marks what the last kill left.
p, tries = start()
retries += tries - 1
deadline = time.monotonic() + 30
while strays and time.monotonic() < deadline:
    reap_strays(time.monotonic())
    time.sleep(0.05)
left = len(strays)
for pid, _ in strays:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
t_ticks = ticks(p.pid)
p.send_signal(signal.SIGTERM)
p.wait(30)
cpu += t_ticks
wall = time.monotonic() - t_start

con = sqlite3.connect(db)
integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
status = dict(con.execute("SELECT status, count(*) FROM runs GROUP BY "
                          "status").fetchall())
interrupted = dict(con.execute(
    "SELECT t.name, count(*) FROM runs r JOIN targets t ON t.id = "
    "r.target_id WHERE r.status = 'interrupted' GROUP BY t.name").fetchall())
per_run = con.execute(
    "SELECT r.id, r.status, t.name FROM results x JOIN runs r ON r.id = "
    "x.run_id JOIN tests t ON t.id = x.test_id WHERE t.name LIKE "
    "'%test_token[%'").fetchall()
done_runs = {r for (r,) in con.execute("SELECT id FROM runs WHERE status "
                                       "= 'done'")}
con.close()
log, target_of = {}, {}
for line in open(tokens):
    what, tok, target = line.split()
    log.setdefault(tok, set()).add(what)
    target_of[tok] = target
seen = {}
for rid, st, name in per_run:
    tok = name[name.index("[") + 1:name.rindex("]")]
    seen.setdefault(tok, []).append((rid, st))
dups = sum(1 for v in seen.values() if len(v) > 1)
done_tokens = {t for t, v in seen.items() if any(s == "done" for _, s in v)}
done_no_token = len(done_runs - {r for v in seen.values() for r, _ in v})
not_ended = sum(1 for t in done_tokens if "end" not in log.get(t, ()))
started = {t for t, w in log.items() if "start" in w}
# Per target: each pytest session that started and has no 'done' run
# must be counted by an 'interrupted' run of its target.
unfinished, lost = 0, 0
for i in range(a.targets):
    n = sum(1 for t in started - done_tokens if target_of[t] == "t%d" % i)
    unfinished += n
    lost += max(0, n - interrupted.get("t%d" % i, 0))
f = {
    "kills": a.kills, "seed": a.seed, "targets": a.targets,
    "wall_s": round(wall, 1), "restart_retries": retries,
    "flakyd_cpu_s": round(cpu / hz, 2),
    "loadavg_max": round(max(load or [0]), 2),
    "runs": sum(status.values()), "status": status,
    "integrity": integrity,
    "running_left": status.get("running", 0),
    "pytest_sessions": len(started),
    "duplicates": dups, "done_without_token": done_no_token,
    "done_not_ended": not_ended,
    "started_not_done": unfinished, "lost": lost,
    "run_procs_at_kill": sum(at_kill),
    "kills_with_run_procs": sum(1 for n in at_kill if n),
    "strays_lingered_max_s": round(max(lingered or [0]), 2),
    "strays_lingered_mean_s": round(sum(lingered) / len(lingered), 2)
    if lingered else 0,
    "strays_left_after_30s": left,
}
f["flakyd_cpu_ms_per_run"] = round(1000 * f["flakyd_cpu_s"] /
                                   max(1, f["runs"]), 2)
checks = {
    "integrity_check ok": integrity == "ok",
    "no run left running": f["running_left"] == 0,
    "no finished run twice": dups == 0,
    "every done run has its token": done_no_token == 0,
    "every done run ended": not_ended == 0,
    "nothing lost": lost == 0,
}
if a.linger_max is not None:
    checks["no run outlives its daemon by %g s" % a.linger_max] = \
        left == 0 and max(lingered or [0]) <= a.linger_max
f["checks"] = checks
for k, v in f.items():
    if k != "checks":
        print("%-24s %s" % (k, v))
for k, v in checks.items():
    print("%-4s %s" % ("ok" if v else "FAIL", k))
if a.json:
    with open(a.json, "w") as out:
        json.dump(f, out, indent=1)
sys.exit(0 if all(checks.values()) else 1)
PY
