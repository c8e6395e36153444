#!/bin/sh
# The layout figures of issue 13, for lib/, cli/ and daemon/:
#   - files over 800 lines (generated ones excepted),
#   - cycles between modules, from the #include graph (a module is a .c
#     and the .h of the same name; a cycle is a strongly connected set of
#     more than one module),
#   - the share of duplicated lines: lines inside a run of 6 or more
#     consecutive lines (blank lines and lone braces skipped, white space
#     folded) that appears more than once.
#   - cycles between folders (lib/<subsystem>/, cli/, daemon/, common/),
#   - includes of a library header other than a subsystem's public one
#     (lib/X/X.h) from the programs (cli/, daemon/, bench/, schema/),
#   - paths the documentation names (lib/..., cli/..., tests/...) that
#     are not in the tree,
#   - with --testlog FILE (a meson testlog.txt): the test cases run, the
#     figure that must not drop when code moves.
# Prints the figures and exits 0; with --check it exits 1 when a figure
# misses its goal (0 long files, 0 cycles, 0 internal includes, under 1%
# duplicated).
#   scripts/layout.sh [--check] [--testlog FILE]
set -eu
cd "$(dirname "$0")/.."
exec /usr/bin/python3 - "$@" <<'PY'
import os, re, sys, hashlib, collections

args = sys.argv[1:]
check = "--check" in args
testlog = args[args.index("--testlog") + 1] if "--testlog" in args else None
roots = ["lib", "cli", "daemon", "common"]
GENERATED = re.compile(r"(schema_image|schema)\.c$")
files = []
for r in roots:
    for d, _, fs in os.walk(r):
        for f in fs:
            if f.endswith((".c", ".h")):
                files.append(os.path.join(d, f))
files.sort()
text = {f: open(f, encoding="utf-8", errors="replace").read() for f in files}

# 1. long files
long_files = [(f, t.count("\n")) for f, t in text.items()
              if t.count("\n") > 800 and not GENERATED.search(f)]

# 2. cycles between modules. A header with no source of its own (an
# internal header shared by several files, a header of constants) is not a
# module: what it includes counts for the file that includes it.
def module(path):
    return os.path.splitext(path)[0]
mods = {module(f) for f in files if f.endswith(".c")}
by_name = collections.defaultdict(list)
for f in files:
    by_name[os.path.basename(f)].append(f)
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
def resolve(h, frm):
    here = os.path.join(os.path.dirname(frm), h)
    if here in text:
        return [here]
    c = [f for f in files if f.endswith("/" + h)]
    return c or by_name.get(os.path.basename(h), [])
def reach(f, seen):
    """Modules f depends on, through headers that are no module."""
    out = set()
    for h in inc.findall(text[f]):
        for c in resolve(h, f):
            if c in seen:
                continue
            seen.add(c)
            if module(c) in mods:
                out.add(module(c))
            else:
                out |= reach(c, seen)
    return out
edges = collections.defaultdict(set)
for f in files:
    a = module(f)
    if a not in mods:
        continue
    edges[a] |= reach(f, {f}) - {a}
nodes = sorted(mods)
index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)
def strong(v):
    index[v] = low[v] = n[0]; n[0] += 1
    stack.append(v); on.add(v)
    for w in edges[v]:
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            sccs.append(sorted(comp))
for v in nodes:
    if v not in index:
        strong(v)

# 2b. cycles between folders: lib/<subsystem> is one, each program another.
def folder(m):
    parts = m.split("/")
    return "/".join(parts[:2]) if parts[0] == "lib" and len(parts) > 2 else parts[0]
fedges = collections.defaultdict(set)
for a, bs in edges.items():
    for b in bs:
        if folder(a) != folder(b):
            fedges[folder(a)].add(folder(b))
fsccs = []
findex, flow, fstack, fon, fn = {}, {}, [], set(), [0]
def fstrong(v):
    findex[v] = flow[v] = fn[0]; fn[0] += 1
    fstack.append(v); fon.add(v)
    for w in fedges[v]:
        if w not in findex:
            fstrong(w); flow[v] = min(flow[v], flow[w])
        elif w in fon:
            flow[v] = min(flow[v], findex[w])
    if flow[v] == findex[v]:
        comp = []
        while True:
            w = fstack.pop(); fon.discard(w); comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            fsccs.append(sorted(comp))
for v in sorted({folder(m) for m in mods}):
    if v not in findex:
        fstrong(v)

# 2c. the programs include public headers only: lib/X/X.h.
private = []
for r in ("cli", "daemon", "bench", "schema"):
    for d, _, fs in os.walk(r):
        for f in fs:
            if not f.endswith((".c", ".h")):
                continue
            p = os.path.join(d, f)
            for n, line in enumerate(open(p, encoding="utf-8", errors="replace"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                h = m.group(1)
                lib = os.path.join("lib", h)
                if not os.path.exists(lib):
                    continue
                parts = h.split("/")
                if not (len(parts) == 2 and parts[1] == parts[0] + ".h"):
                    private.append("%s:%d: %s" % (p, n, h))

# 2d. paths the documentation names that are not in the tree (a file
# moved, its docs not).
stale = []
docs = ["README.md", "HACKING.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir("docs")
    if f.endswith((".md", ".1", ".5", ".8")))
pathre = re.compile(r"\b((?:lib|cli|daemon|bench|scripts|schema|contrib|tests/(?:unit|integration|fixtures|fuzz|reliability|pyscan))/[\w./-]*\w\.(?:c|h|sh|py|sql|in|txt))\b")
for d in docs:
    if not os.path.exists(d):
        continue
    for n, line in enumerate(open(d, encoding="utf-8", errors="replace"), 1):
        for m in pathre.finditer(line):
            if not os.path.exists(m.group(1)) and not re.search(r"NAME|NNNN", m.group(1)):
                stale.append("%s:%d: %s" % (d, n, m.group(1)))

# 3. duplicated lines
W = 6
norm = {}
for f in files:
    if f.endswith(".c") and not GENERATED.search(f):
        ls = []
        for i, l in enumerate(text[f].split("\n")):
            s = " ".join(l.split())
            if s and s not in ("{", "}", "};", "*/", "/*", "*"):
                ls.append((i, s))
        norm[f] = ls
seen = collections.defaultdict(list)
for f, ls in norm.items():
    for k in range(len(ls) - W + 1):
        h = hashlib.sha1("\n".join(s for _, s in ls[k:k + W]).encode()).digest()
        seen[h].append((f, k))
dup = set()
for h, where in seen.items():
    if len(where) > 1:
        for f, k in where:
            for j in range(k, k + W):
                dup.add((f, j))
total = sum(len(ls) for ls in norm.values())
share = 100.0 * len(dup) / total if total else 0.0

print("files over 800 lines: %d" % len(long_files))
for f, c in sorted(long_files, key=lambda x: -x[1]):
    print("  %6d  %s" % (c, f))
print("cycles between modules: %d" % len(sccs))
for c in sccs:
    print("  " + " <-> ".join(c))
print("cycles between folders: %d" % len(fsccs))
for c in fsccs:
    print("  " + " <-> ".join(c))
print("internal headers included by programs: %d" % len(private))
for p in private:
    print("  " + p)
print("paths in the documentation that do not exist: %d" % len(stale))
for s in stale:
    print("  " + s)
print("duplicated lines: %.2f%% (%d of %d lines of code in .c files)" %
      (share, len(dup), total))
if testlog:
    log = open(testlog, encoding="utf-8", errors="replace").read()
    checks = sum(int(x) for x in re.findall(r"Checks: (\d+)", log))
    passed = sum(int(x) for x in re.findall(r"(\d+) passed", log))
    print("test cases run: %d (check %d, pytest %d)" % (checks + passed, checks, passed))
bad = long_files or sccs or fsccs or private or stale or share >= 1.0
sys.exit(1 if check and bad else 0)
PY
