# coding: utf-8
# ÿ in a comment is not decoded with this exact cookie
def test_cookie():
    assert 1 < 2
