"""The victim: it assumes the default locale."""
import state


def test_default_locale():
    assert state.LOCALE == "en", "locale leaked: %s" % state.LOCALE
