#!/bin/sh
# Benchmark (d): a Jest suite under flakyctl analyze --runs N --jobs 1
# against a plain shell loop of the same N runs of the same command, timed
# with hyperfine in the same run. Goal: ratio at most 1.10 (issue 12,
# item 9: each run's private TMPDIR threw away Jest's transform cache).
#
#   bench/jest.sh               (FLAKYCTL=path to use another binary)
#
# The suite is generated under a temporary directory (not kept): FILES test
# files (default 30), each importing three of six modules of about 1,500
# lines, so that Babel's transform shows as it does on a real code base.
# Jest comes from examples/demo-jest/node_modules (npm ci there first).
# Every test passes: the runs are alike.
#
# Three commands: the shell loop (Jest's cache where Jest puts it,
# $TMPDIR/jest_<uid>), analyze as shipped (the cache under
# $XDG_CACHE_HOME/flaky/jest) and analyze --no-runner-cache (the cache in
# each run's TMPDIR, lost after every run: the old behaviour). All have
# their caches warm from a first run. ROUNDS (default 6) alternating
# hyperfine rounds of RUNS (default 1) timings each; N (default 3) Jest
# runs per timing. On a shared machine the timings of one command spread
# by a third: alternate many short rounds rather than few long ones. The
# CPU columns (user + system of all processes) vary less than wall time.
# Exits 1 when analyze's ratio is over 1.10.
set -eu

flakyctl=${FLAKYCTL:-build/cli/flakyctl}
rounds=${ROUNDS:-6}
runs=${RUNS:-1}
n=${N:-3}
files=${FILES:-30}
python=/usr/bin/python3
here=$(cd "$(dirname "$0")/.." && pwd)
modules=$here/examples/demo-jest/node_modules

[ -x "$flakyctl" ] || { echo "jest.sh: $flakyctl: not built" >&2; exit 2; }
[ -x "$modules/.bin/jest" ] || { echo "jest.sh: $modules/.bin/jest: run npm ci in examples/demo-jest" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "jest.sh: needs hyperfine" >&2; exit 2; }
flakyctl=$(cd "$(dirname "$flakyctl")" && pwd)/$(basename "$flakyctl")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The suite (CommonJS: Jest's Babel has no module transform without a
# config): modules with classes, async functions, spread and template
# strings (Babel has work to do), tests that import them.
"$python" - "$tmp/suite" "$files" <<'PY'
import os, sys
root, files = sys.argv[1], int(sys.argv[2])
os.makedirs(os.path.join(root, "src"))
os.makedirs(os.path.join(root, "__tests__"))
open(os.path.join(root, "package.json"), "w").write(
    '{"name": "bench-jest", "private": true, "devDependencies": {"jest": "29.7.0"}}\n')
for m in range(6):
    out = []
    for f in range(120):
        out.append(f"""
class Shape{m}_{f} {{
  #side = {f + 1};
  static kind = `shape-{m}-{f}`;
  constructor(...args) {{ this.args = [...args, {f}]; }}
  get area() {{ return this.#side ** 2 + this.args.length; }}
  async grow(by = 1) {{ await null; this.#side += by; return {{ ...this, side: this.#side }}; }}
  describe() {{ return `${{Shape{m}_{f}.kind}} with area ${{this.area}}`; }}
}}
const fn{m}_{f} = (x, {{ scale = {f % 7 + 1} }} = {{}}) => x?.value ?? x * scale;
module.exports.Shape{m}_{f} = Shape{m}_{f};
module.exports.fn{m}_{f} = fn{m}_{f};""")
    open(os.path.join(root, "src", f"mod{m}.js"), "w").write("\n".join(out) + "\n")
for t in range(files):
    mods = [t % 6, (t + 1) % 6, (t + 3) % 6]
    lines = [f"const m{k} = require('../src/mod{k}.js');" for k in mods]
    lines.append(f"describe('suite {t}', () => {{")
    for i in range(10):
        k, f = mods[i % 3], (t * 10 + i) % 120
        lines.append(f"""  test('case {i}', async () => {{
    const s = new m{k}.Shape{k}_{f}(1, 2);
    expect(s.describe()).toContain('shape-{k}-{f}');
    expect(m{k}.fn{k}_{f}(2, {{ scale: 3 }})).toBe(6);
    expect((await s.grow()).side).toBe({f + 2});
  }});""")
    lines.append("});")
    open(os.path.join(root, "__tests__", f"t{t}.test.js"), "w").write("\n".join(lines) + "\n")
PY
ln -s "$modules" "$tmp/suite/node_modules"
mkdir "$tmp/t" "$tmp/xdg"
export TMPDIR="$tmp/t" XDG_CACHE_HOME="$tmp/xdg"
cd "$tmp/suite"
jest="node_modules/.bin/jest --verbose"
loop="sh -c 'for i in \$(seq $n); do $jest >/dev/null 2>&1; done'"
ana="$flakyctl --db $tmp/a.db analyze --runs $n --jobs 1 -- $jest"
old="$flakyctl --db $tmp/a.db analyze --runs $n --jobs 1 --no-runner-cache -- $jest"
# One run that must pass, and warm caches for the loop and analyze.
$jest >/dev/null 2>&1 || { echo "jest.sh: the generated suite fails" >&2; $jest >&2; exit 2; }
$ana >/dev/null 2>&1

r=1
while [ "$r" -le "$rounds" ]; do
	hyperfine -N --style basic --runs "$runs" \
	    --export-json "$tmp/round$r.json" \
	    --prepare "rm -f $tmp/a.db $tmp/a.db-wal $tmp/a.db-shm" \
	    -n "shell loop" "$loop" \
	    -n "flakyctl analyze" "$ana" \
	    -n "no runner cache" "$old" >&2
	r=$((r + 1))
done

"$python" - "$tmp" "$rounds" "$n" "$files" <<'PY'
import json, statistics, sys
d, rounds, n, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
t, cpu = {}, {}
for r in range(1, rounds + 1):
    for res in json.load(open(f"{d}/round{r}.json"))["results"]:
        t.setdefault(res["command"], []).extend(res["times"])
        cpu.setdefault(res["command"], []).append(res["user"] + res["system"])
base = statistics.median(t["shell loop"])
cbase = statistics.median(cpu["shell loop"])
print(f"benchmark (d): {n} runs of a Jest suite ({files} files, 300 tests), --jobs 1")
print(f"medians of {len(t['shell loop'])} timings each ({rounds} alternating hyperfine rounds)\n")
print(f"{'':44} {'median s':>9} {'per run s':>10} {'ratio':>7} {'CPU s':>7} {'ratio':>7}")
for name, label in (("shell loop", f"for i in $(seq {n}); do jest --verbose; done"),
                    ("flakyctl analyze", "flakyctl analyze (cache kept)"),
                    ("no runner cache", "flakyctl analyze --no-runner-cache")):
    m, c = statistics.median(t[name]), statistics.median(cpu[name])
    print(f"{label:44} {m:9.2f} {m / n:10.2f} {m / base:7.2f} {c:7.2f} {c / cbase:7.2f}")
ratio = statistics.median(t["flakyctl analyze"]) / base
print(f"\ngoal: analyze at most 1.10 times the loop: {'met' if ratio <= 1.10 else 'MISSED'}")
sys.exit(0 if ratio <= 1.10 else 1)
PY
