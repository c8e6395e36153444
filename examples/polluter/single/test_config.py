"""The polluter: it switches the locale and never switches it back."""
import state


def test_override_locale():
    state.LOCALE = "de"
    assert state.LOCALE == "de"
