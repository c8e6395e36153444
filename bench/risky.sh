#!/bin/sh
# Benchmark: flakyctl analyze --risky on examples/risky (30 tests, 3 with
# approximate assertions, one of those failing one execution in three)
# against rerunning the whole suite the same number of runs, in the same
# call of this script: wall time of each, their ratio, and whether each
# found the flaky test. docs/performance.md.
#
#   bench/risky.sh [RUNS]        (default 20; FLAKYCTL=path for another binary)
#
# Exits 1 when --risky misses the flaky test or reruns another test.
set -eu

runs=${1:-20}
flakyctl=${FLAKYCTL:-build/cli/flakyctl}
python=/usr/bin/python3

[ -x "$flakyctl" ] || { echo "risky.sh: $flakyctl: not built" >&2; exit 2; }
flakyctl=$(cd "$(dirname "$flakyctl")" && pwd)/$(basename "$flakyctl")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r examples/risky "$tmp/demo"
rm -rf "$tmp/demo/.state"

# one analysis: NAME, then analyze's options; prints NAME, wall time,
# test executions and the tiers of the tests that failed
one() {
	name=$1
	shift
	export FLAKY_DEMO_STATE="$tmp/state-$name"
	start=$($python -c 'import time; print(time.monotonic())')
	"$flakyctl" --db "$tmp/$name.db" --format json analyze "$@" \
	    "$tmp/demo" >"$tmp/$name.json" 2>/dev/null || true
	$python - "$tmp" "$name" "$start" <<'PY'
import json, sqlite3, sys, time
t, name, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
wall = time.monotonic() - start
r = json.load(open("%s/%s.json" % (t, name)))
con = sqlite3.connect("%s/%s.db" % (t, name))
execs = con.execute("SELECT sum(tests) FROM runs").fetchone()[0]
found = ["%s=%s" % (x["test"].split("::")[-1], x["tier"]) for x in r["tests"]
         if x["failures"] > 0]
print("%-7s %3d runs %7.2f s %6d test executions  %s" % (
    name, r["runs"]["total"], wall, execs, " ".join(found)))
open("%s/%s.wall" % (t, name), "w").write("%f %d" % (wall, execs))
PY
}

echo "examples/risky, $runs runs each:"
one risky --risky --runs "$runs"
one whole --runs "$runs"
$python - "$tmp" <<'PY'
import json, sys
t = sys.argv[1]
rw, re_ = open(t + "/risky.wall").read().split()
ww, we = open(t + "/whole.wall").read().split()
print("wall --risky / whole = %.2f / %.2f s = %.2f; test executions "
      "%s / %s = %.2f" % (float(rw), float(ww), float(rw) / float(ww),
                          re_, we, int(re_) / int(we)))
r = json.load(open(t + "/risky.json"))
names = sorted(x["test"] for x in r["tests"])
flaky = [x for x in r["tests"] if x["failures"] > 0]
ok = len(names) == 3 and [x["test"].split("::")[-1] for x in flaky] == \
    ["test_area"] and flaky[0]["tier"] == "critical"
print("risky tests rerun: %s; flaky found: %s" % (", ".join(names),
      "yes" if ok else "NO"))
sys.exit(0 if ok else 1)
PY
