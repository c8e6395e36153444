"""The dashboard of the fleet's server through a restart and an outage of
PostgreSQL (issue 28, item 7): flakyctl serve and flakyd's http: connect
again by themselves; while the server cannot be reached every page and
/healthz answer 503 with a reason that shows neither its address nor
PostgreSQL's words; each program logs once when it goes and once when it
is back. On the session's cluster, which the tests stop and restart:
each starts it again before it ends."""
import os
import subprocess

import pytest

from serving import FLAKYCTL, HttpDaemon, Serve, get, wait_for, wait_status

PAGES = ("/", "/tests", "/run/1", "/api/v1/targets", "/api/v1/run/1",
         "/healthz")
GONE = "answer 503 until it is back"
BACK = "reachable again"
JUNIT = ('<testsuite name="s" tests="2"><testcase classname="a" name="t1" '
         'time="0.%d"/><testcase classname="a" name="t2" time="0.2">'
         '<failure message="boom">x</failure></testcase></testsuite>\n')


@pytest.fixture
def served(pg, pgdb, tmp_path):
    """A database of the server with three ingested runs: its URI."""
    for i in range(3):
        xml = tmp_path / ("r%d.xml" % i)
        xml.write_text(JUNIT % (i + 1))
        subprocess.run([FLAKYCTL, "--db", pgdb, "ingest", "--target", "t",
                        str(xml)], check=True, capture_output=True,
                       timeout=60)
    return pgdb


def start_server(pg):
    pg.pg_ctl("start", "-w", "-t", "60", "-l", pg.log)


def all_pages(url, status):
    """Every page, twice (both workers), answers status; their bodies."""
    bodies = []
    for _ in range(2):
        for path in PAGES:
            st, body = get(url + path)
            assert st == status, (path, st, body)
            bodies.append(body)
    return bodies


def outage(pg, url, logtext):
    """Stop the server under a running dashboard: 503s that say so and
    nothing else, one line in the log; start it: 200s, one line more."""
    pg.pg_ctl("stop", "-m", "fast", "-w", "-t", "60")
    try:
        for body in all_pages(url, 503):
            assert body.startswith("unavailable: the database cannot be "
                                   "reached"), body
            assert pg.sockdir not in body and "postgres" not in body and \
                "flaky" not in body, body
        wait_for("the outage logged", lambda: GONE in logtext(), 30)
    finally:
        start_server(pg)
    wait_status(url + "/healthz", 200, timeout=60)
    all_pages(url, 200)
    wait_for("the return logged", lambda: BACK in logtext(), 30)
    log = logtext()
    assert log.count(GONE) == 1 and log.count(BACK) == 1, log
    assert "cannot connect to postgresql:///" in log, log


def test_serve_through_restart_and_outage(pg, served, tmp_path):
    s = Serve(served, tmp_path)
    try:
        all_pages(s.url, 200)
        # A restart: the workers' connections are gone; the next page
        # connects again at once, no page fails, nothing to log.
        pg.pg_ctl("restart", "-m", "fast", "-w", "-t", "60", "-l", pg.log)
        all_pages(s.url, 200)
        assert s.logtext() == ""
        outage(pg, s.url, s.logtext)
        # And again: the backoff starts over, the log says it once more.
        pg.pg_ctl("restart", "-m", "immediate", "-w", "-t", "60", "-l",
                  pg.log)
        all_pages(s.url, 200)
    finally:
        if not os.path.exists(os.path.join(pg.data, "postmaster.pid")):
            start_server(pg)
        rc = s.stop()
    assert rc == 0, s.logtext()


def test_serve_started_while_the_server_is_down(pg, served, tmp_path):
    """A server down when serve starts: it serves 503s, not an exit, and
    the pages once the server is there."""
    pg.pg_ctl("stop", "-m", "fast", "-w", "-t", "60")
    try:
        s = Serve(served, tmp_path)
        all_pages(s.url, 503)
        wait_for("the outage logged", lambda: GONE in s.logtext(), 30)
    finally:
        start_server(pg)
    try:
        wait_status(s.url + "/healthz", 200, timeout=60)
        all_pages(s.url, 200)
        wait_for("the return logged", lambda: BACK in s.logtext(), 30)
        assert s.logtext().count(GONE) == 1
    finally:
        rc = s.stop()
    assert rc == 0, s.logtext()


def test_flakyd_http_through_restart_and_outage(pg, served, tmp_path):
    """flakyd's http: with database: on the server (the fleet's
    dashboard under the daemon): the same, in flakyd's log."""
    d = HttpDaemon(tmp_path, served)
    try:
        assert "of postgresql:///" in d.logtext()
        all_pages(d.url, 200)
        pg.pg_ctl("restart", "-m", "fast", "-w", "-t", "60", "-l", pg.log)
        all_pages(d.url, 200)
        outage(pg, d.url, d.logtext)
        assert "flakyd: http: fleet: cannot connect" in d.logtext()
    finally:
        if not os.path.exists(os.path.join(pg.data, "postmaster.pid")):
            start_server(pg)
        rc = d.stop()
    assert rc == 0, d.logtext()
