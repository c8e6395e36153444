from ...pkg import x
from . import y
from .. mod import z
import a.b as c
def test_rel():
    assert x > y
