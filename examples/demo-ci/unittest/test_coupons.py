import unittest

from shop import stack_coupons


class CouponTest(unittest.TestCase):
    def test_coupon_stacking(self):
        self.assertEqual(stack_coupons(["SPRING", "VIP", "SPRING"]),
                         ["SPRING", "VIP"])
