#!/usr/bin/python3
"""flakyctl ci's seeded trials on examples/demo-ci (issue 30, docs/ci.md).

Each trial runs `flakyctl ci` on the shop of one runner (pytest, unittest,
jest, go) with DEMO_SEED set: every test's N-th run fails or passes as a
hash of the seed, its name and N decides (examples/demo-ci/README.md), so
that this script predicts each verdict before it runs and checks it after.
Two configurations a trial:

  new   the branch as it is, --new-tests 10: the broken test fails the
        step (exit 1 every trial), the quarantined one never does, the
        flaky one (30%) passes on a retry, the new one (20%) is caught
  flaky the broken test quarantined too (--quarantine-file), no
        --new-tests: exit 0 unless the flaky test (or the new one, at 20%,
        a plain test here) failed every attempt: 1 - 0.3^4 of trials

and for pytest a third, against Debian's python3-pytest-rerunfailures
(`pytest --reruns 3`) on the same seed: the same tests rerun, the same
outcomes, our attempts stored where its JUnit keeps none.

    bench/ci_trials.py [--runner R]... [--trials N] [--first-seed S]
        [--flakyctl PATH] [--json FILE] [--catalog N] [--no-compare]
    bench/ci_trials.py --merge FILE...     # the figures of earlier --json
    bench/ci_trials.py --predict N         # what seeds 1..N should give

prints the rates with their bounds and the retries' cost against rerunning
the whole suite, and exits 1 when a verdict differs from its prediction or
a bound is missed (bounds only with 200 trials or more; fewer trials check
verdicts only). tests/integration/ci_command runs a few seeds of each.
"""
import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DEMO = os.path.join(ROOT, "examples", "demo-ci")
JEST_MODULES = os.path.join(ROOT, "examples", "demo-jest", "node_modules")

FLAKY_P, NEW_P = 0.30, 0.20
RETRIES, NEW_RUNS = 3, 10

# per runner: the demo's folder, the default branch's command (the old
# file only), the branch's, and the ids of the five tests that matter
RUNNERS = {
    "pytest": {
        "dir": "pytest",
        "base": ["/usr/bin/pytest", "test_shop.py"],
        "full": ["/usr/bin/pytest"],
        "ids": {"flaky": "test_shop.py::test_payment_retry",
                "broken": "test_shop.py::test_legacy_api",
                "quarantined": "test_shop.py::test_inventory_sync",
                "new": "test_coupons.py::test_coupon_stacking"},
    },
    "unittest": {
        "dir": "unittest",
        "base": ["/usr/bin/python3", "-m", "unittest", "test_shop"],
        "full": ["/usr/bin/python3", "-m", "unittest"],
        "ids": {"flaky": "test_shop.ShopTest.test_payment_retry",
                "broken": "test_shop.ShopTest.test_legacy_api",
                "quarantined": "test_shop.ShopTest.test_inventory_sync",
                "new": "test_coupons.CouponTest.test_coupon_stacking"},
    },
    "jest": {
        "dir": "jest",
        "base": ["node_modules/.bin/jest", "__tests__/shop.test.js"],
        "full": ["node_modules/.bin/jest"],
        "ids": {"flaky": "__tests__/shop.test.js \u203a shop \u203a payment retry",
                "broken": "__tests__/shop.test.js \u203a shop \u203a legacy api",
                "quarantined": "__tests__/shop.test.js \u203a shop \u203a inventory sync",
                "new": "__tests__/coupons.test.js \u203a coupons \u203a coupon stacking"},
    },
    "go": {
        "dir": "go",
        "base": ["go", "test", "."],
        "full": ["go", "test", "./..."],
        "ids": {"flaky": "example.com/democi/TestPaymentRetry",
                "broken": "example.com/democi/TestLegacyApi",
                "quarantined": "example.com/democi/TestInventorySync",
                "new": "example.com/democi/coupons/TestCouponStacking"},
    },
}


def draw(seed, name, k):
    """The demo's uniform number (examples/demo-ci/pytest/shop.py)."""
    m = 0xFFFFFFFF
    h = 0x811C9DC5
    for b in ("%s:%s:%d" % (seed, name, k)).encode():
        h = ((h ^ b) * 0x01000193) & m
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & m
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & m
    h ^= h >> 16
    return h / 4294967296.0


def fails(seed, name, k, p):
    return draw(seed, name, k) < p


def predict_retried(seed, name, p, quarantined=False):
    """A plain test's verdict: (verdict, attempts, passed_on); None when
    it passed the first run."""
    if not fails(seed, name, 0, p):
        return None
    if quarantined:
        return ("quarantined", 1, None)
    for k in range(1, RETRIES + 1):
        if not fails(seed, name, k, p):
            return ("flaky", k + 1, k)
    return ("broken", RETRIES + 1, None)


def predict_new(seed):
    """The new test's verdict under --new-tests 10."""
    for k in range(NEW_RUNS):
        if fails(seed, "coupon_stacking", k, NEW_P):
            return ("new failed", k + 1, None)
    return ("new passed", NEW_RUNS, None)


def predict(seed, config):
    """Every verdict of a trial, by role, and its exit code."""
    v = {"broken": ("broken", RETRIES + 1, None)}
    v["flaky"] = predict_retried(seed, "payment_retry", FLAKY_P)
    v["quarantined"] = ("quarantined", 1, None)
    if config == "new":
        v["new"] = predict_new(seed)
        return v, 1
    v["broken"] = ("quarantined", 1, None)
    v["new"] = predict_retried(seed, "coupon_stacking", NEW_P)
    step_fails = any(x is not None and x[0] == "broken" for x in v.values())
    return v, 1 if step_fails else 0


CATALOG_MS = 10


def add_catalog(runner, d, n):
    """n more stable tests of CATALOG_MS each on the default branch too,
    for the cost of retries in a larger suite (--catalog); the words the
    default branch's command needs to run them."""
    ms = CATALOG_MS
    if runner in ("pytest", "unittest"):
        body = ["import time", "import unittest", "", "",
                "class CatalogTest(unittest.TestCase):"]
        for i in range(n):
            body += ["    def test_price_%03d(self):" % i,
                     "        time.sleep(%g)" % (ms / 1000.0),
                     "        self.assertEqual(%d * 100 // 100, %d)" % (i, i),
                     ""]
        with open(os.path.join(d, "test_catalog.py"), "w") as f:
            f.write("\n".join(body) + "\n")
        return ["test_catalog.py"] if runner == "pytest" else ["test_catalog"]
    if runner == "jest":
        body = ["describe('catalog', () => {"]
        for i in range(n):
            body.append("  test('price %03d', async () => { await new "
                        "Promise((r) => setTimeout(r, %d)); expect(%d).toBe"
                        "(%d); });" % (i, ms, i, i))
        body.append("});")
        with open(os.path.join(d, "__tests__", "catalog.test.js"), "w") as f:
            f.write("\n".join(body) + "\n")
        return ["__tests__/catalog.test.js"]
    body = ["package shop", "", 'import (\n\t"testing"\n\t"time"\n)', ""]
    for i in range(n):
        body += ["func TestPrice%03d(t *testing.T) {" % i,
                 "\ttime.Sleep(%d * time.Millisecond)" % ms, "}", ""]
    with open(os.path.join(d, "catalog_test.go"), "w") as f:
        f.write("\n".join(body))
    return []


class Shop:
    """A copy of one runner's shop, its environment, and a database that
    knows the default branch's tests and the quarantine."""

    def __init__(self, runner, flakyctl, tmp, catalog=0):
        self.runner, self.flakyctl, self.tmp = runner, flakyctl, tmp
        self.spec = dict(RUNNERS[runner])
        self.dir = os.path.join(tmp, "shop-" + runner)
        shutil.copytree(os.path.join(DEMO, self.spec["dir"]), self.dir,
                        symlinks=False)
        self.env = dict(os.environ, HOME=os.path.join(tmp, "home"),
                        PYTHONDONTWRITEBYTECODE="1")
        for k in ("FLAKY_SERVER", "FLAKY_TOKEN", "FLAKY_READ_TOKEN",
                  "GITHUB_ACTIONS", "GITLAB_CI", "CI_DEFAULT_BRANCH",
                  "GITHUB_BASE_REF", "GITHUB_STEP_SUMMARY"):
            self.env.pop(k, None)
        if runner == "jest":
            os.symlink(JEST_MODULES, os.path.join(self.dir, "node_modules"))
        if runner == "go":
            self.env.update(GOCACHE=os.path.join(tmp, "gocache"),
                            GOPATH=os.path.join(tmp, "gopath"),
                            GOFLAGS="-mod=mod", GOPROXY="off")
        if catalog:
            self.spec["base"] = self.spec["base"] + add_catalog(
                runner, self.dir, catalog)
        self.target = "shop-" + runner
        self.seed_db = os.path.join(tmp, runner + "-seed.db")
        self.qfile = os.path.join(tmp, runner + "-quarantine.txt")
        with open(self.qfile, "w") as f:
            f.write("# the broken test too\n%s\n" % self.spec["ids"]["broken"])
        # the default branch: the old file, once; the quarantine
        self.ctl(["--db", self.seed_db, "ci", "--target", self.target,
                  "--branch", "main", "--retries", "0", "--"] +
                 self.spec["base"], state="seed", seed="0", check=1)
        self.ctl(["--db", self.seed_db, "quarantine", "add",
                  self.spec["ids"]["quarantined"], "--target", self.target,
                  "--reason", "INFRA, the inventory service is down",
                  "--ticket", "https://tracker.example/41"], state="seed",
                 seed="0", check=0)

    def ctl(self, args, state, seed, check=None, extra_env=None):
        env = dict(self.env, DEMO_SEED=str(seed),
                   DEMO_STATE=os.path.join(self.tmp, "state-" + state))
        if extra_env:
            env.update(extra_env)
        os.makedirs(env["DEMO_STATE"], exist_ok=True)
        p = subprocess.run([self.flakyctl] + args, cwd=self.dir, env=env,
                           capture_output=True, text=True, timeout=600)
        if check is not None and p.returncode != check:
            raise RuntimeError("flakyctl %s: exit %d, not %d\n%s%s" % (
                " ".join(args), p.returncode, check, p.stdout, p.stderr))
        return p

    def trial(self, seed, config):
        """One trial: (exit, verdicts by role, the JSON)."""
        db = os.path.join(self.tmp, "%s-%s-%d.db" % (self.runner, config,
                                                      seed))
        shutil.copy(self.seed_db, db)
        args = ["--db", db, "--format", "json", "ci", "--target",
                self.target, "--branch", "feature", "--budget", "10m"]
        if config == "new":
            args += ["--new-tests", str(NEW_RUNS)]
        else:
            args += ["--quarantine-file", self.qfile]
        state = "%s-%d" % (config, seed)
        p = self.ctl(args + ["--"] + self.spec["full"], state, seed)
        try:
            out = json.loads(p.stdout)
        except ValueError:
            raise RuntimeError("seed %d %s: no JSON (exit %d)\n%s%s" % (
                seed, config, p.returncode, p.stdout, p.stderr))
        by_id = {t["test"]: t for t in out["tests"]}
        got = {}
        for role, tid in self.spec["ids"].items():
            t = by_id.get(tid)
            got[role] = None if t is None else (
                t["verdict"], t["attempts"], t["passed_on_retry"])
        os.unlink(db)
        shutil.rmtree(os.path.join(self.tmp, "state-" + state))
        return p.returncode, got, out


def rerunfailures(shop, seed):
    """pytest --reruns 3 on the same seed: each test's outcome and reruns
    from -v's lines, its time, and the failed attempts its JUnit keeps."""
    state = os.path.join(shop.tmp, "state-rr-%d" % seed)
    os.makedirs(state)
    xml = os.path.join(shop.tmp, "rr-%d.xml" % seed)
    env = dict(shop.env, DEMO_SEED=str(seed), DEMO_STATE=state)
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/pytest", "-v", "-p", "rerunfailures",
                        "--reruns", str(RETRIES), "--junitxml", xml],
                       cwd=shop.dir, env=env, capture_output=True,
                       text=True, timeout=300)
    wall = time.monotonic() - t0
    reruns, final = {}, {}
    for line in p.stdout.splitlines():
        m = re.match(r"^(\S+::\S+) (PASSED|FAILED|RERUN)\b", line)
        if m:
            if m.group(2) == "RERUN":
                reruns[m.group(1)] = reruns.get(m.group(1), 0) + 1
            else:
                final[m.group(1)] = m.group(2)
    with open(xml) as f:
        kept = len(re.findall(r"<(flakyFailure|rerunFailure)", f.read()))
    shutil.rmtree(state)
    return {"exit": p.returncode, "reruns": reruns, "final": final,
            "wall": wall, "junit_attempts": kept}


def compare_rerunfailures(shop, seed):
    """Ours (no quarantine, no new tests: plain retries) against theirs:
    the tests retried, the verdicts, the evidence kept, the times."""
    db = os.path.join(shop.tmp, "cmp-%d.db" % seed)
    t0 = time.monotonic()
    p = shop.ctl(["--db", db, "--format", "json", "ci", "--target",
                  "shop-pytest", "--budget", "10m", "--"] +
                 shop.spec["full"], "cmp-%d" % seed, seed)
    ours_wall = time.monotonic() - t0
    ours = json.loads(p.stdout)
    theirs = rerunfailures(shop, seed)
    con = sqlite3.connect(db)
    attempts = con.execute("SELECT count(*) FROM results WHERE outcome IN "
                           "(1, 2)").fetchone()[0]
    runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    con.close()
    os.unlink(db)
    ours_retried = {t["test"]: t["attempts"] - 1 for t in ours["tests"]
                    if t["attempts"] > 1}
    ours_final = {t["test"]: "FAILED" if t["fails_step"] else "PASSED"
                  for t in ours["tests"]}
    theirs_final = {k: v for k, v in theirs["final"].items()
                    if k in ours_final or v == "FAILED" or
                    k in theirs["reruns"]}
    return {"seed": seed, "same_retried": ours_retried == theirs["reruns"],
            "same_verdicts": ours_final == theirs_final,
            "ours_exit": p.returncode, "theirs_exit": theirs["exit"],
            "ours_failed_attempts_stored": attempts, "ours_runs": runs,
            "theirs_failed_attempts_in_junit": theirs["junit_attempts"],
            "ours_s": ours_wall, "theirs_s": theirs["wall"],
            "ours_retried": ours_retried, "theirs_retried": theirs["reruns"]}


def run_runner(runner, flakyctl, seeds, tmp, out):
    shop = Shop(runner, flakyctl, tmp, out.get("catalog", 0))
    res = {"runner": runner, "trials": 0, "mismatches": [],
           "exit": {"new": {}, "flaky": {}}, "verdicts": {},
           "first_s": 0.0, "retries_s": 0.0, "whole_s": 0.0,
           "rounds": 0, "wall_s": 0.0}
    for seed in seeds:
        for config in ("new", "flaky"):
            want, want_exit = predict(seed, config)
            t0 = time.monotonic()
            code, got, js = shop.trial(seed, config)
            res["wall_s"] += time.monotonic() - t0
            res["exit"][config][code] = res["exit"][config].get(code, 0) + 1
            if code != want_exit or got != want:
                res["mismatches"].append({"seed": seed, "config": config,
                                          "exit": [code, want_exit],
                                          "got": got, "want": want})
            for role, v in got.items():
                key = "%s/%s" % (config, role)
                name = v[0] if v else "passed"
                res["verdicts"].setdefault(key, {})
                res["verdicts"][key][name] = \
                    res["verdicts"][key].get(name, 0) + 1
            res["first_s"] += js["first_run_s"]
            res["retries_s"] += js["retries_s"]
            res["whole_s"] += js["first_run_s"] * js["rounds"]
            res["rounds"] += js["rounds"]
        res["trials"] += 1
    if runner == "pytest" and out.get("compare", True):
        res["rerunfailures"] = [compare_rerunfailures(shop, s)
                                for s in seeds]
    return res


def rate(res, key, names):
    d = res["verdicts"].get(key, {})
    return sum(d.get(n, 0) for n in names) / max(res["trials"], 1)


def compared(runner, cmp):
    """The comparison with pytest-rerunfailures in a line: one seed's, or
    the sums and mean times of many."""
    n = len(cmp)
    same = sum(1 for c in cmp if c["same_retried"] and c["same_verdicts"])
    exits = sum(1 for c in cmp if c["ours_exit"] == c["theirs_exit"])
    ours = sum(c["ours_failed_attempts_stored"] for c in cmp)
    theirs = sum(c["theirs_failed_attempts_in_junit"] for c in cmp)
    what = "seed %d" % cmp[0]["seed"] if n == 1 else "%d seeds" % n
    return ("%-8s %s vs pytest-rerunfailures: same tests retried to the "
            "same verdicts in %d, same exit in %d; failed attempts kept: "
            "ours %d (in %d runs), theirs in JUnit %d; mean %.2f s vs "
            "%.2f s" % (runner, what, same, exits, ours,
                        sum(c["ours_runs"] for c in cmp), theirs,
                        sum(c["ours_s"] for c in cmp) / n,
                        sum(c["theirs_s"] for c in cmp) / n))


def merged(files):
    """The results of several --json files (chunks of seeds), one per
    runner, as if one call had run them all."""
    by = {}
    for path in files:
        with open(path) as f:
            for res in json.load(f):
                # JSON made the exit codes strings
                res["exit"] = {c: {int(k): v for k, v in d.items()}
                               for c, d in res["exit"].items()}
                m = by.setdefault(res["runner"], None)
                if m is None:
                    by[res["runner"]] = res
                    continue
                for k in ("trials", "first_s", "retries_s", "whole_s",
                          "rounds", "wall_s"):
                    m[k] += res[k]
                m["mismatches"] += res["mismatches"]
                m["rerunfailures"] = (m.get("rerunfailures", []) +
                                      res.get("rerunfailures", []))
                for table in ("exit", "verdicts"):
                    for key, d in res[table].items():
                        t = m[table].setdefault(key, {})
                        for name, k in d.items():
                            t[name] = t.get(name, 0) + k
    return list(by.values())


def wilson(p, n, z=1.96):
    """The 95% Wilson interval of a rate p of n trials, as [lo-hi]."""
    if not n:
        return "[-]"
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / d
    return "[%.3f-%.3f]" % (max(c - h, 0.0), min(c + h, 1.0))


def predicted(first, n):
    """The rates the seeds first..first+n-1 give, from predict() alone:
    how lucky a sample of seeds is against 1-0.3^4 and 1-0.8^10."""
    seeds = range(first, first + n)
    flaky = sum(1 for s in seeds if predict(s, "new")[0]["flaky"] is None
                or predict(s, "new")[0]["flaky"][0] != "broken")
    caught = sum(1 for s in seeds
                 if predict(s, "new")[0]["new"][0] == "new failed")
    return ("seeds %d-%d, predicted: flaky passed the step %.4f (1-0.3^4 = "
            "0.9919), new flaky caught %.4f (1-0.8^10 = 0.8926)" % (
                first, first + n - 1, flaky / n, caught / n))


def report(res, bounds):
    """Lines of figures, and the bounds missed."""
    n = res["trials"]
    lines, missed = [], []
    flaky_ok = rate(res, "new/flaky", ("passed", "flaky"))
    broken_ok = rate(res, "new/broken", ("broken",))
    quar_ok = rate(res, "new/quarantined", ("quarantined", "passed"))
    caught = rate(res, "new/new", ("new failed",))
    exit0 = res["exit"]["flaky"].get(0, 0) / max(n, 1)
    exit1 = res["exit"]["new"].get(1, 0) / max(n, 1)
    ratio = res["retries_s"] / res["whole_s"] if res["whole_s"] else 0.0
    lines.append("%-8s %3d trials: broken failed the step %.3f, quarantined "
                 "never counted %.3f, flaky passed the step %.3f %s (>= "
                 "0.97), new flaky caught %.3f %s (>= 0.85)" % (
                     res["runner"], n, broken_ok, quar_ok, flaky_ok,
                     wilson(flaky_ok, n), caught, wilson(caught, n)))
    lines.append("%-8s exit 1 with the broken test %.3f; exit 0 with it "
                 "quarantined %.3f (1-0.3^4 x 1-0.2^4 = 0.990); retries %.1f s "
                 "against %.1f s for rerunning the suite as often: ratio "
                 "%.2f; %.0f s in all" % (
                     res["runner"], exit1, exit0, res["retries_s"],
                     res["whole_s"], ratio, res["wall_s"]))
    cmp = res.get("rerunfailures", [])
    if len(cmp) > 3:
        lines.append(compared(res["runner"], cmp))
    for c in cmp:
        if len(cmp) <= 3:
            lines.append(compared(res["runner"], [c]))
        if not (c["same_retried"] and c["same_verdicts"]):
            missed.append("seed %d: not as pytest-rerunfailures: %s" % (
                c["seed"], c))
    for m in res["mismatches"]:
        missed.append("%s seed %d %s: exit %d (predicted %d), got %s, "
                      "predicted %s" % (res["runner"], m["seed"],
                                        m["config"], m["exit"][0],
                                        m["exit"][1], m["got"], m["want"]))
    if bounds:
        if broken_ok < 1:
            missed.append("%s: the broken test passed a step" % res["runner"])
        if quar_ok < 1:
            missed.append("%s: the quarantined test failed a step" %
                          res["runner"])
        if flaky_ok < 0.97:
            missed.append("%s: flaky passed %.3f < 0.97" % (res["runner"],
                                                           flaky_ok))
        if caught < 0.85:
            missed.append("%s: new caught %.3f < 0.85%s" % (
                res["runner"], caught, "" if res["mismatches"] else
                ", every verdict as its seed predicts (--predict)"))
        if exit1 < 1:
            missed.append("%s: exit 1 in %.3f of trials" % (res["runner"],
                                                           exit1))
    return lines, missed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runner", action="append", choices=sorted(RUNNERS))
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--flakyctl", default=os.path.join(ROOT, "build", "cli",
                                                       "flakyctl"))
    ap.add_argument("--json")
    ap.add_argument("--no-compare", action="store_true")
    ap.add_argument("--catalog", type=int, default=0,
                    help="N more stable tests of 10 ms each (the cost of "
                    "retries in a larger suite)")
    ap.add_argument("--merge", nargs="+", metavar="JSON",
                    help="run nothing: the figures of --json files of "
                    "earlier calls (chunks of seeds), summed per runner")
    ap.add_argument("--predict", type=int, metavar="N",
                    help="run nothing: the rates seeds --first-seed.. of N "
                    "trials give, predicted")
    a = ap.parse_args()
    if a.predict:
        print(predicted(a.first_seed, a.predict))
        return 0
    flakyctl = os.path.abspath(a.flakyctl)
    seeds = range(a.first_seed, a.first_seed + a.trials)
    all_res, missed = [], []
    for res in merged(a.merge or []):
        lines, m = report(res, res["trials"] >= 200)
        print("\n".join(lines), flush=True)
        missed += m
    for runner in [] if a.merge else a.runner or ["pytest", "unittest",
                                                  "jest", "go"]:
        tmp = tempfile.mkdtemp(prefix="flaky-ci-trials-")
        try:
            res = run_runner(runner, flakyctl, seeds, tmp,
                             {"compare": not a.no_compare,
                              "catalog": a.catalog})
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        lines, m = report(res, a.trials >= 200)
        print("\n".join(lines), flush=True)
        all_res.append(res)
        missed += m
    if a.json:
        with open(a.json, "w") as f:
            json.dump(all_res, f, indent=1, default=str)
    for m in missed:
        print("MISSED: " + m)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
