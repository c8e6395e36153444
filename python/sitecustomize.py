"""flaky's seed sweeps (docs/runners.md, "Seed sweeps"): this directory is
on PYTHONPATH only for the runs of a sweep. The sitecustomize it hides
(Debian's, a project's) runs first, as it would have; then, when
FLAKY_SEED is set, flaky_seed hooks unittest's TestCase and the
approximate assertions as they are imported."""
import os
import sys


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        import importlib.machinery
        import importlib.util
        path = [p for p in sys.path
                if os.path.abspath(p or os.curdir) != here]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception:
        import traceback
        traceback.print_exc()


_chain()
if os.environ.get("FLAKY_SEED"):
    try:
        import flaky_seed
        flaky_seed.activate()
    except Exception:
        pass
