"""pytest's side of the seed sweep (PYTEST_PLUGINS=flaky_seed.pytest_plugin).

- Before each test's setup (its fixtures included): random, NumPy and
  PyTorch seeded with FLAKY_SEED.
- A project's seed fixture (FLAKY_SEED_IDS, scikit-learn's
  global_random_seed) keeps its usual parameter id whatever value the
  project's seed variable gives it, so a test has one id across seeds.
- The margins of approximate assertions: pytest.approx's comparisons, and
  `assert x > 0.9`: the assert statements whose test is one ordering
  comparison get, in the code pytest's assertion rewriting makes, a call
  that records both operands before they are compared (the explanation of
  a failure is pytest's own, unchanged). Those rewritten modules are
  cached under their own name (PYC_TAIL), apart from pytest's.
"""
import ast
import os

import pytest

import flaky_seed
from flaky_seed import headroom

_ORDER = {ast.Gt: "gt", ast.GtE: "ge", ast.Lt: "lt", ast.LtE: "le"}
_FLIP = {"gt": "lt", "ge": "le", "lt": "gt", "le": "ge"}


def _seed_ids():
    """FLAKY_SEED_IDS "fixture=id,...": the ids to keep."""
    ids = {}
    for part in (os.environ.get("FLAKY_SEED_IDS") or "").split(","):
        name, sep, value = part.partition("=")
        if sep and name:
            ids[name.strip()] = value.strip()
    return ids


_KEEP_IDS = _seed_ids()


def _constant(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op,
                                                    (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and \
        isinstance(node.value, (int, float)) and \
        not isinstance(node.value, bool)


def _comparisons(mod):
    """line -> (kind, bound on the left) of the asserts whose test is one
    ordering comparison. The bound is the right operand, unless only the
    left one is a number written out (0.9 < x)."""
    found = {}
    for node in ast.walk(mod):
        if isinstance(node, ast.Assert) and \
                isinstance(node.test, ast.Compare) and \
                len(node.test.ops) == 1 and \
                type(node.test.ops[0]) in _ORDER:
            t = node.test
            swap = _constant(t.left) and not _constant(t.comparators[0])
            found[node.lineno] = (_ORDER[type(t.ops[0])], swap)
    return found


def _instrument(mod, found):
    """Before the statement of rewritten code that computes the compare of
    each such assert (the last `@py_assertN = A op B` on its line), a call
    of @pytest_ar._flaky_cmp(A, B, kind, swap)."""
    for node in ast.walk(mod):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            last = {}
            for i, s in enumerate(stmts):
                if isinstance(s, ast.Assign) and len(s.targets) == 1 and \
                        isinstance(s.targets[0], ast.Name) and \
                        s.targets[0].id.startswith("@py_assert") and \
                        isinstance(s.value, ast.Compare) and \
                        len(s.value.ops) == 1 and \
                        type(s.value.ops[0]) in _ORDER and \
                        isinstance(s.value.left, ast.Name) and \
                        isinstance(s.value.comparators[0], ast.Name) and \
                        s.lineno in found:
                    last[s.lineno] = i
            for line, i in sorted(last.items(), key=lambda x: -x[1]):
                c = stmts[i].value
                kind, swap = found[line]
                call = ast.Expr(ast.Call(
                    ast.Attribute(ast.Name("@pytest_ar", ast.Load()),
                                  "_flaky_cmp", ast.Load()),
                    [ast.Name(c.left.id, ast.Load()),
                     ast.Name(c.comparators[0].id, ast.Load()),
                     ast.Constant(kind), ast.Constant(swap)], []))
                ast.copy_location(call, stmts[i])
                ast.fix_missing_locations(call)
                stmts.insert(i, call)


def _flaky_cmp(left, right, kind, swap):
    """Called by rewritten asserts: record `left kind right` as quantity
    and bound. Never raises."""
    try:
        if swap:
            headroom.compare(_FLIP[kind], right, left)
        else:
            headroom.compare(kind, left, right)
    except Exception:
        pass


def _patch_rewrite():
    try:
        from _pytest.assertion import rewrite
    except Exception:
        return
    orig = getattr(rewrite, "rewrite_asserts", None)
    if orig is None or getattr(orig, "_flaky_seed", False) or \
            not hasattr(rewrite, "PYC_TAIL"):
        return

    def rewrite_asserts(mod, *args, **kwargs):
        try:
            found = _comparisons(mod)
        except Exception:
            found = {}
        orig(mod, *args, **kwargs)
        if found:
            try:
                _instrument(mod, found)
            except Exception:
                pass
    rewrite_asserts._flaky_seed = True
    rewrite._flaky_cmp = _flaky_cmp
    rewrite.rewrite_asserts = rewrite_asserts
    rewrite.PYC_TAIL = rewrite.PYC_TAIL[:-4] + "-flakyseed.pyc"


def _approx_measure(self, actual):
    """ApproxScalar == actual: |expected - actual| <= tolerance."""
    tol = self.tolerance
    diff = abs(self.expected - actual)
    if self.expected == actual:
        used = 0.0
    else:
        used = diff / tol if tol > 0 else float("inf")
    rel = self.rel if self.rel is not None else \
        (None if self.abs is not None else self.DEFAULT_RELATIVE_TOLERANCE)
    absol = self.abs if self.abs is not None else \
        self.DEFAULT_ABSOLUTE_TOLERANCE
    detail = "abs=%s" % headroom._g(absol) if rel is None else \
        "rel=%s, abs=%s" % (headroom._g(rel), headroom._g(absol))
    try:
        r = float(diff) / abs(float(self.expected))
    except Exception:
        r = None
    return ("tol", float(used), 1.0, float(diff), r, detail)


def _patch_approx():
    """pytest.approx: each scalar comparison measured; a sequence, mapping
    or array keeps its worst element (one assertion)."""
    try:
        from _pytest import python_api as pa
    except Exception:
        return
    scalar = getattr(pa, "ApproxScalar", None)
    if scalar is None or getattr(scalar.__eq__, "_flaky_seed", False):
        return
    orig_eq = scalar.__eq__

    def scalar_eq(self, actual):
        try:
            agg = getattr(headroom._state, "approx", None)
            m = _approx_measure(self, actual)
            if agg is not None:
                if agg[0] is None or m[1] > agg[0][1]:
                    agg[0] = m
            else:
                headroom._state.depth = \
                    getattr(headroom._state, "depth", 0) + 1
                try:
                    headroom.record(*m, "approx", "assert")
                finally:
                    headroom._state.depth -= 1
        except Exception:
            pass
        return orig_eq(self, actual)
    scalar_eq._flaky_seed = True
    scalar.__eq__ = scalar_eq
    for cls in (getattr(pa, n, None) for n in
                ("ApproxNumpy", "ApproxMapping", "ApproxSequenceLike")):
        if cls is not None and "__eq__" in cls.__dict__:
            cls.__eq__ = _container_eq(cls.__dict__["__eq__"])


def _container_eq(orig):
    def container_eq(self, actual):
        outer = getattr(headroom._state, "approx", None) is None
        if outer:
            headroom._state.approx = [None]
        try:
            return orig(self, actual)
        finally:
            if outer:
                m = headroom._state.approx[0]
                headroom._state.approx = None
                if m is not None:
                    try:
                        headroom._state.depth = \
                            getattr(headroom._state, "depth", 0) + 1
                        try:
                            headroom.record(*m, "approx", "assert")
                        finally:
                            headroom._state.depth -= 1
                    except Exception:
                        pass
    container_eq._flaky_seed = True
    return container_eq


if flaky_seed.activate():
    flaky_seed.pytest_owns_tests = True
    _patch_rewrite()
    _patch_approx()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Seeds before any fixture of the test is set up."""
    flaky_seed.seed_all()
    try:
        headroom.begin(item.nodeid, str(getattr(item, "path", "") or
                                        item.fspath))
    except Exception:
        pass


@pytest.hookimpl(trylast=True)
def pytest_runtest_logfinish(nodeid, location):
    headroom.end()


def pytest_make_parametrize_id(config, val, argname):
    """The project's seed fixture keeps its usual id (see the module)."""
    return _KEEP_IDS.get(argname)
