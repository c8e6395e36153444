"""A team's history for the dashboard (issue 32): about two months of CI
uploads of a shop's suite (two jobs, reruns, two branches, two boxes),
with what a dashboard must show: a critical and a warning test, one that
broke and stays broken, one introduced lately, one fixed, one that broke
and was fixed at the next revision (a break, never a flip), a rare flake
that flipped on a revision, and a second target. Then a checkout with
CODEOWNERS analyzed once (its target has a directory), a quarantine, a
ticket and an owner, as flakyctl records them. Deterministic: a seeded
random source and fixed times (the days end yesterday, UTC)."""
import os
import random
import shutil
import subprocess
import time

DAY = 86400

# test -> rate function of the day index (0 = oldest) and the revision
STABLE = ["test_cart_total", "test_cart_empty", "test_refunds",
          "test_invoice_pdf", "test_tax_rounding", "test_coupon_stack",
          "test_user_signup", "test_user_delete", "test_orders_list",
          "test_orders_filter", "test_inventory_sync", "test_shipping_eu",
          "test_shipping_us", "test_webhook_retry", "test_audit_log"]


def rate(test, day, days):
    """The failure probability of test on day (0 oldest of days)."""
    late = days - 14
    return {
        "test_checkout_retry": 0.25,
        "test_cache_expiry": 0.08,
        "test_legacy_api": 1.0 if day >= days - 20 else 0.0,
        "test_payment_timeout": 0.12 if day >= late else 0.0,
        "test_search_race": 0.15 if day < days // 2 else 0.0,
        "test_login_sso": 0.0,
    }.get(test, 0.0)


# A test whose id is markup (as XML writes it): every page must show
# <img src=x onerror=alert(1)> as text.
HOSTILE = "&lt;img src=x onerror=alert(1)&gt;"
ALL = ["test_checkout_retry", "test_cache_expiry", "test_legacy_api",
       "test_payment_timeout", "test_search_race", "test_export_csv",
       "test_login_sso"] + STABLE

MESSAGES = {
    "test_checkout_retry": "AssertionError: assert None is not None",
    "test_cache_expiry": "AssertionError: expected 200, got 503",
    "test_legacy_api": "ConnectionRefusedError: [Errno 111] Connection "
                       "refused",
    "test_payment_timeout": "TimeoutError: gateway did not answer in 5s",
    "test_search_race": "AssertionError: assert 9 == 10",
    "test_export_csv": "AssertionError: header row missing",
    "test_login_sso": "AssertionError: token expired",
}


def junit(path, suite, outcomes, stamp, seq):
    """A JUnit file: outcomes maps test -> failed; stamp its time."""
    cases = []
    for i, (t, failed) in enumerate(outcomes.items()):
        dur = 0.02 + ((seq * 7 + i * 13) % 50) / 1000.0
        if t == "test_payment_timeout" and failed:
            dur = 5.0
        body = ('<failure message="%s">%s</failure>' % (MESSAGES[t],
                MESSAGES[t]) if failed else "")
        cases.append('<testcase classname="tests.test_%s" name="%s" '
                     'time="%.3f">%s</testcase>' % (suite, t, dur, body))
    iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(stamp))
    path.write_text('<?xml version="1.0"?>\n<testsuite name="%s" '
                    'tests="%d" failures="%d" timestamp="%s">%s'
                    '</testsuite>\n' % (suite, len(outcomes),
                                        sum(outcomes.values()), iso,
                                        "".join(cases)))
    return str(path)


def make(flakyctl, db, work, days=60, end=None):
    """The history into db (a file or a postgresql:// URI); work a
    scratch directory. end: the epoch second the days end (default the
    start of today, UTC)."""
    rnd = random.Random(32)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": str(work), "NO_COLOR": "1"}
    end = end if end is not None else int(time.time()) // DAY * DAY
    first = end - days * DAY
    seq = 0

    def up(rev, job, attempt, branch, box, files, target="shop"):
        p = subprocess.run(
            [flakyctl, "upload", "--server", db, "--target", target,
             "--revision", rev, "--job", job, "--attempt", str(attempt),
             "--branch", branch, "--box", box, "--idempotency-key",
             "%s-%s-%d-%s-%d" % (target, rev, attempt, job, seq)] + files,
            capture_output=True, text=True, env=env, timeout=120)
        assert p.returncode == 0, (p.stdout, p.stderr)

    for d in range(days):
        rev = "%040x" % rnd.getrandbits(160)
        branch = "main" if d % 4 else "feature/checkout"
        for job, box in (("unit", "ci-1"), ("integration", "ci-2")):
            for attempt in (1, 2):
                seq += 1
                stamp = first + d * DAY + 3600 * (2 + 6 * attempt) + (
                    600 if job == "integration" else 0)
                out = {}
                for t in ALL:
                    p = rate(t, d, days)
                    out[t] = rnd.random() < p
                # a break: every job of one revision, fixed at the next
                out["test_export_csv"] = d == days // 3
                # a rare flake: it failed once, its rerun passed
                out["test_login_sso"] = (d == days - 5 and attempt == 1
                                         and job == "unit")
                if attempt == 2 and not any(out.values()) and d % 3:
                    continue	# CI reruns a failed job only
                f = junit(work / ("r%d.xml" % seq), "shop", out, stamp, seq)
                up(rev, job, attempt, branch, box, [f])
        if d % 2 == 0:
            seq += 1
            out = {"test_health": False, "test_metrics_scrape":
                   rnd.random() < 0.1, HOSTILE: d % 6 == 0}
            MESSAGES.setdefault("test_metrics_scrape",
                                "AssertionError: scrape took 3s")
            MESSAGES.setdefault("test_health", "")
            MESSAGES.setdefault(HOSTILE, "it&apos;s &quot;quoted&quot; "
                                "&amp; &lt;b&gt;bold&lt;/b&gt;")
            f = junit(work / ("a%d.xml" % seq), "api", out,
                      first + d * DAY + 7200, seq)
            up(rev, "api", 1, branch, "ci-1", [f], target="api")
    return end


def checkout(flakyctl, db, work, root):
    """examples/demo-pytest in a repository of its own with CODEOWNERS
    (GitHub's syntax), analyzed 4 times: a target with a directory."""
    repo = work / "checkout"
    shutil.copytree(os.path.join(root, "examples", "demo-pytest"), repo)
    (repo / ".git").mkdir()
    (repo / ".github").mkdir()
    (repo / ".github" / "CODEOWNERS").write_text(
        "# owners of the demo\n*        @acme/qa\n"
        "test_shop.py   @acme/shop @alice\n"
        "/docs/   docs@acme.example\n")
    p = subprocess.run([flakyctl, "--db", db, "analyze", "--runs", "4",
                        "--jobs", "2", "--target", "demo-pytest",
                        str(repo)], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, NO_COLOR="1"))
    assert p.returncode in (0, 1), p.stderr
    return repo


def marks(flakyctl, db):
    """A quarantine with its ticket, a ticket and an owner."""
    for args in (["quarantine", "add", "test_legacy_api", "--target", "shop",
                  "--reason", "INFRA: the legacy API is down",
                  "--ticket", "https://tracker.example/FLAKY-7"],
                 ["mark", "test_checkout_retry", "--target", "shop",
                  "--owner", "@acme/payments", "--ticket",
                  "https://tracker.example/FLAKY-12"]):
        p = subprocess.run([flakyctl, "--db", db] + args,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, (args, p.stdout, p.stderr)
