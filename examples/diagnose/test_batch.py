"""RACE seen only in the timing: the message ("batch incomplete") matches
no pattern, but the failing runs end at once while the passing ones wait
for the writer thread (about 60 ms). In every third run (n % 3 == 2) the
reader does not wait: the bug."""
import threading
import time


def test_batch_complete(run_number):
    batch = []

    def writer():
        for i in range(4):
            time.sleep(0.015)
            batch.append(i)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    if run_number % 3 != 2:
        t.join()
    assert len(batch) == 4, "batch incomplete: %d of 4 items" % len(batch)
