#!/bin/sh
# Issue 29: uploads (docs/api.md, "Uploads").
#
# (1) Throughput: FILES JUnit files of CASES testcases each (different
#     content), stored by `flakyctl ingest` one file a command, against
#     `flakyctl upload` of the same files to `flakyctl serve --uploads` on
#     loopback, JOBS uploads at a time; each into a fresh database, ROUNDS
#     times in turn. Prints the medians, the testcases per second of both
#     and their ratio (goal: uploads at least 0.7 of ingest; exit 1
#     below).
# (2) Load: flakyd fires TARGETS targets every second (/bin/true) and takes
#     uploads on its http: listener; first SECS seconds without uploads
#     (the baseline), then UPLOADERS concurrent uploaders each send EACH
#     uploads of one file of CASES testcases (each upload its own job and
#     attempt, so each is stored), and every tenth upload is sent twice
#     (the retry must not be stored again). Prints how late each trigger
#     fired idle and under load, the uploads and runs stored against those
#     sent, and flakyd's peak resident memory (VmHWM). Exit 1 when a
#     trigger fired 50 ms or more late under load, or an upload was lost
#     or stored twice.
#
#   meson setup build-bench -Dbuildtype=release && ninja -C build-bench
#   bench/upload.sh [throughput|load|both]
# env: BUILD (build-bench), FILES (20), CASES (10000), JOBS (4), ROUNDS (5),
#      UPLOADERS (50), EACH (20), TARGETS (4), SECS (20), KEEP=1
set -eu
what=${1:-both}
BUILD=${BUILD:-build-bench}
FILES=${FILES:-20}
CASES=${CASES:-10000}
JOBS=${JOBS:-4}
ROUNDS=${ROUNDS:-5}
UPLOADERS=${UPLOADERS:-50}
EACH=${EACH:-20}
TARGETS=${TARGETS:-4}
SECS=${SECS:-20}
top=$(cd "$(dirname "$0")/.." && pwd)
FLAKYD=$top/$BUILD/daemon/flakyd
FLAKYCTL=$top/$BUILD/cli/flakyctl
gen="/usr/bin/python3 $top/bench/junit_gen.py"
dir=$(mktemp -d /tmp/upload_bench.XXXXXX)
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	[ "${KEEP:-0}" = 1 ] || rm -rf "$dir"
}
trap cleanup EXIT INT TERM
export NO_COLOR=1
unset FLAKY_DB FLAKY_CONFIG FLAKY_SOCKET

now() { date +%s.%N; }

# The URL a server logged in file $1 after $2, or exit.
url_of() {
	for _ in $(seq 200); do
		u=$(sed -n "s|.*$2\(https*://[^ ;]*\).*|\1|p" "$1" |
		    head -n 1)
		[ -n "$u" ] && { echo "${u%/}"; return; }
		sleep 0.1
	done
	cat "$1" >&2
	exit 2
}

# A token of scope upload in database $1.
token() {
	"$FLAKYCTL" --db "$1" token create --scope upload --name bench |
	    tail -n 1
}

throughput() {
	i=0
	while [ $i -lt "$FILES" ]; do
		$gen "$dir/f$i.xml" many "$CASES" $((i + 100))
		i=$((i + 1))
	done
	: >"$dir/times"
	r=0
	# in turn, each into a fresh database: the machine's other load
	# falls on both alike, and the medians compare
	while [ $r -lt "$ROUNDS" ]; do
		rm -f "$dir"/ingest.db* "$dir"/upload.db*
		t0=$(now)
		for f in "$dir"/f*.xml; do
			"$FLAKYCTL" --db "$dir/ingest.db" ingest --target bench \
			    "$f" >/dev/null
		done
		t1=$(now)
		tok=$(token "$dir/upload.db" 2>/dev/null)
		"$FLAKYCTL" --db "$dir/upload.db" serve --uploads \
		    --listen 127.0.0.1:0 >"$dir/serve.log" 2>&1 &
		spid=$!
		url=$(url_of "$dir/serve.log" " at ")
		t2=$(now)
		ls "$dir"/f*.xml | FLAKY_TOKEN=$tok xargs -P "$JOBS" -I{} \
		    "$FLAKYCTL" upload --server "$url" --target bench {} \
		    >/dev/null
		t3=$(now)
		kill "$spid"
		wait "$spid" 2>/dev/null || :
		n=$(sqlite3 "$dir/upload.db" 'SELECT count(*) FROM runs')
		[ "$n" = "$FILES" ] || { echo "stored $n runs of $FILES"; exit 1; }
		echo "$t0 $t1 $t2 $t3" >>"$dir/times"
		r=$((r + 1))
	done
	awk -v n="$FILES" -v k="$CASES" -v j="$JOBS" '
	function median(a, m,   i, t, x) {
		for (i = 1; i <= m; i++)
			for (t = i + 1; t <= m; t++)
				if (a[t] < a[i]) { x = a[i]; a[i] = a[t]; a[t] = x }
		return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	{ ing[NR] = $2 - $1; up[NR] = $4 - $3
	  printf "round %d: ingest %.2f s, upload %.2f s\n", NR, ing[NR], up[NR] }
	END {
		mi = median(ing, NR); mu = median(up, NR)
		printf "ingest: %d files of %d testcases: median %.2f s, %.0f/s\n",
		    n, k, mi, n * k / mi
		printf "upload (%d at a time): median %.2f s, %.0f/s\n", j, mu,
		    n * k / mu
		printf "upload / ingest: %.2f (goal: at least 0.70)\n", mi / mu
		exit !(mi / mu >= 0.7) }' "$dir/times"
}

# How late each trigger of log lines $1..$2 fired: count p50 p99 max.
late() {
	sed -n "$1,$2p" "$dir/flakyd.log" |
	    sed -n 's/.*fired \([0-9]*\) ms after its time.*/\1/p' | sort -n |
	    awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "0 0 0 0"; exit }
		printf "%d %d %d %d\n", NR, v[int((NR + 1) / 2)],
		    v[int((NR * 99 + 99) / 100)], v[NR] }'
}

load() {
	$gen "$dir/load.xml" many "$CASES" 7
	db=$dir/flakyd.db
	tok=$(token "$db")
	{
		printf 'database: %s\nsocket: %s\njobs: %d\ntimezone: UTC\n' \
		    "$db" "$dir/flakyd.sock" "$TARGETS"
		printf 'http:\n  listen: 127.0.0.1:0\n  uploads: true\n'
		printf '  uploads_in_flight: %d\n  uploads_per_token: %d\n' \
		    "$UPLOADERS" "$UPLOADERS"
		printf '  uploads_per_minute: 100000\ntargets:\n'
		i=0
		while [ $i -lt "$TARGETS" ]; do
			printf '  - name: tick%d\n    command: [/bin/true]\n' $i
			printf '    schedule: every 1s\n'
			i=$((i + 1))
		done
	} >"$dir/flaky.yaml"
	TMPDIR=$dir "$FLAKYD" --config "$dir/flaky.yaml" --foreground -v \
	    >"$dir/flakyd.log" 2>&1 &
	dpid=$!
	pids="$pids $dpid"
	url=$(url_of "$dir/flakyd.log" "http: dashboard at ")
	sleep "$SECS"
	idle_end=$(wc -l <"$dir/flakyd.log")
	t0=$(now)
	u=0
	upids=
	while [ $u -lt "$UPLOADERS" ]; do
		(
			k=1
			while [ $k -le "$EACH" ]; do
				FLAKY_TOKEN=$tok "$FLAKYCTL" upload --server \
				    "$url" --target load --job "u$u" \
				    --attempt $k "$dir/load.xml" >/dev/null ||
				    echo "uploader $u: upload $k failed"
				# every tenth again: a CI's retry
				[ $((k % 10)) -ne 0 ] ||
				    FLAKY_TOKEN=$tok "$FLAKYCTL" upload \
				    --server "$url" --target load --job "u$u" \
				    --attempt $k "$dir/load.xml" >/dev/null ||
				    echo "uploader $u: retry $k failed"
				k=$((k + 1))
			done
		) &
		upids="$upids $!"
		u=$((u + 1))
	done
	for p in $upids; do wait "$p"; done
	t1=$(now)
	load_end=$(wc -l <"$dir/flakyd.log")
	hwm=$(sed -n 's/^VmHWM:[[:space:]]*//p' "/proc/$dpid/status")
	sent=$((UPLOADERS * EACH))
	ups=$(sqlite3 "$db" 'SELECT count(*) FROM uploads')
	runs=$(sqlite3 "$db" "SELECT count(*) FROM runs r JOIN targets t ON
	    t.id = r.target_id WHERE t.name = 'load'")
	set -- $(late 1 "$idle_end")
	echo "fire delay idle:           $1 triggers, p50 $2 ms, p99 $3 ms, max $4 ms"
	imax=$4
	set -- $(late $((idle_end + 1)) "$load_end")
	echo "fire delay during uploads: $1 triggers, p50 $2 ms, p99 $3 ms, max $4 ms"
	lmax=$4
	awk -v n="$sent" -v k="$CASES" -v s="$t0" -v e="$t1" 'BEGIN {
		printf "uploads: %d of %d testcases in %.1f s: %.0f testcases/s\n",
		    n, k, e - s, n * k / (e - s) }'
	echo "stored: $ups uploads, $runs runs, of $sent sent (+ $((sent / 10)) retries)"
	echo "flakyd peak resident: $hwm"
	echo "max fire delay during uploads / idle: $lmax / $imax ms (goal: under 50 ms)"
	[ "$ups" = "$sent" ] && [ "$runs" = "$sent" ] && [ "$lmax" -lt 50 ]
}

case $what in
throughput) throughput ;;
load) load ;;
both) throughput && load ;;
*) echo "usage: bench/upload.sh [throughput|load|both]" >&2; exit 2 ;;
esac
