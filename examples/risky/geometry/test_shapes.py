"""Ten tests of shapes, in a directory and a class; two compare
approximately (findings of flakyctl scan) and one of those is flaky: it
fails on every third of its executions (33%, critical)."""
import math

from counter import execution


class TestCircle:
    def test_area(self):
        """Risky and flaky: the tolerance is too tight on every third
        execution (as a timing-dependent measurement would be)."""
        n = execution("circle_area")
        measured = math.pi * 2 * 2 + (0.5 if n % 3 == 0 else 0.0)
        assert abs(measured - 4 * math.pi) <= 0.1, f"execution {n}"

    def test_diameter(self):
        assert 2 * 3 == 6

    def test_name(self):
        assert "circle".title() == "Circle"


class TestSquare:
    def test_area(self):
        assert 3 * 3 == 9

    def test_perimeter(self):
        assert 4 * 3 == 12

    def test_diagonal(self):
        """Risky: an approximate assertion, and stable."""
        self_diag = math.sqrt(2) * 3
        assert math.isclose(self_diag, 4.2426, rel_tol=1e-4)
        assert self_diag >= 4.24


def test_triangle_sides():
    assert sorted([3, 5, 4]) == [3, 4, 5]


def test_right_angle():
    assert 3 ** 2 + 4 ** 2 == 5 ** 2


def test_origin():
    assert (0, 0) == (0, 0)


def test_shapes_count():
    assert len(["circle", "square", "triangle"]) == 3
