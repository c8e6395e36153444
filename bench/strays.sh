#!/bin/sh
# flakyd's own CPU per run with 0 and with N unrelated processes on the
# machine (issue 14: the stray sweep must not cost more with a busy box).
# Two targets run /bin/true every second for SECONDS; the daemon's user +
# system time (/proc/PID/stat) over the runs it stored gives its CPU per run.
#   bench/strays.sh [FLAKYD] [SECONDS] [N]
set -eu
FLAKYD=${1:-build/daemon/flakyd}
SECS=${2:-30}
N=${3:-1000}
dir=$(mktemp -d /tmp/flaky-strays.XXXXXX)
pid=
sleepers=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	[ -n "$sleepers" ] && kill $sleepers 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
cat >"$dir/flaky.yaml" <<EOF
database: $dir/flaky.db
socket: $dir/flakyd.sock
jobs: 2
targets:
  - name: a
    command: [/bin/true]
    schedule: "every 1s"
  - name: b
    command: [/bin/true]
    schedule: "every 1s"
EOF

# CPU ticks (user + system) of a pid.
ticks() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

measure() {
	label=$1
	rm -f "$dir"/flaky.db*
	"$FLAKYD" --config "$dir/flaky.yaml" --foreground 2>"$dir/log" &
	pid=$!
	# ready: the socket exists (poll with a deadline)
	i=0
	while [ ! -S "$dir/flakyd.sock" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	t0=$(ticks $pid)
	r0=$(sqlite3 "$dir/flaky.db" "SELECT count(*) FROM runs WHERE status = 'done'")
	sleep "$SECS"
	t1=$(ticks $pid)
	r1=$(sqlite3 "$dir/flaky.db" "SELECT count(*) FROM runs WHERE status = 'done'")
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	hz=$(getconf CLK_TCK)
	awk -v l="$label" -v t=$((t1 - t0)) -v r=$((r1 - r0)) -v hz="$hz" \
	    -v p="$(ls /proc | grep -c '^[0-9]')" 'BEGIN {
		printf "%-26s %5d processes  %4d runs  %7.3f ms CPU per run\n",
		    l, p, r, r ? t * 1000 / hz / r : 0 }'
}

measure "no other processes"
i=0
while [ $i -lt "$N" ]; do
	sleep 3600 &
	sleepers="$sleepers $!"
	i=$((i + 1))
done
measure "$N sleeping processes"
