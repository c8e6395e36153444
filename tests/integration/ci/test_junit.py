"""--format junit: the analysis as valid JUnit XML (xmllint and Python's
parser), critical, warning and broken tests failing, evidence as
properties, and read back by flakyctl ingest with the same counts."""
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from conftest import ODD, ctl


@pytest.fixture(scope="module")
def junit(evidence, tmp_path_factory):
    _, db = evidence
    p = ctl(["--db", db, "--format", "junit", "report"])
    path = tmp_path_factory.mktemp("junit") / "flaky.xml"
    path.write_text(p.stdout)
    return path


def test_valid_xml(junit):
    if shutil.which("xmllint") is None:
        pytest.skip("xmllint (libxml2-utils) is not installed")
    p = subprocess.run(["xmllint", "--noout", str(junit)],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr


def test_testcases(junit):
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("skipped"),
            root.get("errors")) == ("6", "4", "1", "0")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["shop"]
    cases = {c.get("name"): c for c in suites[0].findall("testcase")}
    assert set(cases) >= {ODD, "test_shop.py::test_payment_retry"}
    assert all(c.get("classname") == "shop" for c in cases.values())

    def props(c):
        return {p.get("name"): p.get("value")
                for p in c.find("properties").findall("property")}
    c = cases["test_shop.py::test_payment_retry"]
    assert props(c) == {"flaky.tier": "critical", "flaky.runs": "10",
                        "flaky.failures": "3", "flaky.fail_rate": "0.3000",
                        "flaky.ci_low": "0.1078", "flaky.ci_high": "0.6032",
                        "flaky.signature": "UNKNOWN"}
    f = c.find("failure")
    assert f.get("type") == "flaky.critical"
    assert f.get("message") == ("flaky: failed 3 of 10 runs (30.0%, 95% "
                                "interval 11%-60%), UNKNOWN")
    assert f.text == "AssertionError: gateway said 502, retry 3: 50% of 2"
    assert cases[ODD].find("failure") is not None
    assert cases["test_shop.py::test_cache_expiry"].find(
        "failure").get("type") == "flaky.warning"
    assert cases["test_shop.py::test_legacy_api"].find(
        "failure").get("message").startswith("broken: failed 10 of 10 runs")
    c = cases["test_shop.py::test_cart_total"]
    assert c.find("failure") is None and props(c)["flaky.tier"] == "stable"
    assert cases["test_shop.py::test_refunds"].find("skipped") is not None


def test_ingest_reads_it_back(junit, tmp_path):
    """Our own ingest takes the file: one run, each test once, the same
    failures and skips."""
    db = str(tmp_path / "again.db")
    p = ctl(["--db", db, "ingest", "--target", "again", str(junit)])
    assert ", 6 tests" in p.stdout, p.stdout
    rep = json.loads(ctl(["--db", db, "--format", "json", "report"]).stdout)
    tests = {t["test"]: t for t in rep["tests"]}
    assert len(tests) == 6
    assert sorted(n for n, t in tests.items() if t["failures"]) == sorted(
        "shop." + n for n in (ODD, "test_shop.py::test_payment_retry",
                              "test_shop.py::test_cache_expiry",
                              "test_shop.py::test_legacy_api"))
    assert [n for n, t in tests.items() if t["skips"]] == [
        "shop.test_shop.py::test_refunds"]
    assert rep["runs"]["incomplete"] == 0


def test_analyze_junit(tmp_path):
    """analyze --format junit on a suite of its own: the runs' analysis."""
    (tmp_path / "test_one.py").write_text("def test_ok():\n    pass\n")
    p = ctl(["--db", str(tmp_path / "a.db"), "--format", "junit", "analyze",
             "--runs", "2", "--target", "one", "--",
             "/usr/bin/python3", "-m", "pytest", "-p", "no:cacheprovider",
             "-p", "no:random_order"], cwd=tmp_path)
    root = ET.fromstring(p.stdout)
    assert (root.get("tests"), root.get("failures")) == ("1", "0")
    case = root.find("testsuite/testcase")
    assert case.get("name") == "test_one.py::test_ok"
