"""Tolerance headroom (issue 34): how much of its bound each approximate
assertion used, recorded per call site without changing any outcome.

Each wrapper computes the margin of the call from its arguments, records
it, then calls the original and returns (or raises) what it does. An
observation belongs to the current test (begin/end) and to the line of the
test's own file that made the call: frames of NumPy, unittest, pytest and
assertion helpers of other modules (functions named assert*) are passed
over; a call from anywhere else (library code calling np.isclose) is not
an assertion of the test and is not recorded.

One line per test and call site, appended to the FLAKY_HEADROOM file when
the test ends (tab-separated, \\t \\n \\\\ escaped; docs/runners.md):

  test  file  line  kind  quantity  bound  calls  abs_err  rel_err  detail  function

kind "tol": quantity is the share of the tolerance used, |actual -
desired| / (atol + rtol * |desired|) at its largest over the elements
(NumPy's rule; each function's own below), failing past 1; bound is 1.
kind "lt", "le", "gt", "ge": `quantity OP bound` must hold (x > 0.9 is
quantity x, bound 0.9). The worst call of the test at the site is kept.
"""
import math
import os
import sys
import threading

from . import sites

_path = None
_state = threading.local()
_files = {}
_SKIP = ("numpy", "torch", "unittest", "_pytest", "pytest", "pluggy",
         "flaky_seed")


def configure(value):
    """FLAKY_HEADROOM: a path, or a name in $TMPDIR (read now, before a
    test can change the environment). None or "": nothing is recorded."""
    global _path
    if not value:
        _path = None
    elif "/" in value:
        _path = value
    else:
        _path = os.path.join(os.environ.get("TMPDIR") or "/tmp", value)


def _real(path):
    r = _files.get(path)
    if r is None:
        try:
            r = os.path.realpath(path)
        except Exception:
            r = path
        _files[path] = r
    return r


def begin(test, path):
    """A test starts: its id as the runner names it, and its file."""
    _state.test = test
    _state.file = _real(path) if path else None
    _state.sites = {}
    _state.depth = 0


def end():
    """The test ended: its observations go to the file, one write."""
    sites = getattr(_state, "sites", None)
    test = getattr(_state, "test", None)
    _state.test = None
    _state.sites = None
    if not sites or _path is None or test is None:
        return
    lines = []
    for (file, line, kind), o in sites.items():
        lines.append("\t".join((
            _esc(test), _esc(file), str(line), kind, repr(o[0]),
            repr(o[1]), str(o[2]), _num(o[3]), _num(o[4]), _esc(o[5]),
            o[6])) + "\n")
    try:
        fd = os.open(_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, "".join(lines).encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:
        pass


def _esc(s):
    return (str(s).replace("\\", "\\\\").replace("\t", "\\t")
            .replace("\n", "\\n"))


def _num(x):
    return "" if x is None else repr(float(x))


def _site():
    """The (file, line) of the test's own code that made the call, or
    None."""
    want = getattr(_state, "file", None)
    if want is None:
        return None
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if fn == want or _real(fn) == want:
            return fn, f.f_lineno
        top = f.f_globals.get("__name__", "").split(".")[0]
        name = f.f_code.co_name
        if top not in _SKIP and not name.startswith(("assert", "_assert")):
            return None
        f = f.f_back
    return None


def _worse(kind, new, old):
    if kind == "tol":
        return new[0] > old[0]
    if kind in ("gt", "ge"):
        return new[0] - new[1] < old[0] - old[1]
    return new[1] - new[0] < old[1] - old[0]


def record(kind, quantity, bound, abs_err, rel_err, detail, function,
           need="call"):
    """One call's margin for the current test, at the site that made it.
    need "assert": only when the call is what an assert statement asserts
    (isclose, approx: `assert not np.isclose(...)` is no bound); "call":
    unless a `with pytest.raises(...)` expects it to fail."""
    if getattr(_state, "sites", None) is None or _state.depth > 1:
        return
    if quantity is None or isinstance(quantity, bool):
        return
    try:
        q = float(quantity)
        b = float(bound)
    except Exception:
        return
    if math.isnan(q) or math.isnan(b):
        return
    site = _site()
    if site is None or not sites.asserted(site[0], site[1], need):
        return
    key = (site[0], site[1], kind)
    new = [q, b, 1, abs_err, rel_err, detail, function]
    old = _state.sites.get(key)
    if old is None:
        _state.sites[key] = new
        return
    new[2] = old[2] + 1
    if _worse(kind, new, old):
        _state.sites[key] = new
    else:
        old[2] = new[2]


class _Depth:
    """Only the outermost wrapped call records: assert_almost_equal of
    arrays calls assert_array_almost_equal, one assertion."""

    def __enter__(self):
        _state.depth = getattr(_state, "depth", 0) + 1
        return _state.depth == 1

    def __exit__(self, *exc):
        _state.depth -= 1
        return False


def _wrap(orig, measure, function, need="call"):
    """orig, with measure(*args, **kwargs) -> (kind, q, b, abs, rel,
    detail) recorded before it runs."""
    def wrapper(*args, **kwargs):
        with _Depth() as outer:
            if outer and getattr(_state, "sites", None) is not None:
                try:
                    m = measure(*args, **kwargs)
                    if m is not None:
                        _state.depth = 1
                        record(*m, function, need)
                except Exception:
                    pass
            return orig(*args, **kwargs)
    wrapper.__wrapped__ = orig
    for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(wrapper, attr, getattr(orig, attr))
        except Exception:
            pass
    wrapper._flaky_seed = True
    return wrapper


def _g(x):
    return "%g" % x if isinstance(x, (int, float)) else str(x)


def _tol_used(actual, desired, rtol, atol):
    """The largest share of NumPy's tolerance atol + rtol * |desired| used
    over the elements, with the absolute and relative error there; equal
    non-finite values (nan and nan, inf and inf) use none, a mismatched
    one all of it and more (inf)."""
    import numpy as np
    a = np.asarray(actual)
    d = np.asarray(desired)
    if a.dtype.kind not in "biufc" or d.dtype.kind not in "biufc":
        return None
    a, d = np.broadcast_arrays(a, d)
    if a.size == 0:
        return None
    with np.errstate(all="ignore"):
        a = a.astype(np.complex128 if "c" in a.dtype.kind + d.dtype.kind
                     else np.float64)
        d = d.astype(a.dtype)
        diff = np.abs(a - d)
        allowed = atol + rtol * np.abs(d)
        same = (a == d) | (np.isnan(a) & np.isnan(d))
        used = np.where(same, 0.0,
                        np.where(allowed > 0, diff / allowed, np.inf))
        used = np.where(np.isnan(used), np.inf, used)
        i = int(np.argmax(used))
        u = float(used.flat[i])
        ad = float(diff.flat[i]) if np.isfinite(diff.flat[i]) else None
        den = abs(complex(d.flat[i]))
        rel = ad / den if ad is not None and den > 0 else None
    return u, ad, rel


def _m_allclose(actual, desired, rtol=1e-7, atol=0, *args, **kwargs):
    r = _tol_used(actual, desired, rtol, atol)
    if r is None:
        return None
    return ("tol", r[0], 1.0, r[1], r[2],
            "rtol=%s, atol=%s" % (_g(rtol), _g(atol)))


def _m_decimal(actual, desired, decimal=7, *args, **kwargs):
    # abs(desired - actual) < 1.5 * 10**(-decimal)
    r = _tol_used(actual, desired, 0.0, 1.5 * 10.0 ** (-decimal))
    if r is None:
        return None
    return ("tol", r[0], 1.0, r[1], r[2], "decimal=%s" % _g(decimal))


def _m_array_decimal(x, y, decimal=6, *args, **kwargs):
    return _m_decimal(x, y, decimal)


def _m_isclose(a, b, rtol=1e-05, atol=1e-08, *args, **kwargs):
    r = _tol_used(a, b, rtol, atol)
    if r is None:
        return None
    return ("tol", r[0], 1.0, r[1], r[2],
            "rtol=%s, atol=%s" % (_g(rtol), _g(atol)))


def _m_math_isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0):
    a = float(a)
    b = float(b)
    if a == b:
        return ("tol", 0.0, 1.0, 0.0, 0.0,
                "rel_tol=%s, abs_tol=%s" % (_g(rel_tol), _g(abs_tol)))
    diff = abs(a - b)
    tol = max(rel_tol * max(abs(a), abs(b)), abs_tol)
    used = diff / tol if tol > 0 else math.inf
    return ("tol", used, 1.0, diff, diff / abs(b) if b else None,
            "rel_tol=%s, abs_tol=%s" % (_g(rel_tol), _g(abs_tol)))


def patch_math():
    """math.isclose, for `assert math.isclose(a, b)`."""
    if not getattr(math.isclose, "_flaky_seed", False):
        math.isclose = _wrap(math.isclose, _m_math_isclose, "isclose",
                             "assert")


def patch_numpy(np):
    """np.isclose and np.allclose of the numpy namespace (NumPy's own code
    calls them through numpy.core.numeric, unwrapped)."""
    for name in ("isclose", "allclose"):
        f = getattr(np, name, None)
        if f is not None and not getattr(f, "_flaky_seed", False):
            setattr(np, name, _wrap(f, _m_isclose, name, "assert"))


_TESTING = {
    "assert_allclose": _m_allclose,
    "assert_almost_equal": _m_decimal,
    "assert_array_almost_equal": _m_array_decimal,
}


def patch_numpy_testing(module):
    """numpy.testing's assertions, in the package and where they are
    defined, before anything binds them by name."""
    mods = [module]
    private = sys.modules.get("numpy.testing._private.utils")
    if private is not None:
        mods.append(private)
    for name, measure in _TESTING.items():
        for m in mods:
            f = getattr(m, name, None)
            if f is not None and not getattr(f, "_flaky_seed", False):
                setattr(m, name, _wrap(f, measure, name))


def compare(kind, quantity, bound, function="compare", need="call"):
    """A comparison of the test (assert x > 0.9, assertGreater):
    quantity kind bound must hold."""
    if getattr(_state, "sites", None) is None:
        return
    if isinstance(quantity, bool) or isinstance(bound, bool):
        return
    try:
        q = float(quantity)
        b = float(bound)
    except Exception:
        return
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        record(kind, q, b, None, None, "", function, need)
    finally:
        _state.depth -= 1
