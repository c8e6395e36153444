def test_nonl():
    assert 1 < 2