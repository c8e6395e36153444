// A Jest demo suite with known failure rates: "retries the payment" 30%,
// "talks to the legacy API" always, the rest never.
const crypto = require('crypto');

function flip(p) {
  return crypto.randomInt(1000000) < p * 1000000;
}

describe('cart', () => {
  // Slow enough that Jest always prints its duration ("(21 ms)").
  test('adds items', async () => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([1, 2].length).toBe(2);
  });

  describe('checkout', () => {
    test('retries the payment', () => {
      expect(flip(0.3)).toBe(false);
    });

    test('talks to the legacy API', () => {
      expect({ v: 1 }).toEqual({ v: 2 });
    });
  });

  test('same name twice', () => {
    expect(true).toBe(true);
  });

  test('same name twice', () => {
    expect(1).toBe(1);
  });

  test.skip('refunds', () => {});
});
