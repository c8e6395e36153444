#!/bin/sh
# Time commands in turn, N rounds of one timing each, and print each one's
# median and its ratio to the first. Alternating spreads a busy moment of
# the machine over all commands; hyperfine times one command's runs in a
# row. Each command goes through sh -c, so a Python start-up and a shell
# (about 1 ms) are in every figure alike.
#
#   bench/alternate.sh 60 "sh -c 'for i in \$(seq 200); do /bin/true; done'" \
#       "build-bench/cli/flakyctl --db /tmp/a.db analyze --runs 200 -- true"
set -eu
[ $# -ge 2 ] || { echo "usage: alternate.sh ROUNDS COMMAND..." >&2; exit 2; }
exec /usr/bin/python3 - "$@" <<'PY'
import statistics, subprocess, sys, time
n, cmds = int(sys.argv[1]), sys.argv[2:]
t = {c: [] for c in cmds}
for _ in range(n):
    for c in cmds:
        t0 = time.perf_counter()
        subprocess.run(c, shell=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        t[c].append(time.perf_counter() - t0)
base = statistics.median(t[cmds[0]])
for c in cmds:
    m = statistics.median(t[c])
    print(f"{m * 1e3:8.1f} ms  {m / base:5.3f}  {c}")
PY
