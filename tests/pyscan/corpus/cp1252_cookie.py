# vim: set fileencoding=cp1252 :
def test_cp1252():
    s = "é"
    assert len(s) <= 1
