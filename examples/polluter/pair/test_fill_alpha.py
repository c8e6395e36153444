"""Tests that pass in any order."""
from fill import make_tests

make_tests(globals(), "test_alpha", 19)
