def test_a():
    x = (1,
    assert x < 1
