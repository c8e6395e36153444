#!/bin/sh
# Time to the first failure of a timing race, calm and under CPU stress
# (issue 18: goal, at least 5 times sooner under stress). The race is
# examples/demo-stress (a worker thread with a deadline of 6 times its CPU
# cost); each trial reruns it with `flakyctl analyze --runs 1` until it
# fails, at most CAP runs (a trial that never fails counts as CAP runs, so
# the calm figure is a lower bound and the ratio too).
#   bench/stress.sh [FLAKYCTL] [TRIALS] [CAP] [STRESS]
set -eu
FLAKYCTL=${1:-build/cli/flakyctl}
TRIALS=${2:-3}
CAP=${3:-30}
STRESS=${4:-cpu:8}
case $FLAKYCTL in /*) ;; *) FLAKYCTL=$PWD/$FLAKYCTL ;; esac
dir=$(mktemp -d /tmp/flaky-stress.XXXXXX)
trap 'rm -rf "$dir"' EXIT INT TERM
cp examples/demo-stress/test_deadline.py "$dir/"
cd "$dir"

# now in ms
now() { date +%s%3N; }

# One trial: runs (and ms) until the race fails; $@: analyze's options.
trial() {
	n=0 t0=$(now)
	while [ "$n" -lt "$CAP" ]; do
		n=$((n + 1))
		"$FLAKYCTL" --db "$dir/flaky.db" analyze --runs 1 "$@" -- \
		    /usr/bin/python3 -m pytest \
		    >/dev/null 2>&1 || true
		f=$(sqlite3 "$dir/flaky.db" "SELECT r.outcome FROM results r
		    JOIN tests t ON t.id = r.test_id WHERE t.name LIKE
		    '%test_worker_meets_deadline' ORDER BY r.run_id DESC LIMIT 1")
		[ "$f" = 1 ] && break
	done
	[ "$f" = 1 ] || n=$CAP
	echo "$n $(( $(now) - t0 ))"
}

measure() {
	label=$1
	shift
	runs=0 ms=0
	for i in $(seq "$TRIALS"); do
		set -- $(trial "$@") "$@"
		runs=$((runs + $1)) ms=$((ms + $2))
		printf '%-8s trial %d: first failure at run %d (%d ms)\n' \
		    "$label" "$i" "$1" "$2"
		shift 2
	done
	echo "$runs $ms" >"$dir/$label"
}

measure calm
measure stress --stress "$STRESS"
read -r cr cms <"$dir/calm"
read -r sr sms <"$dir/stress"
awk -v cr="$cr" -v sr="$sr" -v cms="$cms" -v sms="$sms" -v t="$TRIALS" \
    -v s="$STRESS" 'BEGIN {
	printf "calm:   %.1f runs, %.1f s to the first failure (mean of %d)\n",
	    cr / t, cms / t / 1000, t
	printf "%s: %.1f runs, %.1f s\n", s, sr / t, sms / t / 1000
	printf "ratio:  %.1fx sooner in runs, %.1fx in time\n", cr / sr,
	    cms / sms
	exit (cr / sr >= 5 ? 0 : 1)
}'
