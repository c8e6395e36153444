"""A git that hangs (issue 14): a target whose .git flaky cannot read by
itself (HEAD is not a ref or an id), so the revision lookup asks git, and
the git on flakyd's PATH never answers. The other target's schedule keeps
firing, the socket answers, and the run is stored without a revision."""
import os
import signal
import time

import pytest

from conftest import query, wait_for

FAKE_GIT = """#!/bin/sh
echo $$ >> %s
exec sleep 600
"""


@pytest.fixture
def hung_git(daemon):
    d = daemon
    pids = os.path.join(d.dir, "git.pids")
    os.makedirs(os.path.join(d.dir, "bin"))
    d.write("bin/git", FAKE_GIT % pids, 0o755)
    repo = os.path.join(d.dir, "repo", ".git")
    os.makedirs(repo)
    d.write("repo/.git/HEAD", "not a ref\n")
    d.write_config("targets:\n"
                   "  - name: repo\n    command: [/bin/true]\n"
                   "    dir: %s\n    schedule: \"every 1s\"\n"
                   "  - name: other\n    command: [/bin/true]\n"
                   "    dir: /\n    schedule: \"every 1s\"\n"
                   % os.path.dirname(repo), jobs=2)
    yield d, pids
    d.kill()
    if os.path.exists(pids):
        for pid in open(pids).read().split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass


def runs(d, target, where="1"):
    return query(d.db, "SELECT r.id, r.status, r.revision FROM runs r JOIN "
                 "targets t ON t.id = r.target_id WHERE t.name = ? AND %s"
                 % where, (target,))


def test_hung_git_stalls_nothing(hung_git):
    d, pids = hung_git
    d.start(env={"PATH": os.path.join(d.dir, "bin") + ":" +
                 os.environ.get("PATH", "/usr/bin:/bin")})
    wait_for("flakyd to ask git", lambda: os.path.exists(pids), 10)
    t0 = time.monotonic()
    n0 = len(runs(d, "other"))
    # The other target goes on firing every second while git hangs ...
    wait_for("3 more runs of the other target", lambda: len(
        runs(d, "other", "r.status = 'done'")) >= n0 + 3, 8)
    # ... and the socket answers.
    assert d.ask("status", timeout=2)["ok"] is True
    assert time.monotonic() - t0 < 10
    # The lookup gives up (its time limit) and the run is stored without a
    # revision.
    rows = wait_for("a run of the repo target", lambda: runs(
        d, "repo", "r.status = 'done'"), 60)
    assert rows[0][2] is None, rows
    assert d.stop() == 0
