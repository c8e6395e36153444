"""A git that hangs (a lock, a network file system) must not stall flakyd's
loop: git runs asynchronously with a timeout, is killed with its process
group, and the run goes on without a revision. flakyctl analyze, which asks
git synchronously, is bounded by the same timeout."""
import os
import subprocess
import time

from conftest import FLAKYCTL, PYTHON, UNITTEST_OK, query, unittest_target, \
    wait_for

TIMEOUT_MS = 3000

# A git that never answers, and leaves a child holding its stdout: both
# must be gone after the timeout.
HUNG_GIT = """#!/bin/sh
echo $$ >> %(pids)s
sleep 3600 &
echo $! >> %(pids)s
wait
"""


def hung_git(tmp):
    """A directory with the hung git, and the file its pids go to."""
    bindir = os.path.join(tmp, "bin")
    os.mkdir(bindir)
    pids = os.path.join(tmp, "git.pids")
    git = os.path.join(bindir, "git")
    with open(git, "w") as f:
        f.write(HUNG_GIT % {"pids": pids})
    os.chmod(git, 0o755)
    return bindir, pids


def odd_repo(path):
    """A work tree whose .git only git can read (a reftable repository):
    the revision lookup must ask git."""
    g = os.path.join(path, ".git")
    for sub in ("objects", "refs", "reftable"):
        os.makedirs(os.path.join(g, sub))
    with open(os.path.join(g, "HEAD"), "w") as f:
        f.write("ref: refs/heads/main\n")
    with open(os.path.join(path, "test_ok.py"), "w") as f:
        f.write(UNITTEST_OK)


def alive(pid):
    """A live process (a zombie is not)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def read_pids(path):
    try:
        with open(path) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def test_hung_git_does_not_stall_the_schedule(daemon, monkeypatch):
    d = daemon
    bindir, pids = hung_git(d.dir)
    repo = os.path.join(d.dir, "repo")
    os.mkdir(repo)
    odd_repo(repo)
    d.write("test_ok.py", UNITTEST_OK)
    monkeypatch.setenv("PATH", bindir + ":" + os.environ["PATH"])
    monkeypatch.setenv("FLAKY_GIT_TIMEOUT_MS", str(TIMEOUT_MS))
    d.write_config("targets:\n" + unittest_target("fast", "every 1s") +
                   unittest_target("slow", None, extra="    dir: repo\n"))
    d.start()
    try:
        _hang(d, pids)
    finally:
        for pid in read_pids(pids):
            try:
                os.kill(pid, 9)
            except OSError:
                pass


def _hang(d, pids):

    def fast_runs():
        return len(d.runs("t.name = 'fast' AND r.status = 'done'"))
    wait_for("a first scheduled run", fast_runs)
    p = subprocess.run([FLAKYCTL, "--config", d.config, "run", "slow"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    # git was asked, and hangs.
    wait_for("the hung git to start", lambda: len(read_pids(pids)) == 2)
    t0 = time.monotonic()
    before = fast_runs()

    def slow_done():
        return query(d.db, "SELECT r.status, r.revision, r.tests FROM runs "
                     "r JOIN targets t ON t.id = r.target_id WHERE "
                     "t.name = 'slow' AND r.status != 'running'")
    rows = wait_for("the slow target's run", slow_done,
                    timeout=TIMEOUT_MS / 1000 + 20)
    waited = time.monotonic() - t0
    assert rows == [("done", None, 2)]
    # It waited for git's timeout, not less ...
    assert waited > TIMEOUT_MS / 1000 - 1.0, waited
    # ... and the every-second schedule kept firing meanwhile.
    assert fast_runs() - before >= 2, (before, fast_runs())
    assert "target slow: git did not answer within %d ms" % TIMEOUT_MS in \
        d.logtext()
    # Neither git nor its child is left.
    for pid in read_pids(pids):
        wait_for("git process %d to be gone" % pid, lambda: not alive(pid))
    assert d.stop() == 0


def test_analyze_is_bounded_by_the_git_timeout(tmp_path):
    bindir, pids = hung_git(str(tmp_path))
    repo = str(tmp_path / "repo")
    os.mkdir(repo)
    odd_repo(repo)
    env = dict(os.environ, NO_COLOR="1", FLAKY_GIT_TIMEOUT_MS="1000",
               PATH=bindir + ":" + os.environ["PATH"])
    env.pop("FLAKY_DB", None)
    env.pop("FLAKY_CONFIG", None)
    db = str(tmp_path / "flaky.db")
    try:
        p = subprocess.run([FLAKYCTL, "--db", db, "analyze", "--runs", "1",
                            "--target", "odd", "--", PYTHON, "-m",
                            "unittest", "-v", "test_ok"], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        assert "git did not answer within 1000 ms" in p.stderr, p.stderr
        assert query(db, "SELECT status, revision FROM runs") == \
            [("done", None)]
        for pid in read_pids(pids):
            wait_for("git process %d to be gone" % pid,
                     lambda: not alive(pid))
        assert len(read_pids(pids)) == 2
    finally:
        for pid in read_pids(pids):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
