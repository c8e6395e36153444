"""The report table as a person sees it: a header row, columns aligned by
display width (›, CJK, emoji), the lines fitting an 80-column terminal
with long ids shortened in the middle, whole ids in a pipe or with
--wide, colour only on a terminal without NO_COLOR, a legend, and a
header that counts the window the rows count."""
import datetime
import json
import re

from conftest import (ESC, JS_TESTS, LONG_IDS, ctl_pty, dwidth, ingest, junit,
                      run)

TIERS = ("CRITICAL", "WARNING", "BROKEN")


def table_rows(text):
    """The header row and the rows of tests, without escapes."""
    lines = ESC.sub("", text).split("\n")
    head = [l for l in lines if l.startswith("TIER ")]
    assert len(head) == 1, text
    return head[0], [l for l in lines if l.startswith(TIERS)]


def col(line, i):
    """The display column of the character at index i."""
    return dwidth(line[:i])


def check_aligned(head, rows):
    """RATE, FAILED and 95% CI right-aligned under their heads, SIGNATURE
    left-aligned under its own, in display columns."""
    rate_end = col(head, head.index("RATE") + 4)
    ci_end = col(head, head.index("95% CI") + 6)
    sig = col(head, head.index("SIGNATURE"))
    for l in rows:
        m = re.search(r" (\d+\.\d%)  +(\d+/\d+)  +(\d+-\d+%|-)  +(\S+)", l)
        assert m, l
        assert col(l, m.end(1)) == rate_end, (l, head)
        assert col(l, m.end(3)) == ci_end, (l, head)
        assert col(l, m.start(4)) == sig, (l, head)


def test_terminal_80_columns(demo_db):
    rc, out = ctl_pty(["--db", demo_db, "report"], cols=80)
    assert rc == 0, out
    plain = ESC.sub("", out)
    for l in plain.split("\n"):
        assert dwidth(l) <= 80, (dwidth(l), l)
    head, rows = table_rows(out)
    assert head.split() == ["TIER", "TEST", "RATE", "FAILED", "95%", "CI",
                            "SIGNATURE", "TREND"]
    assert len(rows) == 6, plain
    check_aligned(head, rows)
    # long ids shortened in the middle: both ends kept
    assert "\u2026" in plain
    for start, end in (("tests/test_che", "retry]"), ("tests/test_i18",
                       "札幌]"), ("tests/test_emo", "countdown]"),
                       ("Checkout \u203a", "is cold")):
        assert any(re.search(re.escape(start) + ".*\u2026.*" + re.escape(end),
                             r) for r in rows), (start, plain)
    for i in LONG_IDS:
        assert i not in plain
    # short ids whole
    assert any("Cart \u203a adds an item" in r for r in rows)
    # tier colours on a terminal
    assert "\x1b[1;31mCRITICAL" in out and "\x1b[1;33mWARNING" in out
    # the legend under the table
    assert re.search(r"marks: .*no failure", plain)
    assert "trend: new, worse, same or better" in plain.replace("\n", " ")


def test_narrow_and_columns_env(demo_db):
    """$COLUMNS wins over the terminal's size; a narrow one still aligns."""
    rc, out = ctl_pty(["--db", demo_db, "report"], cols=200,
                      env={"COLUMNS": "66"})
    assert rc == 0, out
    head, rows = table_rows(out)
    check_aligned(head, rows)
    assert max(dwidth(l) for l in rows) <= 66


def test_no_color(demo_db):
    rc, out = ctl_pty(["--db", demo_db, "report"], cols=80,
                      env={"NO_COLOR": "1"})
    assert rc == 0, out
    assert "\x1b" not in out
    head, rows = table_rows(out)
    check_aligned(head, rows)


def test_wide_on_terminal(demo_db):
    rc, out = ctl_pty(["--db", demo_db, "report", "--wide"], cols=80)
    assert rc == 0, out
    for i in LONG_IDS:
        assert i in out
    head, rows = table_rows(out)
    check_aligned(head, rows)


def test_pipe_whole_ids_no_escapes(demo_db):
    p = run(["--db", demo_db, "report"], check=0)
    assert "\x1b" not in p.stdout and "\u2026" not in p.stdout
    for i in LONG_IDS:
        assert i in p.stdout
    head, rows = table_rows(p.stdout)
    check_aligned(head, rows)
    # ASCII marks off a terminal, explained the same way
    assert re.search(r"marks: .*_ no failure, \.-~=\+\*# a rising", p.stdout)


def test_json_keeps_its_shape(demo_db):
    doc = json.loads(run(["--db", demo_db, "report", "--format", "json"],
                         check=0).stdout)
    names = {t["test"] for t in doc["tests"]}
    assert set(LONG_IDS) <= names and JS_TESTS[1][0] in names
    assert doc["runs"]["total"] == 80


def test_header_counts_the_rows_window(tmp_path):
    """--since at noon: the rows count the whole day (daily rollups), so
    the header counts the run at 00:30 of that day too, and says so."""
    db = str(tmp_path / "w.db")
    day = datetime.datetime(2026, 11, 17, tzinfo=datetime.timezone.utc)
    for i, at in enumerate((day + datetime.timedelta(minutes=30),
                            day + datetime.timedelta(days=1, hours=10))):
        f = tmp_path / ("r%d.xml" % i)
        f.write_text(junit("ci", [("t", "x", "0.1", '<failure message="m">'
                                   '</failure>' if i == 0 else "")], at))
        ingest(db, "ci", str(f), at)
    p = run(["--db", db, "report", "--since", "2026-11-17T12:00:00Z",
             "--until", "2026-11-18T20:00:00Z"], check=0)
    first = p.stdout.split("\n")[0]
    assert first == "2 runs from 2026-11-17 to 2026-11-18 (2 days, UTC)", \
        p.stdout
    assert re.search(r"50\.0%\s+1/2 ", p.stdout), p.stdout
    doc = json.loads(run(["--db", db, "report", "--format", "json",
                          "--since", "2026-11-17T12:00:00Z", "--until",
                          "2026-11-18T20:00:00Z"], check=0).stdout)
    assert doc["runs"]["total"] == doc["tests"][0]["runs"] == 2
    # one run: singular
    p = run(["--db", db, "report", "--since", "2026-11-18", "--until",
             "2026-11-19"], check=0)
    assert p.stdout.startswith("1 run from 2026-11-18 to 2026-11-18 "
                               "(1 day, UTC)\n"), p.stdout
    # only broken rows: the tier column keeps its width, TEST stays under
    # "TEST" and the lines under the row
    p = run(["--db", db, "report", "--since", "2026-11-17", "--until",
             "2026-11-18"], check=0)
    lines = p.stdout.split("\n")
    assert lines[1].startswith("TIER      TEST "), p.stdout
    assert lines[2].startswith("BROKEN    t.x "), p.stdout
    p = run(["--db", db, "show", "t.x", "--since", "all"], check=0)
    assert "\n1 failure in 2 runs (" in p.stdout, p.stdout
