def test_a():
    x = a. b.
