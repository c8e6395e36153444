def tést_ünïcode():
    π = 3.14
    assert π > 3

class Tëst:
    def test_ö(self):
        np.testing.assert_allclose(π, 3.14)
