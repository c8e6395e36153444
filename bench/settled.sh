#!/bin/sh
# Benchmark: flakyctl analyze --until-settled against a fixed 50-run
# analysis of the same suite, examples/demo-settled, whose tests fail on a
# known pattern of their own executions (known rates: 0, 50%, 60%, 100%,
# and 10% with test_warning.py). For each: runs used, wall time, the tiers
# found, and how many failing tests are settled (the 95% confidence
# sequence's interval inside one tier band); and test executions (after
# its first 10 runs --until-settled reruns only the tests still open,
# with sub/test_ids.py: 8 tests). docs/performance.md.
#
#   bench/settled.sh            (FLAKYCTL=path to use another binary)
#
# Exits 1 when until-settled gets a tier wrong.
set -eu

flakyctl=${FLAKYCTL:-build/cli/flakyctl}
pytest=/usr/bin/pytest
python=/usr/bin/python3

[ -x "$flakyctl" ] || { echo "settled.sh: $flakyctl: not built" >&2; exit 2; }
flakyctl=$(cd "$(dirname "$flakyctl")" && pwd)/$(basename "$flakyctl")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r examples/demo-settled "$tmp/demo"
rm -rf "$tmp/demo/.state"

# one analysis: NAME, then analyze's options and the test files; prints
# "NAME runs wall_s tiers"
one() {
	name=$1
	shift
	export FLAKY_DEMO_STATE="$tmp/state-$name"
	start=$($python -c 'import time; print(time.monotonic())')
	(cd "$tmp/demo" && "$flakyctl" --db "$tmp/$name.db" --format json \
	    analyze "$@") >"$tmp/$name.json" 2>/dev/null || true
	$python - "$tmp/$name.json" "$name" "$start" "$tmp/$name.db" <<'PY'
import json, sqlite3, sys, time
r = json.load(open(sys.argv[1]))
execs = sqlite3.connect(sys.argv[4]).execute(
    "SELECT sum(tests) FROM runs").fetchone()[0]
wall = time.monotonic() - float(sys.argv[3])
tiers = {t["test"].split("::")[-1]: t["tier"] for t in r["tests"]}
s = r.get("until_settled")
settled = ("%d/%d settled, stopped: %s" % (
    sum(x["settled"] for x in s["tests"]), len(s["tests"]), s["stopped"])
    if s else "%d/%d settled (Wilson at 50)" % (
    sum(t["runs_needed"] == 0 for t in r["tests"] if 0 < t["failures"] < t["runs"]),
    sum(0 < t["failures"] < t["runs"] for t in r["tests"])))
print("%-18s %5d runs %5d test executions %7.1f s  %s  %s" % (sys.argv[2],
      r["runs"]["total"], execs, wall, settled,
      " ".join("%s=%s" % kv for kv in sorted(tiers.items()))))
open(sys.argv[4] + ".execs", "w").write(str(execs))
PY
}

suite="-- $pytest -p no:cacheprovider -p no:random_order"
echo "demo-settled/test_settled.py (rates 0, 50%, 60%, 100%):"
one quick-settled --until-settled $suite test_settled.py
one quick-fixed50 --runs 50 $suite test_settled.py
echo "with test_warning.py (adds 10%, warning: settles at 300 runs):"
one warn-settled --until-settled --max-runs 400 $suite test_settled.py \
    test_warning.py
one warn-fixed50 --runs 50 $suite test_settled.py test_warning.py
echo "with sub/test_ids.py (8 tests; a parametrized id, a class method):"
one mix-settled --until-settled $suite test_settled.py sub/test_ids.py
one mix-fixed50 --runs 50 $suite test_settled.py sub/test_ids.py
$python - "$tmp" <<'PY'
import json, sys
t = sys.argv[1]
want = {"test_steady": "stable", "test_half": "critical",
        "test_three_in_five": "critical", "test_always": "broken",
        "test_tenth": "warning", "test_param[a-b]": "critical",
        "test_param[c-d]": "stable", "test_method": "critical",
        "test_quiet": "stable"}
bad = 0
for name in ("quick", "warn", "mix"):
    s = json.load(open("%s/%s-settled.json" % (t, name)))
    f = json.load(open("%s/%s-fixed50.json" % (t, name)))
    print("%s: runs until settled / fixed 50 = %d / %d = %.2f" % (
        name, s["runs"]["total"], f["runs"]["total"],
        s["runs"]["total"] / f["runs"]["total"]))
    se = int(open("%s/%s-settled.db.execs" % (t, name)).read())
    fe = int(open("%s/%s-fixed50.db.execs" % (t, name)).read())
    print("%s: test executions until settled / fixed 50 = %d / %d = %.2f" %
          (name, se, fe, se / fe))
    for x in s["tests"]:
        n = x["test"].split("::")[-1]
        if want[n] != x["tier"]:
            print("WRONG tier: %s %s, expected %s" % (n, x["tier"], want[n]))
            bad = 1
sys.exit(bad)
PY
