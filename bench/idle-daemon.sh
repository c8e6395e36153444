#!/bin/sh
# Idle flakyd with 1,000 targets: resident memory and wake-ups per minute
# while nothing is due (goal: under 10 MB, 0 wake-ups).
#   bench/idle-daemon.sh [FLAKYD] [SECONDS]
# Wake-ups are counted two ways, in two windows of SECONDS each: the daemon's voluntary
# context switches (/proc/PID/status: each return from epoll_wait is one)
# and, when strace is installed, its epoll_wait calls (strace -c -f).
set -eu
FLAKYD=${1:-build/daemon/flakyd}
SECS=${2:-60}
N=1000
dir=$(mktemp -d /tmp/flaky-idle.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM

{
	echo "database: $dir/flaky.db"
	echo "socket: $dir/flakyd.sock"
	echo "jobs: 4"
	echo "targets:"
	i=0
	while [ $i -lt $N ]; do
		# Due on January 1st only: nothing fires during the bench
		# (run it in another month).
		printf '  - name: t%04d\n    command: [/bin/true]\n' $i
		printf '    schedule: "%d %d 1 1 *"\n' $((i % 60)) $((i % 24))
		i=$((i + 1))
	done
} > "$dir/flaky.yaml"

t0=$(date +%s%N)
"$FLAKYD" --config "$dir/flaky.yaml" --foreground 2> "$dir/log" &
pid=$!
# Ready when the socket answers; poll with a deadline.
deadline=$(( $(date +%s) + 30 ))
until [ -S "$dir/flakyd.sock" ] && grep -q "ready:" "$dir/log"; do
	if [ "$(date +%s)" -gt $deadline ] || ! kill -0 $pid 2>/dev/null; then
		echo "flakyd did not start:" >&2
		cat "$dir/log" >&2
		exit 1
	fi
	sleep 0.05
done
t1=$(date +%s%N)
echo "flakyd with $N targets ready in $(( (t1 - t0) / 1000000 )) ms"

ctxt() {
	awk '/^voluntary_ctxt_switches/ { v = $2 }
	    /^nonvoluntary_ctxt_switches/ { n = $2 }
	    END { print v + n }' /proc/$pid/status
}
# First window: context switches alone (ptrace would add its own).
c0=$(ctxt)
sleep "$SECS"
c1=$(ctxt)
# Second window: epoll_wait calls as strace sees them.
if command -v strace >/dev/null 2>&1; then
	timeout -s INT "$SECS" strace -c -f -e trace=epoll_wait,epoll_pwait \
	    -p $pid -o "$dir/strace" 2>/dev/null || true
	calls=$(awk '/epoll_(p)?wait/ { s += $4 } END { print s + 0 }' \
	    "$dir/strace")
else
	calls="n/a (no strace)"
fi
rss=$(awk '/^VmRSS/ { print $2 }' /proc/$pid/status)
hwm=$(awk '/^VmHWM/ { print $2 }' /proc/$pid/status)
echo "window:                 ${SECS}s"
echo "resident memory:        ${rss} kB (peak ${hwm} kB)"
echo "context switches:       $((c1 - c0)) in ${SECS}s"
echo "epoll_wait calls:       $calls in ${SECS}s"
