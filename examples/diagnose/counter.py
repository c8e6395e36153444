"""Print the next run number of this suite (1, 2, ...): a counter file
under a lock, so runs started at once get different numbers."""
import fcntl
import os
import sys

path = os.path.join(os.environ.get("DEMO_STATE", os.path.dirname(os.path.abspath(__file__))), ".run-counter")
with open(path, "a+") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    f.seek(0)
    text = f.read().strip()
    n = int(text) + 1 if text else 1
    f.seek(0)
    f.truncate()
    f.write("%d\n" % n)
sys.stdout.write("%d\n" % n)
