def test_a():
        x = 1
    y = 2
