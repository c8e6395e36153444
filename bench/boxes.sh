#!/bin/sh
# Issue 15 (4): the box as a dimension on SQLite. flakyctl report --since
# 30d over RUNS x 1,000 stored results on one box, and the same database
# with every second run on another box (report then gives every unstable
# test's rate per box: all 1,000 fail now and then here), against the
# naive GROUP BY of the results by test and box, all timed with hyperfine
# in the same run (medians).
#
#   bench/boxes.sh [DIR]        (default /var/tmp/flaky-bench/boxes)
#
# The databases are made once by `store_bench gen` and kept in DIR,
# outside git (made again when store_bench is newer). FLAKYCTL and
# STORE_BENCH name the binaries (default build/cli/flakyctl,
# build/bench/store_bench); RUNS the runs (default 4000).
set -eu

dir=${1:-/var/tmp/flaky-bench/boxes}
flakyctl=${FLAKYCTL:-build/cli/flakyctl}
store_bench=${STORE_BENCH:-build/bench/store_bench}
nruns=${RUNS:-4000}
python=/usr/bin/python3

for p in "$flakyctl" "$store_bench"; do
	[ -x "$p" ] || { echo "boxes.sh: $p: not built" >&2; exit 2; }
done
command -v hyperfine >/dev/null || { echo "boxes.sh: needs hyperfine" >&2; exit 2; }
mkdir -p "$dir"
one=$dir/one.db
two=$dir/two.db
if [ ! -s "$two" ] || [ "$two" -ot "$store_bench" ]; then
	echo "making $one ($nruns runs x 1,000 tests over 30 days)..." >&2
	"$store_bench" gen "$one" --runs "$nruns" --tests 1000 --days 30
	# A run's box changed after it was stored: box_rollups (schema 14)
	# are made again from the results, as the migration makes them.
	rebox="DELETE FROM box_rollups;
	    INSERT INTO box_rollups (day, test_id, box, runs, failures)
	    SELECT ru.started_ms / 86400000, r.test_id, coalesce(ru.box, ''),
	           sum(r.outcome IN (0, 1, 2, 5)), sum(r.outcome IN (1, 2))
	    FROM runs ru JOIN results r ON r.run_id = ru.id
	    WHERE ru.kind <> 'alone' AND ru.incomplete IS NULL
	    GROUP BY 1, 2, 3;"
	sqlite3 "$one" "UPDATE runs SET box = 'box-a'; $rebox
	    PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
	cp "$one" "$two"
	sqlite3 "$two" "UPDATE runs SET box = 'box-b' WHERE id % 2 = 0; $rebox
	    PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
fi

until_s=$(sqlite3 -readonly "$one" "SELECT max(started_ms) / 1000 + 1 FROM runs")
until_iso=$(date -u -d "@$until_s" +%Y-%m-%dT%H:%M:%SZ)
since_ms=$(( (until_s - 30 * 86400) * 1000 ))
until_ms=$(( until_s * 1000 ))
results=$(sqlite3 -readonly "$one" "SELECT sum(tests) FROM runs")
naive="SELECT test_id, box, count(*), sum(outcome IN (1,2)) FROM results JOIN runs ON runs.id = results.run_id WHERE started_ms >= $since_ms AND started_ms < $until_ms GROUP BY test_id, box"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rep="report --since 30d --until $until_iso"
shw="show --since 30d --until $until_iso test_case_042"
# name:runs:database:arguments
for m in one-json:10:$one:"$rep --format json" two-json:10:$two:"$rep --format json" \
    two-table:10:$two:"$rep" box:3:$two:"$rep --box box-b" \
    show-one:3:$one:"$shw" show-two:3:$two:"$shw"; do
	name=${m%%:*}; rest=${m#*:}; n=${rest%%:*}; rest=${rest#*:}
	db=${rest%%:*}; args=${rest#*:}
	hyperfine -N --style basic --warmup 1 --runs "$n" --export-json \
	    "$tmp/$name.json" -n "$name" "$flakyctl --db $db $args" >&2
done
hyperfine -N --style basic --warmup 1 --runs 3 --export-json "$tmp/naive.json" \
	-n naive "sqlite3 -readonly $two '$naive'" >&2
"$flakyctl" --db "$two" $rep --format json > "$tmp/two.out"
lines=$("$python" -c 'import json,sys; print(sum(1 for t in json.load(open(sys.argv[1]))["tests"] if len(t["boxes"]) == 2))' "$tmp/two.out")

"$python" - "$tmp" "$results" "$until_iso" "$lines" <<'PY'
import json, os, sys
d, n, until, lines = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
r = {k: json.load(open(os.path.join(d, k + ".json")))["results"][0]
     for k in ("naive", "one-json", "two-json", "two-table", "box",
               "show-one", "show-two")}
print(f"issue 15 (4): report --since 30d --until {until} over {n:,} results")
print(f"medians (min-max) of hyperfine runs; {lines} tests with rates per "
      f"box in the JSON\n")
print(f"{'':52} {'median s':>9} {'min s':>7} {'max s':>7} {'runs':>5} "
      f"{'ratio':>7}")
base = r["naive"]["median"]
for k, name in (("naive", "naive GROUP BY test, box over results (baseline)"),
                ("one-json", "report --format json, one box"),
                ("two-json", "report --format json, two boxes"),
                ("two-table", "report (table), two boxes"),
                ("box", "report --box box-b"),
                ("show-one", "show TEST, one box"),
                ("show-two", "show TEST, two boxes")):
    x = r[k]
    print(f"{name:52} {x['median']:9.3f} {x['min']:7.3f} {x['max']:7.3f} "
          f"{len(x['times']):5d} {base / x['median']:6.1f}x")
PY
