def test_tabs():
	if True:
		assert 1 < 2
	else:
	        assert_allclose(1, 1)
