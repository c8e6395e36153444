"""Serving safely: the door of the dashboard's server (lib/http) tested
over real sockets against flakyctl serve and flakyd's http:."""
import socket
import struct
import subprocess
import time

import pytest

from conftest import FLAKYCTL, FLAKYD, ctl, get, read_line

SEC_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def test_healthz_and_headers(serve):
    s = serve()
    status, h, body = get(s.url + "/healthz")
    assert (status, body) == (200, b"ok\n")
    csp = h["Content-Security-Policy"]
    # No network loads: nothing but inline style and script, data: images.
    assert "default-src 'none'" in csp
    assert "img-src data:" in csp
    assert "frame-ancestors 'none'" in csp
    for k, v in SEC_HEADERS.items():
        assert h[k] == v, k
    status, h, body = get(s.url + "/no/such/page")
    assert status == 404
    assert h["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH",
                                    "OPTIONS"])
def test_only_get_and_head(serve, method):
    s = serve()
    status, h, body = get(s.url + "/healthz", method=method,
                          data=b"x" if method in ("POST", "PUT") else None)
    assert status == 405
    assert h["Allow"] == "GET, HEAD"


def raw(url, request):
    """Send request bytes as they are (methods and headers urllib would
    not send); the reply's status line and headers, read to their end."""
    host, port = url[len("http://"):].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as c:
        c.sendall(request)
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = c.recv(4096)
            if not chunk:
                break
            reply += chunk
    head = reply.split(b"\r\n\r\n")[0].decode()
    lines = head.split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in
               (l.partition(":") for l in lines[1:])}
    return int(lines[0].split()[1]), headers


def test_methods_by_path(serve):
    """Issue 28: another method on a page is 405 with Allow; on a path
    that is not there 404, whatever the method; a method the server does
    not implement at all 501, with Allow too (RFC 9110 15.6.2, 10.2.1)."""
    s = serve()
    for path in ("/tests", "/api/v1/tests", "/test/1"):
        status, h, _ = get(s.url + path, method="DELETE")
        assert (status, h["Allow"]) == (405, "GET, HEAD"), path
    status, h, _ = get(s.url + "/no/such/page", method="POST", data=b"x")
    assert status == 404 and h.get("Allow") is None
    for method in (b"BREW", b"PROPFIND", b"M-SEARCH"):
        status, h = raw(s.url, method + b" /healthz HTTP/1.1\r\nHost: "
                        b"127.0.0.1\r\nContent-Length: 0\r\n\r\n")
        assert (status, h.get("allow")) == (501, "GET, HEAD"), method
    # and the server still answers
    assert get(s.url + "/healthz")[0] == 200


def test_head_has_no_body(serve):
    s = serve()
    status, h, body = get(s.url + "/healthz", method="HEAD")
    assert status == 200
    assert body == b""


def test_dns_rebinding_refused(serve):
    """Without a token only loopback names may ask: a page of another
    site whose name was made to point at 127.0.0.1 is refused."""
    s = serve()
    status, _, body = get(s.url + "/healthz", headers={"Host": "evil.test"})
    assert status == 403
    for host in ("localhost", "127.0.0.1:8470", "[::1]:1"):
        assert get(s.url + "/healthz", headers={"Host": host})[0] == 200
    # host names are case-insensitive (RFC 9110 4.2.3)
    for host in ("LOCALHOST", "LocalHost:8470"):
        assert get(s.url + "/healthz", headers={"Host": host})[0] == 200
    assert get(s.url + "/healthz", headers={"Host": "localhost.evil.test"})[
        0] == 403


def test_two_host_headers_refused(serve, tmp_path):
    """RFC 9112 3.2: more than one Host is 400, whichever the server
    would have believed (the first won: evil.test after 127.0.0.1 was
    served), with a token as without one."""
    tok = tmp_path / "token"
    tok.write_text("t0ken\n")
    for s, auth in ((serve(), b""), (serve("--token-file", str(tok)),
                                     b"Authorization: Bearer t0ken\r\n")):
        for hosts in ((b"127.0.0.1", b"evil.test"), (b"evil.test",
                                                     b"127.0.0.1"),
                      (b"localhost", b"localhost")):
            status, _ = raw(s.url, b"GET /healthz HTTP/1.1\r\nHost: " +
                            hosts[0] + b"\r\n" + auth + b"host: " +
                            hosts[1] + b"\r\n\r\n")
            assert status == 400, (hosts, auth)
        status, _ = raw(s.url, b"GET /healthz HTTP/1.1\r\nHost: "
                        b"127.0.0.1\r\n" + auth + b"\r\n")
        assert status == 200


def test_token(serve, tmp_path):
    tok = tmp_path / "token"
    tok.write_text("s3cret-Token_1\n")
    s = serve("--token-file", str(tok))
    status, h, _ = get(s.url + "/healthz")
    assert status == 401
    assert h["WWW-Authenticate"].startswith("Bearer")
    for wrong in ("Bearer s3cret-Token_", "Bearer s3cret-Token_12",
                  "Bearer S3cret-Token_1", "Basic s3cret-Token_1",
                  "s3cret-Token_1"):
        assert get(s.url + "/healthz",
                   headers={"Authorization": wrong})[0] == 401, wrong
    ok = {"Authorization": "Bearer s3cret-Token_1"}
    assert get(s.url + "/healthz", headers=ok)[0:3:2] == (200, b"ok\n")
    # the scheme is case-insensitive, one or more spaces after it (RFC
    # 9110 11.1, 11.4)
    for scheme in ("bearer s3cret-Token_1", "BEARER s3cret-Token_1",
                   "Bearer   s3cret-Token_1"):
        assert get(s.url + "/healthz", headers={"Authorization": scheme})[
            0] == 200, scheme
    assert get(s.url + "/healthz", headers={
        "Authorization": "bearer s3cret-token_1"})[0] == 401
    # With a token, any Host name: the token is the guard.
    assert get(s.url + "/healthz", headers=dict(ok, Host="dash.example"))[
        0] == 200


def test_bad_token_file(demo_db, tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("\n")
    p = ctl("--db", demo_db, "serve", "--listen", "127.0.0.1:0",
            "--token-file", str(empty), check=2)
    assert "expected a bearer token" in p.stderr
    p = ctl("--db", demo_db, "serve", "--token-file",
            str(tmp_path / "missing"), check=2)
    assert "missing" in p.stderr


def test_non_loopback_without_token_refused(demo_db, tmp_path):
    p = ctl("--db", demo_db, "serve", "--listen", "0.0.0.0:0", check=2)
    assert "not a loopback address" in p.stderr
    p = ctl("--db", demo_db, "serve", "--listen", "nonsense", check=2)
    assert "expected ADDR:PORT" in p.stderr
    cfg = tmp_path / "flaky.yaml"
    cfg.write_text("database: %s\ntimezone: UTC\n\nhttp:\n"
                   "  listen: 0.0.0.0:8470\n" % demo_db)
    p = subprocess.run([FLAKYD, "--check-config", "--config", str(cfg)],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1
    # file:line:col, the key and what was expected
    assert "flaky.yaml:5:" in p.stderr and "listen:" in p.stderr, p.stderr
    assert "token_file" in p.stderr
    cfg.write_text("database: %s\ntimezone: UTC\nhttp:\n"
                   "  listen: 0.0.0.0:8470\n  token_file: tok\n" % demo_db)
    p = subprocess.run([FLAKYD, "--check-config", "--config", str(cfg)],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr


def test_limits(serve):
    s = serve()
    host, port = s.url[len("http://"):].split(":")
    # Headers past 8 KiB: refused, the connection closed.
    with socket.create_connection((host, int(port)), timeout=10) as c:
        c.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " +
                  b"a" * 16384 + b"\r\n\r\n")
        reply = c.recv(4096)
        assert not reply.startswith(b"HTTP/1.1 200"), reply[:80]
    # A body past the limit, whatever the method.
    status, _, _ = get(s.url + "/healthz", method="POST", data=b"x" * 4096)
    assert status in (405, 413)
    # The server still answers.
    assert get(s.url + "/healthz")[0] == 200


def test_connection_cap(serve):
    """Past 256 open connections a new one is answered 503 and closed,
    whether the others sent a request (half of them) or nothing yet;
    once they close, connections are counted down again."""
    s = serve()
    host, port = s.url[len("http://"):].split(":")
    req = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    held = []
    try:
        for i in range(256):
            c = socket.create_connection((host, int(port)), timeout=10)
            held.append(c)
            if i % 2 == 0:
                c.sendall(req)
                assert c.recv(4096).startswith(b"HTTP/1.1 200")
        c = socket.create_connection((host, int(port)), timeout=10)
        c.sendall(req)
        reply = c.recv(4096)
        assert reply.startswith(b"HTTP/1.1 503"), reply[:80]
        c.close()
    finally:
        for c in held:
            c.close()
    deadline = time.monotonic() + 10
    while get(s.url + "/healthz")[0] != 200:
        assert time.monotonic() < deadline, "the count never came down"
        time.sleep(0.05)


def test_clients_that_leave(serve):
    """Clients that ask for a page and leave before the reply (some with
    a reset): the server keeps answering, and stops cleanly (the fixture
    checks exit 0: under ASan, no request leaked or freed twice)."""
    s = serve()
    host, port = s.url[len("http://"):].split(":")
    linger = struct.pack("ii", 1, 0)
    for i in range(200):
        c = socket.create_connection((host, int(port)), timeout=10)
        c.sendall(b"GET /tests HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        if i % 2 == 0:
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        c.close()
    deadline = time.monotonic() + 15
    while get(s.url + "/tests")[0] != 200:
        assert time.monotonic() < deadline, "never answered again"
        time.sleep(0.05)


def test_serve_stops_on_signals(serve):
    for sig in ("SIGINT", "SIGTERM"):
        s = serve()
        import signal
        s.proc.send_signal(getattr(signal, sig))
        assert s.proc.wait(timeout=15) == 0


def test_flakyd_serves(flakyd_http):
    """flakyd with http: on port 0 says its URL in the log and serves
    while its schedule runs; SIGTERM stops both (the fixture checks)."""
    url = flakyd_http.url
    assert get(url + "/healthz")[0:3:2] == (200, b"ok\n")
    assert get(url + "/healthz", method="POST", data=b"")[0] == 405
    status, _, body = get(url + "/")
    assert status == 200
    # the overview knows the daemon's targets and their schedule
    assert b"tick" in body and b"every 1s" in body
