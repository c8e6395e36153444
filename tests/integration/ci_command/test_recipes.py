"""contrib/ci's recipes run as the CI systems run them (issue 29, item 7):
the GitHub Actions composite action's shell steps and the GitLab template's
script, parsed from their YAML (python3-yaml), with the variables GitHub
and GitLab set, run by bash against a real `flakyctl serve --uploads` on
loopback that wants a token for everything: an upload token (flakyctl
token create --scope upload) for the attempts, a read token for its
quarantine and known tests. A quarantine added on the server takes effect
in the next job, no commit between."""
import json
import os
import re
import sqlite3
import subprocess

import yaml

from conftest import FLAKYCTL, HERE, ROOT, ctl, token

ACTION = os.path.join(ROOT, "contrib", "ci", "github", "action.yml")
GITLAB = os.path.join(ROOT, "contrib", "ci", "gitlab",
                      "flaky-ci.gitlab-ci.yml")
EXPR = re.compile(r"\$\{\{(.*?)\}\}")


def github_env(tmp, **over):
    """What a GitHub runner sets for a job (docs.github.com, "Default
    environment variables"); the event's own in over."""
    env = {
        "CI": "true", "GITHUB_ACTIONS": "true",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "acme/shop", "GITHUB_WORKFLOW": "tests",
        "GITHUB_JOB": "unit", "GITHUB_RUN_ID": "9001",
        "GITHUB_RUN_ATTEMPT": "1", "GITHUB_SHA": "a1b2c3d4e5f6",
        "GITHUB_EVENT_NAME": "push", "GITHUB_REF": "refs/heads/main",
        "GITHUB_REF_NAME": "main", "GITHUB_HEAD_REF": "",
        "GITHUB_BASE_REF": "", "RUNNER_NAME": "GitHub Actions 2",
        "RUNNER_OS": "Linux", "RUNNER_TEMP": str(tmp),
        "GITHUB_OUTPUT": str(tmp / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
    }
    env.update(over)
    return env


def run_action(shop, tmp, inputs, ctx, env_over, seed):
    """Each shell step of the composite action, as the runner runs it:
    `bash --noprofile --norc -eo pipefail`, its env: expressions
    evaluated; the inputs never in the script's text. The last exit."""
    action = yaml.safe_load(open(ACTION))
    given = {k: v.get("default", "") for k, v in action["inputs"].items()}
    given.update(inputs)

    def value(expr):
        for alt in expr.split("||"):
            alt = alt.strip()
            if alt.startswith("inputs."):
                v = given[alt[len("inputs."):]]
            else:
                v = ctx
                for part in alt.split(".")[1:]:
                    v = v.get(part, "") if isinstance(v, dict) else ""
            if v:
                return str(v)
        return ""
    rc = None
    for step in action["runs"]["steps"]:
        assert step["shell"] == "bash" and "run" in step, step
        assert "${{" not in step["run"], "an input spliced into the script"
        env = dict(shop.env, **github_env(tmp, **env_over))
        env.update({k: EXPR.sub(lambda m: value(m.group(1)), str(v))
                    for k, v in step.get("env", {}).items()})
        env.update(DEMO_SEED=str(seed), DEMO_STATE=str(tmp / "state"),
                   PATH=os.path.dirname(FLAKYCTL) + ":" + env["PATH"])
        os.makedirs(env["DEMO_STATE"], exist_ok=True)
        (tmp / "step.sh").write_text(step["run"])
        p = subprocess.run(["bash", "--noprofile", "--norc", "-eo",
                            "pipefail", str(tmp / "step.sh")], cwd=shop.dir,
                           env=env, capture_output=True, text=True,
                           timeout=300)
        rc = p
    return rc


def run_gitlab(shop, tmp, job, variables, seed):
    """The template's job as a GitLab runner runs it: the template's and
    the job's variables, GitLab's own, the script lines in one bash with
    `set -eo pipefail`."""
    tpl = yaml.safe_load(open(GITLAB))[job]
    env = dict(shop.env, CI="true", GITLAB_CI="true",
               CI_SERVER_URL="https://gitlab.example.com",
               CI_PROJECT_NAME="shop", CI_PROJECT_DIR=shop.dir,
               CI_DEFAULT_BRANCH="main", CI_COMMIT_SHA="f00dfeed1234",
               CI_JOB_ID="777", CI_PIPELINE_ID="55",
               CI_RUNNER_DESCRIPTION="shared-runner-3",
               DEMO_SEED=str(seed), DEMO_STATE=str(tmp / "state"),
               PATH=os.path.dirname(FLAKYCTL) + ":" + os.environ["PATH"])
    env.update({k: str(v) for k, v in tpl.get("variables", {}).items()})
    env.update(variables)
    os.makedirs(env["DEMO_STATE"], exist_ok=True)
    (tmp / "job.sh").write_text("set -eo pipefail\n" +
                                "\n".join(tpl["script"]) + "\n")
    p = subprocess.run(["bash", "--noprofile", "--norc", str(tmp /
                                                               "job.sh")],
                       cwd=shop.dir, env=env, capture_output=True,
                       text=True, timeout=300)
    return p, tpl


def runs_of(db, where=""):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT branch, pr, job, job_url, attempt, ci, "
                       "upload_id FROM ci_runs %s ORDER BY run_id" %
                       where).fetchall()
    con.close()
    return rows


def test_github_action_and_gitlab_template(shop, server, tmp_path):
    s = shop("pytest")
    token_file = tmp_path / "site.token"
    token_file.write_text("site-token-for-the-dashboard\n")
    db = str(tmp_path / "server.db")
    up, rd = token(db, "upload"), token(db, "read")
    srv = server(db, "--token-file", str(token_file))
    qf = s.spec["ids"]

    # a push to main: the default branch's tests, every attempt uploaded
    gh = tmp_path / "gh-main"
    gh.mkdir()
    p = run_action(s, gh, {"command": "/usr/bin/pytest test_shop.py",
                           "server": srv.url, "token": up,
                           "read-token": rd, "target": "shop",
                           "retries": "1"},
                   {"event": {"repository": {"default_branch": "main"}}},
                   {}, seed=1)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "exit-code=1" in (gh / "output").read_text()
    assert runs_of(srv.db)[0] == ("main", None, "tests/unit",
                                  "https://github.com/acme/shop/actions/runs/"
                                  "9001/attempts/1", 1, "github", 1)

    # quarantined on the server: the next job counts it so, no commit
    for t in ("broken", "quarantined"):
        ctl(["--db", srv.db, "quarantine", "add", qf[t], "--target", "shop",
             "--reason", "INFRA", "--ticket", "https://tracker/41"])

    # a pull request with a new test: seed 7, the flaky test fails then
    # passes on retry 1 and the new one passes its 4 runs: exit 0
    pr = tmp_path / "gh-pr"
    pr.mkdir()
    p = run_action(s, pr, {"command": "/usr/bin/pytest", "server": srv.url,
                           "token": up, "read-token": rd, "target": "shop",
                           "new-tests": "4", "budget": "5m"},
                   {"event": {"repository": {"default_branch": "main"}}},
                   {"GITHUB_EVENT_NAME": "pull_request",
                    "GITHUB_REF": "refs/pull/7/merge",
                    "GITHUB_REF_NAME": "7/merge", "GITHUB_HEAD_REF": "coupons",
                    "GITHUB_BASE_REF": "main", "GITHUB_RUN_ATTEMPT": "2"},
                   seed=7)
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert "exit-code=0" in (pr / "output").read_text()
    assert "::warning file=test_shop.py," in p.stdout, p.stdout
    assert "title=Quarantined test (not counted)::" in p.stdout
    assert "new test passed 4 of 4 runs" in p.stdout
    summary = (pr / "summary.md").read_text()
    assert summary.startswith("### flaky ci: passed (exit 0)"), summary
    prs = runs_of(srv.db, "WHERE pr = '7'")
    assert len(prs) == 4, prs      # the suite, and 3 rounds
    assert set(prs) == {("coupons", "7", "tests/unit",
                         "https://github.com/acme/shop/actions/runs/9001/"
                         "attempts/2", 2, "github", 2)}, prs
    # a quarantined test is not retried: one attempt of each
    con = sqlite3.connect(srv.db)
    n = con.execute("SELECT count(*) FROM results r JOIN tests t ON t.id = "
                    "r.test_id WHERE t.name = ? AND r.run_id IN (SELECT "
                    "run_id FROM ci_runs WHERE pr = '7')",
                    (qf["broken"],)).fetchone()[0]
    # the flaky test failed and passed at the job's revision: a flip
    flips = con.execute("SELECT test, revision, failed_job, passed_job FROM "
                        "flips").fetchall()
    con.close()
    assert n == 1
    assert flips == [(qf["flaky"], "a1b2c3d4e5f6", "tests/unit",
                      "tests/unit")], flips

    # GitLab, a merge request's pipeline: seed 4, the new test fails its
    # 4th run: exit 1, the report in flaky-junit.xml
    gl = tmp_path / "gl"
    gl.mkdir()
    p, tpl = run_gitlab(s, gl, ".flaky-ci", {
        "FLAKY_SERVER": srv.url, "FLAKY_TOKEN": up, "FLAKY_READ_TOKEN": rd,
        "FLAKY_CI_COMMAND": "/usr/bin/pytest", "FLAKY_CI_TARGET": "shop",
        "FLAKY_CI_NEW_TESTS": "10", "FLAKY_CI_BUDGET": "5m",
        "CI_JOB_NAME": "unit",
        "CI_JOB_URL": "https://gitlab.example.com/acme/shop/-/jobs/777",
        "CI_COMMIT_REF_NAME": "coupons", "CI_MERGE_REQUEST_IID": "12",
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "coupons"}, seed=4)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "new test failed 1 of 4 runs: flaky before it merged" in p.stderr
    report = os.path.join(s.dir, tpl["artifacts"]["reports"]["junit"])
    x = subprocess.run(["xmllint", "--noout", "--schema",
                        os.path.join(HERE, "junit.xsd"), report],
                       capture_output=True, text=True)
    assert x.returncode == 0, x.stderr
    assert "<flakyFailure" in open(report).read()
    assert set(runs_of(srv.db, "WHERE pr = '12'")) == {
        ("coupons", "12", "unit",
         "https://gitlab.example.com/acme/shop/-/jobs/777", None, "gitlab",
         3)}

    # upload mode of both: a JUnit file the job already wrote
    junit = os.path.join(s.dir, "junit.xml")
    subprocess.run(["/usr/bin/pytest", "-q", "--junitxml", junit,
                    "test_coupons.py"], cwd=s.dir, env=dict(
                        s.env, DEMO_SEED="1",
                        DEMO_STATE=str(tmp_path / "state-j")),
                   capture_output=True)
    up_gh = tmp_path / "gh-up"
    up_gh.mkdir()
    p = run_action(s, up_gh, {"junit": junit, "server": srv.url,
                              "token": up, "target": "shop"}, {}, {},
                   seed=1)
    assert p.returncode == 0 and "stored upload 4 of shop" in p.stdout, p
    p, _ = run_gitlab(s, gl, ".flaky-upload", {
        "FLAKY_SERVER": srv.url, "FLAKY_TOKEN": up, "FLAKY_CI_TARGET": "shop",
        "FLAKY_CI_JUNIT": junit, "CI_JOB_NAME": "unit-upload",
        "CI_COMMIT_REF_NAME": "main"}, seed=1)
    assert p.returncode == 0 and "stored upload 5 of shop" in p.stdout, p

    # a wrong token stores nothing and says why: exit 2
    p = run_action(s, pr, {"command": "/usr/bin/pytest test_shop.py",
                           "server": srv.url, "token": rd, "target": "shop"},
                   {}, {}, seed=1)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "the upload was refused (HTTP 403)" in p.stdout, p.stdout
    assert json.loads(ctl(["--db", srv.db, "--format", "json", "token",
                           "list"]).stdout)[0]["scope"] == "upload"


def test_gitlab_variables_are_never_shell(shop, tmp_path):
    """A CI/CD variable's value reaches flakyctl as one word: a target or
    budget with a command substitution in it runs nothing (the template
    once built its options in a string it evaluated)."""
    s = shop("unittest")
    mark = tmp_path / "ran"
    p, _ = run_gitlab(s, tmp_path, ".flaky-ci", {
        "FLAKY_CI_COMMAND": "/usr/bin/python3 -m unittest test_shop",
        "FLAKY_CI_TARGET": "shop $(touch %s)" % mark,
        "FLAKY_CI_BUDGET": "5m`touch %s`" % mark,
        "FLAKY_CI_RETRIES": "0"}, seed=1)
    assert not mark.exists(), (p.stdout, p.stderr)
    # the value came through whole, and was refused as a budget
    assert "5m`touch" in p.stderr, p.stderr
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
