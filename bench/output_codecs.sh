#!/bin/sh
# What other codecs would make of the stored output of a database (one kept
# by KEEP=DIR bench/output_bytes.sh): each run's kept stdout, uncompressed
# through run_output, then compressed alone by zlib's compress() (what
# flaky stores: sqlar's format), zlib level 9, zstd -3 and -19, zstd with a
# dictionary trained on the first 5 runs (zstd --train), and zstd with the
# previous run's output as a raw dictionary (the best a per-target
# dictionary could do). Bytes per stored result over the runs. Run by hand.
#
#   bench/output_codecs.sh DB
set -eu
db=$1
python=/usr/bin/python3
command -v zstd >/dev/null || { echo "output_codecs.sh: needs zstd" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" - "$db" "$tmp" <<'PY'
import os, sqlite3, subprocess, sys, zlib
db, tmp = sys.argv[1], sys.argv[2]
con = sqlite3.connect(db)
con.create_function("sqlar_uncompress", 2, lambda d, n: d if d is None or
                    n <= 0 or n == len(d) else zlib.decompress(d))
rows = con.execute("SELECT run_id, CAST(stdout AS BLOB), r.tests FROM "
                   "run_output JOIN runs r ON r.id = run_id "
                   "WHERE stdout IS NOT NULL ORDER BY run_id").fetchall()
results = sum(r[2] or 0 for r in rows)
files = []
for run, out, _ in rows:
    f = os.path.join(tmp, "%06d.txt" % run)
    open(f, "wb").write(out)
    files.append(f)

def zstd(args, f):
    return len(subprocess.run(["zstd", "-q", "-c"] + args + [f],
                              capture_output=True, check=True).stdout)

dic = os.path.join(tmp, "dict")
subprocess.run(["zstd", "-q", "--train", "-B4096", "--maxdict=65536"] +
               files[:5] + ["-o", dic], capture_output=True, check=True)
rest = len(files) - 5
rows = [
    ("kept stdout, raw", sum(os.path.getsize(f) for f in files)),
    ("zlib compress() (stored: sqlar)",
     sum(len(zlib.compress(open(f, "rb").read())) for f in files)),
    ("zlib level 9", sum(len(zlib.compress(open(f, "rb").read(), 9))
                         for f in files)),
    ("zstd -3", sum(zstd(["-3"], f) for f in files)),
    ("zstd -19", sum(zstd(["-19"], f) for f in files)),
    ("zstd -3, trained dictionary (+ its size)",
     os.path.getsize(dic) + sum(zstd(["-3", "-D", dic], f)
                                for f in files[5:]) * len(files) / rest),
    ("zstd -3, previous run's output as dictionary",
     zstd(["-3"], files[0]) + sum(zstd(["-3", "-D", files[i - 1]], files[i])
                                  for i in range(1, len(files)))),
]
print("%d runs, %d results; stdout only" % (len(files), results))
print("%-46s %10s %9s" % ("", "bytes", "B/result"))
for name, b in rows:
    print("%-46s %10d %9.2f" % (name, b, b / results))
PY
