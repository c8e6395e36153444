"""POST /api/v1/uploads on flakyd with TLS, from flakyctl upload and from
raw sockets: what a CI job sends is stored once, whole, with its job."""
import http.client
import json
import os
import signal
import socket
import ssl
import threading
import time

from conftest import answer, ctl, junit, rows, upload

GITHUB = {
    "GITHUB_ACTIONS": "true", "CI": "true",
    "GITHUB_SHA": "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
    "GITHUB_REF": "refs/pull/17/merge", "GITHUB_REF_NAME": "17/merge",
    "GITHUB_HEAD_REF": "fix-cart", "GITHUB_JOB": "unit",
    "GITHUB_RUN_ID": "9001", "GITHUB_RUN_ATTEMPT": "2",
    "GITHUB_SERVER_URL": "https://github.example",
    "GITHUB_REPOSITORY": "shop/web", "GITHUB_WORKFLOW": "tests",
    "RUNNER_NAME": "gh-runner-3",
}
GITLAB = {
    "GITLAB_CI": "true", "CI": "true",
    "CI_COMMIT_SHA": "0fedcba9876543210fedcba9876543210fedcba9",
    "CI_COMMIT_REF_NAME": "main", "CI_JOB_NAME": "unit: [py3.11]",
    "CI_JOB_URL": "https://gitlab.example/shop/web/-/jobs/77",
    "CI_PROJECT_NAME": "web", "CI_RUNNER_DESCRIPTION": "gl-runner-1",
    "CI_MERGE_REQUEST_IID": "5",
    "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "fix-cart",
}


def count(db, table):
    return rows(db, "SELECT count(*) FROM %s" % table)[0][0]


def test_github_and_gitlab_jobs_stored_with_their_job(server, tmp_path):
    d = server()
    f = junit(tmp_path / "r.xml", [("test_add", False), ("test_pay", True)])
    a = answer(upload(d, "--target", "web", f, env=GITHUB))
    assert a["stored"] is True and len(a["runs"]) == 1
    assert [x["test"] for x in a["failed"]] == ["shop.test_pay"], a
    b = answer(upload(d, "--target", "web", f, env=GITLAB))
    assert b["stored"] is True
    got = rows(d.db, "SELECT r.revision, c.branch, c.pr, c.job, c.job_url, "
               "c.attempt, c.ci FROM runs r JOIN run_ci c ON c.run_id = "
               "r.id ORDER BY r.id")
    assert got == [
        # the workflow's name with the job's: GitHub's jobs are named
        # within their workflow
        (GITHUB["GITHUB_SHA"], "fix-cart", "17", "tests/unit",
         "https://github.example/shop/web/actions/runs/9001/attempts/2", 2,
         "github"),
        (GITLAB["CI_COMMIT_SHA"], "fix-cart", "5", "unit: [py3.11]",
         GITLAB["CI_JOB_URL"], None, "gitlab"),
    ], got


def test_a_retried_upload_is_stored_once(server, tmp_path):
    d = server()
    f = junit(tmp_path / "r.xml", [("test_add", False), ("test_pay", True)])
    first = answer(upload(d, "--target", "web", f, env=GITHUB))
    again = answer(upload(d, "--target", "web", f, env=GITHUB))
    assert first["stored"] is True and again["stored"] is False
    assert first["upload"] == again["upload"]
    assert first["runs"] == again["runs"]
    # the same files from the job's next attempt are another upload
    nxt = answer(upload(d, "--target", "web", f,
                        env=dict(GITHUB, GITHUB_RUN_ATTEMPT="3")))
    assert nxt["stored"] is True and nxt["upload"] != first["upload"]
    # an Idempotency-Key names the upload whatever its bytes
    k1 = answer(upload(d, "--target", "web", "--idempotency-key", "job-1",
                       f, env=GITLAB))
    g = junit(tmp_path / "g.xml", [("test_add", True)])
    k2 = answer(upload(d, "--target", "web", "--idempotency-key", "job-1",
                       g, env=GITLAB))
    assert k1["stored"] is True and k2["stored"] is False
    assert count(d.db, "uploads") == 3
    assert count(d.db, "runs") == 3


def raw_post(d, body, total=None, headers=None, token="upload", cut=False):
    """POST the body over TLS by hand; cut: close after sending it (a
    part of the body when total is larger)."""
    host, port = d.url.split("//")[1].split(":")
    ctx = ssl.create_default_context(cafile=d.cert)
    s = ctx.wrap_socket(socket.create_connection((host, int(port))),
                        server_hostname=host)
    h = {"Host": "%s:%s" % (host, port),
         "Content-Type": "application/xml",
         "Content-Length": str(len(body) if total is None else total)}
    if token:
        h["Authorization"] = "Bearer " + d.tokens[token]
    h.update(headers or {})
    h = {k: v for k, v in h.items() if v is not None}
    head = "POST /api/v1/uploads?target=web HTTP/1.1\r\n" + "".join(
        "%s: %s\r\n" % kv for kv in h.items()) + "\r\n"
    try:
        s.sendall(head.encode() + body)
    except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
        # refused in the middle of the body, the server answers and
        # closes (docs/api.md): its answer is still there to read
        pass
    if cut:
        s.close()
        return None
    s.settimeout(30)
    data = b""
    while True:
        try:
            c = s.recv(65536)
        except (ConnectionResetError, ssl.SSLError):
            break
        if not c:
            break
        data += c
    s.close()
    status = int(data.split(b" ", 2)[1])
    return status, data.split(b"\r\n\r\n", 1)[1]


def spool_files(d):
    return [n for _, _, fs in os.walk(d.tmp) for n in fs
            if n.startswith("body-")]


def test_a_cut_connection_is_stored_never(server, tmp_path):
    d = server()
    body = open(junit(tmp_path / "r.xml", [("t%d" % i, i % 7 == 0)
                                           for i in range(2000)]),
                "rb").read()
    raw_post(d, body[:len(body) // 2], total=len(body), cut=True)
    # the server lets go of the spool once it sees the connection gone
    deadline = time.monotonic() + 20
    while spool_files(d) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert spool_files(d) == []
    status, reply = raw_post(d, body)
    assert status == 201, reply
    assert count(d.db, "uploads") == 1 and count(d.db, "runs") == 1
    assert rows(d.db, "SELECT count(*) FROM results")[0][0] == 2000


def test_an_oversized_body_is_refused_with_413(server, tmp_path):
    d = server(extra="  max_upload: 1\n")
    cases = [("test_%05d" % i, False) for i in range(16000)]
    f = junit(tmp_path / "big.xml", cases)
    assert os.path.getsize(f) > 1024 * 1024
    p = upload(d, "--target", "web", f, check=2)
    assert "413" in p.stderr and "max_upload" in p.stderr, p.stderr
    assert count(d.db, "uploads") == 0 and count(d.db, "runs") == 0
    # chunked, with no length said: refused once past the limit. Just
    # past it, so that the rest fits in the sockets' buffers and the
    # client is not still sending when the server closes.
    big = open(f, "rb").read()[:1024 * 1024 + 16384]
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(big[i:i + 65536]),
                                          big[i:i + 65536])
                      for i in range(0, len(big), 65536)) + b"0\r\n\r\n"
    status, reply = raw_post(d, chunks, headers={
        "Transfer-Encoding": "chunked", "Content-Length": None})
    assert status == 413, reply
    # an empty body is no upload
    status, reply = raw_post(d, b"")
    assert status == 400 and b"the body: no test results" in reply, reply
    assert count(d.db, "uploads") == 0 and count(d.db, "runs") == 0


def test_refusals_are_json_with_their_status(server, tmp_path):
    d = server(extra="  uploads_per_minute: 2\n")
    f = junit(tmp_path / "r.xml", [("test_add", False)])
    body = open(f, "rb").read()
    status, reply = raw_post(d, body, token="read")
    assert status == 403 and json.loads(reply)["status"] == 403, reply
    status, reply = raw_post(d, body, token=None)
    assert status == 401 and "token" in json.loads(reply)["error"]
    status, reply = raw_post(d, body, headers={"Content-Type": "image/png"})
    assert status == 415, reply
    status, reply = raw_post(d, body, headers={"Content-Encoding": "br"})
    assert status == 415, reply
    status, reply = raw_post(d, body, headers={"Idempotency-Key": "k" * 300})
    assert status == 400 and b"Idempotency-Key" in reply, reply
    # the rate: two a minute per token, then 429 with Retry-After
    assert raw_post(d, body)[0] == 201
    assert raw_post(d, body)[0] in (200, 201)
    p = upload(d, "--target", "web", "--retries", "0", f, check=2)
    assert "429" in p.stderr, p.stderr
    assert count(d.db, "uploads") == 1


def test_uploads_during_reloads_are_each_stored_once(server, tmp_path):
    d = server()
    files = [junit(tmp_path / ("r%d.xml" % i),
                   [("test_%d_%d" % (i, j), j == i % 5) for j in range(50)])
             for i in range(12)]
    results = []

    def job(i):
        results.append(upload(d, "--target", "web", "--job", "unit",
                              "--attempt", str(i + 1), files[i],
                              check=None))
    threads = [threading.Thread(target=job, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for _ in range(3):
        d.proc.send_signal(signal.SIGHUP)
        time.sleep(0.2)
    for t in threads:
        t.join(timeout=300)
    assert [p.returncode for p in results] == [0] * 12, \
        [p.stderr for p in results]
    assert count(d.db, "uploads") == 12 and count(d.db, "runs") == 12
    # every answer was about one upload of its own
    assert len({answer(p)["upload"] for p in results}) == 12


def test_plain_http_on_another_address_needs_tls(server, tmp_path):
    db = str(tmp_path / "x.db")
    cfg = tmp_path / "x.yaml"
    cfg.write_text("database: %s\nsocket: %s\nhttp:\n  listen: "
                   "0.0.0.0:0\n  token_file: %s\n  uploads: true\n" % (
                       db, tmp_path / "x.sock", tmp_path / "tok"))
    (tmp_path / "tok").write_text("secret-secret-secret\n")
    p = ctl("--config", str(cfg), "check-config", check=None) \
        if False else None
    import subprocess
    from conftest import FLAKYD
    p = subprocess.run([FLAKYD, "--config", str(cfg), "--foreground"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode != 0
    assert "tls_cert" in p.stderr and "behind_proxy" in p.stderr, p.stderr
