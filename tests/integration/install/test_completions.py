"""The bash and zsh completions offer every command and every option of
every command, as `flakyctl help` lists them: the completion functions are
run as the shells run them, with flakyctl first in PATH."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import FLAKYCTL, SOURCE, ctl

COMPLETIONS = os.path.join(SOURCE, "contrib", "completions")


def table():
    """{command: [--long options]} from `flakyctl help --all-options`, the
    table the man page test reads too; "global" for the global options."""
    p = ctl(["help", "--all-options"])
    assert p.returncode == 0, p
    t = {}
    for line in p.stdout.splitlines():
        words = line.split("\t")
        t.setdefault(words[0], [])
        if len(words) > 1:
            t[words[0]].append(words[1])
    return t


def commands():
    """Every command, each named in the top-level help too."""
    names = [c for c in table() if c != "global"]
    assert "init" in names and "analyze" in names and "help" in names
    p = ctl(["help"])
    assert p.returncode == 0, p
    for c in names:
        assert re.search(r"^\s+%s\s" % re.escape(c), p.stdout, re.M), c
    return names


def options(cmd):
    """A command's long options, the global ones included, each also in
    its help."""
    t = table()
    opts = t[cmd] + t["global"]
    p = ctl(["help", cmd])
    assert p.returncode == 0, p
    for o in opts:
        assert re.search(r"%s(?![\w-])" % re.escape(o), p.stdout), (cmd, o)
    return opts


def env():
    return dict(os.environ, PATH=os.path.dirname(FLAKYCTL) + ":" +
                os.environ.get("PATH", "/usr/bin:/bin"))


def bash_complete(words):
    """COMPREPLY for the line `words`, the last word being completed."""
    script = ('source "$1"; shift; COMP_WORDS=("$@"); '
              'COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _flakyctl; '
              'printf "%s\\n" "${COMPREPLY[@]}"')
    p = subprocess.run(["bash", "-c", script, "bash",
                        os.path.join(COMPLETIONS, "flakyctl.bash")] + words,
                       capture_output=True, text=True, env=env(),
                       timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def zsh_complete(words):
    """What _flakyctl hands compadd for `words`; compadd and the other
    completion builtins are stubs printing what they are given."""
    script = r'''
        compadd() { [[ $1 == -a ]] && print -l -- ${(P)2} }
        _files() { print -- FILES }
        _directories() { print -- DIRECTORIES }
        _values() { shift; print -l -- $@ }
        _message() { print -- MESSAGE }
        source $1; shift
        words=("$@"); CURRENT=$#words; PREFIX=$words[CURRENT]
        _flakyctl
    '''
    p = subprocess.run(["zsh", "-f", "-c", script, "zsh",
                        os.path.join(COMPLETIONS, "_flakyctl")] + words,
                       capture_output=True, text=True, env=env(),
                       timeout=30)
    assert p.returncode == 0, p.stderr
    return [w for w in p.stdout.split() if w.startswith(words[-1])]


SHELLS = [pytest.param(bash_complete, id="bash"),
          pytest.param(zsh_complete, id="zsh", marks=pytest.mark.skipif(
              shutil.which("zsh") is None, reason="zsh is not installed"))]


@pytest.mark.parametrize("complete", SHELLS)
def test_every_command(complete):
    assert sorted(complete(["flakyctl", ""])) == sorted(commands())
    assert complete(["flakyctl", "--db", "x.db", "ini"]) == ["init"]


@pytest.mark.parametrize("complete", SHELLS)
def test_every_option(complete):
    for cmd in commands():
        offered = set(complete(["flakyctl", cmd, "--"]))
        missing = set(options(cmd)) - offered
        assert not missing, (cmd, missing)
        assert "--help" in offered


@pytest.mark.parametrize("complete", SHELLS)
def test_values(complete):
    assert complete(["flakyctl", "--format", "js"]) == ["json"]
    assert complete(["flakyctl", "--format", "gi"]) == ["github"]
    assert complete(["flakyctl", "help", "ana"]) == ["analyze"]
