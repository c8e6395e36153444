def test_a():
    x = "abc
    assert x < 1
