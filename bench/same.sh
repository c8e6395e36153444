#!/bin/sh
# Same behaviour, same cost: two flakyctl builds side by side on fixed
# inputs (issue 13's proof that moving code changed nothing).
#   bench/same.sh OLD_BUILD_DIR NEW_BUILD_DIR
# Each build ingests every captured runner output and JUnit file under
# tests/fixtures (one target per runner directory, at fixed times), then
# prints report, triage and stats as JSON, and scans examples/. The outputs
# must be byte-identical; the instructions each command took (callgrind,
# which does not drift on a busy machine) are printed side by side with
# their ratio, as are classify_bench and store_bench.
set -eu
old=$(cd "$1" && pwd); new=$(cd "$2" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$top"

instr() {	# instr OUTFILE CMD...: run under callgrind, print Ir
	out=$1; shift
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
	    "$@" >"$out" 2>"$tmp/cg.err" || { cat "$tmp/cg.err" >&2; exit 1; }
	sed -n 's/^summary: //p' "$tmp/cg" | head -1
}

run() {		# run LABEL BUILD: the fixed workload, outputs in $tmp/LABEL
	b=$2; d=$tmp/$1; mkdir -p "$d"
	fc="$b/cli/flakyctl --db $d/flaky.db"
	for r in pytest unittest jest gotest tap junit; do
		# shellcheck disable=SC2046
		set -- $(find "tests/fixtures/$r" -type f \( -name '*.txt' -o \
		    -name '*.xml' -o -name '*.tap' \) | sort)
		i=0
		for f; do
			i=$((i + 1))
			$fc ingest --target "$r" --at "2026-11-0$((i % 9 + 1))T12:00:00Z" \
			    --revision "r$i" "$f" >/dev/null 2>&1 || true
		done
	done
	echo "ingest		$(instr /dev/null $fc ingest --target again \
	    --at 2026-11-20T12:00:00Z tests/fixtures/pytest/v.txt)"
	echo "report		$(instr "$d/report.json" $fc --format json report \
	    --since 2026-10-01 --until 2026-12-01)"
	echo "triage		$(instr "$d/triage.json" $fc --format json triage \
	    --since 2026-10-01 --until 2026-12-01)"
	echo "scan		$(instr "$d/scan.json" $fc --format json scan examples)"
	echo "classify_bench	$(instr /dev/null "$b/bench/classify_bench" 20000)"
}

run old "$old" >"$tmp/old.ir"
run new "$new" >"$tmp/new.ir"
printf '%-16s %14s %14s %7s\n' what old new new/old
join -t '	' "$tmp/old.ir" "$tmp/new.ir" | while IFS='	' read -r w o n; do
	printf '%-16s %14s %14s %7.3f\n' "$w" "$o" "$n" \
	    "$(echo "$n / $o" | bc -l)"
done
same=0
for f in report triage scan; do
	if cmp -s "$tmp/old/$f.json" "$tmp/new/$f.json"; then
		echo "$f output: identical ($(wc -c <"$tmp/new/$f.json") bytes)"
	else
		echo "$f output: DIFFERS"; diff "$tmp/old/$f.json" \
		    "$tmp/new/$f.json" | head -20; same=1
	fi
done
exit $same
