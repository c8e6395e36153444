#!/bin/sh
# Benchmark: flakyctl ingest of large JUnit files, peak resident memory and
# throughput, for one build or two side by side. Goal: under 32 MiB
# resident whatever the input (exit 1 when a run of FLAKYCTL passes it).
#
#   meson setup build-bench -Dbuildtype=release && ninja -C build-bench
#   bench/ingest.sh                     (FLAKYCTL=path for another binary)
#   BASE=/tmp/base/build/cli/flakyctl bench/ingest.sh    (and a baseline)
#
# Inputs, made by bench/junit_gen.py in a temporary directory (about 1.2 GB
# of disk; SIZE=MB scales the large files, CASES the many-tests one):
#   one     one file of SIZE MB (200): suites of passing tests, one in 20
#           failing with a 2 KB traceback, one in 97 passing on a retry
#   four    four such files (different content) in one command
#   many    one file of CASES (2,850,000) tiny passing tests
#   over    a file of 300 MB (sparse): refused, past the 256 MiB bound
# Each command runs against a fresh database; /usr/bin/time gives the peak
# RSS (KB) and the wall time; MB/s is the input's size over the wall time.
# The machine's other load moves the wall time: compare ratios of one run,
# and the user + system CPU seconds printed with them.
set -eu

flakyctl=${FLAKYCTL:-build-bench/cli/flakyctl}
base=${BASE:-}
size=${SIZE:-200}
cases=${CASES:-2850000}
limit_kb=$((32 * 1024))
here=$(cd "$(dirname "$0")" && pwd)
gen="/usr/bin/python3 $here/junit_gen.py"

[ -x "$flakyctl" ] || { echo "ingest.sh: $flakyctl: not built" >&2; exit 2; }
[ -z "$base" ] || [ -x "$base" ] || { echo "ingest.sh: $base: not built" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

$gen "$tmp/one.xml" big $((size * 1000000)) 0
for i in 1 2 3 4; do
	$gen "$tmp/four$i.xml" big $((size * 1000000)) "$i"
done
$gen "$tmp/many.xml" many "$cases" 9
printf '<testsuite>' >"$tmp/over.xml"
truncate -s 300M "$tmp/over.xml"

# bytes FILE...: their total size
bytes() {
	t=0
	for f in "$@"; do
		t=$((t + $(stat -c %s "$f")))
	done
	echo "$t"
}

# measure NAME BINARY FILE...: one line "rss_kb wall_s cpu_s exit"
measure() {
	name=$1 bin=$2
	shift 2
	rm -f "$tmp/db" "$tmp/db-wal" "$tmp/db-shm"
	sync
	set +e
	/usr/bin/time -o "$tmp/time" -f '%M %e %U %S' "$bin" --db "$tmp/db" \
	    ingest --target bench "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	set -e
	# a failed command has a line of its own first
	read -r kb wall u s <<EOF
$(tail -n 1 "$tmp/time")
EOF
	[ "$wall" != 0.00 ] || wall=0.01	# a refusal, for the ratios
	echo "$kb $wall $(echo "$u + $s" | bc) $rc"
}

fail=0
printf '%-6s %8s  %-34s %-34s %s\n' case MB "base: RSS MB, s (cpu s), MB/s" \
    "new: RSS MB, s (cpu s), MB/s" "ratios RSS, MB/s"
for c in one four many over; do
	case $c in
	one) set -- "$tmp/one.xml" ;;
	four) set -- "$tmp/four1.xml" "$tmp/four2.xml" "$tmp/four3.xml" \
	    "$tmp/four4.xml" ;;
	many) set -- "$tmp/many.xml" ;;
	over) set -- "$tmp/over.xml" ;;
	esac
	mb=$(echo "scale=1; $(bytes "$@") / 1000000" | bc)
	b="-" rb="" tb=""
	if [ -n "$base" ]; then
		read -r kb wall cpu rc <<EOF
$(measure base "$base" "$@")
EOF
		rb=$kb tb=$wall
		b=$(printf '%.0f, %.1f (%.1f), %.1f%s' "$(echo "$kb / 1024" | bc -l)" \
		    "$wall" "$cpu" "$(echo "$mb / $wall" | bc -l)" \
		    "$([ "$rc" -eq 0 ] || echo " exit $rc")")
	fi
	read -r kb wall cpu rc <<EOF
$(measure new "$flakyctl" "$@")
EOF
	n=$(printf '%.0f, %.1f (%.1f), %.1f%s' "$(echo "$kb / 1024" | bc -l)" \
	    "$wall" "$cpu" "$(echo "$mb / $wall" | bc -l)" \
	    "$([ "$rc" -eq 0 ] || echo " exit $rc")")
	ratio=""
	[ -z "$rb" ] || ratio=$(printf '%.2f, %.2f' "$(echo "$kb / $rb" | bc -l)" \
	    "$(echo "$tb / $wall" | bc -l)")
	printf '%-6s %8s  %-34s %-34s %s\n' "$c" "$mb" "$b" "$n" "$ratio"
	if [ "$kb" -ge "$limit_kb" ]; then
		echo "ingest.sh: $c: $kb KB resident, over 32 MiB" >&2
		fail=1
	fi
	if [ "$c" != over ] && [ "$rc" -ne 0 ]; then
		cat "$tmp/err" >&2
		fail=1
	fi
done
exit $fail
