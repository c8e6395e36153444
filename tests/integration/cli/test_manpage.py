"""docs/flakyctl.1 names every option of the command table: a global
option in the SYNOPSIS or DESCRIPTION, a command's option in that
command's item of COMMANDS."""
import os
import re

from conftest import SOURCE

MAN = os.path.join(SOURCE, "docs", "flakyctl.1")


def sections():
    """The page's text before COMMANDS, and each command's item."""
    with open(MAN) as f:
        lines = f.read().splitlines()
    start = lines.index(".Sh COMMANDS")
    head = "\n".join(lines[:start])
    items, name, depth = {}, None, 0
    for i, line in enumerate(lines[start + 1:], start + 1):
        if line.startswith(".Sh"):
            break
        if line.startswith(".Bl"):
            depth += 1
        elif line.startswith(".El"):
            depth -= 1
            if depth == 0:
                name = None
        elif line.startswith(".It") and depth == 1:
            # ".It Cm status ..." or ".It Xo" then ".Cm analyze"
            text = line if "Cm " in line else lines[i + 1]
            name = re.search(r"Cm (\S+)", text).group(1)
            items.setdefault(name, "")  # quarantine has one per subcommand
        if name is not None:
            items[name] += line + "\n"
    return head, items


def named(text, option):
    """Does mdoc text name --option (".Fl -option", not a longer one)?"""
    return re.search(r"Fl -%s(?![\w-])" % re.escape(option), text)


def test_every_option_is_in_the_man_page(table):
    head, items = sections()
    missing = []
    for cmd, opts in sorted(table.items()):
        if cmd == "help":
            continue
        if cmd == "global":
            missing += ["global --%s" % o for o, _, _ in opts
                        if not named(head, o)]
            continue
        if cmd not in items:
            missing.append("%s (no item in COMMANDS)" % cmd)
            continue
        missing += ["%s --%s" % (cmd, o) for o, _, _ in opts
                    if not named(items[cmd], o)]
    assert not missing, "docs/flakyctl.1 does not name: " + ", ".join(missing)


def test_the_page_names_no_command_the_table_lacks(table):
    _, items = sections()
    assert sorted(set(items) - set(table)) == []
