"""A timing race that shows under CPU stress (issue 18).

test_worker_meets_deadline starts a worker thread that must finish a piece
of CPU work within a deadline: SLACK times what the work costs in CPU time
on this machine, calibrated in the same run (thread CPU time does not
count the time the scheduler gave to others). That is the shape of a real
timing race: a wait sized on a fast, idle developer machine. Calm, the
worker gets most of a CPU and finishes in time unless the machine is
loaded past 1/SLACK of a CPU for it; beside many busy threads in the same
process tree (--stress cpu:16: eight per CPU on two CPUs) it gets a small
share of a CPU and misses the deadline most of the time.

DEMO_SLACK changes the slack (default 6); DEMO_WORK the size of the work
(iterations, default 400000). On a machine as busy as the one of
docs/performance.md the calm race fails every few runs at slack 6;
bench/stress.sh runs it at slack 24, where calm runs did not fail it and
--stress cpu:12 did in the first run.
"""
import os
import threading
import time

SLACK = float(os.environ.get("DEMO_SLACK", "6"))
WORK = int(os.environ.get("DEMO_WORK", "400000"))


def work(n):
    x = 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFFFFFF
    return x


def calibrate(n):
    """Seconds of CPU n iterations cost: the fastest of three timings of a
    quarter of the work in thread CPU time, times four."""
    best = float("inf")
    for _ in range(3):
        t = time.thread_time()
        work(n // 4)
        best = min(best, time.thread_time() - t)
    return best * 4


def test_worker_meets_deadline():
    deadline = calibrate(WORK) * SLACK
    done = threading.Event()
    worker = threading.Thread(target=lambda: (work(WORK), done.set()))
    worker.start()
    met = done.wait(deadline)
    worker.join()
    assert met, f"worker missed its deadline of {deadline * 1000:.1f} ms"


def test_steady():
    assert work(1000) == work(1000)
