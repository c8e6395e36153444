"""The other half: a file left behind."""
import os

import state


def test_write_export():
    with open(os.path.join(state.EXPORT_DIR, "export.csv"), "w") as f:
        f.write("name;amount\n")
    assert os.path.getsize(os.path.join(state.EXPORT_DIR, "export.csv")) > 0
