#!/bin/sh
# Benchmark: a 30-day report on PostgreSQL over 27,000,000 results (1,000
# tests x 27,000 runs from 8 boxes over 30 days), read from the rollups,
# against the naive GROUP BY over the results, in the same run; and the
# bytes the server stores per result; and flakyctl report itself on the
# server (--db postgresql://). docs/performance.md has the figures.
#
#   bench/pg_report.sh            (about 5 to 10 minutes on 2 cores)
#
# A throwaway cluster (scripts/pgtmp.sh, niced) is made and removed; the
# evidence is generated inside it (generate_series, one INSERT a day, so
# the rollup trigger runs as it does for a shipping batch). ROUNDS (5)
# timings of each query; the medians and their ratio are printed, with
# EXPLAIN ANALYZE of both. Exits 1 when the report takes 0.5 s or more.
# TESTS, RUNS, DAYS change the size (defaults 1000, 27000, 30). FLAKYCTL
# (build/cli/flakyctl) is the command timed.
set -eu
cd "$(dirname "$0")/.."

tests=${TESTS:-1000}
runs=${RUNS:-27000}
days=${DAYS:-30}
rounds=${ROUNDS:-5}
base=1790812800000	# 2026-10-01T00:00:00Z: figures that repeat
day=86400000

dir=$(mktemp -d /tmp/flakypg.XXXXXXXX)
# KEEP=1: leave the cluster running (its URI is printed), to look into.
[ -n "${KEEP:-}" ] ||
    trap 'scripts/pgtmp.sh stop "$dir" >/dev/null 2>&1 || true' EXIT INT TERM
uri=$(PG_SHARED_BUFFERS=${PG_SHARED_BUFFERS:-1GB} nice -n 10 \
    scripts/pgtmp.sh start "$dir")
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$uri" "$@"; }

[ -z "${KEEP:-}" ] || echo "cluster: $uri (stop: scripts/pgtmp.sh stop $dir)" >&2
for f in schema/pg/[0-9]*.sql; do
	sql -1 -f "$f" >/dev/null
	sql -c "INSERT INTO schema_version (version, name) VALUES
	    ((SELECT count(*) + 1 FROM schema_version), '$(basename "$f")')"
done

echo "generating $runs runs x $tests tests over $days days..." >&2
t0=$(date +%s)
sql >/dev/null <<SQL
SELECT flaky_make_partitions($base, $base + $days * $day::bigint);
INSERT INTO targets (id, name, created_ms) VALUES (1, 'suite', $base);
INSERT INTO tests (id, target_id, name)
SELECT t, 1, 'tests/test_mod' || (t / 50) || '.py::test_' || t
FROM generate_series(1, $tests) t;
INSERT INTO runs (id, box, local_id, target_id, status, trigger, started_ms,
		  ended_ms, duration_us, exit_code, tests, failures, kind)
SELECT i, 'box-' || (i % 8), i / 8 + 1, 1, 'done', 'schedule',
       $base + (i - 1) * ($days * $day::bigint / $runs),
       $base + (i - 1) * ($days * $day::bigint / $runs) + 60000,
       60000000, 0, $tests, 0, 'suite'
FROM generate_series(1, $runs) i;
SQL
# One statement a day: as many rows as a day of shipping batches, in the
# order they arrive (a run's results together, as a box ships them and a
# command writes them), which the BRIN index on run_id relies on.
d=0
while [ $d -lt "$days" ]; do
	sql >/dev/null <<SQL
INSERT INTO results (started_ms, run_id, duration_us, test_id, position,
		     outcome, signature, message)
SELECT r.started_ms, r.id, 1000 + (t * 7919 + r.id * 104729) % 200000, t,
       t - 1, CASE WHEN f THEN 1 ELSE 0 END,
       CASE WHEN f THEN 'RACE' END,
       CASE WHEN f THEN 'AssertionError: assert None is not None' END
FROM runs r CROSS JOIN generate_series(1, $tests) t
CROSS JOIN LATERAL (SELECT (r.id * 31 + t * 17) % 100 <
    CASE WHEN t % 100 = 0 THEN 30 WHEN t % 10 = 0 THEN 3 ELSE 0 END) x(f)
WHERE r.started_ms >= $base + $d * $day::bigint
  AND r.started_ms < $base + ($d + 1) * $day::bigint
ORDER BY r.id, t;
SQL
	d=$((d + 1))
done
sql -c "VACUUM (ANALYZE)" >/dev/null
# The generated pages on disk before anything is timed: the checkpoint
# after a load of 2 GB wrote for minutes and took a third of the disk's
# time from the report (46% I/O wait at the first timing).
sql -c "CHECKPOINT" >/dev/null
t1=$(date +%s)
echo "generated in $((t1 - t0)) s" >&2

since_ms=$base
since_day=$((base / day))
report="SELECT t.name, sum(ru.runs) AS runs, sum(ru.failures) AS failures,
       round(1.0 * sum(ru.failures) / nullif(sum(ru.runs), 0), 4) AS rate
FROM rollups ru JOIN tests t ON t.id = ru.test_id
WHERE ru.day >= $since_day
GROUP BY t.id, t.name ORDER BY rate DESC, t.name"
naive="SELECT t.name, count(*) FILTER (WHERE r.outcome IN (0, 1, 2, 5)) AS runs,
       count(*) FILTER (WHERE r.outcome IN (1, 2)) AS failures,
       round(1.0 * count(*) FILTER (WHERE r.outcome IN (1, 2)) /
             nullif(count(*) FILTER (WHERE r.outcome IN (0, 1, 2, 5)), 0), 4)
           AS rate
FROM results r JOIN tests t ON t.id = r.test_id
WHERE r.started_ms >= $since_ms
GROUP BY t.id, t.name ORDER BY rate DESC, t.name"

# The same answer both ways, or the comparison means nothing.
a=$(sql -c "$report" | md5sum)
b=$(sql -c "$naive" | md5sum)
[ "$a" = "$b" ] || { echo "pg_report.sh: the two queries disagree" >&2; exit 2; }

# Median of ROUNDS timings of a query (ms), in turn with the other.
timings() {
	{ printf '%s\n' '\timing on'; i=0
	  while [ $i -lt "$rounds" ]; do printf '%s;\n' "$1"; i=$((i + 1)); done; } |
	    sql -o /dev/null | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' |
	    sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
r_ms=$(timings "$report")
n_ms=$(timings "$naive")

# The command itself on the server (issue 15, item 2): flakyctl report of
# the same 30 days, everything it prints (rates, tiers, top messages, the
# per-box split), as JSON. Median of ROUNDS wall times, in ms.
ctl=${FLAKYCTL:-build/cli/flakyctl}
until_ms=$((base + days * day))
until_iso=$(date -u -d "@$((until_ms / 1000))" +%Y-%m-%dT%H:%M:%SZ)
"$ctl" --db "$uri" --format json report --since 30d --until "$until_iso" \
    >/dev/null
c_ms=$(i=0; while [ $i -lt "$rounds" ]; do
	s=$(date +%s%N)
	"$ctl" --db "$uri" --format json report --since 30d \
	    --until "$until_iso" >/dev/null
	echo $(( ($(date +%s%N) - s) / 1000000 )); i=$((i + 1))
done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')

echo "== EXPLAIN ANALYZE, report from the rollups"
sql -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) $report"
echo "== EXPLAIN ANALYZE, naive GROUP BY over the results"
sql -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) $naive"

rows=$(sql -c "SELECT count(*) FROM results")
sizes=$(sql -F ' ' -c "SELECT
    sum(pg_relation_size(inhrelid)),
    sum(pg_total_relation_size(inhrelid) - pg_relation_size(inhrelid)),
    pg_total_relation_size('rollups'), pg_total_relation_size('box_rollups'),
    pg_total_relation_size('failure_rollups') +
    pg_total_relation_size('budget')
FROM pg_inherits WHERE inhparent = 'results'::regclass")
set -- $sizes
heap=$1 idx=$2 roll=$3 broll=$4 froll=$5
echo "== figures"
echo "results:            $rows in $days days ($runs runs x $tests tests, 8 boxes)"
echo "30-day report:      $r_ms ms from the rollups (median of $rounds)"
echo "naive GROUP BY:     $n_ms ms over the results (median of $rounds)"
awk -v r="$r_ms" -v n="$n_ms" 'BEGIN { printf "ratio:              %.0fx faster\n", n / r }'
echo "flakyctl report:    $c_ms ms, the whole command (median of $rounds)"
awk -v c="$c_ms" -v n="$n_ms" 'BEGIN { printf "ratio to naive:     %.1fx faster\n", n / c }'
awk -v h="$heap" -v i="$idx" -v ro="$roll" -v b="$broll" -v f="$froll" \
    -v n="$rows" 'BEGIN {
	printf "bytes per result:   %.1f (results %.1f, their indexes %.1f, rollups %.1f, box_rollups %.1f, failure_rollups and budget %.2f)\n",
	    (h + i + ro + b + f) / n, h / n, i / n, ro / n, b / n, f / n }'
awk -v r="$r_ms" -v c="$c_ms" 'BEGIN { exit !(r < 500 && c < 500) }' ||
    { echo "pg_report.sh: the report took $r_ms ms (query), $c_ms ms" \
      "(flakyctl), goal under 500" >&2; exit 1; }
