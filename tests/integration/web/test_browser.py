"""The dashboard in real headless Chromium (browse.js): every page at 1400
and 400 pixels, links followed, no console error, no dialog, no request
leaving 127.0.0.1; screenshots kept. The harness is first shown to catch
each of those on a page made to do them all."""
import http.server
import os
import threading

import pytest

from conftest import browse, shots_dir

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
    report = browse({"base": bad_site, "pages": ["/"], "follow": 5,
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
    """What no page of ours may do, at any width."""
    assert report
    for r in report:
        where = "%s at %d px" % (r["path"], r["width"])
        assert r["external"] == [], where
        assert r["dialogs"] == [], where
        assert r["errors"] == [], where
        assert [m for m in r["console"]
                if "status of 404" not in m] == [], where
        assert r["csp"] and "default-src 'none'" in r["csp"], where
        assert os.path.getsize(r["shot"]) > 0, where


def test_pages_in_chromium(serve, tmp_path):
    s = serve()
    report = browse({"base": s.url, "pages": ["/healthz", "/"],
                     "follow": 50,
                     "shots": shots_dir(tmp_path, "serve")}, tmp_path)
    assert_clean(report)
    health = [r for r in report if r["path"] == "/healthz"]
    assert [r["status"] for r in health] == [200, 200]
    assert all(r["text"].strip() == "ok" for r in health)


def test_token_in_chromium(serve, tmp_path):
    tok = tmp_path / "token"
    tok.write_text("browser-token\n")
    s = serve("--token-file", str(tok))
    without = browse({"base": s.url, "pages": ["/healthz"],
                      "shots": str(tmp_path / "a")}, tmp_path)
    assert [r["status"] for r in without] == [401, 401]
    with_token = browse({"base": s.url, "token": "browser-token",
                         "pages": ["/healthz"],
                         "shots": str(tmp_path / "b")}, tmp_path)
    assert [r["status"] for r in with_token] == [200, 200]
