"""flakyctl clusters, ticket --cluster, triage and report on ingested CI
runs with one planted co-failure cluster (docs/triage.md, "Co-failure
clusters"): the real flakyctl, seeded data, so every count repeats."""
import json
import random

import pytest

from conftest import run

RUNS = 150
UNTIL = "2026-11-08"
DB_TESTS = ["test_db.py::test_query", "test_db.py::test_insert",
            "test_db.py::test_migrate", "test_api.py::test_orders"]
INDEPENDENT = ["test_calc.py::test_%d" % i for i in range(10)]
STABLE = ["test_ok.py::test_%d" % i for i in range(5)]


def junit(r, rnd):
    """Run r: the database goes away in about 15% of runs, and each of its
    four tests then fails with 90%; ten other tests fail by themselves at
    5% to 25%."""
    ts = "2026-11-0%dT%02d:%02d:00" % (1 + r // 48, (r % 48) // 2,
                                        30 * (r % 2))
    down = rnd.random() < 0.15
    cases = []
    for t in DB_TESTS + INDEPENDENT + STABLE:
        cls, name = t.split("::")
        body = ""
        if t in DB_TESTS and down and rnd.random() < 0.9:
            body = ('<failure message="ConnectionError: connection refused '
                    'by db:5432">trace</failure>')
        elif t in INDEPENDENT and rnd.random() < 0.05 + 0.02 * int(t[-1]):
            body = '<failure message="assert 1 == 2">trace</failure>'
        cases.append('<testcase classname="%s" name="%s" time="0.1">%s'
                     '</testcase>' % (cls[:-3], name, body))
    return ('<?xml version="1.0"?>\n<testsuite name="ci" tests="%d" '
            'timestamp="%s">\n%s\n</testsuite>\n' % (len(cases), ts,
                                                       "\n".join(cases)))


@pytest.fixture(scope="module")
def cluster_db(tmp_path_factory):
    d = tmp_path_factory.mktemp("clusters")
    rnd = random.Random(19)
    files = []
    for r in range(RUNS):
        f = d / ("run-%03d.xml" % r)
        f.write_text(junit(r, rnd))
        files.append(str(f))
    db = str(d / "c.db")
    run(["--db", db, "ingest", "--target", "ci"] + files, check=0)
    return db


def ctl_json(db, *args):
    p = run(["--db", db, "--format", "json"] + list(args), check=0)
    return json.loads(p.stdout)


def member(name, tests):
    return any(t.endswith(name.split("::")[1]) and
               name.split("::")[0][:-3] in t for t in tests)


def test_clusters_finds_the_planted_one(cluster_db):
    doc = ctl_json(cluster_db, "clusters", "--since", "all")
    assert doc["runs"] == RUNS
    assert len(doc["clusters"]) == 1, doc["clusters"]
    c = doc["clusters"][0]
    names = [t["test"] for t in c["tests"]]
    assert c["id"] == 1 and c["size"] == 4
    for t in DB_TESTS:
        assert member(t, names), (t, names)
    assert "connection refused" in c["message"]["value"]
    assert c["message"]["tests"] == 4
    assert c["signature"]["value"] == "INFRA"
    assert c["file"]["tests"] == 3
    assert c["hours_hint"] is False
    assert c["shared_runs"] >= 15
    assert c["p_max"] < 0.01 / doc["pairs"]
    # the independent tests were eligible and tested, none linked
    assert doc["tests"] == 14 and doc["pairs"] == 14 * 13 // 2


def test_clusters_table(cluster_db):
    p = run(["--db", cluster_db, "clusters", "--since", "all"], check=0)
    assert p.stdout.startswith("1 cluster among 14 tests")
    assert "cluster 1: 4 tests of ci fail together" in p.stdout
    assert "signature: INFRA" in p.stdout
    assert "flakyctl ticket --cluster 1" in p.stdout


def test_window_and_target(cluster_db):
    doc = ctl_json(cluster_db, "clusters", "--since", "2020-01-01",
                   "--until", "2020-02-01")
    assert doc["runs"] == 0 and doc["clusters"] == []
    doc = ctl_json(cluster_db, "clusters", "--since", "all", "--target",
                   "nope")
    assert doc["clusters"] == []
    p = run(["--db", cluster_db, "clusters", "--since", "all"], check=0)
    assert "0 clusters" not in p.stdout


def test_ticket_cluster(cluster_db):
    p = run(["--db", cluster_db, "ticket", "--cluster", "1", "--since",
             "all"], check=0)
    assert p.stdout.startswith("## INFRA flake in 4 tests that fail "
                               "together")
    assert "### Tests (4)" in p.stdout
    assert p.stdout.count("| `test_") + p.stdout.count("| `test_api") >= 4
    doc = ctl_json(cluster_db, "ticket", "--cluster", "1", "--since", "all")
    assert doc["cluster"]["size"] == 4 and "body" in doc


def test_ticket_cluster_errors(cluster_db):
    p = run(["--db", cluster_db, "ticket", "--cluster", "2", "--since",
             "all"], check=2)
    assert "expected a cluster from 1 to 1" in p.stderr
    p = run(["--db", cluster_db, "ticket", "--cluster", "one"], check=2)
    assert "--cluster: expected a cluster number" in p.stderr
    p = run(["--db", cluster_db, "ticket", "--cluster", "1", "x"], check=2)
    assert "a test or --cluster, not both" in p.stderr
    p = run(["--db", cluster_db, "clusters", "extra"], check=2)
    assert "unexpected argument 'extra'" in p.stderr
    p = run(["--db", cluster_db, "--format", "csv", "clusters"], check=2)


def test_report_and_triage_name_the_cluster(cluster_db):
    doc = ctl_json(cluster_db, "report", "--since", "30d", "--until", UNTIL)
    by = {t["test"]: t["cluster"] for t in doc["tests"]}
    assert sorted(v for v in by.values() if v is not None) == [1] * 4
    p = run(["--db", cluster_db, "report", "--since", "30d", "--until",
             UNTIL], check=0)
    assert p.stdout.count("cluster 1: fails with 3 other tests") >= 1
    doc = ctl_json(cluster_db, "triage", "--since", "all", "--until", UNTIL)
    assert [c["id"] for c in doc["clusters"]] == [1]
    p = run(["--db", cluster_db, "triage", "--since", "all", "--until",
             UNTIL], check=0)
    assert "one ticket, 4 tests (flakyctl ticket --cluster 1)" in p.stdout
