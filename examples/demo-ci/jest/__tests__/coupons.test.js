const shop = require('../src/shop');

describe('coupons', () => {
  test('coupon stacking', () => {
    expect(shop.stackCoupons(['SPRING', 'VIP', 'SPRING'])).toEqual(['SPRING', 'VIP']);
  });
});
