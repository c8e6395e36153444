#!/bin/sh
# Benchmark (c): flakyctl report --since 30d over 10,000,000 stored results
# (1,000 tests x 10,000 runs over 30 days) against the naive GROUP BY over
# the results table, both timed with hyperfine in the same run (medians).
#
#   meson setup build-bench -Dbuildtype=release && ninja -C build-bench
#   bench/report.sh [DB]        (default /var/tmp/flaky-bench/report.db)
#
# The database is made once by `store_bench gen` (about a minute) and kept
# at DB, outside git; it is made again when store_bench is newer than it
# (the schema is compiled into it). FLAKYCTL and STORE_BENCH name the
# binaries (default build-bench/cli/flakyctl, build-bench/bench/store_bench).
set -eu

db=${1:-/var/tmp/flaky-bench/report.db}
flakyctl=${FLAKYCTL:-build-bench/cli/flakyctl}
store_bench=${STORE_BENCH:-build-bench/bench/store_bench}
runs=${RUNS:-10}
python=/usr/bin/python3

for p in "$flakyctl" "$store_bench"; do
	[ -x "$p" ] || { echo "report.sh: $p: not built" >&2; exit 2; }
done
command -v hyperfine >/dev/null || { echo "report.sh: needs hyperfine" >&2; exit 2; }
mkdir -p "$(dirname "$db")"
if [ ! -s "$db" ] || [ "$db" -ot "$store_bench" ]; then
	echo "making $db (10,000 runs x 1,000 tests over 30 days)..." >&2
	"$store_bench" gen "$db" --runs 10000 --tests 1000 --days 30
fi

# The window ends just after the last run, so a cached database gives the
# same figures on any later day.
until_s=$(sqlite3 -readonly "$db" "SELECT max(started_ms) / 1000 + 1 FROM runs")
until_iso=$(date -u -d "@$until_s" +%Y-%m-%dT%H:%M:%SZ)
since_ms=$(( (until_s - 30 * 86400) * 1000 ))
until_ms=$(( until_s * 1000 ))
results=$(sqlite3 -readonly "$db" "SELECT sum(tests) FROM runs")
naive="SELECT test_id, count(*), sum(outcome IN (1,2)) FROM results JOIN runs ON runs.id = results.run_id WHERE started_ms >= $since_ms AND started_ms < $until_ms GROUP BY test_id"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Both read the same file; one untimed read of each first warms the cache.
hyperfine -N --style basic --warmup 1 --runs "$runs" --export-json "$tmp/report.json" \
	-n report "$flakyctl --db $db report --since 30d --until $until_iso" >&2
hyperfine -N --style basic --warmup 1 --runs 3 --export-json "$tmp/naive.json" \
	-n naive "sqlite3 -readonly $db '$naive'" >&2

"$python" - "$tmp/report.json" "$tmp/naive.json" "$results" "$until_iso" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))["results"][0]
nai = json.load(open(sys.argv[2]))["results"][0]
n = int(sys.argv[3])
print(f"benchmark (c): flakyctl report --since 30d --until {sys.argv[4]}")
print(f"over {n:,} stored results; medians (min-max) of hyperfine runs\n")
print(f"{'':40} {'median s':>9} {'min s':>7} {'max s':>7} {'cpu s':>6} "
      f"{'runs':>5} {'ratio':>7}")
for name, r in (("naive GROUP BY over results (baseline)", nai),
                ("flakyctl report --since 30d", rep)):
    print(f"{name:40} {r['median']:9.3f} {r['min']:7.3f} {r['max']:7.3f} "
          f"{r['user'] + r['system']:6.2f} {len(r['times']):5d} "
          f"{nai['median'] / r['median']:6.1f}x")
ok = rep["median"] < 1.0
print("\ncpu s: mean user + system time of the process.")
print(f"ratio: baseline median / this median. goal: report under 1 s: "
      f"{'met' if ok else 'NOT met'} ({rep['median']:.3f} s)")
sys.exit(0 if ok else 1)
PY
