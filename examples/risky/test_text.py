"""Ten plain tests of string handling: exact assertions only."""
import pytest


def test_upper():
    assert "abc".upper() == "ABC"


def test_lower():
    assert "ABC".lower() == "abc"


def test_split():
    assert "a,b,c".split(",") == ["a", "b", "c"]


def test_join():
    assert "-".join(["a", "b"]) == "a-b"


def test_strip():
    assert "  x ".strip() == "x"


def test_replace():
    assert "aXa".replace("X", "b") == "aba"


def test_startswith():
    assert "prefix-rest".startswith("prefix")


def test_format():
    assert f"{3:03d}" == "003"


@pytest.mark.parametrize("word,n", [("a-b", 2), ("a-b-c", 3)])
def test_parts(word, n):
    assert len(word.split("-")) == n
