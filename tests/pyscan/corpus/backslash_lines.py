import numpy as np


def test_continuation_lines():
    if np:
\

        assert 1 < 2
  \

    x = 1
    \
    np.testing.assert_allclose(x, 1)
    if x:
      \
          y = 2
      assert_allclose(y, 2)
\

    return x
