from shop import build_index, cart_total, charge, legacy_status, receipt
from shop import sync_inventory


def test_cart_total():
    assert cart_total([1.10, 2.20]) == 3.30


def test_checkout_flow():
    assert charge.__name__ == "charge"


def test_search_index():
    assert build_index(["b", "a"]) == {"a": 0, "b": 1}


def test_receipt_format():
    assert receipt([("tea", 2.5)]).startswith("tea")


def test_payment_retry():
    assert charge(12)["status"] == "paid"


def test_legacy_api():
    assert legacy_status() == {"v": 2}


def test_inventory_sync():
    sync_inventory()
