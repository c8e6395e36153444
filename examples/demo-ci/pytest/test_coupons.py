from shop import stack_coupons


def test_coupon_stacking():
    assert stack_coupons(["SPRING", "VIP", "SPRING"]) == ["SPRING", "VIP"]
