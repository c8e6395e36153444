"""Help for every command from the command table, and the one-line usage
errors of the shared option parser."""
import pytest

from conftest import run


def commands():
    """The commands `flakyctl help` lists, in its order."""
    p = run(["help"])
    assert p.returncode == 0, p
    lines = p.stdout.split("commands:\n")[1].split("\n\n")[0]
    return [line.split()[0] for line in lines.splitlines()]


def test_help_lists_the_table(table):
    listed = commands()
    assert listed == [c for c in table if c != "global"]
    for name in ("analyze", "report", "quarantine", "help"):
        assert name in listed
    # --help before any command is the same list
    p = run(["--help"])
    assert p.returncode == 0 and p.stdout == run(["help"]).stdout


@pytest.mark.parametrize("cmd", commands())
def test_command_help(cmd, table):
    p = run([cmd, "--help"])
    assert p.returncode == 0, p
    assert p.stderr == ""
    assert p.stdout.startswith("usage: flakyctl %s" % cmd), p.stdout
    # the same text three ways
    assert run(["help", cmd]).stdout == p.stdout
    assert run([cmd, "-h"]).stdout == p.stdout
    for name, letter, arg in table[cmd]:
        words = "--%s %s" % (name, arg) if arg else "--%s" % name
        if letter:
            assert "-%s, %s" % (letter, words) in p.stdout, name
        else:
            assert "    %s" % words in p.stdout, name
    for name, _, _ in table["global"]:
        if cmd != "help" and not any(o[0] == name for o in table[cmd]):
            assert "--%s" % name in p.stdout, name
    assert max(len(line) for line in p.stdout.splitlines()) <= 80


def test_help_errors():
    p = run(["help", "nosuch"])
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.splitlines()[0] == "flakyctl help: unknown command 'nosuch'"
    p = run(["nosuch"])
    assert p.returncode == 2 and "unknown command 'nosuch'" in p.stderr


def operands(cmd):
    """What comes before the options: quarantine's and token's
    subcommand."""
    return ["list"] if cmd in ("quarantine", "token") else []


@pytest.mark.parametrize("cmd", [c for c in commands() if c != "help"])
def test_unknown_option(cmd, tmp_path):
    db = tmp_path / "x.db"
    p = run([cmd] + operands(cmd) + ["--db", str(db), "--bogus"],
            cwd=tmp_path)
    assert p.returncode == 2, p
    # one line from us (none from getopt), then the usage
    lines = p.stderr.splitlines()
    assert len(lines) == 2, p.stderr
    assert lines[0] == "flakyctl %s: unknown option '--bogus'" % cmd
    assert lines[1].startswith("usage: flakyctl %s" % cmd)
    assert not db.exists()


@pytest.mark.parametrize("cmd", [c for c in commands() if c != "help"])
def test_missing_value(cmd, table, tmp_path):
    # the command's first option with a value, else a global one
    wanted = [n for n, _, arg in table[cmd] if arg]
    name = wanted[0] if wanted else "db"
    p = run([cmd] + operands(cmd) + ["--%s" % name], cwd=tmp_path)
    assert p.returncode == 2, p
    lines = p.stderr.splitlines()
    assert len(lines) == 2, p.stderr
    assert lines[0].startswith("flakyctl %s: option '--%s' needs a value"
                               % (cmd, name)), lines
    assert lines[1].startswith("usage: flakyctl %s" % cmd)


def test_ambiguous_and_valueless(tmp_path):
    p = run(["report", "--s", "1d"], cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.splitlines()[0] == \
        "flakyctl report: option '--s' is ambiguous: --since, --sort, --socket"
    p = run(["show", "--full=yes", "x"], cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.splitlines()[0] == \
        "flakyctl show: option '--full' takes no value"
    p = run(["report", "-x"], cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.splitlines()[0] == "flakyctl report: unknown option '-x'"


def test_analyze_help_is_the_commands_after_a_word(tmp_path):
    # after the command's first word, --help is the command's own
    p = run(["analyze", "--db", str(tmp_path / "a.db"), "--runs", "1", "--",
             "/bin/sh", "-c", "echo ok", "--help"], cwd=tmp_path)
    assert "usage: flakyctl analyze" not in p.stdout + p.stderr


@pytest.mark.parametrize("cmd", ["report", "gate", "metrics", "triage"])
def test_kind_is_taken_by_the_parser(cmd, tmp_path):
    # --kind is in these commands' tables, and its value is checked once
    p = run([cmd, "--db", str(tmp_path / "k.db"), "--kind", "bogus"],
            cwd=tmp_path)
    assert p.returncode == 2
    assert "--kind: expected suite, alone, ingested or all" in p.stderr
    p = run(["show", "--kind", "all", "x"], cwd=tmp_path)
    assert p.returncode == 2 and "unknown option '--kind'" in p.stderr


def test_quarantine_takes_its_own_format(tmp_path):
    # export's --format is quarantine's own; a bad one is export's error
    p = run(["quarantine", "export", "--db", str(tmp_path / "q.db"),
             "--format", "xml"], cwd=tmp_path)
    assert p.returncode == 2
    assert "export: expected --format pytest, jest, go or plain, got 'xml'" \
        in p.stderr


def test_kind_after_the_command_counts(tmp_path):
    # --kind after the command reaches the query, as before it does
    import json
    (tmp_path / "test_k.py").write_text("def test_a():\n    pass\n")
    db = str(tmp_path / "k.db")
    p = run(["--db", db, "analyze", "--runs", "2", "--", "/usr/bin/python3",
             "-m", "pytest", "-q", "test_k.py"], cwd=tmp_path)
    assert p.returncode == 0, p
    for args in (["--kind", "alone", "report"], ["report", "--kind", "alone"]):
        p = run(["--db", db, "--format", "json"] + args)
        assert p.returncode == 0, p
        assert json.loads(p.stdout)["runs"]["total"] == 0
    p = run(["--db", db, "report", "--format", "json", "--kind", "suite"])
    assert json.loads(p.stdout)["runs"]["total"] == 2


@pytest.mark.parametrize("cmd", commands())
def test_synopsis_names_every_option(cmd, table):
    # the one-line synopsis of usage errors lists what the table has
    usage = run([cmd, "--help"]).stdout.split("\n\n")[0]
    for name, _, _ in table[cmd]:
        assert "--%s" % name in usage, name


def test_unknown_letter_in_a_cluster(tmp_path):
    # "-fx" after a long option: the error names -x, not the long option
    p = run(["show", "--full", "-fx", "t"], cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.splitlines()[0] == "flakyctl show: unknown option '-x'"
    p = run(["show", "--full", "-xf", "t"], cwd=tmp_path)
    assert p.stderr.splitlines()[0] == "flakyctl show: unknown option '-x'"


def option_help(text, name):
    """The help of --name in a --help text, its wrapped lines joined."""
    lines = text.split("\n\n", 2)[2].splitlines()  # after the synopsis
    for i, line in enumerate(lines):
        if ("--%s " % name) in line + " " and line.startswith("  "):
            words = [line.split("  ", 2)[-1].strip()]
            for more in lines[i + 1:]:
                if not more.startswith(" " * 10) or more.strip()[:1] == "-":
                    break
                words.append(more.strip())
            return " ".join(words)
    return None


@pytest.mark.parametrize("cmd", commands())
def test_every_value_has_its_default(cmd, table):
    # an option that takes a value says what happens without it
    text = run([cmd, "--help"]).stdout
    for name, _, arg in table[cmd] + table["global"]:
        if arg is None:
            continue
        h = option_help(text, name)
        assert h is not None, name
        assert "default" in h or "required" in h, (cmd, name, h)


@pytest.mark.parametrize("cmd", commands())
def test_every_command_has_an_example(cmd):
    text = run([cmd, "--help"]).stdout
    assert "\nexample" in text, cmd
    ex = text.split("\nexample")[1].splitlines()[1:]
    assert ex and all(line.startswith("  flakyctl ") for line in ex), ex
    # the example's own options are the command's
    p = run(["help", "--all-options"]).stdout
    for line in ex:
        for word in line.split():
            if word.startswith("--") and word != "--":
                assert "\t%s\t" % word in p, (cmd, word)


@pytest.mark.parametrize("typo,meant", [("reprot", "report"),
                                        ("triag", "triage"),
                                        ("quarantin", "quarantine"),
                                        ("stauts", "status"),
                                        ("relaod", "reload")])
def test_did_you_mean_a_command(typo, meant, tmp_path):
    p = run([typo], cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.splitlines() == [
        "flakyctl: unknown command '%s'; did you mean '%s'?" % (typo, meant)]
    p = run(["help", typo], cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.splitlines()[0] == "flakyctl help: unknown command " \
        "'%s'; did you mean '%s'?" % (typo, meant)


def test_no_guess_for_a_word_far_from_every_command(tmp_path):
    p = run(["xyzzy"], cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.splitlines()[0] == "flakyctl: unknown command 'xyzzy'"
    assert "commands:" in p.stderr


@pytest.mark.parametrize("args,typo,meant", [
    (["report"], "--sinse", "--since"),
    (["gate"], "--max-critcal", "--max-critical"),
    (["analyze"], "--rusn", "--runs"),
    (["report"], "--formt", "--format"),
    (["quarantine", "list"], "--relase-after", "--release-after"),
])
def test_did_you_mean_an_option(args, typo, meant, tmp_path):
    db = tmp_path / "x.db"
    p = run(args + ["--db", str(db), typo + "=1"], cwd=tmp_path)
    assert p.returncode == 2, p
    lines = p.stderr.splitlines()
    assert lines[0] == "flakyctl %s: unknown option '%s'; did you mean " \
        "'%s'?" % (args[0], typo, meant), lines
    assert lines[1].startswith("usage: flakyctl %s" % args[0])
    assert not db.exists()


def test_top_level_usage_names_every_global_option(table):
    head = run(["help"]).stdout.split("commands:")[0]
    for name, _, _ in table["global"]:
        assert "[--%s " % name in head, name
