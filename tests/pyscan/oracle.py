#!/usr/bin/python3
"""Reference scan for `flakyctl scan --format tsv`, built on Python's own ast
module. A test oracle only: flakyctl never runs Python.

usage: oracle.py PATH...

Prints path<TAB>line<TAB>category<TAB>class<TAB>function per finding, in the
same order as flakyctl (files in argument order, a directory's .py files
sorted byte-wise and depth first; rows of a file by line, then by the rest
of the row). A file ast cannot parse goes to stderr as
"oracle: PATH: skipped: REASON". The rules are those of docs/scan.md.
"""
import ast
import os
import sys
import warnings

UNITTEST = {
    "assertGreater", "assertGreaterEqual", "assertLess", "assertLessEqual",
    "assertAlmostEqual", "assertNotAlmostEqual", "assertAlmostEquals",
    "assertNotAlmostEquals",
}
TORCH_LAST = {"assert_close", "assert_allclose"}
NUMPY = {
    "assert_allclose", "assert_array_almost_equal", "assert_almost_equal",
    "assert_approx_equal", "assert_array_almost_equal_nulp",
    "assert_array_max_ulp", "assert_array_less",
}
APPROX = {"approx", "allclose", "isclose"}
ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def dotted(node):
    """a.b.c for a pure chain of names, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def last_name(func):
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def call_category(call, in_cond):
    func = call.func
    last = last_name(func)
    if isinstance(func, ast.Attribute) and func.attr in UNITTEST:
        return "unittest"
    d = dotted(func)
    if d is not None and d.startswith("torch.") and last in TORCH_LAST:
        return "torch"
    if isinstance(func, ast.Name) and func.id == "assert_close":
        return "torch"
    if last in NUMPY:
        return "numpy"
    if in_cond and last in APPROX:
        return "approx"
    return None


class Scanner:
    def __init__(self):
        self.rows = []

    def row(self, line, cat, scopes):
        classes = ".".join(n for k, n in scopes if k == "class")
        func = ""
        for k, n in reversed(scopes):
            if k == "def":
                func = n
                break
        self.rows.append((line, cat, classes, func))

    def visit(self, node, scopes, in_cond):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # Decorators, defaults and annotations run in the outer scope.
            for d in node.decorator_list:
                self.visit(d, scopes, in_cond)
            self.visit(node.args, scopes, in_cond)
            if node.returns is not None:
                self.visit(node.returns, scopes, in_cond)
            inner = scopes + [("def", node.name)]
            for s in node.body:
                self.visit(s, inner, False)
            return
        if isinstance(node, ast.ClassDef):
            for d in node.decorator_list:
                self.visit(d, scopes, in_cond)
            for b in node.bases:
                self.visit(b, scopes, in_cond)
            for k in node.keywords:
                self.visit(k, scopes, in_cond)
            inner = scopes + [("class", node.name)]
            for s in node.body:
                self.visit(s, inner, False)
            return
        if isinstance(node, ast.Assert):
            if any(isinstance(n, ast.Compare) and
                   any(isinstance(op, ORDERING) for op in n.ops)
                   for n in ast.walk(node.test)):
                self.row(node.lineno, "comparison", scopes)
            self.visit(node.test, scopes, True)
            if node.msg is not None:
                self.visit(node.msg, scopes, False)
            return
        if isinstance(node, ast.Call):
            cat = call_category(node, in_cond)
            if cat is not None:
                self.row(node.lineno, cat, scopes)
        for child in ast.iter_child_nodes(node):
            self.visit(child, scopes, in_cond)


def join(base, name):
    return base + name if base.endswith("/") else base + "/" + name


def collect(path, out):
    """The .py files below a directory, sorted byte-wise, depth first."""
    try:
        names = sorted(os.listdir(os.fsencode(path)))
    except OSError as e:
        print("oracle: %s: %s" % (path, e.strerror), file=sys.stderr)
        return False
    ok = True
    for name in names:
        full = join(path, os.fsdecode(name))
        if os.path.islink(full):
            if os.path.isfile(full) and full.endswith(".py"):
                out.append(full)
            continue
        if os.path.isdir(full):
            ok = collect(full, out) and ok
        elif os.path.isfile(full) and full.endswith(".py"):
            out.append(full)
    return ok


def main(argv):
    sys.setrecursionlimit(100000)
    warnings.simplefilter("ignore")
    files = []
    ok = True
    for p in argv:
        if os.path.isdir(p):
            ok = collect(p, files) and ok
        else:
            files.append(p)
    out = sys.stdout
    for path in files:
        try:
            with open(path, "rb") as f:
                src = f.read()
        except OSError as e:
            print("oracle: %s: %s" % (path, e.strerror), file=sys.stderr)
            ok = False
            continue
        try:
            tree = ast.parse(src, path)
        except (SyntaxError, ValueError, UnicodeDecodeError,
                MemoryError, RecursionError) as e:
            print("oracle: %s: skipped: %s" % (path, e), file=sys.stderr)
            continue
        s = Scanner()
        for stmt in tree.body:
            s.visit(stmt, [], False)
        s.rows.sort()
        for line, cat, classes, func in s.rows:
            out.write("%s\t%d\t%s\t%s\t%s\n" % (path, line, cat, classes, func))
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
