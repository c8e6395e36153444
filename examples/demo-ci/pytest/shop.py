"""A small shop whose integrations misbehave now and then."""
import os
import random
import time

_os_random = random.SystemRandom()


def _u32(h):
    return h & 0xFFFFFFFF


def _draw(seed, name, k):
    """A uniform number from (seed, name, k): FNV-1a, then murmur3's
    finalizer, the same in the Jest and go demos."""
    h = 0x811C9DC5
    for b in ("%s:%s:%d" % (seed, name, k)).encode():
        h = _u32((h ^ b) * 0x01000193)
    h ^= h >> 16
    h = _u32(h * 0x85EBCA6B)
    h ^= h >> 13
    h = _u32(h * 0xC2B2AE35)
    h ^= h >> 16
    return h / 4294967296.0


def network_jitter(name):
    """How late the network is for this call, 0..1."""
    seed, state = os.environ.get("DEMO_SEED"), os.environ.get("DEMO_STATE")
    if seed is None or not state:
        return _os_random.random()
    path = os.path.join(state, name + ".count")
    try:
        with open(path) as f:
            k = int(f.read())
    except FileNotFoundError:
        k = 0
    with open(path, "w") as f:
        f.write(str(k + 1))
    return _draw(seed, name, k)


def cart_total(prices):
    return round(sum(prices), 2)


def charge(amount):
    """The payment gateway answers in time 70% of the time."""
    if network_jitter("payment_retry") < 0.30:
        raise TimeoutError("payment gateway did not answer in 2 s")
    return {"status": "paid", "amount": amount}


def legacy_status():
    return {"v": 1}


def sync_inventory():
    raise ConnectionError("inventory service refused the connection")


def stack_coupons(codes):
    """The coupon service's cache expires too early 20% of the time."""
    if network_jitter("coupon_stacking") < 0.20:
        return None
    return sorted(set(codes))


def build_index(words):
    time.sleep(0.05)
    return {w: i for i, w in enumerate(sorted(words))}


def receipt(lines):
    time.sleep(0.03)
    return "\n".join("%-10s %8.2f" % line for line in lines)
