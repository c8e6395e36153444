"""Starting out and installing: flakyctl init, flakyd without a config,
the completions. FLAKYCTL and FLAKYD are the built programs."""
import os
import shutil
import subprocess

import pytest

FLAKYCTL = os.path.abspath(os.environ["FLAKYCTL"])
FLAKYD = os.path.abspath(os.environ["FLAKYD"])
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
EXAMPLES = os.path.join(SOURCE, "examples")


def run(prog, args, **kw):
    """A program with args, its output as text, never through a shell."""
    kw.setdefault("timeout", 60)
    return subprocess.run([prog] + args, capture_output=True, text=True,
                          **kw)


def ctl(args, **kw):
    return run(FLAKYCTL, args, **kw)


def flakyd(args, **kw):
    return run(FLAKYD, args, **kw)


@pytest.fixture
def demo(tmp_path):
    """A copy of an examples/ demo project under tmp_path (the source tree
    is never written); Jest's node_modules is linked, not copied."""
    def copy(name):
        src = os.path.join(EXAMPLES, name)
        dst = tmp_path / name
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns(
            "node_modules", "__pycache__", ".pytest_cache"))
        nm = os.path.join(src, "node_modules")
        if os.path.isdir(nm):
            os.symlink(os.path.realpath(nm), dst / "node_modules")
        return dst
    return copy
