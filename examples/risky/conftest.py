"""Every test of the demo takes a little time, as a real suite's do, so
that rerunning the whole suite costs what it would (bench/risky.sh)."""
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True)
def some_work():
    time.sleep(0.05)
    yield
