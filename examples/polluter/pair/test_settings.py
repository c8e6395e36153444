"""One half of the pollution: a module global left changed."""
import state


def test_set_locale():
    state.LOCALE = "de"
    assert state.LOCALE == "de"
