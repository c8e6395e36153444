def test_a():
    assert x <
