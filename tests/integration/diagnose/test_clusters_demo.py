"""flakyctl clusters on the example suite (docs/triage.md): its eight
failing tests have causes of their own, so no two fail together more often
than chance, however much some overlap (the broken test fails in every run
and shares every other test's failing runs)."""


def test_demo_has_no_cluster(demo):
    doc = demo.json("clusters", "--since", "all")
    assert doc["runs"] == 50
    assert doc["tests"] == 8 and doc["pairs"] == 28
    assert doc["tested"] >= 1
    assert doc["clusters"] == [] and doc["links"] == 0
    p = demo.ctl("clusters", "--since", "all")
    assert p.stdout.startswith("0 clusters among 8 tests"), p.stdout


def test_demo_report_and_triage_without_clusters(demo):
    doc = demo.json("report")
    assert doc["tests"] and all(t["cluster"] is None for t in doc["tests"])
    assert demo.json("triage")["clusters"] == []
    p = demo.ctl("ticket", "--cluster", "1", check=2)
    assert "--cluster 1: no cluster in this window" in p.stderr
