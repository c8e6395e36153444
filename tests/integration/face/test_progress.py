"""Progress a person sees: analyze and confirm draw their line from the
start on a terminal (before the first run ends), with the time elapsed and
then an estimate of the time left; nothing of it in a pipe. flakyd's log
lines carry the time unless journald takes them (JOURNAL_STREAM)."""
import json
import os
import re
import shutil
import signal
import subprocess

import pytest

from conftest import (ESC, FLAKYCTL, FLAKYD, Pty, dwidth, env_for, ingest,
                      junit, run)

PYTEST = "/usr/bin/pytest"

# A test that waits, polling with a deadline, for a file the test creates
# once it has seen the progress frame: the frame is drawn while the first
# run is still running, or the run fails after the deadline.
GATED = '''import os, time
GATE = %r
def test_gated():
    deadline = time.monotonic() + 60
    while not os.path.exists(GATE):
        assert time.monotonic() < deadline, "no progress frame came"
        time.sleep(0.01)
'''


def gated_project(tmp_path):
    gate = tmp_path / "gate"
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "test_gated.py").write_text(GATED % str(gate))
    return proj, gate


@pytest.mark.skipif(not os.path.exists(PYTEST), reason="no /usr/bin/pytest")
def test_analyze_progress_before_the_first_run_ends(tmp_path):
    proj, gate = gated_project(tmp_path)
    db = str(tmp_path / "a.db")
    p = Pty([FLAKYCTL, "--db", db, "analyze", "--runs", "2", "--",
             PYTEST, "test_gated.py"], cols=80, cwd=str(proj))
    out = p.read(until=lambda t: re.search(
        r"\r\[>? *\] run 1/2 \u00b7 0:\d\d elapsed \u00b7 1 running", t))
    assert not gate.exists() and "runs of" not in out
    gate.write_text("go")
    assert p.finish() == 0, p.text
    # once a run has ended: the time left, estimated
    assert re.search(r"run 2/2 \u00b7 0:\d\d elapsed, ~0:\d\d left", p.text), \
        p.text
    # the line is erased before the report, which starts on a clean line
    assert re.search(r"\r\x1b\[K2 runs of ", p.text), p.text
    # every frame fits the terminal with a column to spare
    for frame in p.text.split("\r"):
        assert dwidth(ESC.sub("", frame.split("\n")[0])) < 80, frame


@pytest.mark.skipif(not os.path.exists(PYTEST), reason="no /usr/bin/pytest")
def test_analyze_no_progress_in_a_pipe(tmp_path):
    proj, gate = gated_project(tmp_path)
    gate.write_text("go")
    p = run(["--db", str(tmp_path / "a.db"), "analyze", "--runs", "2", "--",
             PYTEST, "test_gated.py"], check=0, cwd=str(proj))
    assert "\r" not in p.stderr and "elapsed" not in p.stderr
    assert "\x1b" not in p.stderr + p.stdout
    assert p.stdout.startswith("2 runs of ")


def test_confirm_progress(tmp_path):
    """confirm on a terminal: its line (tests settled, runs alone, time,
    the budget left) while its first run alone waits for the gate."""
    gate = tmp_path / "gate"
    db = str(tmp_path / "c.db")
    import datetime
    t0 = datetime.datetime(2026, 11, 20, tzinfo=datetime.timezone.utc)
    for i in range(4):
        at = t0 + datetime.timedelta(hours=i)
        f = tmp_path / ("r%d.xml" % i)
        f.write_text(junit("ci", [("t", "flip", "0.1", '<failure message='
                                   '"m"></failure>' if i % 2 else "")], at))
        ingest(db, "ci", str(f), at)
    waiter = tmp_path / "alone.sh"
    waiter.write_text(
        "#!/bin/sh\n"
        "# a run alone: wait for the gate (with a deadline), then pass\n"
        "i=0\n"
        "while [ ! -e %s ] && [ $i -lt 6000 ]; do i=$((i+1)); "
        "sleep 0.01; done\n"
        "echo 'ok 1 - '\"$1\"\necho '1..1'\n" % gate)
    waiter.chmod(0o755)
    cfg = tmp_path / "flaky.yaml"
    cfg.write_text("targets:\n  - name: ci\n    command: /bin/true\n"
                   "    isolate: %s {test}\n" % waiter)
    p = Pty([FLAKYCTL, "--db", db, "--config", str(cfg), "confirm", "t.flip",
             "--max-runs", "1", "--since", "all"], cols=100,
            cwd=str(tmp_path))
    p.read(until=lambda t: re.search(
        r"\r0 of 1 test settled \u00b7 0 runs alone \u00b7 0:\d\d elapsed "
        r"\u00b7 budget \d+:\d\d left \u00b7 now t\.flip", t))
    gate.write_text("go")
    rc = p.finish()
    assert rc == 0, p.text
    assert "t.flip: alone 0/1" in p.text, p.text


def flakyd_lines(tmp_path, journal):
    """flakyd in the foreground, stopped once it is ready; its stderr."""
    if not os.path.exists(FLAKYD):
        pytest.skip("flakyd not built")
    cfg = tmp_path / "flaky.yaml"
    cfg.write_text("database: %s\nsocket: %s\ntimezone: UTC\ntargets:\n"
                   "  - name: a\n    command: /bin/true\n" %
                   (tmp_path / "d.db", tmp_path / "d.sock"))
    log = tmp_path / ("log-%d" % journal)
    with open(log, "w") as f:
        env = env_for()
        if journal:
            st = os.fstat(f.fileno())
            env["JOURNAL_STREAM"] = "%d:%d" % (st.st_dev, st.st_ino)
        proc = subprocess.Popen([FLAKYD, "--config", str(cfg),
                                 "--foreground"], stdout=f, stderr=f,
                                env=env)
        try:
            import time
            deadline = time.monotonic() + 30
            while "ready" not in log.read_text():
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.02)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    return log.read_text().splitlines()


def test_flakyd_timestamps(tmp_path):
    lines = flakyd_lines(tmp_path, journal=False)
    assert lines, lines
    for l in lines:
        assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z flakyd: ",
                        l), l


def test_flakyd_no_timestamps_for_journald(tmp_path):
    lines = flakyd_lines(tmp_path, journal=True)
    assert lines, lines
    for l in lines:
        assert re.match(r"<\d>", l), l
        assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", l), l
