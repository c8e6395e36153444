#!/bin/sh
# Benchmark: flakyctl writing to PostgreSQL directly (--db postgresql://,
# docs/fleet.md "Commands on the server") against the same command on a
# SQLite file, in the same run: ingest of FILES JUnit files of TESTS
# results each (defaults 20 and 1,000; 2% failures), with hyperfine.
#
#   bench/pg_direct.sh [build/cli/flakyctl]
#
# A throwaway cluster (scripts/pgtmp.sh) is made and removed. Before each
# timed run the SQLite file is removed and the server's tables emptied
# (ingest stores a file once), so both store every result each time.
set -eu
cd "$(dirname "$0")/.."
ctl=$(realpath "${1:-build/cli/flakyctl}")
files=${FILES:-20}
tests=${TESTS:-1000}

dir=$(mktemp -d /tmp/flakypg.XXXXXXXX)
work=$(mktemp -d /tmp/pgdirect.XXXXXXXX)
trap 'scripts/pgtmp.sh stop "$dir" >/dev/null 2>&1 || true; rm -rf "$work"' \
    EXIT INT TERM
uri=$(scripts/pgtmp.sh start "$dir")
/usr/bin/python3 - "$work" "$files" "$tests" <<'PY'
import sys
work, files, tests = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(files):
    cases = "".join(
        '<testcase classname="m" name="t%d" time="0.01">%s</testcase>' %
        (k, '<failure message="boom">x</failure>'
         if (k * 7 + i) % 50 == 0 else '') for k in range(tests))
    with open("%s/r%03d.xml" % (work, i), "w") as f:
        f.write('<testsuites><testsuite name="s" tests="%d" '
                'timestamp="2026-11-30T%02d:%02d:00">%s</testsuite>'
                '</testsuites>' % (tests, i // 60 % 24, i % 60, cases))
PY
"$ctl" --db "$uri" stats >/dev/null	# the schema, before the timing
empty="psql -X -q -d '$uri' -c 'TRUNCATE runs, results, tests, messages, \
rollups, outputs, attempts, budget CASCADE'"
hyperfine -w 1 -r "${ROUNDS:-5}" -N \
    -n sqlite --prepare "rm -f $work/l.db $work/l.db-wal $work/l.db-shm" \
    "$ctl --db $work/l.db ingest --target t $(ls "$work"/r*.xml | tr '\n' ' ')" \
    -n postgresql --prepare "$empty" \
    "$ctl --db $uri ingest --target t $(ls "$work"/r*.xml | tr '\n' ' ')"
echo "results stored on the server: $(psql -X -A -t -d "$uri" -c \
    'SELECT count(*) FROM results')"
