def test_a():
    x = np.testing.assert_allclose(1,
                                   2) +
