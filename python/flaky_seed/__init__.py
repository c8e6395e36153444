"""flaky's seed sweep hook (issue 34; docs/runners.md, "Seed sweeps").

flakyctl puts this directory on PYTHONPATH for the runs of a seed sweep
only (`analyze --perturb seed`, a target's `perturb: [seed]`), with:

  FLAKY_SEED=N          the run's seed: Python's random, NumPy's global
                        generator and PyTorch's (when imported) are seeded
                        with N before each test; PYTHONHASHSEED is N too
  FLAKY_HEADROOM=FILE   where the margins of approximate assertions go
                        (flaky_seed.headroom); a name without a slash is a
                        file in $TMPDIR; unset: nothing is recorded
  FLAKY_SEED_IDS=F=ID   the parameters of these fixtures keep the id ID
                        whatever value the project's seed variable gives
                        them (scikit-learn's global_random_seed=42)

Nothing here changes what a test does besides the seeds: every wrapper
calls the original and returns what it returns, and a failure of our own
is swallowed. pytest loads flaky_seed.pytest_plugin (PYTEST_PLUGINS);
`python -m unittest` and other Python programs get the unittest hook from
the sitecustomize.py beside this package.
"""
import os
import sys

__all__ = ["activate", "seed", "seed_all"]

_seed = None
_active = False
# Set by the pytest plugin: pytest seeds in its setup, not TestCase.run.
pytest_owns_tests = False


def seed():
    """The run's seed (an int), or None when FLAKY_SEED is unset or bad."""
    return _seed


def _parse_seed(text):
    """FLAKY_SEED as an int from 0 to 2**32-1 (what NumPy's legacy seeding
    and PYTHONHASHSEED take), or None."""
    try:
        value = int(text, 10)
    except (TypeError, ValueError):
        return None
    if value < 0 or value > 0xFFFFFFFF:
        return None
    return value


def seed_all():
    """Seed random, NumPy's global generator and PyTorch's with the run's
    seed: called before each test."""
    if _seed is None:
        return
    import random
    random.seed(_seed)
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            np.random.seed(_seed)
        except Exception:
            pass
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "manual_seed"):
        try:
            torch.manual_seed(_seed)
        except Exception:
            pass


def _numpy_imported(module):
    """numpy was imported after the test began: seed it now, so that a
    test importing NumPy lazily draws from the seed too."""
    if _seed is not None:
        try:
            module.random.seed(_seed)
        except Exception:
            pass
    from . import headroom
    headroom.patch_numpy(module)


def _numpy_testing_imported(module):
    from . import headroom
    headroom.patch_numpy_testing(module)


def _unittest_imported(module):
    from . import unittest_hook
    unittest_hook.patch(module)


# Modules to patch as soon as they are imported: before any other module
# can bind their functions by name (from numpy.testing import ...).
_HOOKS = {
    "numpy": _numpy_imported,
    "numpy.testing": _numpy_testing_imported,
    "unittest.case": _unittest_imported,
}


class _PostImport:
    """A finder that runs a hook right after one of _HOOKS is executed.
    It finds nothing itself: it asks the finders after it and wraps the
    loader's exec_module of what they found."""

    def __init__(self):
        self.busy = set()

    def find_spec(self, name, path=None, target=None):
        if name not in _HOOKS or name in self.busy:
            return None
        self.busy.add(name)
        try:
            import importlib.util
            spec = importlib.util.find_spec(name)
        except Exception:
            spec = None
        finally:
            self.busy.discard(name)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return None
        exec_module = loader.exec_module
        hook = _HOOKS[name]

        def exec_and_patch(module):
            exec_module(module)
            try:
                hook(module)
            except Exception:
                pass
        try:
            loader.exec_module = exec_and_patch
        except Exception:
            return None
        return spec

    def invalidate_caches(self):
        pass


def activate():
    """Seed sweeps on, once, when FLAKY_SEED holds a seed: the modules of
    _HOOKS patched now or when imported, math.isclose wrapped."""
    global _seed, _active
    if _active:
        return True
    _seed = _parse_seed(os.environ.get("FLAKY_SEED"))
    if _seed is None:
        return False
    _active = True
    from . import headroom
    headroom.configure(os.environ.get("FLAKY_HEADROOM"))
    headroom.patch_math()
    sys.meta_path.insert(0, _PostImport())
    for name, hook in _HOOKS.items():
        module = sys.modules.get(name)
        if module is not None:
            try:
                hook(module)
            except Exception:
                pass
    return True
