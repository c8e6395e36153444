def test_a():
    x = 1)
