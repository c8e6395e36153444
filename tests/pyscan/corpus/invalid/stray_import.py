def test_a():
    return import os
