#!/bin/bash
# Speed of the static risk scan: `flakyctl scan --format tsv` against the
# ast-based reference scan (tests/pyscan/oracle.py, the same rows) over the
# test files of numpy, scipy and scikit-learn, with hyperfine, in one run.
# Prints both times, the ratio (goal: at least 20x) and the scanner's
# throughput in MB/s.
#
# usage: bench/pyscan.sh [FLAKYCTL] [RUNS]
#   FLAKYCTL defaults to build/cli/flakyctl; RUNS to 10.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
flakyctl=$(realpath "${1:-$src/build/cli/flakyctl}")
runs=${2:-10}
dist=/usr/lib/python3/dist-packages
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

command -v hyperfine >/dev/null || { echo "hyperfine not installed"; exit 77; }
cd "$dist"
find numpy scipy sklearn -type f -path '*/tests/*' \
    \( -name 'test_*.py' -o -name '*_test.py' \) | LC_ALL=C sort >"$tmp/files"
nfiles=$(wc -l <"$tmp/files")
bytes=$(xargs -d '\n' cat <"$tmp/files" | wc -c)
files=$(tr '\n' ' ' <"$tmp/files")

# Same rows first: a fast wrong answer is no answer.
"$flakyctl" scan --format tsv $files >"$tmp/a.tsv"
"$python" "$src/tests/pyscan/oracle.py" $files >"$tmp/b.tsv"
cmp -s "$tmp/a.tsv" "$tmp/b.tsv" || { echo "outputs differ"; exit 1; }
rows=$(wc -l <"$tmp/a.tsv")

echo "corpus: $nfiles files, $bytes bytes, $rows findings ($(uname -m)," \
    "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg))"
hyperfine --warmup 2 --runs "$runs" --style basic \
    --export-json "$tmp/h.json" \
    -n flakyctl "$flakyctl scan --format tsv $files >/dev/null" \
    -n ast-oracle "$python $src/tests/pyscan/oracle.py $files >/dev/null" |
    grep -v '^ *$' | grep -v "^Benchmark" | sed 's/^/  /' | cut -c1-110

"$python" - "$tmp/h.json" "$bytes" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
a, b = r["flakyctl"], r["ast-oracle"]
mb = int(sys.argv[2]) / 1e6
print("flakyctl scan:  %.1f ms +- %.1f (min %.1f)" % (a["mean"] * 1e3, a["stddev"] * 1e3, a["min"] * 1e3))
print("ast oracle:     %.1f ms +- %.1f (min %.1f)" % (b["mean"] * 1e3, b["stddev"] * 1e3, b["min"] * 1e3))
print("ratio:          %.1fx faster (mean), %.1fx (min)" % (b["mean"] / a["mean"], b["min"] / a["min"]))
cpu_a, cpu_b = a["user"] + a["system"], b["user"] + b["system"]
print("CPU time:       flakyctl %.1f ms, oracle %.0f ms: %.1fx less (robust on a loaded machine)" % (cpu_a * 1e3, cpu_b * 1e3, cpu_b / cpu_a))
print("throughput:     %.0f MB/s (mean, whole process), %.0f MB/s (min), %.0f MB/s of CPU time" % (mb / a["mean"], mb / a["min"], mb / cpu_a))
PY
