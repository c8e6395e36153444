"""Large and many JUnit files through `flakyctl ingest` under a hard
memory limit (issue 14), and a refused file leaves nothing of itself."""
import os

from conftest import FLAKYCTL, MiB, db_digest, limited, query

# ingest streams each file (docs/limits.md): 32 MiB of address space,
# a hard limit (prlimit --as), holds it whatever the file's size.
GOAL_MEM = 32 * MiB
MEM = GOAL_MEM
SECONDS = 60

TRACE = "  File \"pkg/mod.py\", line 12, in test\n    assert x\n" * 400


def big_file(path, tests=100000, every=50):
    """One file of `tests` test cases, one in `every` failing with a 20 KB
    trace: about 45 MB."""
    with open(path, "w") as f:
        f.write('<?xml version="1.0"?>\n<testsuites>\n'
                '<testsuite name="big" tests="%d" '
                'timestamp="2026-11-30T10:00:00">\n' % tests)
        for i in range(tests):
            if i % every == 0:
                f.write('<testcase classname="pkg.mod%d" name="test_%d" '
                        'time="0.01"><failure message="boom %d">%s'
                        '</failure></testcase>\n' % (i % 100, i, i, TRACE))
            else:
                f.write('<testcase classname="pkg.mod%d" name="test_%d" '
                        'time="0.01"/>\n' % (i % 100, i))
        f.write("</testsuite>\n</testsuites>\n")
    return tests, tests // every


def small_files(d, n=300, tests=100):
    paths = []
    for k in range(n):
        p = os.path.join(d, "r%03d.xml" % k)
        with open(p, "w") as f:
            f.write('<testsuite name="s%d" tests="%d" timestamp='
                    '"2026-11-30T10:%02d:%02d">\n' % (k, tests, k // 60,
                                                      k % 60))
            for i in range(tests):
                f.write('<testcase classname="m%d" name="t%d" time="0.1"/>\n'
                        % (k % 7, i))
            f.write("</testsuite>\n")
        paths.append(p)
    return paths


def ingest(db, *files):
    return limited([FLAKYCTL, "--db", db, "ingest", "--target", "ci"] +
                   list(files), MEM, SECONDS)


def test_one_large_file(tmp_path):
    db, xml = str(tmp_path / "flaky.db"), str(tmp_path / "big.xml")
    tests, failures = big_file(xml)
    assert os.path.getsize(xml) > 40 * MiB
    p, secs = ingest(db, xml)
    assert p.returncode == 0, p.stderr
    assert query(db, "SELECT status, tests, failures FROM runs") == \
        [("done", tests, failures)]
    assert query(db, "SELECT count(*) FROM results") == [(tests,)]
    assert secs < SECONDS


def test_many_files_each_once(tmp_path):
    db = str(tmp_path / "flaky.db")
    files = small_files(str(tmp_path))
    p, _ = ingest(db, *files)
    assert p.returncode == 0, p.stderr
    assert query(db, "SELECT count(*), sum(tests) FROM runs WHERE status = "
                 "'done'") == [(300, 30000)]
    # The same files again: each is already there (by its content), so
    # nothing is stored twice.
    p, _ = ingest(db, *files)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("already ingested") == 300
    assert query(db, "SELECT count(*) FROM runs") == [(300,)]
    assert query(db, "SELECT count(*) FROM results") == [(30000,)]


def test_broken_tail_is_refused_whole(tmp_path):
    """A file cut in the middle (a CI job killed while writing it), given
    with good files: refused with its position, and nothing of the call is
    stored, not even the good files."""
    db, xml = str(tmp_path / "flaky.db"), str(tmp_path / "big.xml")
    big_file(xml, tests=20000)
    cut = str(tmp_path / "cut.xml")
    with open(xml, "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read()[:os.path.getsize(xml) // 2])
    good = small_files(str(tmp_path), n=3)
    p, _ = ingest(db, good[0], good[1])
    assert p.returncode == 0, p.stderr
    before = query(db, "SELECT id, status, tests FROM runs ORDER BY id")
    counts = query(db, "SELECT count(*) FROM results")
    p, _ = ingest(db, good[2], cut)
    assert p.returncode != 0
    assert "refused, nothing stored: %s:" % cut in p.stderr, p.stderr
    assert query(db, "SELECT id, status, tests FROM runs ORDER BY id") == \
        before
    assert query(db, "SELECT count(*) FROM results") == counts
    # Alone, into no database: none is created.
    fresh = str(tmp_path / "fresh.db")
    p, _ = ingest(fresh, cut)
    assert p.returncode != 0
    assert db_digest(fresh) is None
