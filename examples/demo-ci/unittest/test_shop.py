import unittest

from shop import build_index, cart_total, charge, legacy_status, receipt
from shop import sync_inventory


class ShopTest(unittest.TestCase):
    def test_cart_total(self):
        self.assertEqual(cart_total([1.10, 2.20]), 3.30)

    def test_checkout_flow(self):
        self.assertEqual(charge.__name__, "charge")

    def test_search_index(self):
        self.assertEqual(build_index(["b", "a"]), {"a": 0, "b": 1})

    def test_receipt_format(self):
        self.assertTrue(receipt([("tea", 2.5)]).startswith("tea"))

    def test_payment_retry(self):
        self.assertEqual(charge(12)["status"], "paid")

    def test_legacy_api(self):
        self.assertEqual(legacy_status(), {"v": 2})

    def test_inventory_sync(self):
        sync_inventory()
