#!/bin/sh
# Benchmark (a): flakyctl analyze --runs 200 --jobs 1 -- true against a plain
# shell loop of the same 200 runs of /bin/true (an exec each, not the shell
# builtin), both timed with hyperfine in the same run, each run against a
# fresh database. Goal: overhead at most 10%.
#
#   meson setup build-bench -Dbuildtype=release && ninja -C build-bench
#   bench/analyze.sh            (FLAKYCTL=path to use another binary)
#
# ROUNDS (default 3) alternates the commands so that a busy moment of the
# machine falls on all; RUNS (default 10) timings per command a round.
#
# The goal is judged on the first analyze line: a fresh database each time
# and each run's TMPDIR under /tmp as a user gets it. Two more lines show
# what that costs here: the same with a database that already exists (the
# schema is made once per database), and with TMPDIR on tmpfs (/dev/shm;
# on Debian 12 /tmp is on the root file system, on Debian 13, Fedora and
# Arch it is tmpfs).
set -eu

flakyctl=${FLAKYCTL:-build-bench/cli/flakyctl}
rounds=${ROUNDS:-3}
runs=${RUNS:-10}
python=/usr/bin/python3

[ -x "$flakyctl" ] || { echo "analyze.sh: $flakyctl: not built" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "analyze.sh: needs hyperfine" >&2; exit 2; }
flakyctl=$(cd "$(dirname "$flakyctl")" && pwd)/$(basename "$flakyctl")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
mkdir work && cd work
"$flakyctl" --db "$tmp/b.db" analyze --runs 1 -- true >/dev/null 2>&1

r=1
while [ "$r" -le "$rounds" ]; do
	# -i: `true` prints no test result, so analyze exits 2 (by design)
	hyperfine -N -i --style basic --warmup 1 --runs "$runs" \
	    --export-json "$tmp/round$r.json" \
	    --prepare "rm -f $tmp/a.db $tmp/a.db-wal $tmp/a.db-shm" \
	    -n "shell loop" "sh -c 'for i in \$(seq 200); do /bin/true; done'" \
	    -n "flakyctl analyze" "$flakyctl --db $tmp/a.db analyze --runs 200 --jobs 1 -- true" \
	    -n "existing db" "$flakyctl --db $tmp/b.db analyze --runs 200 --jobs 1 -- true" \
	    -n "tmpfs TMPDIR" "env TMPDIR=/dev/shm $flakyctl --db $tmp/a.db analyze --runs 200 --jobs 1 -- true" >&2
	r=$((r + 1))
done

"$python" - "$tmp" "$rounds" <<'PY'
import json, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
t = {}
for r in range(1, rounds + 1):
    for res in json.load(open(f"{d}/round{r}.json"))["results"]:
        t.setdefault(res["command"], []).extend(res["times"])
loop, ana = t["shell loop"], t["flakyctl analyze"]
ml, ma = statistics.median(loop), statistics.median(ana)
print("benchmark (a): 200 runs of true, --jobs 1, a fresh database each time")
print(f"medians of {len(loop)} timings each ({rounds} alternating hyperfine rounds)\n")
print(f"{'':44} {'median s':>9} {'min s':>7} {'per run ms':>11} {'ratio':>7}")
print(f"{'for i in $(seq 200); do /bin/true; done':44} {ml:9.3f} {min(loop):7.3f} "
      f"{ml / 200 * 1e3:11.2f} {1:7.2f}")
print(f"{'flakyctl analyze --runs 200 --jobs 1 -- true':44} {ma:9.3f} {min(ana):7.3f} "
      f"{ma / 200 * 1e3:11.2f} {ma / ml:7.2f}")
over = ma / ml - 1
for name, label in (("existing db", "  the same, database already there"),
                    ("tmpfs TMPDIR", "  the same, TMPDIR=/dev/shm")):
    m = statistics.median(t[name])
    print(f"{label:44} {m:9.3f} {min(t[name]):7.3f} {m / 200 * 1e3:11.2f} "
          f"{m / ml:7.2f}")
print(f"\noverhead: {over * 100:+.0f}% ({(ma - ml) / 200 * 1e3:.2f} ms per run); "
      f"goal at most +10%: {'met' if over <= 0.10 else 'NOT met'}")
sys.exit(0 if over <= 0.10 else 1)
PY
