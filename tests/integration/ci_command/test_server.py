"""flakyctl ci against a server that wants tokens: GET /api/v1/quarantine
and /api/v1/known-tests with a read token (401 without, and for an
upload token); without a read token the quarantine comes from the
upload's answer (the quarantined tests are retried, then not counted),
and --new-tests, which needs the known tests, is exit 2 with the reason."""
import json
import urllib.error
import urllib.request

from conftest import token


def get(url, tok=None):
    req = urllib.request.Request(url)
    if tok:
        req.add_header("Authorization", "Bearer " + tok)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, None


def test_lists_and_tokens(shop, server, tmp_path):
    s = shop("pytest")
    db = s.seed_db      # knows the default branch; inventory quarantined
    up, rd = token(db, "upload"), token(db, "read")
    site = tmp_path / "site.token"
    site.write_text("the-site-token\n")
    srv = server(db, "--token-file", str(site))
    q = "%s/api/v1/quarantine?target=%s" % (srv.url, s.target)
    k = "%s/api/v1/known-tests?target=%s&branch=main" % (srv.url, s.target)
    assert get(q)[0] == 401 and get(q, up)[0] == 401
    code, body = get(q, rd)
    assert code == 200 and [x["test"] for x in body["quarantined"]] == [
        s.spec["ids"]["quarantined"]], body
    assert body["quarantined"][0]["ticket"] == "https://tracker.example/41"
    code, body = get(k, rd)
    assert code == 200 and body["runs"] == 1, body
    assert s.spec["ids"]["broken"] in body["tests"]
    assert s.spec["ids"]["new"] not in body["tests"]
    # a target no run was uploaded for yet: nothing known, no error
    code, body = get(k.replace(s.target, "nosuch"), rd)
    assert code == 200 and body == {"target": "nosuch", "branch": "main",
                                    "runs": 0, "tests": []}, body
    assert get(k.replace("&branch=main", ""), rd)[0] == 400

    # no read token: the upload's answer tells the quarantine (seed 1:
    # the flaky test passes, the broken one is on a --quarantine-file)
    env_over = {"FLAKY_TOKEN": up}
    p = s.ctl(["--format", "json", "ci", "--server", srv.url, "--target",
               s.target, "--quarantine-file", s.qfile, "--budget", "5m",
               "--"] + s.spec["base"], "noread", 1, extra_env=env_over)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert "the server's quarantine was not read (HTTP 401" in p.stderr
    t = {x["test"]: x for x in json.loads(p.stdout)["tests"]}
    inv = t[s.spec["ids"]["quarantined"]]
    assert inv["verdict"] == "quarantined" and inv["attempts"] == 4, inv
    # --new-tests cannot tell new tests without the server's list
    p = s.ctl(["ci", "--server", srv.url, "--target", s.target,
               "--new-tests", "5", "--"] + s.spec["full"], "noread2", 1,
              extra_env=env_over)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert ("the server did not say which tests main knows: HTTP 401" in
            p.stderr and "$FLAKY_READ_TOKEN" in p.stderr), p.stderr
    # with it, the new test is found and rerun
    p = s.ctl(["--format", "json", "ci", "--server", srv.url, "--target",
               s.target, "--new-tests", "3", "--quarantine-file", s.qfile,
               "--budget", "5m", "--"] + s.spec["full"], "read", 1,
              extra_env=dict(env_over, FLAKY_READ_TOKEN=rd))
    j = json.loads(p.stdout)
    new = {x["test"]: x for x in j["tests"]}[s.spec["ids"]["new"]]
    assert new["new"] and new["verdict"] == "new passed", new
    assert new["attempts"] == 3 and p.returncode == 0, (p.stdout, p.stderr)
    assert j["upload"] > 0
