def test_nums():
    a = 1if 1else 2
    b = 0x_FF + 0o17 + 0b1_0 + 1_000.5e-3j + .5 + 5. + 1e10
    assert a<b>0
    c = 1 .real
    assert_allclose(a, b)
