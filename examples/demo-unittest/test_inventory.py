"""A unittest demo suite with known failure rates: test_sync 30%,
test_reindex always, the others never."""
import random
import unittest

rng = random.SystemRandom()


class InventoryTest(unittest.TestCase):
    def test_count(self):
        self.assertEqual(len([1, 2, 3]), 3)

    def test_sync(self):
        self.assertFalse(rng.random() < 0.30, "sync lost an update")

    def test_reindex(self):
        self.assertEqual(1, 2)

    @unittest.skip("needs a warehouse")
    def test_warehouse(self):
        pass


class PricingTest(unittest.TestCase):
    def test_discount(self):
        self.assertAlmostEqual(0.1 + 0.2, 0.3)


if __name__ == "__main__":
    unittest.main()
