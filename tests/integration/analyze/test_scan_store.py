"""flakyctl scan --store: approximate assertions joined to the measured
tests, shown by report beside the failure rate (issue 6, item 4)."""
import json
import sqlite3

from conftest import PYTEST, run

SUITE = '''import random

import numpy as np
import pytest


def test_accuracy():
    acc = random.random()
    assert acc > 0.1


class TestClose:
    def test_close(self):
        np.random.seed(0)
        x = np.random.rand(3)
        np.testing.assert_allclose(x, x, rtol=1e-6)


@pytest.mark.parametrize("v", [1, 2])
def test_param(v):
    assert v * 0.1 == pytest.approx(v / 10)


def test_broken_close():
    assert 0.3 == pytest.approx(0.31, abs=1e-3)


def test_plain():
    assert True
'''


def test_scan_store_join(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_model.py").write_text(SUITE)
    db = str(tmp_path / "flaky.db")
    run(["analyze", "--db", db, "--runs", "6", "--target", "model", "--",
         PYTEST, "-v", "-p", "no:random_order"], cwd=tmp_path, check=0)
    for _ in range(2):      # a second scan replaces the first
        p = run(["scan", "--db", db, "--store", "--target", "model", "tests"],
                cwd=tmp_path, check=0)
    assert "stored 4 findings for target model" in p.stderr, p.stderr
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM scan_findings").fetchone()[0] == 4
    rows = con.execute("SELECT test, category, seeded FROM static_risks ORDER BY test").fetchall()
    assert ("tests/test_model.py::TestClose::test_close", "numpy", 1) in rows
    assert ("tests/test_model.py::test_accuracy", "comparison", 0) in rows
    assert ("tests/test_model.py::test_param[1]", "approx", 0) in rows

    doc = json.loads(run(["report", "--db", db, "--format", "json"], check=0).stdout)
    t = {x["test"]: x for x in doc["tests"]}
    close = t["tests/test_model.py::TestClose::test_close"]["static_risks"]
    assert close == [{"path": "tests/test_model.py", "line": 16, "category": "numpy",
                      "tolerance": "rtol=1e-6", "seeded": True}]
    assert t["tests/test_model.py::test_param[2]"]["static_risks"][0]["category"] == "approx"
    assert t["tests/test_model.py::test_plain"]["static_risks"] == []
    assert t["tests/test_model.py::test_broken_close"]["tier"] == "broken"

    table = run(["report", "--db", db], check=0).stdout
    assert ("approximate assertion at tests/test_model.py:25 (abs=1e-3), unseeded"
            in table), table

    # triage and ticket show it too
    p = run(["triage", "--db", db, "test_broken_close"], check=0)
    assert "static risk: approximate assertion at tests/test_model.py:25 (abs=1e-3), unseeded" in p.stdout, p.stdout
    p = run(["ticket", "--db", db, "test_broken_close"], check=0)
    assert "### Static risk" in p.stdout and "tests/test_model.py:25" in p.stdout, p.stdout

    # usage
    p = run(["scan", "--db", db, "--store", "tests"], cwd=tmp_path)
    assert p.returncode == 2 and "--store and --target NAME go together" in p.stderr
