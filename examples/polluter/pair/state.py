"""The pair demo's shared state: a module global and a file in a
directory of this process (made at import, so no run sees another's)."""
import tempfile

LOCALE = "en"
EXPORT_DIR = tempfile.mkdtemp(prefix="polluter-demo-")
