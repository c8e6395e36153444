def test_ff():
    assert 1 < 2
    x = 1\
        + 2
    assert_allclose(\
  x, 3)
  # comment at odd indent

        # another
    return x
