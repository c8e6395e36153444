# -*- coding: latin-1 -*-
def test_latin():
    s = "é"
    assert len(s) < 2
