# -*- coding: utf-8 -*-
"""Module docstring with assert x < 1 and assert_allclose(a, b) inside."""
import numpy as np
from numpy.testing import assert_allclose, assert_array_less

S1 = 'single "quoted" assert_allclose(x)'
S2 = "double 'quoted' \" escaped assert x > 1"
S3 = '''triple
assert_allclose(a, b)
assert a < b
'''
S4 = """another "" triple with ''' inside
np.testing.assert_allclose(1, 2)"""
S5 = r'raw \' still assert_allclose(x) inside'
S6 = rb"raw bytes \" assert_allclose(y)"
S7 = Rb'x' b'y' BR"z" Br'w'
S7u = U'u' u"u" 'v'
S8 = 'continued \
assert_allclose(z) still string'


def test_after_strings():
    x = 'a' 'b' "c"
    assert_allclose(x, S1,
                    rtol=1e-3)
    assert len(S3) > 2, "message with assert_allclose(x) and a < b"


def test_string_method_call():
    "ab".join([]).assert_allclose(1)
    ("a"
     "b").assert_allclose(2)
    assert_array_less(S1, S2)
