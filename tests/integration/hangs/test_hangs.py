"""Issue 33: a hung run's stacks are taken before the time limit kills it,
stored, folded into where the test waited and shown.

Each demo of examples/hangs hangs on its third run in a known function;
analyze runs it three times with a time limit. For every runtime: the
stacks stored for the timeout and linked to the test that hung, the
function named, the deadlocks named with both threads, nothing left
running, the capture within its bound; and the suites of the pipeline run
the same with the capture's environment as without it."""
import json
import os
import zlib

import pytest

from conftest import JEST, ctl, cmake_build, live_under, need, query

BOUND_MS = 10000  # the default bound of a capture, all processes


def py_cmd(d):
    return d, ["/usr/bin/pytest"]


def unittest_cmd(d):
    return d, ["/usr/bin/python3", "-m", "unittest", "-v"]


def go_cmd(d):
    need("go")
    return d, ["go", "test", "-v", "-count=1", "./..."]


def jest_cmd(d):
    need("node", JEST)
    return d, [JEST]


def ctest_cmd(d):
    need("gdb")
    return cmake_build(d), ["ctest"]


def java_cmd(d):
    need("java", "javac")
    return cmake_build(d), ["ctest"]


# demo, command, time limit, the test that hangs, where (function, file),
# kind, and for a deadlock the functions and locks of both threads
CASES = {
    "pytest": (py_cmd, "3s", "test_client.py::test_reply",
               "wait_for_reply", "test_client.py", "blocked", None),
    "unittest": (unittest_cmd, "3s", "test_client.ClientTest.test_2_reply",
                 "wait_for_reply", "test_client.py", "blocked", None),
    "go": (go_cmd, "20s", "example.com/hangs/TestReply",
           "example.com/hangs.waitForReply", "client_test.go", "blocked",
           None),
    # Jest's start takes seconds on a loaded machine (a passing run took
    # 12 s beside 15 busy processes on 2 CPUs): the limit must never end
    # a run that does not hang, or the test would be flaky
    "jest": (jest_cmd, "30s", "__tests__/spin.test.js \u203a waits until ready",
             "spinUntilReady", "__tests__/spin.test.js", "busy", None),
    "c": (ctest_cmd, "4s", "transfer", "transfer_a_to_b", "bank.c",
          "deadlock", ("transfer_a_to_b", "transfer_b_to_a", "lock_a",
                       "lock_b")),
    "java": (java_cmd, "8s", "transfer", "Bank.transferAtoB", "Bank.java",
             "deadlock", ("Bank.transferAtoB", "Bank.transferBtoA",
                          "transfer-a-b", "transfer-b-a")),
}


def stack_text(data, size):
    """A dump's text as stored: deflated in sqlar's format (zlib) unless
    that saved nothing (the view stack_text does this in SQL)."""
    if data is None:
        return ""
    if len(data) != size:
        data = zlib.decompress(data)
    assert len(data) == size
    return data.decode(errors="replace")


@pytest.mark.parametrize("name", list(CASES))
def test_hang_is_named(demo, tmp_path, name):
    make, limit, test, func, file, kind, deadlock = CASES[name]
    src = demo(name)
    cwd, cmd = make(src)
    db = str(tmp_path / "flaky.db")
    r = ctl(["--db", db, "analyze", "--runs", "3", "--jobs", "1", "--timeout", limit,
             "--"] + cmd, cwd=cwd)
    assert r.returncode in (0, 1), r.stderr
    # runs 1 and 2 pass, run 3 hangs: the only timeout
    assert [s for s, in query(db, "SELECT status FROM runs ORDER BY id")] \
        == ["done", "done", "timeout"], r.stdout + r.stderr
    rows = query(db, "SELECT h.run_id, h.test, h.kind, h.func, h.file, "
                 "h.deadlock, h.capture_ms, h.processes, h.taken, "
                 "s.bound_ms FROM hangs h JOIN run_stacks s USING (run_id)")
    assert len(rows) == 1, rows
    run_id, htest, hkind, hfunc, hfile, hdead, ms, procs, taken, bound = \
        rows[0]
    assert run_id == 3
    assert htest == test            # linked to the TIMEOUT test
    assert hfunc == func
    assert hfile.endswith(file)
    assert hkind == kind
    assert 0 < taken <= procs
    assert bound == BOUND_MS and 0 <= ms <= bound
    if deadlock is None:
        assert hdead is None
    else:
        for word in deadlock:
            assert word in hdead, hdead
    # the stacks as taken are kept, compressed, and read back whole
    dumps = [stack_text(data, size) for data, size in query(
        db, "SELECT data, size FROM stack_dumps WHERE run_id = 3")]
    assert any(func.rsplit(".", 1)[-1] in t for t in dumps), dumps
    # nothing of the hung run lives on
    assert live_under(src) == []
    # where it hung, in show, its JSON and triage
    out = ctl(["--db", db, "show", "--since", "all", test]).stdout
    short = func.rsplit(".", 1)[-1] if name == "go" else func
    assert ("deadlock in `" if deadlock else "hung in `") + func in out, out
    assert short in out
    j = json.loads(ctl(["--db", db, "show", "--since", "all",
                        "--format", "json", test]).stdout)
    h = j["hangs"]
    assert h["timeouts"] == 1 and h["newest_run"] == 3
    assert h["places"][0]["function"] == func
    assert h["places"][0]["kind"] == kind
    assert h["capture_ms_max"] <= BOUND_MS
    if deadlock:
        assert j["patch"].startswith("take the locks in one order"), j["patch"]
        assert j["cause"].startswith("a deadlock")
    assert "stacks:" in ctl(["--db", db, "triage", "--since", "all"]).stdout


def test_no_stacks_kills_at_once(demo, tmp_path):
    """--no-stacks: the timeout as before, no stacks, no capture time."""
    src = demo("pytest")
    db = str(tmp_path / "flaky.db")
    r = ctl(["--db", db, "analyze", "--runs", "3", "--jobs", "1", "--timeout", "2s",
             "--no-stacks", "--", "/usr/bin/pytest"], cwd=src)
    assert r.returncode in (0, 1), r.stderr
    assert [s for s, in query(db, "SELECT status FROM runs ORDER BY id")] \
        == ["done", "done", "timeout"]
    assert query(db, "SELECT count(*) FROM run_stacks") == [(0,)]
    assert query(db, "SELECT count(*) FROM stack_dumps") == [(0,)]
    j = json.loads(ctl(["--db", db, "show", "--since", "all", "--format",
                        "json", "test_client.py::test_reply"]).stdout)
    assert j["hangs"] is None
    assert live_under(src) == []


def outcomes(db):
    return query(db, "SELECT t.name, r.outcome, r.position FROM results r "
                 "JOIN tests t ON t.id = r.test_id ORDER BY r.run_id, "
                 "r.position")


def counts(db):
    return query(db, "SELECT status, tests, failures, summary_total, "
                 "incomplete FROM runs ORDER BY id")


SUITES = {
    # 1,000 pytest tests, 19 of them failing
    "pytest": (os.path.join("tests", "fixtures", "pytest", "src"),
               ["/usr/bin/pytest", "test_big.py"], "test_big.py"),
    "go": (os.path.join("tests", "fixtures", "gotest", "suite"),
           ["go", "test", "-v", "-count=1", "./calc/...", "./strs/..."],
           None),
    "jest": (os.path.join("tests", "fixtures", "jest", "suite", "small"),
             [JEST], None),
}


@pytest.mark.parametrize("name", list(SUITES))
def test_capture_environment_changes_nothing(tmp_path, name):
    """A run with stacks gets PYTHONPATH and NODE_OPTIONS entries; a suite
    that does not hang runs the same with them as without: the same ids,
    outcomes, positions and counts."""
    import shutil
    from conftest import ROOT
    rel, cmd, only = SUITES[name]
    if name == "go":
        need("go")
    if name == "jest":
        need("node", JEST)
    src = os.path.join(ROOT, rel)
    got = {}
    for mode in ("stacks", "no-stacks"):
        # a copy per mode: nothing a run leaves behind reaches the other
        d = str(tmp_path / mode)
        if only:
            os.mkdir(d)
            shutil.copy(os.path.join(src, only), d)
        else:
            shutil.copytree(src, d)
        if name == "jest":
            with open(os.path.join(d, "package.json"), "w") as f:
                f.write('{"name": "small", "private": true}\n')
        db = str(tmp_path / (mode + ".db"))
        extra = ["--no-stacks"] if mode == "no-stacks" else []
        r = ctl(["--db", db, "analyze", "--runs", "1", "--timeout", "10m"]
                + extra + ["--"] + cmd, cwd=d)
        assert r.returncode in (0, 1), r.stderr
        got[mode] = (outcomes(db), counts(db))
        assert query(db, "SELECT count(*) FROM run_stacks") == [(0,)]
    assert got["stacks"][0], "no results"
    assert got["stacks"] == got["no-stacks"]


PROBE = ('case "$NODE_OPTIONS|$PYTHONPATH" in '
         '*--inspect-port=0*flaky-stacks-*) echo "ok 1 - set";; '
         '*) echo "ok 1 - unset";; esac; echo 1..1')


@pytest.mark.parametrize("mode", ["stacks", "no-stacks", "no-timeout"])
def test_capture_environment_is_set(tmp_path, mode):
    """The comparison above compares something: a run with a time limit
    and stacks gets the entries, one with --no-stacks or without a time
    limit does not."""
    db = str(tmp_path / "flaky.db")
    args = {"stacks": ["--timeout", "1m"],
            "no-stacks": ["--timeout", "1m", "--no-stacks"],
            "no-timeout": []}[mode]
    r = ctl(["--db", db, "analyze", "--runs", "1"] + args +
            ["--", "/bin/sh", "-c", PROBE], cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert [n for n, in query(db, "SELECT name FROM tests")] == \
        ["set" if mode == "stacks" else "unset"]


def test_capture_cut_at_its_bound(demo, tmp_path):
    """A capture that outlasts its bound is cut there, says what it cut,
    and the run is killed as before with nothing left running: a process
    gdb was reading is not left stopped. The real gdb is slowed down
    where it counts: a wrapper first on PATH runs it with a command that
    waits 30 s after it attached (gdb runs -ex commands after -p), so the
    bound is always reached with the process held; the real gdb takes
    0.2 s on an idle machine, within any bound worth testing."""
    need("gdb")
    src = demo("c")
    build = cmake_build(src)
    with open(os.path.join(build, ".hang-count"), "w") as f:
        f.write("2")                    # the next run is the third: hangs
    shim = tmp_path / "bin"
    shim.mkdir()
    attached = tmp_path / "attached"
    (shim / "gdb").write_text(
        "#!/bin/sh\nexec /usr/bin/gdb -ex 'shell touch %s; sleep 30' "
        "\"$@\"\n" % attached)
    (shim / "gdb").chmod(0o755)
    db = str(tmp_path / "flaky.db")
    # a limit that ctest reaches the hanging binary well within, even
    # under ASan at a load of 2 per CPU (at 2s CI's run once timed out
    # with only ctest in the group: no gdb to cut); a bound that gdb
    # attaches well within at that load
    r = ctl(["--db", db, "analyze", "--runs", "1", "--timeout", "10s",
             "--stacks-bound", "3s", "--", "ctest"], cwd=build,
            extra={"PATH": "%s:/usr/bin:/bin" % shim})
    assert r.returncode in (0, 1), r.stderr
    assert query(db, "SELECT status FROM runs") == [("timeout",)]
    assert attached.exists()            # gdb held the process at the bound
    (ms, bound, note), = query(db, "SELECT capture_ms, bound_ms, note "
                                   "FROM run_stacks")
    assert bound == 3000
    assert 3000 <= ms < 3000 + 1000, ms     # the bound, and the loop's turn
    notes = [n for n, in query(db, "SELECT note FROM stack_dumps "
                                   "WHERE tool = 'gdb'")]
    assert notes == ["%s did not end within the bound" % (shim / "gdb")], \
        notes
    assert "bound" in (note or ""), note
    assert live_under(src) == []
