#!/bin/sh
# Database bytes per stored result (issue 12, item 10): a generated pytest
# suite of about 2,000 tests (a few broken, a few flaky, some printing,
# some skipped; the same suite and the same outcomes every time) run by
# `flakyctl analyze --runs 20 -- /usr/bin/pytest -v` into a fresh database.
# The size is the user's file: page_count * page_size after the runs and a
# checkpoint (no VACUUM), divided by the results stored. Run by hand, not in
# CI; about a minute per binary.
#
#   bench/output_bytes.sh [FLAKYCTL...]     default build/cli/flakyctl
#   TESTS=2000 RUNS=20 bench/output_bytes.sh OLD/flakyctl NEW/flakyctl
#   KEEP=DIR bench/output_bytes.sh ...     keep the databases in DIR
#                                           (bench/output_codecs.sh reads one)
#
# Several binaries are measured on the same suite, one after the other; the
# last column is each one's bytes per result over the first one's. Where
# sqlite3 has dbstat, the bytes are split by table too.
set -eu

tests=${TESTS:-2000}
runs=${RUNS:-20}
python=/usr/bin/python3
pytest=/usr/bin/pytest

[ $# -gt 0 ] || set -- build/cli/flakyctl
for f in "$@"; do
	[ -x "$f" ] || { echo "output_bytes.sh: $f: not built" >&2; exit 2; }
done
[ -x "$pytest" ] || { echo "output_bytes.sh: needs $pytest" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The suite: files of 50 tests. Broken tests fail every time with a
# traceback, flaky ones fail in about one run of five, decided by the run's
# number (conftest.py counts sessions in a file) and the test's index, so
# two binaries see the same outcomes.
"$python" - "$tmp/suite" "$tests" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(12)
os.makedirs(root + "/tests")
open(root + "/pytest.ini", "w").write("[pytest]\ntestpaths = tests\n")
open(root + "/tests/conftest.py", "w").write('''\
import os
COUNTER = os.path.join(os.path.dirname(__file__), "..", "session.count")

def pytest_sessionstart(session):
    try:
        n = int(open(COUNTER).read())
    except OSError:
        n = 0
    open(COUNTER, "w").write(str(n + 1))
    os.environ["BENCH_RUN"] = str(n)
''')
words = ["parse", "render", "option", "context", "command", "group", "prompt",
         "echo", "path", "choice", "default", "env", "callback", "format"]
i = 0
f = 0
while i < n:
    lines = ["import os", "import pytest", "",
             "RUN = int(os.environ.get('BENCH_RUN', '0'))", ""]
    k = 0
    while k < 50 and i < n:
        name = "test_%s_%s_%d" % (rnd.choice(words), rnd.choice(words), i)
        kind = rnd.random()
        if kind < 0.0035:
            lines += ["def %s():" % name,
                      "    expected = {'name': 'x', 'count': %d}" % i,
                      "    got = {'name': 'x', 'count': %d}" % (i + 1),
                      "    assert got == expected", ""]
            i += 1
        elif kind < 0.011:
            lines += ["def %s():" % name,
                      "    print('checking %s, run', RUN)" % name,
                      "    assert (RUN * 7 + %d) %% 5 != 0, 'timing out after 0.5s'" % i, ""]
            i += 1
        elif kind < 0.08 and n - i >= 4:
            lines += ["@pytest.mark.parametrize('value', ['a', 'b-c', 'd e', ''])",
                      "def %s(value):" % name,
                      "    assert isinstance(value, str)", ""]
            i += 4
        elif kind < 0.1:
            lines += ["@pytest.mark.skip(reason='not on this platform')",
                      "def %s():" % name, "    pass", ""]
            i += 1
        elif kind < 0.13:
            lines += ["def %s(capsys):" % name,
                      "    print('output of %s')" % name,
                      "    assert capsys.readouterr().out.startswith('output')", ""]
            i += 1
        else:
            lines += ["def %s():" % name,
                      "    assert sum(range(%d)) == %d" % (i % 97, sum(range(i % 97))), ""]
            i += 1
        k += 1
    open(root + "/tests/test_%s_%02d.py" % (words[f % len(words)], f), "w").write(
        "\n".join(lines))
    f += 1
PY

printf '%-40s %7s %8s %11s %10s %7s\n' binary runs results "file bytes" "B/result" ratio
first=
for f in "$@"; do
	bin=$(cd "$(dirname "$f")" && pwd)/$(basename "$f")
	db=$tmp/$(echo "$f" | tr / _).db
	rm -f "$tmp/suite/session.count"
	(cd "$tmp/suite" && "$bin" --db "$db" analyze --runs "$runs" -- \
	    "$pytest" -v >/dev/null 2>"$tmp/err") || {
		[ $? -eq 1 ] || { cat "$tmp/err" >&2; exit 2; }
	}
	"$python" - "$db" "$f" "$first" <<'PY' > "$tmp/line"
import sqlite3, sys
db, name, first = sys.argv[1], sys.argv[2], sys.argv[3]
c = sqlite3.connect(db)
c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
size = c.execute("PRAGMA page_count").fetchone()[0] * \
    c.execute("PRAGMA page_size").fetchone()[0]
runs, results = c.execute("SELECT count(*), sum(tests) FROM runs").fetchone()
per = size / results
ratio = "%7.3f" % (per / float(first)) if first else "%7s" % "1"
print("%-40s %7d %8d %11d %10.1f %s %f" % (name[-40:], runs, results, size,
      per, ratio, per))
try:
    rows = c.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name "
                     "ORDER BY 2 DESC LIMIT 8").fetchall()
    print("    " + ", ".join("%s %.1f" % (n, b / results) for n, b in rows),
          file=sys.stderr)
except sqlite3.DatabaseError:
    pass
PY
	[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP"; cp "$db" "$KEEP/"; }
	line=$(cat "$tmp/line")
	echo "${line% *}"
	[ -n "$first" ] || first=${line##* }
done
