#!/bin/sh
# 8 boxes shipping at once into one throwaway PostgreSQL server, against
# COPY of the same rows from a CSV file (docs/performance.md, fleet).
#   bench/ship_bench.sh [BOXES [RUNS [TESTS]]]     (8 200 1000)
# SHIP_BENCH=path for another binary (default build-bench/bench/ship_bench).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${SHIP_BENCH:-$top/build-bench/bench/ship_bench}
[ -x "$bin" ] || { echo "ship_bench.sh: build $bin first (bench/README)" >&2; exit 2; }
pg=$(mktemp -d /tmp/shipbench-pg.XXXXXX)
data=$(mktemp -d /tmp/shipbench-data.XXXXXX)
trap '"$top/scripts/pgtmp.sh" stop "$pg"; rm -rf "$data"' EXIT
uri=$("$top/scripts/pgtmp.sh" start "$pg")
"$bin" "$uri" "$data" "$@"
