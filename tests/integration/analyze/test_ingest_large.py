"""flakyctl ingest of large JUnit files: memory stays bounded whatever the
size (issue 14, item 2), every testcase is stored, and a bad file after a
large one still stores nothing. The files come from bench/junit_gen.py."""
import os
import sqlite3
import subprocess

import pytest

from conftest import FLAKYCTL, PYTHON, ROOT

GEN = os.path.join(ROOT, "bench", "junit_gen.py")
MIB = 1024 * 1024


def gen(path, mode, n, seed=0):
    subprocess.run([PYTHON, GEN, str(path), mode, str(n), str(seed)],
                   check=True, timeout=120)
    return str(path)


def counts(path):
    """Testcases, failures and retries in a generated file (a test that
    passed on a retry failed first: it counts as failed)."""
    n = {"<testcase ": 0, "<failure ": 0, "<flakyFailure ": 0}
    with open(path) as f:
        for line in f:
            for k in n:
                n[k] += line.count(k)
    return n["<testcase "], n["<failure "] + n["<flakyFailure "], \
        n["<flakyFailure "]


TIME = "/usr/bin/time"


def ingest(db, *files):
    """Run flakyctl ingest; (exit status, stdout, stderr, peak RSS bytes).
    The peak comes from GNU time, which forks it from a small process: the
    peak of a child forked from pytest itself counts pytest's memory too
    (the kernel keeps the larger of the image before exec and after)."""
    env = dict(os.environ, NO_COLOR="1")
    env.pop("FLAKY_DB", None)
    env.pop("FLAKY_CONFIG", None)
    rss = os.path.join(os.path.dirname(db), "rss")
    cmd = [FLAKYCTL, "--db", db, "ingest", "--target", "ci"] + list(files)
    if os.access(TIME, os.X_OK):
        cmd = [TIME, "-o", rss, "-f", "%M"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       timeout=600)
    peak = None
    if os.access(TIME, os.X_OK):
        with open(rss) as f:
            peak = int(f.read().split()[-1]) * 1024
    return p.returncode, p.stdout, p.stderr, peak


def sanitized():
    """ASan and valgrind builds hold freed memory on purpose."""
    with open(FLAKYCTL, "rb") as f:
        return b"__asan_init" in f.read()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("large")
    return {"small": gen(d / "small.xml", "big", 5 * 10**6, 1),
            "large": gen(d / "large.xml", "big", 50 * 10**6, 2),
            "many": gen(d / "many.xml", "many", 200000, 3)}


def test_ingest_large_bounded(tmp_path, files):
    rc, out, err, rss_small = ingest(str(tmp_path / "s.db"), files["small"])
    assert rc == 0, err
    db = str(tmp_path / "l.db")
    rc, out, err, rss = ingest(db, files["large"], files["many"])
    assert rc == 0, err
    n, failed, retried = counts(files["large"])
    m, _, _ = counts(files["many"])
    assert "%d tests, %d retry attempts" % (n, 2 * retried) in out
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT tests, failures FROM runs ORDER BY id"
                         ).fetchall() == [(n, failed), (m, 0)]
        assert c.execute("SELECT count(*) FROM results").fetchone() == \
            (n + m,)
        assert c.execute("SELECT count(*), sum(runs), sum(failures) "
                         "FROM rollups").fetchone() == (n + m, n + m, failed)
        assert c.execute("SELECT count(*) FROM attempts").fetchone() == \
            (2 * retried,)
    if sanitized():
        pytest.skip("memory is not measured under a sanitizer")
    if rss is None:
        pytest.skip("memory is measured with GNU time (%s)" % TIME)
    # Ten times the input (and another file after it): the same memory.
    assert rss < 32 * MIB, rss
    assert rss < rss_small + 4 * MIB, (rss_small, rss)


def test_ingest_refused_after_large(tmp_path, files):
    """A bad file after a large one: nothing of either is stored."""
    bad = tmp_path / "bad.xml"
    bad.write_text('<testsuite><testcase name="a"/>')
    db = str(tmp_path / "b.db")
    rc, out, err, _ = ingest(db, files["small"], str(bad))
    assert rc == 2
    assert "refused, nothing stored" in err and "bad.xml" in err
    # The database the command made for them is gone again.
    assert not os.path.exists(db)
    # Then the small one alone goes in, and once only.
    rc, out, err, _ = ingest(db, files["small"], files["small"])
    assert rc == 0 and "already ingested as run 1" in out, err


def test_ingest_many_files_few_descriptors(tmp_path):
    """Files are not held open: 300 of them with 64 descriptors."""
    import resource
    paths = []
    for i in range(300):
        p = tmp_path / ("f%d.xml" % i)
        p.write_text('<testsuite><testcase classname="c" name="t%d"/>'
                     '</testsuite>\n' % i)
        paths.append(str(p))
    db = str(tmp_path / "f.db")

    def few():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    p = subprocess.run([FLAKYCTL, "--db", db, "ingest", "--target", "ci"]
                       + paths, capture_output=True, text=True,
                       preexec_fn=few, timeout=300)
    assert p.returncode == 0, p.stderr
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*), sum(tests) FROM runs"
                         ).fetchone() == (300, 300)
