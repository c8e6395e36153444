#!/bin/sh
# What taking a hung run's stacks costs (issue 33, docs/performance.md):
# each demo of examples/hangs run RUNS times (default 9: runs 3, 6, 9 hang)
# by flakyctl analyze with a time limit, then the capture time of each
# timeout from run_stacks, per runtime: median, max and the processes
# asked. Needs the runtimes of the demos (scripts/deps.sh) and
# examples/demo-jest's npm ci; a demo whose runtime is missing is skipped.
#
#   bench/stacks.sh [BUILD_DIR [RUNS]]
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
ctl=$root/${1:-build}/cli/flakyctl
runs=${2:-9}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r examples/hangs/. "$work/"
rm -f "$work"/*/.hang-count

run() {	# NAME DIR LIMIT COMMAND...
	name=$1 dir=$2 limit=$3
	shift 3
	(cd "$dir" && "$ctl" --db "$work/$name.db" analyze --runs "$runs" \
	    --jobs 1 --timeout "$limit" -- "$@" >/dev/null 2>&1) || true
}
have() { command -v "$1" >/dev/null 2>&1; }
cmake_demo() {	# build a CMake demo, its build directory on stdout
	cmake -S "$work/$1" -B "$work/$1/build" >/dev/null &&
	    cmake --build "$work/$1/build" >/dev/null && echo "$work/$1/build"
}

run pytest "$work/pytest" 3s /usr/bin/pytest
run unittest "$work/unittest" 3s /usr/bin/python3 -m unittest
have go && run go "$work/go" 20s go test ./...
[ -x examples/demo-jest/node_modules/.bin/jest ] && run jest "$work/jest" \
    30s "$root/examples/demo-jest/node_modules/.bin/jest"
if have cmake && have gdb; then
	d=$(cmake_demo c) && run c "$d" 3s ctest
	have javac && d=$(cmake_demo java) && run java "$d" 8s ctest
fi
printf '%-9s %9s %6s %6s %s\n' runtime timeouts median max processes
for name in pytest unittest go jest c java; do
	[ -f "$work/$name.db" ] || continue
	/usr/bin/python3 - "$work/$name.db" "$name" <<'PY'
import sqlite3, statistics, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT capture_ms, processes FROM run_stacks ORDER BY capture_ms").fetchall()
ms = [r[0] for r in rows]
print("%-9s %9d %4d ms %4d ms %s" % (sys.argv[2], len(ms),
      statistics.median(ms) if ms else 0, max(ms) if ms else 0,
      ",".join(str(r[1]) for r in rows)))
PY
done
