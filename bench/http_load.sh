#!/bin/sh
# Issue 17: the dashboard under load while flakyd keeps its schedule.
# flakyd fires TARGETS targets every second (each runs /bin/true) on a copy
# of the demo database (examples/demo-pytest analyzed), serving http: on a
# free port. First SECS seconds without HTTP load (the baseline), then
# SECS seconds with CLIENTS concurrent keep-alive clients on PATH
# (build-bench/bench/http_load). Prints the request rate and latency, and
# how late each trigger fired (flakyd -v logs it) idle and under load, with
# the ratio; exits 1 when a trigger fired 50 ms or more late under load.
#
# usage: bench/http_load.sh [CLIENTS] [SECS] [PATH] [TARGETS]
# env:   BUILD (default build-bench), KEEP=1 keeps the scratch directory
set -eu
CLIENTS=${1:-200}
SECS=${2:-30}
URLPATH=${3:-/tests}
TARGETS=${4:-4}
BUILD=${BUILD:-build-bench}
top=$(cd "$(dirname "$0")/.." && pwd)
FLAKYD=$top/$BUILD/daemon/flakyd
FLAKYCTL=$top/$BUILD/cli/flakyctl
LOAD=$top/$BUILD/bench/http_load
dir=$(mktemp -d /tmp/http_load.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	[ "${KEEP:-0}" = 1 ] || rm -rf "$dir"
}
trap cleanup EXIT INT TERM

"$FLAKYCTL" --db "$dir/flaky.db" analyze --runs 6 --jobs 2 \
    --target demo-pytest "$top/examples/demo-pytest" >/dev/null 2>&1 || :
{
	printf 'database: %s\nsocket: %s\njobs: %d\ntimezone: UTC\n' \
	    "$dir/flaky.db" "$dir/flakyd.sock" "$TARGETS"
	printf 'http:\n  listen: 127.0.0.1:0\ntargets:\n'
	i=0
	while [ $i -lt "$TARGETS" ]; do
		printf '  - name: tick%d\n    command: [/bin/true]\n' $i
		printf '    schedule: every 1s\n'
		i=$((i + 1))
	done
} >"$dir/flaky.yaml"
TMPDIR=$dir "$FLAKYD" --config "$dir/flaky.yaml" --foreground -v \
    >"$dir/log" 2>&1 &
pid=$!
url=
for _ in $(seq 100); do
	url=$(sed -n 's/.*http: dashboard at \([^ ]*\).*/\1/p' "$dir/log")
	[ -n "$url" ] && break
	sleep 0.1
done
[ -n "$url" ] || { cat "$dir/log"; exit 2; }

sleep "$SECS"
idle_end=$(wc -l <"$dir/log")
"$LOAD" "${url%/}$URLPATH" "$CLIENTS" "$SECS" | tee "$dir/load"
load_end=$(wc -l <"$dir/log")

# how late each trigger fired, idle (lines 1..idle_end) and under load
late() {
	sed -n "$1,$2p" "$dir/log" |
	    sed -n 's/.*fired \([0-9]*\) ms after its time.*/\1/p' | sort -n |
	    awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "none 0 0 0"; exit }
		printf "%d %d %d %d\n", NR, v[int((NR + 1) / 2)],
		    v[int((NR * 99 + 99) / 100)], v[NR] }'
}
set -- $(late 1 "$idle_end")
echo "fire delay idle:       $1 triggers, p50 $2 ms, p99 $3 ms, max $4 ms"
imax=$4
set -- $(late $((idle_end + 1)) "$load_end")
echo "fire delay under load: $1 triggers, p50 $2 ms, p99 $3 ms, max $4 ms"
echo "max under load / max idle: $4 / $imax ms (goal: under 50 ms)"
[ "$4" -lt 50 ]
