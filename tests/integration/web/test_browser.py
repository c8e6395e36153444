"""The dashboard in real headless Chromium (browse.js): every page at 1400
and 400 pixels, links followed, no console error, no dialog, no request
leaving 127.0.0.1; screenshots kept. The harness is first shown to catch
each of those on a page made to do them all."""
import http.server
import json
import os
import threading

import pytest

from conftest import HOSTILE, browse, get, shots_dir

BAD_PAGE = b"""<!doctype html><html><head><title>bad</title></head><body>
<p>a page that does everything the dashboard must never do</p>
<img src="http://192.0.2.1/pixel.png">
<a href="/other?x=1">other</a>
<script>console.error("boom from the page"); alert("a dialog");</script>
</body></html>"""
OTHER = b"<!doctype html><title>other</title><p>the other page</p>"


class BadHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = OTHER if self.path.startswith("/other") else BAD_PAGE
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def bad_site():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), BadHandler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield "http://127.0.0.1:%d" % srv.server_address[1]
    srv.shutdown()
    srv.server_close()


def test_harness_catches_what_it_must(bad_site, tmp_path):
    """Without this, a harness that saw nothing would pass everything."""
    report = browse({"base": bad_site, "pages": ["/"],
                     "follow": {"/other": 5},
                     "shots": str(tmp_path)}, tmp_path)
    first = [r for r in report if r["path"] == "/"]
    assert [r["width"] for r in first] == [1400, 400]
    for r in first:
        assert r["external"] == ["http://192.0.2.1/pixel.png"]
        assert any("boom from the page" in m for m in r["console"])
        assert r["dialogs"] == ["alert: a dialog"]
        assert os.path.getsize(r["shot"]) > 0
    assert any(r["path"] == "/other?x=1" and "the other page" in r["text"]
               for r in report), "the link was not followed"


def assert_clean(report):
    """What no page of ours may do, at any width; at 400 px as at 1400
    (issue 28): no sideways scroll of the page (tables scroll in their
    box), chart text of 11 px or more as drawn, titles that wrap, no word
    broken in the middle that would fit on a line, a failure's message as
    wide as a column that reads."""
    assert report
    for r in report:
        where = "%s at %d px" % (r["path"], r["width"])
        lay = r["layout"]
        assert r["scrollWidth"] <= r["innerWidth"], (where, r["scrollWidth"])
        assert lay["chartFontMin"] is None or lay["chartFontMin"] >= 11, (
            where, lay["chartFontMin"])
        for t in lay["titles"]:
            assert t["scroll"] <= t["client"] and t["right"] <= r[
                "innerWidth"], (where, t)
        assert lay["breaks"] == [], (where, lay["breaks"])
        assert lay["breakAll"] == [], (where, lay["breakAll"])
        assert all(w >= 250 for w in lay["msgWidths"]), (where,
                                                          lay["msgWidths"])
        assert lay["orderRowMax"] <= 60, (where, lay["orderRowMax"])
        assert r["status"] == 200, where
        assert r["external"] == [], where
        assert r["dialogs"] == [], where
        assert r["errors"] == [], where
        assert r["console"] == [], where
        assert r["csp"] and "default-src 'none'" in r["csp"], where
        assert os.path.getsize(r["shot"]) > 0, where


# Click the rate header's button twice; the rate cells' values after each
# click.
SORT_JS = """(() => {
  const th = [...document.querySelectorAll('#tests th[data-sort]')]
    .find((t) => t.textContent.trim() === 'rate');
  const vals = () => [...document.querySelectorAll('#tests tbody tr')]
    .map((r) => parseFloat(r.cells[th.cellIndex].dataset.v));
  th.querySelector('button').click();
  const first = vals();
  th.querySelector('button').click();
  return {first, second: vals()};
})()"""

def test_pages_in_chromium(flakyd_http, tmp_path):
    """flakyd with the demo evidence: the overview and the tests table,
    then every page their links lead to (tests, runs), at both widths."""
    report = browse({"base": flakyd_http.url,
                     "pages": ["/", "/tests", "/tests?tier=broken"],
                     "follow": {"/test/": 2, "/run/": 2},
                     "shots": shots_dir(tmp_path, "flakyd"),
                     "actions": [{"path": "/tests", "width": 1400,
                                  "js": SORT_JS},
                                 {"path": "/tests?tier=broken",
                                  "width": 400, "js": ROWS_JS}]},
                    tmp_path)
    assert_clean(report)
    paths = {r["path"] for r in report}
    assert any(p.startswith("/test/") for p in paths), paths
    assert any(p.startswith("/run/") for p in paths), paths
    over = next(r for r in report if r["path"] == "/")
    assert "tick" in over["text"] and "every 1s" in over["text"]
    tests = [r for r in report if r["path"] == "/tests"]
    assert "test_shop.py::test_legacy_api" in tests[0]["text"]
    # sorted one way, then the other, on the rates' values
    srt = tests[0]["actions"][0]
    assert srt["first"] == sorted(srt["first"])
    assert srt["second"] == sorted(srt["first"], reverse=True)
    assert len(set(srt["first"])) > 1
    flt = next(r for r in report if r["path"] == "/tests?tier=broken" and
               r["width"] == 400)["actions"][0]
    assert flt and set(flt) == {"broken"}
    assert len(flt) < len(srt["first"])
    # a test's page and a run's page say what they are
    page = next(r for r in report if r["path"].startswith("/test/"))
    assert "95%" in page["text"]
    run = next(r for r in report if r["path"].startswith("/run/"))
    assert "exit" in run["text"].lower()


def test_hostile_ids_stay_text(serve, tmp_path):
    """Tests whose ids are HTML and quotes: no dialog fires on any page
    they appear on, and the text shows as written."""
    s = serve()
    report = browse({"base": s.url, "pages": ["/", "/tests"],
                     "follow": {"/test/": 2}, "followText": "<script>",
                     "shots": shots_dir(tmp_path, "hostile")}, tmp_path)
    assert_clean(report)
    tests = next(r for r in report if r["path"] == "/tests")
    for h in HOSTILE:
        assert h in tests["text"], h
    assert "hostile<i>" in tests["text"]
    pages = [r for r in report if r["path"].startswith("/test/") and
             HOSTILE[0] in r["text"]]
    assert pages, "no page of the hostile test was reached"
    # its failure message (quotes and markup) shows as written too
    assert any(HOSTILE[1] in r["text"] for r in pages)


# The tiers of the rows the server sent for the filters of the URL.
ROWS_JS = """[...document.querySelectorAll('#tests tbody tr')]
  .filter((r) => !r.hidden).map((r) => r.dataset.tier)"""


# On a test's page: the chart's dates and legend, the copy button.
TEST_PAGE_JS = """(() => {
  const chart = document.getElementById('rate-chart');
  const dates = [...chart.querySelectorAll('.date')]
    .filter((t) => t.getClientRects().length).map((t) => t.textContent);
  const legend = chart.querySelector('.legend').textContent;
  const b = document.querySelector('button[data-copy^="ticket-"]');
  const ticket = document.getElementById(b.dataset.copy).textContent;
  b.click();
  return {dates, legend, ticket, button: b.textContent,
          svgWidth: chart.querySelector('svg').getBoundingClientRect().width};
})()"""

def test_page_content_in_chromium(serve, tmp_path):
    """A test's page (chart with dates and legend, ticket, copy), a run's
    page (its output and order), a filter as query parameters; nothing
    wider than the window at 400 px but the boxes that scroll."""
    s = serve()
    tests = json.loads(get(s.url + "/api/v1/tests")[2])["tests"]
    t = next(x for x in tests if x["test"].endswith(HOSTILE[0]))
    runs = json.loads(get(s.url + "/api/v1/runs?limit=1")[2])["runs"]
    tp, rp = "/test/%d" % t["id"], "/run/%d" % runs[0]["id"]
    fp = "/tests?tier=" + t["tier"]
    report = browse({"base": s.url, "pages": [tp, rp, fp],
                     "shots": shots_dir(tmp_path, "content"),
                     "actions": [{"path": tp, "js": TEST_PAGE_JS},
                                 {"path": fp, "js": ROWS_JS}]}, tmp_path)
    assert_clean(report)
    for r in report:
        # tables, charts and output scroll in their boxes, not the page
        assert r["scrollWidth"] <= r["width"], (r["path"], r["width"],
                                                r["scrollWidth"])
    for r in (x for x in report if x["path"] == tp):
        a = r["actions"][0]
        assert a["dates"] and all(len(d) == 10 for d in a["dates"]), a
        assert "daily failure rate" in a["legend"]
        assert "95% interval" in a["legend"]
        assert HOSTILE[0] in a["ticket"] and "Failure rate" in a["ticket"]
        assert a["button"] != "copy"
        assert a["svgWidth"] > 300
        assert "runs alone" in r["text"] and "quarantine" in r["text"]
    run = next(r for r in report if r["path"] == rp)
    assert "exit code" in run["text"] and "Tests in their order" in run["text"]
    rows = next(r for r in report if r["path"] == fp)
    assert rows["actions"][0] and set(rows["actions"][0]) == {t["tier"]}
    assert len(rows["actions"][0]) < len(tests)
