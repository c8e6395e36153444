"""Test ids that are shell code (issue 14): a TAP suite whose test names
are command substitutions and quote breakers, each failing in every other
run, so that `flakyctl confirm` and flakyd's `confirm: true` rerun them
alone through isolate: templates that put {test} outside quotes, inside
double quotes, inside single quotes and in several places at once. PWNED
never appears, the runs alone get each id as one argument, byte for byte,
and the ids are stored as data."""
import json
import os
import re


from conftest import PYTHON, query, wait_for

IDS = [
    "$(touch PWNED)",
    "`touch PWNED`",
    "\"; touch PWNED; echo \"",
    "'; touch PWNED; echo '",
    "a'b\"c$(touch PWNED)`touch PWNED`",
    "${IFS}; touch PWNED & touch PWNED | touch PWNED",
    "$((7*6)) ${HOME} ~ * ? [a] {x,y} > PWNED",
    "} {test} { ;touch PWNED",
]

# Fails ids in every other run (a counter file beside it per target: the
# targets run at once), so that each id both passed and failed and is up
# for confirming.
SUITE = """import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(here, "count-" + sys.argv[1])
n = int(open(path).read()) if os.path.exists(path) else 0
open(path, "w").write(str(n + 1))
ids = json.load(open(os.path.join(here, "ids.json")))
print("TAP version 13")
print("1..%d" % len(ids))
for i, t in enumerate(ids, 1):
    print("%sok %d - %s" % ("" if (n + i) % 2 else "not ", i, t))
"""

# A run alone: records its argv (after the template's name), passes the
# test it was given.
ALONE = """import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "argv.log"), "a") as f:
    f.write(json.dumps([sys.argv[1], sys.argv[2:]]) + "\\n")
print("TAP version 13")
print("1..1")
print("ok 1 - %s" % sys.argv[2])
"""

# name -> (template, what alone.py must receive for an id)
TEMPLATES = {
    "bare": ("%s alone.py bare {test}", lambda t: [t]),
    "dquoted": ("%s alone.py dquoted \"{test}\"", lambda t: [t]),
    "squoted": ("%s alone.py squoted '{test}'", lambda t: [t]),
    "mixed": ("test -n \"{test}\" && %s alone.py mixed {test} '{test}' "
              "\"pre {test} post\"",
              lambda t: [t, t, "pre %s post" % t]),
}


def setup_suite(d, names, extra="", jobs=2):
    d.write("suite.py", SUITE)
    d.write("alone.py", ALONE)
    d.write("ids.json", json.dumps(IDS))
    body = "targets:\n"
    for name in names:
        tmpl = TEMPLATES[name][0] % PYTHON
        body += ("  - name: %s\n    command: [%s, suite.py, %s]\n"
                 "    dir: %s\n    isolate: %s\n%s" %
                 (name, PYTHON, name, d.dir, json.dumps(tmpl), extra))
    d.write_config(body, jobs=jobs)


def pwned(root):
    """Every file named PWNED under root (and in the cwd)."""
    found = [os.path.join(dp, f) for dp, _, fs in os.walk(root)
             for f in fs if "PWNED" in f]
    return found + (["./PWNED"] if os.path.exists("PWNED") else [])


def check(d, names):
    assert pwned(d.dir) == []
    with open(os.path.join(d.dir, "argv.log")) as f:
        calls = [json.loads(x) for x in f]
    for name in names:
        got = [argv for target, argv in calls if target == name]
        want = TEMPLATES[name][1]
        # every id reached alone.py intact, and nothing else did
        assert {a[0] for a in got} == set(IDS), (name, got)
        for argv in got:
            assert argv == want(argv[0]), (name, argv)
        stored = query(d.db, "SELECT DISTINCT test FROM test_results "
                       "WHERE target = ?", (name,))
        assert {t for (t,) in stored} == set(IDS), stored
        alone = query(d.db, "SELECT DISTINCT test FROM test_results WHERE "
                      "target = ? AND kind = 'alone' AND outcome = 'pass'",
                      (name,))
        assert {t for (t,) in alone} == set(IDS), alone


def test_flakyctl_confirm(daemon):
    d = daemon
    setup_suite(d, TEMPLATES)
    for name in TEMPLATES:
        d.ctl("analyze", "--target", name, "--runs", "4", "--", PYTHON,
              "suite.py", name, check=0)
    assert query(d.db, "SELECT count(*) FROM runs") == [(4 * len(TEMPLATES),)]
    for name in TEMPLATES:
        p = d.ctl("--format", "json", "confirm", "--target", name,
                  "--max-runs", "2", "--budget", "60s", timeout=120)
        assert p.returncode in (0, 1), (p.returncode, p.stderr)
        tests = json.loads(p.stdout)["tests"]
        assert sorted(t["test"] for t in tests) == sorted(IDS)
    check(d, TEMPLATES)


def alone_passed(d):
    """(target, id) of every run alone stored as passed."""
    return set(query(d.db, "SELECT DISTINCT target, test FROM test_results "
                     "WHERE kind = 'alone' AND outcome = 'pass'"))


def test_flakyd_confirm_true(daemon):
    """Round robin over the 8 ids: once each id of each target passed
    alone, the rest of the budget is not needed; the daemon is stopped."""
    d = daemon
    setup_suite(d, TEMPLATES, "    confirm: true\n    confirm_budget: 5m\n",
                jobs=len(TEMPLATES))
    d.start()
    for name in TEMPLATES:
        d.ctl("run", name, "--runs", "4", check=0)
    want = {(name, t) for name in TEMPLATES for t in IDS}
    wait_for("every id of every target to pass alone",
             lambda: alone_passed(d) >= want, timeout=90, step=0.2)
    assert re.search(r"target \S+: confirming 8 unsettled tests alone",
                     d.logtext())
    assert d.stop() == 0
    check(d, TEMPLATES)
