"""unittest's side of the seed sweep: TestCase.run seeds before each test
(setUp included) when pytest is not the runner, and the approximate
assertions of TestCase record their margins (flaky_seed.headroom), under
either runner."""
import functools
import sys

from . import headroom
import flaky_seed

# assertGreater(a, b) holds a > b: a is the quantity, b the bound.
_COMPARE = {
    "assertGreater": "gt",
    "assertGreaterEqual": "ge",
    "assertLess": "lt",
    "assertLessEqual": "le",
}


def _test_file(test):
    module = sys.modules.get(type(test).__module__)
    return getattr(module, "__file__", None)


def _wrap_run(run):
    @functools.wraps(run)
    def wrapped(self, result=None):
        if flaky_seed.pytest_owns_tests:
            return run(self, result)
        flaky_seed.seed_all()
        try:
            headroom.begin(self.id(), _test_file(self))
        except Exception:
            pass
        try:
            return run(self, result)
        finally:
            headroom.end()
    wrapped._flaky_seed = True
    return wrapped


def _almost_measure(self, first, second, places=None, msg=None,
                    delta=None):
    """assertAlmostEqual: passes when first == second, or |first - second|
    <= delta, or round(|first - second|, places) == 0 (places 7): about
    under 0.5 * 10**-places."""
    diff = abs(first - second)
    if first == second:
        used = 0.0
    elif delta is not None:
        used = diff / delta if delta > 0 else float("inf")
        return ("tol", used, 1.0, diff, _rel(diff, second),
                "delta=%s" % headroom._g(delta))
    else:
        used = diff / (0.5 * 10.0 ** -(7 if places is None else places))
    return ("tol", used, 1.0, diff, _rel(diff, second),
            "places=%s" % (7 if places is None else places))


def _rel(diff, ref):
    try:
        return diff / abs(ref) if ref else None
    except Exception:
        return None


def _wrap_compare(orig, kind, name):
    @functools.wraps(orig)
    def wrapped(self, a, b, msg=None):
        try:
            headroom.compare(kind, a, b, name)
        except Exception:
            pass
        return orig(self, a, b, msg)
    wrapped._flaky_seed = True
    return wrapped


def patch(case):
    """Patch unittest.case.TestCase (the module given), once."""
    tc = case.TestCase
    if getattr(tc.run, "_flaky_seed", False):
        return
    tc.run = _wrap_run(tc.run)
    for name, kind in _COMPARE.items():
        f = getattr(tc, name, None)
        if f is not None:
            setattr(tc, name, _wrap_compare(f, kind, name))
    for name in ("assertAlmostEqual", "assertAlmostEquals"):
        f = tc.__dict__.get(name)
        if f is not None:
            setattr(tc, name, headroom._wrap(f, _almost_measure,
                                             "assertAlmostEqual"))
