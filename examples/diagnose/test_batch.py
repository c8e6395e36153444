"""RACE seen only in the timing: the message ("batch incomplete") matches
no pattern, but the failing runs end at once while the passing ones wait
about 60 ms for the writer thread. The bug: the reader's deadline comes
from a clock read too early, and in every third run (n % 3 == 2) it is
already past, so the reader gives up before it has asked the writer to
flush. The writer waits for that request, so the outcome does not depend
on how busy the machine is."""
import threading
import time


def test_batch_complete(run_number):
    batch = []
    flush = threading.Event()

    def writer():
        flush.wait(5)
        for i in range(4):
            time.sleep(0.015)
            batch.append(i)

    threading.Thread(target=writer, daemon=True).start()
    deadline = time.monotonic() + (-1.0 if run_number % 3 == 2 else 2.0)
    while len(batch) < 4 and time.monotonic() < deadline:
        flush.set()
        time.sleep(0.005)
    assert len(batch) == 4, "batch incomplete: %d of 4 items" % len(batch)
