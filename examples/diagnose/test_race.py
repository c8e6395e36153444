"""RACE: a result read from a worker thread without waiting for it."""
import threading
import time


def test_worker_result(run_number):
    box = {"value": None}
    checked = threading.Event()

    def worker():
        if run_number % 3 == 0:
            # The worker is slow in this run: slower than the check, however
            # loaded the machine (the demo must fail here every time).
            checked.wait(5)
        box["value"] = [1, 2, 3]

    t = threading.Thread(target=worker)
    t.start()
    time.sleep(0.02)          # "long enough" (no join: the bug)
    try:
        assert box["value"][0] == 1
    finally:
        checked.set()
        t.join()
