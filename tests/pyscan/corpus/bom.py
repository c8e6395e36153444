import numpy as np
def test_bom():
    np.testing.assert_allclose(1, 1)
