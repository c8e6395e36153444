def test_crlf():
    x = (1,
         2)
    assert x < (2,)

    s = """a
b"""
    assert_allclose(s, 1)
