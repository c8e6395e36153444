"""TIMEOUT: a slow path that sometimes takes longer than the limit."""
import time

import pytest


@pytest.mark.timeout(0.2)
def test_fetch_report(run_number):
    # every third run the "server" is slow: 1 s against a 0.2 s limit
    time.sleep(1.0 if run_number % 3 == 1 else 0.01)
