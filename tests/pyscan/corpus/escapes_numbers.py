import numpy as np

def test_escapes():
    s = "\x41\u00e9\U0001F600\N{BULLET}" r"\u12"
    b = b"\u12\N{x" rb"\x"
    assert len(s) > 1
    np.testing.assert_allclose(0x_ff, 0o1_7 + 0b1 + 1_0.0_1e1_0j.imag + 00 + 0.e1)
