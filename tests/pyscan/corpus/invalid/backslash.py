def test_a():
    x = 1 \ 2
