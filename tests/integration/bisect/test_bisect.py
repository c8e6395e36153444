"""flakyctl bisect on a generated repository of 32 commits in which commit
19 makes test_flaky fail one run in five (make_repo.py): the commit named,
its evidence stored, the user's tree untouched, the runs compared with a
fixed 100 per revision (docs/performance.md)."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import make_repo  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FLAKYCTL = os.environ.get("FLAKYCTL", os.path.join(ROOT, "build", "cli", "flakyctl"))
TEST = "tests/test_demo.py::test_flaky"
# rerunfailures 10.2 fails to load without xdist: blocked with it
PYTEST = ["pytest", "-p", "no:random_order", "-p", "no:xdist",
          "-p", "no:rerunfailures"]


class Repo:
    def __init__(self, base):
        self.path = str(base / "repo")
        self.hashes = make_repo.make(self.path)
        self.db = str(base / "flaky.db")
        self.tmp = str(base / "tmp")
        os.mkdir(self.tmp)
        self.env = dict(os.environ, TMPDIR=self.tmp, NO_COLOR="1",
                        BISECT_DEMO_COUNTER=str(base / "counter"))
        for k in ("FLAKY_DB", "FLAKY_CONFIG", "FLAKY_TEST", "PYTEST_ADDOPTS"):
            self.env.pop(k, None)

    def args(self, *args):
        return [FLAKYCTL, "--db", self.db] + list(args)

    def ctl(self, *args, timeout=600):
        return subprocess.run(self.args(*args), cwd=self.path, env=self.env,
                              capture_output=True, text=True, timeout=timeout)

    def git(self, *args):
        return subprocess.run(["git", "-C", self.path] + list(args),
                              check=True, capture_output=True,
                              text=True).stdout

    def assert_untouched(self, status=""):
        """The user's tree, index, HEAD: as made; no worktree left."""
        assert self.git("status", "--porcelain", "--ignored") == status
        assert self.git("rev-parse", "HEAD").strip() == self.hashes[-1]
        assert self.git("symbolic-ref", "HEAD").strip() == "refs/heads/main"
        assert self.git("worktree", "list", "--porcelain").count(
            "worktree ") == 1
        assert not os.path.exists(os.path.join(self.path, ".git", "worktrees"))
        assert os.listdir(self.tmp) == []


@pytest.fixture
def repo(tmp_path):
    return Repo(tmp_path)


def test_names_commit_19(repo):
    p = repo.ctl("--format", "json", "bisect", TEST, "--good",
                 repo.hashes[0], "--bad", "main", "--", *PYTEST)
    assert p.returncode == 0, (p.stdout, p.stderr)
    out = json.loads(p.stdout)
    assert out["first_flaky"]["revision"] == repo.hashes[18]
    assert out["first_flaky"]["subject"] == "commit 19"
    assert out["alone"] is True
    assert out["candidates"] == 31
    # the rate at bad: 3 failures in 15 runs, fixed by the counter
    assert (out["bad_failures"], out["bad_runs"]) == (3, 15)
    assert out["rate_from"] == "measured"
    assert out["passes_needed"] == 14
    revs = {r["revision"]: r for r in out["revisions"]}
    for i, h in enumerate(repo.hashes[1:], start=1):
        if h not in revs:
            continue
        r = revs[h]
        if i >= 18:
            assert r["verdict"] == "flaky" and r["failures"] >= 1, r
        else:
            assert r["verdict"] == "not flaky", r
            assert (r["runs"], r["failures"]) == (14, 0), r
    assert revs[repo.hashes[17]]["verdict"] == "not flaky"
    assert out["runs"] == sum(r["runs"] for r in out["revisions"])
    assert out["fixed_runs"] == 100 * len(out["revisions"])
    assert out["ratio"] < 0.25
    print("bisect: %d runs over %d revisions tested; fixed 100 each: %d; "
          "ratio %.3f" % (out["runs"], len(out["revisions"]),
                          out["fixed_runs"], out["ratio"]))

    # stored like any other run: its revision, trigger bisect, the
    # evidence per revision as printed, counted in no rate
    db = sqlite3.connect(repo.db)
    rows = db.execute(
        "SELECT ru.revision, count(*), sum(r.outcome IN (1, 2)), "
        "min(ru.incomplete), min(ru.kind) FROM runs ru "
        "JOIN results r ON r.run_id = ru.id JOIN tests t ON t.id = r.test_id "
        "WHERE ru.trigger = 'bisect' AND t.name = ? GROUP BY ru.revision",
        (TEST,)).fetchall()
    db.close()
    stored = {h: (n, f) for h, n, f, _, _ in rows}
    assert stored == {h: (r["runs"], r["failures"]) for h, r in revs.items()}
    assert all(inc.startswith("bisect:") for _, _, _, inc, _ in rows)
    assert all(kind == "alone" for _, _, _, _, kind in rows)
    rep = json.loads(repo.ctl("--format", "json", "report").stdout)
    assert rep["tests"] == [], rep
    repo.assert_untouched()


def test_stored_rate(repo):
    """Runs stored at bad (analyze, 10 runs: 2 failures) give the rate;
    bisect measures nothing there."""
    p = repo.ctl("analyze", "--runs", "10", "--", *PYTEST, TEST)
    assert p.returncode == 0, (p.stdout, p.stderr)
    status = repo.git("status", "--porcelain", "--ignored")  # analyze's cache
    p = repo.ctl("--format", "json", "bisect", TEST, "--good", "HEAD~31",
                 "--bad", "HEAD", "--", *PYTEST)
    assert p.returncode == 0, (p.stdout, p.stderr)
    out = json.loads(p.stdout)
    assert out["rate_from"] == "stored"
    assert (out["bad_failures"], out["bad_runs"]) == (2, 10)
    assert out["passes_needed"] == 14
    assert out["first_flaky"]["revision"] == repo.hashes[18]
    assert repo.hashes[-1] not in [r["revision"] for r in out["revisions"]]
    # the analyze runs still count, the bisect runs do not
    rep = json.loads(repo.ctl("--format", "json", "report").stdout)
    assert [(t["test"], t["runs"], t["failures"]) for t in rep["tests"]
            if t["test"] == TEST] == [(TEST, 10, 2)], rep
    repo.assert_untouched(status)


def test_table(repo):
    """The table names the commit with the number of passes derived
    (commits 18 to 20: few runs)."""
    p = repo.ctl("bisect", TEST, "--good", repo.hashes[17], "--bad",
                 repo.hashes[19], "--", *PYTEST)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert "3 of 15 runs failed (p = 0.200): 14 passes in a row" in p.stdout
    assert ("first flaky revision: %s commit 19" % repo.hashes[18]) in p.stdout
    assert "a fixed 100 per revision tested" in p.stdout
    assert "2 revisions after %.12s, run alone" % repo.hashes[17] in p.stdout
    assert "runs: " in p.stdout and "(ratio " in p.stdout
    repo.assert_untouched()


def test_interrupt(repo):
    """^C during a run: the worktree goes, the runs so far are kept."""
    proc = subprocess.Popen(repo.args("bisect", TEST, "--good", "HEAD~31",
                                      "--bad", "HEAD", "--", *PYTEST),
                            cwd=repo.path, env=repo.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 60
    runs = 0
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.exists(repo.db):
            db = sqlite3.connect(repo.db)
            try:
                runs = db.execute("SELECT count(*) FROM runs WHERE status "
                                  "!= 'running'").fetchone()[0]
            except sqlite3.OperationalError:
                runs = 0
            db.close()
            if runs >= 2:
                break
        time.sleep(0.05)
    assert runs >= 2 and proc.poll() is None
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "stopped; the runs so far are stored" in err
    repo.assert_untouched()


def test_never_fails(repo):
    p = repo.ctl("bisect", "tests/test_demo.py::test_stable", "--good",
                 "HEAD~31", "--bad", "HEAD", "--max-runs", "4", "--", *PYTEST)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "did not fail in 4 runs at --bad: nothing to bisect" in p.stderr
    repo.assert_untouched()


def test_unknown_test(repo):
    """A name the run at --bad does not hold: exit 2 with the closest
    names, as every command that takes TEST."""
    p = repo.ctl("bisect", "tests/test_demo.py::test_nope", "--good",
                 "HEAD~31", "--bad", "HEAD", "--", *PYTEST)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert ("flakyctl bisect: no test matches 'tests/test_demo.py::"
            "test_nope'; the closest names:\n  tests/test_demo.py::"
            "test_") in p.stderr, p.stderr
    assert p.stdout == ""
    repo.assert_untouched()


def test_function_name(repo):
    """Issue 28: TEST as the function name, as show and triage take it
    (`pytest -v test_flaky` selects nothing): the suite runs once at
    --bad, the resolver finds tests/test_demo.py::test_flaky there, and
    the search runs on the full id (commits 18 to 20: few runs)."""
    p = repo.ctl("--format", "json", "bisect", "test_flaky", "--good",
                 repo.hashes[17], "--bad", repo.hashes[19], "--", *PYTEST)
    assert p.returncode == 0, (p.stdout, p.stderr)
    out = json.loads(p.stdout)
    assert out["test"] == TEST
    assert out["first_flaky"]["revision"] == repo.hashes[18]
    assert out["alone"] is True
    db = sqlite3.connect(repo.db)
    runs = db.execute("SELECT ru.kind, ru.revision, group_concat(t.name) "
                      "FROM runs ru LEFT JOIN results r ON r.run_id = ru.id "
                      "LEFT JOIN tests t ON t.id = r.test_id GROUP BY ru.id "
                      "ORDER BY ru.id").fetchall()
    db.close()
    # the first run selected the test by the name given (pytest found
    # nothing), the second was the suite at bad, then the full id alone
    assert runs[0][:2] == ("alone", repo.hashes[19]) and runs[0][2] is None
    assert runs[1][:2] == ("suite", repo.hashes[19])
    assert set(runs[1][2].split(",")) == {TEST,
                                          "tests/test_demo.py::test_stable"}
    assert all(r[0] == "alone" and r[2] == TEST for r in runs[2:]), runs
    assert len(runs) == 2 + out["runs"]
    p = repo.ctl("bisect", "test_flaky", "--good", repo.hashes[17], "--bad",
                 repo.hashes[19], "--", *PYTEST)
    assert "flakyctl: 'test_flaky' is %s (the run at --bad)" % TEST \
        in p.stderr, p.stderr
    repo.assert_untouched()


def test_ambiguous_name(repo):
    p = repo.ctl("bisect", "test_", "--good", "HEAD~31", "--bad", "HEAD",
                 "--", *PYTEST)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert ("flakyctl bisect: 'test_' matches 2 tests in the run at --bad; "
            "give more of the id:\n") in p.stderr, p.stderr
    assert TEST in p.stderr and "tests/test_demo.py::test_stable" in p.stderr
    assert p.stdout == ""
    repo.assert_untouched()


@pytest.mark.parametrize("args,message", [
    (["--good", "nope", "--bad", "HEAD"], "--good: expected a commit of"),
    (["--good", "HEAD~1", "--bad", "nope"], "--bad: expected a commit of"),
    (["--good", "HEAD", "--bad", "HEAD~3"],
     "expected --good to be an ancestor of --bad"),
    (["--bad", "HEAD"], "expected --good REV and --bad REV"),
    (["--good", "HEAD~1", "--bad", "HEAD", "--max-runs", "0"],
     "--max-runs: expected a number from 1 to 100000, got '0'"),
])
def test_bad_input(repo, args, message):
    p = repo.ctl("bisect", TEST, *args, "--", *PYTEST)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert message in p.stderr
    assert p.stdout == ""
    repo.assert_untouched()
    assert not os.path.exists(repo.db) or sqlite3.connect(repo.db).execute(
        "SELECT count(*) FROM runs").fetchone()[0] == 0


def test_needs_dashes(repo):
    p = repo.ctl("bisect", TEST, "--good", "HEAD~1", "--bad", "HEAD")
    assert p.returncode == 2
    assert "expected --target NAME or a command after --" in p.stderr
    p = repo.ctl("bisect", TEST, "pytest", "--good", "HEAD~1", "--bad", "HEAD")
    assert p.returncode == 2
    assert "'pytest' after the test: give the command after --" in p.stderr


def test_outside_git(repo, tmp_path):
    d = tmp_path / "plain"
    d.mkdir()
    p = subprocess.run(repo.args("bisect", TEST, "--good", "a", "--bad", "b",
                                 "--", *PYTEST), cwd=str(d), env=repo.env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert "expected a directory in a git work tree" in p.stderr


def analyze_at_head(repo, runs=10):
    p = repo.ctl("analyze", "--runs", str(runs), "--", *PYTEST, TEST)
    assert p.returncode == 0, (p.stdout, p.stderr)


def test_verify_still_flaky(repo):
    """verify at the flaky HEAD: disproven at the first failure."""
    analyze_at_head(repo)
    p = repo.ctl("--format", "json", "verify", TEST, "--", *PYTEST)
    assert p.returncode == 1, (p.stdout, p.stderr)
    out = json.loads(p.stdout)
    assert (out["rate_failures"], out["rate_runs"]) == (2, 10)
    assert out["passes_needed"] == 14
    assert out["verdict"] == "still flaky"
    assert out["failures"] == 1 and out["runs"] <= 5
    assert out["revision"] == repo.hashes[-1]


def test_verify_fixed(repo):
    """verify after a commit that fixes it: 14 passes in a row prove it,
    and the runs are stored at the new HEAD."""
    analyze_at_head(repo)
    path = os.path.join(repo.path, "tests", "test_demo.py")
    with open(path, "w") as f:
        f.write(make_repo.CLEAN)
    make_repo.git(repo.path, "commit", "-q", "-am", "fix the cache")
    head = repo.git("rev-parse", "HEAD").strip()
    p = repo.ctl("verify", TEST, "--", *PYTEST)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert "p = 0.200 (2 of 10 stored runs failed): 14 passes in a row " \
        "prove a fix (95%)" in p.stdout
    assert "fixed: 14 passes in a row" in p.stdout
    db = sqlite3.connect(repo.db)
    n = db.execute("SELECT count(*) FROM runs WHERE trigger = 'verify' AND "
                   "revision = ? AND incomplete IS NULL", (head,)).fetchone()
    db.close()
    assert n == (14,)


def test_verify_bad_input(repo):
    p = repo.ctl("verify", TEST, "--", *PYTEST)
    assert p.returncode == 2
    assert "give --rate P" in p.stderr
    p = repo.ctl("verify", TEST, "--rate", "1.5", "--", *PYTEST)
    assert p.returncode == 2
    assert "--rate: expected a failure rate above 0 and below 1" in p.stderr


def test_quarantine_release_rule(repo):
    """quarantine list: release after ceil(ln 0.05 / ln(1 - p)) passes
    in a row, less the passes so far."""
    import math
    analyze_at_head(repo)                       # 2 of 10 failed, the last
    p = repo.ctl("quarantine", "add", TEST, "--reason", "stale cache")
    assert p.returncode == 0, p.stderr
    q = json.loads(repo.ctl("--format", "json", "quarantine", "list").stdout)
    assert (q[0]["passes_in_a_row"], q[0]["passes_needed"],
            q[0]["more_passes"], q[0]["ready_to_release"]) == (0, 14, 14, False)
    path = os.path.join(repo.path, "tests", "test_demo.py")
    with open(path, "w") as f:
        f.write(make_repo.CLEAN)
    make_repo.git(repo.path, "commit", "-q", "-am", "fix the cache")
    analyze_at_head(repo, runs=5)               # 2 of 15 now, 5 passes
    need = math.ceil(math.log(0.05) / math.log(1 - 2 / 15))
    assert need == 21
    p = repo.ctl("quarantine", "list")
    assert "5 passes in a row, release after 16 more passing runs " \
        "(p = 0.133: 21)" in p.stdout, p.stdout
    q = json.loads(repo.ctl("--format", "json", "quarantine", "list",
                            "--release-after", "5").stdout)
    assert (q[0]["passes_needed"], q[0]["ready_to_release"]) == (5, True)


def test_config_target(repo, tmp_path):
    """--target: the config's command, directory and isolate: template
    (the id reaches the command in $FLAKY_TEST); commits 18 to 20."""
    cfg = tmp_path / "flaky.yaml"
    cfg.write_text("targets:\n  - name: demo\n    command: [pytest, -v]\n"
                   "    dir: %s\n    isolate: \"%s {test}\"\n"
                   % (repo.path, " ".join(PYTEST + ["-v"])))
    p = subprocess.run(repo.args("--config", str(cfg), "--format", "json",
                                 "bisect", TEST, "--good", repo.hashes[17],
                                 "--bad", repo.hashes[19], "--target", "demo"),
                       cwd="/", env=repo.env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, (p.stdout, p.stderr)
    out = json.loads(p.stdout)
    assert out["alone"] is True
    assert out["first_flaky"]["revision"] == repo.hashes[18]
    db = sqlite3.connect(repo.db)
    rows = db.execute("SELECT DISTINCT tg.name, ru.kind FROM runs ru JOIN "
                      "targets tg ON tg.id = ru.target_id").fetchall()
    db.close()
    assert rows == [("demo", "alone")]
    p = subprocess.run(repo.args("--config", str(cfg), "bisect", TEST,
                                 "--good", "HEAD~1", "--bad", "HEAD",
                                 "--target", "nope"), cwd="/", env=repo.env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert "--target nope: expected a target of the config" in p.stderr
    repo.assert_untouched()


def test_config_target_function_name(repo, tmp_path):
    """--target with an isolate: template: the function name is resolved
    by the config command's run at --bad, then reaches the template as
    the full id in $FLAKY_TEST."""
    cfg = tmp_path / "flaky.yaml"
    cfg.write_text("targets:\n  - name: demo\n    command: [pytest, -v]\n"
                   "    dir: %s\n    isolate: \"%s {test}\"\n"
                   % (repo.path, " ".join(PYTEST + ["-v"])))
    p = subprocess.run(repo.args("--config", str(cfg), "--format", "json",
                                 "bisect", "test_flaky", "--good",
                                 repo.hashes[17], "--bad", repo.hashes[19],
                                 "--target", "demo"),
                       cwd="/", env=repo.env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, (p.stdout, p.stderr)
    out = json.loads(p.stdout)
    assert out["test"] == TEST
    assert out["first_flaky"]["revision"] == repo.hashes[18]
    repo.assert_untouched()
