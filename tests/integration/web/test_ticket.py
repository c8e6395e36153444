"""The ticket on a test's page is flakyctl ticket's: every test of the demo
database (pytest's, and the ingested ones with HTML and quotes in their
ids), its page from flakyctl serve and from report --html against the
command's stdout, byte for byte once unescaped."""
import html
import json
import re

from conftest import ctl, get

PRE = re.compile(r'<pre id="ticket-(\d+)" class="ticket">([^<]*)</pre>')


def tickets(page):
    """{test id: the unescaped text of its ticket} of an HTML page."""
    return {int(m.group(1)): html.unescape(m.group(2))
            for m in PRE.finditer(page)}


def test_page_ticket_is_flakyctls(serve, demo_db, tmp_path):
    s = serve()
    status, _, body = get(s.url + "/api/v1/tests")
    assert status == 200
    tests = json.loads(body)["tests"]
    assert len(tests) >= 5, tests
    failing = 0
    for t in tests:
        status, _, page = get(s.url + "/test/%d" % t["id"])
        assert status == 200, t
        shown = tickets(page.decode())
        assert list(shown) == [t["id"]], t
        want = ctl("--db", demo_db, "ticket", "--target", t["target"],
                   t["test"]).stdout
        assert want.startswith("## ") and "### Reproduce" in want, want
        assert shown[t["id"]] == want, t
        failing += "### Failure modes" in want
    # the comparison saw tickets with failures, hostile ids among them
    assert failing >= 2
    assert any("<script>" in t["test"] for t in tests)

    # report --html: the pages of the unstable tests, the same text
    out = tmp_path / "report.html"
    ctl("--db", demo_db, "report", "--html", str(out))
    shown = tickets(out.read_text())
    assert shown
    for t in tests:
        if t["id"] in shown:
            want = ctl("--db", demo_db, "ticket", "--target", t["target"],
                       t["test"]).stdout
            assert shown[t["id"]] == want, t
