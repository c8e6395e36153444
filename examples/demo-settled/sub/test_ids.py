"""Tests whose ids take care to select again (analyze --until-settled
reruns only the open tests by their pytest node ids): a file in a
directory, parameters in brackets, a method of a class. Rates known by
their executions as in test_settled.py."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_settled import execution  # noqa: E402


@pytest.mark.parametrize("a,b", [(1, 2), (3, 4)], ids=["a-b", "c-d"])
def test_param(a, b):
    """[a-b] fails on executions 1, 2 and 3 of every 5 (60%, critical);
    [c-d] never fails."""
    n = execution("param-%d" % a)
    assert a == 3 or n % 5 not in (1, 2, 3), f"execution {n}"


class TestKlass:
    def test_method(self):
        """Fails on its odd executions: 50%, critical."""
        n = execution("method")
        assert n % 2 == 0, f"execution {n}: odd"

    def test_quiet(self):
        assert execution("quiet") > 0
