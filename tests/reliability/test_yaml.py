"""Hostile schedule files (issue 14, docs/limits.md): each is refused by
`flakyd --check-config` and by a reload of the running daemon, with one
line FILE:LINE:COL naming the limit, in bounded memory and time, and
nothing is written to the database."""
import os
import re
import signal

import pytest

from conftest import FLAKYD, MiB, db_digest, limited, query, wait_for

# The hard limit each check runs under: a bomb expanded would take GBs
# (docs/limits.md, "Measured": 1,176 MB for 200 targets).
MEM = 256 * MiB
SECONDS = 10
VALUE = "a" * 60000


def alias_bomb(n, values=100):
    """n targets sharing by alias an env of `values` names that each alias
    one 60,000-byte value: n * values * 60 KB once expanded."""
    refs = ", ".join("V%d: *s" % i for i in range(1, values))
    s = ("targets:\n  - name: t0\n    command: [/bin/true]\n"
         "    env: &e {V0: &s \"%s\", %s}\n" % (VALUE, refs))
    for i in range(1, n):
        s += "  - name: t%d\n    command: [/bin/true]\n    env: *e\n" % i
    return s


def laughs(levels=12, width=10):
    """Billion laughs: each level a list of `width` aliases of the one
    below, width ** levels values in all."""
    s = "signatures:\n  - name: L\n    patterns: &l0 [\"lol\"]\n"
    s += "x0: &l1 [%s]\n" % ", ".join(["*l0"] * width)
    for i in range(2, levels + 1):
        s += "x%d: &l%d [%s]\n" % (i - 1, i,
                                  ", ".join(["*l%d" % (i - 1)] * width))
    return s


def huge():
    """A plausible schedule past the 1 MiB file limit (about 2 MiB)."""
    parts, size, i = ["targets:\n"], 9, 0
    while size < 2 * MiB:
        t = ("  - name: t%d\n    command: [/bin/true]\n"
             "    schedule: \"every 1h\"\n" % i)
        parts.append(t)
        size += len(t)
        i += 1
    return "".join(parts)


CASES = {
    "alias-bomb-50": (lambda: alias_bomb(50), "alias expansion limit"),
    "alias-bomb-100": (lambda: alias_bomb(100), "alias expansion limit"),
    "alias-bomb-200": (lambda: alias_bomb(200), "alias expansion limit"),
    # 1,000 targets sharing 60 MB: 60 GB once expanded.
    "alias-bomb-1000x1000": (lambda: alias_bomb(1000, 1000),
                             "limit"),
    "billion-laughs": (laughs, "limit"),
    "deep-100k": (lambda: "targets: " + "[" * 100000 + "\n",
                  "nesting limit"),
    "deep-mappings": (lambda: "targets: " + "{a: " * 5000 + "\n",
                      "nesting limit"),
    "scalar-70k": (lambda: "targets:\n  - name: t\n    command: "
                   "[/bin/echo, \"%s\"]\n" % ("b" * 70000),
                   "value size limit"),
    # a block scalar of 800 KB, 8,000 lines: just under the file limit
    "scalar-800k-block": (lambda: "targets:\n  - name: t\n    command: "
                          "|\n" + ("      " + "c" * 100 + "\n") * 8000,
                          "value size limit"),
    "huge-2m": (huge, "size limit"),
}


def write_case(tmp_path, name):
    make, limit = CASES[name]
    db = str(tmp_path / "flaky.db")
    path = tmp_path / ("%s.yaml" % name)
    path.write_text("database: %s\n%s" % (db, make()))
    return str(path), db, limit


def check_refused(p, secs, path, limit):
    assert p.returncode not in (0, None), (p.returncode, p.stdout)
    # One line, FILE:LINE:COL, naming the limit (and no allocation
    # failure: the bound was hit before memory ran out).
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert re.match(r"%s:\d+:\d+: .*expected .*" % re.escape(path),
                    lines[0]), lines[0]
    assert limit in lines[0], lines[0]
    assert "out of memory" not in p.stderr.lower()
    assert secs < SECONDS


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_config_refuses(tmp_path, name):
    path, db, limit = write_case(tmp_path, name)
    p, secs = limited([FLAKYD, "--check-config", "--config", path], MEM,
                      SECONDS)
    check_refused(p, secs, path, limit)
    assert db_digest(db) is None, "a database was created"


def test_the_worst_accepted_file_fits(tmp_path):
    """The other side of the bound: 49 targets sharing one env of 10,000
    names (docs/limits.md, 45 MB) pass under the same limit, so the limit
    above is not what refuses the bombs."""
    env = ", ".join("N%d: \"v\"" % i for i in range(10000))
    s = "targets:\n  - name: t0\n    command: [/bin/true]\n" \
        "    env: &e {%s}\n" % env
    for i in range(1, 49):
        s += "  - name: t%d\n    command: [/bin/true]\n    env: *e\n" % i
    path = tmp_path / "big.yaml"
    path.write_text("database: %s\n%s" % (tmp_path / "flaky.db", s))
    p, secs = limited([FLAKYD, "--check-config", "--config", str(path)],
                      MEM, SECONDS)
    assert p.returncode == 0, p.stderr
    assert secs < SECONDS


@pytest.mark.parametrize("name", ["alias-bomb-200", "deep-100k",
                                  "scalar-70k", "huge-2m"])
def test_reload_refuses_and_keeps_running(daemon, name):
    """SIGHUP with a bomb in place of the file: the running daemon, under
    the same hard limit, refuses it, keeps the old schedule, and writes
    nothing of it."""
    daemon.mem = MEM
    daemon.write_config("targets:\n  - name: keep\n    command: [/bin/true]"
                        "\n    schedule: \"@yearly\"\n")
    daemon.start()
    before = query(daemon.db, "SELECT id, name FROM targets ORDER BY id")
    assert [n for _, n in before] == ["keep"]
    make, limit = CASES[name]
    with open(daemon.config, "a") as f:
        f.write(make().replace("targets:", "targets2:", 1)
                if name != "huge-2m" else make()[len("targets:\n"):])
    os.kill(daemon.proc.pid, signal.SIGHUP)
    wait_for("the reload failure in the log", lambda: "reload failed" in
             daemon.logtext(), SECONDS)
    line = [x for x in daemon.logtext().splitlines()
            if daemon.config in x and "expected" in x]
    assert line and limit in line[0], daemon.logtext()
    assert daemon.alive()
    st = daemon.ask("status")
    assert [t["name"] for t in st["targets"]] == ["keep"]
    assert query(daemon.db, "SELECT id, name FROM targets ORDER BY id") == \
        before
    assert daemon.stop() == 0
