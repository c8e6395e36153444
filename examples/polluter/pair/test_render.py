"""The victim: it renders a stale export in the leaked locale, which
breaks only when both the locale and the export were left behind."""
import os

import state


def test_render_default():
    stale = os.path.exists(os.path.join(state.EXPORT_DIR, "export.csv"))
    assert not (stale and state.LOCALE == "de"), "stale export in de"
