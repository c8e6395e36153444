const shop = require('../src/shop');

describe('shop', () => {
  test('cart total', () => {
    expect(shop.cartTotal([1.1, 2.2])).toBe(3.3);
  });

  test('checkout flow', () => {
    expect(typeof shop.charge).toBe('function');
  });

  test('search index', async () => {
    expect(await shop.buildIndex(['b', 'a'])).toEqual({ a: 0, b: 1 });
  });

  test('receipt format', async () => {
    expect((await shop.receipt([['tea', 2.5]])).startsWith('tea')).toBe(true);
  });

  test('payment retry', () => {
    expect(shop.charge(12).status).toBe('paid');
  });

  test('legacy api', () => {
    expect(shop.legacyStatus()).toEqual({ v: 2 });
  });

  test('inventory sync', () => {
    shop.syncInventory();
  });
});
