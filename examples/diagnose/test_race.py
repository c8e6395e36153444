"""RACE: a result read from a worker thread without waiting for it."""
import threading
import time


def test_worker_result(run_number):
    box = {"value": None}

    def worker():
        if run_number % 3 == 0:
            time.sleep(0.1)   # the worker is slow in this run
        box["value"] = [1, 2, 3]

    t = threading.Thread(target=worker)
    t.start()
    time.sleep(0.02)          # "long enough" (no join: the bug)
    try:
        assert box["value"][0] == 1
    finally:
        t.join()
