"""The run number (DEMO_RUN, set by run.sh) decides which of the demo's
flaky tests fail in this run, so the suite's causes are known."""
import os

import pytest


@pytest.fixture
def run_number():
    return int(os.environ.get("DEMO_RUN", "0"))
