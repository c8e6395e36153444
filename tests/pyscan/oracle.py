#!/usr/bin/python3
"""Reference scan for `flakyctl scan --format tsv`, built on Python's own ast
module. A test oracle only: flakyctl never runs Python.

usage: oracle.py [--tests] PATH...

Prints path<TAB>line<TAB>category<TAB>class<TAB>function per finding, in the
same order as flakyctl (files in argument order, a directory's .py files
sorted byte-wise and depth first; rows of a file by line, then by the rest
of the row). A file ast cannot parse goes to stderr as
"oracle: PATH: skipped: REASON". The rules are those of docs/scan.md.

With --tests it prints the seeding signal instead, one line per function
named test*: path<TAB>line<TAB>class<TAB>name<TAB>seeded<TAB>findings.
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


CLASS_HOOKS = {"setUp", "setup_method", "setUpClass", "setup_class",
               "setup", "setUpTestData"}
MODULE_HOOKS = {"setup_module", "setUpModule", "setup_function", "setup"}


def seeds(call):
    """Whether a call seeds randomness (docs/scan.md, "seeding calls")."""
    func = call.func
    last = last_name(func)
    if last == "manual_seed":
        return True
    if last in ("seed", "set_seed") and isinstance(func, ast.Attribute) \
            and last_name(func.value) == "random":
        return True
    if last in ("default_rng", "RandomState"):
        n = len(call.args) + len(call.keywords)
        none = (len(call.args) == 1 and not call.keywords and
                isinstance(call.args[0], ast.Constant) and
                call.args[0].value is None)
        if n > 0 and not none:
            return True
    for k in call.keywords:
        if k.arg == "random_state" and isinstance(k.value, ast.Constant) \
                and type(k.value.value) is int:
            return True
    return False


def last_name_of_decorator(d):
    if isinstance(d, ast.Call):
        d = d.func
    return last_name(d)


class Scope:
    def __init__(self, kind, node, parent):
        self.kind = kind
        self.name = node.name
        self.line = node.lineno
        self.parent = parent
        self.seeds = False
        self.fixture = False
        self.autouse = False
        self.params = []
        self.resolved = 0
        self.nfindings = 0
        if kind == "def":
            a = node.args
            self.params = [x.arg for x in a.posonlyargs + a.args +
                           a.kwonlyargs]
            if a.vararg:
                self.params.append(a.vararg.arg)
            if a.kwarg:
                self.params.append(a.kwarg.arg)
        for d in node.decorator_list:
            if last_name_of_decorator(d) == "fixture":
                self.fixture = True
            if isinstance(d, ast.Call) and any(
                    k.arg == "autouse" and isinstance(k.value, ast.Constant)
                    and k.value.value is True for k in d.keywords):
                self.autouse = True


class Scanner:
    def __init__(self):
        self.rows = []
        self.scopes = []        # every Scope in source order
        self.module_seeds = False

    def row(self, line, cat, scopes):
        classes = ".".join(n.name for n in scopes if n.kind == "class")
        func = ""
        for n in reversed(scopes):
            if n.kind == "def":
                func = n.name
                break
        test = None
        for n in reversed(scopes):
            if n.kind == "def" and n.name.startswith("test"):
                test = n
                break
        if test is not None:
            test.nfindings += 1
        self.rows.append((line, cat, classes, func))

    def mark_seeds(self, scopes):
        if not scopes:
            self.module_seeds = True
        elif scopes[-1].kind == "class":
            scopes[-1].seeds = True
        else:
            for n in scopes:
                if n.kind == "def":
                    n.seeds = True

    def hooks_seed(self, parent, depth):
        hooks = MODULE_HOOKS if parent is None else CLASS_HOOKS
        for f in self.scopes:
            if f.kind != "def" or f.parent is not parent:
                continue
            if f.fixture and f.autouse:
                if self.seeded(f, depth + 1):
                    return True
                continue
            if f.seeds and f.name in hooks:
                return True
        return False

    def seeded(self, s, depth=0):
        if s.resolved in (1, 2):
            return s.resolved == 2
        if s.resolved == 3 or depth > 16:
            return False
        s.resolved = 3
        yes = s.seeds or self.module_seeds
        if not yes:
            for p in s.params:
                for f in self.scopes:
                    if f.kind == "def" and f.fixture and f is not s and \
                            f.name == p and self.seeded(f, depth + 1):
                        yes = True
                        break
                if yes:
                    break
        p = s.parent
        while not yes and p is not None:
            if p.kind == "class":
                yes = p.seeds or self.hooks_seed(p, depth)
            p = p.parent
        if not yes and not s.fixture:
            yes = self.hooks_seed(None, depth)
        s.resolved = 2 if yes else 1
        return yes

    def visit(self, node, scopes, in_cond):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # Decorators, defaults and annotations run in the outer scope.
            for d in node.decorator_list:
                self.visit(d, scopes, in_cond)
            self.visit(node.args, scopes, in_cond)
            if node.returns is not None:
                self.visit(node.returns, scopes, in_cond)
            scope = Scope("def", node, scopes[-1] if scopes else None)
            self.scopes.append(scope)
            inner = scopes + [scope]
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
            scope = Scope("class", node, scopes[-1] if scopes else None)
            self.scopes.append(scope)
            inner = scopes + [scope]
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
            if seeds(node):
                self.mark_seeds(scopes)
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
    tests = bool(argv) and argv[0] == "--tests"
    if tests:
        argv = argv[1:]
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
        if tests:
            for t in s.scopes:
                if t.kind != "def" or not t.name.startswith("test"):
                    continue
                classes, p = [], t.parent
                while p is not None:
                    if p.kind == "class":
                        classes.append(p.name)
                    p = p.parent
                out.write("%s\t%d\t%s\t%s\t%d\t%d\n" % (
                    path, t.line, ".".join(reversed(classes)), t.name,
                    s.seeded(t), t.nfindings))
            continue
        s.rows.sort()
        for line, cat, classes, func in s.rows:
            out.write("%s\t%d\t%s\t%s\t%s\n" % (path, line, cat, classes, func))
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
