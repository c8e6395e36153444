"""What the statement at a call site asserts, read once per file with
Python's ast: whether an isclose or approx call there is the bound an
assert statement holds the code to (`assert np.isclose(a, b)`, `assert x
== approx(y)`), rather than its negation or a value used otherwise, and
whether the site expects its assertion to fail (inside `with
pytest.raises(AssertionError)`, `self.assertRaises(...)`)."""
import ast

_files = {}
_RAISES = ("raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp")


def _name(node):
    """The last name of a callee: np.testing.isclose -> isclose."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _unwrap_all(node):
    """all(X), np.all(X), X.all() -> X."""
    while isinstance(node, ast.Call):
        name = _name(node.func)
        if name == "all" and isinstance(node.func, ast.Attribute) and \
                not node.args and isinstance(node.func.value, ast.Call) and \
                _name(node.func.value.func) in ("isclose", "allclose"):
            node = node.func.value
        elif name == "all" and len(node.args) == 1:
            node = node.args[0]
        else:
            break
    return node


def _positive(stmt):
    """Does the assert statement hold its test to an isclose/allclose call
    or an == comparison (approx)?"""
    if not isinstance(stmt, ast.Assert):
        return False
    test = _unwrap_all(stmt.test)
    if isinstance(test, ast.Call):
        return _name(test.func) in ("isclose", "allclose")
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and \
        isinstance(test.ops[0], ast.Eq)


def _expects_failure(withs):
    for w in withs:
        for item in w.items:
            e = item.context_expr
            if isinstance(e, ast.Call) and _name(e.func) in _RAISES:
                return True
    return False


def _index(path):
    """line -> (innermost statement, inside a raises block) of a file."""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), path)
    except Exception:
        return {}
    lines = {}

    def visit(node, withs, depth):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                end = getattr(child, "end_lineno", None) or child.lineno
                info = (child, _expects_failure(withs), depth)
                for ln in range(child.lineno, end + 1):
                    old = lines.get(ln)
                    if old is None or old[2] <= depth:
                        lines[ln] = info
                inner = withs + [child] if isinstance(
                    child, (ast.With, ast.AsyncWith)) else withs
                visit(child, inner, depth + 1)
            else:
                visit(child, withs, depth)
    visit(tree, [], 0)
    return lines


def asserted(path, line, need):
    """Is an assertion at path:line one to record (see the module)?"""
    idx = _files.get(path)
    if idx is None:
        idx = _files[path] = _index(path)
    info = idx.get(line)
    if info is None:
        return need == "call"
    stmt, raises, _ = info
    if raises:
        return False
    if need == "assert":
        return _positive(stmt)
    return True
