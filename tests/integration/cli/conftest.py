"""The command table as flakyctl prints it: `help --all-options`."""
import os
import subprocess

import pytest

FLAKYCTL = os.path.abspath(os.environ["FLAKYCTL"])
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))


def run(args, **kw):
    """flakyctl with args, its output as text, never through a shell."""
    return subprocess.run([FLAKYCTL] + args, capture_output=True, text=True,
                          timeout=30, **kw)


@pytest.fixture(scope="session")
def table():
    """{command: [(long name, short letter or None, argument or None)]},
    "global" included, in the table's order."""
    p = run(["help", "--all-options"])
    assert p.returncode == 0, p
    t = {}
    for line in p.stdout.splitlines():
        words = line.split("\t")
        opts = t.setdefault(words[0], [])
        if len(words) > 1:
            name, letter, arg = words[1:]
            assert name.startswith("--") and letter.startswith("-"), line
            opts.append((name[2:], letter[1:] or None,
                         None if arg == "-" else arg))
    return t
